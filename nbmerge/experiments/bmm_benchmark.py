"""The logic behind ``notebooks/20_bmm_benchmark.ipynb`` (claims B1, B2): its config, its run over suites, its
tables and headline. The claims are in :mod:`.bmm_benchmark_claims`, the figures in :mod:`.bmm_benchmark_figures`.

BMM is Bayesian Model Merging (Li, Han, Su, Ji; arXiv 2605.12843). The notebook drives the library:
``nbmerge.tune.study`` (the suite's trial cache, each anchor's α* on validation, one seeded search) and
``nbmerge.tune.benchmark`` (BMM over every anchor, seed and variant, each seed on its own validation subset); the claims
compare BMM with each anchor by one interval over seeds × test examples (``nbmerge.evaluate.verdicts``). Nothing here
re-implements the merge, the search or the comparison.

* **Anchors are tuned like every other method** (``alpha_tuning.tune_method`` over ``alpha_tuning.SCALE_GRID`` on the
  validation subset, the recipes the ACE notebook and the tour use); BMM's prior mean is that α*-tuned anchor.
* **BMM's assembly scale s** is ablated (``with_scale=False``: s = 1) or searched and given to the anchor too.
* **Seeds**: each search seed draws its own validation subset (the lab's subset seed = the search seed), tunes every
  anchor's α* on it and runs its searches on it, so the validation noise is part of the spread over seeds.
* **"Beats"** is one interval over seeds × test examples (``nbmerge.evaluate.verdicts.compare``, a hierarchical
  bootstrap) of BMM − comparator in normalized test accuracy: four outcomes (held, contradicted, inconclusive, not
  tested).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import mean
from typing import Optional

from ..evaluate import protocol
from ..evaluate.metrics import relative_gain
from ..tune.study import VARIANT_NAMES, anchor_needs_grams, open_lab, search_seconds
from ..tune.benchmark import SuiteResult, bmm_over_anchors
from . import rules
from .rules import knob

ANCHORS = ("task_arithmetic", "ties", "tsv", "iso_cts", "wudi", "regmean")      # the paper's plug-in anchors


@dataclass(frozen=True)
class BenchmarkConfig:
    """The notebook's parameters (its parameters cell declares them and their defaults; their rules are written
    here, once: ``rules.knob``)."""

    # B1 is read on this suite (must be in suites)
    suite: str = knob(rules.SUITE, rules.in_suites)
    # B2 needs several (text8/14/20: the paper profile)
    suites: tuple = knob(rules.SUITES)
    device: str = knob(rules.DEVICE)
    # first search seed (seeds seed .. seed+search_seeds-1); each seed's val subset
    seed: int = knob(rules.SEED)
    smoke: bool = knob()
    anchors: tuple = knob(rules.ANCHORS)
    # data (data-assisted) and/or free (data-free)
    variants: tuple = knob(rules.list_of(rules.VARIANT, distinct=True))
    # BO trials per search
    budget: int = knob(rules.BUDGET)
    # searches per (anchor, variant): BO is seeded, one search is one draw
    search_seeds: int = knob(rules.COUNT)
    # space-filling trials before the GP (None: min(5, budget))
    n_initial: Optional[int] = knob(rules.N_INITIAL)
    # False: s ablated (s = 1); True: s searched, and given to the anchor too
    with_scale: bool = knob()
    # validation subset per task for α and the search (0: the whole split)
    val_examples: int = knob(rules.COUNT_OR_ALL)
    # training examples per task for the data Grams
    gram_examples: int = knob(rules.COUNT)
    gram_seed: int = knob(rules.SEED)
    # WUDI's reference protocol (Adam steps per matrix)
    wudi_steps: int = knob(rules.COUNT)
    # 0: the four functional groups; n ≥ 2: each split into n depth bins
    depth_bins: int = knob(rules.COUNT_OR_ALL)
    # nbmerge cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)
    cache: str = knob(rules.CACHE)

    def __post_init__(self):
        rules.check(self)
        rules.normalise(self)

    @property
    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(self.search_seeds)]

    def search_settings(self) -> dict:
        """The keyword arguments every search of this notebook shares (``tune.study.run_search``)."""
        return {"budget": self.budget, "n_initial": self.n_initial, "with_scale": self.with_scale,
                "gram_examples": self.gram_examples, "gram_seed": self.gram_seed, "depth_bins": self.depth_bins,
                "device": self.device}


def as_dict(config) -> dict:
    return asdict(config)


def benchmark(config: BenchmarkConfig, log=print) -> dict[str, SuiteResult]:
    """Per suite and search seed (each on its own validation subset): every anchor tuned on it, then BMM on it per
    variant (``tune.benchmark.bmm_over_anchors``)."""
    out = {}
    for suite in config.suites:
        lab = open_lab(suite, cache=config.cache, device=config.device, val_examples=config.val_examples,
                       seed=config.seeds[0])
        out[lab.suite] = bmm_over_anchors(lab, config.anchors, config.variants, config.seeds,
                                          wudi_steps=config.wudi_steps, log=log, **config.search_settings())
    return out


# ----------------------------------------------------------------------------------------------------- tables

def anchor_rows(results: dict[str, SuiteResult]) -> list[dict]:
    """Each anchor at each seed's validation-chosen α (each seed tunes on its own validation subset)."""
    return [{"suite": r.suite, "anchor": a.name, "seed": seed, "α*": a.alpha, "val (subset)": a.val_accuracy,
             "test": a.test.mean_accuracy(), "normalized": a.test.normalized(r.expert)}
            for r in results.values() for per in r.anchors.values() for seed, a in per.items()]


