"""The comparison protocol behind every claim: α linear in every method, the trial cache, paired intervals, verdicts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import nbmerge
from nbmerge.evaluate import protocol
from nbmerge.tune import alpha_tuning
from nbmerge.errors import NbmergeError
from nbmerge.evaluate.trialcache import TrialCache
from nbmerge.evaluate.protocol import Predictions

# ------------------------------------------------------------------------------------- α is a global multiplier

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


# ----------------------------------------------------------------------------------------------- trial cache

from tests.fakes import FakeEvaluator, FakeZoo  # noqa: E402


def test_cache_hits_skip_the_merge_and_survive_a_new_process(tmp_path):
    zoo = FakeZoo(tmp_path / "suite-x")
    evaluator = FakeEvaluator()
    cache = TrialCache(zoo, evaluator, tmp_path / "trials")
    made = []

    def make():
        made.append(1)
        return {"shift": 2.0}

    first = cache.predictions({"method": "m", "scale": 1.0}, "test", make)
    again = cache.predictions({"method": "m", "scale": 1.0}, "test", make)
    assert len(made) == 1 and cache.hits == 1 and again is first
    fresh = TrialCache(zoo, FakeEvaluator(), tmp_path / "trials")
    reread = fresh.predictions({"method": "m", "scale": 1.0}, "test", make)
    assert len(made) == 1 and fresh.evaluator.calls == 0
    for task in first.tasks:
        np.testing.assert_array_equal(reread.logits[task], first.logits[task])
    # another recipe, split or validation subset is another entry
    cache.predictions({"method": "m", "scale": 2.0}, "test", make)
    cache.predictions({"method": "m", "scale": 1.0}, "val", make)
    evaluator.subset = [100, 0]
    cache.predictions({"method": "m", "scale": 1.0}, "val", make)
    assert len(made) == 4


def test_a_corrupt_cache_entry_is_recomputed(tmp_path):
    zoo = FakeZoo(tmp_path / "suite-x")
    cache = TrialCache(zoo, FakeEvaluator(), tmp_path / "trials")
    cache.predictions({"r": 1}, "test", lambda: {"shift": 1.0})
    (entry,) = cache.root.glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:40])
    messages = []
    fresh = TrialCache(zoo, FakeEvaluator(), tmp_path / "trials", log=messages.append)
    preds = fresh.predictions({"r": 1}, "test", lambda: {"shift": 1.0})
    assert fresh.misses == 1 and messages and preds.mean_accuracy() > 0


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


def test_val_subset_is_seeded_and_leaves_test_whole(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    zoo = load_zoo("micro", micro_cache)
    evaluator = zoo.evaluator("cpu")
    full_val = {t: len(evaluator._inputs[(t, "val")][1]) for t in zoo.tasks}
    full_test = {t: len(evaluator._inputs[(t, "test")][1]) for t in zoo.tasks}
    evaluator.use_val_subset(20, seed=3)
    first = {t: evaluator._inputs[(t, "val")][1].clone() for t in zoo.tasks}
    assert all(len(v) == 20 for v in first.values())
    assert {t: len(evaluator._inputs[(t, "test")][1]) for t in zoo.tasks} == full_test
    assert evaluator.subset_spec("val") == [20, 3] and evaluator.subset_spec("test") is None
    evaluator.use_val_subset(0)
    assert {t: len(evaluator._inputs[(t, "val")][1]) for t in zoo.tasks} == full_val
    evaluator.use_val_subset(20, seed=3)
    for t in zoo.tasks:
        assert torch.equal(evaluator._inputs[(t, "val")][1], first[t])


# ------------------------------------------------------------------------------------------ paired intervals

def _preds(correct_a: dict[str, np.ndarray], classes: int = 4, seed: int = 0) -> Predictions:
    """Predictions whose argmax is right exactly where ``correct_a`` says."""
    rng = np.random.default_rng(seed)
    logits, labels = {}, {}
    for task, correct in correct_a.items():
        y = rng.integers(0, classes, len(correct))
        z = rng.normal(size=(len(correct), classes)).astype(np.float32)
        wrong = (y + 1) % classes
        z[np.arange(len(y)), np.where(correct, y, wrong)] += 10
        logits[task], labels[task] = z, y
    return Predictions(logits, labels)


def test_paired_difference_identical_models_is_zero_with_full_agreement():
    c = {"a": np.arange(200) % 3 == 0, "b": np.arange(300) % 2 == 0}
    a = _preds(c)
    interval = protocol.paired_difference(a, a)
    assert interval.diff == 0 and interval.low == 0 and interval.high == 0 and interval.agreement == 1


def test_compare_held_contradicted_and_not_tested():
    """A beats B through verdicts.compare (one seed): held above 0, contradicted below; at chance or collapsed,
    not tested whatever the interval says; normalisation by the experts' accuracy scales the difference."""
    from nbmerge.evaluate import verdicts

    n = 400
    rng = np.random.default_rng(5)
    weak = {t: rng.random(n) < 0.5 for t in "ab"}
    strong = {t: weak[t] | (rng.random(n) < 0.4) for t in "ab"}  # right wherever weak is, and more
    a, b = _preds(strong), _preds(weak)
    decision = verdicts.compare([(a, b)], names=("strong", "weak"))
    assert decision.outcome == "held" and decision.interval[0] > 0
    assert verdicts.compare([(b, a)], names=("weak", "strong")).outcome == "contradicted"
    plain = protocol.paired_difference(a, b)
    scaled = protocol.paired_difference(a, b, expert={"a": 0.5, "b": 0.5})
    assert scaled.diff == pytest.approx(2 * plain.diff)
    chance = _preds({t: rng.random(n) < 0.25 for t in "ab"})
    verdict = verdicts.compare([(a, chance)], names=("strong", "chance"))
    assert verdict.outcome == "not tested" and "chance" in verdict.why
    c = {"a": rng.random(1000) < 0.7}
    flipped = {"a": c["a"].copy()}
    flipped["a"][0] = not flipped["a"][0]
    verdict = verdicts.compare([(_preds(flipped), _preds(c))])
    assert verdict.outcome == "not tested" and "collapsed" in verdict.why


