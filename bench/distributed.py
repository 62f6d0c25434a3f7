"""Distributed BMM search: 1 against 2 workers measured here, the scaling simulated, batched BO's quality.

    OMP_NUM_THREADS=1 python -m bench.distributed --out reports/distributed_search

Three parts, one run, every number in the report computed by it:

1. **Measured.** The same BMM search (``tune_bmm``, ``bayes``, task-vector Grams, batch 2) on an embedded zoo
   (default ``micro``), once in this process (``workers=1, batch=2``: the same proposals, one trial at a time) and
   once on a local Ray cluster with 2 workers. Each uses a fresh in-memory trial cache, so every trial merges and
   evaluates. The Ray cluster is started before the clock starts (its start-up is reported on its own); the
   workers' own start (opening the zoo, factorising the solver) is inside the timed search, as it is for a user.
   Speed-up = sequential search wall / Ray search wall; efficiency = speed-up / workers.
2. **Simulated.** A batched search's wall time is, per batch, its slowest trial plus the optimiser's ask and tell
   and the executor's dispatch overhead. The simulation draws per-trial times with the spread measured in part 1
   around each median in ``--gpu-trial-seconds`` (per-trial times of a merge plus a validation pass on one GPU:
   inputs, stated as such in the report), takes the optimiser's per-batch seconds from part 3 and the dispatch
   overhead from part 1, and reports speed-up and efficiency at 1–8 workers for a 20-trial (the paper's) and a
   64-trial search.
3. **BO quality at equal trial count.** ``bayes`` with batches of 1, 2 and 4 (constant liar) over ``--seeds``
   seeds on a synthetic objective shaped like BMM's box (four log10 ρ in [−4, 2] and a scale in [0.5, 1.5]):
   best value after the budget, and regret against the known optimum.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

from nbmerge.engine.io import atomic_write_text

WORKERS = (1, 2, 4, 8)
BATCHES = (1, 2, 4)
BOX = {"attn_in": (-4.0, 2.0), "attn_out": (-4.0, 2.0), "mlp_in": (-4.0, 2.0), "mlp_out": (-4.0, 2.0),
       "scale": (0.5, 1.5)}
# the synthetic objective's optimum (in the box's interior) and per-coordinate widths: a broad valley in the
# attention groups, narrow ones in the MLP groups and the scale, plus a ripple so that it is not a pure bowl
_CENTRE = {"attn_in": -1.5, "attn_out": -2.5, "mlp_in": 0.5, "mlp_out": -0.5, "scale": 1.1}
_WIDTH = {"attn_in": 3.0, "attn_out": 2.5, "mlp_in": 1.0, "mlp_out": 1.2, "scale": 0.25}


def synthetic(params: dict) -> float:
    """A BMM-shaped test objective, maximised at ``_CENTRE`` with value 1."""
    bowl = sum(((params[k] - _CENTRE[k]) / _WIDTH[k]) ** 2 for k in _CENTRE)
    ripple = 0.05 * (1 - math.cos(2 * math.pi * (params["mlp_in"] - _CENTRE["mlp_in"])))
    return 1.0 - 0.1 * bowl - ripple


def machine() -> dict:
    import ray
    import skopt
    import torch

    import nbmerge

    return {"host": socket.gethostname(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "load_average_1min_at_start": os.getloadavg()[0], "python": platform.python_version(),
            "torch": torch.__version__, "ray": ray.__version__, "skopt": skopt.__version__,
            "nbmerge": nbmerge.__version__, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}


# -- 1. measured ---------------------------------------------------------------------------------------------------

def measure(suite: str, cache: Optional[str], budget: int, workers: int, log=print) -> dict:
    """The same batched search in process and on Ray (see the module docstring)."""
    import ray

    from nbmerge.pools.zoo import load_zoo
    from nbmerge.tune.bmm import BMMTrialRecipe, tune_bmm
    from nbmerge.tune.distributed import RayExecutor
    from nbmerge.tune.search import search

    zoo = load_zoo(suite, cache)
    kwargs = {"strategy": "bayes", "budget": budget, "seed": 0, "n_initial": min(4, budget), "batch": workers}
    with tempfile.TemporaryDirectory(prefix="nbmerge-bench-distributed-") as scratch:
        sequential = tune_bmm(zoo, "task_arithmetic", anchor_params={"scale": 0.3}, grams="task_vector",
                              device="cpu", progress=False, log_path=Path(scratch) / "seq.jsonl", workers=1,
                              **kwargs).search
        log(f"sequential: search {sequential.seconds:.1f} s")
        # the same search on Ray: tune_bmm's objective, rebuilt on each worker from its recipe
        recipe = BMMTrialRecipe(suite=suite, zoo_cache=str(zoo.root.parent.parent), zoo_root=str(zoo.root),
                                trials_root=None, val_subset=None, device="cpu", anchor="task_arithmetic",
                                anchor_params={"scale": 0.3}, grams="task_vector", gram_examples=256, gram_seed=0,
                                beta=0.5, depth_bins=0, dtype="float64", groups=tuple(sequential.space.tied))
        began = time.perf_counter()
        ray.init(num_cpus=max(os.cpu_count() or 1, workers), include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
        cluster_s = time.perf_counter() - began
        executor = RayExecutor(recipe, workers, gpus_per_worker=0)
        try:
            workers_s = executor.warm_up()
            distributed = search(recipe, sequential.space, settings=sequential.settings["objective"],
                                 log_path=Path(scratch) / "ray.jsonl", executor=executor, progress=False, **kwargs)
            processes = len(executor.hosts)
        finally:
            executor.close()
            ray.shutdown()
        log(f"ray, {workers} workers: search {distributed.seconds:.1f} s (cluster start {cluster_s:.1f} s, "
            f"workers' start {workers_s:.1f} s)")
    runs = {"sequential": _run_row(sequential), "ray": _run_row(distributed)}
    same = [t.params for t in sequential.trials] == [t.params for t in distributed.trials] \
        and [t.value for t in sequential.trials] == [t.value for t in distributed.trials]
    speedup = sequential.seconds / distributed.seconds
    with_start = sequential.seconds / (distributed.seconds + workers_s)
    # what Ray adds per batch beyond its slowest trial and the optimiser: the dispatch overhead the simulation uses
    trials = distributed.trials
    batches = [trials[i:i + workers] for i in range(0, len(trials), workers)]
    busy = sum(max(t.seconds for t in b) + sum(t.search_seconds for t in b) for b in batches)
    overhead = max(0.0, distributed.seconds - busy) / len(batches)
    seconds = [t.seconds for t in sequential.trials[1:]]  # the first trial also factorises the solver
    return {"suite": suite, "budget": budget, "workers": workers, "batch": workers, "runs": runs,
            "cluster_start_s": cluster_s, "workers_start_s": workers_s, "worker_processes": processes,
            "speedup": speedup, "efficiency": speedup / workers, "speedup_with_worker_start": with_start,
            "same_trials": same, "ray_overhead_per_batch_s": overhead,
            "trial_s_median": statistics.median(seconds),
            "trial_s_cv": statistics.pstdev(seconds) / statistics.mean(seconds)}


def _run_row(search) -> dict:
    return {"search_s": search.seconds, "trials": len(search.trials),
            "objective_s_total": sum(t.seconds for t in search.trials),
            "optimiser_s_total": sum(t.search_seconds for t in search.trials),
            "best_value": search.best_value}


# -- 3. BO quality -------------------------------------------------------------------------------------------------

def quality(seeds: int, budget: int, log=print) -> dict:
    """Best value and regret of bayes at batch 1, 2, 4 over seeds, on :func:`synthetic` (optimum 1)."""
    from nbmerge.tune.search import Space, search

    space = Space(BOX)
    rows = {}
    for batch in BATCHES:
        best, optimiser = [], []
        for seed in range(seeds):
            result = search(synthetic, space, strategy="bayes", budget=budget, seed=seed, batch=batch,
                            progress=False)
            best.append(result.best_value)
            optimiser.append(sum(t.search_seconds for t in result.trials) / math.ceil(budget / batch))
        regret = [1.0 - b for b in best]
        rows[batch] = {"best_mean": float(np.mean(best)), "best_sd": float(np.std(best, ddof=1)),
                       "regret_mean": float(np.mean(regret)), "regret_median": float(np.median(regret)),
                       "regret_max": float(np.max(regret)), "optimiser_s_per_batch": float(np.mean(optimiser)),
                       "best": best}
        log(f"batch {batch}: regret {rows[batch]['regret_mean']:.4f} mean over {seeds} seeds")
    return {"objective": "synthetic BMM-shaped (4 log10 rho in [-4, 2], scale in [0.5, 1.5]; optimum 1)",
            "budget": budget, "seeds": seeds, "batches": rows}


# -- 2. simulated --------------------------------------------------------------------------------------------------

def simulate(medians: list[float], cv: float, overhead: float, optimiser: dict, budgets=(20, 64),
             draws: int = 400, seed: int = 0) -> list[dict]:
    """Speed-up and efficiency of k workers (batch k) against one, per median per-trial time and budget."""
    rng = np.random.default_rng(seed)
    sigma = math.sqrt(math.log(1 + cv ** 2))  # lognormal with this coefficient of variation
    rows = []
    for median in medians:
        for budget in budgets:
            times = median * rng.lognormal(0.0, sigma, size=(draws, budget))
            walls = {}
            for k in WORKERS:
                opt = optimiser.get(k, optimiser[max(b for b in optimiser if b <= k)])
                batches = [times[:, i:i + k].max(axis=1) for i in range(0, budget, k)]
                walls[k] = sum(batches) + len(batches) * (opt + (overhead if k > 1 else 0.0))
            for k in WORKERS:
                speedup = walls[1] / walls[k]
                rows.append({"trial_s_median": median, "budget": budget, "workers": k,
                             "speedup": float(np.mean(speedup)), "efficiency": float(np.mean(speedup) / k),
                             "wall_s": float(np.mean(walls[k]))})
    return rows


# -- the report ----------------------------------------------------------------------------------------------------

def render_markdown(report: dict) -> str:
    m, meas, qual = report["machine"], report["measured"], report["quality"]
    seq, ray_run = meas["runs"]["sequential"], meas["runs"]["ray"]
    lines = [
        "# Distributed BMM search: measured and simulated scaling, batched BO's quality",
        "",
        f"Generated by `{report['command']}` on {m['date_utc']} on {m['host']} ({m['platform']}, {m['cpu_count']} "
        f"CPUs, 1-minute load average {m['load_average_1min_at_start']:.2f} at the start: the machine is shared); "
        f"Ray {m['ray']}, scikit-optimize {m['skopt']}, torch {m['torch']}, nbmerge {m['nbmerge']}, Python "
        f"{m['python']}. The whole run took {report['seconds']:.0f} s.",
        "",
        "## 1. Measured: 1 against 2 workers on this machine",
        "",
        f"`tune_bmm` on `{meas['suite']}` (bayes, task-vector Grams, {meas['budget']} trials, batch "
        f"{meas['batch']}: the same proposals in both runs), every trial merged and evaluated (fresh in-memory "
        "trial cache). The Ray search's wall time starts once its workers are up: the local cluster's start "
        f"({meas['cluster_start_s']:.1f} s) and the workers' (each opening the zoo once: "
        f"{meas['workers_start_s']:.1f} s) are reported apart; each worker factorises its solver in its first "
        "trial, as the in-process run does in its first.",
        "",
        "| run | search wall (s) | Σ objective (s) | Σ optimiser (s) | best val accuracy |",
        "|---|---:|---:|---:|---:|",
        f"| 1 worker, in process | {seq['search_s']:.1f} | {seq['objective_s_total']:.1f} | "
        f"{seq['optimiser_s_total']:.2f} | {seq['best_value']:.4f} |",
        f"| {meas['workers']} Ray workers | {ray_run['search_s']:.1f} | {ray_run['objective_s_total']:.1f} | "
        f"{ray_run['optimiser_s_total']:.2f} | {ray_run['best_value']:.4f} |",
        "",
        f"Speed-up **{meas['speedup']:.2f}×**, efficiency (speed-up / workers) **{meas['efficiency']:.2f}** "
        f"({meas['speedup_with_worker_start']:.2f}× counting the workers' start). Trials ran in "
        f"{meas['worker_processes']} worker processes. "
        f"Both runs logged {'the same' if meas['same_trials'] else 'DIFFERENT'} trials (points and values). "
        f"Median trial {meas['trial_s_median']:.2f} s (coefficient of variation {meas['trial_s_cv']:.2f}); "
        f"Ray's overhead beyond the slowest trial of each batch and the optimiser: "
        f"{meas['ray_overhead_per_batch_s']:.2f} s per batch (over {math.ceil(meas['budget'] / meas['batch'])} "
        f"batches). The Ray trials' Σ objective is {ray_run['objective_s_total'] / seq['objective_s_total']:.2f}× "
        f"the in-process one: on {m['cpu_count']} cores two overlapping trials share the CPUs with the driver "
        "(and with whatever else runs on the machine).",
        "",
        "## 2. Simulated: scaling with per-trial times of GPU pools",
        "",
        "Per-trial times are drawn lognormal around each median below, with the coefficient of variation measured "
        f"in part 1 ({meas['trial_s_cv']:.2f}); per batch the wall time is the slowest trial, plus the optimiser's "
        "ask + tell for that batch size (measured in part 3) and, above one worker, Ray's per-batch overhead "
        f"measured in part 1 ({meas['ray_overhead_per_batch_s']:.2f} s); {report['simulation']['draws']} draws. "
        "The medians are **inputs** (`--gpu-trial-seconds`): the per-trial time of a merge plus a validation pass "
        "over 8–20 tasks on one GPU; no GPU pool was measured in this run. Each worker is assumed to have its own "
        "GPU (no contention, unlike part 1's shared cores); 8 workers use the optimiser time of batch 4.",
        "",
        "| median trial (s) | budget | " + " | ".join(f"{k} workers: speed-up (efficiency)" for k in WORKERS) + " |",
        "|---:|---:|" + "---:|" * len(WORKERS),
    ]
    rows = report["simulation"]["rows"]
    for median in report["simulation"]["medians"]:
        for budget in report["simulation"]["budgets"]:
            cells = [next(r for r in rows if r["trial_s_median"] == median and r["budget"] == budget
                          and r["workers"] == k) for k in WORKERS]
            lines.append(f"| {median:g} | {budget} | "
                         + " | ".join(f"{c['speedup']:.2f}× ({c['efficiency']:.2f})" for c in cells) + " |")
    lines += [
        "",
        "## 3. BO quality at equal trial count: batched (constant liar) against sequential",
        "",
        f"`bayes`, {qual['budget']} trials (5 space-filling, then the GP), {qual['seeds']} seeds, on a "
        f"{qual['objective']}. Regret = optimum − best value found (lower is better).",
        "",
        "| batch | best value (mean ± sd) | regret mean | regret median | regret worst | optimiser s / batch |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for batch, row in qual["batches"].items():
        lines.append(f"| {batch} | {row['best_mean']:.4f} ± {row['best_sd']:.4f} | {row['regret_mean']:.4f} | "
                     f"{row['regret_median']:.4f} | {row['regret_max']:.4f} | {row['optimiser_s_per_batch']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.distributed", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports/distributed_search", help="writes <out>.json and <out>.md")
    parser.add_argument("--suite", default="micro", help="an embedded zoo, built (nbmerge zoo build SUITE)")
    parser.add_argument("--cache", default=None, help="nbmerge cache folder")
    parser.add_argument("--budget", type=int, default=12, help="trials of the measured searches")
    parser.add_argument("--workers", type=int, default=2, help="Ray workers of the measured search")
    parser.add_argument("--seeds", type=int, default=8, help="seeds of the BO quality comparison")
    parser.add_argument("--quality-budget", type=int, default=20, help="trials per BO quality search")
    parser.add_argument("--gpu-trial-seconds", type=float, nargs="+", default=[2.0, 8.0],
                        help="median per-trial times simulated (merge + validation on one GPU)")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    report = {"command": "python -m bench.distributed " + " ".join(argv if argv is not None
                                                                          else sys.argv[1:]),
              "machine": machine()}
    report["measured"] = measure(args.suite, args.cache, args.budget, args.workers)
    report["quality"] = quality(args.seeds, args.quality_budget)
    optimiser = {int(b): row["optimiser_s_per_batch"] for b, row in report["quality"]["batches"].items()}
    draws = 400
    report["simulation"] = {"medians": args.gpu_trial_seconds, "budgets": [20, 64], "draws": draws,
                            "optimiser_s_per_batch": optimiser,
                            "rows": simulate(args.gpu_trial_seconds, report["measured"]["trial_s_cv"],
                                             report["measured"]["ray_overhead_per_batch_s"], optimiser,
                                             draws=draws)}
    report["seconds"] = time.perf_counter() - began
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_name(out.name + ".json"), json.dumps(report, indent=1) + "\n")
    atomic_write_text(out.with_name(out.name + ".md"), render_markdown(report))
    print(f"wrote {out}.md and {out}.json ({report['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
