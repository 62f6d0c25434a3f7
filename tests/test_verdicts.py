"""The four outcomes (nbmerge.evaluate.verdicts): held / contradicted / inconclusive from one interval against the
claim's threshold, not tested with a reason; the seeds × examples bootstrap; Holm across claims; claims that refuse a
bare boolean; the index's check that an outcome follows from its numbers."""

from __future__ import annotations

import numpy as np
import pytest

from nbmerge.evaluate import verdicts
from nbmerge.evaluate.claims import claim
from nbmerge.errors import NbmergeError
from nbmerge.evaluate.protocol import Predictions
from nbmerge.report.html import claim_rows
from nbmerge.report.pipeline import check_claim


@pytest.mark.parametrize("interval, threshold, effect, outcome", [
    ([0.5, 3.0], 0.0, None, "held"),
    ([-0.42, 1.82], 0.0, 4.3, "contradicted"),      # T1: excludes the paper's gap
    ([-1.84, 2.62], 0.0, 2.0, "inconclusive"),     # contains 0 and the paper's effect
    ([-0.0, 4.31], 0.0, 1.6, "inconclusive"),
    ([-3.0, -0.5], 0.0, None, "contradicted"),
    ([-1.0, 1.0], [-2.0, 2.0], None, "held"),
    ([3.2, 8.7], [-2.0, 2.0], None, "contradicted"),
    ([-1.0, 3.0], [-2.0, 2.0], None, "inconclusive"),
])
def test_outcome_from_interval_and_threshold(interval, threshold, effect, outcome):
    d = verdicts.decide(float(np.mean(interval)), interval=interval, threshold=threshold, effect=effect, n=2400)
    assert d.outcome == outcome
    record = {"id": "X1", "verdict": d.outcome, "evidence": d.text(), **d.to_dict()}
    assert check_claim(record) is None
    if outcome == "inconclusive":
        assert d.mde > 0 and "detects effects" in d.text()
        assert d.n_needed is None or d.n_needed > 2400


def test_check_claim_catches_an_outcome_that_does_not_follow():
    d = verdicts.decide(1.0, interval=[-0.5, 2.5], threshold=0.0, effect=1.0)
    record = {"id": "X1", "verdict": "held", **d.to_dict(), "outcome": "held"}
    assert "does not follow" in check_claim(record)


def test_minimum_detectable_effect_and_examples_needed():
    se = 1.0
    assert verdicts.minimum_detectable(se) == pytest.approx(1.96 + 0.8416, abs=1e-3)
    # an interval of half-width 1.96·se around 0.5, paper's effect 1: the MDE is 2.8, a quarter of the noise
    # (16× the examples) brings it to 0.7; to 1.0 needs (2.8/1)² ≈ 7.85× the examples
    d = verdicts.decide(0.5, interval=[0.5 - 1.96, 0.5 + 1.96], threshold=0.0, effect=1.0, n=1000)
    assert d.outcome == "inconclusive" and d.mde == pytest.approx(2.8, abs=0.01)
    assert d.n_needed == pytest.approx(1000 * 2.8 ** 2, rel=0.01)


def test_hierarchical_bootstrap_has_seed_noise_in_it():
    rng = np.random.default_rng(0)
    n = 400
    # the same example noise, seeds that disagree a lot: the interval must be wider than with agreeing seeds
    base = rng.normal(0, 1, n)
    agreeing = [{"t": base + 0.1} for _ in range(3)]
    disagreeing = [{"t": base + shift} for shift in (-2.0, 0.1, 2.2)]
    _, s1, n1 = verdicts.hierarchical_samples(agreeing, scale=1.0)
    point, s2, _ = verdicts.hierarchical_samples(disagreeing, scale=1.0)
    assert n1 == n and point == pytest.approx(base.mean() + 0.1, abs=1e-9)
    assert np.std(s2) > 5 * np.std(s1)
    with pytest.raises(NbmergeError, match="same tasks and examples"):
        verdicts.hierarchical_samples([{"t": base}, {"t": base[:10]}])


def _preds(correct: dict, classes: int = 4) -> Predictions:
    logits, labels = {}, {}
    for task, ok in correct.items():
        y = np.arange(len(ok)) % classes
        z = np.zeros((len(ok), classes), dtype=np.float32)
        z[np.arange(len(ok)), np.where(ok, y, (y + 1) % classes)] = 1.0
        logits[task], labels[task] = z, y
    return Predictions(logits, labels)


