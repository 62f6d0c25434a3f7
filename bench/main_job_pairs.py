"""The main job beside one busy process, part by part: each part timed on the quiet machine and beside one busy
process, back to back, from copies of the same starting cache.

    python -m bench.main_job_pairs run --repo CHECKOUT --part zoo --work DIR
    python -m bench.main_job_pairs run --repo CHECKOUT --part 00_tour --work DIR
    python -m bench.main_job_pairs report --work DIR --out reports/contention_main_job
    python -m bench.main_job_pairs restore --report reports/contention_main_job.json --work DIR
    python -m bench.main_job_pairs note --work DIR --part 21_bmm_calibration --how "started from the zoo's cache alone"

`make report` takes about 2 h on 2 cores, longer beside a busy process, and this machine's speed drifts 2-4× from
hour to hour: two whole runs hours apart compare the hours as much as the load. Here each part of the main job (the
text8 zoo build, then each notebook, in the order ``make report`` runs them) runs twice back to back from copies of
one cache: once with nothing else running ("idle"), once beside one busy Python loop ("loaded", one core's worth of
work, started before the part and stopped after it). The whole job's ratio is the sum of the loaded times over the
sum of the idle times. The idle side's cache is the next part's starting state, as in one ``make report``; the zoo
starts from an empty cache. ``--repo`` is a checkout with its ``.venv`` (``make setup``); its commit is recorded, and
so is the code the part ran: the sides run without ``PYTHONPATH`` (this script's own, e.g. ``PYTHONPATH=.`` to run it
from another checkout, would otherwise put that checkout's nbmerge and notebooks in the part's place), and a pair is
refused unless the checkout's ``.venv`` imports nbmerge from the checkout itself. The record keeps the code
fingerprint of that nbmerge (the trial cache's key, :mod:`nbmerge.codehash`).

Each side records its wall time (a notebook's: the seconds ``nbmerge report`` records for it, which leave out the
report's start-up and page checks; the zoo's: the whole ``nbmerge zoo build``), the core-seconds the part used, and
how busy everything else kept the machine meanwhile (``/proc/stat``'s busy time less the part's, the busy loop's and
this script's own): an idle side is only quiet if that is near zero. The busy loop counts seconds per fixed chunk of
work, so its median says how fast the machine's cores ran while the loaded side did.

``run --neighbour apart`` starts the busy loop in a session of its own, like a program started from another
terminal (bench/reporting.py's ``NEIGHBOURS`` says what the kernel makes of each); the default, ``shared``, starts it
in this script's session, as every pair before 12-07 was run. One report holds pairs of one kind.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

SUITE = "text8"
#: one busy process: one core's worth of Python work, the seconds of each fixed chunk appended to the file argv[1]
BUSY = ("import sys, time\n"
        "log = open(sys.argv[1], 'a', buffering=1)\n"
        "while True:\n"
        "    start = time.perf_counter()\n"
        "    for _ in range(20_000_000):\n"
        "        pass\n"
        "    log.write(f'{time.perf_counter() - start:.4f}\\n')\n")
SIDES = ("idle", "loaded")


def parts(repo: Path) -> list[str]:
    """The main job's parts in the order ``make report`` runs them: the zoo, then the notebooks by name."""
    return ["zoo", *sorted(p.stem for p in (repo / "notebooks").glob("*.ipynb"))]


def part_command(repo: Path, part: str, out: Path) -> list[str]:
    nbmerge = str(repo / ".venv" / "bin" / "nbmerge")
    if part == "zoo":
        return [nbmerge, "zoo", "build", SUITE, "--quiet"]
    return [nbmerge, "report", "--check", "--profile", "default", "--only", part, "--out", str(out)]


