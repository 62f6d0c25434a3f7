"""WUDI-Merging (Cheng et al., ICML 2025, "Whoever Started the Interference Should End It")."""

from __future__ import annotations

from typing import Optional

import torch

from ..errors import MethodError
from ..engine.linalg import LowRank, gram_of, times_of
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge


def wudi_normal_equations(deltas: list[torch.Tensor], factors: Optional[list[Optional[LowRank]]] = None
                          ) -> tuple[torch.Tensor, torch.Tensor]:
    """A = Σ_t τ_tᵀτ_t/‖τ_t‖², B = Σ_t τ_t τ_tᵀτ_t/‖τ_t‖²: the loss Σ_t ‖(τ_M − τ_t)τ_tᵀ‖²/‖τ_t‖² has gradient
    2(τ_M A − B), so each Adam step costs one d_out·d_in² product whatever T is (the autograd loop of the
    reference costs T·d_out²·d_in per step). ``factors``: τ_t as exact low-rank factors (LoRA adapters) or None,
    from which τ_tᵀτ_t and τ_t(τ_tᵀτ_t) cost r·d_in·(d_in + d_out) instead of 2·d_out·d_in²."""
    a = torch.zeros(deltas[0].shape[1], deltas[0].shape[1], dtype=deltas[0].dtype, device=deltas[0].device)
    b = torch.zeros_like(deltas[0])
    for delta, f in zip(deltas, factors or [None] * len(deltas)):
        norm_sq = delta.square().sum()
        if norm_sq == 0:
            continue  # a zero task vector contributes nothing (the reference divides 0 by 0 here)
        gram = gram_of(delta, f) / norm_sq
        a += gram
        b += times_of(delta, gram, f)
    return a, b


def wudi_matrix(deltas: list[torch.Tensor], *, iters: int = 300, lr: float = 1e-5,
                factors: Optional[list[Optional[LowRank]]] = None) -> torch.Tensor:
    """The reference protocol: Adam (lr 1e-5, β = (0.9, 0.999), ε = 1e-8) from τ_M = Σ_t τ_t, ``iters`` steps.

    It does not reach the minimiser (every entry moves at most ~iters·lr): WUDI as published is this
    early-stopped iterate, so it is reproduced step for step; ``wudi_closed_form`` is the exact minimiser.
    """
    if iters < 0 or lr <= 0:
        raise MethodError(f"wudi: need iters >= 0 and lr > 0, got iters={iters}, lr={lr}")
    a, b = wudi_normal_equations(deltas, factors)
    merged = sum_kernel(deltas)
    # Adam written out as torch.optim.Adam's single-tensor path computes it (same operations in the same
    # order, so the iterates match it bit for bit on the CPU), without the optimizer's start-up cost.
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    exp_avg, exp_avg_sq = torch.zeros_like(merged), torch.zeros_like(merged)
    for step in range(1, iters + 1):
        grad = 2.0 * (merged @ a - b)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step_size = lr / (1 - beta1**step)
        denom = (exp_avg_sq.sqrt() / (1 - beta2**step) ** 0.5).add_(eps)
        merged.addcdiv_(exp_avg, denom, value=-step_size)
    return merged


# Official WUDI (nathanielyvo/WUDI-Merging) merges only the attention and MLP linear weights and leaves every
# other tensor at θ₀: the defaults matrix_rule="linear_only", fallback="base". FusionBench instead merges every
# 2-D tensor, averages the rest and runs 400 iterations: walk=WalkOptions(matrix_rule="ndim2", fallback="mean"),
# iters=400 (its function default is 300).
RULE = Rule(matrix=wudi_matrix, fallback="base", matrix_rule="linear_only")


@register("wudi", paper="https://arxiv.org/abs/2503.08099",
          help={"iters": "Adam steps (official 300; FusionBench config 400)",
                "lr": "Adam learning rate (official 1e-5)",
                "scale": "global coefficient α (the reference uses 1)"})
def wudi(base, experts, *, iters: int = 300, lr: float = 1e-5, scale: float = 1.0, walk=None, stream=False):
    """WUDI-Merging: data-free least squares with task-vector Grams, by the reference's Adam protocol."""
    return walk_merge(base, experts, RULE, params={"iters": iters, "lr": lr}, scale=scale, walk=walk,
                      stream=stream)
