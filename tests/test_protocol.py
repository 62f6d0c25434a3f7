"""The comparison protocol behind every claim (nbmerge.evaluate.protocol): predictions, paired intervals, verdicts."""

from __future__ import annotations

import numpy as np
import pytest

from nbmerge.evaluate import protocol
from nbmerge.evaluate.protocol import Predictions

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
