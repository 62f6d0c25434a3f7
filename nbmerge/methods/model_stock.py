"""Model Stock (Jang et al., ECCV 2024, "Model Stock: All we need is just a few fine-tuned models").

Fine-tuned weights lie on a thin shell around their centre; the merge moves from the base towards the experts'
average by a ratio fixed by the angle between the task vectors, tensor by tensor:

    cos θ = mean over pairs i < j of ⟨τ_i, τ_j⟩ / max(‖τ_i‖·‖τ_j‖, 1e-6)   (each clamped to [−1, 1])
    t = k·cos θ / (1 + (k − 1)·cos θ)         (t = 0 where |1 + (k − 1)·cos θ| < 1e-6)
    θ = θ₀ + α·t·τ̄,                           τ̄ = (1/k)·Σ_i τ_i

as mergekit 0.1.5 computes it: the cosine over the whole flattened tensor, or with ``filter_wise`` one per row
(along the last dimension; a 1-D tensor is one row), and t not clamped. It needs at least two experts.
"""

from __future__ import annotations

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, mean_kernel, walk_merge

EPS, DENOMINATOR_EPS = 1e-6, 1e-6


def interpolation_ratio(deltas: list[torch.Tensor], filter_wise: bool = False) -> torch.Tensor:
    """t per tensor (a 0-d tensor) or per row (``filter_wise``: shape of the tensor without its last dimension)."""
    k = len(deltas)
    if k < 2:
        raise MethodError(f"model_stock: needs at least 2 experts, got {k}")
    if filter_wise:
        rows = [d.reshape(1, -1) if d.dim() <= 1 else d for d in deltas]
    else:
        rows = [d.reshape(-1) for d in deltas]
    norms = [r.norm(dim=-1) for r in rows]
    total, pairs = torch.zeros_like(norms[0]), 0
    for i in range(k):
        for j in range(i + 1, k):
            cos = (rows[i] * rows[j]).sum(-1) / (norms[i] * norms[j]).clamp(min=EPS)
            total += cos.clamp(-1.0, 1.0)
            pairs += 1
    cos = total / pairs
    denominator = 1 + (k - 1) * cos
    safe = denominator.abs() >= DENOMINATOR_EPS
    return torch.where(safe, k * cos / torch.where(safe, denominator, torch.ones_like(denominator)),
                       torch.zeros_like(cos))


def model_stock_kernel(deltas: list[torch.Tensor], *, filter_wise: bool = False) -> torch.Tensor:
    ratio = interpolation_ratio(deltas, filter_wise)
    mean = mean_kernel(deltas)
    if filter_wise and mean.dim() > 1:
        return mean * ratio.unsqueeze(-1)
    return mean * ratio.reshape(())


def model_stock_prepare(view, *, filter_wise: bool = False) -> dict:
    if view.T < 2:
        raise MethodError(f"model_stock: needs at least 2 experts, got {view.T}")
    return {}


RULE = Rule(matrix=None, fallback=model_stock_kernel, prepare=model_stock_prepare)


# Defaults: mergekit's (one ratio per tensor, filter_wise off), α = 1 (Model Stock has no outer coefficient).
@register("model_stock", paper="https://arxiv.org/abs/2403.19522",
          help={"filter_wise": "one interpolation ratio per row (along the last dimension) instead of per tensor",
                "scale": "global coefficient α: θ = θ₀ + α·t·τ̄ (Model Stock itself: 1)"})
def model_stock(base, experts, *, filter_wise: bool = False, scale: float = 1.0, walk=None, stream=False):
    """Model Stock: move from the base towards the experts' average by a ratio set by their angle."""
    return walk_merge(base, experts, RULE, params={"filter_wise": filter_wise}, scale=scale, walk=walk,
                      stream=stream)
