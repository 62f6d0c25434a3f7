"""What every model family shares: the interface a family implements (:class:`ModelFamily`), the checkpoint prefix
of the vision towers, the encoder's weights in and out under checkpoint names, normalised features, and the heads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol, runtime_checkable

import numpy as np

import torch
import torch.nn.functional as F

from ..errors import CheckpointError

PREFIX = "visual."  # open_clip's image-tower prefix: the tiny ViT's and the imported CLIP towers' checkpoints use it


@runtime_checkable
class ModelFamily(Protocol):
    """What a zoo or pool's encoder family provides; a suite's manifest records one as ``to_dict()`` and
    ``models.arch_from_dict`` reads it back by its ``kind`` (``models.FAMILIES``). Adding a family is one module
    with a class that implements this, plus one row in that table.

    * ``kind``: the name its records carry; ``prefix``: what its checkpoints put before the encoder's own
      state-dict names ("visual." for the vision towers, "" for the text encoders);
    * ``label``: what the experts are, for a report's setting line ("MiniLM text experts");
    * ``eval_batch``: examples per evaluation batch;
    * ``build(seed)``: the encoder (seeded; random weights, or the pretrained base where the family has one);
    * ``inputs(x)``: the stored arrays (uint8 images, token ids and masks) as the encoder's input tensor;
    * ``gram_recorder(encoder)``: a recorder of the input Grams of its linear layers (RegMean, BMM);
    * ``tokens(x)``: how many tokens the examples ``x`` contribute to every Gram;
    * ``eval_order(x)``: the order the evaluator runs examples in, or None for the stored order (text: shortest
      first, so that batches trimmed to their longest example carry little padding; every metric is order-free).
    """

    kind: str
    prefix: str
    label: str
    eval_batch: int

    def to_dict(self) -> dict: ...

    def build(self, seed: int = 0) -> torch.nn.Module: ...

    def inputs(self, x) -> torch.Tensor: ...

    def gram_recorder(self, encoder: torch.nn.Module): ...

    def tokens(self, x) -> int: ...

    def eval_order(self, x: np.ndarray) -> Optional[np.ndarray]: ...


def patch_tokens(images: int, image_size: int, patch_size: int) -> int:
    """Tokens a batch of images contributes to every Gram of a ViT: patches plus the class token, per image."""
    return images * ((image_size // patch_size) ** 2 + 1)


def encoder_state_dict(encoder: torch.nn.Module, prefix: str) -> dict[str, torch.Tensor]:
    """The encoder's weights under the checkpoint names of its architecture (``arch.prefix``: "visual." for the
    vision towers, "" for the text encoder); no default, since a wrong prefix only fails when the file is read."""
    return {prefix + k: v.detach().clone().contiguous() for k, v in encoder.state_dict().items()}


def load_encoder_weights(encoder: torch.nn.Module, state_dict: dict[str, torch.Tensor], prefix: str = PREFIX) -> None:
    """Load a ``visual.``-prefixed (or ``prefix``) checkpoint; the error names missing/unexpected keys and shape
    mismatches."""
    PREFIX = prefix  # noqa: N806 (the messages below name the prefix)
    expected = encoder.state_dict()
    stripped = {k[len(PREFIX):]: v for k, v in state_dict.items() if k.startswith(PREFIX)}
    missing = sorted(set(expected) - set(stripped))
    unexpected = sorted(set(state_dict) - {PREFIX + k for k in expected})
    if missing or unexpected:
        detail = []
        if missing:
            detail.append(f"missing {PREFIX}{missing[0]!s} ({len(missing)} missing)")
        if unexpected:
            detail.append(f"unexpected {unexpected[0]!r} ({len(unexpected)} unexpected)")
        raise CheckpointError("checkpoint does not match the zoo's encoder: " + "; ".join(detail))
    for key, value in stripped.items():
        if tuple(value.shape) != tuple(expected[key].shape):
            raise CheckpointError(f"shape mismatch for {PREFIX + key!r}: checkpoint {list(value.shape)}, "
                                  f"zoo encoder {list(expected[key].shape)}")
    encoder.load_state_dict({k: v.to(expected[k].dtype) for k, v in stripped.items()})


def features(encoder: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """L2-normalised image embeddings, as CLIP's zero-shot classification uses them; a language model's encoder
    (``raw_features``) gives its hidden state or logits as they are."""
    out = encoder(inputs)
    return out if getattr(encoder, "raw_features", False) else F.normalize(out, dim=-1)


@dataclass
class Head:
    """Frozen cosine-prototype head: logits = scale · normalise(f) · Wᵀ, rows of W unit-norm class prototypes."""

    weight: torch.Tensor  # [classes, output_dim]
    logit_scale: float

    def logits(self, normalized_features: torch.Tensor) -> torch.Tensor:
        return self.logit_scale * normalized_features @ self.weight.T

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"weight": self.weight.contiguous(), "logit_scale": torch.tensor(self.logit_scale)}

    def to(self, device) -> "Head":
        return Head(self.weight.to(device), self.logit_scale)

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> "Head":
        return cls(state["weight"].float(), float(state["logit_scale"]))


@dataclass
class ClassifierHead:
    """A language-model classifier's own head, kept per task: linear layers with tanh between them (RoBERTa's
    dense → tanh → out_proj; GPT-2's and Llama's single ``score``), on the backbone's un-normalised features."""

    weights: list[torch.Tensor]
    biases: list[Optional[torch.Tensor]]

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        out = hidden
        for i, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            out = F.linear(out if i == 0 else torch.tanh(out), weight, bias)
        return out

    def state_dict(self) -> dict[str, torch.Tensor]:
        out = {}
        for i, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            out[f"layers.{i}.weight"] = weight.contiguous()
            if bias is not None:
                out[f"layers.{i}.bias"] = bias.contiguous()
        return out

    def to(self, device) -> "ClassifierHead":
        return ClassifierHead([w.to(device) for w in self.weights],
                              [None if b is None else b.to(device) for b in self.biases])

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> "ClassifierHead":
        count = len([k for k in state if k.endswith(".weight")])
        return cls([state[f"layers.{i}.weight"].float() for i in range(count)],
                   [state[f"layers.{i}.bias"].float() if f"layers.{i}.bias" in state else None for i in range(count)])


class IdentityHead:
    """A causal LM's task head: its features already are the vocabulary logits."""

    def logits(self, logits: torch.Tensor) -> torch.Tensor:
        return logits

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"identity": torch.ones(1)}

    def to(self, device) -> "IdentityHead":
        return self


def load_head(state: dict[str, torch.Tensor]):
    """The head a ``heads/<task>.safetensors`` holds: cosine prototypes, a classifier's layers, or the identity."""
    if "identity" in state:
        return IdentityHead()
    if "layers.0.weight" in state:
        return ClassifierHead.from_state_dict(state)
    return Head.from_state_dict(state)
