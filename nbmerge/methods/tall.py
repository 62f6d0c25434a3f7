"""TALL masks (Wang et al., ICML 2024, "Localizing Task Information for Improved Model Merging and Compression").

Task-aware (:mod:`nbmerge.engine.taskaware`): the multi-task vector τ_MTL = Σ_t τ_t is stored once, and task t keeps
only the weights where its own task vector stands out of it,

    m_t = 1{ |τ_t| > λ·|τ_MTL − τ_t| }     (strict, compared in parameter space as the reference code does)

and runs θ₀ + α·(m_t ⊙ τ_MTL) (α = 1 in the reference). The same masks decide Consensus merging (``consensus``).
The reference picks λ_t per task on that task's validation split from {0.2, …, 0.6}; here λ is one number for every
task (FusionBench's default, 0.6), so the method is data-free. Stored: τ_MTL and T one-bit masks.
"""

from __future__ import annotations

from ..engine.registry import register
from ..engine.taskaware import TaskModels, assemble, float_task_vectors
from ..engine.walker import sum_kernel
from .consensus import check_consensus_params, tall_masks


@register("tall", paper="https://arxiv.org/abs/2405.07813", task_aware=True,
          help={"lam": "λ of the masks m_t = |τ_t| > λ·|τ_MTL − τ_t| (one value for every task; the reference picks "
                       "it per task on validation from 0.2–0.6)",
                "scale": "global coefficient α on each task's update θ₀ + α·(m_t ⊙ τ_MTL) (TALL masks itself: 1)"})
def tall(base, experts, *, lam: float = 0.6, scale: float = 1.0, walk=None, stream=False):
    """TALL masks: the summed task vector, masked per task to the weights that task needs (one model per task)."""
    check_consensus_params(lam, 0, "ta")
    view, keys, theta0, taus = float_task_vectors(base, experts, walk)
    updates = [{} for _ in taus]
    for key in keys:
        deltas = [tau[key] for tau in taus]
        multi = sum_kernel(deltas)
        masks = tall_masks(deltas, multi, lam, theta0[key])
        for t in range(len(taus)):
            updates[t][key] = multi * masks[t]
    return TaskModels(assemble(view, keys, theta0, updates, scale), info={"lam": lam, "task_aware": True})
