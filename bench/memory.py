"""Peak memory of merging 8 and 20 ViT-B/32-shaped experts from safetensors files with the lazy walker.

    OMP_NUM_THREADS=1 python -m bench.memory --out reports/memory

Writes a random open_clip ViT-B/32 image tower and 20 experts (float32 safetensors, ~351 MB each, ~7 GB in
all) to a scratch folder (``--workdir``, default a temp dir under /tmp; deleted afterwards), then merges the
first 8 and all 20 with each method in a fresh subprocess, so that one merge's peak is not another's. The
child reads its own peak resident set (``VmHWM`` from /proc/self/status) at the end, and a sampling thread
records the peaks of its anonymous (``RssAnon``: tensors) and file-backed (``RssFile``: mapped safetensors
pages, which the kernel can drop at any time) parts. The merge is ``nbmerge.engine.merging`` (paths in, the merged
state dict out, kept in memory as a notebook would): the claim under test is peak ≪ T × model size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional, Sequence

import torch


from .gpu import QUICK_TOWERS, TOWERS, vit_shapes, write_experts
from .reporting import machine, write_pair

METHODS = ("average", "task_arithmetic", "ties", "tsv", "iso_cts")
TASKS = (8, 20)
#: a method whose peak exceeds this fraction of all experts' bytes is reported as not streaming
NOT_MUCH_SMALLER = 0.5


# -- the child: one merge in a fresh process ---------------------------------------------------------------------

def proc_status() -> dict[str, int]:
    """The kB fields of /proc/self/status (VmRSS, VmHWM, RssAnon, RssFile, ...) in bytes."""
    out = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            parts = value.split()
            if len(parts) == 2 and parts[1] == "kB":
                out[name] = int(parts[0]) * 1024
    return out


class Sampler(threading.Thread):
    """Peaks of RssAnon and RssFile, sampled every ``interval`` seconds (the kernel keeps only VmHWM's)."""

    def __init__(self, interval: float = 0.01):
        super().__init__(daemon=True)
        self.interval, self.peaks, self._halt = interval, {"RssAnon": 0, "RssFile": 0}, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)

    def sample(self) -> None:
        status = proc_status()
        for name in self.peaks:
            self.peaks[name] = max(self.peaks[name], status.get(name, 0))

    def stop(self) -> dict[str, int]:
        self._halt.set()
        self.join()
        self.sample()
        return self.peaks


def child(spec: dict) -> dict:
    """Merge ``spec['experts']`` into ``spec['base']`` with ``spec['method']``; time and memory of the merge."""
    from nbmerge.engine.merging import merge

    baseline = proc_status()
    sampler = Sampler()
    sampler.start()
    start = time.perf_counter()
    merged = merge(spec["method"], spec["base"], spec["experts"])
    seconds = time.perf_counter() - start
    peaks = sampler.stop()
    status = proc_status()
    return {"seconds": round(seconds, 2), "baseline_rss": baseline["VmRSS"], "baseline_rss_anon": baseline["RssAnon"],
            "baseline_rss_file": baseline["RssFile"], "peak_rss": status["VmHWM"],
            "peak_rss_anon_sampled": peaks["RssAnon"], "peak_rss_file_sampled": peaks["RssFile"],
            "end_rss": status["VmRSS"], "merged_bytes": sum(t.numel() * t.element_size() for t in merged.values()),
            "torch_threads": torch.get_num_threads()}


