"""What ``notebooks/22_bmm_datafree.ipynb`` shows: BMM's claims B5a (data-free BMM performs comparably to
data-assisted BMM) and B5b (its premise, Theorem 1) (BMM, Bayesian Model Merging, arXiv 2605.12843).

Theorem 1: the input Gram E[xxᵀ] is positively correlated with Σ_t τ_tᵀτ_t, so the data-free BMM (G_t ≈ c·τ_tᵀτ_t)
performs comparably to the data-assisted one. Checked twice:

* **B5b, per module** (``diagnostics.gram_alignment_vs_chance``): cosine of the two matrices against its
  random-eigenbasis baseline, overlap of their top-k eigen-subspaces against chance k/d; :func:`theorem_claim`
  decides each median ratio over modules (``verdicts.decide`` on its bootstrap over modules) against 1, and the row
  is held when both are (contradicted when one is);
* **B5a, end to end**: per search seed (each with its own validation subset, ``bmm_calibration.seed_labs``) and
  anchor (α tuned on that subset, ``tune.study.tune_anchor``), BMM with each Gram source tuned by the same search
  (``tune.study.run_search``: strategy, budget, seed, box, validation subset: the benchmark notebook's searches),
  then one equivalence decision (:func:`equivalence_decision`) on normalized test accuracy, data-free −
  data-assisted, over seeds × test examples (``verdicts.hierarchical_samples``; several anchors are averaged per
  example): held when the 95% interval lies inside ±``margin`` points, contradicted when it lies wholly outside,
  inconclusive otherwise. A seed × anchor unit is left out when a variant sits at chance or both variants collapsed
  onto their anchor (≥ 99.5% identical test predictions); not tested when none is left.
* **The box.** A search whose best point sits on the edge of its box (:func:`box_edges`, read from the search's best
  trial and its space) might have found better outside it: the evidence says so beside the verdict.

**The margin** (:data:`EQUIVALENCE_MARGIN`, 2 normalized points). The paper's gap (95.1% vs 95.0%, ViT-L/14,
8 tasks) is far below what our test sets resolve: two merges that disagree on a share d of the N test examples have
a 95% interval of about ±196·√(d/N) points even when they are equally good (±1.3 points at d = 10%, N = 2,400,
text8; pooling 3 seeds narrows the examples' part, not the seeds'); the margin has to exceed that for equivalence to
be provable at all, and 2 points stays well under the gains over anchors BMM claims (B1: several points, up to 27%
relative).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Mapping, Optional, Sequence

import numpy as np

from ..evaluate import protocol, verdicts
from ..evaluate.protocol import COLLAPSED_AGREEMENT, Interval, Predictions
from ..evaluate.verdicts import Decision
from . import rules
from .bmm_calibration import conjunction
from .common import claim
from .rules import knob

# B5a: data-free within ±this many normalized-accuracy points of data-assisted (see the module docstring).
EQUIVALENCE_MARGIN = 2.0
# The paper's data-free − data-assisted gap: 95.0 − 95.1 accuracy points (ViT-L/14, 8 tasks; its own model).
PAPER_GAP = -0.1
# A searched parameter within this share of its range from a bound sits on the box's edge.
EDGE_TOLERANCE = 0.01
GRAM_LABELS = {"data": "data-assisted", "free": "data-free"}
SOURCE_SOURCE = "BMM, arXiv 2605.12843, abstract (ViT-L/14, 8 tasks) and the data-free ablation"
SOURCE_PAPER = ("ViT-L/14, 8 tasks: 95.1% (abstract's headline) vs 95.0% data-free (paper body, not checked here): "
                "a −0.1-point gap on its own model")
THEOREM_SOURCE = "BMM, arXiv 2605.12843, Theorem 1"
THEOREM_PAPER = ("E[xxᵀ] positively correlated with Σ_t τ_tᵀτ_t (a theorem under neural-collapse assumptions; no "
                 "number to compare)")


@dataclass(frozen=True)
class DatafreeConfig:
    """The notebook's knobs; their defaults and meanings are written in its parameters cell only, their rules here
    (``rules.knob``)."""

    suite: str = knob(rules.SUITE)
    device: str = knob(rules.DEVICE)
    # the Gram sample's and the bootstrap's seed
    seed: int = knob(rules.SEED)
    # search seeds: each draws its own validation subset; every search runs at each
    seeds: tuple = knob(rules.SEEDS)
    smoke: bool = knob()
    # BMM's prior means, each tuned with both Gram sources: data-free methods (B5 compares the Gram sources, so an
    # anchor that needs data Grams would make the data-free BMM built on it use data)
    anchors: tuple = knob(rules.list_of(rules.DATA_FREE_ANCHOR, distinct=True))
    strategy: str = knob(rules.STRATEGY)
    budget: int = knob(rules.BUDGET)
    # the search's space-filling points before BO proposes
    n_initial: Optional[int] = knob(rules.N_INITIAL)
    val_examples: int = knob(rules.COUNT_OR_ALL)
    gram_examples: int = knob(rules.COUNT)
    # top-k eigen-subspace compared: k = round(k_fraction·d_in)
    k_fraction: float = knob(rules.UNIT_FRACTION)
    # equivalence margin, normalized points
    margin: float = knob(rules.POSITIVE)
    cache: str = knob(rules.CACHE)

    def __post_init__(self):
        rules.check(self)
        rules.normalise(self)


def as_dict(config) -> dict:
    return asdict(config)


# ----------------------------------------------------------------------------------------- Theorem 1, per module

def alignment_key(config: DatafreeConfig) -> dict:
    """What the stored per-module alignment depends on (its entry beside the trial cache)."""
    return {"alignment": 1, "gram_examples": config.gram_examples, "seed": config.seed,
            "k_fraction": config.k_fraction}


def median_samples(rows: Sequence[dict], key: str, n_boot: int = verdicts.BOOTSTRAP,
                   seed: int = 0) -> tuple[float, np.ndarray, int]:
    """The median over modules of ``key`` and its bootstrap samples (modules resampled with replacement)."""
    values = np.array([r[key] for r in rows if math.isfinite(r[key])], dtype=float)
    if len(values) == 0:
        return float("nan"), np.array([]), 0
    rng = np.random.default_rng(seed)
    return (float(np.median(values)), np.median(values[rng.integers(0, len(values), size=(n_boot, len(values)))],
                                                axis=1), len(values))


def theorem_decision(rows: Sequence[dict], seed: int = 0) -> dict:
    """Each median ratio over modules (cosine/baseline, top-k overlap/chance) decided against 1 on its bootstrap
    over modules, and the two combined (:func:`bmm_calibration.conjunction`)."""
    parts = {}
    for key, name in (("cosine_ratio", "cosine / random-eigenbasis baseline"),
                      ("overlap_ratio", "top-k overlap / chance k/d")):
        point, samples, n = median_samples(rows, key, seed=seed)
        parts[name] = (verdicts.not_tested(f"no module has a finite {key}", threshold=1.0) if n < 2 else
                       verdicts.decide(point, samples, threshold=1.0, n=n, unit="× (median over modules)"))
    return {"parts": parts, "decision": conjunction(parts, "paper")}


def theorem_claim(rows: Sequence[dict], suite: str = "", seed: int = 0, setting: str = ""):
    """B5b: Theorem 1's premise, held when both median ratios' bootstrap intervals over modules clear 1."""
    text = ("Theorem 1 (B5's premise): the input Gram E[xxᵀ] is positively correlated with Σ_t τ_tᵀτ_t, beyond what "
            "their spectra alone give")
    if not rows:
        return claim(text, THEOREM_SOURCE, verdicts.not_tested("no module with a data Gram", threshold=1.0),
                     id="B5b", paper=THEOREM_PAPER, suite=suite, setting=setting)
    found = theorem_decision(rows, seed)
    parts, decision = found["parts"], found["decision"]
    ours = "; ".join(f"median {name} {_ratio(d)}" for name, d in parts.items())
    above = {key: sum(r[key] > 1 for r in rows if math.isfinite(r[key])) for key in ("cosine_ratio", "overlap_ratio")}
    evidence = (f"{decision.outcome}: " + "; ".join(f"median {name}: {d.text('{:.2f}')}" for name, d in parts.items())
                + f". {len(rows)} modules: cosine above its baseline in {above['cosine_ratio']}, top-k overlap above "
                f"chance in {above['overlap_ratio']}; intervals by bootstrap over modules; held when both clear 1, "
                "contradicted when one lies at or below 1")
    return claim(text, THEOREM_SOURCE, decision, evidence, id="B5b", paper=THEOREM_PAPER, ours=ours, suite=suite,
                 setting=setting)


def _ratio(d: Decision) -> str:
    if d.outcome == "not tested":
        return "not tested"
    return f"{d.estimate:.2f} [{d.interval[0]:.2f}, {d.interval[1]:.2f}]"


# ----------------------------------------------------------------------------------- data-free vs data-assisted

def box_edges(search, tolerance: float = EDGE_TOLERANCE) -> list[dict]:
    """The searched parameters of ``search``'s best trial that sit on the edge of its box (within ``tolerance`` of
    the range from a bound): [{"param", "value", "bound", "side"}]."""
    out = []
    best = search.best_params
    for name, (low, high) in search.space.bounds.items():
        if name not in best:
            continue
        value, slack = float(best[name]), tolerance * (high - low)
        for bound, side in ((low, "lower"), (high, "upper")):
            if abs(value - bound) <= slack:
                out.append({"param": name, "value": value, "bound": bound, "side": side})
    return out


def edges_text(edges: Sequence[dict]) -> str:
    return ", ".join(f"{e['param']} = {e['value']:.3g} ({e['side']} bound {e['bound']:g})" for e in edges)


def compare_sources(data: Predictions, free: Predictions, anchor: Predictions, expert: Mapping[str, float],
                    seed: int = 0) -> dict:
    """One seed × anchor unit, described (the claim pools the units, :func:`equivalence_decision`): the paired 95%
    interval of data-free − data-assisted and of each variant − its anchor (normalized test points), and ``why``
    the unit is left out (a variant at chance, or both collapsed onto the anchor: then the comparison is the anchor
    against itself), None when it is used."""
    gap = protocol.paired_difference(free, data, expert, seed=seed)
    moved = {name: protocol.paired_difference(p, anchor, expert, seed=seed)
             for name, p in (("data", data), ("free", free))}
    why = protocol.vacuous(free, data, None, names=("data-free BMM", "data-assisted BMM"))
    if why is None and all(m.agreement >= COLLAPSED_AGREEMENT for m in moved.values()):
        why = (f"both variants collapsed onto the anchor (the same test prediction on "
               f"{100 * moved['data'].agreement:.1f}% and {100 * moved['free'].agreement:.1f}% of examples)")
    evidence = f"data-free − data-assisted = {gap}" + (f" (left out: {why})" if why else "")
    return {"why": why, "gap": gap.to_dict(), "data_vs_anchor": moved["data"].to_dict(),
            "free_vs_anchor": moved["free"].to_dict(), "evidence": evidence}


@dataclass
class SourceRun:
    """One tuned BMM of the study: its anchor, Gram source and search seed, with test predictions and whether its
    best point sits on the box's edge."""

    anchor: str
    gram: str
    seed: int
    summary: dict
    test: Predictions = field(repr=False)


