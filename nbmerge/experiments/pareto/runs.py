"""The ground truth (multitask fine-tuning at the multitask α) and one subset's whole run; front timing (P3)."""

from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ...device import synchronize
from ...io import load_state_dict
from ...solvers import pareto
from .config import MIXTURE, ParetoConfig, family_of, front_names, label
from .fronts import (
    Subset,
    _mog_batch,
    _Store,
    _vertex,
    alpha_chunks,
    choose_temperature,
    evaluate_front,
    merge_family,
)
from .quality import _accuracy_rows, quality

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
    from ...pools.posteriors import multitask_run, read_metadata

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
    from ...protocol import trial_cache

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