def run_rows(results: dict[str, SuiteResult]) -> list[dict]:
    """One JSON-able row per BMM search."""
    rows = []
    for r in results.values():
        for run in r.runs:
            anchor = run.anchor_run
            t = run.tuning
            rows.append({
                "suite": r.suite, "tasks": len(r.tasks), "anchor": run.anchor, "variant": run.variant,
                "seed": run.seed, "gram": t.settings["gram"], "anchor_uses_data": anchor_needs_grams(run.anchor),
                "alpha": anchor.alpha, "anchor_test": anchor.test.mean_accuracy(),
                "anchor_normalized": anchor.test.normalized(r.expert),
                "control_test": run.control.mean_accuracy() if run.control is not None else None,
                "bmm_val": t.val_accuracy, "bmm_test": run.test.mean_accuracy(),
                "bmm_normalized": run.test.normalized(r.expert),
                "relative_gain": relative_gain(run.test.mean_accuracy(), anchor.test.mean_accuracy()),
                "lambdas": t.lambdas, "scale": t.scale,
                "best_trial": t.search.best.index, "trials": len(t.search.trials),
                "search_seconds": search_seconds(t.search), "replayed": t.search.replayed,
                "log": str(t.search.log_path) if t.search.log_path else None})
    return rows


def comparison_table(results: dict[str, SuiteResult]) -> list[dict]:
    """Per (suite, anchor, variant, comparator): BMM and the anchor over the seeds, and the decision of "BMM beats
    it" over seeds × test examples (the interval the claims and the figure use)."""
    from .bmm_benchmark_claims import anchor_decisions

    out = []
    for r in results.values():
        for variant in r.variants:
            decisions = anchor_decisions(r, variant)
            for anchor in r.anchors:
                runs = r.runs_of(anchor, variant)
                if not runs:
                    continue
                for label in runs[0].comparators():
                    d = decisions[f"{anchor} at {label}"]
                    out.append({"suite": r.suite, "anchor": anchor + (" (data Grams)" if anchor_needs_grams(anchor)
                                                                      and variant == "free" else ""),
                                "at": label, "variant": variant,
                                "α* per seed": ", ".join(f"{x.anchor_run.alpha:g}" for x in runs),
                                "anchor acc": mean(x.comparators()[label].mean_accuracy() for x in runs),
                                "BMM acc": protocol.spread([100 * x.test.mean_accuracy() for x in runs]),
                                "BMM − anchor (normalized pts), seeds × examples":
                                    (f"{d.estimate:+.2f} [{d.interval[0]:+.2f}, {d.interval[1]:+.2f}]"
                                     if d.interval else "—"),
                                "outcome": d.outcome, "decision": d.text(),
                                "estimate": d.estimate, "low": d.interval[0] if d.interval else None,
                                "high": d.interval[1] if d.interval else None})
    return out


def search_rows(results: dict[str, SuiteResult], suite: str) -> list[dict]:
    """What each search chose on ``suite``: log10 ρ per group, s, the best trial, its cost."""
    return [{"anchor": x.anchor, "variant": x.variant, "seed": x.seed,
             **{g: f"{v:.2f}" for g, v in x.tuning.lambdas.items()}, "s": f"{x.tuning.scale:.2f}",
             "best trial": x.tuning.search.best.index, "search s": search_seconds(x.tuning.search),
             "from log": x.tuning.search.replayed} for x in results[suite].runs]


def benchmark_headline(results: dict[str, SuiteResult], suite: str) -> dict:
    """The smallest gain of BMM over an anchor (over seeds × test examples), in normalized points: positive when BMM
    is ahead of every anchor, and not inflated by one weak anchor the way a mean over anchors would be."""
    from .bmm_benchmark_claims import anchor_decisions

    result = results[suite]
    variant = "data" if "data" in result.variants else "free"
    decisions = {k: d for k, d in anchor_decisions(result, variant).items() if d.estimate is not None}
    if not decisions:
        return {"name": f"BMM ({VARIANT_NAMES[variant]}) − its tuned anchor: not tested", "value": float("nan"),
                "format": "{:+.2f}"}
    worst = min(decisions, key=lambda k: decisions[k].estimate)
    return {"name": f"BMM ({VARIANT_NAMES[variant]}) − its tuned anchor, smallest over {len(decisions)} comparisons "
                    f"({suite}, {worst}; normalized points over seeds × test examples)",
            "value": decisions[worst].estimate, "format": "{:+.2f}"}
