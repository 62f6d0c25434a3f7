"""WUDI's objective solved exactly: a diagnostic beside WUDI-Merging (``wudi``), not the paper's method."""

from __future__ import annotations

from typing import Optional

import torch

from ..engine.linalg import LowRank, pinv_psd
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge
from .wudi import wudi_normal_equations


def wudi_closed_form_matrix(deltas: list[torch.Tensor], *, ridge: float = 0.0, key: str = "",
                            factors: Optional[list[Optional[LowRank]]] = None) -> torch.Tensor:
    """Exact minimiser of the WUDI objective: τ_M A = B (a RegMean solve with Grams τ_tᵀτ_t/‖τ_t‖²).

    When A is singular (T·d_out < d_in, e.g. an MLP-out layer with few tasks) the minimisers form an affine
    set; this returns the one closest to WUDI's initialisation S = Σ_t τ_t: S + (B − S A) A⁺, which is where
    plain gradient descent from S converges. With A invertible it is B A⁻¹.
    """
    # Build A and B and solve in float64: A's spectrum spans many orders of magnitude, and where A is singular the
    # pseudo-inverse must see its null space as zeros. A float32 A has round-off eigenvalues there (~1e-7 of the
    # largest, far above pinv's cutoff), which it would invert: the GPU check and the LoRA benchmark found results
    # off by O(1) that way.
    deltas64 = [d.double() for d in deltas]
    factors64 = None if factors is None else [None if f is None else f.double() for f in factors]
    a, b = wudi_normal_equations(deltas64, factors64)
    if ridge:
        a = a + ridge * a.diagonal().mean() * torch.eye(a.shape[0], dtype=a.dtype, device=a.device)
    start = sum_kernel(deltas64)
    correction = (b - start @ a) @ pinv_psd(a)
    return (start + correction).to(deltas[0].dtype)


RULE = Rule(matrix=wudi_closed_form_matrix, fallback="base", matrix_rule="linear_only")   # WUDI's defaults


@register("wudi_closed_form", paper="https://arxiv.org/abs/2503.08099",
          help={"ridge": "relative ridge added to A (times its mean diagonal) if A is singular",
                "scale": "global coefficient α"})
def wudi_closed_form(base, experts, *, ridge: float = 0.0, scale: float = 1.0, walk=None, stream=False):
    """Diagnostic, not WUDI: the exact minimiser of WUDI's objective, which the reference optimiser never reaches."""
    return walk_merge(base, experts, RULE, params={"ridge": ridge}, scale=scale, walk=walk,
                      stream=stream)
