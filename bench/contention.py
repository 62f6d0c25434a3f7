"""How much one other busy process slows the main job's work, by how nbmerge sets PyTorch's CPU threads.

    python -m bench.contention --out reports/contention

PyTorch's CPU kernels run on an OpenMP team of one thread per core. On a machine where every core is already taken,
the thread that shares a core with another process runs at half speed, every parallel region waits for it, and
libgomp's spin-waiting threads take time from the neighbour: with 2 threads on 2 cores and one other busy process,
the zoo build went from 757 s to 1,306 s.

Policies (``--policies``): **default**, one thread per core whatever the load (torch's default, and nbmerge's before
it adapted); **adaptive**, nbmerge's default now, as many threads as there are idle cores when the work starts
(``nbmerge/threads.py``); **PASSIVE**, ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep at once); **spin10k**,
``GOMP_SPINCOUNT=10000`` (a shorter spin); **threads1**, one thread always; **procs** (the seeds slice only), one
single-thread process per seed.

Each cell of the table is one fresh child process (libgomp reads its environment when it loads) running a fixed
slice of the main job: **train** builds the ``text-micro`` suite into a fresh cache (MiniLM experts fine-tuned on
real text: the zoo build's work), **evaluate** scores task arithmetic at 5 coefficients on its test split (the trial
loop of every notebook), **merge** runs TIES and TSV on its experts 5 times (the kernels). The conditions run
interleaved, ``--repeats`` rounds of {idle, one busy process} × the policies. The busy process is one Python loop
(one core's worth of work), started before the child and stopped after it. The figures that matter: each policy's
busy time against the default policy's idle time (the ~1.5× a shared machine may cost), and each policy's idle time
against the default's (what it costs a quiet machine).

``--slice adamerging --zoo-cache DIR`` times the tour's own work instead, on a built ``text8`` suite (``nbmerge zoo
build text8``; the cache is only read): **adamerging** is 12 of AdaMerging's Adam steps on the eight tasks'
unlabeled validation inputs after 3 untimed ones (the tour's training is 500 such steps per seed, most of its
time), **merge** runs TIES and TSV on the eight experts twice.

``--slice seeds --zoo-cache DIR`` asks whether the tour's AdaMerging seeds would hold their speed better as processes
than as threads: **seeds** is the time to learn ``--seed-count`` seeds' coefficients (10 Adam steps each, the tour's
seeds 0, 1, 2 by default), from the first seed's first step to the last seed's last. Under every policy but one, one
process learns the seeds one after another; under **procs**, one single-thread process per seed learns them side by
side (each loads the zoo first, so one seed's loading may overlap another's steps). With two threads and a
neighbour sharing two cores fairly, each thread gets 2/3 of a core and every parallel region waits for the slower
one; processes that never wait for each other keep their whole share.

``--neighbour apart`` starts the busy process in a session of its own, as a program started from another terminal
or by a service would run (the default, ``shared``, starts it in the benchmark's session, as every table before
12-07 did). Where the kernel's autogroup is on (``/proc/sys/kernel/sched_autogroup_enabled``; it is on this machine),
CPU time is shared between sessions first (control groups, where a service manager sets them up with a CPU
controller, share it the same way between groups): the job's session gets half the machine whatever its threads or
processes, and **threads1** idle / default idle (one core's time against two cores') is then the least slow-down any
policy can reach on two cores.

``--neighbour-after S`` starts the busy process S seconds after the cell's children, as a neighbour that comes
while a command runs: a command chooses its threads when it starts, and its long loops re-choose every few seconds
(:func:`nbmerge.threads.keep_up`).
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

from .reporting import NEIGHBOURS, machine, start_neighbour, write_pair

SUITE = "text-micro"
PIECES = ("train", "evaluate", "merge")
#: the environment each policy sets before the child starts (libgomp reads it when torch loads it)
#: ``default``: torch's default, one thread per core (what nbmerge did before it adapted); ``adaptive``: nbmerge's
#: default now, as many threads as idle cores when the work starts (nbmerge/threads.py)
_ALL = str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
POLICY_ENV = {"default": {"NBMERGE_THREADS": _ALL}, "adaptive": {"NBMERGE_THREADS": "auto"},
              "PASSIVE": {"NBMERGE_THREADS": _ALL, "OMP_WAIT_POLICY": "PASSIVE"},
              "spin10k": {"NBMERGE_THREADS": _ALL, "GOMP_SPINCOUNT": "10000"},
              "spin1k": {"NBMERGE_THREADS": _ALL, "GOMP_SPINCOUNT": "1000"},
              "threads1": {"OMP_NUM_THREADS": "1"},
              "procs": {"NBMERGE_THREADS": "1"}}
POLICIES = tuple(POLICY_ENV)
#: the policies that run each seed in a process of its own (the seeds slice only)
PER_SEED = ("procs",)
LOADS = ("idle", "busy")
BUSY = "while True: pass"
#: each slice's pieces, in the order the child runs them
SLICES = {"micro": PIECES, "adamerging": ("adamerging", "merge"), "seeds": ("seeds",)}
ADAMERGING_WARM, ADAMERGING_STEPS = 3, 12
SEED_STEPS = 10


def _text8(zoo_cache: str) -> tuple:
    """The built text8 suite, its base and its experts, with this process's threads set as every nbmerge command
    sets them."""
    from nbmerge.pools.zoo import load_models, load_zoo
    from nbmerge.threads import adapt_threads

    adapt_threads()
    zoo = load_zoo("text8", zoo_cache)
    return (zoo, *load_models(zoo))


def child_adamerging(zoo_cache: str) -> dict:
    """The tour's slice in this process: AdaMerging's Adam steps and TIES/TSV merges on the built text8 suite."""
    from nbmerge.tune.adamerging import AdaMergingSettings, learn_coefficients, validation_inputs

    zoo, base, experts = _text8(zoo_cache)
    stamps: list[float] = []
    learn_coefficients(zoo.arch, zoo.heads(), validation_inputs(zoo), base, experts,
                       AdaMergingSettings(steps=ADAMERGING_WARM + ADAMERGING_STEPS),
                       progress=lambda step, loss: stamps.append(time.perf_counter()), log=lambda *_: None)
    return {"adamerging": stamps[-1] - stamps[ADAMERGING_WARM - 1], **_merges(base, experts, 2)}


def child_seeds(zoo_cache: str, seeds: list[int]) -> dict:
    """AdaMerging's coefficients for ``seeds``, one after another, on the built text8 suite: when the first step
    started and the last ended (``time.monotonic``, one clock for every process of the machine)."""
    import torch

    from nbmerge.tune.adamerging import AdaMergingSettings, learn_coefficients, validation_inputs

    zoo, base, experts = _text8(zoo_cache)
    inputs, heads = validation_inputs(zoo), zoo.heads()
    start = time.monotonic()
    for seed in seeds:
        learn_coefficients(zoo.arch, heads, inputs, base, experts, AdaMergingSettings(steps=SEED_STEPS, seed=seed),
                           log=lambda *_: None)
    return {"start": start, "end": time.monotonic(), "threads": torch.get_num_threads()}


def child(cache: str) -> dict:
    """One slice of the main job in this process: the seconds each piece took."""
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
    return {**times, **_merges(base, experts, 5)}


def _merges(base, experts, rounds: int) -> dict:
    """The merge piece: TIES and TSV ``rounds`` times each, and the threads torch computed with."""
    import torch

    from nbmerge.engine.merging import merge

    start = time.perf_counter()
    for _ in range(rounds):
        merge("ties", base, experts)
        merge("tsv", base, experts)
    return {"merge": time.perf_counter() - start, "threads": torch.get_num_threads()}


def _children(policy: str, slice_: str, cache: str, zoo_cache: Optional[str], seed_count: int) -> list[list[str]]:
    """The child processes of one cell, each as its arguments to ``python -m bench.contention``."""
    if slice_ == "seeds":
        seeds = [str(seed) for seed in range(seed_count)]
        groups = [[seed] for seed in seeds] if policy in PER_SEED else [seeds]
        return [["--child-seeds", zoo_cache, ",".join(group)] for group in groups]
    return [["--child-adamerging", zoo_cache] if slice_ == "adamerging" else ["--child", cache]]


def run_condition(policy: str, load: str, slice_: str, zoo_cache: Optional[str], timeout: Optional[float],
                  seed_count: int, neighbour: str = "shared", after: float = 0.0) -> dict:
    """One cell of ``slice_`` in fresh children: the micro slice in a fresh cache, the AdaMerging or seeds slice on
    the suite in ``zoo_cache``; under load, beside the busy process started ``neighbour`` (see
    :data:`bench.reporting.NEIGHBOURS`), ``after`` seconds after the children. A cell still running after ``timeout``
    seconds is stopped, and its row says so (``stopped_s``) with no piece's time."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "NBMERGE_THREADS")}
    env.update(HF_HUB_OFFLINE="1", **POLICY_ENV[policy])
    loop = [sys.executable, "-c", BUSY]
    busy = start_neighbour(loop, neighbour) if load == "busy" and not after else None
    try:
        with tempfile.TemporaryDirectory(prefix="nbmerge-contention-") as cache:
            started = time.monotonic()
            # each child's output goes to a file of its own: side-by-side children never block on a full pipe
            whats = _children(policy, slice_, cache, zoo_cache, seed_count)
            logs = [(Path(cache) / f"child{i}.out", Path(cache) / f"child{i}.err") for i in range(len(whats))]
            children = []
            for what, (out, err) in zip(whats, logs):
                with open(out, "w") as stdout, open(err, "w") as stderr:
                    children.append(subprocess.Popen([sys.executable, "-m", "bench.contention", *what], env=env,
                                                     stdout=stdout, stderr=stderr))
            if load == "busy" and after:
                time.sleep(after)
                busy = start_neighbour(loop, neighbour)
            try:
                for child in children:
                    child.wait(timeout=None if timeout is None else max(0.0, timeout - (time.monotonic() - started)))
            except subprocess.TimeoutExpired:
                return {"stopped_s": timeout, "threads": None}
            finally:
                for child in children:
                    if child.poll() is None:
                        child.kill()
                        child.wait()
            outs = [(out.read_text(), err.read_text()) for out, err in logs]
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    failed = [err for child, (_, err) in zip(children, outs) if child.returncode != 0]
    if failed:
        raise RuntimeError(f"the child ({policy}, {load}) failed:\n{failed[0][-2000:]}")
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    return seeds_cell(results) if slice_ == "seeds" else results[0]


