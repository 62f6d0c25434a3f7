"""The comparison protocol every claim in the reports uses: predictions, paired intervals, vacuous comparisons.

Its two other parts have their own modules: every method's α is chosen the same way on validation
(:mod:`nbmerge.tune.alpha_tuning`), and every evaluation is cached, checksummed and keyed by the code that made it
(:mod:`nbmerge.evaluate.trialcache`).

* **Predictions.** :class:`Predictions` holds one model's per-example logits and labels on a split;
  :func:`evaluate_predictions` makes them.
* **Paired intervals.** :func:`paired_difference` is a stratified paired bootstrap over test examples (examples
  resampled within each task; the statistic is the difference of normalized accuracy, mean over tasks, in points).
  Claims are decided from such intervals by :mod:`nbmerge.evaluate.verdicts` (held / contradicted / inconclusive).
* **No vacuous verdicts.** :func:`vacuous` says why a comparison cannot test anything: a model at chance, two
  models that make the same prediction on almost every test example (collapsed onto one another), or a tie.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import numpy as np
import torch

from ..errors import NbmergeError

BOOTSTRAP = 2000
LEVEL = 0.95
# two merges whose test predictions agree on at least this share of examples are the same model for a verdict
COLLAPSED_AGREEMENT = 0.995
# a model whose mean accuracy is within this many points of chance (mean over tasks of 1/classes) is at chance
CHANCE_MARGIN = 0.02


# ------------------------------------------------------------------------------------------------ predictions

@dataclass
class Predictions:
    """Per task: logits [n, classes] (float32) and labels [n] of one model on one split."""

    logits: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    split: str = "test"
    seconds: float = 0.0                    # evaluation time when computed (0 when read from the cache)
    extra: dict = field(default_factory=dict)

    @property
    def tasks(self) -> list[str]:
        return list(self.logits)

    def correct(self, task: str) -> np.ndarray:
        return self.logits[task].argmax(-1) == self.labels[task]

    def accuracy(self) -> dict[str, float]:
        return {t: float(self.correct(t).mean()) for t in self.tasks}

    def mean_accuracy(self) -> float:
        return float(np.mean(list(self.accuracy().values())))

    def normalized(self, expert: Mapping[str, float]) -> float:
        acc = self.accuracy()
        ratios = [acc[t] / expert[t] for t in self.tasks if expert.get(t, 0) > 0]
        return float(np.mean(ratios)) if ratios else float("nan")

    def probs(self, task: str, temperature: float = 1.0) -> np.ndarray:
        z = self.logits[task].astype(np.float64) / temperature
        z -= z.max(-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(-1, keepdims=True)

    def chance(self) -> float:
        return float(np.mean([1.0 / self.logits[t].shape[-1] for t in self.tasks]))

    def summary(self, expert: Optional[Mapping[str, float]] = None, temperature: float = 1.0) -> dict:
        """Mean accuracy, NLL and ECE (at ``temperature``), normalized accuracy when ``expert`` is given."""
        from .metrics import expected_calibration_error

        nlls, eces = [], []
        for t in self.tasks:
            p = self.probs(t, temperature)
            y = self.labels[t]
            nlls.append(float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-300, None)).mean()))
            eces.append(expected_calibration_error(torch.from_numpy(p), torch.from_numpy(y)))
        out = {"accuracy": self.mean_accuracy(), "nll": float(np.mean(nlls)), "ece": float(np.mean(eces)),
               "per_task": self.accuracy()}
        if expert is not None:
            out["normalized"] = self.normalized(expert)
        return out


def evaluate_predictions(evaluator, state: Optional[Mapping[str, torch.Tensor]], split: str,
                         tasks: Optional[Sequence[str]] = None) -> Predictions:
    """Run ``evaluator`` on ``state`` (``None``: the weights already loaded) and keep every example's logits."""
    import time

    from ..engine.taskaware import is_task_aware

    start = time.perf_counter()
    per_task = is_task_aware(state)  # a task-aware merge: each task is evaluated on its own model
    if state is not None and not per_task:
        evaluator.load(state)
    logits, labels = {}, {}
    for task in tasks or evaluator.task_names:
        if per_task:
            evaluator.load(state.for_task(task, evaluator.task_names.index(task)))
        out, y = evaluator.logits(task, split)
        logits[task] = out.float().cpu().numpy()
        labels[task] = y.cpu().numpy()
    return Predictions(logits, labels, split, time.perf_counter() - start)


# ------------------------------------------------------------------------------------------ paired intervals

@dataclass(frozen=True)
class Interval:
    """A difference of normalized accuracy A − B on test (points), with its paired-bootstrap 95% interval."""

    diff: float
    low: float
    high: float
    agreement: float            # share of test examples where A and B predict the same class

    def __str__(self) -> str:
        return f"{self.diff:+.2f} [{self.low:+.2f}, {self.high:+.2f}] pts"

    def to_dict(self) -> dict:
        return {"diff": self.diff, "low": self.low, "high": self.high, "agreement": self.agreement}


