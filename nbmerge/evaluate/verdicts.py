"""How a claim is decided: four outcomes from one interval against the claim's own threshold.

A claim is a statement about a number (its *estimate*, oriented so that larger supports the claim) and a
*threshold* that number must clear. The run gives the estimate a 95% interval; the outcome follows from where the
interval lies:

* **held** — the interval clears the threshold (``low > threshold``; for "within" claims it lies inside the band);
* **contradicted** — the interval excludes what the claim needs: its upper end is at or below the threshold, or
  below the paper's reported effect when the claim is about the effect's size (``effect``); for "within" claims it
  lies wholly outside the band;
* **inconclusive** — the interval contains both: the run could not tell. The decision then says which effect this
  run could have detected (:func:`minimum_detectable`, at 80% power) and about how many test examples would decide it;
* **not tested** — the comparison cannot test anything (a model at chance, two merges collapsed onto one another,
  a tie, a sweep that left no eligible setting, a suite that was not run); ``why`` says which.

Intervals over several seeds come from :func:`hierarchical_samples`: a two-level bootstrap that resamples the seeds
(each a whole search, with its own validation subset), then the test examples within each task, so that one
interval carries both the search's and the test set's noise. Across a report's claims, :func:`holm` controls the
family-wise error of the claims that hold (``docs/protocol.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from ..errors import NbmergeError

OUTCOMES = ("held", "contradicted", "inconclusive", "not tested")
READINGS = ("paper", "strict")
LEVEL = 0.95
POWER = 0.80
BOOTSTRAP = 2000
# standard normal quantiles: two-sided 95% and one-sided 80% power
_Z_LEVEL = 1.959963984540054
_Z_POWER = 0.8416212335729143

Threshold = Union[float, Sequence[float]]


@dataclass
class Decision:
    """One claim's outcome with the numbers it follows from (all in the estimate's own units).

    ``threshold``: a number for "exceeds" claims, a ``[low, high]`` band for "within" claims. ``effect``: the
    paper's effect (or the smallest effect the claim is about) in the same orientation, when known; an interval
    wholly below it contradicts a claim about the effect's size. ``mde``: the smallest true effect above the
    threshold this run would detect at 80% power; ``n_needed``: about how many test examples (as many per seed as
    now, scaled) would make the interval decide, for an inconclusive outcome. ``p``: one-sided bootstrap p-value of
    "the estimate does not clear the threshold" (for :func:`holm`)."""

    outcome: str
    estimate: Optional[float] = None
    interval: Optional[list] = None
    threshold: Optional[Threshold] = None
    effect: Optional[float] = None
    mde: Optional[float] = None
    n_needed: Optional[int] = None
    p: Optional[float] = None
    reading: str = "paper"
    why: str = ""
    unit: str = "pts"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise NbmergeError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if self.reading not in READINGS:
            raise NbmergeError(f"reading must be one of {READINGS}, got {self.reading!r}")
        if self.outcome != "not tested" and (self.estimate is None or self.interval is None
                                             or self.threshold is None):
            raise NbmergeError(f"a {self.outcome!r} decision needs an estimate, an interval and a threshold")

    @property
    def held(self) -> Optional[bool]:
        """True / False / None (held / contradicted / inconclusive or not tested), for code that needs a flag."""
        return {"held": True, "contradicted": False}.get(self.outcome)

    def to_dict(self) -> dict:
        out = {"outcome": self.outcome, "estimate": self.estimate, "interval": self.interval,
               "threshold": self.threshold, "effect": self.effect, "mde": self.mde, "n_needed": self.n_needed,
               "p": self.p, "reading": self.reading, "unit": self.unit}
        if self.why:
            out["why"] = self.why
        return out

    def text(self, fmt: str = "{:+.2f}") -> str:
        """One line: the estimate with its interval, the threshold and, when inconclusive, what would decide it."""
        if self.outcome == "not tested":
            return f"not tested: {self.why}"
        lo, hi = self.interval
        unit = f" {self.unit}" if self.unit else ""
        head = f"{fmt.format(self.estimate)} [{fmt.format(lo)}, {fmt.format(hi)}]{unit}"
        if isinstance(self.threshold, (list, tuple)):
            rule = f"must lie within [{fmt.format(self.threshold[0])}, {fmt.format(self.threshold[1])}]"
        else:
            rule = f"must clear {fmt.format(self.threshold)}"
            if self.effect is not None:
                rule += f" (paper's effect {fmt.format(self.effect)})"
        out = f"{head}; {rule}: {self.outcome}"
        if self.outcome == "inconclusive":
            if self.mde is not None:
                out += f"; this run detects effects ≥ {fmt.format(self.mde)}{unit} above the threshold at 80% power"
            if self.n_needed is not None:
                out += f"; about {self.n_needed:,} test examples would decide it"
        if self.why:
            out += f" ({self.why})"
        return out


def not_tested(why: str, reading: str = "paper", threshold: Optional[Threshold] = None,
               effect: Optional[float] = None) -> Decision:
    """A claim the run could not test, with the reason."""
    if not why:
        raise NbmergeError("not_tested needs the reason")
    return Decision("not tested", threshold=threshold, effect=effect, reading=reading, why=why)


def minimum_detectable(se: float, level: float = LEVEL, power: float = POWER) -> float:
    """The smallest true effect (above the threshold) a two-sided ``level`` interval of standard error ``se``
    clears with probability ``power``: (z₁₋α/₂ + z_power)·se."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf
    return (z(1 - (1 - level) / 2) + z(power)) * se


