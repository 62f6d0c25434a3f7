"""The logic behind the BMM notebooks: the outer search over block-tied λ groups and an assembly scale.

BMM (arXiv 2605.12843, METHODS.md §11) tunes one log10 ρ per functional group of linear modules (attention-in,
attention-out, MLP-in, MLP-out, optionally split by depth) and a global assembly scale s, maximising the mean
validation accuracy over tasks. The inner merge is ``nbmerge.methods.bmm.BMMSolver`` (factorised once, a trial is
matrix products only); the search is ``nbmerge.search`` (seeded, logged, resumable). Only the validation split
drives the search; the test split is evaluated once, on the best point, at the end.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, median
from typing import Optional, Sequence

import torch

from ..errors import MethodError, NbmergeError
from ..io import StateDict, save_state_dict
from ..methods.bmm import MODULE_TYPES, BMMSolver, module_groups, parse_anchor_params, run_anchor
from ..search import DEFAULT_GRID, SearchResult, Space, search
from ..walker import Walk, resolve_device
from .tour import expert_grams, load_models

# log10 ρ with λ = ρ·tr(Σ_t G_t)/d_in: METHODS.md §11's normalised range [D]. At −4, λ is 10⁻⁴ of the mean
# eigenvalue of ΣG (practically RegMean); at 2, a hundred times it (practically the anchor). The normalisation
# makes one range fit every module and both Gram sources.
RHO_BOUNDS = (-4.0, 2.0)
# s multiplies the whole BMM update, θ = θ₀ + s·(θ_BMM − θ₀); s = 1 is the posterior mean. The anchor already
# carries its own coefficient (task arithmetic's α), so s only corrects it: ±50% lets BO repair a mis-scaled
# anchor without spending a 20-trial budget on far-off regions. Widen it for an anchor known to be badly scaled.
SCALE_BOUNDS = (0.5, 1.5)
GRAM_CHOICES = ("data", "task_vector", "hybrid")
SCALE = "scale"


def _group_order(group: str) -> tuple:
    kind, _, depth_bin = group.partition(":")
    return (MODULE_TYPES.index(kind) if kind in MODULE_TYPES else len(MODULE_TYPES), int(depth_bin or 0), group)


def group_space(keys: Sequence[str], by_depth: int = 0, with_scale: bool = True,
                rho_bounds: tuple[float, float] = RHO_BOUNDS,
                scale_bounds: tuple[float, float] = SCALE_BOUNDS) -> Space:
    """The search box: one log10 ρ per tying group of ``keys`` (``module_groups``; keys that are not a block's
    linear module are ignored) plus ``scale``. The groups are tied as ``log10_rho`` for the shared/grid strategies."""
    groups = sorted(set(module_groups(keys, by_depth).values()), key=_group_order)
    if not groups:
        raise MethodError("group_space: none of the keys is a known linear module (attention in/out, MLP in/out)")
    bounds = {group: rho_bounds for group in groups}
    if with_scale:
        bounds[SCALE] = scale_bounds
    return Space(bounds, tied=groups, tied_name="log10_rho")


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def merge_params(solver: BMMSolver, params: dict, groups: Sequence[str],
                 out: Optional[StateDict] = None) -> StateDict:
    """The merged model for search parameters ``{group: log10 ρ, ..., "scale": s}`` (no scale: s = 1)."""
    return solver.merged({group: params[group] for group in groups}, params.get(SCALE, 1.0), out=out)


def bmm_objective(solver: BMMSolver, evaluator, groups: Sequence[str], split: str = "val"):
    """params → {"value": mean accuracy on ``split``, merge/eval seconds, mean NLL/ECE, per-task accuracy}.

    The merged model is written into one reused state dict (no model-sized allocation per trial).
    """
    if split == "test":
        raise NbmergeError("bmm_objective: the search must not see the test split; it is evaluated once, at the end")
    groups = list(groups)
    if set(groups) != set(solver.group_names()):
        raise MethodError(f"bmm_objective: groups {sorted(groups)} differ from the solver's {solver.group_names()}")
    buffer: dict[str, StateDict] = {}

    def objective(params: dict) -> dict:
        start = time.perf_counter()
        buffer["state"] = merge_params(solver, params, groups, out=buffer.get("state"))
        _sync(solver.device)
        merge_seconds = time.perf_counter() - start
        start = time.perf_counter()
        result = evaluator.evaluate(buffer["state"], split)
        eval_seconds = time.perf_counter() - start
        means = result["mean"]
        return {"value": means["accuracy"], "merge_seconds": merge_seconds, "eval_seconds": eval_seconds,
                **{name: means[name] for name in ("nll", "ece", "normalized_accuracy") if name in means},
                **{f"accuracy/{task}": row["accuracy"] for task, row in result["tasks"].items()}}

    return objective


# -- timing ------------------------------------------------------------------------------------------------------

def trial_timing(result: SearchResult) -> dict:
    """Per-trial merge, evaluation and optimiser seconds (median and total) from a BMM search's trials."""
    out = {"trials": len(result.trials)}
    for name, values in (("merge", [t.metrics.get("merge_seconds") for t in result.trials]),
                         ("eval", [t.metrics.get("eval_seconds") for t in result.trials]),
                         ("optimiser", [t.search_seconds for t in result.trials])):
        values = [v for v in values if v is not None]
        out[f"{name}_s_median"] = median(values) if values else None
        out[f"{name}_s_mean"] = mean(values) if values else None
        out[f"{name}_s_total"] = sum(values) if values else None
    if out["merge_s_median"] and out["eval_s_median"] is not None:
        out["eval_to_merge"] = out["eval_s_median"] / out["merge_s_median"]
    return out


