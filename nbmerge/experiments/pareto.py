"""The logic behind ``notebooks/30_pareto.ipynb``: Pareto-front previews by variational merging (arXiv 2412.08147)
against multitask fine-tuning, on a 2-task (and optionally a 3-task) subset of a zoo.

Protocol (decided here, stated in the report; the paper's own protocol could not be checked):
* **posteriors** (nbmerge.pools.posteriors): K IVON runs per task from the zoo's base. Every single run k gives its
  own simple (isotropic, the IVON mean) and IVON-Hess (diagonal Gaussian) front, so the mixture is compared with
  each run it is made of, not with one lucky or unlucky seed; all K runs form SoupIVON-Hess (collapsed) and
  MultiIVON-Hess (the mixture, merged by EM). Optionally the zoo's AdamW experts, averaged or squared-gradient
  weighted.
* **informative responsibilities**: at τ = 1 the mixture's log-densities differ by ~10⁵ nats on MiniLM's 22.7 M
  parameters, every responsibility is 0 or 1 and EM stops after one step. We divide the log-densities by a
  temperature τ = f·G, G the largest spread (max_k − min_k, in nats) of a task's component log-densities at EM's
  starting point at uniform α (:func:`nbmerge.solvers.pareto.log_density_spread`), and choose f on a grid by the front's
  mean validation accuracy. Why a temperature rather than a precision scale or per-tensor responsibilities: a
  precision scale leaves the log-determinant gaps (½Σ log S, ~10⁵ nats from a 2% Hessian difference) untouched,
  and per-tensor responsibilities are still one-hot on MiniLM's 11.7 M-entry embedding matrix; the temperature
  family runs from the hard mixture (f → 0) to SoupIVON-Hess (f → ∞) and keeps EM monotone. The plain τ = 1
  mixture is reported beside it, and every responsibility (which run each task's mixture picks) is logged.
* **ground truth**: AdamW fine-tuning on Σ_t α_t ℓ_t from the base with the experts' recipe at the multitask α
  (at a vertex it is the zoo's expert itself); cached in the zoo's store with its training seconds.
* **evaluation**: every model through the shared trial cache (nbmerge.protocol): test on the whole
  split, validation on a fixed seeded subset of ``val_examples`` per task; a rerun evaluates nothing again.
* **P1** (fronts): hypervolume of each front's test accuracies over the base model's (the paper names no metric:
  our choice), with a paired bootstrap over test examples (resampled within each task, the same draw for every
  front and for the base); "mixture closer than X" holds when the 95% interval of HV(mixture) − HV(X) is above 0,
  for X = IVON-Hess and simple of every single run k; fronts that are all zero, identical or at chance are not
  tested.
* **P2** (gap closed): each model's α is chosen on validation among the multitask α (the same set for every
  family and for multitask); the gap closed (mixture − simple)/(multitask − simple) of test mean accuracy gets a
  paired bootstrap interval; "most" means its lower end is above 50%.
* **P3** (cost): the measured merge time of a front of many α per family against the recorded training time of one
  multitask run times as many α (evaluation excluded on both sides).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ..device import resolve_device, synchronize
from ..errors import NbmergeError
from ..io import atomic_write_text, load_state_dict
from ..solvers import pareto
from .common import check_config, claim

# family → (label, what it is). The IVON families are nested (isotropic ⊂ diagonal ⊂ mixture) on the same runs.
FAMILIES = {
    "simple": ("simple (isotropic, IVON mean)", "α-weighted average of one IVON run's means"),
    "ivon_hess": ("IVON-Hess", "diagonal Gaussian: one IVON run's mean and precision"),
    "soup_ivon_hess": ("SoupIVON-Hess", "diagonal Gaussian from each task's K IVON runs collapsed into one"),
    "multi_ivon_hess": ("MultiIVON-Hess (MoG, EM)", "mixture of each task's K IVON runs, merged by EM"),
    "adamw_simple": ("simple (isotropic, AdamW experts)", "α-weighted average of the zoo's AdamW experts"),
    "adamw_sg_hess": ("AdamW-SG-Hess", "diagonal Gaussian: AdamW expert, squared-gradient precision"),
}
IVON_FAMILIES = ("simple", "ivon_hess", "soup_ivon_hess", "multi_ivon_hess")
NESTED = ("simple", "ivon_hess", "multi_ivon_hess")   # the theorem's Q1 ⊂ Q2 ⊂ Q3
PER_RUN = ("simple", "ivon_hess")                     # one front per IVON run k
MIXTURE, PLAIN = "multi_ivon_hess", "multi_ivon_hess_plain"
SOURCE_THEOREM = ("Variational merging, arXiv 2412.08147, abstract (theorem: a more flexible family gives a better "
                  "front)")
SOURCE_EXAMPLE = "Variational merging, arXiv 2412.08147, experiments (the quoted example; its table not verified)"
SOURCE_COST = "Variational merging, arXiv 2412.08147, abstract and experiments (cost of previews vs multitask)"
PAPER_EXAMPLE = (76.9, 87.2, 90.4)   # simple → mixture, against multitask fine-tuning (accuracy %)
MOST = 0.5                           # "closes most of the gap": the lower end of its interval above one half
SPEEDUP = 100.0                      # "seconds vs hours": a front at least 100× cheaper than the multitask sweep
REPORTED_ALPHAS = 101                # P3 speaks of a front of this many α (measured or scaled linearly)
LEVEL = 0.95


@dataclass(frozen=True)
class ParetoConfig:
    suite: str = "text8"
    # 2 tasks: the 2-task subset; 3 tasks: the 3-task subset and the 2-task subset of its first two
    tasks: tuple = ("fortune_topic", "word_sentiment")
    device: str = "cpu"
    seed: int = 0                     # seeds the IVON runs, the squared-gradient sample, the val subset, bootstrap
    smoke: bool = False
    families: tuple = IVON_FAMILIES
    components: int = 2               # K IVON runs per task (the paper: 10 for ViT, 3 for RoBERTa)
    ivon_steps: int = 0               # 0: the zoo's expert steps
    ivon_lr: float = 0.2
    ivon_ess: float = 1e6             # λ, shared by the tasks (λ = N kept the tiny encoder at chance)
    ivon_hess_init: float = 0.01
    ivon_beta2: float = 0.99
    prior_weight_decay: float = 1e-4  # δ: prior precision λδ around the base, for IVON and squared gradients
    sg_examples: int = 256            # per-example gradients for the squared-gradient precision
    em_iterations: int = 20           # "a few EM steps"
    em_tolerance: float = 1e-3        # ... stopping once no responsibility moves by more than this
    temperatures: tuple = (0.3, 1.0, 3.0)  # f: responsibility temperature τ = f·G, chosen on validation
    multitask_steps: int = 0          # 0: the zoo's expert steps (then a vertex is the zoo's expert)
    multitask_divisions_2: int = 2    # multitask α₁ ∈ {0, 1/2, 1} on the 2-task subset
    multitask_divisions_3: int = 2    # multitask α on the 3-task simplex grid of step 1/2 ...
    multitask_centroid: bool = True   # ... plus (1/3, 1/3, 1/3)
    front_divisions_2: int = 4        # fronts evaluated (test, whole split) at α₁ ∈ {0, 1/4, ..., 1} ∪ multitask α
    front_divisions_3: int = 2        # ... and on the 3-task grid of this step ∪ multitask α
    timing_divisions_2: int = 0       # P3: a front of d + 1 α merged and timed per family (0: the evaluated
    timing_divisions_3: int = 0       # front's own merges, timed as they ran) ... and of (d+1)(d+2)/2 α on 3 tasks
    val_examples: int = 200           # validation subset per task for every choice (0: the whole split)
    bootstrap: int = 2000             # paired bootstrap resamples over test examples
    cache: str = ""                   # zoo cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)

    def __post_init__(self):
        check_config(self)
        for name in ("tasks", "families", "temperatures"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise NbmergeError(f"unknown families {unknown}; valid: {', '.join(FAMILIES)}")
        if len(self.tasks) not in (2, 3) or len(set(self.tasks)) != len(self.tasks):
            raise NbmergeError(f"tasks must name 2 or 3 distinct tasks, got {list(self.tasks)}")
        for name in ("components", "em_iterations", "multitask_divisions_2", "multitask_divisions_3",
                     "front_divisions_2", "front_divisions_3", "bootstrap"):
            if getattr(self, name) < 1:
                raise NbmergeError(f"parameter {name!r} must be ≥ 1, got {getattr(self, name)}")
        if not self.temperatures or not all(isinstance(f, (int, float)) and f > 0 for f in self.temperatures):
            raise NbmergeError(f"temperatures must be positive factors, got {list(self.temperatures)}")
        if min(self.val_examples, self.timing_divisions_2, self.timing_divisions_3) < 0 or self.em_tolerance < 0:
            raise NbmergeError("val_examples, timing_divisions_2/3 and em_tolerance must be ≥ 0")
        object.__setattr__(self, "device", resolve_device(self.device))

    def ivon(self):
        from ..pools.posteriors import IvonSettings

        return IvonSettings(steps=self.ivon_steps, lr=self.ivon_lr, ess=self.ivon_ess, hess_init=self.ivon_hess_init,
                            beta2=self.ivon_beta2, weight_decay=self.prior_weight_decay)

    def squared_gradients(self):
        from ..pools.posteriors import SquaredGradientSettings

        return SquaredGradientSettings(examples=self.sg_examples, ess=self.ivon_ess,
                                       weight_decay=self.prior_weight_decay)

    def multitask(self):
        from ..pools.posteriors import MultitaskSettings

        return MultitaskSettings(steps=self.multitask_steps)


def as_dict(config: ParetoConfig) -> dict:
    return asdict(config)


# ------------------------------------------------------------------------------------------------- surrogates

def prepare(zoo, config: ParetoConfig, log: Callable = print) -> dict:
    """The flat base and, per family kind, the stacked per-task surrogates on ``config.device`` (posteriors are
    trained on first use and cached in the zoo's store); with their one-time costs and their identities (the
    cache recipes name them)."""
    from ..pools import posteriors

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


def _mog_batch(surrogates: dict) -> int:
    """α rows per EM batch: three float64 [batch, P] buffers and the float32 result within the memory budget."""
    return max(1, int(MERGE_MEMORY_BYTES // (surrogates["base"].numel() * 8 * 4)))


def _vertex(alpha: torch.Tensor) -> Optional[int]:
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
                                        temperature=temperature, batch=_mog_batch(surrogates), return_info=True)
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
            task = _vertex(alpha)
            if task is not None:
                thetas[row] = means[task].to(thetas.dtype)
    return (thetas, info) if return_info else thetas


# --------------------------------------------------------------------------------------------- fronts by name

def front_names(config: ParetoConfig) -> list[str]:
    """The fronts a subset evaluates: one simple and one IVON-Hess front per IVON run (``simple@k``), SoupIVON,
    the mixture at its validation-chosen temperature and at τ = 1 (``multi_ivon_hess_plain``), the AdamW ones."""
    names = []
    for family in config.families:
        if family in PER_RUN:
            names += [f"{family}@{k}" for k in range(config.components)]
        elif family == MIXTURE:
            names += [MIXTURE, PLAIN]
        else:
            names.append(family)
    return names


def family_of(name: str) -> tuple[str, Optional[int]]:
    if "@" in name:
        family, run = name.split("@")
        return family, int(run)
    return (MIXTURE if name == PLAIN else name), None


def label(name: str) -> str:
    if name == PLAIN:
        return "MultiIVON-Hess, τ = 1 (plain mixture)"
    if name == "multitask":
        return "multitask fine-tuning (ground truth)"
    family, run = family_of(name)
    text = FAMILIES[family][0] if family in FAMILIES else name
    return f"{text}, run {run}" if run is not None else text


class _Store:
    """Small JSON records beside the trial cache (EM's responsibilities, front timings, the temperature scale),
    keyed like its entries, so that a rerun neither merges nor times again; memory only without a cache root."""

    def __init__(self, cache):
        self.root = None if cache.root is None else cache.root / "pareto"
        self.memory: dict[str, dict] = {}

    def _path(self, key) -> Path:
        from ..protocol import _digest

        return self.root / f"{_digest(key)}.json"

    def get(self, key) -> Optional[dict]:
        from ..protocol import _digest

        found = self.memory.get(_digest(key))
        if found is None and self.root is not None and self._path(key).exists():
            try:
                found = json.loads(self._path(key).read_text())
            except ValueError:
                return None
            self.memory[_digest(key)] = found
        return found

    def put(self, key, value: dict) -> dict:
        from ..protocol import _digest

        self.memory[_digest(key)] = value
        if self.root is not None:
            atomic_write_text(self._path(key), json.dumps(value, sort_keys=True))
        return value


@dataclass
class Subset:
    """What one subset's evaluations share: the zoo, its trial cache, the surrogates and the task positions."""

    zoo: object
    cache: object
    surrogates: dict
    config: ParetoConfig
    index: list
    store: _Store

    @property
    def tasks(self) -> list[str]:
        return [self.surrogates["tasks"][i] for i in self.index]

    def recipe(self, name: str, alpha, temperature: Optional[dict] = None) -> dict:
        """The trial-cache recipe of front ``name`` at ``alpha``: everything that determines its weights."""
        alpha = torch.as_tensor(alpha, dtype=torch.float64)
        family, run = family_of(name)
        base = {"notebook": "pareto", "tasks": self.tasks}
        vertex = _vertex(alpha)
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


# ------------------------------------------------------------------------------------------------ ground truth

def multitask_alphas(tasks: int, config: ParetoConfig) -> torch.Tensor:
    if tasks == 2:
        return pareto.simplex_grid(2, config.multitask_divisions_2)
    grid = pareto.simplex_grid(3, config.multitask_divisions_3)
    centroid = torch.full((1, 3), 1 / 3, dtype=torch.float64)
    if config.multitask_centroid and not _contains(grid, centroid[0]):
        grid = torch.cat([grid, centroid])
    return grid


def _contains(grid: torch.Tensor, alpha: torch.Tensor) -> bool:
    return bool(((grid - alpha).abs().amax(1) < 1e-9).any())


def _union(front: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
    rows = [front] + [a[None] for a in extra if not _contains(front, a)]
    return torch.cat(rows)


def ground_truth(sub: Subset, alphas: torch.Tensor, log: Callable = print) -> dict:
    """Multitask fine-tuning at every α (trained once, cached in the zoo's store), test and val predictions, and
    the training seconds recorded when each run was trained (NaN where the run is the zoo's own expert)."""
    from ..pools.posteriors import multitask_run, read_metadata

    preds = {"test": {}, "val": {}}
    seconds = []
    for i, alpha in enumerate(alphas):
        path = multitask_run(sub.zoo, dict(zip(sub.tasks, alpha.tolist())), sub.config.multitask(), log=log)
        vertex = _vertex(alpha)
        if vertex is not None and path == sub.zoo.expert_path(sub.tasks[vertex]):
            recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": "expert", "task": sub.tasks[vertex]}
            seconds.append(float("nan"))
        else:
            recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": "multitask",
                      "file": f"{path.parent.name}/{path.name}"}
            seconds.append(float(read_metadata(path).get("seconds", "nan")))
        for split in preds:
            preds[split][i] = sub.cache.predictions(recipe, split, lambda p=path: load_state_dict(p), tasks=sub.tasks)
    return {"predictions": preds, "train_seconds": seconds}


# --------------------------------------------------------------------------------------------------- a subset

def run_subset(zoo, index: Sequence[int], surrogates: dict, config: ParetoConfig, cache=None,
               log: Callable = print) -> dict:
    """Everything for one subset: the temperature, every front (test at the front α, validation at the multitask
    α), multitask ground truth, P1/P2 quality with intervals, and the front timings. ``cache``: a trial cache
    (default: the zoo's, under the nbmerge cache, with ``config.val_examples``)."""
    from ..protocol import trial_cache

    cache = cache or trial_cache(zoo, config.device, config.cache, config.val_examples, config.seed)
    sub = Subset(zoo, cache, surrogates, config, list(index), _Store(cache))
    count = len(sub.index)
    front = pareto.simplex_grid(count, config.front_divisions_2 if count == 2 else config.front_divisions_3)
    truth_alphas = multitask_alphas(count, config)
    alphas = _union(front, truth_alphas)
    matched = [int(((alphas - a).abs().amax(1) < 1e-9).nonzero()[0]) for a in truth_alphas]
    both = lambda i: ("test", "val") if i in matched else ("test",)  # noqa: E731
    base_recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": "base"}
    base = {s: cache.predictions(base_recipe, s, lambda: surrogates["like"], tasks=sub.tasks) for s in ("test", "val")}
    names = front_names(config)
    temperature = choose_temperature(sub, alphas, log) if MIXTURE in names else None
    fronts, em, merges = {}, {}, {}
    for name in names:
        if name == MIXTURE:
            result = evaluate_front(sub, name, alphas, both, temperature["chosen"], temperature.pop("states"), log=log)
            chosen = next(c for c in temperature["candidates"] if c["factor"] == temperature["chosen"]["factor"])
            merges[name] = chosen.pop("merge")
            for candidate in temperature["candidates"]:
                candidate.pop("merge", None)
        else:
            result = evaluate_front(sub, name, alphas, both, log=log)
            merges[name] = [result["merge_seconds"], result["merged"]]
        fronts[name] = result["predictions"]
        if result["em"][0] is not None:
            em[name] = result["em"]
    truth = ground_truth(sub, truth_alphas, log)
    result = {"tasks": sub.tasks, "alphas": alphas.tolist(), "matched": matched,
              "multitask_alphas": truth_alphas.tolist(), "val_examples": config.val_examples,
              "reference": list(base["test"].accuracy().values()),
              "fronts": {n: {"label": label(n), "accuracy": _accuracy_rows(p["test"]),
                             "val_accuracy": {str(i): p["val"][i].mean_accuracy() for i in matched}}
                         for n, p in fronts.items()},
              "multitask": {"alphas": truth_alphas.tolist(), "accuracy": _accuracy_rows(truth["predictions"]["test"]),
                            "train_seconds": truth["train_seconds"],
                            "eval_seconds": _eval_seconds(list(truth["predictions"]["test"].values()))},
              "temperature": temperature, "em": em,
              "predictions": {"fronts": fronts, "multitask": truth["predictions"], "base": base}}
    result["eval_seconds"] = _eval_seconds([p for n in fronts for p in fronts[n]["test"].values()])
    result["timing"] = time_fronts(sub, config, temperature["chosen"] if temperature else None, alphas, merges)
    result["quality"] = quality(result, config)
    return result


def _accuracy_rows(predictions: dict) -> list[list[float]]:
    return [list(predictions[i].accuracy().values()) for i in sorted(predictions)]


def _eval_seconds(predictions: Sequence) -> float:
    """Mean seconds of one test evaluation, as measured when each was computed (the cache records it)."""
    seconds = [p.seconds or p.extra.get("seconds", 0.0) for p in predictions]
    seconds = [s for s in seconds if s > 0]
    return float(np.mean(seconds)) if seconds else float("nan")


def time_fronts(sub: Subset, config: ParetoConfig, temperature: Optional[dict] = None,
                front: Optional[torch.Tensor] = None, merges: Optional[dict] = None) -> dict:
    """Wall time of merging a front of many α per family (merge only; posteriors already trained; the mixture at
    its chosen ``temperature``), measured once per posteriors and device and recorded beside the trial cache: a
    rerun reports the recorded time, as it reports the multitask runs' recorded training time. With timing
    divisions 0, the evaluated ``front``'s own merges (``merges``: name → [seconds, α merged]) are the
    measurement: no extra merging (each batch's set-up included, so the per-α time is an upper bound)."""
    count = len(sub.index)
    divisions = config.timing_divisions_2 if count == 2 else config.timing_divisions_3
    alphas = pareto.simplex_grid(count, divisions) if divisions else front
    centroid = torch.full((count,), 1 / count, dtype=torch.float64)
    out = {"alphas": len(alphas), "seconds": {}, "device": config.device,
           "source": "a timed front" if divisions else "the evaluated front's merges"}
    for name in front_names(config):
        family, run = family_of(name)
        chosen = temperature if name == MIXTURE else None
        key = {"timing": sub.recipe(name, centroid, chosen), "alphas": [[round(float(a), 6) for a in row]
                                                                        for row in alphas], "device": config.device}
        found = sub.store.get(key)
        if found is None and not divisions:
            seconds, merged = (merges or {}).get(name, [float("nan"), 0])
            # a front partly found in the cache (a vertex shared with another front) merged fewer α: per α
            found = sub.store.put(key, {"seconds": seconds / merged * len(alphas) if merged else float("nan"),
                                        "measured": time.strftime("%Y-%m-%d %H:%M:%S")})
        if found is None:
            synchronize(config.device)
            start = time.perf_counter()
            if family == MIXTURE:
                ivon = sub.surrogates["ivon"]
                batches = pareto.iter_mog_merge(
                    sub.surrogates["base"], ivon["means"][sub.index], ivon["precisions"][sub.index], alphas,
                    iterations=config.em_iterations, responsibility_tol=config.em_tolerance,
                    temperature=(chosen or {}).get("tau", 1.0), batch=_mog_batch(sub.surrogates))
                for _ in batches:  # each batch is dropped at once: a front of hundreds of α never sits in memory
                    synchronize(config.device)
            else:
                for chunk in alpha_chunks(alphas, sub.surrogates):
                    merge_family(sub.surrogates, family, sub.index, chunk, config, run=run or 0)
            synchronize(config.device)
            found = sub.store.put(key, {"seconds": time.perf_counter() - start,
                                        "measured": time.strftime("%Y-%m-%d %H:%M:%S")})
        out["seconds"][name] = found["seconds"]
    return out


# ---------------------------------------------------------------------------------------------------- quality

def _correct(predictions: dict, tasks: Sequence[str]) -> list[np.ndarray]:
    """Per task: [A, n] correctness of the rows of ``predictions`` (row → Predictions) in row order."""
    rows = [predictions[i] for i in sorted(predictions)]
    return [np.stack([p.correct(t) for p in rows]) for t in tasks]


def bootstrap_indices(counts: Sequence[int], n_boot: int, seed: int) -> list[np.ndarray]:
    """Per task, [n_boot, n_t] test-example indices drawn with replacement: one draw shared by every model."""
    rng = np.random.default_rng([seed, 17])
    return [rng.integers(0, n, size=(n_boot, n)) for n in counts]


def resampled_accuracy(correct: Sequence[np.ndarray], draws: Sequence[np.ndarray]) -> np.ndarray:
    """[n_boot, A, T] accuracies of A models on every bootstrap draw (``correct``: per task [A, n_t])."""
    return np.stack([c[:, d].mean(-1).T for c, d in zip(correct, draws)], axis=-1)


def _hypervolumes(acc: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Hypervolume per bootstrap draw: ``acc`` [B, A, T], ``reference`` [B, T] → [B]."""
    return np.array([pareto.hypervolume(a, r) for a, r in zip(acc, reference)])


def _interval(values: np.ndarray) -> tuple[float, float]:
    tail = (1 - LEVEL) / 2
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)


def _at_chance(correct: Sequence[np.ndarray], predictions: dict) -> bool:
    from ..protocol import CHANCE_MARGIN

    chance = next(iter(predictions.values())).chance()
    return float(np.mean([c.mean() for c in correct])) <= chance + CHANCE_MARGIN


def _agreement(a: dict, b: dict, tasks: Sequence[str]) -> float:
    same = total = 0
    for i in a:
        for t in tasks:
            pa, pb = a[i].logits[t].argmax(-1), b[i].logits[t].argmax(-1)
            same += int((pa == pb).sum())
            total += len(pa)
    return same / max(total, 1)


def _bootstrap_front(boot: dict, fronts: dict, base, name: str, tasks: Sequence[str], n_boot: int, seed: int):
    """Hypervolume of front ``name`` (point and on every bootstrap draw), recorded in ``boot``; the draws and the
    base model's resampled accuracies (the reference point moves with each draw) are shared by every front."""
    if "draws" not in boot:
        boot["draws"] = bootstrap_indices([len(base.labels[t]) for t in tasks], n_boot, seed)
        boot["reference"] = resampled_accuracy([base.correct(t)[None] for t in tasks], boot["draws"])[:, 0]
        boot["reference_point"] = np.array([base.correct(t).mean() for t in tasks])
    if name not in boot:
        correct = _correct(fronts[name], tasks)
        point = pareto.hypervolume(np.stack([c.mean(-1) for c in correct], -1), boot["reference_point"])
        boot[name] = {"point": point, "chance": _at_chance(correct, fronts[name]),
                      "draws": _hypervolumes(resampled_accuracy(correct, boot["draws"]), boot["reference"])}
    return boot[name]


def compare_fronts(fronts: dict, base: "object", a: str, b: str, tasks: Sequence[str], n_boot: int = 2000,
                   seed: int = 0, boot: Optional[dict] = None) -> dict:
    """Decide "front ``a`` is closer to multitask than front ``b``" by hypervolume over the base model's accuracies:
    held when the paired bootstrap 95% interval of HV(a) − HV(b) lies above 0; not tested when both hypervolumes
    are 0 (no point of either front beats the base on every task), when the two fronts make the same test
    predictions (≥ 99.5% agreement) or when one is at chance. ``fronts``: name → {row: test Predictions};
    ``base``: the base model's test Predictions. ``boot`` caches the resampled hypervolumes across calls."""
    from ..protocol import COLLAPSED_AGREEMENT

    boot = {} if boot is None else boot
    for name in (a, b):
        _bootstrap_front(boot, fronts, base, name, tasks, n_boot, seed)
    diff = boot[a]["point"] - boot[b]["point"]
    low, high = _interval(boot[a]["draws"] - boot[b]["draws"])
    why = None
    if boot[a]["point"] == 0 and boot[b]["point"] == 0:
        why = "no point of either front beats the base model on every task (both hypervolumes are 0)"
    elif boot[a]["chance"] or boot[b]["chance"]:
        why = f"{label(a) if boot[a]['chance'] else label(b)} is at chance along its front"
    else:
        agreement = _agreement(fronts[a], fronts[b], tasks)
        if agreement >= COLLAPSED_AGREEMENT:
            why = f"the fronts are the same models: the same test prediction on {100 * agreement:.1f}% of examples"
    held = None if why else low > 0
    evidence = (f"HV {label(a)} − {label(b)} = {diff:+.4g} [{low:+.4g}, {high:+.4g}]"
                + (f" (not tested: {why})" if why else ""))
    return {"a": a, "b": b, "held": held, "diff": diff, "interval": [low, high], "why": why, "evidence": evidence}


def gap_closed(simple: "object", mixture: "object", multitask: "object", tasks: Sequence[str], n_boot: int = 2000,
               seed: int = 0) -> dict:
    """Share of the gap from ``simple`` to ``multitask`` that ``mixture`` closes, in test mean accuracy (each a
    Predictions at its validation-chosen α), with a paired bootstrap 95% interval. Held when the interval's lower
    end is above :data:`MOST`; not tested when multitask is not above simple merging by more than the interval
    (no gap to close: its own interval reaches 0) or a model is at chance."""
    from ..protocol import CHANCE_MARGIN

    models = (simple, mixture, multitask)
    correct = [np.stack([m.correct(t) for m in models]) for t in tasks]
    draws = bootstrap_indices([c.shape[1] for c in correct], n_boot, seed)
    acc = resampled_accuracy(correct, draws).mean(-1)                   # [B, 3]
    point = np.array([np.mean([c[j].mean() for c in correct]) for j in range(3)])
    denominator = acc[:, 2] - acc[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(denominator > 0, (acc[:, 1] - acc[:, 0]) / denominator, np.nan)
    gap_low, gap_high = _interval(denominator)
    share = (point[1] - point[0]) / (point[2] - point[0]) if point[2] > point[0] else float("nan")
    low, high = _interval(ratios)
    why = None
    chance = [m.mean_accuracy() <= m.chance() + CHANCE_MARGIN for m in models]
    if any(chance):
        why = f"{('simple', 'mixture', 'multitask')[chance.index(True)]} is at chance"
    elif not gap_low > 0:
        why = (f"multitask is not reliably above simple merging: multitask − simple = "
               f"{100 * (point[2] - point[0]):+.1f} [{100 * gap_low:+.1f}, {100 * gap_high:+.1f}] pts, no gap to close")
    held = None if why else low > MOST
    text = f"simple {100 * point[0]:.1f}% → mixture {100 * point[1]:.1f}% vs multitask {100 * point[2]:.1f}%"
    if why:
        text += f" (not tested: {why})"
    else:
        text += f": {_pct(share)} of the gap closed [{_pct(low)}, {_pct(high)}]"
    return {"held": held, "share": share, "interval": [low, high], "accuracy": point.tolist(), "why": why,
            "evidence": text}


def _pct(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{100 * value:.0f}%"


def _val_choice(val: dict) -> int:
    """The row with the best mean validation accuracy (ties: the first)."""
    rows = sorted(val)
    scores = [val[i].mean_accuracy() for i in rows]
    return rows[int(np.argmax(scores))]


def quality(result: dict, config: ParetoConfig) -> list[dict]:
    """Per front (and multitask): test hypervolume over the base with its bootstrap interval, the α-matched gap
    at the multitask α, and the α chosen on validation among the multitask α with its test mean accuracy."""
    preds = result["predictions"]
    tasks, matched = result["tasks"], result["matched"]
    base = preds["base"]["test"]
    truth_test = preds["multitask"]["test"]
    fronts = dict(preds["fronts"])
    everything = {**{n: p["test"] for n, p in fronts.items()}, "multitask": truth_test}
    boot: dict = {}
    result["_boot"] = boot
    truth_acc = np.array(_accuracy_rows(truth_test))
    rows = []
    for name, test in everything.items():
        _bootstrap_front(boot, everything, base, name, tasks, config.bootstrap, config.seed)
        acc = np.array(_accuracy_rows(test))
        if name == "multitask":
            chosen = _val_choice(preds["multitask"]["val"])
            chosen_alpha, chosen_test = result["multitask_alphas"][chosen], truth_test[chosen].mean_accuracy()
            gap = 0.0
        else:
            val = {i: fronts[name]["val"][i] for i in matched}
            chosen = _val_choice(val)
            chosen_alpha, chosen_test = result["alphas"][chosen], test[chosen].mean_accuracy()
            gap = pareto.alpha_matched_gap(acc[matched], truth_acc)
        low, high = _interval(boot[name]["draws"])
        rows.append({"front": name, "label": label(name), "hypervolume": boot[name]["point"],
                     "hypervolume_low": low, "hypervolume_high": high, "gap": gap,
                     "val_alpha": [round(a, 3) for a in chosen_alpha], "val_chosen_test_accuracy": chosen_test})
    return rows


def p1_decisions(result: dict, config: ParetoConfig) -> list[dict]:
    """Mixture vs IVON-Hess and vs simple of every single run k on one subset (:func:`compare_fronts`)."""
    preds = result["predictions"]
    fronts = {n: p["test"] for n, p in preds["fronts"].items()}
    base = preds["base"]["test"]
    boot = result.setdefault("_boot", {})
    out = []
    for family in ("ivon_hess", "simple"):
        for k in range(config.components):
            name = f"{family}@{k}"
            if name in fronts:
                out.append(compare_fronts(fronts, base, MIXTURE, name, result["tasks"], config.bootstrap,
                                          config.seed, boot))
    return out


def p2_decisions(result: dict, config: ParetoConfig) -> list[dict]:
    """Gap closed by the mixture against simple of every single run k, each model at its validation-chosen α among
    the multitask α (:func:`gap_closed`)."""
    preds = result["predictions"]
    matched = result["matched"]
    fronts = preds["fronts"]
    truth = preds["multitask"]
    mixture = fronts[MIXTURE]
    mix = mixture["test"][_val_choice({i: mixture["val"][i] for i in matched})]
    mtl = truth["test"][_val_choice(truth["val"])]
    out = []
    for k in range(config.components):
        name = f"simple@{k}"
        if name not in fronts:
            continue
        simple = fronts[name]["test"][_val_choice({i: fronts[name]["val"][i] for i in matched})]
        out.append({"run": k, **gap_closed(simple, mix, mtl, result["tasks"], config.bootstrap, config.seed)})
    return out


def cost_rows(results: Sequence[dict], surrogates: dict) -> list[dict]:
    """Per subset and front: the measured merge time of a front of many α against one multitask run (recorded
    training seconds, mean over the runs that are not zoo experts) and the sweep over as many α."""
    rows = []
    for result in results:
        trained = [s for s in result["multitask"]["train_seconds"] if np.isfinite(s)]
        one_run = float(np.mean(trained)) if trained else float("nan")
        timing = result["timing"]
        for name, seconds in timing["seconds"].items():
            seconds = float("nan") if seconds is None else seconds  # a record stored without a measurement
            per_alpha = seconds / timing["alphas"]
            rows.append({"subset": "+".join(result["tasks"]), "front": name, "alphas": timing["alphas"],
                         "front_seconds": seconds, "seconds_per_alpha": per_alpha,
                         f"front_{REPORTED_ALPHAS}_seconds": per_alpha * REPORTED_ALPHAS,
                         "eval_seconds_per_alpha": result["eval_seconds"],
                         "one_multitask_run_seconds": one_run, "sweep_seconds": one_run * timing["alphas"],
                         "speedup_vs_sweep": one_run / per_alpha if per_alpha > 0 else float("nan")})
    return rows


# ----------------------------------------------------------------------------------------------------- claims

def _over(decisions: Sequence[dict]) -> Optional[bool]:
    from ..protocol import over_seeds

    return over_seeds(decisions)


def pareto_claims(results: Sequence[dict], costs: Sequence[dict], surrogates: dict,
                  config: Optional[ParetoConfig] = None) -> list:
    config = config or ParetoConfig(suite="micro")
    out = []
    suite = config.suite
    subsets = ["+".join(r["tasks"]) for r in results]
    families = set(config.families)
    if set(NESTED) <= families and results:
        decisions = {s: p1_decisions(r, config) for s, r in zip(subsets, results)}
        flat = [d for ds in decisions.values() for d in ds]
        evidence = "; ".join(f"{s}: " + "; ".join(d["evidence"] for d in ds) for s, ds in decisions.items())
        first = decisions[subsets[0]]
        worst = min((d for d in flat if d["held"] is not None), key=lambda d: d["interval"][0], default=None)
        ours = ("; ".join(f"{label(d['b'])}: {d['diff']:+.4g} [{d['interval'][0]:+.4g}, {d['interval'][1]:+.4g}]"
                          for d in first[:1] + first[config.components:config.components + 1]) +
                (f" (weakest: vs {label(worst['b'])} low {worst['interval'][0]:+.4g})" if worst else ""))
        out.append(claim(
            "Mixture-weighted fronts are closer to the multitask front than Hessian-weighted or simple merging "
            "(hypervolume over the base; held if the paired 95% interval of HV(mixture) − HV(X) is above 0 for "
            "X = IVON-Hess and simple of every single IVON run, on every subset)", SOURCE_THEOREM, _over(flat),
            "temperature chosen on validation: " + "; ".join(
                f"{s}: τ = {r['temperature']['chosen']['factor']:g}·G = {r['temperature']['chosen']['tau']:.4g}"
                for s, r in zip(subsets, results)) + "; " + evidence,
            id="P1", paper="mixture ≥ Hessian ≥ simple fronts (theorem; fronts closest to multitask)",
            ours="HV(mixture) − HV(X), " + ours, suite=suite))
        gaps = {s: p2_decisions(r, config) for s, r in zip(subsets, results)}
        flat = [d for ds in gaps.values() for d in ds]
        first = gaps[subsets[0]][0] if gaps[subsets[0]] else None
        out.append(claim(
            f"The mixture closes most of the gap from simple merging to multitask fine-tuning (held if the lower end "
            f"of the 95% interval of the share closed is above {MOST:.0%}; every model's α chosen on validation "
            "among the multitask α)", SOURCE_EXAMPLE, _over(flat),
            "; ".join(f"{s}: " + "; ".join(f"run {d['run']}: {d['evidence']}" for d in ds) for s, ds in gaps.items()),
            id="P2", paper=f"{PAPER_EXAMPLE[0]}% simple → {PAPER_EXAMPLE[1]}% mixture vs {PAPER_EXAMPLE[2]}% multitask "
                          "(76% of the gap)",
            ours=first["evidence"] if first else "", suite=suite))
    else:
        for cid, text in (("P1", "Mixture-weighted fronts are closer to the multitask front"),
                          ("P2", "The mixture closes most of the gap")):
            out.append(claim(text, SOURCE_THEOREM if cid == "P1" else SOURCE_EXAMPLE, None,
                             f"not tested: needs the families {', '.join(NESTED)}", id=cid, suite=suite))
    if costs:
        slowest = max(costs, key=lambda r: r["seconds_per_alpha"])
        one_run = slowest["one_multitask_run_seconds"]
        if not np.isfinite(one_run):
            held, why = None, " (not tested: every multitask α is a zoo expert, no multitask run was timed)"
        else:
            held, why = all(r["speedup_vs_sweep"] >= SPEEDUP for r in costs), ""
        front = slowest[f"front_{REPORTED_ALPHAS}_seconds"]
        scaled = "" if slowest["alphas"] >= REPORTED_ALPHAS else \
            f" (measured on {slowest['alphas']} α, scaled linearly)"
        ivon = surrogates["costs"].get("ivon", {})
        once = (f"; one-time posterior training: {ivon['runs']} IVON runs, {ivon['seconds_total']:.0f} s in all"
                if ivon else "")
        out.append(claim(
            f"Once the surrogates exist, a front of hundreds of α takes seconds against hours of multitask "
            f"fine-tuning (held if every front is ≥ {SPEEDUP:.0f}× cheaper than multitask runs at as many α; merge "
            "vs training time, evaluation excluded on both sides)", SOURCE_COST, held,
            f"slowest front: {label(slowest['front'])} on {slowest['subset']}, {REPORTED_ALPHAS} α in {front:.1f} s"
            f"{scaled}; one multitask run {one_run:.0f} s (recorded), a sweep of {REPORTED_ALPHAS} α ≈ "
            f"{one_run * REPORTED_ALPHAS / 3600:.2f} h ({slowest['speedup_vs_sweep']:.0f}× the front's time); "
            f"evaluating one α costs {slowest['eval_seconds_per_alpha']:.1f} s on test{once}{why}",
            id="P3", paper="Gemma-2B: about 1 minute of merging against 17 hours of multitask training",
            ours=f"{front:.1f} s for {REPORTED_ALPHAS} α vs {one_run * REPORTED_ALPHAS / 3600:.2f} h "
                 f"({slowest['speedup_vs_sweep']:.0f}×)", suite=suite))
    return out


def headline(results: Sequence[dict]) -> dict:
    last = results[-1]
    q = {row["front"]: row for row in last["quality"]}
    name = MIXTURE if MIXTURE in q else next(iter(q))
    return {"name": f"{label(name)} α-matched gap to multitask fine-tuning ({'+'.join(last['tasks'])}), "
                    "accuracy points", "value": 100 * q[name]["gap"], "format": "{:.2f}"}


def temperature_rows(result: dict) -> list[dict]:
    """The temperature candidates: factor f, τ, mean validation accuracy of the mixture front, mean EM steps."""
    t = result["temperature"]
    if t is None:
        return []
    return [{"factor": c["factor"], "tau": c["tau"], "val_accuracy": c["val_accuracy"],
             "em_steps": float(np.mean([r["iterations"] for r in c["em"]])),
             "max_responsibility": float(np.mean([max(max(r) for r in e["responsibilities"]) for e in c["em"]])),
             "chosen": "✓" if c["factor"] == t["chosen"]["factor"] else ""} for c in t["candidates"]]


def responsibility_rows(result: dict) -> list[dict]:
    """Per mixture front, α and task: the responsibilities of the K runs at the merged θ, the run the task's
    mixture picks (the largest), and EM's steps."""
    rows = []
    for name, records in result["em"].items():
        for alpha, record in zip(result["alphas"], records):
            for task, r in zip(result["tasks"], record["responsibilities"]):
                rows.append({"front": "chosen τ" if name == MIXTURE else "τ = 1", "alpha": [round(a, 3) for a in alpha],
                             "task": task, "responsibilities": " ".join(f"{x:.3f}" for x in r),
                             "picks_run": int(np.argmax(r)), "em_steps": record["iterations"]})
    return rows


def metrics(results: Sequence[dict], costs: Sequence[dict], surrogates: dict) -> dict:
    """What metrics.json keeps: every number above, without the per-example predictions."""
    keep = []
    for result in results:
        row = {k: v for k, v in result.items() if k not in ("predictions", "_boot")}
        if row.get("temperature"):
            row["temperature"] = {k: v for k, v in row["temperature"].items() if k != "states"}
        keep.append(row)
    return {"subsets": keep, "costs": costs, "surrogate_costs": surrogates["costs"]}


# ---------------------------------------------------------------------------------------------------- figures

STYLE = {"simple": ("tab:blue", "-"), "ivon_hess": ("tab:orange", "-"), "soup_ivon_hess": ("tab:green", "--"),
         "multi_ivon_hess": ("tab:red", "-"), "adamw_simple": ("tab:purple", ":"), "adamw_sg_hess": ("tab:brown", ":")}


def _style(name: str) -> tuple[str, str]:
    family, run = family_of(name)
    color, line = STYLE.get(family, ("gray", "-"))
    if name == PLAIN:
        return color, ":"
    return color, ("--" if run else line)


def plot_front_2d(result: dict, ax=None):
    """Accuracy on task 1 against task 2 along α₁ for every front, the multitask runs and the base."""
    import matplotlib.pyplot as plt

    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 5))
    order = np.argsort(np.array(result["alphas"])[:, 0])
    for name, front in result["fronts"].items():
        acc = 100 * np.array(front["accuracy"])[order]
        color, line = _style(name)
        ax.plot(acc[:, 0], acc[:, 1], line, color=color, marker=".", markersize=4, label=front.get("label", name))
    if "multitask" in result:
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.plot(truth[:, 0], truth[:, 1], "ks-", label="multitask fine-tuning", markersize=6)
    ref = 100 * np.array(result["reference"])
    ax.plot([ref[0]], [ref[1]], "k*", markersize=12, label="base (reference point)")
    ax.set_xlabel(f"{result['tasks'][0]} accuracy (%)")
    ax.set_ylabel(f"{result['tasks'][1]} accuracy (%)")
    ax.set_title(f"α-fronts (test): {' vs '.join(result['tasks'])}")
    ax.legend(fontsize=6)
    if fig is not None:
        fig.tight_layout()
    return fig or ax.figure


def plot_front_3d(result: dict):
    """The 3-task fronts as their three pairwise projections (points, since the α grid is 2-dimensional)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.3))
    tasks = result["tasks"]
    for ax, (i, j) in zip(axes, ((0, 1), (0, 2), (1, 2))):
        for name, front in result["fronts"].items():
            acc = 100 * np.array(front["accuracy"])
            ax.scatter(acc[:, i], acc[:, j], s=8, color=_style(name)[0], label=front.get("label", name), alpha=0.6)
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.scatter(truth[:, i], truth[:, j], s=40, marker="s", color="black", label="multitask fine-tuning")
        ref = 100 * np.array(result["reference"])
        ax.plot([ref[i]], [ref[j]], "k*", markersize=12, label="base")
        ax.set_xlabel(f"{tasks[i]} (%)")
        ax.set_ylabel(f"{tasks[j]} (%)")
    axes[0].legend(fontsize=6)
    fig.suptitle(f"3-task fronts ({', '.join(tasks)}), pairwise projections")
    fig.tight_layout()
    return fig


def plot_responsibilities(result: dict):
    """Heat map of the chosen-temperature mixture's responsibilities: rows α, columns (task, run)."""
    import matplotlib.pyplot as plt

    records = result["em"].get(MIXTURE)
    if not records:
        return None
    matrix = np.array([[x for r in rec["responsibilities"] for x in r] for rec in records])
    k = len(records[0]["responsibilities"][0])
    fig, ax = plt.subplots(figsize=(1 + 0.6 * matrix.shape[1], 0.8 + 0.35 * matrix.shape[0]))
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(matrix.shape[1]), [f"{t[:10]}\nrun {j}" for t in result["tasks"] for j in range(k)], fontsize=7)
    ax.set_yticks(range(len(records)), [", ".join(f"{a:.2f}" for a in alpha) for alpha in result["alphas"]],
                  fontsize=7)
    ax.set_ylabel("α")
    tau = result["temperature"]["chosen"]
    ax.set_title(f"responsibilities at τ = {tau['factor']:g}·G", fontsize=9)
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------- tour

def subset_evaluator(zoo, tasks: Sequence[str], examples: int, device: str):
    """An evaluator over the first ``examples`` test examples of each task (all when 0)."""
    from ..evaluation import Evaluator

    cap = slice(0, examples or None)
    heads = zoo.heads()
    data = {t: {"test": (zoo.arrays[t]["test_x"][cap], zoo.arrays[t]["test_y"][cap])} for t in tasks}
    return Evaluator(zoo.arch, data, {t: heads[t] for t in tasks}, device=device)


def accuracies(evaluator, state: dict, tasks: Sequence[str]) -> list[float]:
    result = evaluator.evaluate(state, "test", tasks=list(tasks))
    return [result["tasks"][t]["accuracy"] for t in tasks]


def tour_preview(zoo, *, tasks: Optional[Sequence[str]] = None, divisions: int = 10, components: int = 2,
                 ivon_steps: int = 0, eval_examples: int = 300, device: str = "cpu", seed: int = 0,
                 plot: bool = True, log: Callable = lambda *_: None) -> dict:
    """The α preview of the three posterior families (simple, IVON-Hess, MultiIVON-Hess) on two tasks of ``zoo``
    (default its first two): fronts over α₁ ∈ {0, 1/divisions, ..., 1}, no multitask runs, on the first
    ``eval_examples`` test examples per task. The IVON posteriors are trained on first use (``components`` runs
    per task, ``ivon_steps`` steps each, 0 = the zoo's expert steps) and cached. The mixture uses τ = G (the
    components' log-density spread, f = 1: informative responsibilities, not chosen on validation). Returns the
    fronts, merge times, the temperature and (``plot``) a figure."""
    tasks = list(tasks or zoo.tasks[:2])
    if len(tasks) != 2:
        raise NbmergeError(f"tour_preview shows a 2-task front; got tasks {tasks}")
    config = ParetoConfig(suite=zoo.manifest["suite"], tasks=tuple(tasks), device=device, seed=seed,
                          families=NESTED, components=components, ivon_steps=ivon_steps)
    surrogates = prepare(zoo, config, log=log)
    ivon = surrogates["ivon"]
    alphas = pareto.simplex_grid(2, divisions)
    spread = pareto.log_density_spread(surrogates["base"], ivon["means"], ivon["precisions"],
                                       torch.full((1, 2), 0.5, dtype=torch.float64))
    tau = float(spread.max()) or 1.0
    evaluator = subset_evaluator(zoo, tasks, eval_examples, config.device)
    result = {"tasks": tasks, "alphas": alphas.tolist(), "reference": accuracies(evaluator, surrogates["like"], tasks),
              "fronts": {}, "temperature": tau}
    for family in NESTED:
        start = time.perf_counter()
        thetas = merge_family(surrogates, family, [0, 1], alphas, config, temperature=tau)
        seconds = time.perf_counter() - start
        acc = [accuracies(evaluator, pareto.unflatten_state(theta, surrogates["like"]), tasks) for theta in thetas]
        result["fronts"][family] = {"accuracy": acc, "merge_seconds": seconds, "label": FAMILIES[family][0]}
    result["hypervolume"] = {f: pareto.hypervolume(np.array(r["accuracy"]), np.array(result["reference"]))
                             for f, r in result["fronts"].items()}
    if plot:
        result["figure"] = plot_front_2d(result)
    return result