@dataclass
class SourceStudy:
    """B5a's end-to-end half: the anchors at α* per seed, the tuned runs, the descriptions per anchor and seed."""

    suite: str
    tasks: list
    expert: dict
    margin: float
    anchors: dict = field(default_factory=dict)      # anchor → seed → {"alpha", "test": Predictions, "normalized",
                                                     #                   "curve"}
    runs: list = field(default_factory=list)         # SourceRun
    decisions: dict = field(default_factory=dict)    # anchor → [compare_sources(...) + {"seed"}]
    seed: int = 0                                    # the bootstraps' seed

    def run(self, anchor: str, gram: str, seed: int) -> SourceRun:
        return next(r for r in self.runs if (r.anchor, r.gram, r.seed) == (anchor, gram, seed))

    def add(self, anchor, gram: str, seed: int, tuning, seconds: float) -> SourceRun:
        """Record one search's best merge (and, the first time at this seed, the anchor at its α*). ``anchor``: the
        ``tune.study.AnchorRun`` of this seed's validation subset."""
        per_seed = self.anchors.setdefault(anchor.name, {})
        if seed not in per_seed:
            per_seed[seed] = {"alpha": anchor.alpha, "test": anchor.test,
                              "normalized": anchor.test.normalized(self.expert), "curve": anchor.tuned.curve}
        summary = {"val_accuracy": tuning.val_accuracy, "normalized": tuning.test_predictions.normalized(self.expert),
                   "test_accuracy": tuning.test_accuracy, "params": tuning.search.best_params,
                   "edges": box_edges(tuning.search), "replayed": tuning.search.replayed, "seconds": seconds}
        self.runs.append(SourceRun(anchor.name, gram, seed, summary, tuning.test_predictions))
        return self.runs[-1]

    def decide(self, anchor: str, seed: int) -> dict:
        """:func:`compare_sources` at one anchor and seed, recorded under the anchor."""
        decision = compare_sources(self.run(anchor, "data", seed).test, self.run(anchor, "free", seed).test,
                                   self.anchors[anchor][seed]["test"], self.expert, seed=seed)
        self.decisions.setdefault(anchor, []).append({**decision, "seed": seed})
        return decision


