"""The Gram alignment diagnostics (nbmerge.evaluate.diagnostics): a module's alignment row, its chance cosine the mean
over random rotations of the experts' Gram."""

import pytest
import torch

from nbmerge.evaluate.diagnostics import gram_alignment_vs_chance


def test_alignment_chance_cosine_is_the_random_rotation_mean():
    key = "visual.transformer.resblocks.0.mlp.c_fc.weight"
    generator = torch.Generator().manual_seed(0)
    base = {key: torch.zeros(6, 5, dtype=torch.float64)}
    experts = [{key: torch.randn(6, 5, generator=generator, dtype=torch.float64)} for _ in range(2)]
    x = torch.randn(5, 40, generator=generator, dtype=torch.float64)
    grams = [{key: x @ x.T}, {key: 0.5 * x[:, :10] @ x[:, :10].T}]
    (row,) = gram_alignment_vs_chance(base, experts, grams, k_fraction=0.4)
    a = sum(g[key] for g in grams)
    b = sum(e[key].T @ e[key] for e in experts)
    cosines = []
    for _ in range(3000):
        q, _ = torch.linalg.qr(torch.randn(5, 5, generator=generator, dtype=torch.float64))
        rotated = q @ b @ q.T
        cosines.append(float((a * rotated).sum() / (a.norm() * rotated.norm())))
    assert row["chance_cosine"] == pytest.approx(sum(cosines) / len(cosines), rel=0.02)
    assert row["cosine"] == pytest.approx(float((a * b).sum() / (a.norm() * b.norm())))
    assert row["chance"] == pytest.approx(2 / 5) and row["overlap_ratio"] == pytest.approx(row["overlap"] / 0.4)
