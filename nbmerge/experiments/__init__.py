"""Logic behind the report notebooks: one module per notebook, plus what they share (common)."""

import warnings

# open_clip → huggingface_hub imports tqdm.auto, which in a kernel without ipywidgets warns on import; the
# reports show no progress bars, so the warning is noise in every rendered page.
warnings.filterwarnings("ignore", message="IProgress not found")
