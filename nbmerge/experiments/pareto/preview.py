"""The tour's α preview (two tasks, no multitask runs): the same posteriors and merges as the Pareto notebook."""

from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ...errors import NbmergeError
from ...solvers import pareto
from .config import FAMILIES, NESTED, PREVIEW, ParetoConfig
from .figures import plot_front_2d
from .fronts import merge_family, prepare

# ------------------------------------------------------------------------------------------------------- tour

def subset_evaluator(zoo, tasks: Sequence[str], examples: int, device: str):
    """An evaluator over the first ``examples`` test examples of each task (all when 0)."""
    from ...evaluate.evaluation import Evaluator

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
                          families=NESTED, components=components, ivon_steps=ivon_steps,
                          **{**PREVIEW, "cache": str(zoo.root.parent.parent)})   # the zoo's own cache
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