def equivalence_decision(study: SourceStudy) -> tuple[Decision, list[str]]:
    """B5a: normalized test accuracy, data-free − data-assisted, over seeds × test examples, inside ±margin.

    Per seed, the per-example differences of its usable anchors are averaged (the estimate is the mean over anchors
    and seeds); ``verdicts.hierarchical_samples`` resamples the seeds, then the examples. Returns the decision and
    the units left out."""
    left_out, per_seed = [], {}
    for anchor, decisions in study.decisions.items():
        for d in decisions:
            if d["why"]:
                left_out.append(f"{anchor} seed {d['seed']}: {d['why']}")
                continue
            diffs = verdicts.task_differences(study.run(anchor, "free", d["seed"]).test,
                                              study.run(anchor, "data", d["seed"]).test, study.expert)
            per_seed.setdefault(d["seed"], []).append(diffs)
    band = [-study.margin, study.margin]
    if not per_seed:
        return verdicts.not_tested("no seed × anchor could test it" + (f": {'; '.join(left_out)}" if left_out
                                                                        else " (no anchor was run)"),
                                   threshold=band, effect=PAPER_GAP), left_out
    values = [{t: np.mean([d[t] for d in units], axis=0) for t in units[0]} for units in per_seed.values()]
    point, samples, n = verdicts.hierarchical_samples(values, seed=study.seed)
    return verdicts.decide(point, samples, threshold=band, effect=PAPER_GAP, n=n, unit="normalized pts",
                           why=("left out " + "; ".join(left_out)) if left_out else ""), left_out


