"""How much one other busy process slows the main job's work, by how nbmerge sets PyTorch's CPU threads.

    python -m bench.contention --out reports/contention

PyTorch's CPU kernels run on an OpenMP team of one thread per core. On a machine where every core is already taken,
the thread that shares a core with another process runs at half speed, every parallel region waits for it, and
libgomp's spin-waiting threads take time from the neighbour: with 2 threads on 2 cores and one other busy process,
the zoo build went from 757 s to 1,306 s.

Policies (``--policies``): **default**, one thread per core whatever the load (torch's default, and nbmerge's before
it adapted); **adaptive**, nbmerge's default now, as many threads as there are idle cores when the work starts
(``nbmerge/threads.py``); **PASSIVE**, ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep at once); **spin10k**,
``GOMP_SPINCOUNT=10000`` (a shorter spin); **threads1**, one thread always.

Each cell of the table is one fresh child process (libgomp reads its environment when it loads) running a fixed
slice of the main job: **train** builds the ``text-micro`` suite into a fresh cache (MiniLM experts fine-tuned on
real text: the zoo build's work), **evaluate** scores task arithmetic at 5 coefficients on its test split (the trial
loop of every notebook), **merge** runs TIES and TSV on its experts 5 times (the kernels). The conditions run
interleaved, ``--repeats`` rounds of {idle, one busy process} × the policies. The busy process is one Python loop
(one core's worth of work), started before the child and stopped after it. The figures that matter: each policy's
busy time against the default policy's idle time (the ~1.5× a shared machine may cost), and each policy's idle time
against the default's (what it costs a quiet machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from .reporting import machine, write_pair

SUITE = "text-micro"
PIECES = ("train", "evaluate", "merge")
#: the environment each policy sets before the child starts (libgomp reads it when torch loads it)
#: ``default``: torch's default, one thread per core (what nbmerge did before it adapted); ``adaptive``: nbmerge's
#: default now, as many threads as idle cores when the work starts (nbmerge/threads.py)
_ALL = str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
POLICY_ENV = {"default": {"NBMERGE_THREADS": _ALL}, "adaptive": {"NBMERGE_THREADS": "auto"},
              "PASSIVE": {"NBMERGE_THREADS": _ALL, "OMP_WAIT_POLICY": "PASSIVE"},
              "spin10k": {"NBMERGE_THREADS": _ALL, "GOMP_SPINCOUNT": "10000"},
              "threads1": {"OMP_NUM_THREADS": "1"}}
POLICIES = tuple(POLICY_ENV)
LOADS = ("idle", "busy")
BUSY = "while True: pass"


def child(cache: str) -> dict:
    """One slice of the main job in this process: the seconds each piece took."""
    import torch

    from nbmerge.engine.merging import merge
    from nbmerge.pools.build import build_zoo
    from nbmerge.pools.zoo import load_models, load_zoo

    from nbmerge.threads import adapt_threads

    adapt_threads()  # what every nbmerge command and report kernel does first
    times = {}
    start = time.perf_counter()
    build_zoo(SUITE, cache=cache, quiet=True, log=lambda message: None)
    times["train"] = time.perf_counter() - start
    zoo = load_zoo(SUITE, cache)
    base, experts = load_models(zoo)
    evaluator = zoo.evaluator()
    start = time.perf_counter()
    for alpha in (0.2, 0.4, 0.6, 0.8, 1.0):
        evaluator.evaluate(merge("task_arithmetic", base, experts, {"scale": alpha}))
    times["evaluate"] = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(5):
        merge("ties", base, experts)
        merge("tsv", base, experts)
    times["merge"] = time.perf_counter() - start
    times["threads"] = torch.get_num_threads()
    return times


def run_condition(policy: str, load: str) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "NBMERGE_THREADS")}
    env.update(HF_HUB_OFFLINE="1", **POLICY_ENV[policy])
    busy = subprocess.Popen([sys.executable, "-c", BUSY]) if load == "busy" else None
    try:
        with tempfile.TemporaryDirectory(prefix="nbmerge-contention-") as cache:
            out = subprocess.run([sys.executable, "-m", "bench.contention", "--child", cache], env=env,
                                 capture_output=True, text=True, check=False)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    if out.returncode != 0:
        raise RuntimeError(f"the child ({policy}, {load}) failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(repeats: int, policies=POLICIES, log=print) -> dict:
    rows = []
    for round_ in range(repeats):
        for policy in policies:
            for load in LOADS:
                times = run_condition(policy, load)
                rows.append({"round": round_, "policy": policy, "load": load, **times})
                log(f"round {round_} {policy:8s} {load:5s} " +
                    "  ".join(f"{piece} {times[piece]:.1f} s" for piece in PIECES))
    return {"machine": machine(), "suite": SUITE, "repeats": repeats, "policies": list(policies), "rows": rows,
            "summary": summarise(rows, policies)}


def summarise(rows: list[dict], policies=POLICIES) -> dict:
    """Median seconds per (policy, load, piece) and of the total; per policy the slow-down busy/idle, and against
    the default policy on an idle machine (what a policy costs a quiet machine, and where it leaves a busy one)."""
    med = {}
    for policy in policies:
        for load in LOADS:
            cell = [r for r in rows if r["policy"] == policy and r["load"] == load]
            med[f"{policy}/{load}"] = {piece: statistics.median(r[piece] for r in cell) for piece in PIECES}
            med[f"{policy}/{load}"]["total"] = statistics.median(sum(r[p] for p in PIECES) for r in cell)
    ratios = {}
    for piece in (*PIECES, "total"):
        for policy in policies:
            ratios[f"{policy}: busy / its idle {piece}"] = med[f"{policy}/busy"][piece] / med[f"{policy}/idle"][piece]
            for load in LOADS:
                ratios[f"{policy} {load} / default idle {piece}"] = (med[f"{policy}/{load}"][piece]
                                                                     / med["default/idle"][piece])
    return {"median_s": med, "ratios": ratios}


def render(report: dict) -> str:
    m, s = report["machine"], report["summary"]
    lines = [
        "# One busy process beside the main job: how nbmerge sets its threads",
        "",
        f"Generated by `python -m bench.contention` on {m['date_utc']}: {m['cpu_count']} CPUs, torch {m['torch']} "
        f"({report['rows'][0]['threads']} threads), nbmerge {m['nbmerge']}. Median of {report['repeats']} "
        "interleaved round(s), each cell a fresh process. The slice of the main job: **train** = build the "
        f"`{report['suite']}` suite into a fresh cache (MiniLM fine-tuning), **evaluate** = task arithmetic scored at 5 "
        "coefficients, **merge** = TIES and TSV 5 times each. **busy** = one other process running a Python loop "
        "(one core's worth of work).",
        "",
        "| policy | load | train s | evaluate s | merge s | total s |",
        "|---|---|---|---|---|---|",
    ]
    for policy in report["policies"]:
        for load in LOADS:
            cell = s["median_s"][f"{policy}/{load}"]
            lines.append(f"| {policy} | {load} | " + " | ".join(f"{cell[p]:.1f}" for p in (*PIECES, "total")) + " |")
    r = s["ratios"]
    lines += ["", "| ratio | train | evaluate | merge | total |", "|---|---|---|---|---|"]
    names = [f"{policy}: busy / its idle" for policy in report["policies"]]
    names += [f"{policy} {load} / default idle" for policy in report["policies"] for load in LOADS]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(f"{r[f'{name} {p}']:.2f}×" for p in (*PIECES, "total")) + " |")
    lines += ["", "Rows:", "", "| round | policy | load | train s | evaluate s | merge s |", "|---|---|---|---|---|---|"]
    for row in report["rows"]:
        lines.append(f"| {row['round']} | {row['policy']} | {row['load']} | " +
                     " | ".join(f"{row[p]:.1f}" for p in PIECES) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.contention", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="reports/contention", help="writes <out>.json and <out>.md")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved rounds of the four conditions")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES,
                        help="the OpenMP settings compared (the default policy is always included)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    policies = ["default"] + [p for p in args.policies if p != "default"]
    report = run(args.repeats, policies)
    write_pair(args.out, report, render(report))
    print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
