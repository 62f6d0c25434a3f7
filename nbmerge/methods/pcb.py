"""PCB-Merging (Du et al., NeurIPS 2024, "Parameter Competition Balancing for Model Merging").

Each task vector's entries are scored by how much they matter to their own task (intra-balancing) and how much the
other tasks agree with them (inter-balancing); each task keeps its top ``ratio`` of scores, and the kept entries are
averaged with the scores as weights. As the official vision code computes it, over the whole model flattened into
one row per task (D entries), with N tasks:

1. Winsorise: A_i = |τ_i| clipped to its 1st and 99th percentiles over the model (order statistics ⌊0.01·D⌋ and
   ⌊0.99·D − 1⌋), τ̃_i = sign(τ_i)·A_i; Â_i = (A_i − min A_i)/(max A_i − min A_i).
2. intra_i = exp(N·Â_i²); inter_i = tanh(τ_i ⊙ Σ_j sign(τ_j)·Â_j)   (raw τ_i; j runs over every task, i included)
3. β_i = intra_i ⊙ inter_i; q_i = its ⌊(1 − ratio)·D⌋-th order statistic, M_i its maximum;
   s_i = (clip(β_i, q_i, M_i) − q_i)/(M_i − q_i): zero at or below q_i, in (0, 1] above.
4. τ_M = Σ_i τ̃_i ⊙ s_i / max(Σ_i s_i, 1e-12),   θ = θ₀ + α·τ_M

The reference puts α (its λ, 1.2 for ViT-B/32 × 8) inside the weighted mean, which with one λ for every task is the
same. The global quantities (percentiles, q_i, M_i) are found by streaming order statistics, so no model-sized
buffer is held; intra_i is computed as exp(N·(Â_i² − 1)), a per-task constant factor that cancels in step 3 and
keeps exp finite for any N (the reference's float32 exp overflows from N = 89). Guards the reference lacks: a
constant row (an all-zero task vector) gets Â = 0 and s = 0 instead of 0/0.
"""

from __future__ import annotations

import math

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import ModelView, Rule, walk_merge
from .ties import task_slices, global_order_statistics, magnitudes

CLIP = 0.01  # the winsorising fraction at each end (reference vision code)
TINY = 1e-12


def check_pcb_params(ratio: float) -> None:
    if not 0.0 < ratio <= 1.0:
        raise MethodError(f"pcb: ratio must be in (0, 1], got {ratio}")


def _normalised(magnitude: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """Â = (clip(|τ|, low, high) − low)/(high − low) per task row; ``magnitude`` has the task as its first axis."""
    shape = (-1,) + (1,) * (magnitude.dim() - 1)
    low, high = low.view(shape), high.view(shape)
    clipped = torch.minimum(torch.maximum(magnitude, low), high)
    return clipped, (clipped - low) / (high - low).clamp(min=TINY)


def _scores(stacked: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(τ̃, β) for the tasks' entries of one slice, stacked on the first axis."""
    clipped, normalised = _normalised(stacked.abs(), low, high)
    n = stacked.shape[0]
    intra = torch.exp(n * (normalised.square() - 1))
    inter = torch.tanh(stacked * (torch.sign(stacked) * normalised).sum(0, keepdim=True))
    return torch.sign(stacked) * clipped, intra * inter


def pcb_prepare(view: ModelView, *, ratio: float = 0.05) -> dict:
    """The per-task global quantities: the winsorising bounds of |τ_t| and the drop threshold and maximum of β_t."""
    check_pcb_params(ratio)
    keys = view.float_keys()
    total = sum(math.prod(view.base.shape(key)) for key in keys)
    T, device = view.T, view.device

    def at(index: int) -> torch.Tensor:  # the index-th smallest (0-based) per task
        return torch.full((T,), min(max(index, 0), total - 1) + 1)

    def absolute():
        return magnitudes(view, keys)

    low = global_order_statistics(absolute, T, at(int(total * CLIP)), device)
    high = global_order_statistics(absolute, T, at(int(total * (1 - CLIP) - 1)), device)
    high = torch.maximum(high, low)
    maximum = torch.full((T,), -math.inf, device=device)

    def scores():
        for key in keys:
            for part in task_slices(view.deltas(key)):
                _, beta = _scores(torch.stack([p.float() for p in part]), low, high)
                for t in range(T):
                    maximum[t] = torch.maximum(maximum[t], beta[t].max())
                    yield t, beta[t]

    drop = global_order_statistics(scores, T, at(int(total * (1 - ratio))), device)
    return {"low": low, "high": high, "drop": drop, "top": maximum}


def pcb_kernel(deltas: list[torch.Tensor], *, low: torch.Tensor, high: torch.Tensor, drop: torch.Tensor,
               top: torch.Tensor, ratio: float = 0.05) -> torch.Tensor:
    """τ_M of one tensor, given the global quantities of ``pcb_prepare``."""
    stacked = torch.stack(deltas)
    dtype = stacked.dtype
    clipped, beta = _scores(stacked.float(), low, high)
    shape = (-1,) + (1,) * (beta.dim() - 1)
    q, m = drop.view(shape), top.view(shape)
    weights = (torch.minimum(torch.maximum(beta, q), m) - q) / (m - q).clamp(min=TINY)
    merged = (clipped * weights).sum(0) / weights.sum(0).clamp(min=TINY)
    return merged.to(dtype)


RULE = Rule(matrix=None, fallback=pcb_kernel, prepare=pcb_prepare)


# Defaults: the official vision setting for ViT-B/32 × 8 (ratio 0.05, λ = 1.2 for every task).
@register("pcb", paper="https://arxiv.org/abs/2410.02396",
          help={"ratio": "fraction of each task's entries kept, by balanced score over the whole model",
                "scale": "global coefficient α (the reference's λ, the same for every task): θ = θ₀ + α·τ_merged"})
def pcb(base, experts, *, ratio: float = 0.05, scale: float = 1.2, walk=None, stream=False):
    """PCB-Merging: score entries by intra- and inter-task balance, keep each task's top ones, weighted mean."""
    check_pcb_params(ratio)
    return walk_merge(base, experts, RULE, params={"ratio": ratio}, scale=scale, walk=walk, stream=stream)
