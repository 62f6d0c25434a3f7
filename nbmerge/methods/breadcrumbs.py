"""Model Breadcrumbs (Davari & Belilovsky, ECCV 2024): drop each task vector's largest outliers and its smallest
entries, then task arithmetic (or TIES's sign election).

Per tensor and task, as mergekit 0.1.5 computes it: with n entries, keep ``target = ⌊density·n⌋`` of them, the
ones ranked just below the ``⌊gamma·n⌋`` largest magnitudes,

    order |τ_t| ascending; n_bot = max(0, n − target − ⌊gamma·n⌋); keep ranks [n_bot, n_bot + target)

so the largest γ fraction and the smallest (1 − density − γ) fraction are dropped (when density + γ > 1, fewer
outliers are dropped so that ``target`` entries remain). ``merge="sum"`` adds the masked task vectors (mergekit's
``breadcrumbs``); ``merge="ties"`` first elects a sign per entry from their sum (≥ 0 counts as positive) and adds
only the agreeing entries, without normalising (mergekit's ``breadcrumbs_ties``). θ = θ₀ + α·τ_M.
"""

from __future__ import annotations

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge

MERGES = ("sum", "ties")


def check_breadcrumbs_params(density: float, gamma: float, merge: str) -> None:
    if not 0.0 <= density <= 1.0:
        raise MethodError(f"breadcrumbs: density must be in [0, 1], got {density}")
    if not 0.0 <= gamma <= 1.0:
        raise MethodError(f"breadcrumbs: gamma must be in [0, 1], got {gamma}")
    if merge not in MERGES:
        raise MethodError(f"breadcrumbs: merge must be one of {MERGES}, got {merge!r}")


def breadcrumbs_mask(delta: torch.Tensor, density: float, gamma: float) -> torch.Tensor:
    """The kept entries of one task vector (bool, its shape). density ≥ 1 keeps everything (gamma included)."""
    if density >= 1.0:
        return torch.ones_like(delta, dtype=torch.bool)
    n = delta.numel()
    target, top = int(density * n), int(gamma * n)
    bottom = max(0, n - target - top)
    order = torch.sort(delta.reshape(-1).abs().float()).indices
    keep = torch.zeros(n, dtype=torch.bool, device=delta.device)
    keep[order[bottom:bottom + target]] = True
    return keep.reshape(delta.shape)


def breadcrumbs_kernel(deltas: list[torch.Tensor], *, density: float = 0.9, gamma: float = 0.01,
                       merge: str = "sum") -> torch.Tensor:
    kept = [d * breadcrumbs_mask(d, density, gamma) for d in deltas]
    if merge == "sum":
        out = kept[0].clone()
        for d in kept[1:]:
            out += d
        return out
    total = torch.stack(kept).sum(0)
    sign = torch.where(total >= 0, 1.0, -1.0).to(total.dtype)
    out = torch.zeros_like(total)
    for d in kept:
        out += d * (torch.sign(d) == sign)
    return out


def breadcrumbs_prepare(view, *, density: float = 0.9, gamma: float = 0.01, merge: str = "sum") -> dict:
    check_breadcrumbs_params(density, gamma, merge)
    return {}


RULE = Rule(matrix=None, fallback=breadcrumbs_kernel, prepare=breadcrumbs_prepare)


# Defaults: density 0.9 and γ = 0.01 (the paper's and mergekit's documented setting; mergekit's function default of
# density 1 is a no-op), α = 0.3 like task arithmetic's.
@register("breadcrumbs", paper="https://arxiv.org/abs/2312.06795",
          help={"density": "fraction of each task vector's entries kept, per tensor",
                "gamma": "fraction of the largest-magnitude entries dropped as outliers, per tensor",
                "merge": "sum (task arithmetic) | ties (a sign elected per entry; only agreeing entries added)",
                "scale": "global coefficient α: θ = θ₀ + α·τ_merged"})
def breadcrumbs(base, experts, *, density: float = 0.9, gamma: float = 0.01, merge: str = "sum",
                scale: float = 0.3, walk=None, stream=False):
    """Model Breadcrumbs: mask each task vector's outliers and smallest entries, then add them."""
    check_breadcrumbs_params(density, gamma, merge)
    return walk_merge(base, experts, RULE, params={"density": density, "gamma": gamma, "merge": merge},
                      scale=scale, walk=walk, stream=stream)
