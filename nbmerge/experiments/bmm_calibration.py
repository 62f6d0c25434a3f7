"""The logic behind ``notebooks/22_bmm_datafree.ipynb`` (claim B5 and Theorem 1) and ``notebooks/21_bmm_calibration.ipynb``
(claim B6) of BMM (Bayesian Model Merging, arXiv 2605.12843).

* **B5, data-free validity.** Theorem 1: the input Gram E[xxᵀ] is positively correlated with Σ_t τ_tᵀτ_t, so the
  data-free BMM (G_t ≈ c·τ_tᵀτ_t) performs comparably to the data-assisted one. Checked twice: per module (cosine
  of the two matrices against its random-eigenbasis baseline, overlap of their top-k eigen-subspaces against chance
  k/d, each with a bootstrap interval over modules), and end to end: per anchor and per search seed, BMM with each
  Gram source tuned by the same search (strategy, budget, seed, bounds) on the same validation subset, compared on
  test by a paired interval.
* **B6, calibration.** Sampling from the row-wise Gaussian posterior U_row ~ N(U*_row, σ²(XXᵀ + λI)⁻¹) and averaging
  the predictive probabilities over S draws lowers the expected calibration error (ECE) against the point estimate
  U*, at no loss of accuracy.

The protocol (stated again in the notebooks):

* **Anchors are tuned like every method**: α on the validation subset over ``protocol.SCALE_GRID``
  (``protocol.tune_method``, the recipe the tour, ACE and BMM benchmark notebooks use, so the trial cache is
  shared); BMM's prior mean is the anchor at α*. BMM's search (``nbmerge.tune.bmm.tune_bmm``) sees the same seeded
  validation subset; its anchor's and best merge's predictions go through the trial cache, its trial log lives
  under the nbmerge cache (``<cache>/trials/<suite>-<zoo>/logs/``), so a second run recomputes nothing.
* **Seeds.** A search is one random draw (its initial design and its GP), so every search runs at each seed of
  ``seeds`` (≥ 3 by default) and the verdicts say how the seeds agree, with the spread.
* **B5 is an equivalence test** (:func:`compare_sources`): per anchor and seed, the stratified paired bootstrap 95%
  interval of normalized test accuracy, data-free − data-assisted, must lie inside ±``margin`` points (held); it
  did not hold when the interval lies wholly outside; inconclusive when it straddles the margin. Not tested when
  both variants sit at chance or both collapsed onto their anchor (≥ 99.5% identical test predictions): a search
  that drove both to the anchor (λ → ∞) compares the anchor with itself. Each variant's own interval against the
  anchor is reported, so a reader sees that it moved. Over seeds (and anchors): held when every testable unit held,
  did not hold when one did not, not tested when one was inconclusive or none could be tested.
* **The B5 margin** is :data:`EQUIVALENCE_MARGIN` normalized points. The paper's gap (95.1% vs 95.0%, ViT-L/14,
  8 tasks) is far below what our test sets resolve: two merges that disagree on a share d of the N test examples
  have a 95% interval of about ±196·√(d/N) points even when they are equally good (±1.3 points at d = 10%,
  N = 2,400, text8); the margin has to exceed that for equivalence to be provable at all, and 2 points stays well
  under the gains over anchors BMM claims (B1: several points, up to 27% relative).
* **B6 compares like with like.** Both the point estimate and the sampled ensemble get classical **logit
  temperature scaling** (Guo et al. 2017: one temperature per task head, fitted by validation NLL; it leaves
  accuracy unchanged) and are compared under it; both are also reported at T = 1 (no scaling). Not to be confused
  with the **posterior temperature** τ: σ² = τ·σ̂² per module, σ̂² = ‖Y − U*X‖²/(N·d_out) the residual noise over the
  N tokens behind the Grams (τ = 1 is the textbook Bayesian-regression posterior, far too narrow to change a
  prediction: tokens are not independent). τ is chosen on the validation subset from a small log grid by the
  ensemble's NLL *after* its temperature scaling, among the τ whose validation accuracy stays within ``margin`` of
  the point estimate's (calibration bought with accuracy is not the claim).
* **B6 verdict** per search seed: held when (1) the ECE of the temperature-scaled ensemble is lower than the
  temperature-scaled point estimate's, the 95% interval of the difference (paired bootstrap over test examples,
  stratified by task, :func:`ece_difference`) excluding 0, and (2) accuracy is non-inferior: the paired 95% interval
  of normalized accuracy, ensemble − point, lies above −``margin`` (:data:`NONINFERIORITY_MARGIN` points: the
  resolution of a paired interval between two nearly identical models on 2,400 examples, ±196·√(d/N) ≈ ±0.9 points
  at d = 5% disagreement). Not tested when a model sits at chance or the ensemble's predictive distribution is the
  point estimate's (the chosen τ too small to move any probability). Over seeds: ``protocol.over_seeds``.
* ECE: 15 equal-width confidence bins per task, mean over tasks (the zoo evaluator's ECE).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import torch

from .. import protocol
from ..device import resolve_device
from ..diagnostics import gram_alignment
from ..errors import NbmergeError
from ..io import atomic_write_text
from ..methods import get_method
from ..methods.bmm import task_vector_gram
from ..modules import MODULE_TYPES
from ..protocol import COLLAPSED_AGREEMENT, Interval, Predictions
from ..pools.zoo import expert_grams, load_models
from ..tune.bmm import BMMTuning, tune_bmm
from .common import check_config, claim

ECE_BINS = 15
SEEDS = (0, 1, 2)
# B5: data-free within ±this many normalized-accuracy points of data-assisted (see the module docstring).
EQUIVALENCE_MARGIN = 2.0
# B6: the ensemble's normalized accuracy may be at most this many points below the point estimate's.
NONINFERIORITY_MARGIN = 1.0
# Posterior temperatures τ (σ² = τ·σ̂²). τ = 1 is the textbook posterior and changes no prediction; on text8 the
# ensemble's validation accuracy and NLL barely move up to τ = 10³ (seed 0: accuracy 67.25% → 67.50%, NLL 1.038 →
# 1.033), and on the vision zoo the draws break down near 10⁴ (validation accuracy 75% → 57%): the default grid
# spans the range where sampling can matter; the paper profile sweeps 1 … 10⁴ in half decades.
POSTERIOR_TEMPERATURES = (1000.0, 10000.0)
# The ensemble's predictive equals the point estimate's when their mean total-variation distance is below this.
SAME_PREDICTIVE = 1e-3
# Logit temperature scaling: 1/T searched in this range (T from 0.01 to 100).
INVERSE_TEMPERATURE_BOUNDS = (1e-2, 1e2)
GRAM_LABELS = {"data": "data-assisted", "task_vector": "data-free"}
SOURCE_SOURCE = "BMM, arXiv 2605.12843, abstract (ViT-L/14, 8 tasks) and the data-free ablation"
SOURCE_PAPER = "ViT-L/14, 8 tasks: 95.1% (abstract's headline) vs 95.0% data-free (paper body, not checked here)"
THEOREM_SOURCE = "BMM, arXiv 2605.12843, Theorem 1"
THEOREM_PAPER = "E[xxᵀ] positively correlated with Σ_t τ_tᵀτ_t (a theorem under neural-collapse assumptions)"
CALIBRATION_SOURCE = "BMM, arXiv 2605.12843, Appendix B (sampling-based BMM, calibration)"
CALIBRATION_PAPER = ("sampling-based BMM: lower ECE than the point estimate at no loss of accuracy (its numbers not "
                     "reproduced here)")


# ------------------------------------------------------------------------------------------------------ configs

@dataclass(frozen=True)
class DatafreeConfig:
    suite: str = "text8"
    device: str = "cpu"
    seed: int = 0                    # the validation subset's and the Gram sample's seed (shared with every notebook)
    seeds: tuple = SEEDS             # search seeds: every search runs at each
    smoke: bool = False
    anchors: tuple = ("task_arithmetic",)   # BMM's prior mean, α tuned on validation; each tuned with both sources
    strategy: str = "bayes"          # nbmerge.tune.search strategy, the same for both sources
    budget: int = 8                  # trials per search
    val_examples: int = 100          # validation subset per task the searches and α see (0: the whole split)
    gram_examples: int = 256         # training examples per task behind the data Grams
    k_fraction: float = 0.1          # top-k eigen-subspace compared: k = round(k_fraction·d_in)
    margin: float = EQUIVALENCE_MARGIN   # "comparable": the 95% interval inside ±margin normalized points
    cache: str = ""                  # nbmerge cache folder; "" means $NBMERGE_CACHE or ~/.cache/nbmerge

    def __post_init__(self):
        check_config(self)
        for name in ("seeds", "anchors"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "device", resolve_device(self.device))
        _check_common(self)
        if not self.anchors:
            raise NbmergeError("parameter 'anchors' must name at least one merge method")
        for anchor in self.anchors:
            if "grams" in get_method(anchor).needs:
                raise NbmergeError(f"anchor {anchor!r} needs data Grams: the data-free BMM built on it would use "
                                   "data; B5 compares the Gram sources, so its anchors must be data-free")
        if not 0.0 < self.k_fraction <= 1.0:
            raise NbmergeError(f"parameter 'k_fraction' must be in (0, 1], got {self.k_fraction}")
        if self.margin <= 0:
            raise NbmergeError(f"parameter 'margin' must be > 0, got {self.margin}")


@dataclass(frozen=True)
class CalibrationConfig:
    suite: str = "text8"
    device: str = "cpu"
    seed: int = 0                    # the validation subset's and the Gram sample's seed
    seeds: tuple = SEEDS             # search seeds (each also seeds its posterior draws)
    smoke: bool = False
    anchor: str = "task_arithmetic"  # the prior mean of the tuned (data-assisted) BMM, α tuned on validation
    strategy: str = "bayes"
    budget: int = 8
    val_examples: int = 100
    gram_examples: int = 256
    samples: int = 4                 # posterior draws averaged per prediction
    temperatures: tuple = POSTERIOR_TEMPERATURES   # posterior temperatures τ (σ² = τ·σ̂²), chosen on validation
    margin: float = NONINFERIORITY_MARGIN          # accuracy non-inferiority margin, normalized points
    cache: str = ""

    def __post_init__(self):
        check_config(self)
        object.__setattr__(self, "seeds", tuple(self.seeds))
        object.__setattr__(self, "temperatures", tuple(float(t) for t in self.temperatures))
        object.__setattr__(self, "device", resolve_device(self.device))
        _check_common(self)
        get_method(self.anchor)
        if self.samples < 2:
            raise NbmergeError(f"parameter 'samples' must be >= 2 (an average over posterior draws), got "
                               f"{self.samples}")
        if not self.temperatures or not all(math.isfinite(t) and t > 0 for t in self.temperatures):
            raise NbmergeError(f"parameter 'temperatures' must be a non-empty list of positive numbers, got "
                               f"{list(self.temperatures)}")
        if self.margin <= 0:
            raise NbmergeError(f"parameter 'margin' must be > 0, got {self.margin}")


def _check_common(config) -> None:
    if config.budget < 1:
        raise NbmergeError(f"parameter 'budget' must be >= 1, got {config.budget}")
    if config.gram_examples < 1:
        raise NbmergeError(f"parameter 'gram_examples' must be >= 1, got {config.gram_examples}")
    if config.val_examples < 0:
        raise NbmergeError(f"parameter 'val_examples' must be >= 0 (0: the whole split), got {config.val_examples}")
    if not config.seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in config.seeds) \
            or len(set(config.seeds)) != len(config.seeds):
        raise NbmergeError(f"parameter 'seeds' must be distinct integers, got {list(config.seeds)}")


def as_dict(config) -> dict:
    return asdict(config)


# ------------------------------------------------------------------------------------- the zoo, the cache, tuning

def open_trials(config, log: Callable = lambda *_: None):
    """The zoo (built first if it is an embedded suite that is missing) and its shared trial cache, whose ``val``
    split is the seeded validation subset every notebook tunes on."""
    from ..pools.zoo import open_zoo

    zoo = open_zoo(config.suite, config.cache)
    return zoo, protocol.trial_cache(zoo, config.device, config.cache, config.val_examples, config.seed, log=log)


def tune_anchor(cache: protocol.TrialCache, zoo, anchor: str, *, gram_examples: int = 256, seed: int = 0,
                device: str = "cpu") -> protocol.Tuned:
    """The anchor's α chosen on the validation subset over ``protocol.SCALE_GRID``, under the canonical recipe (the
    same cache entries as the tour's and the ACE/BMM notebooks'). Data Grams only for an anchor that needs them."""
    base, experts = load_models(zoo)
    data = "grams" in get_method(anchor).needs
    return protocol.tune_method(cache, anchor, base, experts, {},
                                grams=(lambda: expert_grams(zoo, gram_examples, seed)) if data else None,
                                grams_name=protocol.gram_name(gram_examples, seed) if data else None, device=device)


def suite_name(zoo) -> str:
    return zoo.manifest.get("suite") or zoo.root.name


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:10]


def search_log(cache: protocol.TrialCache, anchor: str, gram: str, seed: int, identity: Mapping) -> Optional[Path]:
    """The resumable trial log of one search, under the trial cache's folder (``<cache>/trials/<suite>-<zoo>/logs``,
    never the notebook's run folder): named by what the log's identity checks, so another budget, α, subset or
    Gram sample starts a new log instead of being refused by the old one. ``None`` for a memory-only cache."""
    if cache.root is None:
        return None
    path = cache.root / "logs" / f"bmm-{anchor}-{gram}-seed{seed}-{_digest(dict(identity))}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def tune(zoo, cache: protocol.TrialCache, anchor: str, alpha: float, gram: str, *, seed: int, strategy: str = "bayes",
         budget: int = 8, gram_examples: int = 256, gram_seed: int = 0, device: str = "cpu",
         memo: Optional[dict] = None) -> BMMTuning:
    """``tune_bmm`` under this module's protocol: the anchor at its validation-chosen α, the search on the cache's
    validation subset with ``seed``, the data Grams sampled with ``gram_seed``, its log under the cache. ``memo``:
    shared by the searches of one study, so the models, Grams, anchor and factorised solver are built once."""
    anchor_params = {"scale": float(alpha)}
    identity = {"anchor_params": anchor_params, "strategy": strategy, "budget": budget, "gram_seed": gram_seed,
                "gram_examples": gram_examples if gram != "task_vector" else None,
                "val": cache.evaluator.subset_spec("val")}
    return tune_bmm(zoo, anchor, anchor_params=anchor_params, grams=gram, strategy=strategy, budget=budget,
                    seed=seed, gram_seed=gram_seed, gram_examples=gram_examples, device=device, progress=False,
                    log_path=search_log(cache, anchor, gram, seed, identity), cache=cache, memo=memo)


def stored(cache: protocol.TrialCache, kind: str, key, compute: Callable[[], object]):
    """A small JSON-able result kept beside the trial cache (``<root>/<kind>/<hash of key>.json``), so that a warm
    run reads it instead of recomputing (Grams, factorisations). Memory-only caches always compute."""
    if cache.root is None:
        return compute()
    path = cache.root / kind / f"{_digest(key)}.json"
    if path.exists():
        try:
            return json.loads(path.read_text())["value"]
        except (ValueError, KeyError):
            pass  # a damaged entry is recomputed
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"key": key, "value": value}, default=str))
    return value


# ================================================================================== B5: Theorem 1, per module

def alignment(base, experts, grams, k_fraction: float = 0.1, device: str = "cpu") -> list[dict]:
    """``gram_alignment``'s rows (cosine, top-k overlap and its chance k/d per module), plus ``chance_cosine``.

    Two PSD matrices always have a cosine ≥ 0, so "positive" says nothing by itself. The baseline is the cosine
    expected if Σ_t τ_tᵀτ_t kept its spectrum but had a random eigenbasis: E_Q⟨A, QBQᵀ⟩ = tr A·tr B/d for Haar Q,
    so chance_cosine = tr A·tr B/(d·‖A‖_F‖B‖_F). ``cosine_ratio`` and ``overlap_ratio`` divide by the baselines.
    """
    rows = gram_alignment(base, experts, grams, k_fraction=k_fraction, device=device)
    for row in rows:
        key = row["key"]
        data = sum(g[key].double() for g in grams)
        proxy = sum(task_vector_gram(e[key].double() - base[key].double()) for e in experts)
        norms = float(data.norm() * proxy.norm())
        chance = float(data.trace() * proxy.trace()) / (row["d_in"] * norms) if norms > 0 else float("nan")
        row["chance_cosine"] = chance
        row["cosine_ratio"] = row["cosine"] / chance if chance > 0 else float("nan")
        row["overlap_ratio"] = row["overlap"] / row["chance"]
    return rows


def alignment_summary(rows: Sequence[dict]) -> list[dict]:
    """Per module type (and "all"): modules, median cosine and its baseline, median overlap and chance, and the
    share of modules above *both* baselines."""
    out = []
    for kind in (*MODULE_TYPES, "all"):
        chosen = [r for r in rows if kind == "all" or r["module_type"] == kind]
        if not chosen:
            continue
        above = [r["cosine"] > r["chance_cosine"] and r["overlap"] > r["chance"] for r in chosen]
        out.append({"module_type": kind, "modules": len(chosen),
                    "cosine": median(r["cosine"] for r in chosen),
                    "chance_cosine": median(r["chance_cosine"] for r in chosen),
                    "overlap": median(r["overlap"] for r in chosen),
                    "chance_overlap": median(r["chance"] for r in chosen),
                    "above_both": sum(above) / len(above)})
    return out


def alignment_study(config: DatafreeConfig, cache: Optional[protocol.TrialCache] = None, zoo=None) -> list[dict]:
    """Theorem 1 on ``config.suite``: ``alignment`` with the experts' data Grams (``gram_examples`` training examples
    per task, sampled with ``seed``: the Grams the data-assisted BMM uses). Kept beside the trial cache, so a warm
    run collects no Grams."""
    if cache is None:
        zoo, cache = open_trials(config)

    def compute():
        base, experts = load_models(zoo)
        grams = expert_grams(zoo, config.gram_examples, config.seed)
        return alignment(base, experts, grams, config.k_fraction, config.device)

    key = {"alignment": 1, "gram_examples": config.gram_examples, "seed": config.seed, "k_fraction": config.k_fraction}
    return stored(cache, "bmm-alignment", key, compute)


def ratio_interval(rows: Sequence[dict], key: str, n_boot: int = protocol.BOOTSTRAP, seed: int = 0,
                   level: float = protocol.LEVEL) -> dict:
    """Median over modules of ``key`` (a ratio to its chance baseline) with a bootstrap 95% interval over modules
    (modules resampled with replacement): how robust "typically above chance" is to which modules we looked at."""
    values = np.array([r[key] for r in rows if math.isfinite(r[key])], dtype=float)
    if len(values) == 0:
        return {"median": float("nan"), "low": float("nan"), "high": float("nan"), "modules": 0}
    rng = np.random.default_rng(seed)
    boots = np.median(values[rng.integers(0, len(values), size=(n_boot, len(values)))], axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(boots, [tail, 1 - tail])
    return {"median": float(np.median(values)), "low": float(low), "high": float(high), "modules": len(values),
            "above": int((values > 1).sum())}


def theorem_claim(rows: Sequence[dict], suite: str = "", seed: int = 0):
    """Theorem 1's premise as a verdict: held when the bootstrap 95% intervals (over modules) of the median
    cosine/baseline and top-k-overlap/chance ratios both lie above 1; did not hold otherwise."""
    text = ("Theorem 1 (B5's premise): the input Gram E[xxᵀ] is positively correlated with Σ_t τ_tᵀτ_t, beyond what "
            "their spectra alone give")
    if not rows:
        return claim(text, THEOREM_SOURCE, None, "not tested: no module with a data Gram", id="B5",
                     paper=THEOREM_PAPER, suite=suite)
    cosine = ratio_interval(rows, "cosine_ratio", seed=seed)
    overlap = ratio_interval(rows, "overlap_ratio", seed=seed)
    held = cosine["low"] > 1 and overlap["low"] > 1
    ours = (f"median cosine/baseline {cosine['median']:.2f} [{cosine['low']:.2f}, {cosine['high']:.2f}], "
            f"overlap/chance {overlap['median']:.2f} [{overlap['low']:.2f}, {overlap['high']:.2f}]")
    evidence = (f"{len(rows)} modules: cosine above its random-eigenbasis baseline in {cosine['above']}/"
                f"{cosine['modules']}, top-k overlap above chance k/d in {overlap['above']}/{overlap['modules']}; "
                "held = both medians' bootstrap 95% intervals over modules above 1")
    return claim(text, THEOREM_SOURCE, held, evidence, id="B5", paper=THEOREM_PAPER, ours=ours, suite=suite)


# ================================================================================== B5: data-free vs data-assisted

def compare_sources(data: Predictions, free: Predictions, anchor: Predictions, expert: Mapping[str, float],
                    margin: float = EQUIVALENCE_MARGIN, seed: int = 0) -> dict:
    """One equivalence decision, data-free − data-assisted, in normalized test points (paired 95% interval).

    Returns {"held", "inconclusive", "why", "gap", "data_vs_anchor", "free_vs_anchor", "evidence"} (intervals as
    dicts). Not tested (held None) when a variant sits at chance, or when both collapsed onto the anchor (then the
    comparison is the anchor against itself); inconclusive (held None) when the interval straddles ±margin."""
    gap = protocol.paired_difference(free, data, expert, seed=seed)
    moved = {name: protocol.paired_difference(p, anchor, expert, seed=seed)
             for name, p in (("data", data), ("free", free))}
    why = protocol.vacuous(free, data, None, names=("data-free BMM", "data-assisted BMM"))
    if why is None and all(m.agreement >= COLLAPSED_AGREEMENT for m in moved.values()):
        why = (f"both variants collapsed onto the anchor (the same test prediction on "
               f"{100 * moved['data'].agreement:.1f}% and {100 * moved['free'].agreement:.1f}% of examples)")
    inconclusive = False
    if why is not None:
        held = None
    elif -margin < gap.low and gap.high < margin:
        held = True
    elif gap.low >= margin or gap.high <= -margin:
        held = False
    else:
        held, inconclusive = None, True
        why = f"inconclusive: the interval straddles the ±{margin:g}-point margin"
    evidence = f"data-free − data-assisted = {gap}" + (f" ({why})" if why else "")
    return {"held": held, "inconclusive": inconclusive, "why": why, "gap": gap.to_dict(),
            "data_vs_anchor": moved["data"].to_dict(), "free_vs_anchor": moved["free"].to_dict(),
            "evidence": evidence}


def combine(decisions: Sequence[dict]) -> dict:
    """Equivalence over units (seeds, anchors): held when every testable unit held; did not hold when one did not;
    not tested when one was inconclusive (equivalence not shown there) or none could be tested. Returns a decision
    of the same shape ({"held", "inconclusive", "why"}), so anchors combine seeds and the claim combines anchors."""
    if any(d["held"] is False for d in decisions):
        return {"held": False, "inconclusive": False, "why": None}
    if any(d.get("inconclusive") for d in decisions):
        return {"held": None, "inconclusive": True,
                "why": "equivalence not shown at every seed (an interval straddles the margin)"}
    if not any(d["held"] for d in decisions):
        return {"held": None, "inconclusive": False,
                "why": "no seed could test it: " + "; ".join(sorted({d["why"] for d in decisions if d["why"]}))}
    return {"held": True, "inconclusive": False, "why": None}


@dataclass
class SourceRun:
    """One tuned BMM of the B5 study: its anchor, Gram source and search seed, with test predictions."""

    anchor: str
    gram: str
    seed: int
    summary: dict
    test: Predictions = field(repr=False)


@dataclass
class SourceStudy:
    """Everything B5's end-to-end half computed: anchors at α*, the runs, the decisions per anchor and seed."""

    suite: str
    tasks: list
    expert: dict
    margin: float
    anchors: dict = field(default_factory=dict)      # anchor → {"alpha", "test": Predictions, "normalized"}
    runs: list = field(default_factory=list)         # SourceRun
    decisions: dict = field(default_factory=dict)    # anchor → [compare_sources(...) + {"seed"}]

    def run(self, anchor: str, gram: str, seed: int) -> SourceRun:
        return next(r for r in self.runs if (r.anchor, r.gram, r.seed) == (anchor, gram, seed))