def test_equivalence_needs_the_whole_interval_inside_the_margin():
    from nbmerge.evaluate import verdicts

    rng = np.random.default_rng(7)
    base = {t: rng.random(3000) < 0.7 for t in "ab"}
    near = {t: base[t].copy() for t in "ab"}
    for t in "ab":  # as many right answers lost as gained: difference 0, an interval of a few tenths of a point
        right, wrong = np.flatnonzero(base[t]), np.flatnonzero(~base[t])
        near[t][rng.choice(right, 30, replace=False)] = False
        near[t][rng.choice(wrong, 30, replace=False)] = True
    a, b = _preds(near, seed=1), _preds(base, seed=1)
    assert verdicts.compare([(a, b)], threshold=[-3.0, 3.0]).outcome == "held"
    assert verdicts.compare([(a, b)], threshold=[-0.1, 0.1]).outcome == "inconclusive"
    far = {t: base[t] & (rng.random(3000) < 0.7) for t in "ab"}
    assert verdicts.compare([(_preds(far, seed=1), b)], threshold=[-1.0, 1.0]).outcome == "contradicted"


def test_spread():
    assert protocol.spread([1.0, 2.0, 3.0]).startswith("2.00 ± 1.00 (1.00–3.00, 3 seeds)")


def test_summary_temperature_changes_calibration_not_accuracy():
    rng = np.random.default_rng(2)
    p = _preds({"a": rng.random(500) < 0.6})
    cold, warm = p.summary(temperature=1.0), p.summary(temperature=20.0)
    assert cold["accuracy"] == warm["accuracy"]
    assert cold["ece"] != warm["ece"]
