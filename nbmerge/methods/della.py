"""DELLA-Merging (Deep et al., 2024, arXiv 2406.11617): drop task-vector entries with a probability that falls with
their magnitude rank (MagPrune), rescale, then elect signs and merge as TIES does.

Per tensor and expert, as mergekit 0.1.5's ``della`` / ``della_linear`` compute it (docs/methods.md, section 19):

    rank r of |τ_t| along dimension 1 (a 1-D tensor is one row), r̂ = (r − 1)/(n − 1) ∈ [0, 1]
    keep probability p = (density − ε) + 2ε·r̂         (the smallest entry density − ε, the largest density + ε)
    m ~ Bernoulli(p);  τ̃_t = m ⊙ τ_t · ‖τ_t‖₁ / ‖m ⊙ τ_t‖₁    (``rescale``; skipped where either norm is < 1e-7)

then ``merge=ties``: signs elected from Σ_t τ̃_t (+ where ≥ 0), the disjoint mean of the agreeing entries
(mergekit ``della``); ``merge=sum``: Σ_t τ̃_t (``della_linear``). θ = θ₀ + α·τ_M.

The masks of one tensor come from one CPU generator seeded from (``seed``, key) and are drawn expert by expert, so
they do not depend on the order tensors are visited or on the device; seeding torch's global generator with
:func:`tensor_seed` before mergekit's call on that tensor draws the same masks.
"""

from __future__ import annotations

import zlib

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge

RESCALE_EPS = 1e-7  # mergekit's: below it an L1 norm is treated as zero and the rescale is skipped


def tensor_seed(seed: int, key: str) -> int:
    """The seed of one tensor's masks."""
    return zlib.crc32(f"della/{seed}/{key}".encode())


def check_della_params(density: float, epsilon: float) -> None:
    if not 0.0 < density < 1.0:
        raise MethodError(f"della: density must be in (0, 1), got {density}")
    if not 0.0 <= epsilon or not (0.0 < density - epsilon and density + epsilon < 1.0):
        raise MethodError(f"della: density ± epsilon must lie in (0, 1), got density {density}, epsilon {epsilon}")


def magprune(delta: torch.Tensor, *, density: float, epsilon: float, rescale: bool,
             generator: torch.Generator) -> torch.Tensor:
    """One expert's τ̃: entries kept with a probability rising linearly with their magnitude rank along dimension 1
    (a 1-D tensor is one row; a row of one entry is kept with probability ``density``), L1-rescaled."""
    rows = delta.unsqueeze(0) if delta.dim() < 2 else delta
    n = rows.shape[1]
    ranks = rows.abs().argsort(dim=1).argsort(dim=1).to(torch.float32) + 1
    fraction = ((ranks - 1) / (n - 1)).clamp(0, 1) if n > 1 else torch.zeros_like(ranks)
    probability = (density - epsilon) + fraction * 2 * epsilon if n > 1 else torch.full_like(ranks, density)
    keep = torch.bernoulli(probability.cpu(), generator=generator).to(device=delta.device, dtype=rows.dtype)
    kept = rows * keep
    if rescale:
        before, after = rows.abs().sum(), kept.abs().sum()
        if before >= RESCALE_EPS and after >= RESCALE_EPS:
            kept = kept * (before / after)
    return kept.reshape(delta.shape)


def della_kernel(deltas: list[torch.Tensor], *, key: str, density: float = 0.5, epsilon: float = 0.15,
                 rescale: bool = True, merge: str = "ties", seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(tensor_seed(seed, key))
    pruned = [magprune(d, density=density, epsilon=epsilon, rescale=rescale, generator=generator) for d in deltas]
    total = sum_kernel(pruned)
    if merge == "sum":
        return total
    sign = torch.where(total >= 0, 1.0, -1.0).to(total.dtype)
    agree = [torch.sign(d) == sign for d in pruned]
    merged = sum_kernel([d * a for d, a in zip(pruned, agree)])
    count = sum_kernel([a.to(total.dtype) for a in agree])
    return merged / torch.where(count == 0, torch.ones_like(count), count)


def della_prepare(view, *, density: float = 0.5, epsilon: float = 0.15, merge: str = "ties") -> dict:
    check_della_params(density, epsilon)
    if merge not in ("ties", "sum"):
        raise MethodError(f"della: merge must be 'ties' (mergekit della) or 'sum' (della_linear), got {merge!r}")
    return {}


RULE = Rule(matrix=None, fallback=della_kernel, prepare=della_prepare)


# Defaults: mergekit's ε = 0.15, rescale on, TIES sign election (``della``), λ = α = 1; density 0.5 (mergekit's
# default, 1, keeps every entry and is TIES without trimming).
@register("della", paper="https://arxiv.org/abs/2406.11617",
          help={"density": "mean keep probability of a task-vector entry (in (0, 1))",
                "epsilon": "half-width of the keep probabilities: density − ε for the smallest entry of a row, "
                           "density + ε for the largest",
                "rescale": "rescale each pruned task vector to its L1 norm before pruning",
                "merge": "ties (sign election, disjoint mean: mergekit della) | sum (mergekit della_linear)",
                "seed": "seed of the drop masks",
                "scale": "global coefficient α (mergekit's lambda): θ = θ₀ + α·τ_merged"})
def della(base, experts, *, density: float = 0.5, epsilon: float = 0.15, rescale: bool = True, merge: str = "ties",
          seed: int = 0, scale: float = 1.0, walk=None, stream=False):
    """DELLA: MagPrune (drop with probability falling with magnitude rank), rescale, then sign election."""
    return walk_merge(base, experts, RULE, params={"density": density, "epsilon": epsilon, "rescale": rescale,
                                                   "merge": merge, "seed": seed}, scale=scale, walk=walk,
                      stream=stream)
