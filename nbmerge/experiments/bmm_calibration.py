"""What ``notebooks/21_bmm_calibration.ipynb`` shows: BMM's claim B6 (BMM, Bayesian Model Merging, arXiv
2605.12843): sampling from the row-wise Gaussian posterior U_row ~ N(U*_row, σ²(XXᵀ + λI)⁻¹) and averaging the
predictive probabilities over S draws lowers the expected calibration error (ECE) against the point estimate U*, at
no loss of accuracy.

The steps are library calls the notebook makes in view: one validation subset per search seed (:func:`seed_labs`), the
anchor's α and BMM's search on it (``nbmerge.tune.study``, the benchmark notebook's searches: same space, budget and
seeds, so the trial cache and the search logs are shared), σ̂², the draws, the ensemble and the τ sweep
(``nbmerge.tune.bmm_posterior``), logit temperature scaling and ECE bootstraps (``nbmerge.evaluate.calibration``). Here:
the config, the record of one seed (:class:`PosteriorRun`), the decisions (:func:`calibration_verdicts`), tables and the
two claims.

* **Two rows.** B6, the paper's literal claim: at T = 1 (no post-hoc temperature scaling) the sampled ensemble's
  ECE is lower than the point estimate's, at no loss of accuracy. B6s, our stricter reading: the same, and also
  when both models get logit temperature scaling (one T per task head, fitted by validation NLL; accuracy
  unchanged), i.e. sampling calibrates better than simply rescaling the point estimate's logits.
* **Each part is one interval over seeds × test examples**: the ECE reduction (point − sampled, ECE points) by the
  two-level bootstrap of ``calibration.ece_difference_samples`` against 0; "no loss of accuracy" as
  non-inferiority: normalized accuracy, sampled − point, by ``verdicts.hierarchical_samples``, against −``margin``
  points (:data:`NONINFERIORITY_MARGIN`: the resolution of a paired interval between two nearly identical models on
  2,400 examples, ±196·√(d/N) ≈ ±0.9 points at d = 5% disagreement). A row is held when every part holds,
  contradicted when one is contradicted, not tested when one cannot be tested, inconclusive otherwise
  (:func:`conjunction`).
* **Posterior temperature τ** (σ² = τ·σ̂² per module), not to be confused with T: chosen per seed on that seed's
  validation subset by the ensemble's NLL after its temperature scaling, among the τ whose validation accuracy stays
  within ``margin`` of the point estimate's. A seed whose sweep left no eligible τ, whose model sits at chance, or
  whose ensemble's predictive is the point estimate's is left out (named); with no seed left the rows are not
  tested.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from statistics import median
from typing import Mapping, Optional, Sequence

from ..evaluate import protocol, verdicts
from ..evaluate.calibration import (ece_difference, ece_difference_samples, predictive_distance, reliability, rescaled,
                                    task_ece)
from ..errors import NbmergeError
from ..engine.modules import MODULE_TYPES, module_type
from ..evaluate.protocol import Interval, Predictions
from ..evaluate.verdicts import Decision
from . import rules
from .common import claim
from .rules import knob

# B6: the ensemble's normalized accuracy may be at most this many points below the point estimate's.
NONINFERIORITY_MARGIN = 1.0
# The ensemble's predictive equals the point estimate's when their mean total-variation distance is below this.
SAME_PREDICTIVE = 1e-3
CALIBRATION_SOURCE = "BMM, arXiv 2605.12843, Appendix B (sampling-based BMM, calibration)"
CALIBRATION_PAPER = ("sampling-based BMM: lower ECE than the point estimate at no loss of accuracy (Appendix B; its "
                     "numbers and model were not retrieved, so no paper effect is used)")


@dataclass(frozen=True)
class CalibrationConfig:
    """The notebook's knobs; their defaults and meanings are written in its parameters cell only, their rules here
    (``rules.knob``)."""

    suite: str = knob(rules.SUITE)
    device: str = knob(rules.DEVICE)
    # the Gram sample's and the bootstrap's seed
    seed: int = knob(rules.SEED)
    # search seeds: each draws its own validation subset and seeds its posterior draws
    seeds: tuple = knob(rules.SEEDS)
    smoke: bool = knob()
    # the prior mean of the tuned (data-assisted) BMM
    anchor: str = knob(rules.ANCHOR)
    strategy: str = knob(rules.STRATEGY)
    budget: int = knob(rules.BUDGET)
    # the search's space-filling points before BO proposes
    n_initial: Optional[int] = knob(rules.N_INITIAL)
    val_examples: int = knob(rules.COUNT_OR_ALL)
    gram_examples: int = knob(rules.COUNT)
    # posterior draws averaged per prediction (an average needs two)
    samples: int = knob(rules.count(2))
    # posterior temperatures τ (σ² = τ·σ̂²), chosen on validation
    temperatures: tuple = knob(rules.POSITIVES)
    # accuracy non-inferiority margin, normalized points
    margin: float = knob(rules.POSITIVE)
    cache: str = knob(rules.CACHE)

    def __post_init__(self):
        rules.check(self)
        rules.normalise(self, floats=("temperatures",))


def as_dict(config) -> dict:
    return asdict(config)


# ------------------------------------------------------------------------------------------- one lab per seed

def seed_labs(suite: str, seeds: Sequence[int], *, cache: str = "", device: str = "cpu",
              val_examples: int = 50) -> dict:
    """One ``nbmerge.tune.study.Lab`` per search seed: the same zoo, models and memo (Grams, anchors and factorised
    solvers built once), each with its own trial cache whose validation subset is drawn with the search seed
    (``val_examples`` per task), so validation noise is part of the seed-to-seed spread. The cache entries and search
    logs are those of the benchmark notebook's searches at the same seeds and subsets.

    Each seed's cache validates on its own evaluator view (``Lab.at_seed`` → ``trialcache.trial_cache``)."""
    from ..tune.study import open_lab

    lab = open_lab(suite, cache=cache, device=device, val_examples=val_examples, seed=seeds[0])
    return {seed: lab.at_seed(seed) for seed in seeds}