def _n_needed(n: Optional[int], se: float, target: float) -> Optional[int]:
    """Test examples that bring the minimum detectable effect down to ``target`` (se ∝ 1/√n)."""
    if not n or not math.isfinite(se) or se <= 0 or not target or target <= 0:
        return None
    return int(math.ceil(n * (minimum_detectable(se) / target) ** 2))


def decide(estimate: float, samples: Optional[np.ndarray] = None, *, threshold: Threshold = 0.0,
           effect: Optional[float] = None, interval: Optional[Sequence[float]] = None, n: Optional[int] = None,
           reading: str = "paper", unit: str = "pts", level: float = LEVEL, why: str = "") -> Decision:
    """Decide a claim from its estimate and bootstrap ``samples`` (or a given ``interval``).

    ``threshold`` a number: the claim says the estimate exceeds it (held: ``low > threshold``; contradicted:
    ``high <= threshold``, or ``high < effect`` when the paper's ``effect`` is given; inconclusive otherwise).
    ``threshold`` a pair: the claim says the estimate lies inside it (held: the interval inside; contradicted: the
    interval wholly outside). ``n``: test examples behind the interval (for ``n_needed``)."""
    if samples is not None:
        samples = np.asarray(samples, dtype=np.float64)
        samples = samples[np.isfinite(samples)]
        if samples.size < 10:
            raise NbmergeError("decide: fewer than 10 finite bootstrap samples")
        tail = (1 - level) / 2
        lo, hi = (float(x) for x in np.quantile(samples, [tail, 1 - tail]))
        se = float(samples.std(ddof=1))
    elif interval is not None:
        lo, hi = float(interval[0]), float(interval[1])
        se = (hi - lo) / (2 * _Z_LEVEL)
    else:
        raise NbmergeError("decide: give bootstrap samples or an interval")
    if not all(math.isfinite(x) for x in (estimate, lo, hi)):
        return not_tested(f"the estimate or its interval is not finite ({estimate}, [{lo}, {hi}])", reading,
                          threshold, effect)
    mde = minimum_detectable(se)
    p = None
    if isinstance(threshold, (list, tuple)):
        low_t, high_t = float(threshold[0]), float(threshold[1])
        if not low_t < high_t:
            raise NbmergeError(f"decide: the band {threshold} is empty")
        if lo > low_t and hi < high_t:
            outcome = "held"
        elif lo >= high_t or hi <= low_t:
            outcome = "contradicted"
        else:
            outcome = "inconclusive"
        room = min(estimate - low_t, high_t - estimate)   # how far the estimate sits inside the band
        n_needed = _n_needed(n, se, room) if outcome == "inconclusive" and room > 0 else None
        if samples is not None:
            p = float(max(np.mean(samples <= low_t), np.mean(samples >= high_t)))
        threshold = [low_t, high_t]
    else:
        t = float(threshold)
        if lo > t:
            outcome = "held"
        elif hi <= t or (effect is not None and effect > t and hi < effect):
            outcome = "contradicted"
        else:
            outcome = "inconclusive"
        target = (effect - t) if effect is not None and effect > t else (estimate - t)
        n_needed = _n_needed(n, se, target) if outcome == "inconclusive" else None
        if samples is not None:
            p = float((np.sum(samples <= t) + 1) / (samples.size + 1))
        threshold = t
    return Decision(outcome, float(estimate), [lo, hi], threshold, effect, float(mde), n_needed, p, reading,
                    why, unit)