def source_rows(study: SourceStudy) -> list[dict]:
    """The table: per anchor, seed and source, normalized test accuracy, its interval against the anchor (did the
    variant move?), the agreement with the anchor and whether its best point sits on the box's edge; then the
    seed's own interval (descriptive: the claim pools the seeds)."""
    rows = []
    for anchor, decisions in study.decisions.items():
        for decision in decisions:
            info = study.anchors[anchor][decision["seed"]]
            rows.append({"anchor": anchor, "seed": decision["seed"], "Grams": f"anchor alone (α = {info['alpha']:g})",
                         "normalized": info["normalized"], "val": "", "vs anchor": "", "agreement": "",
                         "box edge": "", "free − data": "", "used": ""})
            for gram, key in (("data", "data_vs_anchor"), ("free", "free_vs_anchor")):
                run = study.run(anchor, gram, decision["seed"])
                moved = Interval(**decision[key])
                rows.append({"anchor": anchor, "seed": decision["seed"], "Grams": GRAM_LABELS[gram],
                             "normalized": run.summary["normalized"], "val": run.summary["val_accuracy"],
                             "vs anchor": str(moved), "agreement": f"{moved.agreement:.1%}",
                             "box edge": edges_text(run.summary["edges"]) or "no",
                             "free − data": str(Interval(**decision["gap"])) if gram == "free" else "",
                             "used": ("yes" if not decision["why"] else f"left out: {decision['why']}")
                             if gram == "free" else ""})
    return rows


def edge_evidence(study: SourceStudy) -> str:
    """Which searches ended on the edge of their box, said beside the verdict."""
    parts = []
    for gram in ("data", "free"):
        on_edge = [r for r in study.runs if r.gram == gram and r.summary["edges"]]
        if on_edge:
            parts.append(f"the {GRAM_LABELS[gram]} search's best point lies on the edge of its box at "
                         f"{len(on_edge)} of {sum(r.gram == gram for r in study.runs)} searches ("
                         + "; ".join(f"{r.anchor} seed {r.seed}: {edges_text(r.summary['edges'])}" for r in on_edge)
                         + ")")
    if not parts:
        return "No search's best point lies on the edge of its box."
    return ("Box edge: " + "; ".join(parts) + ". The box (tune.bmm RHO_BOUNDS, SCALE_BOUNDS) was not widened: a "
            "wider box would no longer be the benchmark notebook's search (shared trials and logs), so that variant "
            "may be held back by its box and the gap may be smaller (or larger) with a wider one.")


