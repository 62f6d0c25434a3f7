"""BMM's posterior (nbmerge.tune.bmm_posterior): draws through the trial cache on fakes (seeded per draw, cached,
scaled by the temperature), the log-space ensemble, the choice of temperature, and on the `micro` zoo the Gram token
count and a zero-temperature draw that is the point estimate."""

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.fakes import FakeEvaluator as SharedFakeEvaluator
from tests.fakes import _preds

from nbmerge.evaluate import protocol
from nbmerge.errors import NbmergeError
from nbmerge.evaluate.trialcache import TrialCache
from nbmerge.tune import bmm_posterior


# ------------------------------------------------------------------------------------- fakes for the sampling loop

class FakeSolver:
    """One "module" whose weights are the logits themselves: a draw adds σ·N(0, 1) noise from the generator."""

    def __init__(self, logits: torch.Tensor):
        self.logits = logits
        self.modules = {"w": None}
        self.draws = 0

    def merged(self, lambdas, scale=1.0):
        return {"logits": self.logits.clone()}

    def sampled(self, lambdas, variances, generator, scale=1.0):
        self.draws += 1
        noise = torch.randn(self.logits.shape, generator=generator, dtype=self.logits.dtype)
        return {"logits": self.logits + math.sqrt(variances["w"]) * noise}


class FakeEvaluator(SharedFakeEvaluator):
    """One task whose 'model' is its logits."""

    task_names = ["a"]

    def __init__(self, labels: torch.Tensor):
        super().__init__(len(labels))
        self.labels = labels

    def logits(self, task, split):
        return self.state["logits"], self.labels


def _fake(n=200, classes=5, seed=0):
    generator = torch.Generator().manual_seed(seed)
    logits = 3 * torch.randn(n, classes, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, classes, (n,), generator=generator)
    solver = FakeSolver(logits)
    tuning = SimpleNamespace(recipe={"method": "fake"}, lambdas={}, scale=1.0, build_solver=lambda: solver)
    cache = TrialCache(SimpleNamespace(root=Path("fake-zoo")), FakeEvaluator(labels))
    return solver, tuning, cache


def test_posterior_draws_are_seeded_per_draw_cached_and_scaled():
    solver, tuning, cache = _fake()
    noise = {"w": 2.0}
    draws = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 0.5, 3, seed=7, split="val")
    assert solver.draws == 3
    # draw i: logits + sqrt(0.5·2)·Z_i with Z_i from the (seed, i) generator alone
    for i, draw in enumerate(draws):
        z = torch.randn(solver.logits.shape, generator=bmm_posterior.draw_generator(7, i), dtype=torch.float64)
        assert np.allclose(draw.logits["a"], (solver.logits + z).float().numpy(), atol=1e-5)
    # a longer run reuses the cached draws and computes only the new one
    more = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 0.5, 4, seed=7, split="val")
    assert solver.draws == 4 and all(np.array_equal(a.logits["a"], b.logits["a"]) for a, b in zip(draws, more))
    # the same standard-normal draws at another temperature: the deviations scale by sqrt(τ ratio)
    wider = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 2.0, 1, seed=7, split="val")[0]
    base = solver.logits.float().numpy()
    assert np.allclose(wider.logits["a"] - base, 2 * (draws[0].logits["a"] - base), atol=1e-4)
    other = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 0.5, 1, seed=8, split="val")[0]
    assert not np.array_equal(other.logits["a"], draws[0].logits["a"])
    cold = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 0.0, 2, seed=7, split="val")
    assert all(np.allclose(c.logits["a"], base) for c in cold)
    with pytest.raises(NbmergeError, match="temperature"):
        bmm_posterior.posterior_draws(cache, tuning, lambda: noise, -1.0, 2, seed=0, split="val")
    # σ̂² given as a mapping (the notebook's way) makes the same draws on a fresh cache
    _, same_tuning, fresh = _fake()
    mapped = bmm_posterior.posterior_draws(fresh, same_tuning, noise, 0.5, 3, seed=7, split="val")
    assert all(np.array_equal(a.logits["a"], b.logits["a"]) for a, b in zip(draws, mapped))