def test_compare_over_seeds_and_vacuous_seeds():
    rng = np.random.default_rng(1)
    pairs = []
    for _ in range(3):
        a = {t: rng.random(500) < 0.8 for t in ("x", "y")}
        b = {t: rng.random(500) < 0.6 for t in ("x", "y")}
        pairs.append((_preds(a), _preds(b)))
    d = verdicts.compare(pairs, threshold=0.0, effect=5.0)
    assert d.outcome == "held" and d.estimate == pytest.approx(20, abs=4)
    same = _preds({t: rng.random(500) < 0.7 for t in ("x", "y")})
    assert verdicts.compare([(same, same)]).outcome == "not tested"
    chance = _preds({t: np.zeros(500, bool) for t in ("x", "y")})
    assert "chance" in verdicts.compare([(chance, pairs[0][1])]).why


def test_holm_step_down():
    assert verdicts.holm([0.001, 0.03, None, 0.04]) == [True, False, None, False]   # 0.03 > 0.05/2
    assert verdicts.holm([0.001, 0.012, 0.04]) == [True, True, True]


def test_claims_refuse_a_bare_boolean_and_carry_the_numbers():
    with pytest.raises(NbmergeError, match="Decision"):
        claim("A beats B", "paper", True, "ev", id="X1")
    d = verdicts.decide(2.0, interval=[1.0, 3.0], threshold=0.0, reading="strict")
    c = claim("A beats B", "paper", d, d.text(), id="X1s")
    record = c.to_dict()
    assert record["outcome"] == record["verdict"] == "held" and record["reading"] == "strict"
    assert record["interval"] == [1.0, 3.0] and record["threshold"] == 0.0
    nt = claim("needs GLUE", "paper", None, "not tested: no GLUE pool", id="A1").to_dict()
    assert nt["outcome"] == "not tested" and check_claim(nt) is None
    with pytest.raises(NbmergeError, match="outcome"):
        verdicts.Decision("did not hold")


def test_index_refuses_duplicate_ids_and_applies_holm():
    d1 = verdicts.decide(3.0, np.random.default_rng(0).normal(3.0, 0.5, 2000), threshold=0.0)
    d2 = verdicts.decide(0.2, np.random.default_rng(1).normal(0.2, 1.0, 2000), threshold=0.0)
    rows = [claim("a", "s", d1, "e", id="B1a").to_dict(), claim("b", "s", d2, "e", id="B1b").to_dict()]
    ordered = claim_rows({"reports": [{"name": "n", "claims": rows}]})
    assert [c["id"] for c, _ in ordered] == ["B1a", "B1b"]
    assert ordered[0][0]["holm"] is True and ordered[1][0]["holm"] is False
    with pytest.raises(NbmergeError, match="repeat"):
        claim_rows({"reports": [{"name": "n", "claims": rows}, {"name": "m", "claims": rows[:1]}]})


def test_evaluator_views_keep_their_own_validation_subsets():
    """Each seed's trial cache validates on its own subset: cutting one view's subset never moves another's (the zoo
    holds one evaluator; a shared one left every seed on the last subset cut)."""
    import torch

    from nbmerge.evaluate.evaluation import Evaluator

    ev = Evaluator.__new__(Evaluator)
    ev.task_names = ["a", "b"]
    ev._inputs = {(t, s): (torch.arange(100), torch.arange(100)) for t in ev.task_names for s in ("val", "test")}
    ev._full_val = {t: ev._inputs[(t, "val")] for t in ev.task_names}
    ev._val_subset = (0, 0)
    v0, v1 = ev.with_val_subset(10, 0), ev.with_val_subset(10, 1)
    picked0 = v0._inputs[("a", "val")][1].tolist()
    assert v0.subset_spec("val") == [10, 0] and v1.subset_spec("val") == [10, 1] and ev.subset_spec("val") is None
    assert picked0 != v1._inputs[("a", "val")][1].tolist() and len(picked0) == 10
    v1.use_val_subset(10, 2)
    assert v0._inputs[("a", "val")][1].tolist() == picked0 and len(ev._inputs[("a", "val")][1]) == 100
    assert v0._inputs[("a", "test")][1] is ev._inputs[("a", "test")][1]      # test inputs shared, never copied