def _busy_ticks() -> int:
    """All CPUs' busy jiffies since boot (everything but idle and iowait)."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    return sum(values) - values[3] - (values[4] if len(values) > 4 else 0)


def _process_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _own_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def notebook_seconds(out: Path, part: str) -> Optional[float]:
    """The seconds ``nbmerge report`` recorded for notebook ``part`` in the one run under ``out``."""
    runs = sorted((out / "runs").glob("*/run.json"))
    for run in runs:
        for report in json.loads(run.read_text()).get("reports", []):
            if report.get("name") == part and report.get("seconds") is not None:
                return float(report["seconds"])
    return None


def run_side(command: list[str], env: dict, *, busy: bool, work: Path, neighbour: str = "shared") -> dict:
    """Run ``command`` once (beside the busy loop, started ``neighbour``, when ``busy``): its wall time, its
    core-seconds, what every other process used meanwhile, and the busy loop's seconds per chunk."""
    from .reporting import start_neighbour

    chunks = work / "busy-chunks.txt"
    loop = start_neighbour([sys.executable, "-c", BUSY, str(chunks)], neighbour) if busy else None
    try:
        if loop is not None:
            time.sleep(1.0)  # the loop is running before the part starts
        ticks, children, own = _busy_ticks(), _children_seconds(), _own_seconds()
        loop_before = _process_seconds(loop.pid) if loop is not None else 0.0
        started = time.time()
        start = time.perf_counter()
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        part_s = _children_seconds() - children
        loop_s = _process_seconds(loop.pid) - loop_before if loop is not None else 0.0
        machine_s = (_busy_ticks() - ticks) / os.sysconf("SC_CLK_TCK")
        own_s = _own_seconds() - own
    finally:
        if loop is not None:
            loop.kill()
            loop.wait()
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (status {result.returncode}):\n{result.stderr[-4000:]}")
    side = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)), "wall_s": wall,
            "part_core_s": part_s, "others_core_s": max(0.0, machine_s - part_s - loop_s - own_s),
            "load_after": [round(x, 2) for x in os.getloadavg()]}
    if loop is not None:
        times = [float(line) for line in chunks.read_text().split()] if chunks.exists() else []
        side.update(busy_core_s=loop_s, busy_chunks=len(times),
                    busy_chunk_s=statistics.median(times) if times else None)
    return side