def test_ensemble_averages_probabilities_in_log_space():
    generator = np.random.default_rng(0)
    labels = {"a": generator.integers(0, 4, 50)}
    draws = [_preds({"a": 3 * generator.standard_normal((50, 4))}, labels) for _ in range(3)]
    mixed = bmm_posterior.ensemble(draws)
    expected = np.mean([d.probs("a") for d in draws], axis=0)
    assert np.allclose(mixed.probs("a"), expected, atol=1e-5)
    assert mixed.extra["members"] == [d.mean_accuracy() for d in draws]
    # a confident miss does not underflow: log p̄ of the missed class stays finite
    far = bmm_posterior.ensemble([_preds({"a": [[800.0, -800.0]]}, {"a": [1]})] * 2)
    assert far.logits["a"][0].tolist() == pytest.approx([0.0, -1600.0], rel=1e-6)


def test_select_temperature_keeps_accuracy_first():
    rows = [{"temperature": 1.0, "eligible": True, "nll_scaled": 0.9},
            {"temperature": 10.0, "eligible": True, "nll_scaled": 0.8},
            {"temperature": 100.0, "eligible": False, "nll_scaled": 0.5}]
    chosen = bmm_posterior.select_temperature(rows)
    assert chosen["temperature"] == 10.0 and chosen["eligible_count"] == 2
    none = [{**r, "eligible": False} for r in rows]
    assert bmm_posterior.select_temperature(none)["temperature"] == 100.0
    with pytest.raises(NbmergeError, match="no posterior temperature"):
        bmm_posterior.select_temperature([])


# ------------------------------------------------------------------------------------------- on the micro zoo

@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    return load_zoo("micro", micro_cache)


def test_gram_tokens_count_what_collect_grams_saw(micro):
    from nbmerge.pools.zoo import load_models
    from nbmerge.pools.zoo import collect_grams

    base, _ = load_models(micro)
    seen = collect_grams(micro, base, 10, tasks=micro.tasks[:1])[micro.tasks[0]]["tokens"]
    assert seen == 10 * (micro.arch.image_size // micro.arch.patch_size) ** 2 + 10
    assert bmm_posterior.gram_tokens(micro, 10) == len(micro.tasks) * seen


def test_real_posterior_at_zero_temperature_is_the_point_estimate(micro):
    from nbmerge.pools.zoo import expert_grams, load_models
    from nbmerge.methods.bmm import run_anchor
    from nbmerge.solvers.bmm import BMMSolver

    base, experts = load_models(micro)
    grams = expert_grams(micro, 16, 0)
    solver = BMMSolver(base, experts, run_anchor(base, experts, "task_arithmetic", {"scale": 0.3}), grams,
                       gram="data")
    lambdas = {group: -1.0 for group in solver.group_names()}
    tuning = SimpleNamespace(recipe={"method": "test"}, lambdas=lambdas, scale=1.0, build_solver=lambda: solver)
    cache = TrialCache(micro, micro.evaluator(), root=None)
    noise = solver.noise_variance(lambdas, tokens=bmm_posterior.gram_tokens(micro, 16))
    assert all(v > 0 for v in noise.values())
    point = protocol.evaluate_predictions(cache.evaluator, solver.merged(lambdas), "val")
    cold = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 0.0, 2, seed=0, split="val")
    warm = bmm_posterior.posterior_draws(cache, tuning, lambda: noise, 1e4, 1, seed=0, split="val")
    for task in micro.tasks:
        assert np.allclose(cold[0].logits[task], point.logits[task], atol=1e-4)
    assert not np.allclose(warm[0].logits[micro.tasks[0]], point.logits[micro.tasks[0]], atol=1e-3)