def gram_source_study(config: DatafreeConfig, cache: Optional[protocol.TrialCache] = None, zoo=None,
                      log=print) -> SourceStudy:
    """Per anchor (α on validation) and search seed: BMM with data Grams and data-free, each tuned by the same
    search on the same validation subset, tested once; then :func:`compare_sources` per seed."""
    if cache is None:
        zoo, cache = open_trials(config)
    expert = {t: zoo.manifest["expert_accuracy"]["test"][t] for t in zoo.tasks}
    study = SourceStudy(suite_name(zoo), list(zoo.tasks), expert, config.margin)
    memo: dict = {}   # Grams, anchor and solvers built once for all seeds
    for anchor in config.anchors:
        tuned = tune_anchor(cache, zoo, anchor, gram_examples=config.gram_examples, seed=config.seed,
                            device=config.device)
        for seed in config.seeds:
            for gram in ("data", "task_vector"):
                start = time.perf_counter()
                tuning = tune(zoo, cache, anchor, tuned.alpha, gram, seed=seed, strategy=config.strategy,
                              budget=config.budget, gram_examples=config.gram_examples, gram_seed=config.seed,
                              device=config.device, memo=memo)
                if anchor not in study.anchors:
                    test = tuning.anchor_predictions["test"]
                    study.anchors[anchor] = {"alpha": tuned.alpha, "test": test, "normalized": test.normalized(expert),
                                             "curve": tuned.curve}
                summary = {"val_accuracy": tuning.val_accuracy, "normalized": tuning.test_predictions.normalized(expert),
                           "test_accuracy": tuning.test_accuracy, "params": tuning.search.best_params,
                           "replayed": tuning.search.replayed, "seconds": time.perf_counter() - start}
                study.runs.append(SourceRun(anchor, gram, seed, summary, tuning.test_predictions))
            decision = compare_sources(study.run(anchor, "data", seed).test, study.run(anchor, "task_vector", seed).test,
                                       study.anchors[anchor]["test"], expert, config.margin, seed=seed)
            study.decisions.setdefault(anchor, []).append({**decision, "seed": seed})
            log(f"{anchor:<16} seed {seed}: {decision['evidence']}")
    return study


