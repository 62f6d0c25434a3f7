"""TSV-C (Gargiulo et al., CVPR 2025, "Task Singular Vectors"): each task vector compressed to its top singular
directions, one model per task.

Task-aware (:mod:`nbmerge.engine.taskaware`): for every 2-D tensor, task t keeps its top k = ⌊r/T⌋ singular triplets
(r = min(m, n); the official code's fraction 1/T), every other tensor in full; task t is evaluated on
θ₀ + α·τ̂_t (α = 1 in the reference, which does not tune it). A 2-D tensor with fewer than T singular values keeps
none (k = 0), as in the reference, and stays at θ₀. Stored: k·(m + n + 1) numbers per task and matrix instead of m·n.
"""

from __future__ import annotations

import torch

from ..engine.linalg import top_singular
from ..engine.registry import register
from ..engine.taskaware import TaskModels, assemble, float_task_vectors


def compressed(tau: torch.Tensor, tasks: int) -> tuple[torch.Tensor, int]:
    """τ̂ of one tensor and its rank k (−1: not a matrix, kept in full)."""
    if tau.dim() != 2:
        return tau, -1
    k = int(min(tau.shape) * (1.0 / tasks))
    if k == 0:
        return torch.zeros_like(tau), 0
    u, s, vh = top_singular(tau, k)
    return (u * s) @ vh, k


@register("tsv_c", paper="https://arxiv.org/abs/2412.00081", task_aware=True,
          help={"scale": "global coefficient α on each task's compressed update (TSV-C itself: 1)"})
def tsv_c(base, experts, *, scale: float = 1.0, walk=None, stream=False):
    """TSV-C: each task's low-rank task vector, kept per task (task-aware: one model per task)."""
    view, keys, theta0, taus = float_task_vectors(base, experts, walk)
    updates, ranks = [], {}
    for tau in taus:
        update = {}
        for key in keys:
            update[key], ranks[key] = compressed(tau[key], len(taus))
        updates.append(update)
    kept = sum(k * (sum(theta0[key].shape) + 1) if k >= 0 else theta0[key].numel() for key, k in ranks.items())
    full = sum(theta0[key].numel() for key in keys)
    return TaskModels(assemble(view, keys, theta0, updates, scale),
                      info={"ranks": {k: r for k, r in ranks.items() if r >= 0}, "stored_fraction": kept / full,
                            "task_aware": True})
