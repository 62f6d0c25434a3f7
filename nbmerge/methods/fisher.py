"""Fisher-weighted averaging (Matena & Raffel, NeurIPS 2022), diagonal Fisher."""

from __future__ import annotations

import torch

from ..errors import NumericalError
from ..engine.registry import register
from ..engine.walker import ModelView, Rule, mean_kernel, walk_merge


def fisher_prepare(view: ModelView, *, normalize: bool = True, min_weight: float = 1e-6) -> dict:
    """Per-model coefficients: 1/‖F_t‖ over the whole model when ``normalize`` (FusionBench's default)."""
    sources = view.stats.get("fishers")
    if sources is None:
        return {"coefficients": None}
    norms = torch.zeros(view.T, dtype=torch.float64)
    for key in sources[0].keys():
        for t, fisher in enumerate(view.stat("fishers", key)):
            if (fisher < 0).any():
                raise NumericalError(f"{sources[t].name}: Fisher for {key!r} has negative entries")
            norms[t] += fisher.double().square().sum().cpu()
    norms = norms.sqrt()
    if normalize and (norms == 0).any():
        raise NumericalError("a Fisher file is all zeros: cannot normalise it")
    coefficients = 1.0 / norms if normalize else torch.ones(view.T, dtype=torch.float64)
    return {"coefficients": coefficients}


def fisher_kernel(deltas: list[torch.Tensor], *, fishers: list[torch.Tensor] | None = None,
                  coefficients: torch.Tensor | None = None, min_weight: float = 1e-6) -> torch.Tensor:
    """τ_M = Σ_t c_t (F_t + m) τ_t / Σ_t c_t (F_t + m), elementwise; the plain mean where no Fisher is given."""
    if fishers is None:
        return mean_kernel(deltas)
    weights = [c.to(d.dtype).item() * (f + min_weight) for c, f, d in zip(coefficients, fishers, deltas)]
    return sum(w * d for w, d in zip(weights, deltas)) / sum(weights)


RULE = Rule(matrix=None, fallback=fisher_kernel, prepare=fisher_prepare)


@register("fisher", paper="https://arxiv.org/abs/2111.09832", needs=("fishers",),
          help={"normalize": "scale each model's Fisher by 1/‖F_t‖ over the whole model (FusionBench default)",
                "min_weight": "added to every Fisher entry so that no weight is zero (FusionBench 1e-6)",
                "scale": "global coefficient α on every tensor (1 reproduces Fisher averaging)"})
def fisher(base, experts, *, fishers, normalize: bool = True, min_weight: float = 1e-6, scale: float = 1.0,
           walk=None, stream=False):
    """Fisher merging: parameter-wise average of the experts weighted by their diagonal Fisher information."""
    return walk_merge(base, experts, RULE, params={"normalize": normalize, "min_weight": min_weight},
                      scale=scale, walk=walk, stream=stream, fishers=fishers)