def seeds_cell(results: list[dict]) -> dict:
    """A seeds cell from its children's spans: the first seed's first step to the last seed's last, whichever
    process ran them."""
    return {"seeds": max(r["end"] for r in results) - min(r["start"] for r in results),
            "threads": results[0]["threads"], "processes": len(results)}


def run(repeats: int, policies=POLICIES, log=print, zoo_cache: Optional[str] = None,
        timeout: Optional[float] = None, slice_: str = "micro", seed_count: int = 3,
        neighbour: str = "shared", after: float = 0.0) -> dict:
    pieces = SLICES[slice_]
    rows = []
    for round_ in range(repeats):
        for policy in policies:
            for load in LOADS:
                times = run_condition(policy, load, slice_, zoo_cache, timeout, seed_count, neighbour, after)
                times = {piece: times.get(piece) for piece in pieces} | times
                rows.append({"round": round_, "policy": policy, "load": load, **times})
                log(f"round {round_} {policy:8s} {load:5s} " + (
                    f"stopped after {timeout:.0f} s" if "stopped_s" in times else
                    "  ".join(f"{piece} {times[piece]:.1f} s" for piece in pieces)))
    return {"machine": machine(), "suite": "text8" if zoo_cache else SUITE, "slice": slice_, "repeats": repeats,
            "timeout_s": timeout, "policies": list(policies), "neighbour": neighbour,
            "neighbour_after_s": after, "rows": rows,
            **({"seed_count": seed_count, "seed_steps": SEED_STEPS} if slice_ == "seeds" else {}),
            "summary": summarise(rows, policies, pieces)}


