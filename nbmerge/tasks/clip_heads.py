"""Zero-shot classification heads from an open_clip text tower (CLIP, Radford et al. 2021,
https://arxiv.org/abs/2103.00020), as task_vectors/TSV build them: per class, the mean over templates of the
normalised text embeddings, renormalised. Only the image encoder is merged; these heads stay frozen.

A head file is safetensors with ``weight`` [C, D] (unit rows) and a scalar ``logit_scale``, plus metadata (class
names, templates, model) that ``load_head`` checks.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import torch
import torch.nn.functional as F
from safetensors import SafetensorError, safe_open

from ..errors import CheckpointError, NbmergeError
from ..engine.io import save_state_dict

HEAD_FORMAT = "1"
DEFAULT_LOGIT_SCALE = 100.0  # CLIP's trained logit_scale.exp() is clamped at 100; task_vectors heads use it
_NORM_TOLERANCE = 1e-3

Template = Union[str, Callable[[str], str]]


@dataclass(frozen=True)
class ZeroShotHead:
    """``logits = logit_scale * normalize(image_features) @ weight.T``; weight rows are unit vectors."""

    weight: torch.Tensor
    logit_scale: float
    class_names: Optional[tuple[str, ...]] = None

    @property
    def num_classes(self) -> int:
        return self.weight.shape[0]

    def logits(self, image_features: torch.Tensor) -> torch.Tensor:
        weight = self.weight.to(device=image_features.device, dtype=torch.float32)
        return self.logit_scale * F.normalize(image_features.float(), dim=-1) @ weight.T


def _fill(template: Template, class_name: str) -> str:
    if callable(template):
        return template(class_name)
    if "{c}" not in template:
        raise NbmergeError(f"template {template!r} has no '{{c}}' placeholder for the class name")
    return template.replace("{c}", class_name)  # not str.format: class names may hold braces


@torch.no_grad()
def build_zeroshot_head(model: torch.nn.Module, tokenizer: Callable, classnames: Sequence[str],
                        templates: Sequence[Template], device: Union[str, torch.device] = "cpu", *,
                        logit_scale: Optional[float] = None) -> ZeroShotHead:
    """The zero-shot head of ``classnames`` under ``templates`` ("a photo of a {c}.") from an open_clip model.

    Text embeddings are computed on ``device`` and accumulated in float32; the head's weight is returned there.
    ``logit_scale`` defaults to ``model.logit_scale.exp()``, or 100 for a model without one."""
    if not classnames or not templates:
        raise NbmergeError(f"a zero-shot head needs class names and templates; got {len(classnames)} class names "
                           f"and {len(templates)} templates")
    was_training = model.training
    model.eval()
    rows = []
    try:
        for name in classnames:
            tokens = tokenizer([_fill(template, name) for template in templates]).to(device)
            embeddings = F.normalize(model.encode_text(tokens).float(), dim=-1)
            rows.append(F.normalize(embeddings.mean(dim=0), dim=0))
    finally:
        model.train(was_training)
    weight = torch.stack(rows)
    if not torch.isfinite(weight).all():
        raise NbmergeError("the text tower produced non-finite embeddings; the head cannot be built")
    if logit_scale is None:
        scale = getattr(model, "logit_scale", None)
        logit_scale = float(scale.detach().float().exp().reshape(-1)[0]) if isinstance(scale, torch.Tensor) \
            else DEFAULT_LOGIT_SCALE
    return ZeroShotHead(weight, float(logit_scale), tuple(classnames))


def head_for_task(model: torch.nn.Module, tokenizer: Callable, task: str,
                  device: Union[str, torch.device] = "cpu", *, logit_scale: Optional[float] = None) -> ZeroShotHead:
    """The zero-shot head of a CLIP task from its manifest's class names and templates."""
    from .clip import load_task_manifest

    manifest = load_task_manifest(task)
    return build_zeroshot_head(model, tokenizer, manifest["class_names"], manifest["templates"], device,
                               logit_scale=logit_scale)


