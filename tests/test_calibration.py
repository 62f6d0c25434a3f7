"""Temperature scaling, the ECE-difference bootstrap and reliability bins (nbmerge.evaluate.calibration) on synthetic
predictions, checked against the metric (nbmerge.evaluate.metrics.expected_calibration_error)."""

import numpy as np
import pytest
import torch

from tests.fakes import _calibrated_and_overconfident, _preds

from nbmerge.evaluate import calibration
from nbmerge.errors import NbmergeError
from nbmerge.evaluate.metrics import expected_calibration_error


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


def test_ece_difference_samples_pool_seeds_and_examples():
    calibrated, overconfident = _calibrated_and_overconfident(n=1500)
    single = calibration.ece_difference(overconfident, calibrated, n_boot=500)
    point, samples, n = calibration.ece_difference_samples([(overconfident, calibrated)] * 2, n_boot=500)
    assert n == 1500 and point == pytest.approx(100 * single["diff"], abs=1e-9)
    assert np.quantile(samples, 0.025) > 0 and samples.shape == (500,)
