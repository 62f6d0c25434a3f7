"""Karcher mean (Karcher, 1977; mergekit 0.1.5's ``karcher``): the Riemannian mean of the experts' weights on the
sphere, scaled back by their mean norm, tensor by tensor (each flattened to one vector).

    u_i = θ_i/‖θ_i‖ (inputs with ‖θ_i‖ ≤ tol leave the direction; the weights of the rest are renormalised)
    μ ← normalise(Σ_i w_i u_i);  repeat ``max_iter`` times:
        Ω_i = acos⟨μ, u_i⟩ (skipped when Ω_i < tol),  v = Σ_i w_i Ω_i/sin Ω_i · (u_i − cos Ω_i·μ)
        stop when ‖v‖ < tol, else μ ← normalise(cos‖v‖·μ + sin‖v‖·v/‖v‖)
    karcher = (Σ_i (1/N)‖θ_i‖)·μ;   θ = θ₀ + α·(karcher − θ₀)

The mean is of the experts only (N of them, equal weights); the base is the origin of the task vectors. mergekit
treats a given ``base_model`` as one more input: pass the base also as an expert to reproduce that. θ_i is
rebuilt as θ₀ + τ_i from the walker's task vectors, so results agree with mergekit to float32 rounding.
"""

from __future__ import annotations

import math

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge


def karcher_vectors(tensors: list[torch.Tensor], *, max_iter: int = 10, tol: float = 1e-5) -> torch.Tensor:
    """The Karcher mean of ``tensors`` (one shape) on the unit sphere, times their mean norm."""
    if len(tensors) == 1:
        return tensors[0].clone()
    shape = tensors[0].shape
    dtype = torch.float64 if tensors[0].dtype == torch.float64 else torch.float32
    flat = [x.reshape(-1).to(dtype) for x in tensors]
    norms = [v.norm().item() for v in flat]
    alphas = [1.0 / len(flat)] * len(flat)
    live = [i for i, n in enumerate(norms) if n > tol]
    if not live:
        return torch.zeros(shape, dtype=dtype, device=tensors[0].device)
    units = {i: flat[i] / norms[i] for i in live}
    weight = {i: alphas[i] / sum(alphas[j] for j in live) for i in live}
    mu = sum(weight[i] * units[i] for i in live)
    if mu.norm().item() < tol:
        mu = units[live[0]].clone()
    mu = mu / mu.norm()
    for _ in range(max_iter):
        tangent = torch.zeros_like(mu)
        for i in live:
            cos = (mu * units[i]).sum().clamp(-1.0, 1.0).item()
            omega = math.acos(cos)
            if omega < tol:
                continue
            tangent = tangent + weight[i] * (omega / math.sin(omega)) * (units[i] - cos * mu)
        step = tangent.norm().item()
        if step < tol:
            break
        mu = math.cos(step) * mu + math.sin(step) * (tangent / step)
        mu = mu / mu.norm()
    scale = sum(a * n for a, n in zip(alphas, norms))
    return (scale * mu).reshape(shape)


def karcher_kernel(deltas: list[torch.Tensor], *, base: torch.Tensor, max_iter: int = 10,
                   tol: float = 1e-5) -> torch.Tensor:
    start = base.to(deltas[0].dtype)
    return karcher_vectors([start + d for d in deltas], max_iter=max_iter, tol=tol).to(deltas[0].dtype) - start


def karcher_prepare(view, *, max_iter: int = 10, tol: float = 1e-5) -> dict:
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 0:
        raise MethodError(f"karcher: max_iter must be an integer >= 0, got {max_iter!r}")
    if not (math.isfinite(tol) and tol > 0):
        raise MethodError(f"karcher: tol must be a positive number, got {tol}")
    return {}


RULE = Rule(matrix=None, fallback=karcher_kernel, prepare=karcher_prepare)


@register("karcher", paper="https://doi.org/10.1002/cpa.3160300502",
          help={"max_iter": "fixed-point iterations of the Riemannian mean (mergekit's default 10)",
                "tol": "stop when the tangent step is shorter; inputs closer than it are skipped (mergekit 1e-5)",
                "scale": "global coefficient α on karcher − θ₀ (1 reproduces the Karcher mean)"})
def karcher(base, experts, *, max_iter: int = 10, tol: float = 1e-5, scale: float = 1.0, walk=None, stream=False):
    """Karcher mean: the experts' weights averaged on the sphere (Riemannian mean), then scaled to their mean norm."""
    return walk_merge(base, experts, RULE, params={"max_iter": max_iter, "tol": tol}, scale=scale, walk=walk,
                      stream=stream)
