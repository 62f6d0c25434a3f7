"""Timing of BMM's repeated solves, the cost of one λ-search trial: the eigenbasis fast path vs a fresh solve.

Shown by the BMM search notebook and printed by ``python -m bench.bmm``.
"""

from __future__ import annotations

import time
from typing import Sequence

import torch

from ..device import resolve_device, synchronize
from ..engine.merging import merge
from ..methods.bmm import run_anchor
from ..solvers.bmm import BMMSolver
from ..testing import openclip_vit_shapes, random_experts, random_model
from ..engine.walker import WalkOptions


def _timed(fn, device: str, repeats: int) -> tuple[float, object]:
    result = None
    synchronize(device)
    start = time.perf_counter()
    for _ in range(repeats):
        result = fn()
    synchronize(device)
    return (time.perf_counter() - start) / repeats, result


def time_bmm_trials(width: int = 768, layers: int = 1, tasks: int = 8, trials: int = 3,
              log10_rhos: Sequence[float] = (-3.0, -1.0, 1.0), device: str = "cpu",
              dtype: torch.dtype = torch.float64, seed: int = 0, method_trial: bool = True) -> dict:
    """Per-trial time (ms) of ``BMMSolver.merged`` vs ``torch.linalg.solve`` on A + λI for every linear module.

    Both paths use the same cached A = Σ_t G_t, B = Σ_t τ_t G_t (data-free Grams τ_tᵀτ_t; the Gram source does
    not change the cost) and assemble a full state dict; the naive path also factorises A + λI each trial, as a
    per-trial call of the registered method would. ``method_trial`` also times one call of the registered
    ``bmm`` (which besides recomputes the anchor, the Grams, A and B).
    """
    device = resolve_device(device)
    shapes = openclip_vit_shapes(width, layers, patch=32, grid=7, output_dim=512)
    base = random_model(shapes, seed=seed)
    experts = random_experts(base, tasks, seed=seed + 1)
    anchor = run_anchor(base, experts)
    precompute_s, solver = _timed(lambda: BMMSolver(base, experts, anchor, device=device, dtype=dtype,
                                                    keep_normal_equations=True), device, 1)

    def naive(rho: float) -> dict:
        out = solver.merged(rho)  # the non-linear tensors, assembled the same way
        for key, module in solver.modules.items():
            out[key] = (module.base + solver.solve_naive(key, rho)).to(module.out_dtype)
        return out

    fast_s, naive_s, difference = 0.0, 0.0, 0.0
    for rho in log10_rhos:
        solver.merged(rho)  # warm-up (allocator, kernels)
        fast_s += _timed(lambda: solver.merged(rho), device, trials)[0]
        naive_s += _timed(lambda: naive(rho), device, trials)[0]
        # τ* before the cast to the model's float32, where the two paths differ by round-off only
        difference = max(difference, max(float((solver.merged_delta(k, rho).double()
                                                 - solver.solve_naive(k, rho)).abs().max()) for k in solver.modules))
    fast_ms, naive_ms = 1e3 * fast_s / len(log10_rhos), 1e3 * naive_s / len(log10_rhos)
    result = {"shape": f"open_clip ViT width {width}, {layers} block(s), {len(solver.modules)} linear modules",
              "tasks": tasks, "device": device, "dtype": str(dtype).replace("torch.", ""),
              "precompute_s": round(precompute_s, 3), "fast_ms_per_trial": round(fast_ms, 3),
              "naive_ms_per_trial": round(naive_ms, 3), "speedup": round(naive_ms / fast_ms, 2),
              "max_abs_difference": difference, "threads": torch.get_num_threads()}
    if method_trial:
        # What a search that re-ran the registered method would pay per trial (anchor, Grams, A, B, Cholesky).
        walk = WalkOptions(device=device)
        seconds = _timed(lambda: merge("bmm", base, experts, {"log10_rho": log10_rhos[0]}, walk=walk), device, 1)[0]
        result["method_ms_per_trial"] = round(1e3 * seconds, 3)
        result["method_speedup"] = round(1e3 * seconds / fast_ms, 2)
    return result
