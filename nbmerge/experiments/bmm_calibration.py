"""What ``notebooks/21_bmm_calibration.ipynb`` shows: BMM's claim B6 (BMM, Bayesian Model Merging, arXiv
2605.12843): sampling from the row-wise Gaussian posterior U_row ~ N(U*_row, σ²(XXᵀ + λI)⁻¹) and averaging the
predictive probabilities over S draws lowers the expected calibration error (ECE) against the point estimate U*, at
no loss of accuracy.

The steps are library calls the notebook makes in view: the anchor's α and BMM's search
(``nbmerge.tune.trials``), σ̂², the draws, the ensemble and the τ sweep (``nbmerge.tune.bmm_posterior``), logit
temperature scaling, ECE intervals and reliability data (``nbmerge.calibration``). Here: the config, the record of
one seed (:class:`PosteriorRun`), the verdict (:func:`calibration_decision`), tables and the claim.

* **Like with like.** Both the point estimate and the sampled ensemble get logit temperature scaling (one T per
  task head, fitted by validation NLL; accuracy unchanged) and are compared under it; both are also reported at
  T = 1. Not to be confused with the **posterior temperature** τ (σ² = τ·σ̂² per module), chosen on the validation
  subset by the ensemble's NLL after its temperature scaling, among the τ whose validation accuracy stays within
  ``margin`` of the point estimate's (calibration bought with accuracy is not the claim).
* **Verdict per search seed**: held when (1) the ECE of the temperature-scaled ensemble is lower than the
  temperature-scaled point estimate's, the 95% interval of the difference (paired bootstrap over test examples,
  stratified by task, ``calibration.ece_difference``) excluding 0, and (2) accuracy is non-inferior: the paired 95%
  interval of normalized accuracy, ensemble − point, lies above −``margin`` (:data:`NONINFERIORITY_MARGIN` points:
  the resolution of a paired interval between two nearly identical models on 2,400 examples, ±196·√(d/N) ≈ ±0.9
  points at d = 5% disagreement). Not tested when a model sits at chance or the ensemble's predictive distribution is
  the point estimate's (the chosen τ too small to move any probability). Over seeds: ``protocol.over_seeds``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from statistics import median
from typing import Mapping, Optional, Sequence

import numpy as np

from .. import protocol
from ..calibration import ece_difference, predictive_distance, reliability, rescaled, task_ece
from ..device import resolve_device
from ..errors import NbmergeError
from ..methods import get_method
from ..modules import MODULE_TYPES, module_type
from ..protocol import Interval, Predictions
from ..tune.trials import check_search_settings
from .common import check_config, claim

# B6: the ensemble's normalized accuracy may be at most this many points below the point estimate's.
NONINFERIORITY_MARGIN = 1.0
# The ensemble's predictive equals the point estimate's when their mean total-variation distance is below this.
SAME_PREDICTIVE = 1e-3
CALIBRATION_SOURCE = "BMM, arXiv 2605.12843, Appendix B (sampling-based BMM, calibration)"
CALIBRATION_PAPER = ("sampling-based BMM: lower ECE than the point estimate at no loss of accuracy (its numbers not "
                     "reproduced here)")


@dataclass(frozen=True)
class CalibrationConfig:
    """The notebook's knobs; their defaults and meanings are written in its parameters cell only."""

    suite: str
    device: str
    seed: int             # the validation subset's and the Gram sample's seed
    seeds: tuple          # search seeds (each also seeds its posterior draws)
    smoke: bool
    anchor: str           # the prior mean of the tuned (data-assisted) BMM
    strategy: str
    budget: int
    val_examples: int
    gram_examples: int
    samples: int          # posterior draws averaged per prediction
    temperatures: tuple   # posterior temperatures τ (σ² = τ·σ̂²), chosen on validation
    margin: float         # accuracy non-inferiority margin, normalized points
    cache: str

    def __post_init__(self):
        check_config(self)
        object.__setattr__(self, "seeds", tuple(self.seeds))
        object.__setattr__(self, "temperatures", tuple(float(t) for t in self.temperatures))
        object.__setattr__(self, "device", resolve_device(self.device))
        check_search_settings(self)
        get_method(self.anchor)
        if self.samples < 2:
            raise NbmergeError(f"parameter 'samples' must be >= 2 (an average over posterior draws), got "
                               f"{self.samples}")
        if not self.temperatures or not all(math.isfinite(t) and t > 0 for t in self.temperatures):
            raise NbmergeError(f"parameter 'temperatures' must be a non-empty list of positive numbers, got "
                               f"{list(self.temperatures)}")
        if self.margin <= 0:
            raise NbmergeError(f"parameter 'margin' must be > 0, got {self.margin}")