def run_child(method: str, base: Path, experts: Sequence[Path]) -> dict:
    spec = {"method": method, "base": str(base), "experts": [str(p) for p in experts]}
    result = subprocess.run([sys.executable, "-m", "bench.memory", "--child", json.dumps(spec)],
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    if result.returncode != 0:
        raise RuntimeError(f"merge {method} of {len(experts)} experts failed in its subprocess "
                           f"(status {result.returncode}):\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


# -- the parent ---------------------------------------------------------------------------------------------------

def run_memory(out: str | os.PathLike, *, methods: Sequence[str] = METHODS, tasks: Sequence[int] = TASKS,
               quick: bool = False, workdir: Optional[str | os.PathLike] = None, seed: int = 0,
               command: str = "") -> dict:
    """Write the experts, run every (tasks, method) merge in its own subprocess, write ``<out>.json``/``.md``."""
    tower = (QUICK_TOWERS if quick else TOWERS)["b32"]
    shapes, shapes_from = vit_shapes(tower)
    parameters = sum(int(torch.Size(s).numel()) for s in shapes.values())
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="nbmerge-memory-") if own else workdir)
    root.mkdir(parents=True, exist_ok=True)
    needed = (max(tasks) + 1) * parameters * 4
    free = shutil.disk_usage(root).free
    if free < 1.2 * needed:
        raise OSError(f"{root}: {free / 1e9:.1f} GB free, the experts need {needed / 1e9:.1f} GB (+20%)")
    report = {"command": command, "machine": machine(), "model": {"tower": tower, "shapes_from": shapes_from,
              "parameters": parameters, "tensors": len(shapes)}, "runs": []}
    try:
        files = write_experts(root / "experts", shapes, max(tasks), torch.float32, seed=seed, device="cpu")
        report["model"].update(expert_bytes=files.expert_bytes, base_bytes=files.base.stat().st_size,
                               write_s=round(files.seconds, 1))
        for t in tasks:
            for method in methods:
                row = {"method": method, "tasks": t, "all_experts_bytes": t * files.expert_bytes,
                       **run_child(method, files.base, files.experts[:t])}
                row["peak_over_all_experts"] = row["peak_rss"] / row["all_experts_bytes"]
                row["peak_over_one_expert"] = row["peak_rss"] / files.expert_bytes
                report["runs"].append(row)
                write_report(report, out)
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)
        else:
            shutil.rmtree(root / "experts", ignore_errors=True)
    write_report(report, out)
    return report


def _mb(value: int) -> str:
    return f"{value / 1e6:,.0f}"


def render_markdown(report: dict) -> str:
    m, model = report["machine"], report["model"]
    lines = [
        "# Peak memory of merging ViT-B/32-shaped experts from safetensors files",
        "",
        f"Generated by `{report.get('command') or 'python -m bench.memory'}` on {m['date_utc']} on "
        f"{m['host']} ({m['platform']}, {m['cpu_count']} CPUs"
        + (f", {m['mem_total'] / 2**30:.1f} GiB RAM" if "mem_total" in m else "")
        + f", OMP_NUM_THREADS={m['omp_num_threads']}); torch {m['torch']}, safetensors {m.get('safetensors', '?')}, "
        f"nbmerge {m['nbmerge']}, Python {m['python']}.",
        "",
        f"Model: open_clip image tower `{json.dumps(model['tower'])}` (shapes from {model['shapes_from']}), "
        f"{model['parameters'] / 1e6:.1f} M parameters in {model['tensors']} tensors; one float32 expert file is "
        f"{_mb(model['expert_bytes'])} MB. Experts θ_t = θ₀ + random task vector, written once "
        f"({model.get('write_s', '?')} s) and read lazily (`SafetensorsSource`) by `nbmerge.merge(method, base_path, "
        "expert_paths)` on the CPU with default parameters; the merged state dict (one model) is kept in memory. "
        "Each merge runs in a fresh Python process; *baseline* is its resident set after importing torch and "
        "nbmerge, *peak* its VmHWM at the end (anonymous + file-backed pages), *anon*/*file* the sampled "
        "(10 ms) peaks of RssAnon and RssFile.",
        "",
        "| tasks | method | all experts on disk (MB) | peak RSS (MB) | peak / all experts | peak / one expert | "
        "baseline (MB) | peak − baseline (MB) | peak anon (MB) | peak file-backed (MB) | merged model (MB) | "
        "time (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        lines.append(f"| {r['tasks']} | {r['method']} | {_mb(r['all_experts_bytes'])} | {_mb(r['peak_rss'])} | "
                     f"{r['peak_over_all_experts']:.2f} | {r['peak_over_one_expert']:.1f} | "
                     f"{_mb(r['baseline_rss'])} | {_mb(r['peak_rss'] - r['baseline_rss'])} | "
                     f"{_mb(r['peak_rss_anon_sampled'])} | "
                     f"{_mb(r['peak_rss_file_sampled'])} | {_mb(r['merged_bytes'])} | {r['seconds']} |")
    flagged = [r for r in report["runs"] if r["peak_over_all_experts"] > NOT_MUCH_SMALLER]
    lines += ["", "## Findings", ""]
    if flagged:
        lines.append(f"* Peak RSS is **not** much smaller than all experts together (> {NOT_MUCH_SMALLER:.0%}) for: "
                     + ", ".join(f"{r['method']} ×{r['tasks']} ({r['peak_over_all_experts']:.2f})" for r in flagged)
                     + ".")
    else:
        lines.append(f"* Every merge peaks below {NOT_MUCH_SMALLER:.0%} of the experts' total size.")
    lines += [f"* {note}" for note in findings(report)]
    return "\n".join(lines) + "\n"