# ---------------------------------------------------------------------------------------------- decisions

def conjunction(parts: Mapping[str, Decision], reading: str = "paper") -> Decision:
    """A claim made of several parts, each decided on its own interval: contradicted when one part is, else not
    tested when one part cannot be tested, else held when every part held, else inconclusive. The decision carries
    the numbers of the part that decides it (the first contradicted, untested or inconclusive one; the first part
    when all held), its p-value the largest of the parts' (an intersection–union test) and ``why`` naming the
    parts."""
    if not parts:
        raise NbmergeError("conjunction: no part")
    items = list(parts.items())
    outcomes = [d.outcome for _, d in items]
    for outcome in ("contradicted", "not tested", "inconclusive"):
        if outcome in outcomes:
            name, binding = items[outcomes.index(outcome)]
            break
    else:
        outcome, (name, binding) = "held", items[0]
    ps = [d.p for _, d in items]
    p = max(ps) if all(x is not None for x in ps) else None
    why = f"decided by {name}; " + "; ".join(f"{n}: {d.outcome}" for n, d in items)
    if outcome == "not tested":
        return verdicts.not_tested(f"{name}: {binding.why}", reading, binding.threshold, binding.effect)
    return replace(binding, outcome=outcome, p=p, reading=reading, why=why)


def calibration_decision(point: Predictions, sampled: Predictions, point_ts: Predictions, sampled_ts: Predictions,
                         expert: Mapping[str, float], margin: float = NONINFERIORITY_MARGIN, seed: int = 0,
                         eligible: bool = True) -> dict:
    """One seed, described (the claims pool the seeds, :func:`calibration_verdicts`): the paired intervals of
    normalized accuracy (sampled − point) and of the ECE difference (sampled − point) at T = 1 and under temperature
    scaling, the predictive distance, and ``why`` the seed must be left out (no eligible τ, a model at chance, or
    the two predictive distributions coincide), None when it can be used."""
    accuracy = protocol.paired_difference(sampled, point, expert, seed=seed)
    ece_scaled = ece_difference(sampled_ts, point_ts, seed=seed)
    ece_raw = ece_difference(sampled, point, seed=seed)
    distance = predictive_distance(sampled, point)
    why = None if eligible else ("the τ sweep left no eligible setting: no posterior temperature kept validation "
                                 f"accuracy within {margin:g} points of the point estimate's")
    why = why or protocol.vacuous(sampled, point, None, names=("sampled ensemble", "point estimate"))
    if why is None and distance < SAME_PREDICTIVE:
        why = (f"the sampled ensemble's predictive is the point estimate's (mean total-variation distance "
               f"{distance:.1e}): the chosen posterior temperature is too small to move any probability")
    evidence = (f"ECE sampled − point at T = 1 {_ece_str(ece_raw)}, temperature-scaled {_ece_str(ece_scaled)}; "
                f"normalized accuracy sampled − point {accuracy}" + (f" (left out: {why})" if why else ""))
    return {"why": why, "accuracy": accuracy.to_dict(), "ece_scaled": ece_scaled, "ece_raw": ece_raw,
            "distance": distance, "evidence": evidence}