def source_rows(study: SourceStudy) -> list[dict]:
    """The table: per anchor, seed and source, normalized test accuracy, its interval against the anchor (did the
    variant move?) and the agreement with the anchor; then the seed's gap interval and decision."""
    rows = []
    for anchor, decisions in study.decisions.items():
        info = study.anchors[anchor]
        rows.append({"anchor": anchor, "seed": "", "Grams": f"anchor alone (α = {info['alpha']:g})",
                     "normalized": info["normalized"], "val": "", "vs anchor": "", "agreement": "",
                     "free − data": "", "decision": ""})
        for decision in decisions:
            for gram, key in (("data", "data_vs_anchor"), ("task_vector", "free_vs_anchor")):
                run = study.run(anchor, gram, decision["seed"])
                moved = Interval(**decision[key])
                rows.append({"anchor": anchor, "seed": decision["seed"], "Grams": GRAM_LABELS[gram],
                             "normalized": run.summary["normalized"], "val": run.summary["val_accuracy"],
                             "vs anchor": str(moved), "agreement": f"{moved.agreement:.1%}",
                             "free − data": str(Interval(**decision["gap"])) if gram == "task_vector" else "",
                             "decision": _verdict_word(decision) if gram == "task_vector" else ""})
    return rows


def _verdict_word(decision: dict) -> str:
    if decision["held"] is None:
        return "inconclusive" if decision.get("inconclusive") else "not tested"
    return "equivalent" if decision["held"] else "not equivalent"


