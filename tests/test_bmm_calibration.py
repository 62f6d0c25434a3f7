"""BMM claims B5a/B5b and B6/B6s (notebooks 21_bmm_calibration and 22_bmm_datafree): posterior draws through the trial
cache on fakes (nbmerge.tune.bmm_posterior), temperature scaling and the ECE-difference bootstrap
(nbmerge.evaluate.calibration), the four outcomes on synthetic predictions (held, contradicted, inconclusive, not
tested) (nbmerge.experiments.bmm_calibration, bmm_datafree), and both notebooks' steps end to end on the `micro` zoo
with the configs their parameters cells declare (a second run recomputes nothing)."""

import math
import time
from dataclasses import MISSING, fields
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.fakes import FakeEvaluator as SharedFakeEvaluator

from nbmerge.evaluate import protocol
from nbmerge.tune import alpha_tuning
from nbmerge.evaluate import calibration
from nbmerge.evaluate.diagnostics import alignment_summary, gram_alignment_vs_chance, ratio_interval
from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_calibration, bmm_datafree, bmm_figures
from nbmerge.evaluate.metrics import expected_calibration_error
from nbmerge.params import build_config, notebook_config
from nbmerge.evaluate.trialcache import TrialCache
from nbmerge.evaluate.protocol import Predictions
from nbmerge.tune import bmm_posterior, study

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CALIBRATION_NB = NOTEBOOKS / "21_bmm_calibration.ipynb"
DATAFREE_NB = NOTEBOOKS / "22_bmm_datafree.ipynb"

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


def _preds(logits, labels, split="test"):
    return Predictions({t: np.asarray(v, dtype=np.float32) for t, v in logits.items()},
                       {t: np.asarray(v) for t, v in labels.items()}, split)


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


def test_temperature_scaling_recovers_a_known_temperature_and_keeps_accuracy():
    rng = np.random.default_rng(1)
    z = 4 * rng.standard_normal((20000, 5))
    # labels drawn from softmax(z / 2): the calibrated temperature of logits z is 2
    p = np.exp(z / 2 - (z / 2).max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = np.array([rng.choice(5, p=row) for row in p])
    preds = _preds({"a": z, "b": z / 2}, {"a": y, "b": y})
    temps = calibration.fit_temperature(preds)
    assert temps["a"] == pytest.approx(2.0, rel=0.05) and temps["b"] == pytest.approx(1.0, rel=0.05)
    scaled = calibration.rescaled(preds, temps)
    assert scaled.accuracy() == preds.accuracy()
    assert scaled.summary()["nll"] < preds.summary()["nll"]
    assert scaled.summary()["ece"] < 0.02 < preds.summary()["ece"]


def _calibrated_and_overconfident(n=3000, seed=0):
    """Two models with the same predictions: one calibrated, one whose confidences are pushed towards 1."""
    rng = np.random.default_rng(seed)
    z = 2 * rng.standard_normal((n, 3))
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in p])
    return _preds({"a": z}, {"a": y}), _preds({"a": 4 * z}, {"a": y})


def test_ece_difference_matches_the_metric_and_resolves_a_real_gap():
    calibrated, overconfident = _calibrated_and_overconfident()
    d = calibration.ece_difference(calibrated, overconfident, n_boot=500)
    ece = {name: expected_calibration_error(torch.from_numpy(p.probs("a")), torch.from_numpy(p.labels["a"]))
           for name, p in (("c", calibrated), ("o", overconfident))}
    assert d["a"] == pytest.approx(ece["c"], abs=1e-9) and d["b"] == pytest.approx(ece["o"], abs=1e-9)
    assert d["diff"] == pytest.approx(ece["c"] - ece["o"], abs=1e-9)
    assert d["low"] <= d["diff"] <= d["high"] < 0
    same = calibration.ece_difference(calibrated, calibrated, n_boot=200)
    assert same["diff"] == same["low"] == same["high"] == 0
    other = _preds({"a": calibrated.logits["a"]}, {"a": (calibrated.labels["a"] + 1) % 3})
    with pytest.raises(NbmergeError, match="different examples"):
        calibration.ece_difference(calibrated, other)