def paired_difference(a: Predictions, b: Predictions, expert: Optional[Mapping[str, float]] = None,
                      n_boot: int = BOOTSTRAP, seed: int = 0, level: float = LEVEL) -> Interval:
    """Stratified paired bootstrap of (normalized) accuracy A − B over the test examples, in points.

    Examples are resampled within each task, the same indices for A and B (paired); the statistic is the mean
    over tasks of (acc_A − acc_B) / expert accuracy (plain accuracy when ``expert`` is None)."""
    if set(a.tasks) != set(b.tasks):
        raise NbmergeError(f"paired_difference: different tasks {a.tasks} vs {b.tasks}")
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_boot)
    point = 0.0
    agree, total = 0, 0
    tasks = a.tasks
    for task in tasks:
        if not np.array_equal(a.labels[task], b.labels[task]):
            raise NbmergeError(f"paired_difference: task {task!r} has different examples in A and B")
        scale = 1.0 / expert[task] if expert and expert.get(task, 0) > 0 else 1.0
        pa, pb = a.logits[task].argmax(-1), b.logits[task].argmax(-1)
        d = ((pa == a.labels[task]).astype(np.float64) - (pb == b.labels[task]).astype(np.float64)) * scale
        n = len(d)
        agree += int((pa == pb).sum())
        total += n
        point += d.mean()
        idx = rng.integers(0, n, size=(n_boot, n))
        stats += d[idx].mean(axis=1)
    k = len(tasks)
    stats, point = 100 * stats / k, 100 * point / k
    tail = (1 - level) / 2
    low, high = np.quantile(stats, [tail, 1 - tail])
    return Interval(float(point), float(low), float(high), agree / max(total, 1))


def bootstrap_samples(a: Predictions, b: Predictions, expert: Mapping[str, float], n_boot: int = BOOTSTRAP,
                      seed: int = 0) -> np.ndarray:
    """The bootstrap distribution behind :func:`paired_difference` (same statistic, in points), as an array, so
    that differences measured on two independent test sets (two suites) can be compared."""
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_boot)
    for task in a.tasks:
        scale = 1.0 / expert[task] if expert.get(task, 0) > 0 else 1.0
        d = (a.correct(task).astype(np.float64) - b.correct(task).astype(np.float64)) * scale
        stats += d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
    return 100 * stats / len(a.tasks)


def vacuous(a: Predictions, b: Predictions, interval: Optional[Interval] = None, names=("A", "B")) -> Optional[str]:
    """Why comparing A with B cannot test a claim (None when it can): a model at chance, or the two collapsed onto
    one another (the same prediction on ≥ 99.5% of test examples)."""
    for name, p in zip(names, (a, b)):
        if p.mean_accuracy() <= p.chance() + CHANCE_MARGIN:
            return (f"{name} is at chance ({100 * p.mean_accuracy():.1f}% mean accuracy, chance "
                    f"{100 * p.chance():.1f}%)")
    if interval is not None and interval.agreement >= COLLAPSED_AGREEMENT:
        return (f"{names[0]} and {names[1]} collapsed onto one another: the same prediction on "
                f"{100 * interval.agreement:.1f}% of test examples")
    return None


def spread(values: Sequence[float]) -> str:
    """"mean ± sd (min–max, n)" of per-seed numbers, for evidence strings."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if len(v) == 0:
        return "n/a"
    sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return f"{v.mean():.2f} ± {sd:.2f} ({v.min():.2f}–{v.max():.2f}, {len(v)} seeds)"


def bootstrap_accuracy(models: Sequence[Predictions], n_boot: int = BOOTSTRAP, seed: int = 0) -> np.ndarray:
    """[models, n_boot] mean-over-tasks test accuracy of each model on the same stratified resamples (examples drawn
    within each task, the same indices for every model: a joint paired bootstrap, resampled exactly as
    :func:`paired_difference` does for the same seed)."""
    tasks = models[0].tasks
    rng = np.random.default_rng(seed)
    out = np.zeros((len(models), n_boot))
    for task in tasks:
        labels = models[0].labels[task]
        for m in models[1:]:
            if not np.array_equal(m.labels[task], labels):
                raise NbmergeError(f"bootstrap_accuracy: task {task!r} has different examples across models")
        idx = rng.integers(0, len(labels), size=(n_boot, len(labels)))
        for i, m in enumerate(models):
            out[i] += m.correct(task).astype(np.float64)[idx].mean(axis=1)
    return out / len(tasks)


def quantile_interval(samples: np.ndarray, point: float, level: float = LEVEL) -> dict:
    """``{"diff", "low", "high"}``: a point estimate with the central ``level`` interval of its bootstrap samples."""
    tail = (1 - level) / 2
    low, high = np.quantile(samples, [tail, 1 - tail])
    return {"diff": float(point), "low": float(low), "high": float(high)}


def relative_gain_interval(a: Predictions, b: Predictions, seed: int = 0) -> dict:
    """(A − B)/B of mean test accuracy (``metrics.relative_gain``), with its paired bootstrap 95% interval
    (fractions)."""
    from .metrics import relative_gain

    boot = bootstrap_accuracy([a, b], seed=seed)
    return quantile_interval((boot[0] - boot[1]) / boot[1], relative_gain(a.mean_accuracy(), b.mean_accuracy()))


def agreement(a: Predictions, b: Predictions) -> float:
    """Share of test examples where two models predict the same class."""
    same = sum(int((a.logits[t].argmax(-1) == b.logits[t].argmax(-1)).sum()) for t in a.tasks)
    return same / max(1, sum(len(a.labels[t]) for t in a.tasks))
