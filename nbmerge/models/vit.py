"""The zoo's model: a tiny open_clip ``VisionTransformer`` (real architecture and state-dict names) and frozen
cosine-prototype heads, the analogue of CLIP's zero-shot text heads.

Checkpoints hold the image tower under open_clip's ``visual.`` prefix, so merge code written for them serves real
CLIP checkpoints unchanged. Grayscale 28×28 images are replicated to three channels, as CLIP sees them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from .base import PREFIX, patch_tokens
from .grams import GramRecorder


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
        return GramRecorder(encoder)

    def tokens(self, x) -> int:
        """Tokens the images contribute to every Gram: patches plus the class token, per image."""
        return patch_tokens(len(x), self.image_size, self.patch_size)


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


def to_input(images_uint8: torch.Tensor) -> torch.Tensor:
    """uint8 [N, H, W] → float [N, 3, H, W] in [−1, 1] (grayscale replicated to RGB without a copy)."""
    x = images_uint8.to(torch.float32).div_(127.5).sub_(1.0)
    return x.unsqueeze(1).expand(-1, 3, -1, -1)