def _ece_str(d: dict) -> str:
    return f"{d['diff']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}] ({d['a']:.4f} vs {d['b']:.4f})"


@dataclass
class PosteriorRun:
    """B6 at one search seed: the point estimate, the validation sweep over τ, the chosen τ, both models on val
    and test, their fitted logit temperatures, and the seed's description (:func:`calibration_decision`)."""

    seed: int
    tuning: dict
    noise: dict
    sweep: list
    chosen: dict
    point_val: Predictions = field(repr=False)
    point_test: Predictions = field(repr=False)
    sampled_val: Predictions = field(repr=False)
    sampled_test: Predictions = field(repr=False)
    point_temperatures: dict = field(default_factory=dict)
    sampled_temperatures: dict = field(default_factory=dict)
    decision: dict = field(default_factory=dict)

    def summaries(self, expert: Mapping[str, float]) -> dict:
        """Test accuracy/NLL/ECE of both models at T = 1 and temperature-scaled."""
        return {"point": self.point_test.summary(expert),
                "sampled": self.sampled_test.summary(expert),
                "point_scaled": rescaled(self.point_test, self.point_temperatures).summary(expert),
                "sampled_scaled": rescaled(self.sampled_test, self.sampled_temperatures).summary(expert)}

    @property
    def scaled(self) -> tuple[Predictions, Predictions]:
        """(point, sampled) on test, each with its own validation-fitted logit temperatures."""
        return (rescaled(self.point_test, self.point_temperatures),
                rescaled(self.sampled_test, self.sampled_temperatures))


def tuning_summary(tuning) -> dict:
    """The searched point estimate's numbers kept in a :class:`PosteriorRun`."""
    return {"val_accuracy": tuning.val_accuracy, "test_accuracy": tuning.test_accuracy,
            "params": tuning.search.best_params, "replayed": tuning.search.replayed}


@dataclass
class CalibrationStudy:
    suite: str
    tasks: list
    expert: dict
    anchor: str
    margin: float
    alphas: dict = field(default_factory=dict)   # search seed → the anchor's α on that seed's validation subset
    runs: list = field(default_factory=list)     # PosteriorRun per seed
    seed: int = 0                                # the bootstraps' seed


def calibration_verdicts(study: CalibrationStudy) -> dict:
    """The parts over the usable seeds × test examples, and the two rows.

    ``ece_raw`` / ``ece_scaled``: the ECE reduction, point − sampled (ECE points), at T = 1 / under temperature
    scaling, must clear 0; ``accuracy``: normalized accuracy, sampled − point (points), must clear −margin. ``B6`` =
    ece_raw ∧ accuracy (the paper's reading), ``B6s`` = ece_raw ∧ ece_scaled ∧ accuracy (ours)."""
    usable = [r for r in study.runs if not r.decision.get("why")]
    left_out = [f"seed {r.seed}: {r.decision['why']}" for r in study.runs if r.decision.get("why")]
    if not usable:
        why = "no seed could test it" + (f" ({'; '.join(left_out)})" if left_out else " (no seed was run)")
        parts = {"ece_raw": verdicts.not_tested(why, threshold=0.0),
                 "ece_scaled": verdicts.not_tested(why, threshold=0.0),
                 "accuracy": verdicts.not_tested(why, threshold=-study.margin)}
    else:
        point, samples, n = verdicts.hierarchical_samples(
            [verdicts.task_differences(r.sampled_test, r.point_test, study.expert) for r in usable], seed=study.seed)
        parts = {"accuracy": verdicts.decide(point, samples, threshold=-study.margin, n=n, unit="normalized pts")}
        for name, pairs in (("ece_raw", [(r.point_test, r.sampled_test) for r in usable]),
                            ("ece_scaled", [r.scaled for r in usable])):
            point, samples, n = ece_difference_samples(pairs, seed=study.seed)
            parts[name] = verdicts.decide(point, samples, threshold=0.0, n=n, unit="ECE pts")
        parts = {k: parts[k] for k in ("ece_raw", "ece_scaled", "accuracy")}
    return {"parts": parts, "seeds": [r.seed for r in usable], "left_out": left_out,
            "B6": conjunction({"ECE at T = 1": parts["ece_raw"], "accuracy": parts["accuracy"]}, "paper"),
            "B6s": conjunction({"ECE at T = 1": parts["ece_raw"], "ECE temperature-scaled": parts["ece_scaled"],
                                "accuracy": parts["accuracy"]}, "strict")}


PART_NAMES = {"ece_raw": "ECE reduction at T = 1 (point − sampled)",
              "ece_scaled": "ECE reduction, both temperature-scaled (point − sampled)",
              "accuracy": "normalized accuracy, sampled − point (non-inferiority)"}