def as_dict(config) -> dict:
    return asdict(config)


def calibration_decision(point: Predictions, sampled: Predictions, point_ts: Predictions, sampled_ts: Predictions,
                         expert: Mapping[str, float], margin: float = NONINFERIORITY_MARGIN, seed: int = 0) -> dict:
    """B6 at one point estimate: accuracy non-inferiority (paired interval of normalized accuracy, sampled − point,
    above −margin) and the ECE difference under temperature scaling (its interval below 0); T = 1 reported.
    Not tested when a model sits at chance or the two predictive distributions coincide."""
    accuracy = protocol.paired_difference(sampled, point, expert, seed=seed)
    ece_scaled = ece_difference(sampled_ts, point_ts, seed=seed)
    ece_raw = ece_difference(sampled, point, seed=seed)
    distance = predictive_distance(sampled, point)
    why = protocol.vacuous(sampled, point, None, names=("sampled ensemble", "point estimate"))
    if why is None and distance < SAME_PREDICTIVE:
        why = (f"the sampled ensemble's predictive is the point estimate's (mean total-variation distance "
               f"{distance:.1e}): the chosen posterior temperature is too small to move any probability")
    lower = ece_scaled["high"] < 0
    kept = accuracy.low > -margin
    held = None if why else bool(lower and kept)
    evidence = (f"ECE sampled − point under temperature scaling {_ece_str(ece_scaled)}, at T = 1 "
                f"{_ece_str(ece_raw)}; normalized accuracy sampled − point {accuracy} (non-inferiority margin "
                f"−{margin:g})" + (f" (not tested: {why})" if why else ""))
    return {"held": held, "why": why, "accuracy": accuracy.to_dict(), "ece_scaled": ece_scaled, "ece_raw": ece_raw,
            "lower_ece": lower, "accuracy_kept": kept, "distance": distance, "evidence": evidence}


def _ece_str(d: dict) -> str:
    return f"{d['diff']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}] ({d['a']:.4f} vs {d['b']:.4f})"


@dataclass
class PosteriorRun:
    """B6 at one search seed: the point estimate, the validation sweep over τ, the chosen τ, both models on val
    and test, their fitted logit temperatures, and the decision."""

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
    alpha: float
    margin: float
    runs: list = field(default_factory=list)     # PosteriorRun per seed


def sweep_table(sweeps: Mapping[int, list], chosen: Mapping[int, dict], tunings: Mapping) -> list[dict]:
    """The validation sweep over τ, one row per seed and τ, with the point estimate's validation accuracy and
    whether the row is the chosen τ."""
    return [{"seed": seed, **row, "point accuracy": tunings[seed].val_predictions.mean_accuracy(),
             "chosen": row["temperature"] == chosen[seed]["temperature"]}
            for seed, rows in sweeps.items() for row in rows]


def seed_rows(study: CalibrationStudy) -> list[dict]:
    """Per seed: the chosen τ, test accuracy, NLL and ECE of both models at T = 1 and temperature-scaled, the ECE
    difference intervals and the accuracy interval."""
    rows = []
    for run in study.runs:
        s = run.summaries(study.expert)
        d = run.decision
        rows.append({"seed": run.seed, "τ": run.chosen["temperature"],
                     "acc point": s["point"]["accuracy"], "acc sampled": s["sampled"]["accuracy"],
                     "Δ normalized acc": str(Interval(**d["accuracy"])),
                     "ECE point (TS)": s["point_scaled"]["ece"], "ECE sampled (TS)": s["sampled_scaled"]["ece"],
                     "ΔECE (TS)": _interval_str(d["ece_scaled"]),
                     "ECE point (T=1)": s["point"]["ece"], "ECE sampled (T=1)": s["sampled"]["ece"],
                     "ΔECE (T=1)": _interval_str(d["ece_raw"]),
                     "NLL point (TS)": s["point_scaled"]["nll"], "NLL sampled (TS)": s["sampled_scaled"]["nll"],
                     "verdict": {True: "held", False: "did not hold", None: "not tested"}[d["held"]]})
    return rows


