"""RegMean (Jin et al., ICLR 2023): per-layer least-squares merge from input Gram matrices."""

from __future__ import annotations

import torch

from ..errors import MethodError
from ..engine.linalg import solve_right
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge


def shrink_off_diagonal(gram: torch.Tensor, offdiag_scale: float) -> torch.Tensor:
    """G̃ = a·G + (1 − a)·diag(G): off-diagonal entries times a, the diagonal unchanged."""
    shrunk = gram * offdiag_scale
    shrunk.diagonal().copy_(gram.diagonal())
    return shrunk


def regmean_matrix(deltas: list[torch.Tensor], *, grams: list[torch.Tensor], offdiag_scale: float = 0.95,
                   key: str = "") -> torch.Tensor:
    """τ_M = (Σ_t τ_t G̃_t)(Σ_t G̃_t)⁻¹, the task-vector form of W* = (Σ_t W_t G̃_t)(Σ_t G̃_t)⁻¹."""
    if not 0.0 <= offdiag_scale <= 1.0:
        raise MethodError(f"regmean: offdiag_scale must be in [0, 1], got {offdiag_scale}")
    shrunk = [shrink_off_diagonal(g, offdiag_scale) for g in grams]
    numerator = sum(delta @ g for delta, g in zip(deltas, shrunk))
    return solve_right(numerator, sum(shrunk), what=f"regmean {key}")


RULE = Rule(matrix=regmean_matrix, fallback="mean", matrix_from_stats="grams")


# offdiag_scale 0.95 is FusionBench's CLIP setting (docs/methods.md, RegMean); the original repo leaves shrinkage off
# (equivalent to 1.0). Only tensors that have a Gram take the matrix path; the others are averaged, as in the
# reference (there, modules without RegMean weights are simply averaged).
@register("regmean", paper="https://arxiv.org/abs/2212.09849", needs=("grams",),
          help={"offdiag_scale": "RegMean α: off-diagonal Gram entries are multiplied by it (1 = no shrinkage)",
                "scale": "global coefficient α on every tensor (1 reproduces RegMean)"})
def regmean(base, experts, *, grams, offdiag_scale: float = 0.95, scale: float = 1.0, walk=None, stream=False):
    """RegMean: closed-form merge of each linear layer that best matches every expert's outputs on its inputs."""
    return walk_merge(base, experts, RULE, params={"offdiag_scale": offdiag_scale}, scale=scale, walk=walk,
                      stream=stream, grams=grams)