def _setting(study: SourceStudy) -> str:
    seeds = sorted({r.seed for r in study.runs})
    n = sum(len(v) for v in study.runs[0].test.labels.values()) if study.runs else 0
    return (f"{study.suite}: {len(study.tasks)} tasks; anchors {', '.join(study.anchors)} (α on each seed's "
            f"validation subset); {len(seeds)} search seeds; {n:,} test examples")


def datafree_claims(study: Optional[SourceStudy], alignment_rows: Sequence[dict], suite: str = "", seed: int = 0):
    """B5a (end to end, equivalence over seeds × test examples) and B5b (Theorem 1's premise, intervals over
    modules)."""
    text = "data-free BMM performs comparably to data-assisted BMM"
    if study is None or not study.decisions:
        out = [claim(text, SOURCE_SOURCE, verdicts.not_tested("no anchor was run (parameter `anchors`)",
                                                              threshold=[-EQUIVALENCE_MARGIN, EQUIVALENCE_MARGIN]),
                     id="B5a", paper=SOURCE_PAPER, suite=suite)]
    else:
        decision, left_out = equivalence_decision(study)
        every = [d for ds in study.decisions.values() for d in ds]
        used = [d for d in every if not d["why"]]
        ours = ("not tested" if decision.outcome == "not tested" else
                f"free − data {decision.estimate:+.2f} [{decision.interval[0]:+.2f}, {decision.interval[1]:+.2f}] "
                f"normalized pts over seeds × test examples (margin ±{study.margin:g})")
        per_unit = "; ".join(
            f"{anchor} seed {d['seed']} (α = {study.anchors[anchor][d['seed']]['alpha']:g}): data vs anchor "
            f"{Interval(**d['data_vs_anchor'])}, free vs anchor {Interval(**d['free_vs_anchor'])}, {d['evidence']}"
            for anchor, ds in study.decisions.items() for d in ds)
        ahead = sum(d["gap"]["low"] > 0 for d in used)
        behind = sum(d["gap"]["high"] < 0 for d in used)
        evidence = (f"{decision.text()}. Equivalence: the 95% interval over {len({d['seed'] for d in used})} search "
                    f"seeds × test examples (seeds, then examples within each task) inside ±{study.margin:g} "
                    f"normalized pts; same search, budget, seed and validation subset for both sources; the paper's "
                    f"gap ({PAPER_GAP:+g}) is raw accuracy on ViT-L/14. {edge_evidence(study)} Per seed "
                    f"(descriptive): {per_unit}. Direction: data-free significantly ahead at {ahead}, behind at "
                    f"{behind} of {len(used)} seed × anchor units")
        out = [claim(text, SOURCE_SOURCE, decision, evidence, id="B5a", paper=SOURCE_PAPER, ours=ours,
                     suite=study.suite, setting=_setting(study))]
    out.append(theorem_claim(alignment_rows, suite or (study.suite if study else ""), seed,
                             setting=f"{suite or (study.suite if study else '')}: every linear module with a data "
                                     "Gram, Grams of the experts' own training inputs"))
    return out


def datafree_headline(study: SourceStudy) -> dict:
    decision, _ = equivalence_decision(study)
    return {"name": "data-free − data-assisted BMM, normalized test points (over seeds × test examples)",
            "value": decision.estimate if decision.estimate is not None else float("nan"), "format": "{:+.2f}"}


def study_metrics(study: SourceStudy) -> dict:
    """JSON-able numbers of the B5a study for metrics.json."""
    decision, left_out = equivalence_decision(study)
    return {"anchors": {a: {s: {k: v for k, v in info.items() if k != "test"} for s, info in seeds.items()}
                        for a, seeds in study.anchors.items()},
            "runs": [{"anchor": r.anchor, "gram": r.gram, "seed": r.seed, **r.summary} for r in study.runs],
            "decisions": study.decisions, "margin": study.margin, "verdict": decision.to_dict(),
            "left_out": left_out}