def write_record(path: Path, pair: dict) -> None:
    """Write one pair record atomically (a stopped write leaves the old record or none, never half of one)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(pair, indent=1) + "\n")
    tmp.replace(path)


def side_env(environ, cache: Path) -> dict:
    """A side's environment: offline, its own cache, the adaptive thread count as ``make report`` runs, and no
    ``PYTHONPATH`` or ``PYTHONHOME`` (the checkout's ``.venv`` decides what is imported)."""
    env = {key: value for key, value in environ.items()
           if key not in ("NBMERGE_THREADS", "OMP_NUM_THREADS", "PYTHONPATH", "PYTHONHOME")}
    return {**env, "NBMERGE_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def code_of(repo: Path, env: dict) -> dict:
    """Where ``repo``'s ``.venv`` imports nbmerge from under ``env``, and its code fingerprint; refused (SystemExit)
    unless that is ``repo``'s own nbmerge."""
    script = "import nbmerge, nbmerge.codehash as c; print(nbmerge.__file__); print(c.code_fingerprint())"
    probe = subprocess.run([str(repo / ".venv" / "bin" / "python"), "-c", script], env=env, capture_output=True,
                           text=True)
    if probe.returncode != 0:
        raise SystemExit(f"{repo}/.venv cannot import nbmerge (make setup in the checkout?):\n{probe.stderr[-2000:]}")
    where, fingerprint = probe.stdout.split()[-2:]
    if not Path(where).resolve().is_relative_to(repo / "nbmerge"):
        raise SystemExit(f"{repo}/.venv imports nbmerge from {Path(where).parent}, not from the checkout: the pair "
                         "would time other code than the commit it records")
    return {"nbmerge": str(Path(where).parent), "code_fingerprint": fingerprint}


def run_pair(repo: Path, part: str, work: Path, *, order: tuple[str, ...] = SIDES,
             side_runner: Callable[..., dict] = run_side, neighbour: str = "shared",
             code_check: Callable[[Path, dict], dict] = code_of) -> dict:
    """Time ``part`` idle and loaded (beside the loop started ``neighbour``) from copies of the current starting
    state (``work/state``, empty at first); the idle side's cache becomes the next part's state. Writes and returns
    ``work/pair-<part>.json``."""
    repo, work = repo.resolve(), work.resolve()
    if part not in parts(repo):
        raise SystemExit(f"{part!r} is not a part of the main job at {repo} ({', '.join(parts(repo))})")
    state = work / "state"
    state.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    pair = {"part": part, "commit": commit, "order": list(order), "neighbour": neighbour,
            **code_check(repo, side_env(os.environ, state)), "sides": {}}
    scratch = Path(tempfile.mkdtemp(prefix=f"pair-{part}-", dir=work))
    try:
        for side in order:
            cache = scratch / f"{side}-cache"
            shutil.copytree(state, cache, symlinks=True)
            out = scratch / f"{side}-reports"
            env = side_env(os.environ, cache)
            measured = side_runner(part_command(repo, part, out), env, busy=side == "loaded", work=scratch,
                                   neighbour=neighbour)
            seconds = measured["wall_s"] if part == "zoo" else notebook_seconds(out, part)
            if seconds is None:
                raise RuntimeError(f"{out}: no recorded seconds for {part}")
            pair["sides"][side] = {**measured, "seconds": seconds}
        next_state = work / "state.next"
        shutil.rmtree(next_state, ignore_errors=True)
        (scratch / "idle-cache").rename(next_state)
        shutil.rmtree(state)
        next_state.rename(state)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    pair["ratio"] = pair["sides"]["loaded"]["seconds"] / pair["sides"]["idle"]["seconds"]
    write_record(work / f"pair-{part}.json", pair)
    return pair


def restore(report: Path, work: Path) -> list[str]:
    """Write the pair records a report holds back into ``work`` as ``pair-<part>.json`` (a fresh machine keeps only
    the repository, so the report is where earlier pairs survive); an existing record is kept, never overwritten.
    Returns the parts written. The next part still needs its starting state (``work/state``): the cache the main
    job's earlier parts leave, rebuilt by running them."""
    try:
        pairs = json.loads(report.read_text())["pairs"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{report}: not a report of this tool ({exc})") from None
    work.mkdir(parents=True, exist_ok=True)
    written = []
    for pair in pairs:
        path = work / f"pair-{pair['part']}.json"
        if path.exists():
            continue
        write_record(path, pair)
        written.append(pair["part"])
    return written


def note(work: Path, part: str, how: str) -> dict:
    """Record in ``work/pair-<part>.json`` how the pair was run where it differs from one ``make report`` (e.g. a
    starting cache that is not the idle cache of every earlier part): the report prints it under the table."""
    path = work / f"pair-{part}.json"
    try:
        pair = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: no pair record to note ({exc})") from None
    if not how.strip():
        raise SystemExit("--how: say how the pair was run")
    pair["how"] = how.strip().rstrip(".")
    write_record(path, pair)
    return pair


def summarise(pairs: list[dict], all_parts: list[str]) -> dict:
    """The pairs in the main job's order, their sums and ratio, the parts not paired yet, and which parts ran which
    commit (None: not known; the report says so when they are not all one)."""
    neighbours = {p.get("neighbour", "shared") for p in pairs}  # records before the option: shared
    if len(neighbours) > 1:
        raise SystemExit(f"the pairs ran beside neighbours of several kinds ({', '.join(sorted(neighbours))}): one "
                         "report, one kind")
    rank = {name: i for i, name in enumerate(all_parts)}
    pairs = sorted(pairs, key=lambda p: rank.get(p["part"], len(rank)))
    idle = sum(p["sides"]["idle"]["seconds"] for p in pairs)
    loaded = sum(p["sides"]["loaded"]["seconds"] for p in pairs)
    commits: dict = {}
    for pair in pairs:
        commits.setdefault(pair["commit"], []).append(pair["part"])
    return {"commits": [{"commit": commit, "parts": names} for commit, names in commits.items()],
            "neighbour": neighbours.pop() if neighbours else None, "pairs": pairs, "idle_s": idle, "loaded_s": loaded,
            "ratio": loaded / idle if idle else None, "missing": [n for n in all_parts
                                                                   if n not in {p["part"] for p in pairs}]}


def _hms(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _cores(side: dict) -> str:
    """The cores a side kept busy on average (its core-seconds over its wall time); — where it was not measured."""
    if side.get("part_core_s") is None or not side.get("wall_s"):
        return "—"
    return f"{side['part_core_s'] / side['wall_s']:.2f}"


_NEIGHBOUR_TEXT = {
    "shared": "The loop ran in the pairs' own session: with the kernel's autogroup on, it shared the part's scheduling "
              "group, and CPU time was shared task by task.",
    "apart": "The loop ran apart, in a session of its own like a program from another terminal: with the kernel's "
             "autogroup on, each session got half the machine."}


def _commits(commits: list[dict]) -> str:
    """Which commit's code each part ran: one for all, or each with its parts (and how much that weighs)."""
    name = {None: "code not known"}
    if len(commits) == 1:
        return f"the pairs ran {name.get(commits[0]['commit'], 'commit ' + str(commits[0]['commit'])[:7])}"
    return ("**the pairs did not all run one commit**, so the sum adds parts of different code: " + "; ".join(
        f"{', '.join(c['parts'])}: {name.get(c['commit'], str(c['commit'])[:7])}" for c in commits))


def render(summary: dict, machine: dict) -> str:
    lines = ["# The main job beside one busy process, part by part", "",
             f"Generated by `python -m bench.main_job_pairs report` on {machine.get('date_utc')}: "
             f"{machine.get('cpu_count')} CPUs; {_commits(summary['commits'])}. Each part ran "
             "idle and beside one busy Python loop, back to back from copies of one cache (bench/main_job_pairs.py "
             f"says how). {_NEIGHBOUR_TEXT.get(summary.get('neighbour'), '')}", "",
             "| part | idle | loaded | loaded / idle | cores the part kept busy, idle / loaded | "
             "idle side: other processes, core-s | busy loop s per chunk | idle started |",
             "|---|---|---|---|---|---|---|---|"]
    for pair in summary["pairs"]:
        idle, loaded = pair["sides"]["idle"], pair["sides"]["loaded"]
        chunk = loaded.get("busy_chunk_s")
        lines.append(f"| {pair['part']} | {_hms(idle['seconds'])} | {_hms(loaded['seconds'])} | "
                     f"{pair['ratio']:.2f}× | {_cores(idle)} / {_cores(loaded)} | {idle['others_core_s']:.0f} | "
                     f"{'—' if chunk is None else f'{chunk:.3f}'} | {idle['started']} |")
    if summary["pairs"]:
        lines.append(f"| **paired parts** | {_hms(summary['idle_s'])} | {_hms(summary['loaded_s'])} | "
                     f"**{summary['ratio']:.2f}×** | | | | |")
    lines.append("")
    for pair in summary["pairs"]:
        if pair.get("how"):  # how the pair as a whole differs from one `make report` (its starting cache)
            lines += [f"* {pair['part']}: {pair['how']}.", ""]
        for name, side in pair["sides"].items():
            if side.get("how"):  # a side measured before this tool ran it: how it was run instead
                lines += [f"* {pair['part']}, {name} side: {side['how']}.", ""]
    if summary["missing"]:
        lines.append(f"Not paired yet: {', '.join(summary['missing'])}. The ratio above covers the paired parts only.")
    else:
        lines.append("Every part of the main job is paired: the ratio above is the whole job's.")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.main_job_pairs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="time one part idle and loaded")
    run.add_argument("--repo", required=True, help="a checkout of the commit under test, with its .venv")
    run.add_argument("--part", required=True, help="zoo, or a notebook's name (e.g. 00_tour)")
    run.add_argument("--work", required=True, help="folder for the starting state and the pairs' records")
    run.add_argument("--loaded-first", action="store_true", help="run the loaded side first")
    run.add_argument("--neighbour", choices=("shared", "apart"), default="shared",
                     help="the busy loop in this script's session (the default) or in a session of its own")
    rep = sub.add_parser("report", help="the table of every pair under --work")
    rep.add_argument("--work", required=True)
    rep.add_argument("--repo", default=".", help="a checkout, for the list of the main job's parts")
    rep.add_argument("--out", default="reports/contention_main_job", help="writes <out>.json and <out>.md")
    back = sub.add_parser("restore", help="write a report's pair records back into --work")
    back.add_argument("--report", required=True, help="a report's JSON (e.g. reports/contention_main_job.json)")
    back.add_argument("--work", required=True)
    how = sub.add_parser("note", help="record how a pair was run where it differs from one make report")
    how.add_argument("--work", required=True)
    how.add_argument("--part", required=True)
    how.add_argument("--how", required=True, help="e.g. its starting cache, when not every earlier part's")
    args = parser.parse_args(argv)
    if args.command == "note":
        note(Path(args.work), args.part, args.how)
        print(f"noted how {args.part} was paired")
        return 0
    if args.command == "restore":
        written = restore(Path(args.report), Path(args.work))
        print(f"restored {', '.join(written) or 'nothing (every record was there)'} into {args.work}")
        return 0
    if args.command == "run":
        order = tuple(reversed(SIDES)) if args.loaded_first else SIDES
        pair = run_pair(Path(args.repo), args.part, Path(args.work), order=order, neighbour=args.neighbour)
        print(f"{args.part}: idle {pair['sides']['idle']['seconds']:.0f} s, loaded "
              f"{pair['sides']['loaded']['seconds']:.0f} s ({pair['ratio']:.2f}×)")
        return 0
    from .reporting import machine, write_pair

    pairs = [json.loads(p.read_text()) for p in sorted(Path(args.work).glob("pair-*.json"))]
    summary = summarise(pairs, parts(Path(args.repo)))
    info = machine()
    write_pair(args.out, {"machine": info, **summary}, render(summary, info))
    print(render(summary, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
