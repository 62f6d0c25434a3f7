"""TSV-Merge (Gargiulo et al., CVPR 2025): task singular vectors, decorrelated by orthogonal Procrustes."""

from __future__ import annotations

import torch

from ..engine.linalg import polar_factor, top_singular
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge


def tsv_matrix(deltas: list[torch.Tensor]) -> torch.Tensor:
    """Merge one matrix: keep each task's top ⌊r/T⌋ singular triplets, orthogonalise the stacked bases.

    τ_t = U_t S_t V_tᵀ; Û = [U_1[:, :k] | ... | U_T[:, :k]], likewise Ŝ and V̂ᵀ; τ_M = polar(Û) diag(Ŝ) polar(V̂ᵀ).
    """
    T = len(deltas)
    rows, cols = deltas[0].shape
    r = min(rows, cols)
    # The reference computes int(r * (1/T)) in floating point; for r ≤ 4096 and T ≤ 20 it equals r // T.
    k = int(r * (1.0 / T))
    if k == 0:  # more tasks than the rank: one direction per task cannot fit; the reference returns zero
        return torch.zeros_like(deltas[0])
    left_blocks, values, right_blocks = [], [], []
    for delta in deltas:
        u, s, vh = top_singular(delta, k)
        left_blocks.append(u)
        values.append(s)
        right_blocks.append(vh)
    # Columns past T·k stay zero in the reference; they are multiplied by zero singular values there, so
    # dropping them leaves the product unchanged.
    left = polar_factor(torch.cat(left_blocks, dim=1))
    right = polar_factor(torch.cat(right_blocks, dim=0))
    return (left * torch.cat(values)) @ right


RULE = Rule(matrix=tsv_matrix, fallback="mean")


@register("tsv", paper="https://arxiv.org/abs/2412.00081",
          help={"scale": "global coefficient α on every tensor (FusionBench TSVM default 1.0)"})
def tsv(base, experts, *, scale: float = 1.0, walk=None, stream=False):
    """TSV-Merge: low-rank task singular vectors, whitened across tasks to remove interference."""
    return walk_merge(base, experts, RULE, params={}, scale=scale, walk=walk, stream=stream)
