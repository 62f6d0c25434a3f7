"""Simple weight averaging."""

from __future__ import annotations

from ..engine.registry import register
from ..engine.walker import Rule, walk_merge

RULE = Rule(matrix=None, fallback="mean")


@register("average", paper="https://arxiv.org/abs/2203.05482",
          help={"scale": "global coefficient α: θ = θ₀ + α·mean_t τ_t (1 gives the plain average of the experts)"})
def average(base, experts, *, scale: float = 1.0, walk=None, stream=False):
    """Simple averaging: θ = (1/T) Σ_t θ_t, i.e. task arithmetic with α = 1/T (Wortsman et al., model soups)."""
    return walk_merge(base, experts, RULE, params={}, scale=scale, walk=walk, stream=stream)