def save_head(head: ZeroShotHead, path: Union[str, os.PathLike], *, metadata: Optional[dict] = None) -> None:
    """Write a head atomically as safetensors (``weight``, ``logit_scale``); ``metadata`` values are JSON-encoded."""
    extra = {"format": HEAD_FORMAT, "num_classes": str(head.num_classes)}
    if head.class_names is not None:
        extra["class_names"] = json.dumps(list(head.class_names), ensure_ascii=False)
    for key, value in (metadata or {}).items():
        extra[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    save_state_dict({"weight": head.weight.detach().float().cpu(),
                     "logit_scale": torch.tensor(float(head.logit_scale), dtype=torch.float32)}, path, extra)


def load_head(path: Union[str, os.PathLike], *, class_names: Optional[Sequence[str]] = None,
              embed_dim: Optional[int] = None) -> ZeroShotHead:
    """Read a head written by ``save_head``; every check that fails raises CheckpointError naming the file.

    Checks: exactly the keys ``weight`` and ``logit_scale``; a finite 2-D weight with unit rows; a finite positive
    scalar scale; and, when given, the class names (against those stored) and the embedding dimension."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such head file")
    try:
        with safe_open(str(path), framework="pt", device="cpu") as handle:
            keys = set(handle.keys())
            if keys != {"weight", "logit_scale"}:
                raise CheckpointError(f"{path}: a head file holds exactly 'weight' and 'logit_scale'; found "
                                      f"{sorted(keys)}")
            weight, scale = handle.get_tensor("weight"), handle.get_tensor("logit_scale")
            metadata = handle.metadata() or {}
    except (SafetensorError, OSError) as error:
        raise CheckpointError(f"{path}: not a readable safetensors file ({error}); it may be truncated") from None
    if weight.ndim != 2 or not weight.is_floating_point():
        raise CheckpointError(f"{path}: weight must be a 2-D float [classes, dim]; found {weight.dtype} "
                              f"{list(weight.shape)}")
    weight = weight.float()
    if not torch.isfinite(weight).all():
        raise CheckpointError(f"{path}: weight holds NaN or Inf")
    norms = weight.norm(dim=1)
    if (norms - 1).abs().max() > _NORM_TOLERANCE:
        raise CheckpointError(f"{path}: weight rows must be unit vectors; norms span {norms.min():.4f}.."
                              f"{norms.max():.4f} (a head scaled by its logit scale, as task_vectors stores it, "
                              "is not this format)")
    if scale.numel() != 1 or not torch.isfinite(scale).all() or float(scale.reshape(-1)[0]) <= 0:
        raise CheckpointError(f"{path}: logit_scale must be one finite positive number; found {scale.tolist()}")
    stored = json.loads(metadata["class_names"]) if "class_names" in metadata else None
    if stored is not None and len(stored) != weight.shape[0]:
        raise CheckpointError(f"{path}: {len(stored)} class names stored for a weight of {weight.shape[0]} rows")
    if class_names is not None:
        if len(class_names) != weight.shape[0]:
            raise CheckpointError(f"{path}: head has {weight.shape[0]} classes, expected {len(class_names)}")
        if stored is not None and list(stored) != list(class_names):
            first = next(i for i, (a, b) in enumerate(zip(stored, class_names)) if a != b)
            raise CheckpointError(f"{path}: class {first} is {stored[first]!r} in the head, {class_names[first]!r} "
                                  "expected")
    if embed_dim is not None and weight.shape[1] != embed_dim:
        raise CheckpointError(f"{path}: head dimension {weight.shape[1]}, the model's embedding has {embed_dim}")
    names = tuple(stored) if stored is not None else (tuple(class_names) if class_names is not None else None)
    return ZeroShotHead(weight, float(scale.reshape(-1)[0]), names)