def verdict_rows(found: dict) -> list[dict]:
    """The parts' estimates and intervals (the intervals the claims use), one row each."""
    rows = []
    for name, d in found["parts"].items():
        rows.append({"part": PART_NAMES[name], "estimate": d.estimate,
                     "interval": f"[{d.interval[0]:+.2f}, {d.interval[1]:+.2f}]" if d.interval else None,
                     "threshold": d.threshold, "outcome": d.outcome, "unit": d.unit,
                     "why": d.why if d.outcome == "not tested" else ""})
    return rows


def sweep_table(sweeps: Mapping[int, list], chosen: Mapping[int, dict], tunings: Mapping) -> list[dict]:
    """The validation sweep over τ, one row per seed and τ, with the point estimate's validation accuracy and
    whether the row is the chosen τ."""
    return [{"seed": seed, **row, "point accuracy": tunings[seed].val_predictions.mean_accuracy(),
             "chosen": row["temperature"] == chosen[seed]["temperature"] and chosen[seed]["eligible_count"] > 0}
            for seed, rows in sweeps.items() for row in rows]


def seed_rows(study: CalibrationStudy) -> list[dict]:
    """Per seed: the chosen τ, test accuracy, NLL and ECE of both models at T = 1 and temperature-scaled, the seed's
    own paired intervals (descriptive: the claims pool the seeds) and whether the seed is used."""
    rows = []
    for run in study.runs:
        s = run.summaries(study.expert)
        d = run.decision
        rows.append({"seed": run.seed, "α": study.alphas.get(run.seed), "τ": run.chosen["temperature"],
                     "eligible τ": f"{run.chosen['eligible_count']}/{len(run.sweep)}",
                     "acc point": s["point"]["accuracy"], "acc sampled": s["sampled"]["accuracy"],
                     "Δ normalized acc": str(Interval(**d["accuracy"])),
                     "ECE point (T=1)": s["point"]["ece"], "ECE sampled (T=1)": s["sampled"]["ece"],
                     "ΔECE (T=1)": _interval_str(d["ece_raw"]),
                     "ECE point (TS)": s["point_scaled"]["ece"], "ECE sampled (TS)": s["sampled_scaled"]["ece"],
                     "ΔECE (TS)": _interval_str(d["ece_scaled"]),
                     "NLL point (TS)": s["point_scaled"]["nll"], "NLL sampled (TS)": s["sampled_scaled"]["nll"],
                     "used": "yes" if not d["why"] else f"left out: {d['why']}"})
    return rows


def _interval_str(d: dict) -> str:
    return f"{d['diff']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"


def task_rows(run: PosteriorRun, expert: Mapping[str, float]) -> list[dict]:
    """Per task and mean at one seed: accuracy, and ECE of both models at T = 1 and temperature-scaled."""
    s = run.summaries(expert)
    point_ts, sampled_ts = run.scaled
    per = {name: {t: task_ece(p, t) for t in run.point_test.tasks} for name, p in (
        ("point", run.point_test), ("sampled", run.sampled_test), ("point_scaled", point_ts),
        ("sampled_scaled", sampled_ts))}
    rows = []
    for task in run.point_test.tasks:
        rows.append({"task": task, "acc point": s["point"]["per_task"][task],
                     "acc sampled": s["sampled"]["per_task"][task],
                     "T point": run.point_temperatures[task], "T sampled": run.sampled_temperatures[task],
                     "ECE point (T=1)": per["point"][task], "ECE sampled (T=1)": per["sampled"][task],
                     "ECE point (TS)": per["point_scaled"][task], "ECE sampled (TS)": per["sampled_scaled"][task]})
    rows.append({"task": "mean", "acc point": s["point"]["accuracy"], "acc sampled": s["sampled"]["accuracy"],
                 "T point": "", "T sampled": "", "ECE point (T=1)": s["point"]["ece"],
                 "ECE sampled (T=1)": s["sampled"]["ece"], "ECE point (TS)": s["point_scaled"]["ece"],
                 "ECE sampled (TS)": s["sampled_scaled"]["ece"]})
    return rows


def noise_summary(noise: Mapping[str, float]) -> list[dict]:
    """σ̂² per module type: median, smallest and largest over depth (which modules the posterior is widest on)."""
    out = []
    for kind in MODULE_TYPES:
        values = [v for k, v in noise.items() if module_type(k) == kind]
        if values:
            out.append({"module_type": kind, "modules": len(values), "median": median(values), "min": min(values),
                        "max": max(values)})
    return out


