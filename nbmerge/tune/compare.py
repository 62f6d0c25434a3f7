"""Search strategies for BMM's prior strengths compared on one anchor: same engine, same budget, same seeds.

Every strategy of ``nbmerge.tune.search`` (``bayes``: per-group log10 ρ by Bayesian optimisation; ``shared``: the
same over one log10 ρ for every group; ``random``; ``grid``: exhaustive over the shared log10 ρ, × s when the scale
is searched) runs through ``tune_bmm`` on the same α*-tuned anchor (:func:`nbmerge.tune.anchors.run_search`). A
seeded strategy runs once per seed (one search is one random draw); the grid is deterministic and runs once. Wall
time is each search's own (:func:`nbmerge.tune.anchors.search_seconds`), as logged when its trials ran.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import mean
from typing import Callable, Optional, Sequence

from .. import protocol
from .anchors import AnchorRun, Lab, run_search, search_seconds

STRATEGY_NAMES = {"bayes": "BO (per-group λ)", "shared": "shared λ (BO)", "random": "random search",
                  "grid": "grid (shared λ × scale)"}


@dataclass
class StrategyResult:
    suite: str
    expert: dict
    anchor: AnchorRun
    runs: list = field(default_factory=list)     # (strategy, seed, BMMTuning)
    budget: int = 0                              # trials of each seeded strategy
    grid_points: int = 0                         # the grid's configurations
    evaluations: int = 0                         # trial-cache misses: 0 on a rerun with warm caches

    def of(self, strategy: str) -> list:
        return [(seed, t) for s, seed, t in self.runs if s == strategy]


def compare_strategies(lab: Lab, anchor: AnchorRun, variant: str, strategies: Sequence[str], seeds: Sequence[int],
                       *, budget: int, n_initial: Optional[int], grid_size: int, with_scale: bool,
                       gram_examples: int, gram_seed: int, depth_bins: int, device: str = "cpu", workers: int = 1,
                       ray_address: str = "", log: Callable = print) -> StrategyResult:
    """Every strategy on the lab's suite and ``anchor``: each seeded one at every seed of ``seeds``, the grid
    (``grid_size`` values per axis) once, at the first seed."""
    grid_points = grid_size ** (2 if with_scale else 1)
    result = StrategyResult(lab.suite, lab.expert, anchor, budget=budget, grid_points=grid_points)
    for strategy in strategies:
        for seed in (list(seeds[:1]) if strategy == "grid" else list(seeds)):
            start = time.perf_counter()
            tuning = run_search(lab, anchor, variant, strategy=strategy, seed=seed, budget=budget,
                                n_initial=n_initial, grid_size=grid_size, with_scale=with_scale,
                                gram_examples=gram_examples, gram_seed=gram_seed, depth_bins=depth_bins,
                                device=device, workers=workers, ray_address=ray_address)
            result.runs.append((strategy, seed, tuning))
            log(f"{strategy:<7} seed {seed}: {len(tuning.search.trials)} trials, val {tuning.val_accuracy:.4f}, "
                f"test {tuning.test_accuracy:.4f}, search {search_seconds(tuning.search):.0f} s "
                f"({time.perf_counter() - start:.0f} s in this call"
                + (f", {tuning.search.replayed} trials from the log)" if tuning.search.replayed else ")"))
    result.evaluations = lab.cache.misses
    log(f"trial cache: {lab.cache.hits} hits, {lab.cache.misses} evaluations")
    return result


def strategy_rows(result: StrategyResult) -> list[dict]:
    """One JSON-able row per search."""
    rows = []
    for strategy, seed, t in result.runs:
        timing = t.timing
        rows.append({"strategy": strategy, "seed": seed, "trials": len(t.search.trials), "val": t.val_accuracy,
                     "test": t.test_accuracy, "normalized": t.test_predictions.normalized(result.expert),
                     "anchor_val": result.anchor.val_accuracy, "anchor_test": result.anchor.test.mean_accuracy(),
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
        out.append({"strategy": strategy, "name": STRATEGY_NAMES.get(strategy, strategy), "runs": len(sel),
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
