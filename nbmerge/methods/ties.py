"""TIES-Merging (Yadav et al., NeurIPS 2023): trim, elect sign, disjoint merge."""

from __future__ import annotations

import numpy as np
import torch

from ..errors import MethodError
from ..registry import register
from ..walker import ModelView, Rule, walk_merge

MERGES = ("mean", "sum", "max")


def check_ties_params(density: float, merge: str) -> None:
    if not 0.0 < density <= 1.0:
        raise MethodError(f"ties: density must be in (0, 1], got {density}")
    if merge not in MERGES:
        raise MethodError(f"ties: merge must be one of {MERGES}, got {merge!r}")


def topk_threshold(abs_values: torch.Tensor, density: float) -> torch.Tensor:
    """Magnitude threshold that keeps the top ``density`` fraction of a flattened task vector.

    As the reference code: the (d − int(d·density))-th smallest |τ|, and entries with |τ| ≥ it are kept.
    """
    d = abs_values.numel()
    k = d - int(d * density)
    if k < 1:
        return torch.zeros((), dtype=abs_values.dtype, device=abs_values.device)
    if abs_values.device.type == "cpu":
        # NumPy's introselect finds the same order statistic several times faster than torch.kthvalue on a CPU.
        value = np.partition(abs_values.reshape(-1).numpy(), k - 1)[k - 1]
        return torch.tensor(value, dtype=abs_values.dtype)
    return abs_values.reshape(-1).kthvalue(k).values


def ties_prepare(view: ModelView, *, density: float = 0.2, merge: str = "mean") -> dict:
    """The two global quantities of TIES: per-task thresholds over the whole model and the majority sign.

    The reference computes the top-k over the entire flattened model (not per layer); this reads one task
    vector at a time, so only one model's worth of magnitudes is in memory.
    """
    check_ties_params(density, merge)
    keys = view.float_keys()
    thresholds = []
    for t in range(view.T):
        flat = torch.cat([view.task_delta(key, t).abs().reshape(-1).float() for key in keys])
        thresholds.append(topk_threshold(flat, density))
        del flat
    thresholds = torch.stack(thresholds)
    # Zero elected signs take the sign of the *sum of elected signs* over the model (reference "majority").
    sign_total = torch.zeros((), dtype=torch.float64, device=thresholds.device)
    for key in keys:
        trimmed = _trim(view.deltas(key), thresholds)
        sign_total += torch.sign(trimmed.sum(0)).sum(dtype=torch.float64)
    return {"thresholds": thresholds, "majority": float(torch.sign(sign_total))}


def _trim(deltas: list[torch.Tensor], thresholds: torch.Tensor) -> torch.Tensor:
    stacked = torch.stack(deltas)
    shape = (-1,) + (1,) * (stacked.dim() - 1)
    return stacked * (stacked.abs() >= thresholds.to(stacked.dtype).view(shape))


def ties_kernel(deltas: list[torch.Tensor], *, thresholds: torch.Tensor, majority: float,
                merge: str = "mean") -> torch.Tensor:
    """Trim each τ_t at its threshold, elect γ = sign(Σ_t τ̂_t), average (or sum/max) the agreeing entries."""
    trimmed = _trim(deltas, thresholds)
    sign = torch.sign(trimmed.sum(0))
    sign[sign == 0] = majority
    agree = torch.where(sign > 0, trimmed > 0, trimmed < 0)
    selected = trimmed * agree
    if merge == "sum":
        return selected.sum(0)
    if merge == "max":
        return selected.abs().max(0).values * sign
    counts = (selected != 0).sum(0).to(selected.dtype)
    return selected.sum(0) / counts.clamp(min=1)


RULE = Rule(matrix=None, fallback=ties_kernel, prepare=ties_prepare)


# Defaults follow the TIES paper / TSV protocol (dis-mean, k = 20%, α = 1; docs/methods.md, TIES).
# FusionBench-compatible setting: merge="sum", scale=0.3.
@register("ties", paper="https://arxiv.org/abs/2306.01708",
          help={"density": "fraction of each task vector's entries kept, by magnitude over the whole model",
                "merge": "disjoint merge of the agreeing entries: mean | sum | max",
                "scale": "global coefficient α: θ = θ₀ + α·τ_merged"})
def ties(base, experts, *, density: float = 0.2, merge: str = "mean", scale: float = 1.0, walk=None,
         stream=False):
    """TIES-Merging: trim small entries, elect a sign per parameter, merge the entries that agree."""
    return walk_merge(base, experts, RULE, params={"density": density, "merge": merge}, scale=scale,
                      walk=walk, stream=stream)
