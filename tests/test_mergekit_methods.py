"""DELLA, SLERP and the Karcher mean (mergekit users' merges) against written-out references on toys."""

from __future__ import annotations

import math

import pytest
import torch

import nbmerge
from nbmerge.errors import MethodError
from nbmerge.methods.della import magprune, tensor_seed
from nbmerge.methods.karcher import karcher_vectors
from nbmerge.methods.slerp import slerp_vectors


def _toy(T: int = 3, seed: int = 0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    base = {"w": torch.randn(6, 10, generator=g, dtype=dtype), "b": torch.randn(10, generator=g, dtype=dtype),
            "col": torch.randn(5, 1, generator=g, dtype=dtype)}
    experts = [{k: v + 0.1 * torch.randn(v.shape, generator=g, dtype=dtype) for k, v in base.items()}
               for _ in range(T)]
    return base, experts


def _magprune_reference(delta, density, epsilon, rescale, generator):
    """MagPrune written out row by row: the i-th smallest |entry| of a row of n gets p = d − ε + 2ε·i/(n − 1)."""
    rows = delta.reshape(1, -1) if delta.dim() == 1 else delta
    probability = torch.empty_like(rows, dtype=torch.float32)
    for r in range(rows.shape[0]):
        order = sorted(range(rows.shape[1]), key=lambda j: abs(float(rows[r, j])))
        n = rows.shape[1]
        for i, j in enumerate(order):
            probability[r, j] = density if n == 1 else (density - epsilon) + (i / (n - 1)) * 2 * epsilon
    keep = torch.bernoulli(probability, generator=generator).to(rows.dtype)
    kept = rows * keep
    if rescale and float(kept.abs().sum()) >= 1e-7:
        kept = kept * (rows.abs().sum() / kept.abs().sum())
    return kept.reshape(delta.shape)


@pytest.mark.parametrize("rescale", [True, False])
def test_magprune_equals_the_row_by_row_reference(rescale):
    delta = torch.randn(4, 9, generator=torch.Generator().manual_seed(1))
    ours = magprune(delta, density=0.5, epsilon=0.2, rescale=rescale, generator=torch.Generator().manual_seed(7))
    reference = _magprune_reference(delta, 0.5, 0.2, rescale, torch.Generator().manual_seed(7))
    torch.testing.assert_close(ours, reference, rtol=1e-6, atol=0)
    if rescale:
        torch.testing.assert_close(ours.abs().sum(), delta.abs().sum())


def test_large_entries_survive_more_often_than_small_ones():
    delta = torch.arange(1, 101, dtype=torch.float32).repeat(400, 1)  # 400 rows of 1 … 100
    kept = magprune(delta, density=0.5, epsilon=0.3, rescale=False, generator=torch.Generator().manual_seed(0)) != 0
    rate = kept.float().mean(0)
    assert rate[:10].mean() == pytest.approx(0.2 + 0.6 * 4.5 / 99, abs=0.03)    # density − ε at the bottom
    assert rate[-10:].mean() == pytest.approx(0.8 - 0.6 * 4.5 / 99, abs=0.03)   # density + ε at the top
    assert rate.mean() == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("merge", ["ties", "sum"])
def test_della_equals_its_written_out_merge(merge):
    base, experts = _toy()
    merged = nbmerge.merge("della", base, experts, {"density": 0.6, "epsilon": 0.1, "merge": merge, "seed": 3,
                                                    "scale": 0.7})
    for key in base:
        g = torch.Generator().manual_seed(tensor_seed(3, key))
        pruned = [_magprune_reference(e[key] - base[key], 0.6, 0.1, True, g) for e in experts]
        total = sum(pruned)
        if merge == "ties":
            sign = torch.where(total >= 0, 1.0, -1.0)
            agree = [torch.sign(p) == sign for p in pruned]
            count = sum(a.float() for a in agree)
            tau = sum(p * a for p, a in zip(pruned, agree)) / torch.where(count == 0, 1.0, count)
        else:
            tau = total
        torch.testing.assert_close(merged[key], base[key] + 0.7 * tau, rtol=1e-5, atol=1e-6)


def test_della_masks_do_not_depend_on_which_tensors_are_merged():
    base, experts = _toy()
    whole = nbmerge.merge("della", base, experts, {"seed": 1})
    alone = nbmerge.merge("della", {"w": base["w"]}, [{"w": e["w"]} for e in experts], {"seed": 1})
    assert torch.equal(whole["w"], alone["w"])
    other = nbmerge.merge("della", base, experts, {"seed": 2})
    assert not torch.equal(whole["w"], other["w"])


@pytest.mark.parametrize("params", [{"density": 1.0}, {"density": 0.1, "epsilon": 0.15}, {"density": 0.9},
                                    {"merge": "mean"}])
def test_della_refuses_parameters_outside_its_range(params):
    base, experts = _toy()
    with pytest.raises(MethodError, match="della"):
        nbmerge.merge("della", base, experts, params)


def test_slerp_ends_and_midpoint():
    base, experts = _toy(T=1)
    at0 = nbmerge.merge("slerp", base, experts, {"t": 0.0})
    at1 = nbmerge.merge("slerp", base, experts, {"t": 1.0})
    for key in base:
        torch.testing.assert_close(at0[key], base[key])
        torch.testing.assert_close(at1[key], experts[0][key], rtol=1e-5, atol=1e-6)
    # orthogonal unit vectors: the midpoint of the arc, not of the chord
    a, b = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    torch.testing.assert_close(slerp_vectors(a, b, 0.5), torch.tensor([math.sqrt(0.5), math.sqrt(0.5)]))
    # nearly parallel: linear interpolation
    torch.testing.assert_close(slerp_vectors(a, 2 * a, 0.25), 1.25 * a)
    # written out: sin((1−t)Ω)/sin Ω · a + sin(tΩ)/sin Ω · b on the flattened tensors
    x, y = base["w"].double(), experts[0]["w"].double()
    omega = math.acos(float((x / x.norm() * (y / y.norm())).sum()))
    expected = math.sin(0.7 * omega) / math.sin(omega) * x + math.sin(0.3 * omega) / math.sin(omega) * y
    torch.testing.assert_close(slerp_vectors(x, y, 0.3), expected)


def test_slerp_takes_exactly_one_expert():
    base, experts = _toy(T=2)
    with pytest.raises(MethodError, match="exactly one expert"):
        nbmerge.merge("slerp", base, experts)


def test_karcher_mean_on_the_sphere():
    # two directions at 90°: the Karcher mean is the bisector, scaled by the mean norm
    a, b = torch.tensor([2.0, 0.0, 0.0]), torch.tensor([0.0, 4.0, 0.0])
    torch.testing.assert_close(karcher_vectors([a, b]), 3.0 * torch.tensor([1.0, 1.0, 0.0]) / math.sqrt(2))
    # three directions: the fixed point has a zero weighted tangent (the Riemannian first-order condition)
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(8, generator=g, dtype=torch.float64) for _ in range(3)]
    mean = karcher_vectors(xs, max_iter=100, tol=1e-12)
    mu = mean / mean.norm()
    tangent = torch.zeros_like(mu)
    for x in xs:
        u = x / x.norm()
        cos = float((mu * u).sum())
        omega = math.acos(cos)
        tangent += omega / math.sin(omega) * (u - cos * mu)
    assert float(tangent.norm()) < 1e-9
    torch.testing.assert_close(mean.norm(), sum(x.norm() for x in xs) / 3)
    # a zero input leaves the direction but counts in the mean norm (mergekit's rule)
    torch.testing.assert_close(karcher_vectors([a, torch.zeros(3)]), torch.tensor([1.0, 0.0, 0.0]))


def test_karcher_through_the_walker():
    base, experts = _toy()
    merged = nbmerge.merge("karcher", base, experts)
    for key in base:
        expected = karcher_vectors([base[key] + (e[key] - base[key]) for e in experts])
        torch.testing.assert_close(merged[key], expected, rtol=1e-5, atol=1e-6)
    single = nbmerge.merge("karcher", base, experts[:1])
    torch.testing.assert_close(single["w"], experts[0]["w"], rtol=1e-6, atol=1e-6)
