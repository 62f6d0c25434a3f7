"""The zoo's model: a tiny open_clip ``VisionTransformer`` (real architecture and state-dict names) and frozen
cosine-prototype heads, the analogue of CLIP's zero-shot text heads.

Checkpoints hold the image tower under open_clip's ``visual.`` prefix, so merge code written for them serves real
CLIP checkpoints unchanged. Grayscale 28×28 images are replicated to three channels, as CLIP sees them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

PREFIX = "visual."


@dataclass(frozen=True)
class Architecture:
    image_size: int = 28
    patch_size: int = 7  # 16 tokens: what makes training fit 2 CPU cores (patch 4 learned ~nothing; docs/zoo.md)
    width: int = 64
    layers: int = 4
    heads: int = 4
    mlp_ratio: float = 4.0
    output_dim: int = 64

    # The interface every zoo model family implements (the text zoo's TextArchitecture too): the prefix its
    # checkpoints put before the encoder's own state-dict names, how to build the encoder, turn stored arrays into
    # its inputs, record input Grams, and count the tokens an example contributes to them.
    prefix = PREFIX

    def to_dict(self) -> dict:
        return asdict(self)

    def build(self, seed: int = 0) -> torch.nn.Module:
        return build_encoder(self, seed)

    def inputs(self, x) -> torch.Tensor:
        return to_input(torch.from_numpy(x) if not isinstance(x, torch.Tensor) else x)

    def gram_recorder(self, encoder: torch.nn.Module):
        from .grams import GramRecorder

        return GramRecorder(encoder)

    def tokens(self, x) -> int:
        """Tokens the images contribute to every Gram: patches plus the class token, per image."""
        return len(x) * ((self.image_size // self.patch_size) ** 2 + 1)


def arch_from_dict(d: dict):
    """The architecture a manifest's recipe records (the text zoo's carries ``kind``)."""
    if d.get("kind") == "minilm":
        from .minilm import TextArchitecture

        return TextArchitecture(**d)
    if d.get("kind") == "clip_vit":
        from .clip import ClipArchitecture

        return ClipArchitecture(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
    return Architecture(**d)


def build_encoder(arch, seed: int = 0) -> torch.nn.Module:
    """A randomly initialised open_clip ``VisionTransformer`` (seeded; no network, no pretrained tag); other
    families build themselves."""
    from open_clip.transformer import VisionTransformer

    if not isinstance(arch, Architecture):
        return arch.build(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return VisionTransformer(image_size=arch.image_size, patch_size=arch.patch_size, width=arch.width,
                                 layers=arch.layers, heads=arch.heads, mlp_ratio=arch.mlp_ratio,
                                 output_dim=arch.output_dim)


def encoder_state_dict(encoder: torch.nn.Module, prefix: str) -> dict[str, torch.Tensor]:
    """The encoder's weights under the checkpoint names of its architecture (``arch.prefix``: "visual." for the
    vision towers, "" for the text encoder); no default, since a wrong prefix only fails when the file is read."""
    return {prefix + k: v.detach().clone().contiguous() for k, v in encoder.state_dict().items()}


def load_encoder_weights(encoder: torch.nn.Module, state_dict: dict[str, torch.Tensor], prefix: str = PREFIX) -> None:
    """Load a ``visual.``-prefixed (or ``prefix``) checkpoint; the error names missing/unexpected keys and shape
    mismatches."""
    from ..errors import CheckpointError

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


def to_input(images_uint8: torch.Tensor) -> torch.Tensor:
    """uint8 [N, H, W] → float [N, 3, H, W] in [−1, 1] (grayscale replicated to RGB without a copy)."""
    x = images_uint8.to(torch.float32).div_(127.5).sub_(1.0)
    return x.unsqueeze(1).expand(-1, 3, -1, -1)


def features(encoder: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """L2-normalised image embeddings, as CLIP's zero-shot classification uses them."""
    return F.normalize(encoder(inputs), dim=-1)


@dataclass
class Head:
    """Frozen cosine-prototype head: logits = scale · normalise(f) · Wᵀ, rows of W unit-norm class prototypes."""

    weight: torch.Tensor  # [classes, output_dim]
    logit_scale: float

    def logits(self, normalized_features: torch.Tensor) -> torch.Tensor:
        return self.logit_scale * normalized_features @ self.weight.T

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"weight": self.weight.contiguous(), "logit_scale": torch.tensor(self.logit_scale)}

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> "Head":
        return cls(state["weight"].float(), float(state["logit_scale"]))