def _median(values) -> Optional[float]:
    """The median of the cells that finished (None for a stopped one), or None when none did."""
    done = [v for v in values if v is not None]
    return statistics.median(done) if done else None


def _ratio(top: Optional[float], bottom: Optional[float]) -> Optional[float]:
    return None if top is None or bottom is None else top / bottom


def summarise(rows: list[dict], policies=POLICIES, pieces=PIECES) -> dict:
    """Median seconds per (policy, load, piece) and of the total; per policy the slow-down busy/idle, and against
    the default policy on an idle machine (what a policy costs a quiet machine, and where it leaves a busy one)."""
    med = {}
    for policy in policies:
        for load in LOADS:
            cell = [r for r in rows if r["policy"] == policy and r["load"] == load]
            med[f"{policy}/{load}"] = {piece: _median(r[piece] for r in cell) for piece in pieces}
            med[f"{policy}/{load}"]["total"] = _median(None if "stopped_s" in r else sum(r[p] for p in pieces)
                                                       for r in cell)
    ratios = {}
    for piece in (*pieces, "total"):
        for policy in policies:
            ratios[f"{policy}: busy / its idle {piece}"] = _ratio(med[f"{policy}/busy"][piece],
                                                                  med[f"{policy}/idle"][piece])
            for load in LOADS:
                ratios[f"{policy} {load} / default idle {piece}"] = _ratio(med[f"{policy}/{load}"][piece],
                                                                           med["default/idle"][piece])
    return {"median_s": med, "ratios": ratios}