def datafree_claims(study: Optional[SourceStudy], alignment_rows: Sequence[dict], suite: str = "", seed: int = 0):
    """B5 (end to end, equivalence over anchors × seeds) and Theorem 1's premise (intervals over modules)."""
    text = "data-free BMM performs comparably to data-assisted BMM"
    if study is None or not study.decisions:
        out = [claim(text, SOURCE_SOURCE, None, "not tested: no anchor was run (parameter `anchors`)", id="B5",
                     paper=SOURCE_PAPER, suite=suite)]
    else:
        overall = combine([combine(decisions) for decisions in study.decisions.values()])
        held, why = overall["held"], overall["why"]
        gaps = [d["gap"]["diff"] for ds in study.decisions.values() for d in ds]
        lows = [d["gap"]["low"] for ds in study.decisions.values() for d in ds]
        highs = [d["gap"]["high"] for ds in study.decisions.values() for d in ds]
        ours = (f"free − data {protocol.spread(gaps)} normalized pts; intervals within "
                f"[{min(lows):+.2f}, {max(highs):+.2f}] (margin ±{study.margin:g})")
        parts = []
        for anchor, decisions in study.decisions.items():
            info = study.anchors[anchor]
            moved = "; ".join(f"seed {d['seed']}: data vs anchor {Interval(**d['data_vs_anchor'])}, free vs anchor "
                              f"{Interval(**d['free_vs_anchor'])}, {d['evidence']}" for d in decisions)
            parts.append(f"{anchor} (α = {info['alpha']:g}, {100 * info['normalized']:.1f}% normalized): {moved}")
        units = [d for ds in study.decisions.values() for d in ds if d["why"] is None or d.get("inconclusive")]
        ahead = sum(d["gap"]["low"] > 0 for d in units)
        behind = sum(d["gap"]["high"] < 0 for d in units)
        evidence = ("; ".join(parts) + f". Equivalence: the paired 95% interval of normalized test accuracy inside "
                    f"±{study.margin:g} pts at every seed and anchor; same search, budget, seed and validation subset "
                    f"for both sources. Direction: data-free significantly ahead at {ahead}, behind at {behind} of "
                    f"{len(units)} testable seed × anchor pairs (non-inferiority, interval above −{study.margin:g}: "
                    f"{sum(d['gap']['low'] > -study.margin for d in units)}/{len(units)})"
                    + (f". Not tested: {why}" if held is None else ""))
        out = [claim(text, SOURCE_SOURCE, held, evidence, id="B5", paper=SOURCE_PAPER, ours=ours,
                     suite=study.suite)]
    out.append(theorem_claim(alignment_rows, suite or (study.suite if study else ""), seed))
    return out


