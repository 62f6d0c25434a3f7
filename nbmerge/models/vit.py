"""The zoo's model: a tiny open_clip ``VisionTransformer`` (real architecture and state-dict names) and frozen
cosine-prototype heads, the analogue of CLIP's zero-shot text heads.

Checkpoints hold the image tower under open_clip's ``visual.`` prefix, so merge code written for them serves real
CLIP checkpoints unchanged. Grayscale 28×28 images are replicated to three channels, as CLIP sees them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import ClassVar, Optional

import numpy as np

import torch

from .base import PREFIX, patch_tokens
from .grams import GramRecorder


@dataclass(frozen=True)
class TinyViT:
    """The embedded vision zoo's encoder (a :class:`~nbmerge.models.base.ModelFamily`): a small open_clip
    ``VisionTransformer`` on 28×28 grayscale images. Its records carry no ``kind`` (they predate kinds): a record
    without one is a tiny ViT."""

    image_size: int = 28
    patch_size: int = 7  # 16 tokens: what makes training fit 2 CPU cores (patch 4 learned ~nothing; docs/zoo.md)
    width: int = 64
    layers: int = 4
    heads: int = 4
    mlp_ratio: float = 4.0
    output_dim: int = 64

    kind: ClassVar[str] = "tiny_vit"
    prefix: ClassVar[str] = PREFIX
    label: ClassVar[str] = "tiny ViT image experts"
    eval_batch: ClassVar[int] = 2048

    def to_dict(self) -> dict:
        return asdict(self)

    def build(self, seed: int = 0) -> torch.nn.Module:
        """A randomly initialised open_clip ``VisionTransformer`` (seeded; no network, no pretrained tag)."""
        from open_clip.transformer import VisionTransformer

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return VisionTransformer(image_size=self.image_size, patch_size=self.patch_size, width=self.width,
                                     layers=self.layers, heads=self.heads, mlp_ratio=self.mlp_ratio,
                                     output_dim=self.output_dim)

    def inputs(self, x) -> torch.Tensor:
        return to_input(torch.from_numpy(x) if not isinstance(x, torch.Tensor) else x)

    def gram_recorder(self, encoder: torch.nn.Module):
        return GramRecorder(encoder)

    def tokens(self, x) -> int:
        """Tokens the images contribute to every Gram: patches plus the class token, per image."""
        return patch_tokens(len(x), self.image_size, self.patch_size)

    def eval_order(self, x) -> Optional[np.ndarray]:
        return None


def to_input(images_uint8: torch.Tensor) -> torch.Tensor:
    """uint8 [N, H, W] → float [N, 3, H, W] in [−1, 1] (grayscale replicated to RGB without a copy)."""
    x = images_uint8.to(torch.float32).div_(127.5).sub_(1.0)
    return x.unsqueeze(1).expand(-1, 3, -1, -1)
