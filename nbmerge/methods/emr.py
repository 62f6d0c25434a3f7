"""EMR-Merging (Huang et al., NeurIPS 2024, "EMR-Merging: Tuning-Free High-Performance Model Merging").

Task-aware: one shared unified task vector plus, per task, a binary mask and one rescaler
(:mod:`nbmerge.engine.taskaware`). Every floating tensor, elementwise:

1. Elect a sign: γ = +1 where Σ_t τ_t > 0, else −1 (a sum of exactly zero counts as negative).
2. Masks: m_t = 1{τ_t·γ > 0} (a task's exact zeros are never in its mask).
3. Unified magnitude: τ_uni = γ·max_t |m_t ⊙ τ_t|, the largest agreeing magnitude.
4. One rescaler per task over the whole model, as FusionBench and the official 8-task code compute it, from
   per-tensor means: λ_t = Σ_k mean|τ_t[k]| / Σ_k mean|m_t[k] ⊙ τ_uni[k]|.
5. Task t's model: θ₀ + α·(τ_uni ⊙ m_t)·λ_t (α = 1: the method has no coefficient; the notebooks tune α like every
   other method's).

Stored: the unified vector, T one-bit masks, T scalars (about 1 + T/32 float32 models). A task with no agreeing
entry gets λ_t = 0 (FusionBench divides by zero there); its model is the base.
"""

from __future__ import annotations

import torch

from ..engine.registry import register
from ..engine.taskaware import TaskModels, assemble, float_task_vectors
from ..engine.walker import sum_kernel


def emr_parts(taus: list[dict[str, torch.Tensor]], keys: list[str]
              ) -> tuple[dict[str, torch.Tensor], list[dict[str, torch.Tensor]], torch.Tensor]:
    """(τ_uni per key, the masks per task and key, the rescalers λ) of EMR's steps 1–4."""
    unified, masks = {}, [{} for _ in taus]
    # accumulated in the computation's dtype, as FusionBench does (float32 for float32 models): the same rescalers
    dtype = taus[0][keys[0]].dtype if keys else torch.float32
    numerator = torch.zeros(len(taus), dtype=dtype)
    denominator = torch.zeros(len(taus), dtype=dtype)
    for key in keys:
        total = sum_kernel([tau[key] for tau in taus])
        sign = torch.where(total > 0, 1.0, -1.0).to(total.dtype)
        magnitude = torch.zeros_like(total)
        for t, tau in enumerate(taus):
            mask = tau[key] * sign > 0
            masks[t][key] = mask
            magnitude = torch.where(mask & (tau[key].abs() > magnitude), tau[key].abs(), magnitude)
        unified[key] = sign * magnitude
        if taus[0][key].numel():
            for t, tau in enumerate(taus):
                numerator[t] += tau[key].abs().mean().item()
                denominator[t] += (unified[key] * masks[t][key]).abs().mean().item()
    safe = denominator > 0
    rescalers = torch.where(safe, numerator / torch.where(safe, denominator, torch.ones_like(denominator)),
                            torch.zeros_like(numerator))
    return unified, masks, rescalers


@register("emr", paper="https://arxiv.org/abs/2405.17461", task_aware=True,
          help={"scale": "global coefficient α on each task's update θ₀ + α·λ_t·(m_t ⊙ τ_uni) (EMR itself: 1)"})
def emr(base, experts, *, scale: float = 1.0, walk=None, stream=False):
    """EMR-Merging: a unified task vector with per-task masks and rescalers (task-aware: one model per task)."""
    view, keys, theta0, taus = float_task_vectors(base, experts, walk)
    unified, masks, rescalers = emr_parts(taus, keys)
    updates = [{key: (unified[key] * masks[t][key]) * rescalers[t].to(unified[key].device) for key in keys}
               for t in range(len(taus))]
    return TaskModels(assemble(view, keys, theta0, updates, scale),
                      info={"rescalers": [float(r) for r in rescalers], "task_aware": True})
