"""ISO-C (Marczak et al., ICML 2025, "No Task Left Behind"): isotropic merging in the common subspace."""

from __future__ import annotations

import torch

from ..engine.linalg import polar_factor
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge


def iso_c_matrix(deltas: list[torch.Tensor]) -> torch.Tensor:
    """τ_Σ = Σ_t τ_t = U S Vᵀ  →  mean(S)·U Vᵀ (flatten the spectrum of the task-arithmetic sum).

    The sum, not the mean (ISO README; the TSV repo's iso.py uses the mean, which only rescales α).
    """
    factor, singular = polar_factor(sum_kernel(deltas), return_singular_values=True)
    return singular.mean() * factor


RULE = Rule(matrix=iso_c_matrix, fallback="mean")


@register("iso_c", paper="https://arxiv.org/abs/2502.04959",
          help={"scale": "global coefficient α on every tensor (FusionBench default 1.0; its docs use 1.5)"})
def iso_c(base, experts, *, scale: float = 1.0, walk=None, stream=False):
    """ISO-C: task-arithmetic sum with an isotropic (flattened) singular spectrum."""
    return walk_merge(base, experts, RULE, params={}, scale=scale, walk=walk, stream=stream)
