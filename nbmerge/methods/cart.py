"""CART (Choi et al., 2024, "Revisiting Weight Averaging for Model Merging"): centred task vectors, low-rank.

Weight averaging is task arithmetic with the mean task vector τ̄ = (1/T)·Σ_t τ_t as its origin; CART keeps, for every
linear weight, the top-k singular directions of each task's centred residual r_t = τ_t − τ̄ and adds their sum back:

    τ_M = τ̄ + λ·Σ_t LowRank_k(τ_t − τ̄),     θ = θ₀ + α·τ_M,     k = max(1, ⌊ρ·min(m, n)⌋)

The coefficient λ (the reference's ``prior``) multiplies the *sum* over tasks, not the mean. The reference takes the
SVD path for the attention and MLP weights only (biases, LayerNorms, embeddings, the projection stay on the mean):
``matrix_rule="linear_only"``, every other tensor ends at τ̄ (the residuals of a tensor sum to zero, so their full
reconstruction adds nothing). The reference's defaults for ViT-B/32 are (λ, ρ) = (2.0, 0.12) at 8 tasks, (1.5, 0.16)
at 14 and (1.9, 0.32) at 20; ρ = 1 gives weight averaging whatever λ is, and so does ρ = 0 (the reference's special
case), and one task gives its expert.
"""

from __future__ import annotations

import math

import torch

from ..errors import MethodError
from ..engine.linalg import top_singular
from ..engine.registry import register
from ..engine.walker import Rule, mean_kernel, walk_merge


def check_cart_params(rank_ratio: float, prior: float) -> None:
    if not 0.0 <= rank_ratio <= 1.0:
        raise MethodError(f"cart: rank_ratio must be in [0, 1], got {rank_ratio}")
    if not math.isfinite(prior):
        raise MethodError(f"cart: prior must be a finite number, got {prior}")


def cart_matrix(deltas: list[torch.Tensor], *, rank_ratio: float = 0.12, prior: float = 2.0) -> torch.Tensor:
    """One linear weight: τ̄ + λ·Σ_t (top-k SVD of τ_t − τ̄)."""
    check_cart_params(rank_ratio, prior)
    mean = mean_kernel(deltas)
    if rank_ratio == 0.0 or prior == 0.0:
        return mean
    rows, cols = mean.shape
    k = min(rows, cols) if rank_ratio == 1.0 else max(1, int(rank_ratio * min(rows, cols)))
    low_rank = torch.zeros_like(mean)
    for delta in deltas:
        u, s, vh = top_singular(delta - mean, k)
        low_rank += (u * s) @ vh
    return mean.add_(low_rank, alpha=prior)


RULE = Rule(matrix=cart_matrix, fallback="mean", matrix_rule="linear_only")


# Defaults: the reference's ViT-B/32 × 8 setting (prior 2.0, rank ratio 0.12), α = 1 (the reference has no outer
# coefficient; docs/methods.md, CART).
@register("cart", paper="https://arxiv.org/abs/2412.12153",
          help={"rank_ratio": "ρ: each centred residual keeps k = max(1, ⌊ρ·min(m, n)⌋) singular directions "
                              "(reference: 0.12 at 8 tasks, 0.16 at 14, 0.32 at 20)",
                "prior": "λ: coefficient of the summed low-rank residuals (reference: 2.0 at 8 tasks, 1.5 at 14, "
                         "1.9 at 20)",
                "scale": "global coefficient α: θ = θ₀ + α·τ_merged (the reference has none: 1)"})
def cart(base, experts, *, rank_ratio: float = 0.12, prior: float = 2.0, scale: float = 1.0, walk=None,
         stream=False):
    """CART: the mean task vector plus each task's low-rank centred residual."""
    check_cart_params(rank_ratio, prior)
    return walk_merge(base, experts, RULE, params={"rank_ratio": rank_ratio, "prior": prior}, scale=scale,
                      walk=walk, stream=stream)