def render(report: dict) -> str:
    m, s = report["machine"], report["summary"]
    pieces = SLICES[report.get("slice", "micro")]
    if report.get("slice") == "seeds":
        what = (f"the tour's AdaMerging seeds on the `text8` suite: **seeds** = {report['seed_count']} seeds' "
                f"coefficients learned, {report['seed_steps']} Adam steps each, from the first seed's first step to "
                "the last seed's last; **procs** learns them in one single-thread process per seed side by side, "
                "every other policy in one process, one seed after another")
    elif report.get("slice") == "adamerging":
        what = (f"the tour's own work on the `text8` suite: **adamerging** = {ADAMERGING_STEPS} of AdaMerging's Adam "
                f"steps on the eight tasks' unlabeled validation inputs (after {ADAMERGING_WARM} untimed), **merge** "
                "= TIES and TSV on the eight experts twice each")
    else:
        what = (f"a slice of the main job: **train** = build the `{report['suite']}` suite into a fresh cache (MiniLM "
                "fine-tuning), **evaluate** = task arithmetic scored at 5 coefficients, **merge** = TIES and TSV 5 "
                "times each")
    lines = [
        "# One busy process beside the main job: how nbmerge sets its threads",
        "",
        f"Generated by `{report.get('command', 'python -m bench.contention')}` on {m['date_utc']}: {m['cpu_count']} CPUs, torch {m['torch']}, nbmerge {m['nbmerge']}. Median of "
        f"{report['repeats']} interleaved round(s), each cell a fresh process; {what}. **busy** = one other process "
        f"running a Python loop (one core's worth of work), {_where(report)}{_after(report)}. *threads*: the torch "
        "threads the child computed with (at its end).",
        "",
        "| policy | load | threads | " + " | ".join(f"{p} s" for p in pieces) + " | total s |",
        "|---|---|---|" + "---|" * (len(pieces) + 1),
    ]
    for policy in report["policies"]:
        for load in LOADS:
            cell = s["median_s"][f"{policy}/{load}"]
            threads = sorted({_threads(r) for r in report["rows"] if r["policy"] == policy and r["load"] == load
                              and r["threads"] is not None})
            lines.append(f"| {policy} | {load} | {', '.join(threads) or '—'} | "
                         + " | ".join(_seconds(cell[p], report) for p in (*pieces, "total")) + " |")
    r = s["ratios"]
    lines += ["", "| ratio | " + " | ".join(pieces) + " | total |", "|---|" + "---|" * (len(pieces) + 1)]
    names = [f"{policy}: busy / its idle" for policy in report["policies"]]
    names += [f"{policy} {load} / default idle" for policy in report["policies"] for load in LOADS]
    for name in names:
        lines.append(f"| {name} | " + " | ".join("—" if r[f"{name} {p}"] is None else f"{r[f'{name} {p}']:.2f}×"
                                                 for p in (*pieces, "total")) + " |")
    lines += ["", "Rows:", "", "| round | policy | load | threads | " + " | ".join(f"{p} s" for p in pieces) + " |",
              "|---|---|---|---|" + "---|" * len(pieces)]
    for row in report["rows"]:
        lines.append(f"| {row['round']} | {row['policy']} | {row['load']} | "
                     f"{_threads(row) if row['threads'] else '—'} | " +
                     " | ".join(f"stopped after {row['stopped_s']:.0f} s" if row[p] is None else f"{row[p]:.1f}"
                                for p in pieces) + " |")
    if report.get("timeout_s"):
        lines += ["", f"A cell still running after {report['timeout_s']:.0f} s was stopped: its pieces read *stopped* "
                      "and take no part in the medians and ratios (—)."]
    return "\n".join(lines) + "\n"


