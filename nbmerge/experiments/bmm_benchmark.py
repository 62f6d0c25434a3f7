"""The logic behind ``notebooks/20_bmm_benchmark.ipynb`` (claims B1, B2): its config, its run over suites, its
tables and headline. The claims are in :mod:`.bmm_benchmark_claims`, the figures in :mod:`.bmm_benchmark_figures`.

BMM is Bayesian Model Merging (Li, Han, Su, Ji; arXiv 2605.12843). The notebook drives the library:
``nbmerge.tune.anchors`` (the suite's trial cache, each anchor's α* on validation, one seeded search) and
``nbmerge.tune.benchmark`` (BMM over every anchor, variant and seed, each compared with its anchor by a paired
interval). Nothing here re-implements the merge, the search or the comparison.

* **Anchors are tuned like every other method** (``protocol.tune_method`` over ``protocol.SCALE_GRID`` on the
  validation subset, the recipes the ACE notebook and the tour use); BMM's prior mean is that α*-tuned anchor.
* **BMM's assembly scale s** is ablated (``with_scale=False``: s = 1) or searched and given to the anchor too.
* **"Beats"** means the paired bootstrap 95% interval of normalized test accuracy (BMM − comparator) lies above 0
  (``protocol.beats``), at every search seed, combined by ``protocol.over_seeds``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import mean
from typing import Optional

from .. import protocol
from ..device import resolve_device
from ..errors import NbmergeError
from ..tune.anchors import VARIANT_NAMES, VARIANTS, anchor_needs_grams, check_anchor, open_lab, search_seconds
from ..tune.benchmark import SuiteResult, bmm_over_anchors
from .bmm_common import check_search_settings, fmt_interval
from .common import check_config

ANCHORS = ("task_arithmetic", "ties", "tsv", "iso_cts", "wudi", "regmean")      # the paper's plug-in anchors
WEAK_ANCHORS = ("task_arithmetic", "ties")   # the paper's "weak anchors (TA, TIES)"


@dataclass(frozen=True)
class BenchmarkConfig:
    """The notebook's parameters (its parameters cell declares them and their defaults)."""

    suite: str                      # B1 is read on this suite (must be in suites)
    suites: tuple                   # B2 needs several (text8/14/20: the paper profile)
    device: str
    seed: int                       # first search seed (seeds seed .. seed+search_seeds-1); the validation subset's
    smoke: bool
    anchors: tuple
    variants: tuple                 # data (data-assisted) and/or free (data-free)
    budget: int                     # BO trials per search
    search_seeds: int               # searches per (anchor, variant): BO is seeded, one search is one draw
    n_initial: Optional[int]        # space-filling trials before the GP (None: min(5, budget))
    with_scale: bool                # False: s ablated (s = 1); True: s searched, and given to the anchor too
    val_examples: int               # validation subset per task for α and the search (0: the whole split)
    gram_examples: int              # training examples per task for the data Grams
    gram_seed: int
    wudi_steps: int                 # WUDI's reference protocol (Adam steps per matrix)
    depth_bins: int                 # 0: the four functional groups; n ≥ 2: each split into n depth bins
    cache: str                      # nbmerge cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)

    def __post_init__(self):
        check_config(self)
        for name in ("suites", "anchors", "variants"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.suite not in self.suites:
            raise NbmergeError(f"parameter 'suite' ({self.suite!r}) must be one of suites {list(self.suites)}")
        if not self.anchors or not self.variants:
            raise NbmergeError("parameters 'anchors' and 'variants' must not be empty")
        for anchor in self.anchors:
            check_anchor(anchor)
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise NbmergeError(f"parameter 'variants': unknown {unknown}; choose from {list(VARIANTS)}")
        if self.search_seeds < 1:
            raise NbmergeError(f"parameter 'search_seeds' must be >= 1, got {self.search_seeds}")
        check_search_settings(self)
        object.__setattr__(self, "device", resolve_device(self.device))

    @property
    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(self.search_seeds)]

    def search_settings(self) -> dict:
        """The keyword arguments every search of this notebook shares (``tune.anchors.run_search``)."""
        return {"budget": self.budget, "n_initial": self.n_initial, "with_scale": self.with_scale,
                "gram_examples": self.gram_examples, "gram_seed": self.gram_seed, "depth_bins": self.depth_bins,
                "device": self.device}


def as_dict(config) -> dict:
    return asdict(config)