def time_trial(solver: BMMSolver, evaluator, params: dict, groups: Sequence[str], repeats: int = 3,
               split: str = "val") -> dict:
    """Median seconds of one merge (into a reused buffer) and one evaluation at ``params``, over ``repeats``."""
    if repeats < 1:
        raise NbmergeError(f"time_trial: repeats must be >= 1, got {repeats}")
    state = merge_params(solver, params, groups)  # warm-up, and the buffer
    merges, evals = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        merge_params(solver, params, groups, out=state)
        _sync(solver.device)
        merges.append(time.perf_counter() - start)
        start = time.perf_counter()
        evaluator.evaluate(state, split)
        evals.append(time.perf_counter() - start)
    return {"merge_seconds": median(merges), "eval_seconds": median(evals), "repeats": repeats}


# -- the whole tuning run ----------------------------------------------------------------------------------------

@dataclass
class BMMTuning:
    search: SearchResult
    lambdas: dict[str, float]          # log10 ρ per group at the best trial
    scale: float
    val: dict                          # evaluator result of the best merge on the validation split
    test: dict                         # ... on the test split (evaluated once, here)
    anchor: dict                       # {"val": means, "test": means} of the anchor merge alone
    settings: dict
    timing: dict = field(default_factory=dict)
    out: Optional[Path] = None
    solver: Optional[BMMSolver] = field(default=None, repr=False)  # to re-merge any logged point, or sample at it

    @property
    def val_accuracy(self) -> float:
        return self.val["mean"]["accuracy"]

    @property
    def test_accuracy(self) -> float:
        return self.test["mean"]["accuracy"]

    def summary(self) -> dict:
        """Plain numbers for a table, ``--json`` or metrics.json."""
        return {**self.settings, "strategy": self.search.strategy, "budget": len(self.search.trials),
                "best_trial": self.search.best.index, "best_params": self.search.best_params,
                "lambdas": self.lambdas, "scale": self.scale, "val_accuracy": self.val_accuracy,
                "test_accuracy": self.test_accuracy,
                "test_normalized_accuracy": self.test["mean"].get("normalized_accuracy"),
                "test_per_task": {t: row["accuracy"] for t, row in self.test["tasks"].items()},
                "anchor_val_accuracy": self.anchor["val"]["accuracy"],
                "anchor_test_accuracy": self.anchor["test"]["accuracy"],
                "convergence": self.search.convergence, "timing": self.timing,
                "replayed_trials": self.search.replayed, "settings_hash": self.search.settings_hash,
                "log": str(self.search.log_path) if self.search.log_path else None,
                "out": str(self.out) if self.out else None}