def _setting(study: CalibrationStudy) -> str:
    n = sum(len(v) for v in study.runs[0].point_test.labels.values()) if study.runs else 0
    alphas = ", ".join(f"{a:g}" for a in study.alphas.values())
    return (f"{study.suite}: {len(study.tasks)} tasks; BMM (data Grams) on {study.anchor} (α per seed: {alphas}); "
            f"{len(study.runs)} search seeds, each with its own validation subset; {n:,} test examples")


def calibration_claims(study: Optional[CalibrationStudy], detail: str = ""):
    """B6 (the paper's reading: ECE lower at T = 1, accuracy kept) and B6s (ours: also under temperature scaling),
    each decided on intervals over the usable seeds × test examples (:func:`calibration_verdicts`)."""
    text = ("sampling-based BMM (full Gaussian posterior) has a lower ECE than the point estimate, at no loss of "
            "accuracy (both at T = 1: no post-hoc temperature scaling)")
    strict = ("sampling-based BMM has a lower ECE than the point estimate both at T = 1 and when both get "
              "validation-fitted temperature scaling, at no loss of accuracy")
    if study is None or not study.runs:
        why = "the sampled ensemble was not evaluated" + (f" ({detail})" if detail else "")
        return [claim(text, CALIBRATION_SOURCE, verdicts.not_tested(why), id="B6", paper=CALIBRATION_PAPER),
                claim(strict, CALIBRATION_SOURCE, verdicts.not_tested(why, "strict"), id="B6s",
                      paper=CALIBRATION_PAPER)]
    found = calibration_verdicts(study)
    parts = found["parts"]
    ours = "; ".join(f"{PART_NAMES[k]} {_estimate(d)}" for k, d in parts.items())
    sweep = "; ".join(f"seed {r.seed}: τ = {r.chosen['temperature']:g} ({r.chosen['eligible_count']}/{len(r.sweep)} "
                      "τ kept validation accuracy)" for r in study.runs)
    common = (f" Intervals over {len(found['seeds'])} search seeds × test examples (seeds, then examples within "
              f"each task); τ chosen on each seed's validation subset: {sweep}."
              + (f" Left out: {'; '.join(found['left_out'])}." if found["left_out"] else "")
              + (f" {detail}" if detail else ""))

    def evidence(names: Sequence[str], decision: Decision) -> str:
        return (f"{decision.outcome}: " + "; ".join(f"{PART_NAMES[k]}: {parts[k].text()}" for k in names)
                + f". Held when every part holds, contradicted when one is." + common)

    b6, b6s = found["B6"], found["B6s"]
    setting = _setting(study)
    return [claim(text, CALIBRATION_SOURCE, b6, evidence(("ece_raw", "accuracy"), b6), id="B6",
                  paper=CALIBRATION_PAPER, ours=ours, suite=study.suite, setting=setting),
            claim(strict, CALIBRATION_SOURCE, b6s, evidence(("ece_raw", "ece_scaled", "accuracy"), b6s), id="B6s",
                  paper=CALIBRATION_PAPER, ours=ours, suite=study.suite, setting=setting)]


def _estimate(d: Decision) -> str:
    if d.outcome == "not tested":
        return "not tested"
    return f"{d.estimate:+.2f} [{d.interval[0]:+.2f}, {d.interval[1]:+.2f}] {d.unit}"


def calibration_headline(study: CalibrationStudy) -> dict:
    d = calibration_verdicts(study)["parts"]["ece_raw"]
    return {"name": "test ECE reduction by sampling, point − sampled at T = 1 (ECE points, seeds × examples)",
            "value": d.estimate if d.estimate is not None else float("nan"), "format": "{:+.2f}"}


def calibration_metrics(study: CalibrationStudy) -> dict:
    """JSON-able numbers of the B6 study for metrics.json."""
    found = calibration_verdicts(study)
    return {"anchor": study.anchor, "alphas": study.alphas, "margin": study.margin,
            "verdicts": {"parts": {k: d.to_dict() for k, d in found["parts"].items()},
                         "B6": found["B6"].to_dict(), "B6s": found["B6s"].to_dict(), "seeds": found["seeds"],
                         "left_out": found["left_out"]},
            "seeds": [{"seed": r.seed, "tuning": r.tuning, "sweep": r.sweep, "chosen": r.chosen,
                       "noise": noise_summary(r.noise), "point_temperatures": r.point_temperatures,
                       "sampled_temperatures": r.sampled_temperatures, "decision": r.decision,
                       "test": r.summaries(study.expert),
                       "reliability": {"point": reliability(r.point_test), "sampled": reliability(r.sampled_test)}}
                      for r in study.runs]}
