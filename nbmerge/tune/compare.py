"""Search strategies for BMM's prior strengths compared on one anchor: same engine, same budget, same seeds.

Every strategy of ``nbmerge.tune.search`` (``bayes``: per-group log10 ρ by Bayesian optimisation; ``shared``: the
same over one log10 ρ for every group; ``random``; ``grid``: exhaustive over the shared log10 ρ, × s when the scale
is searched) runs through ``tune_bmm`` on the same α*-tuned anchor (:func:`nbmerge.tune.study.run_search`). A
seeded strategy runs once per seed (one search is one random draw); each seed draws its own validation subset (the
subset seed = the search seed) and tunes the anchor's α* on it. The grid is deterministic given the subset: it runs
at the first ``grid_repeats`` seeds. Logged wall time is each search's own
(:func:`nbmerge.tune.study.search_seconds`); :func:`time_arms` times fresh trials of two strategies, interleaved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import mean, median
from typing import Callable, Optional, Sequence

import numpy as np

from ..evaluate import protocol
from .study import AnchorRun, Lab, run_search, search_seconds, tune_anchor

STRATEGY_NAMES = {"bayes": "BO (per-group λ)", "shared": "shared λ (BO)", "random": "random search",
                  "grid": "grid (shared λ)"}


def strategy_name(strategy: str, with_scale: bool = False) -> str:
    """The strategy's label, true to the run: "× scale" only when the assembly scale was searched."""
    name = STRATEGY_NAMES.get(strategy, strategy)
    if not with_scale:
        return name
    return {"bayes": "BO (per-group λ × scale)", "shared": "shared λ × scale (BO)",
            "random": "random search (per-group λ × scale)", "grid": "grid (shared λ × scale)"}.get(strategy, name)


@dataclass
class StrategyResult:
    suite: str
    expert: dict
    anchors: dict                                # seed → AnchorRun (α* tuned on that seed's validation subset)
    runs: list = field(default_factory=list)     # (strategy, seed, BMMTuning)
    budget: int = 0                              # trials of each seeded strategy
    grid_points: int = 0                         # the grid's configurations
    with_scale: bool = False
    evaluations: int = 0                         # trial-cache misses: 0 on a rerun with warm caches
    labs: dict = field(default_factory=dict, repr=False)   # seed → Lab (that seed's validation subset)

    @property
    def anchor(self) -> AnchorRun:
        """The anchor at the first seed (for display; each seed has its own α*)."""
        return self.anchors[next(iter(self.anchors))]

    def of(self, strategy: str) -> list:
        return [(seed, t) for s, seed, t in self.runs if s == strategy]


def compare_strategies(lab: Lab, anchor: str, variant: str, strategies: Sequence[str], seeds: Sequence[int],
                       *, budget: int, n_initial: Optional[int], grid_size: int, with_scale: bool,
                       gram_examples: int, gram_seed: int, depth_bins: int, grid_repeats: int = 1,
                       wudi_steps: int = 300, device: str = "cpu", workers: int = 1, ray_address: str = "",
                       log: Callable = print) -> StrategyResult:
    """Every strategy on the lab's suite with ``anchor`` as the prior mean: per seed of ``seeds``, that seed's
    validation subset and α*, then each seeded strategy; the grid (``grid_size`` values per axis) at the first
    ``grid_repeats`` seeds."""
    grid_points = grid_size ** (2 if with_scale else 1)
    result = StrategyResult(lab.suite, lab.expert, {}, budget=budget, grid_points=grid_points, with_scale=with_scale)
    evaluations = 0
    for i, seed in enumerate(seeds):
        slab = result.labs[seed] = lab.at_seed(seed)
        misses = slab.cache.misses
        prior = result.anchors[seed] = tune_anchor(slab, anchor, wudi_steps=wudi_steps, gram_examples=gram_examples,
                                                   gram_seed=gram_seed, device=device)
        log(f"seed {seed}: {prior.name} α* = {prior.alpha:g} on this seed's validation subset, test "
            f"{prior.test.mean_accuracy():.4f}")
        for strategy in strategies:
            if strategy == "grid" and i >= grid_repeats:
                continue
            start = time.perf_counter()
            tuning = run_search(slab, prior, variant, strategy=strategy, seed=seed, budget=budget,
                                n_initial=n_initial, grid_size=grid_size, with_scale=with_scale,
                                gram_examples=gram_examples, gram_seed=gram_seed, depth_bins=depth_bins,
                                device=device, workers=workers, ray_address=ray_address)
            result.runs.append((strategy, seed, tuning))
            log(f"{strategy:<7} seed {seed}: {len(tuning.search.trials)} trials, val {tuning.val_accuracy:.4f}, "
                f"test {tuning.test_accuracy:.4f}, search {search_seconds(tuning.search):.0f} s "
                f"({time.perf_counter() - start:.0f} s in this call"
                + (f", {tuning.search.replayed} trials from the log)" if tuning.search.replayed else ")"))
        evaluations += slab.cache.misses - misses
    result.evaluations = evaluations
    log(f"trial cache: {evaluations} evaluations, the rest from the caches")
    return result