def findings(report: dict) -> list[str]:
    """Where the peak comes from: anonymous memory (tensors) against file-backed pages (the mapped experts)."""
    runs = report["runs"]
    if not runs:
        return []
    model = report["model"]
    by_tasks = {}
    for r in runs:
        growth = r["peak_rss_anon_sampled"] - r["baseline_rss_anon"]
        if growth >= by_tasks.get(r["tasks"], (-1, None))[0]:
            by_tasks[r["tasks"]] = (growth, r["method"])
    notes = ["Anonymous memory (the tensors nbmerge allocates, the merged model included) grows by at most "
             + ", ".join(f"{_mb(g)} MB with {t} experts ({m}, {g / model['expert_bytes']:.1f} × one expert)"
                         for t, (g, m) in sorted(by_tasks.items()))
             + ". The walker holds one tensor of each expert at a time (TIES' global top-k thresholds too: a "
             "radix selection over the tensors, with no model-sized buffer), and the merged model stays in memory."]
    mapped = [r for r in runs if r["peak_rss_file_sampled"] - r["baseline_rss_file"] > NOT_MUCH_SMALLER
              * r["all_experts_bytes"]]
    if mapped:
        worst = max(mapped, key=lambda r: r["peak_rss_file_sampled"] - r["baseline_rss_file"])
        notes.append(
            f"The rest is file-backed: up to {_mb(worst['peak_rss_file_sampled'] - worst['baseline_rss_file'])} MB "
            f"of mapped checkpoint pages ({worst['method']} ×{worst['tasks']}; its experts plus the base are "
            f"{_mb(worst['all_experts_bytes'] + model['base_bytes'])} MB on disk). `SafetensorsSource` "
            "(nbmerge/engine/io.py) opens each file with `safetensors.safe_open`, which memory-maps it, and keeps the "
            "handle for the whole merge (`ModelView` holds every expert's source); each `get_tensor` copies out of "
            "the map, and the pages it touched stay mapped, so counted in RSS, until the handle is closed: after "
            "one pass over the model, every expert. They are clean page-cache pages that the kernel can reclaim "
            "under memory pressure, so RAM need not hold them, but RSS-based accounting (this VmHWM, `ps`, job "
            "schedulers that limit RSS) sees ~T × model size. Reading tensors with plain file reads, or dropping "
            "each mapping after use, would remove them.")
    return notes


def write_report(report: dict, out: str | os.PathLike) -> None:
    write_pair(out, report, render_markdown(report))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports/memory", help="writes <out>.json and <out>.md")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--tasks", default=",".join(map(str, TASKS)))
    parser.add_argument("--quick", action="store_true", help="toy width with the same layout (tests)")
    parser.add_argument("--workdir", default=None, help="scratch folder for the experts (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    report = run_memory(args.out, methods=[m for m in args.methods.split(",") if m],
                        tasks=[int(t) for t in args.tasks.split(",") if t], quick=args.quick, workdir=args.workdir,
                        seed=args.seed,
                        command="python -m bench.memory " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(render_markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