def tune_bmm(zoo, anchor: str = "task_arithmetic", *, anchor_params=None, grams: str = "data",
             strategy: str = "bayes", budget: Optional[int] = None, seed: int = 0, log_path=None, by_depth: int = 0,
             with_scale: bool = True, rho_bounds: tuple[float, float] = RHO_BOUNDS,
             scale_bounds: tuple[float, float] = SCALE_BOUNDS, gram_examples: int = 256, gram_seed: int = 0,
             beta: float = 0.5, n_initial: Optional[int] = None, grid_sizes=DEFAULT_GRID, device: str = "cpu",
             dtype: torch.dtype = torch.float64, out=None, progress: bool = True) -> BMMTuning:
    """Tune BMM's per-group λ (and scale) on ``zoo``'s validation split; evaluate the best merge on test once.

    ``grams``: ``data`` (each expert's input Grams on ``gram_examples`` of its own task's training images,
    sampled with ``gram_seed``; ``tour.expert_grams``), ``task_vector`` (data-free τᵀτ) or ``hybrid`` (``beta``).
    ``seed`` drives the search only. ``log_path``: the resumable trial log (``nbmerge.search``); its identity
    covers the suite, anchor, Grams and space, so a log cannot be resumed against another setup. ``out``: write
    the tuned merge there as an ordinary safetensors checkpoint.
    """
    if grams not in GRAM_CHOICES:
        raise NbmergeError(f"tune_bmm: grams must be one of {GRAM_CHOICES}, got {grams!r}")
    if isinstance(gram_examples, bool) or not isinstance(gram_examples, int) or gram_examples < 1:
        raise NbmergeError(f"tune_bmm: gram_examples must be a positive integer, got {gram_examples!r}")
    device = resolve_device(device)
    timing: dict = {}
    base, experts = load_models(zoo)
    gram_list = None
    if grams != "task_vector":
        start = time.perf_counter()
        gram_list = expert_grams(zoo, gram_examples, gram_seed)
        timing["grams_s"] = time.perf_counter() - start
    start = time.perf_counter()
    anchor_state = run_anchor(base, experts, anchor, anchor_params, grams=gram_list, walk=Walk(device=device))
    timing["anchor_s"] = time.perf_counter() - start
    start = time.perf_counter()
    solver = BMMSolver(base, experts, anchor_state, gram_list, gram=grams, beta=beta, by_depth=by_depth,
                       device=device, dtype=dtype)
    timing["solver_s"] = time.perf_counter() - start
    space = group_space(list(solver.modules), by_depth, with_scale, rho_bounds, scale_bounds)
    groups = list(space.tied)
    evaluator = zoo.evaluator(device)
    anchor_result = {split: evaluator.evaluate(anchor_state, split)["mean"] for split in ("val", "test")}

    settings = {"suite": zoo.root.name, "tasks": list(zoo.tasks), "anchor": anchor,
                "anchor_params": parse_anchor_params(anchor_params), "gram": grams,
                "gram_examples": gram_examples if gram_list is not None else None,
                "gram_seed": gram_seed if gram_list is not None else None,
                "beta": beta if grams == "hybrid" else None, "by_depth": by_depth,
                "dtype": str(dtype).replace("torch.", ""), "split": "val"}
    result = search(bmm_objective(solver, evaluator, groups), space, strategy=strategy, budget=budget, seed=seed,
                    log_path=log_path, n_initial=n_initial, grid_sizes=grid_sizes, settings=settings,
                    progress=progress, desc=f"bmm {strategy}")
    timing.update(trial_timing(result), search_s=result.seconds)

    best = result.best_params
    state = merge_params(solver, best, groups)
    val = evaluator.evaluate(state, "val")
    test = evaluator.evaluate(state, "test")
    path = None
    if out is not None:
        path = Path(out)
        metadata = {"method": "bmm", "anchor": anchor, "anchor_params": json.dumps(settings["anchor_params"]),
                    "gram": grams, "log10_rho": json.dumps({g: best[g] for g in groups}),
                    "scale": repr(best.get(SCALE, 1.0)), "suite": zoo.root.name,
                    "search": f"{strategy} {len(result.trials)} trials, seed {seed}, settings {result.settings_hash}"}
        save_state_dict(state, path, metadata=metadata)
    return BMMTuning(result, {g: best[g] for g in groups}, float(best.get(SCALE, 1.0)), val, test, anchor_result,
                     {**settings, "with_scale": with_scale}, timing, path, solver)
