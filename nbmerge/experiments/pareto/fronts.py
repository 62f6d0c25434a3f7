"""Fronts of one subset: the surrogates (IVON posteriors, squared gradients), merges per family over α
in memory-bounded chunks, the trial-cached evaluation of a front, the responsibility temperature."""


from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ...codehash import digest
from ...device import synchronize
from ...errors import NbmergeError
from ...engine.io import load_state_dict
from ...solvers import pareto
from ...tune.study import read_record, write_record
from .config import FAMILIES, IVON_FAMILIES, MIXTURE, PER_RUN, ParetoConfig, family_of

# ------------------------------------------------------------------------------------------------- surrogates

def prepare(zoo, config: ParetoConfig, log: Callable = print) -> dict:
    """The flat base and, per family kind, the stacked per-task surrogates on ``config.device`` (posteriors are
    trained on first use and cached in the zoo's store); with their one-time costs and their identities (the
    cache recipes name them)."""
    from ...pools import posteriors

    tasks = list(config.tasks)
    base_state = load_state_dict(zoo.base_path)
    keys = list(base_state)
    out = {"tasks": tasks, "like": base_state, "base": pareto.flatten_state(base_state).to(config.device),
           "costs": {}, "ids": {}}
    if any(f in IVON_FAMILIES for f in config.families):
        start = time.perf_counter()
        files = posteriors.ivon_posteriors(zoo, tasks, config.components, config.ivon(), seed=config.seed, log=log)
        stacked = posteriors.stack_posteriors([files[t] for t in tasks], keys)
        out["ivon"] = {k: stacked[k].to(config.device) for k in ("means", "precisions")}
        out["ids"]["ivon"] = f"{files[tasks[0]][0].parent.parent.name}/seed{config.seed}"
        out["costs"]["ivon"] = {"runs": len(stacked["seconds"]), "seconds_per_run": float(np.mean(stacked["seconds"])),
                                "seconds_total": float(np.sum(stacked["seconds"])),
                                "wall_this_session": time.perf_counter() - start}
    if "adamw_sg_hess" in config.families:
        files = posteriors.squared_gradient_posteriors(zoo, tasks, config.squared_gradients(), seed=config.seed,
                                                       log=log)
        stacked = posteriors.stack_posteriors([[files[t]] for t in tasks], keys)
        out["sg"] = {k: stacked[k][:, 0].to(config.device) for k in ("means", "precisions")}
        out["ids"]["sg"] = files[tasks[0]].parent.name
        out["costs"]["squared_gradients"] = {"runs": len(tasks), "seconds_total": float(np.sum(stacked["seconds"]))}
    if "adamw_simple" in config.families or "adamw_sg_hess" in config.families:
        out["experts"] = torch.stack([pareto.flatten_state(load_state_dict(zoo.expert_path(t)), keys)
                                      for t in tasks]).to(config.device)
    return out


# The merges hold θ̂(α) for a batch of α in float64, and EM's temporaries beside it: on MiniLM (22.7 M parameters)
# 231 α at once would take ~40 GB. Batches are sized to this budget.
MERGE_MEMORY_BYTES = 4 * 2 ** 30
_BYTES_PER_ALPHA_PER_PARAMETER = 8 * 8  # float64 θ̂(α) and up to seven more of its size (EM's responsibilities)


def alpha_chunks(alphas: torch.Tensor, surrogates: dict, budget: int = MERGE_MEMORY_BYTES) -> list[torch.Tensor]:
    """``alphas`` in batches whose merges fit in ``budget`` bytes (at least one α per batch)."""
    size = _batch_size(surrogates, budget)
    return [alphas[i:i + size] for i in range(0, len(alphas), size)]


