"""Calibration of a model's predictions (``protocol.Predictions``): logit temperature scaling, the paired bootstrap
of an ECE difference, reliability-diagram data, and how far apart two predictive distributions are.

* **Temperature scaling** (Guo et al. 2017): one temperature T per task head, fitted by NLL on validation; the
  logits are divided by T, so no prediction (hence no accuracy) changes.
* **ECE**: 15 equal-width confidence bins per task (``metrics.ece_bins``, the binning of
  ``metrics.expected_calibration_error``), mean over tasks.
* **Over seeds and test examples** (:func:`ece_difference_samples`): the two-level bootstrap of
  ``verdicts.hierarchical_samples`` (the seeds, then the test examples within each task, the same indices at every
  seed), with the ECE recomputed on each resample (ECE is not a mean of per-example terms).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch

from . import protocol
from ..errors import NbmergeError
from .metrics import ece_bins, expected_calibration_error
from .protocol import Predictions

ECE_BINS = 15
# Logit temperature scaling: 1/T searched in this range (T from 0.01 to 100).
INVERSE_TEMPERATURE_BOUNDS = (1e-2, 1e2)


def fit_temperature(preds: Predictions) -> dict[str, float]:
    """Temperature scaling fitted on ``preds`` (validation): per task head, the T minimising the NLL of
    softmax(z/T). The NLL is convex in 1/T, so a bounded scalar search finds the optimum."""
    from scipy.optimize import minimize_scalar

    temperatures = {}
    for task in preds.tasks:
        z = torch.from_numpy(preds.logits[task]).double()
        y = torch.from_numpy(preds.labels[task]).long()

        def nll(beta: float) -> float:
            return float(-torch.log_softmax(beta * z, -1).gather(-1, y[:, None]).mean())

        result = minimize_scalar(nll, bounds=INVERSE_TEMPERATURE_BOUNDS, method="bounded",
                                 options={"xatol": 1e-5})
        temperatures[task] = 1.0 / float(result.x)
    return temperatures


def rescaled(preds: Predictions, temperatures: Mapping[str, float]) -> Predictions:
    """``preds`` with each task's logits divided by its temperature (argmax, hence accuracy, unchanged)."""
    return Predictions({t: (preds.logits[t].astype(np.float64) / temperatures[t]).astype(np.float32)
                        for t in preds.tasks}, dict(preds.labels), preds.split,
                       extra={**preds.extra, "temperatures": dict(temperatures)})


def _ece_parts(preds: Predictions, task: str, bins: int):
    return ece_bins(preds.probs(task), preds.labels[task], bins)


def _ece_of(confidence, correct, index, bins: int, rows: np.ndarray) -> np.ndarray:
    """ECE of each resample (``rows``: [B, n] example indices), vectorised with one bincount."""
    n_boot, n = rows.shape
    flat = (np.arange(n_boot)[:, None] * bins + index[rows]).ravel()
    hits = np.bincount(flat, weights=correct[rows].ravel(), minlength=n_boot * bins).reshape(n_boot, bins)
    conf = np.bincount(flat, weights=confidence[rows].ravel(), minlength=n_boot * bins).reshape(n_boot, bins)
    return np.abs(hits - conf).sum(1) / n


def ece_difference(a: Predictions, b: Predictions, bins: int = ECE_BINS, n_boot: int = protocol.BOOTSTRAP,
                   seed: int = 0, level: float = protocol.LEVEL) -> dict:
    """ECE(A) − ECE(B), mean over tasks, with a paired bootstrap 95% interval over test examples: the same examples
    resampled for A and B, within each task (stratified, as ``protocol.paired_difference``).

    Returns {"diff", "low", "high", "a", "b"}. The bootstrap's ECEs are biased upwards (resampling adds noise to
    every bin), for A and B alike; the interval is of their difference."""
    if set(a.tasks) != set(b.tasks):
        raise NbmergeError(f"ece_difference: different tasks {a.tasks} vs {b.tasks}")
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_boot)
    ece_a = ece_b = 0.0
    for task in a.tasks:
        if not np.array_equal(a.labels[task], b.labels[task]):
            raise NbmergeError(f"ece_difference: task {task!r} has different examples in A and B")
        parts_a, parts_b = _ece_parts(a, task, bins), _ece_parts(b, task, bins)
        n = len(a.labels[task])
        everything = np.arange(n)[None, :]
        ece_a += float(_ece_of(*parts_a, bins, everything)[0])
        ece_b += float(_ece_of(*parts_b, bins, everything)[0])
        rows = rng.integers(0, n, size=(n_boot, n))
        stats += _ece_of(*parts_a, bins, rows) - _ece_of(*parts_b, bins, rows)
    k = len(a.tasks)
    tail = (1 - level) / 2
    low, high = np.quantile(stats / k, [tail, 1 - tail])
    return {"diff": (ece_a - ece_b) / k, "low": float(low), "high": float(high), "a": ece_a / k, "b": ece_b / k}


