"""The logic behind ``notebooks/bmm_benchmark.ipynb`` and ``notebooks/bmm_search.ipynb`` (BMM, arXiv 2605.12843).

Both drive ``nbmerge.experiments.bmm.tune_bmm`` (the engine: anchor, Grams, ``BMMSolver``, seeded resumable
search, one test evaluation of the best point) and turn its results into tables, figures and claim verdicts
(BRIEF.md §1, claims 1-4). Nothing here re-implements the merge or the search.

Protocol (decided here, stated in the reports):

* **anchors** run with their registered defaults, except task arithmetic, whose α is the one the zoo picked on the
  validation split at build time (as in the ACE notebook), and WUDI, whose Adam step count is a parameter;
* **BMM** tunes one log10 ρ per functional group (attention-in/out, MLP-in/out) and the assembly scale s on the
  validation split only; the test split is evaluated once, on the best trial. The anchor's test accuracy is the
  baseline it is compared with;
* **variants**: ``data`` = data-assisted (each expert's input Grams on ``gram_examples`` training images of its
  own task); ``free`` = data-free (task-vector Grams τ_tᵀτ_t, Theorem 1). An anchor that itself needs data Grams
  (RegMean) keeps them in the data-free variant, so only BMM's likelihood is data-free there: it runs as
  ``grams="hybrid"`` with β = 0, which is the task-vector Gram exactly (the normalised λ cancels the rescaling,
  ``methods/bmm.py``) while ``tune_bmm`` still hands the anchor its data Grams. The table marks that row;
* every search writes its trial log under ``logs`` (relative to the notebook's working folder), named by the run's
  settings, so an interrupted notebook resumes where it stopped and a changed knob starts a new log.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import mean
from typing import Optional

from ..errors import NbmergeError
from ..registry import get_method
from ..search import DEFAULT_GRID, STRATEGIES
from ..walker import resolve_device
from .common import check_config, claim

ANCHORS = ("task_arithmetic", "ties", "tsv", "iso_cts", "wudi", "regmean")
# "Relative gains over weak anchors (TA, TIES) reach 27%" (BRIEF.md §1, claim 1): the paper's weak anchors.
WEAK_ANCHORS = ("task_arithmetic", "ties")
VARIANTS = ("data", "free")
VARIANT_NAMES = {"data": "data-assisted", "free": "data-free"}
PAPER_BUDGET = 20            # BO iterations in the paper (BRIEF.md §1, claim 3)
PAPER_GRID = 225             # the exhaustive baseline's configurations (15 × 15)
PAPER_WEAK_GAIN = 0.27       # the paper's largest relative gain over a weak anchor (ViT, its own checkpoints)
# Claim thresholds. "Beats" is a strict ordering of test accuracy: BMM must exceed the anchor by more than
# MIN_GAIN (0: any improvement counts; the evidence prints the gains so that a reader can judge them against the
# test split's resolution, 1/(test images)).
MIN_GAIN = 0.0
# "Stays effective up to 20 tasks": the sweep must reach a suite with at least this many tasks.
SCALING_TASKS = 20
# "Much lower wall time": BO's summed trial time at most 1/5 of the grid's. 20 vs 225 trials is 11×; 5× leaves
# room for BO's optimiser overhead (GP fit + acquisition) without calling a 2× saving "much lower".
MUCH_LOWER_FACTOR = 5.0
STRATEGY_NAMES = {"bayes": "BO (per-group λ)", "shared": "shared λ (BO)", "random": "random search",
                  "grid": "grid (shared λ × scale)"}


# ---------------------------------------------------------------------------------------------------- shared parts

def _check_anchor(anchor: str) -> None:
    if anchor == "bmm":
        raise NbmergeError("the anchor cannot be bmm itself")
    get_method(anchor)  # raises with the list of registered methods


def anchor_needs_grams(anchor: str) -> bool:
    return "grams" in get_method(anchor).needs


def gram_source(anchor: str, variant: str) -> tuple[str, float]:
    """``(grams, beta)`` for ``tune_bmm``: data → ("data", ·); free → ("task_vector", ·), or ("hybrid", 0.0) for
    an anchor that needs data Grams (its merge keeps them; BMM's own Gram is then exactly the task-vector one)."""
    if variant not in VARIANTS:
        raise NbmergeError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if variant == "data":
        return "data", 0.5
    return ("hybrid", 0.0) if anchor_needs_grams(anchor) else ("task_vector", 0.5)


def anchor_params(anchor: str, zoo, wudi_steps: int) -> dict:
    if anchor == "task_arithmetic":
        return {"scale": zoo.manifest["task_arithmetic"]["best_scale"]}
    if anchor == "wudi":
        return {"iters": wudi_steps}
    return {}


def open_zoo(suite: str, cache: str = ""):
    """The built suite (built first if missing: minutes for a tiny suite, cached afterwards)."""
    from ..zoo.build import build_zoo, load_zoo

    build_zoo(suite, cache=cache or None, quiet=True, log=lambda *_: None)
    return load_zoo(suite, cache or None)


def log_file(logs: str, suite: str, anchor: str, variant: str, strategy: str, seed: int, knobs: dict) -> Path:
    """``<logs>/<suite>-<anchor>-<variant>-<strategy>-seed<seed>-<hash of the other knobs>.jsonl``: the same settings
    resume the same log; a changed knob gets a new file instead of a settings-mismatch error."""
    digest = hashlib.sha256(json.dumps(knobs, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return Path(logs) / f"{suite}-{anchor}-{variant}-{strategy}-seed{seed}-{digest}.jsonl"


def relative_gain(value: float, anchor: float) -> float:
    """(BMM − anchor)/anchor; NaN when the anchor's accuracy is 0 (no finite relative gain)."""
    return (value - anchor) / anchor if anchor > 0 else float("nan")


def _tune(zoo, anchor: str, variant: str, *, strategy: str, budget: Optional[int], seed: int, n_initial, grid_size,
          gram_examples: int, gram_seed: int, wudi_steps: int, by_depth: int, logs: str, device: str):
    from .bmm import tune_bmm

    grams, beta = gram_source(anchor, variant)
    params = anchor_params(anchor, zoo, wudi_steps)
    # the zoo folder names its recipe hash: a rebuilt zoo with another recipe starts new logs
    knobs = {"zoo": zoo.root.name, "budget": budget, "n_initial": n_initial, "grid_size": grid_size,
             "gram_examples": gram_examples, "gram_seed": gram_seed, "anchor_params": params, "by_depth": by_depth}
    path = log_file(logs, zoo.manifest["suite"], anchor, variant, strategy, seed, knobs)
    path.parent.mkdir(parents=True, exist_ok=True)
    return tune_bmm(zoo, anchor, anchor_params=params, grams=grams, beta=beta, strategy=strategy,
                    budget=None if strategy == "grid" else budget, seed=seed, log_path=path, by_depth=by_depth,
                    gram_examples=gram_examples, gram_seed=gram_seed, n_initial=n_initial,
                    grid_sizes=DEFAULT_GRID if grid_size is None else grid_size, device=device, progress=False)


def _check_common(config) -> None:
    if config.budget < 1:
        raise NbmergeError(f"parameter 'budget' must be >= 1, got {config.budget}")
    if config.n_initial is not None and (isinstance(config.n_initial, bool) or not isinstance(config.n_initial, int)
                                         or not 1 <= config.n_initial <= config.budget):
        raise NbmergeError(f"parameter 'n_initial' must be in [1, budget], got {config.n_initial}")
    if config.gram_examples < 1:
        raise NbmergeError(f"parameter 'gram_examples' must be >= 1, got {config.gram_examples}")
    if config.wudi_steps < 1:
        raise NbmergeError(f"parameter 'wudi_steps' must be >= 1, got {config.wudi_steps}")


# ============================================================================================ bmm_benchmark notebook

@dataclass(frozen=True)
class BenchmarkConfig:
    suite: str = "tiny8"            # claim 1 and the λ table are read on this suite (must be in suites)
    suites: tuple = ("tiny8", "tiny14", "tiny20")   # the task-count sweep (claim 2)
    device: str = "cpu"
    seed: int = 0                   # the search's seed (BO's initial design and proposals)
    smoke: bool = False
    anchors: tuple = ANCHORS
    variants: tuple = VARIANTS      # data (data-assisted) and/or free (data-free)
    budget: int = 10                # BO trials per run; the paper's is 20 (the notebook says why 10 here)
    n_initial: Optional[int] = None  # space-filling trials before the GP (None: min(5, budget))
    gram_examples: int = 256        # training images per task for the data Grams
    gram_seed: int = 0
    wudi_steps: int = 300           # WUDI's reference protocol (Adam steps per matrix)
    by_depth: int = 0               # 0: the four functional groups; n ≥ 2: each split into n depth bins
    logs: str = "logs"              # trial logs, relative to the working folder
    cache: str = ""                 # zoo cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)

    def __post_init__(self):
        check_config(self)
        for name in ("suites", "anchors", "variants"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.suite not in self.suites:
            raise NbmergeError(f"parameter 'suite' ({self.suite!r}) must be one of suites {list(self.suites)}")
        if not self.anchors or not self.variants:
            raise NbmergeError("parameters 'anchors' and 'variants' must not be empty")
        for anchor in self.anchors:
            _check_anchor(anchor)
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise NbmergeError(f"parameter 'variants': unknown {unknown}; choose from {list(VARIANTS)}")
        _check_common(self)
        object.__setattr__(self, "device", resolve_device(self.device))


def as_dict(config) -> dict:
    return asdict(config)


def benchmark_row(zoo, anchor: str, variant: str, tuning) -> dict:
    """One (suite, anchor, variant) result in plain numbers."""
    expert = zoo.manifest["expert_accuracy"]["test"]
    summary = tuning.summary()
    anchor_test = tuning.anchor["test"]["accuracy"]
    bmm_test = tuning.test_accuracy
    return {"suite": zoo.manifest["suite"], "tasks": len(zoo.tasks), "anchor": anchor, "variant": variant,
            "gram": summary["gram"], "anchor_uses_data": anchor_needs_grams(anchor),
            "anchor_val": tuning.anchor["val"]["accuracy"], "anchor_test": anchor_test,
            "anchor_normalized": tuning.anchor["test"].get("normalized_accuracy"),
            "bmm_val": tuning.val_accuracy, "bmm_test": bmm_test,
            "bmm_normalized": summary["test_normalized_accuracy"],
            "gain": bmm_test - anchor_test, "relative_gain": relative_gain(bmm_test, anchor_test),
            "experts": mean(expert[t] for t in zoo.tasks), "lambdas": tuning.lambdas, "scale": tuning.scale,
            "best_trial": tuning.search.best.index, "trials": len(tuning.search.trials),
            "trial_seconds": tuning.search.trial_seconds, "replayed": tuning.search.replayed,
            "per_task": summary["test_per_task"],
            "log": str(tuning.search.log_path) if tuning.search.log_path else None}


def benchmark(config: BenchmarkConfig, log=print) -> list[dict]:
    """BMM (BO on validation) over every anchor and variant, on every suite; one row per (suite, anchor, variant)."""
    rows = []
    for suite in config.suites:
        zoo = open_zoo(suite, config.cache)
        for anchor in config.anchors:
            for variant in config.variants:
                start = time.perf_counter()
                tuning = _tune(zoo, anchor, variant, strategy="bayes", budget=config.budget, seed=config.seed,
                               n_initial=config.n_initial, grid_size=None, gram_examples=config.gram_examples,
                               gram_seed=config.gram_seed, wudi_steps=config.wudi_steps, by_depth=config.by_depth,
                               logs=config.logs, device=config.device)
                row = benchmark_row(zoo, anchor, variant, tuning)
                rows.append(row)
                log(f"{suite:>7} {anchor:<16} {variant:<4} anchor {row['anchor_test']:.4f} → "
                    f"BMM {row['bmm_test']:.4f} ({row['relative_gain']:+.1%}), {time.perf_counter() - start:.0f} s"
                    + (f", {row['replayed']} trials from the log" if row["replayed"] else ""))
    return rows


def comparison_table(rows: list[dict]) -> list[dict]:
    """One row per (suite, anchor): the anchor, BMM per variant, relative gains, the experts' average."""
    out: dict[tuple, dict] = {}
    for r in rows:
        entry = out.setdefault((r["suite"], r["anchor"]), {
            "suite": r["suite"], "tasks": r["tasks"],
            "anchor": r["anchor"] + (" (data Grams)" if r["anchor_uses_data"] else ""),
            "anchor acc": r["anchor_test"], "experts": r["experts"]})
        entry[f"BMM-{r['variant']}"] = r["bmm_test"]
        entry[f"gain {r['variant']}"] = r["relative_gain"]
    return list(out.values())


def suite_summary(rows: list[dict]) -> list[dict]:
    """Per suite and variant: pairs won, mean/min relative gain, mean normalized accuracy of anchors and BMM."""
    out = []
    for suite in dict.fromkeys(r["suite"] for r in rows):
        for variant in dict.fromkeys(r["variant"] for r in rows):
            sel = [r for r in rows if r["suite"] == suite and r["variant"] == variant]
            if not sel:
                continue
            out.append({"suite": suite, "tasks": sel[0]["tasks"], "variant": variant,
                        "won": sum(r["gain"] > MIN_GAIN for r in sel), "anchors": len(sel),
                        "mean_relative_gain": mean(r["relative_gain"] for r in sel),
                        "min_relative_gain": min(r["relative_gain"] for r in sel),
                        "anchor_normalized": mean(r["anchor_normalized"] for r in sel),
                        "bmm_normalized": mean(r["bmm_normalized"] for r in sel)})
    return out


def _beats_every_anchor(rows: list[dict], suite: str, variant: str):
    sel = [r for r in rows if r["suite"] == suite and r["variant"] == variant]
    if not sel:
        return None, f"BMM {VARIANT_NAMES[variant]} was not run on {suite} (parameter `variants`)"
    held = all(r["gain"] > MIN_GAIN for r in sel)
    evidence = f"{suite}, test accuracy: " + "; ".join(
        f"{r['anchor']} {100 * r['anchor_test']:.2f}% → {100 * r['bmm_test']:.2f}% ({r['relative_gain']:+.1%})"
        for r in sel)
    losses = [r["anchor"] for r in sel if not r["gain"] > MIN_GAIN]
    if losses:
        evidence += f". Not beaten: {', '.join(losses)}"
    return held, evidence


def benchmark_claims(rows: list[dict], suite: str) -> list:
    out = []
    source = "BRIEF.md §1 claim 1; arXiv 2605.12843 abstract"
    for variant in VARIANTS:
        held, evidence = _beats_every_anchor(rows, suite, variant)
        out.append(claim(f"BMM ({VARIANT_NAMES[variant]}) beats every plug-in anchor it is given", source, held,
                         evidence))

    primary = [r for r in rows if r["suite"] == suite]
    per_anchor = {a: mean(r["relative_gain"] for r in primary if r["anchor"] == a)
                  for a in dict.fromkeys(r["anchor"] for r in primary)}
    weak = {a: g for a, g in per_anchor.items() if a in WEAK_ANCHORS}
    strong = {a: g for a, g in per_anchor.items() if a not in WEAK_ANCHORS}
    text = "BMM's relative gain is largest over the weak anchors (TA, TIES)"
    if weak and strong:
        top = max((r for r in primary if r["anchor"] in WEAK_ANCHORS), key=lambda r: r["relative_gain"])
        held = mean(weak.values()) > mean(strong.values())
        evidence = (f"{suite}, mean relative gain over the variants: weak " + ", ".join(
            f"{a} {g:+.1%}" for a, g in weak.items()) + f" (mean {mean(weak.values()):+.1%}); strong "
            + ", ".join(f"{a} {g:+.1%}" for a, g in strong.items()) + f" (mean {mean(strong.values()):+.1%}). "
            f"Largest over a weak anchor: {top['relative_gain']:+.1%} ({top['anchor']}, {top['variant']}); "
            f"the paper reports up to {PAPER_WEAK_GAIN:.0%} on its ViT checkpoints")
        out.append(claim(text, source, held, evidence))
    else:
        out.append(claim(text, source, None, "needs at least one weak (task_arithmetic, ties) and one other anchor"))

    text = f"BMM stays effective as the number of merged tasks grows to {SCALING_TASKS}"
    source = "BRIEF.md §1 claim 2"
    by_suite = {r["suite"]: r["tasks"] for r in rows}
    if len(by_suite) < 2 or max(by_suite.values()) < SCALING_TASKS:
        out.append(claim(text, source, None, f"needs a sweep of at least two suites reaching {SCALING_TASKS} tasks "
                         f"(ran: {', '.join(f'{s} ({n} tasks)' for s, n in by_suite.items())})"))
    else:
        # Effective = on every suite of the sweep, BMM beats every anchor in every variant that ran.
        summary = suite_summary(rows)
        held = all(s["won"] == s["anchors"] for s in summary)
        evidence = "; ".join(f"{s['suite']} ({s['tasks']} tasks, {s['variant']}): beats {s['won']}/{s['anchors']} "
                             f"anchors, mean relative gain {s['mean_relative_gain']:+.1%}, normalized "
                             f"{100 * s['anchor_normalized']:.1f}% → {100 * s['bmm_normalized']:.1f}%"
                             for s in sorted(summary, key=lambda s: s["tasks"]))
        out.append(claim(text, source, held, evidence))
    return out


def benchmark_headline(rows: list[dict], suite: str) -> dict:
    """The smallest relative gain over an anchor: positive exactly when BMM beats every anchor (claim 1), and not
    inflated by one badly scaled anchor the way a mean would be."""
    variant = "data" if any(r["variant"] == "data" for r in rows) else "free"
    sel = [r for r in rows if r["suite"] == suite and r["variant"] == variant]
    worst = min(sel, key=lambda r: r["relative_gain"])
    return {"name": f"BMM ({VARIANT_NAMES[variant]}) smallest relative gain over its {len(sel)} anchors ({suite}; "
                    f"{worst['anchor']})",
            "value": worst["relative_gain"], "format": "{:+.1%}"}


def plot_accuracy_per_anchor(rows: list[dict]):
    """Per suite: test accuracy of each anchor, BMM-data and BMM-free; the experts' average as the ceiling."""
    import matplotlib.pyplot as plt
    import numpy as np

    suites = list(dict.fromkeys(r["suite"] for r in rows))
    fig, axes = plt.subplots(1, len(suites), figsize=(4.2 * len(suites) + 1, 3.8), squeeze=False, sharey=True)
    kinds = [("anchor", "anchor", "#bbbbbb")] + [(v, f"BMM-{v}", c) for v, c in (("data", "#1f77b4"),
                                                                                   ("free", "#ff7f0e"))
                                                  if any(r["variant"] == v for r in rows)]
    width = 0.8 / len(kinds)
    for ax, suite in zip(axes[0], suites):
        table = [r for r in comparison_table(rows) if r["suite"] == suite]
        x = np.arange(len(table))
        for i, (kind, label, colour) in enumerate(kinds):
            values = [100 * (t["anchor acc"] if kind == "anchor" else t.get(f"BMM-{kind}", float("nan")))
                      for t in table]
            ax.bar(x + (i - (len(kinds) - 1) / 2) * width, values, width, label=label, color=colour)
        ax.axhline(100 * table[0]["experts"], color="black", linestyle="--", linewidth=1, label="experts' average")
        ax.set_xticks(x, [t["anchor"].split(" ")[0] for t in table], rotation=35, ha="right", fontsize=8)
        ax.set_title(f"{suite} ({table[0]['tasks']} tasks)")
        low = min(100 * min(t["anchor acc"], *(t.get(f"BMM-{k}", 1) for k, _, _ in kinds[1:])) for t in table)
        ax.set_ylim(max(0, low - 5), None)
    axes[0][0].set_ylabel("mean test accuracy (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


def plot_task_count(rows: list[dict]):
    """Normalized test accuracy against the number of tasks: per anchor, the anchor (dotted) and BMM per variant."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    anchors = list(dict.fromkeys(r["anchor"] for r in rows))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = {"anchor": ":", "data": "-", "free": "--"}
    for i, anchor in enumerate(anchors):
        colour = colours[i % len(colours)]
        sel = [r for r in rows if r["anchor"] == anchor]
        anchor_points = sorted({(r["tasks"], 100 * r["anchor_normalized"]) for r in sel})
        ax.plot(*zip(*anchor_points), linestyle=styles["anchor"], marker=".", color=colour)
        for variant in VARIANTS:
            points = sorted((r["tasks"], 100 * r["bmm_normalized"]) for r in sel if r["variant"] == variant)
            if points:
                ax.plot(*zip(*points), linestyle=styles[variant], marker="o", color=colour)
    handles = [Line2D([], [], color=colours[i % len(colours)], label=a) for i, a in enumerate(anchors)]
    handles += [Line2D([], [], color="black", linestyle=s, label=("anchor" if k == "anchor" else f"BMM-{k}"))
                for k, s in styles.items() if k == "anchor" or any(r["variant"] == k for r in rows)]
    ax.axhline(100, color="black", linewidth=0.8)
    ax.set_xticks(sorted({r["tasks"] for r in rows}))
    ax.set_xlabel("number of merged tasks")
    ax.set_ylabel("normalized test accuracy (%)")
    ax.set_title("merging more tasks (100% = each expert on its own task)")
    ax.legend(handles=handles, fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


# =============================================================================================== bmm_search notebook

@dataclass(frozen=True)
class SearchConfig:
    suite: str = "tiny8"
    anchor: str = "task_arithmetic"
    variant: str = "data"           # data (data-assisted Grams) or free (task-vector Grams)
    device: str = "cpu"
    seed: int = 0                   # first search seed; the seeded strategies run seeds seed .. seed+repeats-1
    smoke: bool = False
    strategies: tuple = ("bayes", "shared", "random", "grid")
    budget: int = PAPER_BUDGET      # trials of bayes, shared and random (the paper's BO budget)
    repeats: int = 3                # seeds per seeded strategy (the grid is deterministic: run once)
    n_initial: Optional[int] = None  # space-filling trials before the GP (None: min(5, budget))
    grid_size: int = 15             # values per axis of the grid over (shared log10 ρ, scale): 15² = 225
    gram_examples: int = 256
    gram_seed: int = 0
    wudi_steps: int = 300
    by_depth: int = 0
    bench_vit_b32: bool = True      # also time fast vs naive solves on one ViT-B/32 block (~1 min on 2 cores)
    bench_trials: int = 1           # timed repetitions per λ in the solve benchmark
    logs: str = "logs"
    cache: str = ""

    def __post_init__(self):
        check_config(self)
        object.__setattr__(self, "strategies", tuple(self.strategies))
        _check_anchor(self.anchor)
        if self.variant not in VARIANTS:
            raise NbmergeError(f"parameter 'variant' must be one of {list(VARIANTS)}, got {self.variant!r}")
        unknown = [s for s in self.strategies if s not in STRATEGIES]
        if unknown or not self.strategies:
            raise NbmergeError(f"parameter 'strategies': unknown {unknown}; choose from {list(STRATEGIES)}")
        if self.repeats < 1 or self.grid_size < 1 or self.bench_trials < 1:
            raise NbmergeError("parameters 'repeats', 'grid_size' and 'bench_trials' must be >= 1")
        _check_common(self)
        object.__setattr__(self, "device", resolve_device(self.device))


def strategy_row(strategy: str, seed: int, tuning) -> dict:
    timing = tuning.timing
    return {"strategy": strategy, "seed": seed, "trials": len(tuning.search.trials),
            "val": tuning.val_accuracy, "test": tuning.test_accuracy,
            "anchor_val": tuning.anchor["val"]["accuracy"], "anchor_test": tuning.anchor["test"]["accuracy"],
            "best_trial": tuning.search.best.index, "best_params": tuning.search.best_params,
            # wall time of the search: objective + optimiser over every trial, whichever call evaluated it (a
            # resumed run's replay time would understate it)
            "seconds": tuning.search.trial_seconds,
            "merge_s": timing.get("merge_s_median"), "eval_s": timing.get("eval_s_median"),
            "optimiser_s": timing.get("optimiser_s_median"), "convergence": tuning.search.convergence,
            "replayed": tuning.search.replayed,
            "log": str(tuning.search.log_path) if tuning.search.log_path else None}


def compare_strategies(config: SearchConfig, log=print) -> list[dict]:
    """Every strategy on one suite and anchor, each seeded strategy ``repeats`` times; one row per search."""
    zoo = open_zoo(config.suite, config.cache)
    rows = []
    for strategy in config.strategies:
        seeds = [config.seed] if strategy == "grid" else [config.seed + i for i in range(config.repeats)]
        for seed in seeds:
            start = time.perf_counter()
            tuning = _tune(zoo, config.anchor, config.variant, strategy=strategy, budget=config.budget, seed=seed,
                           n_initial=config.n_initial, grid_size=config.grid_size,
                           gram_examples=config.gram_examples, gram_seed=config.gram_seed,
                           wudi_steps=config.wudi_steps, by_depth=config.by_depth, logs=config.logs,
                           device=config.device)
            row = strategy_row(strategy, seed, tuning)
            rows.append(row)
            log(f"{strategy:<7} seed {seed}: {row['trials']} trials, val {row['val']:.4f}, test {row['test']:.4f}, "
                f"search {row['seconds']:.0f} s ({time.perf_counter() - start:.0f} s in this call"
                + (f", {row['replayed']} trials from the log)" if row["replayed"] else ")"))
    return rows


def strategy_summary(rows: list[dict]) -> list[dict]:
    """Per strategy: trials, mean (and min-max over seeds) validation and test accuracy, mean wall time."""
    out = []
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        sel = [r for r in rows if r["strategy"] == strategy]
        out.append({"strategy": strategy, "name": STRATEGY_NAMES.get(strategy, strategy), "runs": len(sel),
                    "trials": sel[0]["trials"], "val": mean(r["val"] for r in sel),
                    "test": mean(r["test"] for r in sel), "test_min": min(r["test"] for r in sel),
                    "test_max": max(r["test"] for r in sel), "seconds": mean(r["seconds"] for r in sel),
                    "merge_s": mean(r["merge_s"] for r in sel), "eval_s": mean(r["eval_s"] for r in sel),
                    "optimiser_s": mean(r["optimiser_s"] for r in sel)})
    return out


def _describe(s: dict) -> str:
    spread = f" [{100 * s['test_min']:.2f}–{100 * s['test_max']:.2f}]" if s["runs"] > 1 else ""
    return (f"{s['name']}: {s['trials']} trials × {s['runs']} run(s), test {100 * s['test']:.2f}%{spread}, "
            f"val {100 * s['val']:.2f}%, {s['seconds']:.1f} s per search")


def search_claims(rows: list[dict]) -> list:
    summary = {s["strategy"]: s for s in strategy_summary(rows)}
    out = []
    text = (f"{PAPER_BUDGET} BO iterations beat the exhaustive {PAPER_GRID}-configuration grid at much lower "
            "wall time")
    source = "BRIEF.md §1 claim 3"
    if "bayes" in summary and "grid" in summary:
        bo, grid = summary["bayes"], summary["grid"]
        better = bo["test"] > grid["test"] + MIN_GAIN
        faster = bo["seconds"] * MUCH_LOWER_FACTOR <= grid["seconds"]
        ratio = grid["seconds"] / bo["seconds"] if bo["seconds"] > 0 else float("inf")
        out.append(claim(text, source, better and faster,
                         f"{_describe(bo)}; {_describe(grid)}. Mean test accuracy of BO "
                         f"{'>' if better else '≤'} grid's; BO's wall time is {ratio:.1f}× lower "
                         f"(needs ≥ {MUCH_LOWER_FACTOR:g}×)"))
    else:
        out.append(claim(text, source, None, "needs the strategies bayes and grid"))
    for other, label in (("shared", "a shared λ"), ("random", "random search")):
        text = f"replacing BO by {label} lowers accuracy"
        source = "BRIEF.md §1 claim 4 (ablation, global coordination)"
        if "bayes" in summary and other in summary:
            bo, alt = summary["bayes"], summary[other]
            out.append(claim(text, source, bo["test"] > alt["test"] + MIN_GAIN,
                             f"{_describe(bo)}; {_describe(alt)} (same budget; mean over seeds)"))
        else:
            out.append(claim(text, source, None, f"needs the strategies bayes and {other}"))
    return out


def search_headline(rows: list[dict]) -> dict:
    summary = {s["strategy"]: s for s in strategy_summary(rows)}
    if "bayes" not in summary:
        first = next(iter(summary.values()))
        return {"name": f"best test accuracy, {first['name']}", "value": first["test"], "format": "{:.2%}"}
    other = next((s for s in ("grid", "shared", "random") if s in summary), None)
    if other is None:
        return {"name": "BO test accuracy", "value": summary["bayes"]["test"], "format": "{:.2%}"}
    return {"name": f"BO − {STRATEGY_NAMES[other]}, test accuracy points",
            "value": 100 * (summary["bayes"]["test"] - summary[other]["test"]), "format": "{:+.2f}"}


def timing_table(rows: list[dict]) -> list[dict]:
    """Per strategy, median seconds per trial: merge (BMMSolver), validation pass, optimiser (ask + tell)."""
    return [{"strategy": s["name"], "merge s": s["merge_s"], "eval s": s["eval_s"], "optimiser s": s["optimiser_s"],
             "eval / merge": s["eval_s"] / s["merge_s"] if s["merge_s"] else float("nan"),
             "search s": s["seconds"]} for s in strategy_summary(rows)]


def solve_benchmark(zoo, config: SearchConfig) -> list[dict]:
    """``nbmerge.bench_bmm``: one trial's BMM solves by the eigenbasis fast path vs a fresh ``torch.linalg.solve``,
    on the zoo's shapes (its width, depth and task count; random weights: the cost does not depend on them) and,
    unless disabled, on one ViT-B/32 block with 8 tasks (multiply by 12 for the whole image tower)."""
    from ..bench_bmm import bench_bmm

    runs = [("zoo", {"width": zoo.arch.width, "layers": zoo.arch.layers, "tasks": len(zoo.tasks)})]
    if config.bench_vit_b32:
        runs.append(("ViT-B/32 (1 of 12 blocks)", {"width": 768, "layers": 1, "tasks": 8}))
    out = []
    for label, shape in runs:
        result = bench_bmm(**shape, trials=config.bench_trials, device=config.device,
                           method_trial=label == "zoo", seed=config.seed)
        out.append({"model": label, **shape, **result})
    return out


def plot_convergence(rows: list[dict], budget: Optional[int] = None):
    """Best validation accuracy so far against the trial index: each search thin, the seeds' mean thick."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6.8, 4.0))
    colours = {"bayes": "#1f77b4", "shared": "#2ca02c", "random": "#d62728", "grid": "#7f7f7f"}
    steps = {"drawstyle": "steps-post"}  # best-so-far only moves at the trial that improves it
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        sel = [r for r in rows if r["strategy"] == strategy]
        colour = colours.get(strategy)
        for r in sel:
            trials = np.arange(1, len(r["convergence"]) + 1)
            ax.plot(trials, 100 * np.array(r["convergence"]), color=colour, alpha=0.35 if len(sel) > 1 else 1.0,
                    linewidth=1 if len(sel) > 1 else 2, **steps)
        if len(sel) > 1:
            length = min(len(r["convergence"]) for r in sel)
            curve = np.mean([r["convergence"][:length] for r in sel], axis=0)
            ax.plot(np.arange(1, length + 1), 100 * curve, color=colour, linewidth=2.5, **steps)
        runs = f", mean of {len(sel)}" if len(sel) > 1 else ""
        ax.plot([], [], color=colour, linewidth=2.5, label=f"{STRATEGY_NAMES.get(strategy, strategy)}{runs}")
    ax.axhline(100 * rows[0]["anchor_val"], color="black", linestyle="--", linewidth=1, label="anchor alone")
    if budget:
        ax.axvline(budget, color="black", linestyle=":", linewidth=1)
    longest = max(len(r["convergence"]) for r in rows)
    if budget and longest > 4 * budget:
        ax.set_xscale("log")  # the 225-point grid next to 20-trial searches
    ax.set_xlabel("trial")
    ax.set_ylabel("best validation accuracy so far (%)")
    ax.set_title("convergence of the λ search")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