def datafree_headline(study: SourceStudy) -> dict:
    gaps = [d["gap"]["diff"] for ds in study.decisions.values() for d in ds]
    return {"name": "data-free − data-assisted BMM, normalized test points (mean over anchors × seeds)",
            "value": float(np.mean(gaps)) if gaps else float("nan"), "format": "{:+.2f}"}


def study_metrics(study: SourceStudy) -> dict:
    """JSON-able numbers of the B5 study for metrics.json."""
    return {"anchors": {a: {k: v for k, v in info.items() if k != "test"} for a, info in study.anchors.items()},
            "runs": [{"anchor": r.anchor, "gram": r.gram, "seed": r.seed, **r.summary} for r in study.runs],
            "decisions": study.decisions, "margin": study.margin}


# ------------------------------------------------------------------------------------------- figures (B5)

_TYPE_STYLE = {"attn_in": ("#4c72b0", "o"), "attn_out": ("#55a868", "s"), "mlp_in": ("#dd8452", "^"),
               "mlp_out": ("#c44e52", "D")}


def plot_alignment(rows: Sequence[dict]):
    """Cosine (left) and top-k overlap (right) per module across depth, one line per module type, with the
    baselines dashed."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.9), sharex=True)
    for kind in MODULE_TYPES:
        chosen = sorted((r for r in rows if r["module_type"] == kind), key=lambda r: r["depth"] or 0)
        if not chosen:
            continue
        color, marker = _TYPE_STYLE[kind]
        depth = [r["depth"] for r in chosen]
        for ax, value, chance in ((axes[0], "cosine", "chance_cosine"), (axes[1], "overlap", "chance")):
            ax.plot(depth, [r[value] for r in chosen], marker=marker, color=color, label=kind)
            ax.plot(depth, [r[chance] for r in chosen], linestyle="--", color=color, alpha=0.6)
    axes[0].set_title("cosine(Σ_t X_tX_tᵀ, Σ_t τ_tᵀτ_t)")
    axes[0].set_ylabel("Frobenius cosine")
    axes[1].set_title("overlap of the top-k eigen-subspaces")
    axes[1].set_ylabel("‖Q_dataᵀ Q_τ‖²_F / k")
    for ax in axes:
        ax.set_xlabel("block (depth)")
        ax.set_ylim(0, 1.02)
    axes[0].legend(fontsize=8, title="solid: measured, dashed: chance", title_fontsize=7)
    fig.tight_layout()
    return fig


def plot_sources(study: SourceStudy):
    """Left: normalized test accuracy per anchor — the anchor (bar), each seed's data-assisted and data-free BMM
    (dots). Right: each seed's paired 95% interval of data-free − data-assisted, with the ±margin band."""
    import matplotlib.pyplot as plt

    anchors = list(study.decisions)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    x = np.arange(len(anchors))
    axes[0].bar(x, [100 * study.anchors[a]["normalized"] for a in anchors], 0.6, color="#d0d0d0",
                label="anchor at α*")
    for offset, gram, color in ((-0.12, "data", "#4c72b0"), (0.12, "task_vector", "#dd8452")):
        for i, anchor in enumerate(anchors):
            values = [100 * r.summary["normalized"] for r in study.runs if (r.anchor, r.gram) == (anchor, gram)]
            axes[0].plot([i + offset] * len(values), values, "o", color=color,
                         label=f"BMM {GRAM_LABELS[gram]} (one dot per seed)" if i == 0 else None)
    values = [100 * study.anchors[a]["normalized"] for a in anchors] + [100 * r.summary["normalized"]
                                                                        for r in study.runs]
    axes[0].set_ylim(max(0.0, min(values) - 5), max(values) + 3)
    axes[0].set_xticks(x, anchors, fontsize=8)
    axes[0].set_ylabel("normalized test accuracy (%)")
    axes[0].legend(fontsize=7)
    labels, position = [], 0
    for anchor in anchors:
        for decision in study.decisions[anchor]:
            gap = decision["gap"]
            color = {True: "#55a868", False: "#c44e52", None: "#8c8c8c"}[decision["held"]]
            axes[1].errorbar([position], [gap["diff"]], yerr=[[gap["diff"] - gap["low"]], [gap["high"] - gap["diff"]]],
                             fmt="o", color=color, capsize=4)
            labels.append(f"{anchor}\nseed {decision['seed']}")
            position += 1
    axes[1].axhspan(-study.margin, study.margin, color="#55a868", alpha=0.12, label=f"±{study.margin:g} pts margin")
    axes[1].axhline(0, color="black", linewidth=0.8)
    axes[1].set_xticks(range(len(labels)), labels, fontsize=7)
    axes[1].set_ylabel("data-free − data-assisted (normalized pts)")
    axes[1].set_title("paired 95% interval per seed", fontsize=9)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