def _batch_size(surrogates: dict, budget: int = MERGE_MEMORY_BYTES) -> int:
    return max(1, int(budget // (surrogates["base"].numel() * _BYTES_PER_ALPHA_PER_PARAMETER)))


def mog_batch_rows(surrogates: dict) -> int:
    """α rows per EM batch: three float64 [batch, P] buffers and the float32 result within the memory budget."""
    return max(1, int(MERGE_MEMORY_BYTES // (surrogates["base"].numel() * 8 * 4)))


def simplex_vertex(alpha: torch.Tensor) -> Optional[int]:
    """The task whose weight is 1 when α is a vertex of the simplex, else None."""
    hits = (alpha - 1).abs() < 1e-9
    return int(hits.nonzero()[0]) if bool(hits.any()) else None


def merge_family(surrogates: dict, family: str, index: Sequence[int], alphas, config: ParetoConfig, *,
                 run: int = 0, temperature: float = 1.0, return_info: bool = False):
    """θ̂(α) [A, P] of one family for the tasks ``index`` (positions in ``surrogates['tasks']``), every α at once
    (``run``: which IVON run the single-run families use; ``temperature``: the mixture's τ). With ``return_info``
    also EM's information for the mixture (None for the other families)."""
    base, idx = surrogates["base"], list(index)
    alphas = torch.as_tensor(alphas, dtype=torch.float64).to(base.device)
    info = None
    if family in ("simple", "ivon_hess"):
        ivon = surrogates["ivon"]
        means = ivon["means"][idx, run]
        thetas = pareto.isotropic_merge(base, means, alphas) if family == "simple" else \
            pareto.gaussian_merge(base, means, ivon["precisions"][idx, run], alphas)
    elif family == "soup_ivon_hess":
        mean, precision = pareto.collapse(surrogates["ivon"]["means"][idx], surrogates["ivon"]["precisions"][idx])
        thetas = pareto.gaussian_merge(base, mean, precision, alphas)
        means = None
    elif family == "multi_ivon_hess":
        ivon = surrogates["ivon"]
        thetas, info = pareto.mog_merge(base, ivon["means"][idx], ivon["precisions"][idx], alphas,
                                        iterations=config.em_iterations, responsibility_tol=config.em_tolerance,
                                        temperature=temperature, batch=mog_batch_rows(surrogates), return_info=True)
        means = None
    elif family in ("adamw_simple", "adamw_sg_hess"):
        means = surrogates["experts"][idx]
        thetas = pareto.isotropic_merge(base, means, alphas) if family == "adamw_simple" else \
            pareto.gaussian_merge(base, surrogates["sg"]["means"][idx], surrogates["sg"]["precisions"][idx], alphas)
    else:
        raise NbmergeError(f"unknown family {family!r}; valid: {', '.join(FAMILIES)}")
    if means is not None:
        # At a vertex these families are that task's own model, exactly (not up to the rounding of S·τ/S): the
        # trial cache shares one entry between them.
        for row, alpha in enumerate(alphas):
            task = simplex_vertex(alpha)
            if task is not None:
                thetas[row] = means[task].to(thetas.dtype)
    return (thetas, info) if return_info else thetas


class RecordStore:
    """Small JSON records beside the trial cache (EM's responsibilities, front timings, the temperature scale),
    keyed like its entries, so that a rerun neither merges nor times again: the study layer's sealed records
    (``nbmerge.tune.study.read_record``/``write_record`` under ``<trial cache>/pareto/``), remembered in memory too
    (and only there without a cache root)."""

    def __init__(self, cache):
        self.root = cache.root
        self.memory: dict[str, dict] = {}

    def get(self, key) -> Optional[dict]:
        found = self.memory.get(digest(key, 24))
        if found is None:
            ok, found = read_record(self.root, "pareto", key, print)
            if not ok:  # missing, damaged, edited or another key's: computed again (and overwritten), never used
                return None
            self.memory[digest(key, 24)] = found
        return found

    def put(self, key, value: dict) -> dict:
        self.memory[digest(key, 24)] = value
        write_record(self.root, "pareto", key, value)
        return value


@dataclass
class Subset:
    """What one subset's evaluations share: the zoo, its trial cache, the surrogates and the task positions."""

    zoo: object
    cache: object
    surrogates: dict
    config: ParetoConfig
    index: list
    store: RecordStore

    @property
    def tasks(self) -> list[str]:
        return [self.surrogates["tasks"][i] for i in self.index]

    def recipe(self, name: str, alpha, temperature: Optional[dict] = None) -> dict:
        """The trial-cache recipe of front ``name`` at ``alpha``: everything that determines its weights."""
        alpha = torch.as_tensor(alpha, dtype=torch.float64)
        family, run = family_of(name)
        base = {"notebook": "pareto", "tasks": self.tasks}
        vertex = simplex_vertex(alpha)
        if vertex is not None and family in PER_RUN:
            return {**base, "model": "ivon_mean", "task": self.tasks[vertex], "run": run,
                    "posteriors": self.surrogates["ids"]["ivon"]}
        if vertex is not None and family in ("adamw_simple", "adamw_sg_hess"):
            return {**base, "model": "expert", "task": self.tasks[vertex]}
        recipe = {**base, "model": family, "alpha": [round(float(a), 6) for a in alpha]}
        if family in IVON_FAMILIES:
            recipe["posteriors"] = self.surrogates["ids"]["ivon"]
            recipe["run"] = run
            if family in ("soup_ivon_hess", MIXTURE):
                recipe["components"] = self.config.components
        if family == "adamw_sg_hess":
            recipe["posteriors"] = self.surrogates["ids"]["sg"]
        if family == MIXTURE:
            recipe.update(temperature or {"factor": None, "tau": 1.0})
            recipe["em"] = [self.config.em_iterations, self.config.em_tolerance]
        return recipe


def _never():
    raise AssertionError("a cached trial was asked for its weights")


def evaluate_front(sub: Subset, name: str, alphas: torch.Tensor, splits: Callable[[int], Sequence[str]],
                   temperature: Optional[dict] = None, states: Optional[dict] = None, keep: bool = False,
                   log: Callable = lambda *_: None) -> dict:
    """Predictions of front ``name`` at every α on the splits ``splits(i)`` of row i, through the trial cache:
    only the rows with a missing entry (or missing EM record) are merged, in one batch. ``states`` holds flat
    weights merged earlier (row → tensor); with ``keep`` the rows merged here are added to it. Returns
    {"predictions": {split: {row: Predictions}}, "em": [record per row] (the mixture), "merge_seconds"}."""
    family, run = family_of(name)
    tau = (temperature or {}).get("tau", 1.0)
    recipes = [sub.recipe(name, a, temperature) for a in alphas]
    em = family == MIXTURE
    records = [sub.store.get({"em": r}) if em else None for r in recipes]
    missing = [i for i, r in enumerate(recipes)
               if (em and records[i] is None) or any(sub.cache.get(r, s) is None for s in splits(i))]
    states = {} if states is None else states
    to_merge = [i for i in missing if i not in states or (em and records[i] is None)]
    merge_seconds = 0.0
    # the mixture batches its own EM runs (and shares their set-up); the other families merge in chunks
    size = len(to_merge) if em else _batch_size(sub.surrogates)
    if to_merge:
        for part in [to_merge[j:j + size] for j in range(0, len(to_merge), size)]:
            synchronize(sub.config.device)
            start = time.perf_counter()
            thetas, info = merge_family(sub.surrogates, family, sub.index, alphas[part], sub.config, run=run or 0,
                                        temperature=tau, return_info=True)
            synchronize(sub.config.device)
            merge_seconds += time.perf_counter() - start
            for j, i in enumerate(part):
                states[i] = thetas[j].float() if thetas.dtype == torch.float64 else thetas[j]
                if em:
                    records[i] = sub.store.put({"em": recipes[i]}, {
                        "responsibilities": info["responsibilities"][j].tolist(),
                        "iterations": int(info["row_iterations"][j]),
                        "objective": [float(info["objective"][0, j]), float(info["objective"][-1, j])]})
            del thetas, info
    out = {split: {} for i in range(len(alphas)) for split in splits(i)}
    for i, recipe in enumerate(recipes):
        for split in splits(i):
            make = (lambda i=i: pareto.unflatten_state(states[i], sub.surrogates["like"])) if i in states else _never
            out[split][i] = sub.cache.predictions(recipe, split, make, tasks=sub.tasks)
    if not keep:
        for i in to_merge:
            states.pop(i, None)
    if to_merge:
        log(f"{'+'.join(sub.tasks)} {name}: merged {len(to_merge)} α in {merge_seconds:.1f} s")
    return {"predictions": out, "em": records, "merge_seconds": merge_seconds, "merged": len(to_merge)}


def _mean_val(predictions: dict) -> float:
    return float(np.mean([p.mean_accuracy() for p in predictions.values()]))


def choose_temperature(sub: Subset, alphas: torch.Tensor, log: Callable = lambda *_: None) -> dict:
    """τ = f·G for every f in ``config.temperatures``, chosen by the mixture front's mean validation accuracy over
    ``alphas`` (ties: the smaller f). G is :func:`nbmerge.solvers.pareto.log_density_spread` at uniform α, the largest over
    tasks. Returns the scale, every candidate (with its responsibilities) and the chosen one, whose merged weights
    stay in ``states`` for its test evaluation."""
    ivon = sub.surrogates["ivon"]
    key = {"spread": sub.recipe(MIXTURE, torch.full((len(sub.index),), 1 / len(sub.index)))}
    found = sub.store.get(key)
    if found is None:
        uniform = torch.full((1, len(sub.index)), 1 / len(sub.index), dtype=torch.float64)
        spread = pareto.log_density_spread(sub.surrogates["base"], ivon["means"][sub.index],
                                           ivon["precisions"][sub.index], uniform)[0]
        found = sub.store.put(key, {"per_task": spread.tolist()})
    scale = max(found["per_task"])
    if not scale > 0:  # identical components (or K = 1): every temperature is the same merge
        scale = 1.0
    candidates, best, best_states = [], None, {}
    for factor in sub.config.temperatures:
        temperature = {"factor": float(factor), "tau": float(factor * scale)}
        states: dict = {}
        result = evaluate_front(sub, MIXTURE, alphas, lambda i: ("val",), temperature, states, keep=True, log=log)
        row = {**temperature, "val_accuracy": _mean_val(result["predictions"]["val"]), "em": result["em"],
               "merge": [result["merge_seconds"], result["merged"]]}
        candidates.append(row)
        if best is None or row["val_accuracy"] > best["val_accuracy"]:
            best, best_states = row, states
    return {"scale": scale, "per_task_spread": found["per_task"], "candidates": candidates,
            "chosen": {"factor": best["factor"], "tau": best["tau"]}, "states": best_states}