def ece_difference_samples(pairs, bins: int = ECE_BINS, n_boot: int = protocol.BOOTSTRAP, seed: int = 0,
                           scale: float = 100.0) -> tuple[float, np.ndarray, int]:
    """ECE(A) − ECE(B), mean over seeds and tasks, with two-level bootstrap samples, for ``pairs`` = one (A, B) pair
    of :class:`~nbmerge.evaluate.protocol.Predictions` per seed on the same test examples.

    Each replicate draws the seeds with replacement, then the examples within each task (the same indices for every
    seed and for A and B: they share one test set), recomputes both ECEs on the resample and averages the difference
    over the drawn seeds and the tasks, as ``verdicts.hierarchical_samples`` does for accuracy. Returns (point
    estimate, samples, test examples per seed), times ``scale`` (ECE points by default), ready for
    ``verdicts.decide`` (pass (point estimate, sampled ensemble) for "sampling lowers the ECE")."""
    if not pairs:
        raise NbmergeError("ece_difference_samples: no seed")
    tasks = list(pairs[0][0].tasks)
    for a, b in pairs:
        if set(a.tasks) != set(tasks) or set(b.tasks) != set(tasks):
            raise NbmergeError("ece_difference_samples: every model needs the same tasks")
        for task in tasks:
            if not (np.array_equal(a.labels[task], pairs[0][0].labels[task])
                    and np.array_equal(b.labels[task], pairs[0][0].labels[task])):
                raise NbmergeError(f"ece_difference_samples: task {task!r} has different examples across models")
    rng = np.random.default_rng(seed)
    s = len(pairs)
    seeds = rng.integers(0, s, size=(n_boot, s)) if s > 1 else np.zeros((n_boot, 1), dtype=int)
    samples = np.zeros(n_boot)
    point = 0.0
    for task in tasks:
        n = len(pairs[0][0].labels[task])
        everything = np.arange(n)[None, :]
        rows = rng.integers(0, n, size=(n_boot, n))
        per_seed = np.zeros((s, n_boot))
        for i, (a, b) in enumerate(pairs):
            parts_a, parts_b = _ece_parts(a, task, bins), _ece_parts(b, task, bins)
            point += float(_ece_of(*parts_a, bins, everything)[0] - _ece_of(*parts_b, bins, everything)[0]) / s
            per_seed[i] = _ece_of(*parts_a, bins, rows) - _ece_of(*parts_b, bins, rows)
        samples += np.take_along_axis(per_seed.T, seeds, axis=1).mean(axis=1)
    k = len(tasks)
    n_examples = sum(len(pairs[0][0].labels[t]) for t in tasks)
    return scale * point / k, scale * samples / k, n_examples


def task_ece(preds: Predictions, task: str) -> float:
    """One task's ECE (``metrics.expected_calibration_error``)."""
    return expected_calibration_error(torch.from_numpy(preds.probs(task)), torch.from_numpy(preds.labels[task]))


def reliability(preds: Predictions, bins: int = ECE_BINS) -> dict:
    """Reliability diagram data, pooled over tasks: per equal-width confidence bin its count, mean confidence and
    accuracy, and the pooled ECE Σ_b n_b/n·|acc_b − conf_b| (the binning of ``metrics.expected_calibration_error``)."""
    parts = [_ece_parts(preds, t, bins) for t in preds.tasks]
    confidence = np.concatenate([p[0] for p in parts])
    correct = np.concatenate([p[1] for p in parts])
    index = np.concatenate([p[2] for p in parts])
    count = np.bincount(index, minlength=bins).astype(float)
    hits = np.bincount(index, weights=correct, minlength=bins)
    conf_sum = np.bincount(index, weights=confidence, minlength=bins)
    filled = count > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(filled, hits / count, np.nan)
        mean_conf = np.where(filled, conf_sum / count, np.nan)
    return {"edges": np.linspace(0, 1, bins + 1).tolist(), "count": count.tolist(), "accuracy": accuracy.tolist(),
            "confidence": mean_conf.tolist(), "ece": float(np.abs(hits - conf_sum).sum() / len(correct)),
            "examples": int(len(correct))}


def predictive_distance(a: Predictions, b: Predictions) -> float:
    """Mean over tasks and examples of the total-variation distance between the two predictive distributions."""
    return float(np.mean([0.5 * np.abs(a.probs(t) - b.probs(t)).sum(-1).mean() for t in a.tasks]))
