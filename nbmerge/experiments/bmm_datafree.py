"""What ``notebooks/22_bmm_datafree.ipynb`` shows: BMM's claim B5 (data-free validity) and its premise, Theorem 1
(BMM, Bayesian Model Merging, arXiv 2605.12843).

Theorem 1: the input Gram E[xxᵀ] is positively correlated with Σ_t τ_tᵀτ_t, so the data-free BMM (G_t ≈ c·τ_tᵀτ_t)
performs comparably to the data-assisted one. Checked twice:

* **per module** (``diagnostics.gram_alignment_vs_chance``): cosine of the two matrices against its random-eigenbasis
  baseline, overlap of their top-k eigen-subspaces against chance k/d; :func:`theorem_claim` holds when both
  medians' bootstrap intervals over modules lie above 1;
* **end to end**: per anchor (α tuned on validation, ``tune.trials.tune_anchor``) and per search seed, BMM with each
  Gram source tuned by the same search (``tune.trials.search_bmm``: strategy, budget, seed, bounds, validation
  subset), compared on test by :func:`compare_sources`, an equivalence test: the stratified paired bootstrap 95%
  interval of normalized test accuracy, data-free − data-assisted, inside ±``margin`` points (held); wholly
  outside (did not hold); straddling it (inconclusive). Not tested when both variants sit at chance or both collapsed
  onto their anchor (≥ 99.5% identical test predictions). Over seeds and anchors (:func:`combine`): held when every
  testable unit held, did not hold when one did not, not tested when one was inconclusive or none could be tested.

**The margin** (:data:`EQUIVALENCE_MARGIN`, 2 normalized points). The paper's gap (95.1% vs 95.0%, ViT-L/14,
8 tasks) is far below what our test sets resolve: two merges that disagree on a share d of the N test examples have
a 95% interval of about ±196·√(d/N) points even when they are equally good (±1.3 points at d = 10%, N = 2,400,
text8); the margin has to exceed that for equivalence to be provable at all, and 2 points stays well under the gains
over anchors BMM claims (B1: several points, up to 27% relative).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Mapping, Optional, Sequence

import numpy as np

from .. import protocol
from ..device import resolve_device
from ..diagnostics import ratio_interval
from ..errors import NbmergeError
from ..methods import get_method
from ..protocol import COLLAPSED_AGREEMENT, Interval, Predictions
from ..tune.trials import check_search_settings
from .common import check_config, claim

# B5: data-free within ±this many normalized-accuracy points of data-assisted (see the module docstring).
EQUIVALENCE_MARGIN = 2.0
GRAM_LABELS = {"data": "data-assisted", "task_vector": "data-free"}
SOURCE_SOURCE = "BMM, arXiv 2605.12843, abstract (ViT-L/14, 8 tasks) and the data-free ablation"
SOURCE_PAPER = "ViT-L/14, 8 tasks: 95.1% (abstract's headline) vs 95.0% data-free (paper body, not checked here)"
THEOREM_SOURCE = "BMM, arXiv 2605.12843, Theorem 1"
THEOREM_PAPER = "E[xxᵀ] positively correlated with Σ_t τ_tᵀτ_t (a theorem under neural-collapse assumptions)"


@dataclass(frozen=True)
class DatafreeConfig:
    """The notebook's knobs; their defaults and meanings are written in its parameters cell only."""

    suite: str
    device: str
    seed: int            # the validation subset's and the Gram sample's seed
    seeds: tuple         # search seeds: every search runs at each
    smoke: bool
    anchors: tuple       # BMM's prior means, each tuned with both Gram sources
    strategy: str
    budget: int
    val_examples: int
    gram_examples: int
    k_fraction: float    # top-k eigen-subspace compared: k = round(k_fraction·d_in)
    margin: float        # equivalence margin, normalized points
    cache: str

    def __post_init__(self):
        check_config(self)
        for name in ("seeds", "anchors"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "device", resolve_device(self.device))
        check_search_settings(self)
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


def as_dict(config) -> dict:
    return asdict(config)


# ----------------------------------------------------------------------------------------- Theorem 1, per module

def alignment_key(config: DatafreeConfig) -> dict:
    """What the stored per-module alignment depends on (its entry beside the trial cache)."""
    return {"alignment": 1, "gram_examples": config.gram_examples, "seed": config.seed,
            "k_fraction": config.k_fraction}


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


# ----------------------------------------------------------------------------------- data-free vs data-assisted

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
    """One tuned BMM of the study: its anchor, Gram source and search seed, with test predictions."""

    anchor: str
    gram: str
    seed: int
    summary: dict
    test: Predictions = field(repr=False)


@dataclass
class SourceStudy:
    """B5's end-to-end half: anchors at α*, the tuned runs, the decisions per anchor and seed."""

    suite: str
    tasks: list
    expert: dict
    margin: float
    anchors: dict = field(default_factory=dict)      # anchor → {"alpha", "test": Predictions, "normalized", "curve"}
    runs: list = field(default_factory=list)         # SourceRun
    decisions: dict = field(default_factory=dict)    # anchor → [compare_sources(...) + {"seed"}]

    def run(self, anchor: str, gram: str, seed: int) -> SourceRun:
        return next(r for r in self.runs if (r.anchor, r.gram, r.seed) == (anchor, gram, seed))

    def add(self, anchor: str, tuned: protocol.Tuned, gram: str, seed: int, tuning, seconds: float) -> SourceRun:
        """Record one search's best merge (and, the first time, the anchor at α*: the search's anchor merge)."""
        if anchor not in self.anchors:
            test = tuning.anchor_predictions["test"]
            self.anchors[anchor] = {"alpha": tuned.alpha, "test": test, "normalized": test.normalized(self.expert),
                                    "curve": tuned.curve}
        summary = {"val_accuracy": tuning.val_accuracy, "normalized": tuning.test_predictions.normalized(self.expert),
                   "test_accuracy": tuning.test_accuracy, "params": tuning.search.best_params,
                   "replayed": tuning.search.replayed, "seconds": seconds}
        self.runs.append(SourceRun(anchor, gram, seed, summary, tuning.test_predictions))
        return self.runs[-1]

    def decide(self, anchor: str, seed: int) -> dict:
        """:func:`compare_sources` at one anchor and seed, recorded under the anchor."""
        decision = compare_sources(self.run(anchor, "data", seed).test, self.run(anchor, "task_vector", seed).test,
                                   self.anchors[anchor]["test"], self.expert, self.margin, seed=seed)
        self.decisions.setdefault(anchor, []).append({**decision, "seed": seed})
        return decision


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
        every = [d for ds in study.decisions.values() for d in ds]
        ours = (f"free − data {protocol.spread([d['gap']['diff'] for d in every])} normalized pts; intervals within "
                f"[{min(d['gap']['low'] for d in every):+.2f}, {max(d['gap']['high'] for d in every):+.2f}] "
                f"(margin ±{study.margin:g})")
        parts = []
        for anchor, decisions in study.decisions.items():
            info = study.anchors[anchor]
            moved = "; ".join(f"seed {d['seed']}: data vs anchor {Interval(**d['data_vs_anchor'])}, free vs anchor "
                              f"{Interval(**d['free_vs_anchor'])}, {d['evidence']}" for d in decisions)
            parts.append(f"{anchor} (α = {info['alpha']:g}, {100 * info['normalized']:.1f}% normalized): {moved}")
        units = [d for d in every if d["why"] is None or d.get("inconclusive")]
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
