"""Consensus merging with TALL masks (Wang et al., ICML 2024, "Localizing Task Information for Improved Model
Merging and Compression").

A task's TALL mask marks the weights where its own task vector stands out of the multi-task vector τ_MTL:

    m_t = 1{ |τ_t| > λ·|τ_MTL − τ_t| }            (strict, as the reference code compares)

Consensus merging keeps a weight of τ_MTL only where at least k tasks' masks select it (k = 2 drops the "selfish"
weights one task alone uses and the "catastrophic" ones none uses):

    τ_M = 1{ Σ_t m_t ≥ k } ⊙ τ_MTL,     θ = θ₀ + α·τ_M

τ_MTL is the plain sum Σ_t τ_t (Consensus TA) or TIES at 20 % density with a summed disjoint merge (Consensus
TIES), both unscaled, as in the reference. Everything is elementwise, over every floating tensor; only TIES's trim
is global. The reference chooses λ_t per task on that task's validation split from {0.2, …, 0.6}, which makes the
masks data-dependent; here λ is one number for every task (FusionBench's TALL-mask default, 0.6), so the method
is data-free, and α is tuned like every other method's.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge
from .ties import ties_kernel, ties_prepare

#: TIES's setting inside Consensus TIES (the reference hard-codes it)
TIES_DENSITY, TIES_MERGE = 0.2, "sum"
BASE_MERGES = ("ta", "ties")


def check_consensus_params(lam: float, k: int, base_merge: str) -> None:
    if not (math.isfinite(lam) and lam >= 0):
        raise MethodError(f"consensus: lam must be a finite number >= 0, got {lam}")
    if int(k) != k or k < 0:
        raise MethodError(f"consensus: k must be a whole number >= 0, got {k}")
    if base_merge not in BASE_MERGES:
        raise MethodError(f"consensus: base_merge must be one of {BASE_MERGES}, got {base_merge!r}")


def tall_masks(deltas: list[torch.Tensor], multi_task: torch.Tensor, lam: float,
               base: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The T masks of one tensor, stacked (bool): m_t = |τ_t| > λ·|τ_MTL − τ_t|.

    With ``base`` the comparison is made in parameter space, as the reference code makes it,
    |θ₀ − θ_t| > λ·|(θ₀ + τ_MTL) − θ_t|: the same masks up to float32 rounding at the threshold, so a peer check
    can compare them entry by entry."""
    stacked = torch.stack(deltas)
    if base is None:
        return stacked.abs() > lam * (multi_task - stacked).abs()
    experts = base + stacked
    return (base - experts).abs() > lam * ((base + multi_task) - experts).abs()


def consensus_prepare(view, *, lam: float = 0.6, k: int = 2, base_merge: str = "ta") -> dict:
    check_consensus_params(lam, k, base_merge)
    if base_merge == "ta":
        return {}
    return ties_prepare(view, density=TIES_DENSITY, merge=TIES_MERGE)


def consensus_kernel(deltas: list[torch.Tensor], *, lam: float = 0.6, k: int = 2, base_merge: str = "ta",
                     thresholds=None, majority=None, base: Optional[torch.Tensor] = None) -> torch.Tensor:
    """1{Σ_t m_t ≥ k} ⊙ τ_MTL for one tensor."""
    if base_merge == "ta":
        multi_task = sum_kernel(deltas)
    else:
        multi_task = ties_kernel(deltas, thresholds=thresholds, majority=majority, merge=TIES_MERGE)
    if base is not None and base.shape != deltas[0].shape:
        base = None
    votes = tall_masks(deltas, multi_task, lam, base).sum(0)
    return multi_task * (votes >= int(k))


RULE = Rule(matrix=None, fallback=consensus_kernel, prepare=consensus_prepare)


# Defaults: k = 2 and the unscaled TA sum of the reference, FusionBench's λ = 0.6, and α = 0.3 (task arithmetic's
# default here; the reference tunes α in {0.1, …, 1.0} on validation).
@register("consensus", paper="https://arxiv.org/abs/2405.07813",
          help={"lam": "λ of the TALL masks m_t = |τ_t| > λ·|τ_MTL − τ_t| (one value for every task; the reference "
                       "picks it per task on validation from 0.2–0.6)",
                "k": "a weight is kept where at least k tasks' masks select it (reference 2)",
                "base_merge": "τ_MTL: ta (the sum of the task vectors) | ties (TIES, 20% density, summed)",
                "scale": "global coefficient α: θ = θ₀ + α·τ_merged"})
def consensus(base, experts, *, lam: float = 0.6, k: int = 2, base_merge: str = "ta", scale: float = 0.3,
              walk=None, stream=False):
    """Consensus TA / TIES: keep the multi-task vector where at least k tasks' TALL masks agree."""
    check_consensus_params(lam, k, base_merge)
    return walk_merge(base, experts, RULE, params={"lam": lam, "k": k, "base_merge": base_merge}, scale=scale,
                      walk=walk, stream=stream)
