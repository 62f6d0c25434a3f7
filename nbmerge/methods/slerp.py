"""SLERP (Shoemake, 1985; mergekit's default two-model merge): spherical interpolation between the base and one
expert, each tensor flattened to one vector.

    a = θ₀, b = θ₁ (flattened); cos Ω = ⟨a/‖a‖, b/‖b‖⟩ clamped to [−1, 1]   (a norm ≤ 1e-8 counts as 1)
    slerp = sin((1 − t)Ω)/sin Ω · a + sin(tΩ)/sin Ω · b,   or (1 − t)·a + t·b where |cos Ω| > 0.9995
    θ = θ₀ + α·(slerp − θ₀)

as mergekit 0.1.5's ``slerp`` computes it (float32, float64 for float64 inputs; t = 0 the base, t = 1 the expert).
θ₁ is rebuilt as θ₀ + τ₁ from the walker's task vector, so results agree with mergekit to float32 rounding.
"""

from __future__ import annotations

import math

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge

DOT_THRESHOLD, NORM_EPS = 0.9995, 1e-8


def slerp_vectors(a: torch.Tensor, b: torch.Tensor, t: float) -> torch.Tensor:
    """SLERP of two tensors of one shape, over their flattened entries (the result has their shape)."""
    dtype = torch.float64 if torch.float64 in (a.dtype, b.dtype) else torch.float32
    va, vb = a.reshape(-1).to(dtype), b.reshape(-1).to(dtype)
    if va.numel() == 0:
        return ((1 - t) * va + t * vb).reshape(a.shape)
    na, nb = va.norm(), vb.norm()
    na = torch.where(na > NORM_EPS, na, torch.ones_like(na))
    nb = torch.where(nb > NORM_EPS, nb, torch.ones_like(nb))
    dot = ((va / na) * (vb / nb)).sum().clamp(-1.0, 1.0).item()
    if abs(dot) > DOT_THRESHOLD:
        return ((1 - t) * va + t * vb).reshape(a.shape)
    omega = math.acos(dot)
    sin_omega = math.sin(omega)
    return (math.sin((1 - t) * omega) / sin_omega * va + math.sin(t * omega) / sin_omega * vb).reshape(a.shape)


def slerp_kernel(deltas: list[torch.Tensor], *, base: torch.Tensor, t: float = 0.5) -> torch.Tensor:
    start = base.to(deltas[0].dtype)
    return slerp_vectors(start, start + deltas[0], t) - start


def slerp_prepare(view, *, t: float = 0.5) -> dict:
    if view.T != 1:
        raise MethodError(f"slerp interpolates the base and exactly one expert, got {view.T} experts (karcher "
                          "averages several on the sphere)")
    if not math.isfinite(t):
        raise MethodError(f"slerp: t must be finite, got {t}")
    return {}


RULE = Rule(matrix=None, fallback=slerp_kernel, prepare=slerp_prepare)


@register("slerp", paper="https://dl.acm.org/doi/10.1145/325165.325242", max_experts=1,
          help={"t": "interpolation factor: 0 gives the base, 1 the expert (mergekit's t)",
                "scale": "global coefficient α on slerp − θ₀ (1 reproduces SLERP)"})
def slerp(base, experts, *, t: float = 0.5, scale: float = 1.0, walk=None, stream=False):
    """SLERP: interpolate along the great circle between the base and one expert, tensor by tensor."""
    return walk_merge(base, experts, RULE, params={"t": t}, scale=scale, walk=walk, stream=stream)
