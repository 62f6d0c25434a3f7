"""Every method's α on one grid (nbmerge.tune.alpha_tuning): α is a global multiplier of every registered method,
so one merge at α = 1 serves the whole grid; the grid is walked through the trial cache, choosing on validation."""

from __future__ import annotations

import pytest
import torch

import nbmerge
from nbmerge.errors import NbmergeError
from nbmerge.evaluate.trialcache import TrialCache
from nbmerge.tune import alpha_tuning
from tests.fakes import FakeEvaluator, FakeZoo


@pytest.mark.parametrize("method,params", [
    ("task_arithmetic", {}), ("average", {}), ("ties", {}), ("dare", {}), ("tsv", {}), ("iso_c", {}),
    ("iso_cts", {}), ("ace", {}), ("wudi", {"iters": 5}), ("wudi_closed_form", {}),
    ("bmm", {"gram": "task_vector"}),
])
def test_every_method_is_linear_in_its_scale(tiny64, method, params):
    """tune_scale merges once at α = 1 and rescales: that is exact only if θ_α = θ₀ + α·(θ₁ − θ₀)."""
    base, experts = tiny64
    one = nbmerge.merge(method, base, experts, {**params, "scale": 1.0})
    for alpha in (0.3, 2.5):
        direct = nbmerge.merge(method, base, experts, {**params, "scale": alpha})
        rescaled = alpha_tuning.scaled(base, one, alpha)
        for key in base:
            assert torch.allclose(direct[key], rescaled[key], rtol=1e-9, atol=1e-12), (method, key, alpha)


def test_tune_scale_merges_once_and_chooses_on_validation(tmp_path):
    zoo = FakeZoo(tmp_path / "suite-x")
    cache = TrialCache(zoo, FakeEvaluator(), None)
    base = {"shift": torch.tensor(0.0)}
    calls = []

    def merge_fn():
        calls.append(1)
        return {"shift": torch.tensor(1.0)}

    tuned = alpha_tuning.tune_scale(cache, {"method": "m", "params": {}}, merge_fn, base, grid=(0.5, 1.0, 4.0))
    assert len(calls) == 1
    assert tuned.alpha == 4.0  # the largest shift separates the true class best
    assert [r["alpha"] for r in tuned.curve] == [0.5, 1.0, 4.0]
    with pytest.raises(NbmergeError, match="scale"):
        alpha_tuning.tune_scale(cache, {"method": "m", "params": {"scale": 1.0}}, merge_fn, base)