def _where(report: dict) -> str:
    """Where the busy process ran, and what the kernel makes of it."""
    group = {True: "on", False: "off", None: "not known"}[report["machine"].get("sched_autogroup")]
    if report.get("neighbour", "shared") == "shared":
        return (f"started in the benchmark's own session (the kernel's autogroup: {group}; the job and the loop "
                "share one scheduling group, and CPU time is shared task by task)")
    text = ("started **apart**, in a session of its own like a program from another terminal (the kernel's "
            f"autogroup: {group}")
    if not report["machine"].get("sched_autogroup"):
        return text + ")"
    return text + ("; CPU time is shared between sessions first, so the job's session gets half the machine whatever "
                   "it runs") + (": **threads1 idle / default idle** is the least slow-down any policy can reach)"
                                 if "threads1" in report["policies"] else ")")


def _after(report: dict) -> str:
    after = report.get("neighbour_after_s") or 0
    return (f", started **{after:g} s after** the cell's children (a neighbour that comes while the command runs)"
            if after else "")


def _threads(row: dict) -> str:
    """The threads a cell's child computed with, and how many such processes ran side by side when more than one."""
    processes = row.get("processes", 1)
    return f"{row['threads']}" + (f" in each of {processes} processes" if processes > 1 else "")


def _seconds(value: Optional[float], report: dict) -> str:
    return f"{value:.1f}" if value is not None else f"stopped (> {report['timeout_s']:.0f})"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.contention", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="reports/contention", help="writes <out>.json and <out>.md")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved rounds of the four conditions")
    parser.add_argument("--policies", nargs="+", default=None, choices=POLICIES,
                        help="the OpenMP settings compared (the default policy is always included)")
    parser.add_argument("--slice", choices=tuple(SLICES), default="micro",
                        help="micro: train, evaluate and merge text-micro; adamerging: the tour's AdaMerging steps "
                             "and merges on a built text8 suite (--zoo-cache); seeds: its seeds, as threads or as "
                             "processes (policy procs)")
    parser.add_argument("--zoo-cache", default=None,
                        help="the cache holding a built text8 suite, for --slice adamerging or seeds (only read)")
    parser.add_argument("--seed-count", type=int, default=3, help="seeds learned, for --slice seeds (default 3)")
    parser.add_argument("--neighbour", choices=NEIGHBOURS, default="shared",
                        help="where the busy process runs: shared, in this benchmark's session (the default); apart, "
                             "in a session of its own, like a program started from another terminal")
    parser.add_argument("--neighbour-after", type=float, default=0.0,
                        help="start the busy process this many seconds after the cell's children (default: before)")
    parser.add_argument("--cell-timeout", type=float, default=None,
                        help="stop a cell still running after this many seconds (its row says so)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-adamerging", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-seeds", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    if args.child_adamerging:
        print(json.dumps(child_adamerging(args.child_adamerging)))
        return 0
    if args.child_seeds:
        print(json.dumps(child_seeds(args.child_seeds[0], [int(seed) for seed in args.child_seeds[1].split(",")])))
        return 0
    if args.slice != "micro" and not args.zoo_cache:
        parser.error(f"--slice {args.slice} needs --zoo-cache, a cache with the text8 suite built (nbmerge zoo build "
                     "text8 --cache DIR)")
    chosen = args.policies or ([p for p in POLICIES if p not in PER_SEED] if args.slice != "seeds"
                                else ["adaptive", *PER_SEED])
    policies = ["default"] + [p for p in chosen if p != "default"]
    if args.slice != "seeds" and any(p in PER_SEED for p in policies):
        parser.error(f"policy {PER_SEED[0]} runs seeds as processes: it only applies to --slice seeds")
    if args.neighbour_after < 0:
        parser.error(f"--neighbour-after must be 0 or more seconds, got {args.neighbour_after}")
    if args.seed_count < 1:
        parser.error(f"--seed-count must be at least 1, got {args.seed_count}")
    report = run(args.repeats, policies, zoo_cache=args.zoo_cache if args.slice != "micro" else None,
                 timeout=args.cell_timeout, slice_=args.slice, seed_count=args.seed_count,
                 neighbour=args.neighbour, after=args.neighbour_after)
    report["command"] = " ".join(["python -m bench.contention", *(sys.argv[1:] if argv is None else argv)])
    write_pair(args.out, report, render(report))
    print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
