"""Localize-and-Stitch (He et al., TMLR 2025, arXiv 2408.13656): each task keeps only a sparse set of its task
vector's entries (its mask), and the masks are stitched: where masks overlap, the tasks share the entry equally.

    θ = θ₀ + α·Σ_t w_t ⊙ τ_t,    w_t = m_t / Σ_s m_s  (0 where m_t = 0)

The masks come either from the task vectors alone (``masks=""``, the paper's *dataless* variant: per task the
entries whose |τ_t| lies above the k-th largest over the whole model, k = ⌊sparsity·N⌋, strictly above as the
official code tests it), or from a mask file that :mod:`nbmerge.tune.localize` learns on a few labeled validation
examples per class (``nbmerge localize --suite ... --out masks.safetensors``). A mask file holds, per tensor, one
packed bit per entry and task.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch

from ..errors import CheckpointError, MethodError, NbmergeWarning
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge

FORMAT = "nbmerge-localize-1"   # the mask file's metadata["format"]
DEFAULT_SPARSITY = 0.1


@dataclass
class Masks:
    """Per task and tensor, which entries of the task vector are kept: ``masks[key]`` is a bool tensor
    ``[T, *shape]`` for the ``tasks`` (in the experts' order)."""

    tasks: list[str]
    masks: dict[str, torch.Tensor]
    settings: dict | None = None

    def proportion(self) -> list[float]:
        """The share of each task's entries its mask keeps."""
        kept = sum(m.reshape(len(self.tasks), -1).sum(1, dtype=torch.float64) for m in self.masks.values())
        total = sum(m[0].numel() for m in self.masks.values())
        return (kept / max(total, 1)).tolist()

    def save(self, path: str | Path) -> Path:
        from ..engine.io import write_tagged

        tensors, shapes = {}, {}
        for key, mask in self.masks.items():
            flat = mask.reshape(len(self.tasks), -1).cpu().numpy()
            tensors[key] = torch.from_numpy(np.packbits(flat, axis=1))
            shapes[key] = list(mask.shape[1:])
        return write_tagged(path, tensors, FORMAT, tasks=self.tasks, shapes=shapes, settings=self.settings)

    @classmethod
    def load(cls, path: str | Path) -> "Masks":
        from ..engine.io import read_tagged

        packed, meta = read_tagged(path, FORMAT, "a Localize-and-Stitch mask file (written by `nbmerge localize`)")
        tasks, shapes = meta["tasks"], meta["shapes"]
        masks = {}
        for key, bits in packed.items():
            n = math.prod(shapes[key])
            if bits.dtype != torch.uint8 or bits.shape != (len(tasks), (n + 7) // 8):
                raise CheckpointError(f"{path}: the mask of {key!r} does not hold {len(tasks)} × {n} bits")
            flat = np.unpackbits(bits.numpy(), axis=1, count=n).astype(bool)
            masks[key] = torch.from_numpy(flat).reshape(len(tasks), *shapes[key])
        return cls(tasks, masks, meta.get("settings"))


def stitch(deltas: Sequence[torch.Tensor], masks: Sequence[torch.Tensor]) -> torch.Tensor:
    """Σ_t w_t ⊙ τ_t with w_t = m_t / Σ_s m_s: the official stitcher's reciprocal of the overlap count."""
    count = torch.zeros_like(deltas[0])
    total = torch.zeros_like(deltas[0])
    for delta, mask in zip(deltas, masks):
        kept = mask.to(delta.dtype)
        count += kept
        total += kept * delta
    return torch.where(count > 0, total / count.clamp_min(1), torch.zeros_like(total))


def dataless_prepare(view, *, sparsity: float = DEFAULT_SPARSITY) -> dict:
    """Per task, the k-th largest |τ_t| over every floating tensor of the model (k = ⌊sparsity·N⌋)."""
    from .ties import global_thresholds

    if not (isinstance(sparsity, float) and 0.0 < sparsity <= 1.0):
        raise MethodError(f"localize_stitch: sparsity must lie in (0, 1], got {sparsity!r}")
    keys = view.float_keys()
    total = sum(math.prod(view.base.shape(key)) for key in keys)
    k = int(sparsity * total)
    if k < 1:
        raise MethodError(f"localize_stitch: sparsity {sparsity:g} keeps no entry of the model's {total:,}")
    # the k-th largest is the (N − k + 1)-th smallest
    return {"thresholds": global_thresholds(view, keys, total - k + 1)}


def dataless_kernel(deltas: list[torch.Tensor], *, thresholds: torch.Tensor) -> torch.Tensor:
    return stitch(deltas, [delta.abs() > thresholds[t].to(delta.dtype) for t, delta in enumerate(deltas)])


def masks_prepare(view, *, masks: str = "") -> dict:
    learned = Masks.load(masks)
    if len(learned.tasks) != view.T:
        raise MethodError(f"localize_stitch: {masks} holds masks for {len(learned.tasks)} tasks "
                          f"({', '.join(learned.tasks)}), but {view.T} experts are merged")
    foreign = [k for k in learned.masks if k not in set(view.keys)]
    if foreign:
        raise MethodError(f"localize_stitch: {masks} has a mask for {foreign[0]!r}, which the base does not have "
                          f"({len(foreign)} such keys): the file was learned for another model")
    for key, mask in learned.masks.items():
        if tuple(mask.shape[1:]) != tuple(view.base.shape(key)):
            raise MethodError(f"localize_stitch: the mask of {key!r} has shape {list(mask.shape[1:])}, the model's "
                              f"tensor {list(view.base.shape(key))}")
    kept = [k for k in view.float_keys() if k not in learned.masks]
    if kept:
        warnings.warn(f"localize_stitch: {len(kept)} floating tensors have no learned mask and stay at the base "
                      f"(first: {kept[0]!r})", NbmergeWarning, stacklevel=2)
    return {"learned": learned.masks}


def masks_kernel(deltas: list[torch.Tensor], *, key: str, learned: Mapping[str, torch.Tensor]) -> torch.Tensor:
    if key not in learned:
        return torch.zeros_like(deltas[0])
    mask = learned[key].to(deltas[0].device)
    return stitch(deltas, [mask[t] for t in range(len(deltas))])


DATALESS = Rule(matrix=None, fallback=dataless_kernel, prepare=dataless_prepare, elementwise=True)
LEARNED = Rule(matrix=None, fallback=masks_kernel, prepare=masks_prepare)   # whole tensors: the masks are indexed


@register("localize_stitch", paper="https://arxiv.org/abs/2408.13656",
          help={"masks": "file of learned masks (`nbmerge localize`); empty: the dataless masks (top |τ_t|)",
                "sparsity": "dataless masks: the share of each task's entries kept (top |τ_t| over the model)",
                "scale": "global coefficient α: θ = θ₀ + α·Σ_t (m_t / Σ_s m_s) ⊙ τ_t (the paper: 1)"})
def localize_stitch(base, experts, *, masks: str = "", sparsity: float = DEFAULT_SPARSITY, scale: float = 1.0,
                    walk=None, stream=False):
    """Localize-and-Stitch: sparse per-task masks (learned, or the largest |τ_t|), overlaps shared equally."""
    if masks:
        if sparsity != DEFAULT_SPARSITY:
            warnings.warn("localize_stitch: sparsity has no effect with a mask file (its masks are used as learned)",
                          NbmergeWarning, stacklevel=2)
        return walk_merge(base, experts, LEARNED, params={"masks": masks}, scale=scale, walk=walk, stream=stream)
    return walk_merge(base, experts, DATALESS, params={"sparsity": sparsity}, scale=scale, walk=walk, stream=stream)