def test_reliability_bins_reproduce_the_ece():
    calibrated, overconfident = _calibrated_and_overconfident(n=400)
    data = calibration.reliability(overconfident)
    assert sum(data["count"]) == 400 and len(data["edges"]) == 16 and data["examples"] == 400
    assert data["ece"] == pytest.approx(expected_calibration_error(
        torch.from_numpy(overconfident.probs("a")), torch.from_numpy(overconfident.labels["a"])), abs=1e-9)
    # the perfectly calibrated synthetic predictor: correct with probability equal to its confidence
    rng = np.random.default_rng(0)
    confidence = 0.5 + 0.5 * rng.random(200_000)
    correct = rng.random(200_000) < confidence
    logits = np.log(np.stack([confidence, 1 - confidence], -1))
    perfect = _preds({"a": logits}, {"a": np.where(correct, 0, 1)})
    assert calibration.reliability(perfect)["ece"] < 0.01


# ---------------------------------------------------------------------------------------- verdicts

def _task_preds(correct_mask, labels, classes=4, confidence=3.0):
    """Logits that predict the label where ``correct_mask`` and the next class elsewhere."""
    predicted = np.where(correct_mask, labels, (labels + 1) % classes)
    logits = np.zeros((len(labels), classes))
    logits[np.arange(len(labels)), predicted] = confidence
    return logits


