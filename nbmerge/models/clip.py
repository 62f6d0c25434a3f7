"""The image tower of a real CLIP ViT (open_clip ``VisionTransformer``) behind the zoo's architecture interface.

Pools imported from real checkpoints (``nbmerge.pools.clip``) record a ``ClipArchitecture`` in their manifest, so
that every notebook written for the embedded zoo (``build``, ``inputs``, ``prefix``, ``gram_recorder``, ``tokens``)
runs on them unchanged. Stored images are uint8 ``[N, 3, S, S]``, already resized and centre-cropped as open_clip's
evaluation transform does; ``inputs`` performs the transform's last two steps (``ToTensor`` and ``Normalize``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import torch

from ..errors import CheckpointError, NbmergeError
from .base import PREFIX, patch_tokens
from .grams import GramRecorder

OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
HEAD_WIDTH = 64  # every CLIP ViT (B/32, B/16, L/14, the open_clip and HF ones) has 64-dimensional attention heads
ACTIVATIONS = ("quick_gelu", "gelu")
_BLOCK = re.compile(re.escape(PREFIX) + r"transformer\.resblocks\.(\d+)\.")


@dataclass(frozen=True)
class ClipArchitecture:
    """A CLIP ViT image tower. ``output_dim`` 0: no projection (a plain HF ``CLIPVisionModel``).

    ``act``: ``"quick_gelu"`` for every checkpoint derived from OpenAI's CLIP (task_vectors/TSV's open_clip
    ``ViT-B-32`` ``openai``, FusionBench's HF ``clip-vit-base-patch32``); open_clip's own default is exact GELU,
    and building OpenAI weights with it silently changes every activation.
    """

    kind: str = "clip_vit"
    image_size: int = 224
    patch_size: int = 32
    width: int = 768
    layers: int = 12
    heads: int = 12
    mlp_ratio: float = 4.0
    output_dim: int = 512
    act: str = "quick_gelu"
    mean: tuple[float, ...] = OPENAI_MEAN
    std: tuple[float, ...] = OPENAI_STD

    prefix = PREFIX
    label = "CLIP ViT image experts"
    eval_batch = 256

    def __post_init__(self):
        if self.kind != "clip_vit":
            raise NbmergeError(f"ClipArchitecture has kind 'clip_vit', not {self.kind!r}")
        if self.act not in ACTIVATIONS:
            raise NbmergeError(f"act {self.act!r} is not one of {', '.join(ACTIVATIONS)}")
        if self.width % self.heads:
            raise NbmergeError(f"width {self.width} is not a multiple of heads {self.heads}")
        if self.image_size % self.patch_size:
            raise NbmergeError(f"image_size {self.image_size} is not a multiple of patch_size {self.patch_size}")
        if len(self.mean) != 3 or len(self.std) != 3:
            raise NbmergeError(f"mean and std need three (RGB) values; got {self.mean} and {self.std}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def embed_dim(self) -> int:
        """The dimension of the embeddings the encoder returns (what a head's rows must have)."""
        return self.output_dim or self.width

    def build(self, seed: int = 0) -> torch.nn.Module:
        """A seeded, randomly initialised open_clip ``VisionTransformer`` (weights are loaded into it)."""
        from open_clip.transformer import QuickGELU, VisionTransformer

        act_layer = QuickGELU if self.act == "quick_gelu" else torch.nn.GELU
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            encoder = VisionTransformer(image_size=self.image_size, patch_size=self.patch_size, width=self.width,
                                        layers=self.layers, heads=self.heads, mlp_ratio=self.mlp_ratio,
                                        output_dim=self.output_dim or self.width, act_layer=act_layer)
        if not self.output_dim:
            encoder.proj = None
        return encoder.eval()

    def inputs(self, x: np.ndarray | torch.Tensor) -> torch.Tensor:
        """uint8 ``[N, 3, S, S]`` → float32 normalised with ``mean``/``std`` (open_clip's ToTensor + Normalize)."""
        x = torch.from_numpy(x) if isinstance(x, np.ndarray) else x
        if x.ndim != 4 or x.shape[1] != 3 or tuple(x.shape[2:]) != (self.image_size, self.image_size):
            raise NbmergeError(f"images of shape {list(x.shape)}; this CLIP tower takes [N, 3, {self.image_size}, "
                               f"{self.image_size}]")
        mean = torch.tensor(self.mean, dtype=torch.float32, device=x.device).view(1, 3, 1, 1)
        std = torch.tensor(self.std, dtype=torch.float32, device=x.device).view(1, 3, 1, 1)
        return (x.to(torch.float32) / 255.0 - mean) / std

    def gram_recorder(self, encoder: torch.nn.Module):
        return GramRecorder(encoder)

    def tokens(self, x) -> int:
        """Tokens the images contribute to every Gram: patches plus the class token, per image."""
        return patch_tokens(len(x), self.image_size, self.patch_size)

    def eval_order(self, x) -> Optional[np.ndarray]:
        return None

    @classmethod
    def from_state_dict(cls, state: Mapping[str, torch.Tensor], heads: Optional[int] = None,
                        act: str = "quick_gelu", mean: tuple[float, ...] = OPENAI_MEAN,
                        std: tuple[float, ...] = OPENAI_STD) -> "ClipArchitecture":
        """The architecture of a ``visual.*`` open_clip image tower, read off its shapes. The number of attention
        heads is not in the shapes: ``width // 64`` unless ``heads`` is given."""
        needed = [PREFIX + k for k in ("conv1.weight", "positional_embedding", "class_embedding")]
        missing = [k for k in needed if k not in state]
        if missing:
            raise CheckpointError(f"not an open_clip image tower: no {', '.join(missing)} among {len(state)} keys "
                                  f"(e.g. {list(state)[:3]})")
        conv = state[PREFIX + "conv1.weight"]
        width, patch = int(conv.shape[0]), int(conv.shape[-1])
        positions = int(state[PREFIX + "positional_embedding"].shape[0]) - 1
        grid = int(round(positions ** 0.5))
        if grid * grid != positions:
            raise CheckpointError(f"{PREFIX}positional_embedding has {positions + 1} rows: not a square grid plus "
                                  "the class token")
        layers = max((int(m.group(1)) + 1 for k in state if (m := _BLOCK.match(k))), default=0)
        if layers == 0:
            raise CheckpointError(f"no {PREFIX}transformer.resblocks.* keys: not an open_clip image tower")
        hidden = int(state[f"{PREFIX}transformer.resblocks.0.mlp.c_fc.weight"].shape[0])
        proj = state.get(PREFIX + "proj")
        if heads is None:
            if width % HEAD_WIDTH:
                raise CheckpointError(f"width {width} is not a multiple of {HEAD_WIDTH}: pass heads=")
            heads = width // HEAD_WIDTH
        return cls(image_size=grid * patch, patch_size=patch, width=width, layers=layers, heads=int(heads),
                   mlp_ratio=hidden / width, output_dim=int(proj.shape[1]) if proj is not None else 0, act=act,
                   mean=tuple(float(v) for v in mean), std=tuple(float(v) for v in std))

    @classmethod
    def from_model_name(cls, name: str, act: str = "quick_gelu") -> "ClipArchitecture":
        """The image tower of an open_clip built-in config ("ViT-B-32", "ViT-L-14"...), read offline.

        ``act`` defaults to QuickGELU because the suites' checkpoints descend from OpenAI's weights (open_clip
        itself switches to QuickGELU when it loads the ``openai`` tag)."""
        import open_clip

        config = open_clip.get_model_config(name)
        if config is None:
            known = [m for m in open_clip.list_models() if m.startswith("ViT-")][:12]
            raise NbmergeError(f"open_clip has no built-in config {name!r} (e.g. {', '.join(known)})")
        vision = config["vision_cfg"]
        unsupported = sorted(k for k in vision if k not in ("image_size", "layers", "width", "patch_size",
                                                            "head_width", "mlp_ratio"))
        if unsupported:
            raise NbmergeError(f"open_clip config {name!r} sets vision options {unsupported} that ClipArchitecture "
                               "does not model (it covers the plain CLIP ViT)")
        width = int(vision["width"])
        preprocess = config.get("preprocess_cfg", {})
        return cls(image_size=int(vision["image_size"]), patch_size=int(vision["patch_size"]), width=width,
                   layers=int(vision["layers"]), heads=width // int(vision.get("head_width", HEAD_WIDTH)),
                   mlp_ratio=float(vision.get("mlp_ratio", 4.0)), output_dim=int(config["embed_dim"]), act=act,
                   mean=tuple(preprocess.get("mean", OPENAI_MEAN)), std=tuple(preprocess.get("std", OPENAI_STD)))