# ================================================================================================ B6: calibration

def gram_tokens(zoo, gram_examples: int, seed: int = 0) -> int:
    """N behind the zoo's sum Grams (``expert_grams``): the tokens of the examples ``collect_grams`` records with
    ``seed``, over the tasks (images: examples × tokens per image; texts: their unpadded tokens)."""
    from ..pools.zoo import gram_sample

    return sum(zoo.arch.tokens(zoo.arrays[t]["train_x"][gram_sample(zoo, t, gram_examples, seed)])
               for t in zoo.tasks)


def posterior_noise(cache: protocol.TrialCache, zoo, tuning: BMMTuning) -> dict[str, float]:
    """σ̂² per linear module at the tuned point (the τ = 1 noise): the residual variance per token and output,
    N = the tokens behind the data Grams. Kept beside the trial cache (it needs the solver)."""
    gram_examples, gram_seed = tuning.settings["gram_examples"], tuning.settings["gram_seed"]

    def compute():
        tokens = gram_tokens(zoo, gram_examples, gram_seed)
        return tuning.build_solver().noise_variance(tuning.lambdas, tokens=tokens)

    return stored(cache, "bmm-noise", {"point": tuning.recipe, "noise": "residual per token"}, compute)


def draw_generator(seed: int, index: int) -> torch.Generator:
    """The CPU generator of posterior draw ``index`` under ``seed``: each draw has its own stream, so a draw is
    cached by (seed, index) alone, and the same standard-normal draws are scaled at every posterior temperature."""
    state = np.random.SeedSequence([int(seed), int(index)]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator(device="cpu").manual_seed(int(state) & ((1 << 63) - 1))


def draw_recipe(point_recipe: dict, temperature: float, seed: int, index: int) -> dict:
    """The trial-cache recipe of one posterior draw: the point estimate's recipe, σ² = τ·σ̂², the draw's seed/index."""
    return {"method": "bmm_posterior_draw", "point": point_recipe, "sigma2": "temperature x residual variance",
            "temperature": float(temperature), "seed": int(seed), "draw": int(index)}


def posterior_draws(cache: protocol.TrialCache, tuning, noise: Callable[[], Mapping[str, float]], temperature: float,
                    samples: int, seed: int, split: str) -> list[Predictions]:
    """Predictions of ``samples`` posterior draws around ``tuning``'s point estimate at posterior temperature τ,
    each through the trial cache (``noise()`` and the solver are only touched on a miss)."""
    if samples < 1:
        raise NbmergeError(f"samples must be >= 1, got {samples}")
    if not (math.isfinite(temperature) and temperature >= 0):
        raise NbmergeError(f"temperature must be a finite number >= 0, got {temperature!r}")

    def state(index: int):
        variances = {key: temperature * value for key, value in noise().items()}
        return tuning.build_solver().sampled(dict(tuning.lambdas), variances, draw_generator(seed, index),
                                             tuning.scale)

    return [cache.predictions(draw_recipe(tuning.recipe, temperature, seed, i), split, lambda i=i: state(i))
            for i in range(samples)]


def ensemble(draws: Sequence[Predictions]) -> Predictions:
    """The sampled predictive: probabilities averaged over the draws, stored as logits log p̄ (softmax(log p̄) = p̄),
    averaged in log space so a confident miss does not underflow. ``extra["members"]``: each draw's mean accuracy."""
    if not draws:
        raise NbmergeError("ensemble: no draws")
    logits = {}
    for task in draws[0].tasks:
        stacked = torch.stack([torch.log_softmax(torch.from_numpy(d.logits[task]).double(), -1) for d in draws])
        logits[task] = (torch.logsumexp(stacked, 0) - math.log(len(draws))).float().numpy()
    return Predictions(logits, dict(draws[0].labels), draws[0].split,
                       extra={"members": [d.mean_accuracy() for d in draws], "samples": len(draws)})


def fit_temperature(preds: Predictions) -> dict[str, float]:
    """Temperature scaling (Guo et al. 2017) fitted on ``preds`` (validation): per task head, the T minimising the
    NLL of softmax(z/T). The NLL is convex in 1/T, so a bounded scalar search finds the optimum."""
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
    """Per example: confidence, correctness and bin index (``metrics.expected_calibration_error``'s binning)."""
    p = preds.probs(task)
    confidence = p.max(-1)
    correct = (p.argmax(-1) == preds.labels[task]).astype(np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, bins - 1)
    return confidence, correct, index


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


def predictive_distance(a: Predictions, b: Predictions) -> float:
    """Mean over tasks and examples of the total-variation distance between the two predictive distributions."""
    return float(np.mean([0.5 * np.abs(a.probs(t) - b.probs(t)).sum(-1).mean() for t in a.tasks]))


def sweep_row(temperature: float, draws: Sequence[Predictions], point_val: Predictions, margin: float) -> dict:
    """One posterior temperature on validation: the ensemble's accuracy, its members' mean, NLL and ECE at T = 1 and
    after its own temperature scaling (fitted on these same examples), and whether its accuracy is eligible."""
    sampled = ensemble(draws)
    temps = fit_temperature(sampled)
    raw, scaled = sampled.summary(), rescaled(sampled, temps).summary()
    return {"temperature": temperature, "accuracy": raw["accuracy"],
            "member_accuracy": float(np.mean(sampled.extra["members"])), "nll": raw["nll"], "ece": raw["ece"],
            "nll_scaled": scaled["nll"], "ece_scaled": scaled["ece"],
            "eligible": raw["accuracy"] >= point_val.mean_accuracy() - margin / 100}


def select_temperature(rows: Sequence[dict]) -> dict:
    """The validation row with the lowest NLL after temperature scaling among the eligible ones (accuracy within
    the margin of the point estimate's); among all rows when none is. Adds ``eligible_count``."""
    if not rows:
        raise NbmergeError("select_temperature: no posterior temperature was evaluated")
    eligible = [r for r in rows if r["eligible"]]
    best = min(eligible or rows, key=lambda r: (r["nll_scaled"], r["temperature"]))
    return {**best, "eligible_count": len(eligible)}


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


def posterior_run(zoo, cache: protocol.TrialCache, tuning: BMMTuning, config: CalibrationConfig, seed: int,
                  log=print) -> PosteriorRun:
    """Everything after one search: the validation sweep over τ (``samples`` draws each, the same standard-normal
    draws scaled), the chosen τ, its draws on test, temperature scaling fitted on validation for both models."""
    expert = {t: zoo.manifest["expert_accuracy"]["test"][t] for t in zoo.tasks}
    held: dict = {}

    def noise():
        if "noise" not in held:
            held["noise"] = posterior_noise(cache, zoo, tuning)
        return held["noise"]

    noise()  # stored beside the cache: a warm run reads it back (the σ̂² table), the solver is not rebuilt
    point_val, point_test = tuning.val_predictions, tuning.test_predictions
    sweep, val_draws = [], {}
    for temperature in config.temperatures:
        val_draws[temperature] = posterior_draws(cache, tuning, noise, temperature, config.samples, seed, "val")
        sweep.append(sweep_row(temperature, val_draws[temperature], point_val, config.margin))
        row = sweep[-1]
        log(f"seed {seed}, τ = {temperature:g}: val accuracy {row['accuracy']:.4f} (point "
            f"{point_val.mean_accuracy():.4f}), NLL {row['nll']:.4f} → {row['nll_scaled']:.4f} scaled, ECE "
            f"{row['ece']:.4f} → {row['ece_scaled']:.4f}")
    chosen = select_temperature(sweep)
    tau = chosen["temperature"]
    sampled_val = ensemble(val_draws[tau])
    sampled_test = ensemble(posterior_draws(cache, tuning, noise, tau, config.samples, seed, "test"))
    point_temps, sampled_temps = fit_temperature(point_val), fit_temperature(sampled_val)
    decision = calibration_decision(point_test, sampled_test, rescaled(point_test, point_temps),
                                    rescaled(sampled_test, sampled_temps), expert, config.margin, seed=seed)
    log(f"seed {seed}: τ = {tau:g} ({chosen['eligible_count']}/{len(sweep)} kept validation accuracy); "
        f"{decision['evidence']}")
    summary = {"val_accuracy": tuning.val_accuracy, "test_accuracy": tuning.test_accuracy,
               "params": tuning.search.best_params, "replayed": tuning.search.replayed}
    return PosteriorRun(seed, summary, dict(held["noise"]), sweep, chosen, point_val, point_test,
                        sampled_val, sampled_test, point_temps, sampled_temps, decision)


@dataclass
class CalibrationStudy:
    suite: str
    tasks: list
    expert: dict
    anchor: str
    alpha: float
    margin: float
    runs: list = field(default_factory=list)     # PosteriorRun per seed


def calibration_study(config: CalibrationConfig, cache: Optional[protocol.TrialCache] = None, zoo=None,
                      log=print) -> CalibrationStudy:
    """The anchor at its validation-chosen α, then per search seed the tuned (data-assisted) BMM and
    :func:`posterior_run`."""
    if cache is None:
        zoo, cache = open_trials(config)
    tuned = tune_anchor(cache, zoo, config.anchor, gram_examples=config.gram_examples, seed=config.seed,
                        device=config.device)
    expert = {t: zoo.manifest["expert_accuracy"]["test"][t] for t in zoo.tasks}
    study = CalibrationStudy(suite_name(zoo), list(zoo.tasks), expert, config.anchor, tuned.alpha, config.margin)
    memo: dict = {}   # Grams, anchor and solver built once for all seeds
    for seed in config.seeds:
        tuning = tune(zoo, cache, config.anchor, tuned.alpha, "data", seed=seed, strategy=config.strategy,
                      budget=config.budget, gram_examples=config.gram_examples, gram_seed=config.seed,
                      device=config.device, memo=memo)
        study.runs.append(posterior_run(zoo, cache, tuning, config, seed, log=log))
    return study


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
    per = {name: {t: _task_ece(p, t) for t in run.point_test.tasks} for name, p in (
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


def _task_ece(preds: Predictions, task: str) -> float:
    from ..metrics import expected_calibration_error

    return expected_calibration_error(torch.from_numpy(preds.probs(task)), torch.from_numpy(preds.labels[task]))


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


def noise_summary(noise: Mapping[str, float]) -> list[dict]:
    """σ̂² per module type: median, smallest and largest over depth (which modules the posterior is widest on)."""
    from ..modules import module_type

    out = []
    for kind in MODULE_TYPES:
        values = [v for k, v in noise.items() if module_type(k) == kind]
        if values:
            out.append({"module_type": kind, "modules": len(values), "median": median(values), "min": min(values),
                        "max": max(values)})
    return out


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


# ------------------------------------------------------------------------------------------- figures (B6)

def plot_temperature(run: PosteriorRun):
    """Validation accuracy, NLL and ECE of the sampled ensemble against the posterior temperature τ (T = 1 solid,
    temperature-scaled dotted), the point estimate dashed (T = 1) and dash-dotted (scaled)."""
    import matplotlib.pyplot as plt

    point = run.point_val.summary()
    point_scaled = rescaled(run.point_val, run.point_temperatures).summary()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    t = [r["temperature"] for r in run.sweep]
    for ax, key in zip(axes, ("accuracy", "nll", "ece")):
        factor = 100.0 if key == "accuracy" else 1.0
        ax.semilogx(t, [factor * r[key] for r in run.sweep], "o-", color="#4c72b0", label="sampled, T = 1")
        if key == "accuracy":
            ax.semilogx(t, [factor * r["member_accuracy"] for r in run.sweep], "x:", color="#8c8c8c",
                        label="single draws (mean)")
        else:
            ax.semilogx(t, [r[f"{key}_scaled"] for r in run.sweep], "s:", color="#4c72b0", label="sampled, scaled")
            ax.axhline(point_scaled[key], color="black", linestyle="-.", label="point, scaled")
        ax.axhline(factor * point[key], color="black", linestyle="--", label="point, T = 1")
        ax.axvline(run.chosen["temperature"], color="#c44e52", alpha=0.5, label=f"chosen τ = {run.chosen['temperature']:g}")
        ax.set_xlabel("posterior temperature τ (σ² = τ·σ̂²)")
        ax.set_title(f"validation {key}" + (" (%)" if key == "accuracy" else ""))
    axes[1].legend(fontsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"seed {run.seed}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_reliability(run: PosteriorRun, title: str = "test split, pooled over tasks"):
    """Reliability diagrams of the point estimate and the sampled ensemble, at T = 1 (top) and temperature-scaled
    (bottom)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.6), sharex=True, sharey=True)
    panels = ((0, 0, "point estimate, T = 1", run.point_test),
              (0, 1, "sampled ensemble, T = 1", run.sampled_test),
              (1, 0, "point estimate, temperature-scaled", rescaled(run.point_test, run.point_temperatures)),
              (1, 1, "sampled ensemble, temperature-scaled", rescaled(run.sampled_test, run.sampled_temperatures)))
    for i, j, name, preds in panels:
        ax, data = axes[i, j], reliability(preds)
        edges = np.array(data["edges"])
        centres, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
        accuracy = np.nan_to_num(np.array(data["accuracy"], dtype=float))
        confidence = np.nan_to_num(np.array(data["confidence"], dtype=float))
        filled = np.array(data["count"]) > 0
        ax.bar(centres[filled], accuracy[filled], width * 0.95, color="#4c72b0", label="accuracy")
        ax.bar(centres[filled], (confidence - accuracy)[filled], width * 0.95, bottom=accuracy[filled],
               color="#c44e52", alpha=0.35, label="gap to confidence")
        ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="perfect calibration")
        ax.plot(centres, np.array(data["count"]) / max(1, data["examples"]), color="#8c8c8c", marker=".",
                linewidth=1, label="share of examples")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(f"{name}: pooled ECE {data['ece']:.4f}", fontsize=9)
    for ax in axes[1]:
        ax.set_xlabel("confidence (max predictive probability)")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy in the bin")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{title}, seed {run.seed}", fontsize=9)
    fig.tight_layout()
    return fig