def _interval_str(d: dict) -> str:
    return f"{d['diff']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"


def task_rows(run: PosteriorRun, expert: Mapping[str, float]) -> list[dict]:
    """Per task and mean at one seed: accuracy, and ECE of both models at T = 1 and temperature-scaled."""
    s = run.summaries(expert)
    per = {name: {t: task_ece(p, t) for t in run.point_test.tasks} for name, p in (
        ("point", run.point_test), ("sampled", run.sampled_test),
        ("point_scaled", rescaled(run.point_test, run.point_temperatures)),
        ("sampled_scaled", rescaled(run.sampled_test, run.sampled_temperatures)))}
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


def calibration_claims(study: Optional[CalibrationStudy], detail: str = ""):
    """B6 over the search seeds (``protocol.over_seeds``): held only when every testable seed held."""
    text = ("sampling-based BMM (full Gaussian posterior) has a lower ECE than the point estimate, at no loss of "
            "accuracy (both with validation-fitted temperature scaling)")
    if study is None or not study.runs:
        why = "the sampled ensemble was not evaluated" + (f" ({detail})" if detail else "")
        return [claim(text, CALIBRATION_SOURCE, None, why, id="B6", paper=CALIBRATION_PAPER)]
    decisions = [r.decision for r in study.runs]
    held = protocol.over_seeds(decisions)
    scaled = [d["ece_scaled"]["diff"] for d in decisions]
    raw = [d["ece_raw"]["diff"] for d in decisions]
    accuracy = [d["accuracy"]["diff"] for d in decisions]
    ours = (f"ΔECE (TS) {_spread4(scaled)}; ΔECE (T = 1) {_spread4(raw)}; Δ normalized accuracy "
            f"{protocol.spread(accuracy)} pts")
    evidence = "; ".join(f"seed {r.seed} (τ = {r.chosen['temperature']:g}, {r.chosen['eligible_count']}/"
                         f"{len(r.sweep)} τ kept validation accuracy): {r.decision['evidence']}" for r in study.runs)
    evidence += (f". Held at a seed when the ECE interval under temperature scaling lies below 0 and the accuracy "
                 f"interval above −{study.margin:g} normalized pts; anchor {study.anchor} at α = {study.alpha:g}")
    if held is None:
        evidence += ". Not tested: " + "; ".join(sorted({d["why"] for d in decisions if d["why"]}))
    return [claim(text, CALIBRATION_SOURCE, held, evidence + (f"; {detail}" if detail else ""), id="B6",
                  paper=CALIBRATION_PAPER, ours=ours, suite=study.suite)]


def _spread4(values: Sequence[float]) -> str:
    v = np.asarray(values, dtype=float)
    sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return f"{v.mean():+.4f} ± {sd:.4f} ({v.min():+.4f}–{v.max():+.4f}, {len(v)} seeds)"


def calibration_headline(study: CalibrationStudy) -> dict:
    values = [r.decision["ece_scaled"]["diff"] for r in study.runs]
    return {"name": "test ECE, sampled − point estimate, both temperature-scaled (mean over seeds)",
            "value": float(np.mean(values)) if values else float("nan"), "format": "{:+.4f}"}


def calibration_metrics(study: CalibrationStudy) -> dict:
    """JSON-able numbers of the B6 study for metrics.json."""
    return {"anchor": study.anchor, "alpha": study.alpha, "margin": study.margin,
            "seeds": [{"seed": r.seed, "tuning": r.tuning, "sweep": r.sweep, "chosen": r.chosen,
                       "noise": noise_summary(r.noise), "point_temperatures": r.point_temperatures,
                       "sampled_temperatures": r.sampled_temperatures, "decision": r.decision,
                       "test": r.summaries(study.expert),
                       "reliability": {"point": reliability(r.point_test), "sampled": reliability(r.sampled_test)}}
                      for r in study.runs]}