def benchmark(config: BenchmarkConfig, log=print) -> dict[str, SuiteResult]:
    """Per suite: every anchor tuned on validation, then BMM on it per variant and search seed, each compared with
    its anchor by a paired interval (``tune.benchmark.bmm_over_anchors``)."""
    out = {}
    for suite in config.suites:
        lab = open_lab(suite, cache=config.cache, device=config.device, val_examples=config.val_examples,
                       seed=config.seed)
        out[lab.suite] = bmm_over_anchors(lab, config.anchors, config.variants, config.seeds,
                                          wudi_steps=config.wudi_steps, log=log, **config.search_settings())
    return out


# ----------------------------------------------------------------------------------------------------- tables

def anchor_rows(results: dict[str, SuiteResult]) -> list[dict]:
    return [{"suite": r.suite, "anchor": a.name, "α*": a.alpha, "val (subset)": a.val_accuracy,
             "test": a.test.mean_accuracy(), "normalized": a.test.normalized(r.expert)}
            for r in results.values() for a in r.anchors.values()]


def run_rows(results: dict[str, SuiteResult]) -> list[dict]:
    """One JSON-able row per BMM search."""
    rows = []
    for r in results.values():
        for run in r.runs:
            anchor = r.anchors[run.anchor]
            t = run.tuning
            rows.append({
                "suite": r.suite, "tasks": len(r.tasks), "anchor": run.anchor, "variant": run.variant,
                "seed": run.seed, "gram": t.settings["gram"], "anchor_uses_data": anchor_needs_grams(run.anchor),
                "alpha": anchor.alpha, "anchor_test": anchor.test.mean_accuracy(),
                "anchor_normalized": anchor.test.normalized(r.expert), "bmm_val": t.val_accuracy,
                "bmm_test": run.test.mean_accuracy(), "bmm_normalized": run.test.normalized(r.expert),
                "relative_gain": run.relative, "lambdas": t.lambdas, "scale": t.scale,
                "best_trial": t.search.best.index, "trials": len(t.search.trials),
                "search_seconds": search_seconds(t.search), "replayed": t.search.replayed,
                "decisions": {k: {"held": d["held"], "interval": d["interval"], "why": d["why"]}
                              for k, d in run.decisions.items()},
                "log": str(t.search.log_path) if t.search.log_path else None})
    return rows


def comparison_table(results: dict[str, SuiteResult]) -> list[dict]:
    """Per (suite, anchor, variant): the tuned anchor, BMM over the seeds, BMM − anchor per seed, the verdict."""
    out = []
    for r in results.values():
        for anchor, a in r.anchors.items():
            for variant in dict.fromkeys(x.variant for x in r.runs):
                runs = r.runs_of(anchor, variant)
                if not runs:
                    continue
                decisions = [d for x in runs for d in x.decisions.values()]
                verdict = protocol.over_seeds(decisions)
                out.append({"suite": r.suite, "anchor": anchor + (" (data Grams)" if anchor_needs_grams(anchor)
                                                                  and variant == "free" else ""),
                            "α*": a.alpha, "variant": variant, "anchor acc": a.test.mean_accuracy(),
                            "BMM acc": protocol.spread([100 * x.test.mean_accuracy() for x in runs]),
                            "BMM − anchor (normalized pts), per seed": "; ".join(
                                fmt_interval(x.decisions["anchor"]["interval"]) for x in runs),
                            "relative gain": protocol.spread([100 * x.relative["diff"] for x in runs]) + " %",
                            "verdict": {True: "held", False: "did not hold", None: "not tested"}[verdict]})
    return out


def search_rows(results: dict[str, SuiteResult], suite: str) -> list[dict]:
    """What each search chose on ``suite``: log10 ρ per group, s, the best trial, its cost."""
    return [{"anchor": x.anchor, "variant": x.variant, "seed": x.seed,
             **{g: f"{v:.2f}" for g, v in x.tuning.lambdas.items()}, "s": f"{x.tuning.scale:.2f}",
             "best trial": x.tuning.search.best.index, "search s": search_seconds(x.tuning.search),
             "from log": x.tuning.search.replayed} for x in results[suite].runs]


def benchmark_headline(results: dict[str, SuiteResult], suite: str) -> dict:
    """The smallest mean (over seeds) gain of BMM over an anchor, in normalized points: positive when BMM is ahead of
    every anchor on average, and not inflated by one weak anchor the way a mean over anchors would be."""
    result = results[suite]
    variant = "data" if any(x.variant == "data" for x in result.runs) else "free"
    gains = {a: mean(x.decisions["anchor"]["interval"]["diff"] for x in result.runs_of(a, variant))
             for a in result.anchors if result.runs_of(a, variant)}
    worst = min(gains, key=gains.get)
    return {"name": f"BMM ({VARIANT_NAMES[variant]}) − its tuned anchor, smallest over {len(gains)} anchors "
                    f"({suite}, {worst}; normalized points, mean of seeds)", "value": gains[worst],
            "format": "{:+.2f}"}