# --------------------------------------------------------------------------------------------- seeds × examples

def task_differences(a, b, expert: Optional[Mapping[str, float]] = None) -> dict[str, np.ndarray]:
    """Per task, the per-example difference of correctness A − B, divided by the expert's accuracy when given
    (normalized accuracy), for two :class:`~nbmerge.evaluate.protocol.Predictions` on the same test examples."""
    if set(a.tasks) != set(b.tasks):
        raise NbmergeError(f"task_differences: different tasks {a.tasks} vs {b.tasks}")
    out = {}
    for task in a.tasks:
        if not np.array_equal(a.labels[task], b.labels[task]):
            raise NbmergeError(f"task_differences: task {task!r} has different examples in A and B")
        scale = 1.0 / expert[task] if expert and expert.get(task, 0) > 0 else 1.0
        out[task] = (a.correct(task).astype(np.float64) - b.correct(task).astype(np.float64)) * scale
    return out


def hierarchical_samples(per_seed: Sequence[Mapping[str, np.ndarray]], n_boot: int = BOOTSTRAP, seed: int = 0,
                         scale: float = 100.0) -> tuple[float, np.ndarray, int]:
    """Two-level bootstrap of a mean-over-tasks statistic measured at several seeds on one test set.

    ``per_seed[s][task]``: per-example values at seed ``s`` (e.g. :func:`task_differences`); every seed has the
    same examples per task. Each replicate draws the seeds with replacement, then the examples within each task
    (the same indices for every seed: they share one test set), and averages over the drawn seeds and the tasks.
    Returns (point estimate, samples, test examples per seed), times ``scale`` (points by default)."""
    if not per_seed:
        raise NbmergeError("hierarchical_samples: no seed")
    tasks = list(per_seed[0])
    for values in per_seed[1:]:
        if list(values) != tasks or any(len(values[t]) != len(per_seed[0][t]) for t in tasks):
            raise NbmergeError("hierarchical_samples: every seed needs the same tasks and examples")
    rng = np.random.default_rng(seed)
    s = len(per_seed)
    stacked = {t: np.stack([np.asarray(v[t], dtype=np.float64) for v in per_seed]) for t in tasks}   # [S, n]
    point = float(np.mean([stacked[t].mean() for t in tasks]))
    seeds = rng.integers(0, s, size=(n_boot, s)) if s > 1 else np.zeros((n_boot, 1), dtype=int)
    samples = np.zeros(n_boot)
    for t in tasks:
        values = stacked[t]
        n = values.shape[1]
        idx = rng.integers(0, n, size=(n_boot, 1, n))
        samples += np.take_along_axis(values[seeds], idx, axis=2).mean(axis=(1, 2))
    n_examples = sum(len(per_seed[0][t]) for t in tasks)
    return scale * point, scale * samples / len(tasks), n_examples