def time_arms(result: StrategyResult, arms: Sequence[str] = ("bayes", "grid"), seed: Optional[int] = None,
              repeats: int = 5) -> dict:
    """Fresh trials of each strategy in ``arms``, timed interleaved on the same machine state (arm 1, arm 2, arm 1,
    …; ``repeats`` of each): a trial is the merge at one of the strategy's own logged points (cycling through them)
    plus one pass over the seed's validation subset, never the trial cache. The optimiser's own time per trial (GP
    fit + acquisition for BO; nothing for the grid) is the median logged by the searches. Returns, per arm, the
    timed seconds, the median logged optimiser seconds and the trials the strategy spends."""
    from .bmm import merge_params
    from ..device import synchronize

    if repeats < 1:
        raise ValueError(f"time_arms: repeats must be >= 1, got {repeats}")
    if seed is None:
        common = [s for s in result.labs if all(s in dict(result.of(arm)) for arm in arms)]
        if not common:
            raise ValueError(f"time_arms: no seed ran every strategy of {list(arms)}")
        seed = common[0]
    tunings = {arm: dict(result.of(arm))[seed] for arm in arms}
    evaluator = result.labs[seed].cache.evaluator
    solver = tunings[arms[0]].build_solver()
    groups = list(tunings[arms[0]].lambdas)
    state = merge_params(solver, tunings[arms[0]].search.best_params, groups)   # warm-up, and the buffer
    evaluator.evaluate(state, "val")
    seconds = {arm: [] for arm in arms}
    for i in range(repeats):
        for arm in arms:
            trials = tunings[arm].search.trials
            params = trials[i % len(trials)].params
            start = time.perf_counter()
            merge_params(solver, params, groups, out=state)
            synchronize(solver.device)
            evaluator.evaluate(state, "val")
            seconds[arm].append(time.perf_counter() - start)
    out = {}
    for arm in arms:
        optimiser = [trial.search_seconds for _, tuning in result.of(arm) for trial in tuning.search.trials]
        out[arm] = {"seconds": seconds[arm], "optimiser_s": median(optimiser) if optimiser else 0.0,
                    "trials": len(tunings[arm].search.trials), "seed": seed}
    return out


def time_ratio(timing: dict, slow: str = "grid", fast: str = "bayes", n_boot: int = 2000, seed: int = 0):
    """(point, bootstrap samples) of the wall-time ratio slow/fast of two whole searches, each estimated as its
    trials × (median timed seconds per trial + median logged optimiser seconds); the samples resample the timed
    trials of each arm."""
    rng = np.random.default_rng(seed)

    def total(arm, values):
        return timing[arm]["trials"] * (float(np.median(values)) + timing[arm]["optimiser_s"])

    point = total(slow, timing[slow]["seconds"]) / total(fast, timing[fast]["seconds"])
    samples = np.empty(n_boot)
    a, b = np.asarray(timing[slow]["seconds"]), np.asarray(timing[fast]["seconds"])
    for i in range(n_boot):
        samples[i] = total(slow, rng.choice(a, a.size)) / total(fast, rng.choice(b, b.size))
    return point, samples


def strategy_rows(result: StrategyResult) -> list[dict]:
    """One JSON-able row per search."""
    rows = []
    for strategy, seed, t in result.runs:
        timing = t.timing
        rows.append({"strategy": strategy, "seed": seed, "trials": len(t.search.trials), "val": t.val_accuracy,
                     "test": t.test_accuracy, "normalized": t.test_predictions.normalized(result.expert),
                     "name": strategy_name(strategy, result.with_scale), "with_scale": result.with_scale,
                     "alpha": result.anchors[seed].alpha,
                     "anchor_val": result.anchors[seed].val_accuracy,
                     "anchor_test": result.anchors[seed].test.mean_accuracy(),
                     "best_trial": t.search.best.index, "best_params": t.search.best_params,
                     # the search's own wall time, as logged when the trials ran (a replay keeps it)
                     "seconds": search_seconds(t.search),
                     "merge_s": timing.get("merge_s_median"), "eval_s": timing.get("eval_s_median"),
                     "optimiser_s": timing.get("optimiser_s_median"), "convergence": t.search.convergence,
                     "replayed": t.search.replayed,
                     "log": str(t.search.log_path) if t.search.log_path else None})
    return rows


def strategy_summary(rows: list[dict]) -> list[dict]:
    """Per strategy: trials, runs, validation and test accuracy over seeds (mean ± sd, min–max), wall time."""
    out = []
    for strategy in dict.fromkeys(r["strategy"] for r in rows):
        sel = [r for r in rows if r["strategy"] == strategy]
        out.append({"strategy": strategy, "name": sel[0].get("name", STRATEGY_NAMES.get(strategy, strategy)),
                    "runs": len(sel),
                    "trials": sel[0]["trials"], "val": mean(r["val"] for r in sel),
                    "test": mean(r["test"] for r in sel),
                    "test over seeds (%)": protocol.spread([100 * r["test"] for r in sel]),
                    "seconds": mean(r["seconds"] for r in sel),
                    "merge_s": mean(r["merge_s"] or 0.0 for r in sel), "eval_s": mean(r["eval_s"] or 0.0 for r in sel),
                    "optimiser_s": mean(r["optimiser_s"] or 0.0 for r in sel)})
    return out


def timing_table(rows: list[dict]) -> list[dict]:
    """Per strategy, median seconds per trial: merge (BMMSolver), validation pass, optimiser (ask + tell)."""
    return [{"strategy": s["name"], "merge s": s["merge_s"], "eval s": s["eval_s"], "optimiser s": s["optimiser_s"],
             "eval / merge": s["eval_s"] / s["merge_s"] if s["merge_s"] else float("nan"),
             "search s": s["seconds"]} for s in strategy_summary(rows)]
