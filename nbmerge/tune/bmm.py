"""The logic behind the BMM notebooks: the outer search over block-tied λ groups and an assembly scale.

BMM (arXiv 2605.12843) tunes one log10 ρ per functional group of linear modules (attention-in,
attention-out, MLP-in, MLP-out, optionally split by depth) and a global assembly scale s, maximising the mean
validation accuracy over tasks. The inner merge is ``nbmerge.solvers.bmm.BMMSolver`` (factorised once, a trial is
matrix products only); the search is ``nbmerge.tune.search`` (seeded, logged, resumable). Only the validation split
drives the search; the test split is evaluated once, on the best point, at the end.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, median
from typing import Optional, Sequence

import numpy as np
import torch

from ..device import resolve_device, synchronize
from ..errors import MethodError, NbmergeError
from ..engine.io import StateDict, save_state_dict
from ..methods import get_method
from ..methods.bmm import parse_anchor_params, run_anchor
from ..engine.modules import MODULE_TYPES, module_groups, module_type
from ..codehash import digest as key_digest
from ..evaluate.trialcache import TrialCache
from ..evaluate.protocol import Predictions
from .alpha_tuning import gram_name, method_recipe
from ..pools.zoo import expert_grams, load_models
from ..solvers.bmm import BMMSolver
from ..engine.walker import WalkOptions
from .search import DEFAULT_GRID, SearchResult, Space, search

# log10 ρ with λ = ρ·tr(Σ_t G_t)/d_in: a normalised range (our choice; the paper does not publish one). At −4, λ
# is 10⁻⁴ of the mean eigenvalue of ΣG (practically RegMean); at 2, a hundred times it (practically the anchor).
# The normalisation makes one range fit every module and both Gram sources.
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


def group_space(keys: Sequence[str], depth_bins: int = 0, with_scale: bool = True,
                rho_bounds: tuple[float, float] = RHO_BOUNDS,
                scale_bounds: tuple[float, float] = SCALE_BOUNDS) -> Space:
    """The search box: one log10 ρ per tying group of ``keys`` (``module_groups``; keys that are not a block's
    linear module are ignored) plus ``scale``. The groups are tied as ``log10_rho`` for the shared/grid strategies."""
    groups = sorted(set(module_groups(keys, depth_bins).values()), key=_group_order)
    if not groups:
        raise MethodError("group_space: none of the keys is a known linear module (attention in/out, MLP in/out)")
    bounds = {group: rho_bounds for group in groups}
    if with_scale:
        bounds[SCALE] = scale_bounds
    return Space(bounds, tied=groups, tied_name="log10_rho")


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
        synchronize(solver.device)
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
        synchronize(solver.device)
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
    val: dict                          # evaluator-style result of the best merge on the validation split
    test: dict                         # ... on the test split (evaluated once, here, or read from the trial cache)
    anchor: dict                       # {"val": means, "test": means} of the anchor merge alone
    settings: dict
    timing: dict = field(default_factory=dict)
    out: Optional[Path] = None
    solver: Optional[BMMSolver] = field(default=None, repr=False)  # built on demand: see build_solver()
    val_predictions: Optional[Predictions] = field(default=None, repr=False)
    test_predictions: Optional[Predictions] = field(default=None, repr=False)
    anchor_predictions: dict = field(default_factory=dict, repr=False)   # {"val": Predictions, "test": ...}
    recipe: dict = field(default_factory=dict)       # the trial-cache recipe of the best merge
    anchor_recipe: dict = field(default_factory=dict)
    _build: Optional[object] = field(default=None, repr=False)

    def build_solver(self) -> BMMSolver:
        """The factorised solver (to re-merge any logged point, or sample at it). A tuning replayed from its log and
        the trial cache does not build it until asked."""
        if self.solver is None:
            self.solver = self._build()
        return self.solver

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
                "convergence": [v if np.isfinite(v) else None for v in self.search.convergence],
                "failed_trials": [t.index for t in self.search.failed], "timing": self.timing,
                "replayed_trials": self.search.replayed, "settings_hash": self.search.settings_hash,
                "log": str(self.search.log_path) if self.search.log_path else None,
                "out": str(self.out) if self.out else None}


def as_result(preds: Predictions, expert: dict) -> dict:
    """An ``Evaluator.evaluate``-style result (per-task and mean accuracy, NLL, ECE, normalized) from predictions."""
    from ..evaluate.metrics import expected_calibration_error

    tasks = {}
    for task in preds.tasks:
        p = preds.probs(task)
        y = preds.labels[task]
        row = {"accuracy": float(preds.correct(task).mean()),
               "nll": float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-300, None)).mean()),
               "ece": expected_calibration_error(torch.from_numpy(p), torch.from_numpy(y))}
        if expert.get(task):
            row["normalized_accuracy"] = row["accuracy"] / expert[task]
        tasks[task] = row
    keys = sorted({k for row in tasks.values() for k in row})
    means = {k: float(np.mean([row[k] for row in tasks.values() if k in row])) for k in keys}
    return {"split": preds.split, "tasks": tasks, "mean": means}


def _default_scale(method: str) -> float:
    param = get_method(method).params.get(SCALE)
    return float(param.default) if param is not None else 1.0


def linear_module_keys(base: StateDict) -> list[str]:
    """The 2-D tensors with a known linear-module name: the keys BMM's search space is built from (read from the
    base alone, so that a tuning replayed from its log needs no Grams and no solver)."""
    return [k for k, v in base.items() if v.ndim == 2 and module_type(k) is not None]


def cache_log_path(cache: TrialCache, settings: dict, space: Space, *, strategy: str, budget: Optional[int],
                   seed: int, n_initial: Optional[int], grid_sizes, batch: int = 1) -> Optional[Path]:
    """``<cache.root>/bmm-logs/<anchor>-<gram>-<strategy>-seed<seed>-<hash>.jsonl`` (None for a memory-only cache).
    The hash covers what the search's own identity covers (the objective's settings, the space, strategy, budget,
    seed, initial design, grid, and a bayes/shared batch above 1), so two runs share a log exactly when ``search``
    would accept it."""
    if cache.root is None:
        return None
    identity = {"settings": settings, "space": space.to_dict(), "strategy": strategy, "budget": budget,
                "seed": seed, "n_initial": n_initial if strategy in ("bayes", "shared") else None,
                "grid_sizes": grid_sizes if strategy == "grid" else None}
    if batch > 1 and strategy in ("bayes", "shared"):  # absent at 1: the names of sequential logs do not change
        identity["batch"] = batch
    digest = key_digest(identity, 12)
    name = f"{settings['anchor']}-{settings['gram']}-{strategy}-seed{seed}-{digest}.jsonl"
    path = cache.root / "bmm-logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def shared_models(memo: dict, zoo) -> tuple:
    """``(base, experts)`` of ``zoo``, loaded once per ``memo`` (the dict ``tune_bmm(memo=...)`` shares)."""
    key = ("models", str(zoo.root))
    if key not in memo:
        memo[key] = load_models(zoo)
    return memo[key]


def shared_grams(memo: dict, zoo, examples: int, seed: int = 0) -> list:
    """Each expert's data Grams on ``examples`` training examples of its task (``pools.zoo.expert_grams``), collected
    once per ``memo``."""
    key = ("grams", str(zoo.root), examples, seed)
    if key not in memo:
        memo[key] = expert_grams(zoo, examples, seed)
    return memo[key]


class _Built:
    """``tune_bmm``'s lazily built objects: in a private dict, or in the caller's ``memo`` under keys that name
    everything each depends on (so another search with the same anchor and Grams reuses them)."""

    def __init__(self, memo: Optional[dict], keys: dict):
        self.store = {} if memo is None else memo
        self.keys = keys

    def __contains__(self, name: str) -> bool:
        return self.keys[name] in self.store

    def __getitem__(self, name: str):
        return self.store[self.keys[name]]

    def __setitem__(self, name: str, value) -> None:
        self.store[self.keys[name]] = value

    def get(self, name: str, default=None):
        return self.store.get(self.keys[name], default)


class _Trials:
    """``tune_bmm``'s per-trial machinery on one zoo: the anchor merge, the Grams and the factorised solver (each
    built on first need, in ``memo`` when given), and the objective that merges and evaluates one point through
    the trial cache. The driver builds one; so does each Ray worker, from a :class:`BMMTrialRecipe`."""

    def __init__(self, zoo, cache: TrialCache, base, experts, anchor: str, anchor_params, grams: str,
                 gram_examples: int, gram_seed: int, beta: float, depth_bins: int, dtype: torch.dtype, device: str,
                 groups: Sequence[str], memo: Optional[dict] = None, timing: Optional[dict] = None):
        self.zoo, self.cache, self.base, self.experts = zoo, cache, base, experts
        self.anchor, self.anchor_params, self.grams, self.beta = anchor, anchor_params, grams, beta
        self.gram_examples, self.gram_seed, self.depth_bins = gram_examples, gram_seed, depth_bins
        self.dtype, self.device, self.groups = dtype, device, list(groups)
        self.timing = {} if timing is None else timing
        self.uses_data = grams != "task_vector"
        parsed = parse_anchor_params(anchor_params)
        anchor_grams = gram_name(gram_examples, gram_seed) if "grams" in get_method(anchor).needs else None
        self.anchor_key = {**method_recipe(anchor, {k: v for k, v in parsed.items() if k != SCALE}, anchor_grams),
                           SCALE: float(parsed.get(SCALE, _default_scale(anchor)))}
        anchor_id = json.dumps(self.anchor_key, sort_keys=True, default=str)
        where = str(zoo.root)
        self.built = _Built(memo, {"grams": ("grams", where, gram_examples, gram_seed),
                                   "anchor": ("anchor", where, anchor_id, device),
                                   "solver": ("solver", where, anchor_id, grams, beta if grams == "hybrid" else None,
                                              depth_bins, str(dtype), device)})
        # "by_depth": the recipes' key text from before the argument was named depth_bins (trial-cache keys and
        # search logs stay valid)
        self.recipe_settings = {"gram_examples": gram_examples if self.uses_data else None,
                                "gram_seed": gram_seed if self.uses_data else None,
                                "beta": beta if grams == "hybrid" else None, "by_depth": depth_bins,
                                "dtype": str(dtype).replace("torch.", "")}
        self.expert_val = {t: zoo.manifest["expert_accuracy"]["val"][t] for t in zoo.tasks}
        self.buffer: dict = {}

    def gram_list(self):
        built = self.built
        if self.uses_data and "grams" not in built:
            start = time.perf_counter()
            built["grams"] = shared_grams(built.store, self.zoo, self.gram_examples, self.gram_seed)
            self.timing["grams_s"] = time.perf_counter() - start
        return built.get("grams") if self.uses_data else None

    def anchor_state(self):
        if "anchor" not in self.built:
            start = time.perf_counter()
            needs = "grams" in get_method(self.anchor).needs
            self.built["anchor"] = run_anchor(self.base, self.experts, self.anchor, self.anchor_params,
                                              grams=self.gram_list() if needs or self.uses_data else None,
                                              walk=WalkOptions(device=self.device))
            self.timing["anchor_s"] = time.perf_counter() - start
        return self.built["anchor"]

    def solver(self) -> BMMSolver:
        built = self.built
        if "solver" not in built:
            start = time.perf_counter()
            built["solver"] = BMMSolver(self.base, self.experts, self.anchor_state(),
                                        self.gram_list() if self.uses_data else None, gram=self.grams,
                                        beta=self.beta, depth_bins=self.depth_bins, device=self.device,
                                        dtype=self.dtype)
            self.timing["solver_s"] = time.perf_counter() - start
            solver_groups = set(module_groups(list(built["solver"].modules), self.depth_bins).values())
            if solver_groups != set(self.groups):
                raise MethodError(f"tune_bmm: the solver's groups {sorted(solver_groups)} differ from the search "
                                  f"space's {sorted(self.groups)}")
        return built["solver"]

    def trial_recipe(self, params: dict) -> dict:
        return {"method": "bmm", "anchor": self.anchor_key, "gram": self.grams, **self.recipe_settings,
                "params": {k: float(params[k]) for k in sorted(params)}}

    def objective(self, params: dict) -> dict:
        # One trial through the trial cache: merged and evaluated only on a miss, and the best trial's validation
        # predictions are then already stored. merge_seconds excludes the one-off solver build (first trial).
        timer = {"merge": 0.0}

        def make_state():
            built_solver = self.solver()
            start = time.perf_counter()
            self.buffer["state"] = merge_params(built_solver, params, self.groups, out=self.buffer.get("state"))
            synchronize(self.device)
            timer["merge"] = time.perf_counter() - start
            return self.buffer["state"]

        cache = self.cache
        misses = cache.misses
        preds = cache.predictions(self.trial_recipe(params), "val", make_state)
        hit = cache.misses == misses
        result = as_result(preds, self.expert_val)
        means = result["mean"]
        return {"value": means["accuracy"], "merge_seconds": timer["merge"],
                # on a hit, the time the stored evaluation took when it was computed
                "eval_seconds": float(preds.extra.get("seconds", preds.seconds)) if hit else preds.seconds,
                **({"cached": True} if hit else {}),
                **{name: means[name] for name in ("nll", "ece", "normalized_accuracy") if name in means},
                **{f"accuracy/{task}": row["accuracy"] for task, row in result["tasks"].items()}}


@dataclass(frozen=True)
class BMMTrialRecipe:
    """What a Ray worker needs to rebuild ``tune_bmm``'s objective (picklable, small): it opens the zoo, the
    evaluator (with the same validation subset) and the trial cache once, and builds the anchor, Grams and solver
    on its first trial (``nbmerge.tune.distributed``)."""

    suite: str
    zoo_cache: str                      # the nbmerge cache folder the zoo lives in (every worker must see it)
    zoo_root: str                       # the opened zoo's folder, checked on the worker
    trials_root: Optional[str]          # the trial cache's folder (None: each worker keeps its own, in memory)
    val_subset: Optional[tuple]
    device: str
    anchor: str
    anchor_params: Optional[dict]
    grams: str
    gram_examples: int
    gram_seed: int
    beta: float
    depth_bins: int
    dtype: str
    groups: tuple

    def build_objective(self):
        from ..pools.zoo import load_zoo

        zoo = load_zoo(self.suite, self.zoo_cache)
        if Path(zoo.root) != Path(self.zoo_root):
            raise NbmergeError(f"this worker opened {zoo.root}, not the driver's {self.zoo_root}: every worker must "
                               "see the same nbmerge cache")
        evaluator = zoo.evaluator(resolve_device(self.device))
        if self.val_subset:
            evaluator.use_val_subset(*self.val_subset)
        cache = TrialCache(zoo, evaluator, root=self.trials_root)
        base, experts = load_models(zoo)
        trials = _Trials(zoo, cache, base, experts, self.anchor, self.anchor_params, self.grams, self.gram_examples,
                         self.gram_seed, self.beta, self.depth_bins, getattr(torch, self.dtype),
                         resolve_device(self.device), self.groups)
        return trials.objective


def _recipe(zoo, cache: TrialCache, trials: "_Trials", anchor_params, device: str) -> BMMTrialRecipe:
    """The recipe from which each Ray worker rebuilds ``trials.objective``: on a worker pinned to a GPU, "cuda"
    is its own GPU (Ray sets CUDA_VISIBLE_DEVICES), whichever ``cuda:N`` the driver uses."""
    return BMMTrialRecipe(suite=zoo.suite, zoo_cache=str(zoo.root.parent.parent),
                          zoo_root=str(zoo.root),
                          trials_root=None if cache.root is None else str(cache.root.parent),
                          val_subset=tuple(cache.evaluator.subset_spec("val") or ()) or None,
                          device="cuda" if str(device).startswith("cuda") else "cpu", anchor=trials.anchor,
                          anchor_params=anchor_params, grams=trials.grams, gram_examples=trials.gram_examples,
                          gram_seed=trials.gram_seed, beta=trials.beta, depth_bins=trials.depth_bins,
                          dtype=str(trials.dtype).replace("torch.", ""), groups=tuple(trials.groups))


def tune_bmm(zoo, anchor: str = "task_arithmetic", *, anchor_params=None, grams: str = "data",
             strategy: str = "bayes", budget: Optional[int] = None, seed: int = 0, log_path=None,
             depth_bins: int = 0,
             with_scale: bool = True, rho_bounds: tuple[float, float] = RHO_BOUNDS,
             scale_bounds: tuple[float, float] = SCALE_BOUNDS, gram_examples: int = 256, gram_seed: int = 0,
             beta: float = 0.5, n_initial: Optional[int] = None, grid_sizes=DEFAULT_GRID, device: str = "cpu",
             dtype: torch.dtype = torch.float64, out=None, progress: bool = True,
             cache: Optional[TrialCache] = None, memo: Optional[dict] = None, workers: int = 1,
             batch: Optional[int] = None, ray_address: Optional[str] = None) -> BMMTuning:
    """Tune BMM's per-group λ (and scale) on ``zoo``'s validation split; evaluate the best merge on test once.

    ``grams``: ``data`` (each expert's input Grams on ``gram_examples`` of its own task's training images,
    sampled with ``gram_seed``; ``pools.zoo.expert_grams``), ``task_vector`` (data-free τᵀτ) or ``hybrid`` (``beta``).
    ``seed`` drives the search only. ``depth_bins``: 0, one λ per functional group; n ≥ 2, each group split into n
    depth bins (``modules.module_groups``). ``log_path``: the resumable trial log (``nbmerge.tune.search``); its
    identity covers the suite, anchor, Grams and space, so a log cannot be resumed against another setup.
    ``log_path="cache"`` puts it under the trial cache (``<cache.root>/bmm-logs/``), named by a hash of everything
    that defines the search (:func:`cache_log_path`): every notebook that runs the same search on the same zoo
    shares its log, and a rerun with warm caches replays it instead of searching again. ``out``: write the tuned
    merge there as an ordinary safetensors checkpoint.

    ``cache``: a ``trialcache.TrialCache`` (its evaluator's ``val`` split, possibly a seeded subset, is what the
    search sees). The anchor's predictions and every trial's (the best merge's test ones too) go through it under
    canonical recipes, so a search replayed from a complete log with cached predictions computes nothing: no Grams,
    no anchor, no solver (``BMMTuning.build_solver()`` builds it when asked). Without a cache, an in-memory one is
    used.

    ``memo``: a dict shared by several calls on the same zoo (e.g. one search per seed): the loaded models, the data
    Grams, each anchor merge and each factorised solver are kept there under keys naming everything they depend on,
    so a second search with the same anchor and Grams reuses them. The caller owns it (drop it to free memory).

    ``workers``: trials at once; above 1 they run on Ray (``nbmerge.tune.distributed``: a local cluster, or the one at
    ``ray_address``), each worker rebuilding the objective once from a :class:`BMMTrialRecipe` and sharing the
    on-disk trial cache. ``batch``: points proposed at a time (``nbmerge.tune.search``; default ``workers``, or what a
    resumed log records); a ``log_path="cache"`` log is named by it too.
    """
    if grams not in GRAM_CHOICES:
        raise NbmergeError(f"tune_bmm: grams must be one of {GRAM_CHOICES}, got {grams!r}")
    if isinstance(gram_examples, bool) or not isinstance(gram_examples, int) or gram_examples < 1:
        raise NbmergeError(f"tune_bmm: gram_examples must be a positive integer, got {gram_examples!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise NbmergeError(f"tune_bmm: workers must be a positive integer, got {workers!r}")
    if workers > 1:
        from .distributed import import_ray

        import_ray()  # a missing Ray is said before anything is loaded
    device = resolve_device(device)
    if cache is None:
        cache = TrialCache(zoo, zoo.evaluator(device), root=None)
    evaluator = cache.evaluator
    timing: dict = {}
    base, experts = load_models(zoo) if memo is None else shared_models(memo, zoo)
    uses_data = grams != "task_vector"
    anchor_parsed = parse_anchor_params(anchor_params)
    space = group_space(linear_module_keys(base), depth_bins, with_scale, rho_bounds, scale_bounds)
    groups = list(space.tied)
    trials = _Trials(zoo, cache, base, experts, anchor, anchor_params, grams, gram_examples, gram_seed, beta,
                     depth_bins, dtype, device, groups, memo, timing)
    built, solver, anchor_key = trials.built, trials.solver, trials.anchor_key
    expert_acc = {t: zoo.expert_accuracy[t] for t in zoo.tasks}
    expert_val = trials.expert_val
    anchor_preds = {split: cache.predictions(anchor_key, split, trials.anchor_state) for split in ("val", "test")}
    anchor_result = {"val": as_result(anchor_preds["val"], expert_val)["mean"],
                     "test": as_result(anchor_preds["test"], expert_acc)["mean"]}

    settings = {"suite": zoo.root.name, "tasks": list(zoo.tasks), "anchor": anchor,
                "anchor_params": anchor_parsed,
                "gram_examples": gram_examples if uses_data else None,
                "gram": grams, "gram_seed": gram_seed if uses_data else None,
                "beta": beta if grams == "hybrid" else None, "by_depth": depth_bins,
                "dtype": str(dtype).replace("torch.", ""), "split": "val",
                **({"val_subset": evaluator.subset_spec("val")} if evaluator.subset_spec("val") else {})}
    trial_recipe = trials.trial_recipe
    objective = trials.objective if workers == 1 else _recipe(zoo, cache, trials, anchor_params, device)

    if isinstance(log_path, str) and log_path == "cache":
        log_path = cache_log_path(cache, settings, space, strategy=strategy, budget=budget, seed=seed,
                                  n_initial=n_initial, grid_sizes=grid_sizes, batch=batch or workers)
    executor = None
    if workers > 1:
        from .distributed import RayExecutor

        executor = RayExecutor(objective, workers, address=ray_address,
                               gpus_per_worker=1.0 if str(device).startswith("cuda") else 0.0)
    try:
        result = search(objective, space, strategy=strategy, budget=budget, seed=seed, log_path=log_path,
                        n_initial=n_initial, grid_sizes=grid_sizes, settings=settings, progress=progress,
                        desc=f"bmm {strategy}", workers=workers, batch=batch, executor=executor)
    finally:
        if executor is not None:
            executor.close()
    timing.update(trial_timing(result), search_s=result.seconds)

    best = result.best_params
    recipe = trial_recipe(best)
    state_cache: dict = {}

    def best_state():
        if "state" not in state_cache:
            state_cache["state"] = merge_params(solver(), best, groups)
        return state_cache["state"]

    val_preds = cache.predictions(recipe, "val", best_state)
    test_preds = cache.predictions(recipe, "test", best_state)
    val, test = as_result(val_preds, expert_val), as_result(test_preds, expert_acc)
    path = None
    if out is not None:
        path = Path(out)
        metadata = {"method": "bmm", "anchor": anchor, "anchor_params": json.dumps(settings["anchor_params"]),
                    "gram": grams, "log10_rho": json.dumps({g: best[g] for g in groups}),
                    "scale": repr(best.get(SCALE, 1.0)), "suite": zoo.root.name,
                    "search": f"{strategy} {len(result.trials)} trials, seed {seed}, settings {result.settings_hash}"}
        save_state_dict(best_state(), path, metadata=metadata)
    return BMMTuning(result, {g: best[g] for g in groups}, float(best.get(SCALE, 1.0)), val, test, anchor_result,
                     {**settings, "with_scale": with_scale}, timing, path, built.get("solver"), val_preds,
                     test_preds, anchor_preds, recipe, anchor_key, solver)