def compare(pairs: Sequence[tuple], expert: Optional[Mapping[str, float]] = None, *, threshold: Threshold = 0.0,
            effect: Optional[float] = None, reading: str = "paper", names=("A", "B"), seed: int = 0) -> Decision:
    """"A beats B" (or "A is within ±m of B": ``threshold=[-m, m]``) over seeds and test examples: ``pairs`` are
    (A, B) predictions, one pair per seed. Not tested when, at every seed, the comparison is vacuous
    (:func:`nbmerge.evaluate.protocol.vacuous`); otherwise the vacuous seeds are left out and named in ``why``."""
    from .protocol import agreement, vacuous

    usable, skipped = [], []
    for i, (a, b) in enumerate(pairs):
        why = vacuous(a, b, None, names)
        if why is None and agreement(a, b) >= 0.995:
            why = f"{names[0]} and {names[1]} collapsed onto one another ({100 * agreement(a, b):.1f}% agreement)"
        (skipped.append(f"seed {i}: {why}") if why else usable.append((a, b)))
    if not usable:
        return not_tested("; ".join(skipped) or "no seed", reading, threshold, effect)
    point, samples, n = hierarchical_samples([task_differences(a, b, expert) for a, b in usable], seed=seed)
    return decide(point, samples, threshold=threshold, effect=effect, n=n, reading=reading,
                  why="; ".join(f"left out {s}" for s in skipped))


# ----------------------------------------------------------------------------------------------- across claims

def holm(p_values: Sequence[Optional[float]], level: float = 1 - LEVEL) -> list[Optional[bool]]:
    """Holm's step-down procedure over the claims' one-sided p-values: True where a claim survives at family-wise
    error ``level``, False where it does not, None where it has no p-value (not part of the family)."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(indexed)
    out: list[Optional[bool]] = [None] * len(p_values)
    rejecting = True
    for rank, (p, i) in enumerate(indexed):
        rejecting = rejecting and p <= level / (m - rank)
        out[i] = rejecting
    return out


def _room(d: Decision) -> float:
    """How far a decision's interval sits past what the claim needs (negative: short of it)."""
    lo, hi = d.interval
    if isinstance(d.threshold, (list, tuple)):
        return min(lo - d.threshold[0], d.threshold[1] - hi)
    return lo - d.threshold


def least_favourable(parts: Mapping[str, Decision]) -> Optional[str]:
    """The name of the tested part that decides a claim needing every part: the lowest outcome (contradicted, then
    inconclusive, then held), then the interval furthest short of its threshold; None when no part was tested."""
    rank = {"contradicted": 0, "inconclusive": 1, "held": 2}
    tested = {k: d for k, d in parts.items() if d.outcome != "not tested"}
    return min(tested, key=lambda k: (rank[tested[k].outcome], _room(tested[k]))) if tested else None


def combine(parts: Mapping[str, Decision], what: str = "part", reading: Optional[str] = None) -> Decision:
    """One decision for a claim that needs every part (each anchor, baseline, suite; accuracy and time): held
    when every part held; contradicted when any part is; inconclusive when none is but some part is inconclusive;
    not tested when no part could be tested, or when every tested part held but some could not be tested (the claim
    is then undecided). The numbers are the least favourable tested part's, so that the outcome always follows from
    the decision's own interval and threshold; ``why`` names that part and the untested ones."""
    from dataclasses import replace

    tested = {k: d for k, d in parts.items() if d.outcome != "not tested"}
    untested = [f"{k}: {d.why}" for k, d in parts.items() if d.outcome == "not tested"]
    reading = reading or next((d.reading for d in parts.values()), "paper")
    if not tested:
        return not_tested("; ".join(untested) or f"no {what} to compare", reading)
    worst = least_favourable(parts)
    if all(d.outcome == "held" for d in tested.values()) and untested:
        return not_tested(f"{'; '.join(untested)} (every other {what} held)", reading)
    why = "; ".join(x for x in [tested[worst].why, f"least favourable {what}: {worst}"]
                    + ([f"not tested: {'; '.join(untested)}"] if untested else []) if x)
    return replace(tested[worst], reading=reading, why=why)
