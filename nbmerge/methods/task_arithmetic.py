"""Task Arithmetic (Ilharco et al., ICLR 2023)."""

from __future__ import annotations

from ..engine.registry import register
from ..engine.walker import Rule, walk_merge

RULE = Rule(matrix=None, fallback="sum")


# Default α = 0.3 is FusionBench's (config/method/task_arithmetic.yaml); the TSV/ISO protocol instead picks
# α from {0.1, ..., 3.0} on validation (docs/methods.md, α grid), which the notebooks do.
@register("task_arithmetic", paper="https://arxiv.org/abs/2212.04089",
          help={"scale": "global coefficient α: θ = θ₀ + α·Σ_t τ_t"})
def task_arithmetic(base, experts, *, scale: float = 0.3, walk=None, stream=False):
    """Task Arithmetic: add the scaled sum of task vectors to the pretrained weights."""
    return walk_merge(base, experts, RULE, params={}, scale=scale, walk=walk, stream=stream)