def _models(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    base = rng.random(n) < 0.70
    return rng, labels, base


def test_compare_sources_describes_one_seed_and_names_vacuous_units():
    rng, labels, anchor_mask = _models()
    expert = {"a": 0.9}

    def model(mask):
        return _preds({"a": _task_preds(mask, labels)}, {"a": labels})

    anchor = model(anchor_mask)
    improved = anchor_mask | (rng.random(len(labels)) < 0.3)
    unit = bmm_datafree.compare_sources(model(improved), model(improved), anchor, expert)
    assert unit["why"] is None and unit["free_vs_anchor"]["low"] > 0 and unit["gap"]["diff"] == 0
    assert "held" not in unit
    collapsed = bmm_datafree.compare_sources(anchor, anchor, anchor, expert)
    assert "collapsed onto the anchor" in collapsed["why"]
    chance = model(rng.random(len(labels)) < 0.25)
    assert "chance" in bmm_datafree.compare_sources(chance, chance, anchor, expert)["why"]


def _source_study(pairs, anchor_preds, margin=2.0, edges=False):
    """A SourceStudy of synthetic (data, free) test predictions, one pair per seed, on one anchor."""
    study = bmm_datafree.SourceStudy("s", ["a"], {"a": 0.9}, margin)
    anchor = SimpleNamespace(name="task_arithmetic", alpha=0.5, test=anchor_preds, tuned=SimpleNamespace(curve=[]))
    bounds = {"attn_in": (-4.0, 2.0), "scale": (0.5, 1.5)}
    for seed, (data, free) in enumerate(pairs):
        for gram, preds in (("data", data), ("free", free)):
            best = {"attn_in": -4.0 if edges and gram == "data" else -1.0, "scale": 1.5 if edges else 1.0}
            search = SimpleNamespace(best_params=best, replayed=0, space=SimpleNamespace(bounds=bounds))
            tuning = SimpleNamespace(val_accuracy=0.7, test_predictions=preds, test_accuracy=preds.mean_accuracy(),
                                     search=search)
            study.add(anchor, gram, seed, tuning, seconds=0.0)
        study.decide("task_arithmetic", seed)
    return study


def test_equivalence_decision_over_seeds_and_examples():
    rng, labels, anchor_mask = _models(n=3000)

    def model(mask):
        return _preds({"a": _task_preds(mask, labels)}, {"a": labels})

    anchor = model(anchor_mask)
    pairs, far, noisy = [], [], []
    for _ in range(3):
        improved = anchor_mask | (rng.random(len(labels)) < 0.3)
        other = improved.copy()
        flip = np.concatenate([rng.choice(np.flatnonzero(improved), 20, replace=False),
                               rng.choice(np.flatnonzero(~improved), 20, replace=False)])
        other[flip] = ~other[flip]                       # ±0 points, 1.3% of examples differ
        pairs.append((model(improved), model(other)))
        far.append((model(improved), anchor))            # data-free ~8 points behind
        shaky = improved.copy()
        pick = rng.choice(len(labels), 900, replace=False)
        shaky[pick] = rng.random(900) < 0.79            # as good on average, 10% of examples differ
        noisy.append((model(improved), model(shaky)))
    held, _ = bmm_datafree.equivalence_decision(_source_study(pairs, anchor))
    assert held.outcome == "held" and held.threshold == [-2.0, 2.0] and held.effect == bmm_datafree.PAPER_GAP
    contradicted, _ = bmm_datafree.equivalence_decision(_source_study(far, anchor))
    assert contradicted.outcome == "contradicted" and contradicted.interval[1] < -2.0
    unsure, _ = bmm_datafree.equivalence_decision(_source_study(noisy, anchor, margin=0.5))
    assert unsure.outcome == "inconclusive" and unsure.mde is not None
    vacuous, left_out = bmm_datafree.equivalence_decision(_source_study([(anchor, anchor)] * 2, anchor))
    assert vacuous.outcome == "not tested" and len(left_out) == 2 and "collapsed" in vacuous.why
    # a seed left out is named, the others still decide
    mixed, left_out = bmm_datafree.equivalence_decision(_source_study([(anchor, anchor)] + pairs[1:], anchor))
    assert mixed.outcome == "held" and left_out[0].startswith("task_arithmetic seed 0")
    # claims: B5a with the interval and the box edge said beside it, B5b from the alignment rows
    study = _source_study(pairs, anchor, edges=True)
    b5a, b5b = bmm_datafree.datafree_claims(study, [_aligned() for _ in range(10)], seed=0)
    assert (b5a.id, b5b.id) == ("B5a", "B5b") and b5a.verdict == "held" and b5a.decision.reading == "paper"
    assert "box" in b5a.evidence and "scale = 1.5 (upper bound 1.5)" in b5a.evidence
    assert "attn_in = -4 (lower bound -4)" in b5a.evidence
    assert "did not hold" not in b5a.evidence + b5b.evidence
    rows = bmm_datafree.source_rows(study)
    assert len(rows) == 3 * 3 and rows[1]["box edge"].startswith("attn_in = -4")
    assert bmm_figures.plot_sources(study).axes
    assert bmm_datafree.datafree_claims(None, [])[0].verdict == "not tested"


def test_box_edges_read_the_best_trial_against_the_bounds():
    search = SimpleNamespace(best_params={"a": -4.0, "b": 0.3, "scale": 1.4995},
                             space=SimpleNamespace(bounds={"a": (-4.0, 2.0), "b": (-4.0, 2.0), "scale": (0.5, 1.5)}))
    edges = bmm_datafree.box_edges(search)
    assert [(e["param"], e["side"]) for e in edges] == [("a", "lower"), ("scale", "upper")]
    assert bmm_datafree.box_edges(SimpleNamespace(best_params={"b": 0.0}, space=search.space)) == []


def test_conjunction_of_parts():
    from nbmerge.evaluate import verdicts

    held = verdicts.decide(1.0, interval=[0.5, 1.5], threshold=0.0)
    unsure = verdicts.decide(0.2, interval=[-0.5, 0.9], threshold=0.0)
    against = verdicts.decide(-1.0, interval=[-1.5, -0.5], threshold=0.0)
    untested = verdicts.not_tested("no eligible τ")
    combine = bmm_calibration.conjunction
    assert combine({"a": held, "b": held}).outcome == "held"
    assert combine({"a": held, "b": unsure}).outcome == "inconclusive"
    both = combine({"a": unsure, "b": against}, "strict")
    assert both.outcome == "contradicted" and both.interval == [-1.5, -0.5] and both.reading == "strict"
    assert combine({"a": held, "b": untested}).outcome == "not tested"
    assert combine({"a": against, "b": untested}).outcome == "contradicted"


def _seed_run(seed, point, sampled, why=None, eligible=True):
    decision = bmm_calibration.calibration_decision(point, sampled, point, sampled, {"a": 0.8}, eligible=eligible)
    if why:
        decision["why"] = why
    temperatures = {"a": 1.0}
    return bmm_calibration.PosteriorRun(seed, {}, {}, [{}, {}], {"temperature": 10.0,
                                                                  "eligible_count": 2 if eligible else 0},
                                        point, point, sampled, sampled, temperatures, temperatures, decision)


def test_calibration_decision_describes_a_seed():
    calibrated, overconfident = _calibrated_and_overconfident()
    one = bmm_calibration.calibration_decision(overconfident, calibrated, overconfident, calibrated, {"a": 0.8})
    assert one["why"] is None and one["ece_raw"]["high"] < 0 and one["accuracy"]["diff"] == 0 and "held" not in one
    same = bmm_calibration.calibration_decision(calibrated, calibrated, calibrated, calibrated, {"a": 0.8})
    assert "posterior temperature is too small" in same["why"]
    unfit = bmm_calibration.calibration_decision(overconfident, calibrated, overconfident, calibrated, {"a": 0.8},
                                                 eligible=False)
    assert "no eligible setting" in unfit["why"]


def _calibration_study(runs):
    return bmm_calibration.CalibrationStudy("s", ["a"], {"a": 0.8}, "task_arithmetic", 1.0, {0: 0.5}, runs)


def test_calibration_claims_decide_over_seeds_and_examples():
    seeds = [_calibrated_and_overconfident(seed=0)]
    labels = seeds[0][0].labels
    rng = np.random.default_rng(3)
    pairs = []
    for seed in range(3):   # the same test examples at every seed, a different "model" each time
        z = seeds[0][0].logits["a"] + 0.1 * rng.standard_normal(seeds[0][0].logits["a"].shape)
        pairs.append((_preds({"a": 4 * z}, labels), _preds({"a": z}, labels)))   # (overconfident, calibrated)
    # sampling = the calibrated model, the point estimate overconfident: both rows held
    study = _calibration_study([_seed_run(s, point, sampled) for s, (point, sampled) in enumerate(pairs)])
    b6, b6s = bmm_calibration.calibration_claims(study)
    assert (b6.id, b6s.id) == ("B6", "B6s") and b6.verdict == b6s.verdict == "held"
    assert (b6.decision.reading, b6s.decision.reading) == ("paper", "strict") and b6.decision.p is not None
    assert "ECE reduction at T = 1" in b6.evidence and "3 search seeds" in b6.evidence
    # the other way round: sampling makes it worse, contradicted
    worse = _calibration_study([_seed_run(s, sampled, point) for s, (point, sampled) in enumerate(pairs)])
    assert [c.verdict for c in bmm_calibration.calibration_claims(worse)] == ["contradicted", "contradicted"]
    # a lower ECE bought with accuracy: contradicted by the accuracy part
    point, sampled = pairs[0]
    broken = _preds({"a": np.where((np.arange(len(labels["a"])) % 4 == 0)[:, None], 0.0, sampled.logits["a"] / 3)},
                    labels)
    lost = bmm_calibration.calibration_verdicts(_calibration_study([_seed_run(0, point, broken)]))
    assert lost["parts"]["accuracy"].outcome == "contradicted" and lost["B6"].outcome == "contradicted"
    # a barely different ensemble on few examples: inconclusive
    small = {"a": labels["a"][:300]}
    z = pairs[0][1].logits["a"][:300]
    nudged = _calibration_study([_seed_run(0, _preds({"a": z}, small), _preds({"a": 1.03 * z}, small))])
    assert bmm_calibration.calibration_verdicts(nudged)["parts"]["ece_raw"].outcome == "inconclusive"
    # no eligible τ at any seed: not tested, never "did not hold"
    none = _calibration_study([_seed_run(s, point, sampled, eligible=False) for s, (point, sampled) in
                               enumerate(pairs)])
    b6, b6s = bmm_calibration.calibration_claims(none)
    assert b6.verdict == b6s.verdict == "not tested" and "no eligible setting" in b6.evidence
    # one seed left out: named, the others decide
    part = _calibration_study([_seed_run(0, *pairs[0], eligible=False)]
                              + [_seed_run(s, point, sampled) for s, (point, sampled) in enumerate(pairs) if s])
    found = bmm_calibration.calibration_verdicts(part)
    assert found["seeds"] == [1, 2] and found["left_out"][0].startswith("seed 0") and found["B6"].outcome == "held"
    assert bmm_figures.plot_calibration_verdicts(found).axes
    assert all(c.verdict == "not tested" for c in bmm_calibration.calibration_claims(None))
    for c in bmm_calibration.calibration_claims(study) + bmm_calibration.calibration_claims(none):
        assert "did not hold" not in c.evidence


def test_ece_difference_samples_pool_seeds_and_examples():
    calibrated, overconfident = _calibrated_and_overconfident(n=1500)
    single = calibration.ece_difference(overconfident, calibrated, n_boot=500)
    point, samples, n = calibration.ece_difference_samples([(overconfident, calibrated)] * 2, n_boot=500)
    assert n == 1500 and point == pytest.approx(100 * single["diff"], abs=1e-9)
    assert np.quantile(samples, 0.025) > 0 and samples.shape == (500,)


def _aligned(cosine=0.5, overlap=0.4, chance_cosine=0.1, chance=0.1):
    return {"module_type": "mlp_in", "depth": 0, "cosine": cosine, "chance_cosine": chance_cosine,
            "overlap": overlap, "chance": chance, "cosine_ratio": cosine / chance_cosine,
            "overlap_ratio": overlap / chance}


def test_theorem_claim_uses_an_interval_over_modules():
    rows = [_aligned(0.3 + 0.01 * i, 0.2 + 0.01 * i) for i in range(20)]
    c = bmm_datafree.theorem_claim(rows, "s")
    assert c.verdict == "held" and c.id == "B5b" and "Theorem 1" in c.claim and c.decision.threshold == 1.0
    below = [_aligned(0.05 + 0.001 * i, 0.3) for i in range(20)]          # cosine under its baseline everywhere
    assert bmm_datafree.theorem_claim(below, "s").verdict == "contradicted"
    mixed = [_aligned(0.05, 0.05) if i % 2 else _aligned() for i in range(20)]   # medians straddle 1
    assert bmm_datafree.theorem_claim(mixed, "s").verdict == "inconclusive"
    assert bmm_datafree.theorem_claim([], "s").verdict == "not tested"
    interval = ratio_interval(rows, "overlap_ratio")
    assert interval["low"] <= interval["median"] <= interval["high"] and interval["above"] == 20


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


def _calibration(**overrides):
    return notebook_config(bmm_calibration.CalibrationConfig, CALIBRATION_NB, **overrides)


def _datafree(**overrides):
    return notebook_config(bmm_datafree.DatafreeConfig, DATAFREE_NB, **overrides)


def test_configs_come_from_the_notebooks_and_are_validated():
    for cls in (bmm_calibration.CalibrationConfig, bmm_datafree.DatafreeConfig):
        assert all(f.default is MISSING and f.default_factory is MISSING for f in fields(cls)), cls
    with pytest.raises(NbmergeError, match="no value for"):   # the notebook declares every value, none is implied
        build_config(bmm_calibration.CalibrationConfig, {"suite": "text8"})
    assert _datafree().suite == _calibration().suite == "text8"
    assert _datafree(anchors=["ties"], seeds=[0, 1, 2]).anchors == ("ties",)
    assert _calibration(temperatures=[1, 10]).temperatures == (1.0, 10.0)
    with pytest.raises(NbmergeError, match="parameter 'seed'"):
        _calibration(seed="0")
    with pytest.raises(NbmergeError, match="seeds"):
        _calibration(seeds=[0, 0])
    with pytest.raises(NbmergeError, match="samples"):
        _calibration(samples=1)
    with pytest.raises(NbmergeError, match="temperatures"):
        _calibration(temperatures=[0.0, 1.0])
    with pytest.raises(NbmergeError, match="k_fraction"):
        _datafree(k_fraction=0.0)
    with pytest.raises(NbmergeError, match="budget"):
        _datafree(budget=0)
    with pytest.raises(NbmergeError, match="n_initial"):
        _datafree(n_initial=21)
    with pytest.raises(NbmergeError, match="needs data Grams"):
        _datafree(anchors=["regmean"])
    with pytest.raises(NbmergeError, match="margin"):
        _datafree(margin=0.0)
    with pytest.raises(NbmergeError, match="declares no parameter"):
        _calibration(anchors=["ties"])


@pytest.mark.parametrize("path, config_class", [(CALIBRATION_NB, bmm_calibration.CalibrationConfig),
                                                (DATAFREE_NB, bmm_datafree.DatafreeConfig)],
                         ids=["21_bmm_calibration", "22_bmm_datafree"])
def test_the_parameters_cell_declares_the_config_and_every_layer_builds_one(path, config_class):
    import yaml

    from nbmerge.params import notebook_parameters
    from nbmerge.report.pipeline import resolve_parameters

    declared = notebook_parameters(path)
    # checkpoints / data_root are read by prepare_suites (importing a clip-... pool), not by the config
    assert set(declared) - {"checkpoints", "data_root"} == {f.name for f in fields(config_class)}
    for smoke in (False, True):
        resolved = resolve_parameters([path], NOTEBOOKS / "parameters", smoke, {})[path.stem]
        notebook_config(config_class, path, **resolved)
    assert resolved["suite"] == "micro"
    layers = {}
    for profile in ("default", "paper"):
        layers.update(yaml.safe_load((NOTEBOOKS / "parameters" / f"{profile}.yaml").read_text())[path.stem])
    notebook_config(config_class, path, **layers)
    source = path.read_text()
    assert f"from nbmerge.experiments import {path.stem[3:]}" in source and " as bc" not in source
    for outside in ("BRIEF.md", "METHODS.md", "ZOO_NOTES.md", "tiny ViT"):
        assert outside not in source


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


def _alignment(config, cache, zoo):
    """Notebook 22, section 1: the per-module alignment, kept beside the trial cache."""
    def measure():
        from nbmerge.pools.zoo import expert_grams, load_models

        base, experts = load_models(zoo)
        grams = expert_grams(zoo, config.gram_examples, config.seed)
        return gram_alignment_vs_chance(base, experts, grams, config.k_fraction, config.device)

    return study.stored(cache.root, "bmm-alignment", bmm_datafree.alignment_key(config), measure, cache.log)


def _labs(config):
    return bmm_calibration.seed_labs(config.suite, config.seeds, cache=config.cache, device=config.device,
                                     val_examples=config.val_examples)


def _micro_source_study(config, labs):
    """Notebook 22, section 2: per anchor and seed (its own validation subset), BMM with both Gram sources."""
    first = labs[config.seeds[0]]
    sources = bmm_datafree.SourceStudy(first.suite, list(first.zoo.tasks), first.expert, config.margin,
                                       seed=config.seed)
    for anchor in config.anchors:
        for seed, lab in labs.items():
            tuned = study.tune_anchor(lab, anchor, gram_examples=config.gram_examples, gram_seed=config.seed,
                                      device=config.device)
            for variant in ("data", "free"):
                start = time.perf_counter()
                tuning = study.run_search(lab, tuned, variant, strategy=config.strategy, seed=seed,
                                          budget=config.budget, n_initial=config.n_initial, with_scale=True,
                                          gram_examples=config.gram_examples, gram_seed=config.seed,
                                          device=config.device)
                sources.add(tuned, variant, seed, tuning, seconds=time.perf_counter() - start)
            sources.decide(anchor, seed)
    return sources


def test_datafree_notebook_logic_on_micro(micro_cache):
    config = _datafree(suite="micro", seeds=[0, 1], smoke=True, budget=2, n_initial=1, val_examples=20,
                       gram_examples=16, cache=str(micro_cache))
    labs = _labs(config)
    assert labs[0].cache.evaluator.subset_spec("val") != labs[1].cache.evaluator.subset_spec("val")
    zoo = labs[0].zoo
    rows = _alignment(config, labs[0].cache, zoo)
    assert len(rows) == 16 and {r["module_type"] for r in rows} == {"attn_in", "attn_out", "mlp_in", "mlp_out"}
    assert all(0 <= r["overlap"] <= 1 + 1e-9 and r["chance_cosine"] > 0 for r in rows)
    assert alignment_summary(rows)[-1]["module_type"] == "all"
    study = _micro_source_study(config, labs)
    assert len(study.runs) == 4 and [d["seed"] for d in study.decisions["task_arithmetic"]] == [0, 1]
    assert all(info["alpha"] in alpha_tuning.SCALE_GRID for info in study.anchors["task_arithmetic"].values())
    assert all(isinstance(r.summary["edges"], list) for r in study.runs)
    # the logs live under the trial cache, never in the working folder
    assert len(list((labs[0].cache.root / "bmm-logs").glob("task_arithmetic-*-seed*.jsonl"))) >= 4
    table = bmm_datafree.source_rows(study)
    assert len(table) == 2 * 3 and table[0]["Grams"].startswith("anchor alone")
    claims = bmm_datafree.datafree_claims(study, rows, seed=config.seed)
    assert [c.id for c in claims] == ["B5a", "B5b"] and all("BRIEF" not in c.source for c in claims)
    assert claims[0].suite == "micro" and claims[0].verdict in ("held", "contradicted", "inconclusive", "not tested")
    assert math.isfinite(bmm_datafree.datafree_headline(study)["value"]) or claims[0].verdict == "not tested"
    assert bmm_datafree.study_metrics(study)["verdict"]["outcome"] == claims[0].verdict
    for fig in (bmm_figures.plot_alignment(rows), bmm_figures.plot_sources(study)):
        assert fig.axes
    # a second run recomputes nothing: the alignment is stored, the logs replay, every prediction is a cache hit
    again = _labs(config)
    stored = _alignment(config, again[0].cache, zoo)
    assert [r["key"] for r in stored] == [r["key"] for r in rows]
    assert [r["overlap"] for r in stored] == pytest.approx([r["overlap"] for r in rows])
    second = _micro_source_study(config, again)
    assert all(lab.cache.misses == 0 for lab in again.values()) and all(r.summary["replayed"] == 2
                                                                         for r in second.runs)
    assert second.decisions == study.decisions


def _micro_calibration_study(config, labs):
    """Notebook 21's steps: per seed α, the search, σ̂², the validation sweep over τ, the chosen τ on test."""
    first = labs[config.seeds[0]]
    tuned = {seed: study.tune_anchor(lab, config.anchor, gram_examples=config.gram_examples,
                                     gram_seed=config.seed, device=config.device) for seed, lab in labs.items()}
    cal_study = bmm_calibration.CalibrationStudy(first.suite, list(first.zoo.tasks), first.expert, config.anchor,
                                                 config.margin, alphas={s: a.alpha for s, a in tuned.items()})
    tunings = {seed: study.run_search(lab, tuned[seed], "data", strategy=config.strategy, seed=seed,
                                      budget=config.budget, n_initial=config.n_initial, with_scale=True,
                                      gram_examples=config.gram_examples, gram_seed=config.seed,
                                      device=config.device)
               for seed, lab in labs.items()}
    noise = {seed: bmm_posterior.posterior_noise(labs[seed].cache, first.zoo, tuning)
             for seed, tuning in tunings.items()}
    val_draws, sweeps, chosen = {}, {}, {}
    for seed, tuning in tunings.items():
        val_draws[seed] = {tau: bmm_posterior.posterior_draws(labs[seed].cache, tuning, noise[seed], tau,
                                                              config.samples, seed, "val")
                           for tau in config.temperatures}
        sweeps[seed] = [bmm_posterior.sweep_row(tau, draws, tuning.val_predictions, config.margin)
                        for tau, draws in val_draws[seed].items()]
        chosen[seed] = bmm_posterior.select_temperature(sweeps[seed])
    for seed, tuning in tunings.items():
        tau = chosen[seed]["temperature"]
        sampled_val = bmm_posterior.ensemble(val_draws[seed][tau])
        sampled_test = bmm_posterior.ensemble(bmm_posterior.posterior_draws(labs[seed].cache, tuning, noise[seed],
                                                                            tau, config.samples, seed, "test"))
        point_temps = calibration.fit_temperature(tuning.val_predictions)
        sampled_temps = calibration.fit_temperature(sampled_val)
        decision = bmm_calibration.calibration_decision(
            tuning.test_predictions, sampled_test, calibration.rescaled(tuning.test_predictions, point_temps),
            calibration.rescaled(sampled_test, sampled_temps), cal_study.expert, config.margin, seed=seed,
            eligible=chosen[seed]["eligible_count"] > 0)
        cal_study.runs.append(bmm_calibration.PosteriorRun(
            seed, bmm_calibration.tuning_summary(tuning), noise[seed], sweeps[seed], chosen[seed],
            tuning.val_predictions, tuning.test_predictions, sampled_val, sampled_test, point_temps, sampled_temps,
            decision))
    return cal_study, sweeps, chosen, tunings


def test_calibration_notebook_logic_on_micro(micro_cache):
    config = _calibration(suite="micro", seeds=[0, 1], smoke=True, budget=2, n_initial=1, val_examples=20,
                          gram_examples=16, samples=2, temperatures=[1.0, 10.0, 3000.0], cache=str(micro_cache))
    labs = _labs(config)
    study, sweeps, chosen, tunings = _micro_calibration_study(config, labs)
    run = study.runs[0]
    assert [r["temperature"] for r in run.sweep] == [1.0, 10.0, 3000.0]
    assert run.chosen["temperature"] in (1.0, 10.0, 3000.0) and run.chosen["eligible_count"] >= 1
    assert len(run.sampled_test.extra["members"]) == 2 and set(run.point_temperatures) == set(labs[0].zoo.tasks)
    assert all(v > 0 for v in run.noise.values()) and "held" not in run.decision
    sweep = bmm_calibration.sweep_table(sweeps, chosen, tunings)
    assert len(sweep) == 6 and sum(r["chosen"] for r in sweep) == 2
    rows = bmm_calibration.seed_rows(study)
    assert rows[0]["seed"] == 0 and rows[0]["acc point"] == pytest.approx(run.tuning["test_accuracy"])
    assert [r["task"] for r in bmm_calibration.task_rows(run, study.expert)] == [*labs[0].zoo.tasks, "mean"]
    assert {r["module_type"] for r in bmm_calibration.noise_summary(run.noise)} <= {"attn_in", "attn_out", "mlp_in",
                                                                                     "mlp_out"}
    b6, b6s = bmm_calibration.calibration_claims(study)
    assert (b6.id, b6s.id) == ("B6", "B6s") and b6.suite == "micro"
    metrics = bmm_calibration.calibration_metrics(study)
    assert metrics["seeds"][0]["reliability"]["point"]["examples"] == sum(len(run.point_test.labels[t])
                                                                          for t in labs[0].zoo.tasks)
    assert metrics["verdicts"]["B6"]["outcome"] == b6.verdict
    found = bmm_calibration.calibration_verdicts(study)
    for fig in (bmm_figures.plot_temperature(run, config.margin), bmm_figures.plot_reliability(run),
                bmm_figures.plot_calibration_verdicts(found)):
        assert fig.axes
    # warm: nothing is evaluated again, the noise is read back, the solver is never built
    again = _labs(config)
    second, *_ = _micro_calibration_study(config, again)
    assert all(lab.cache.misses == 0 for lab in again.values()) and second.runs[0].decision == run.decision


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
