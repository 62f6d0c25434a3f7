"""Peer check: nbmerge against FusionBench 0.2.33 on the same inputs, side by side in one run.

    python -m bench.peers.fusionbench            # ViT-B/32 shapes, 8 tasks (the report in reports/)
    python -m bench.peers.fusionbench --small    # a 2-block width-64 model, for a quick check

FusionBench is installed into its own venv (never a project dependency) under ``--peer-dir``; inputs are
random task vectors with ViT-B/32 image-tower shapes, written once as safetensors and reused. Each method runs
on both sides with the same threads; the report gives the maximum difference of the merged weights and both
wall times. Every step resumes: an existing venv, input set or FusionBench output is reused.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

import nbmerge
from nbmerge.engine.io import atomic_write_text, load_state_dict, save_state_dict
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model
from nbmerge.engine.walker import WalkOptions

from . import install_pinned_venv

FUSIONBENCH_VERSION = "0.2.33"
PEER_TORCH = "2.13.0"  # the CPU build on local disk; fusion-bench resolves next to it (docs/environment.md)
SIDE_SCRIPT = Path(__file__).with_name("fusionbench_side.py")


def ensure_peer_venv(peer_dir: Path) -> Path:
    venv = install_pinned_venv(peer_dir / f"fusionbench-{FUSIONBENCH_VERSION}", PEER_TORCH,
                               f"fusion-bench=={FUSIONBENCH_VERSION}", "about 2 minutes, 1.8 GB")
    return venv / "bin" / "python"


def make_inputs(work: Path, width: int, layers: int, tasks: int, seed: int) -> None:
    marker = work / ".complete"
    if marker.exists():
        return
    work.mkdir(parents=True, exist_ok=True)
    print(f"writing inputs to {work}", flush=True)
    shapes = openclip_vit_shapes(width=width, layers=layers, patch=32, grid=7, output_dim=512 if width == 768
                                 else width // 2)
    base = random_model(shapes, seed=seed, scale=0.02)
    save_state_dict(base, work / "base.safetensors")
    experts = random_experts(base, tasks, seed=seed + 1, scale=0.002)
    for t, expert in enumerate(experts):
        save_state_dict(expert, work / "experts" / f"task{t:02d}.safetensors")
    del experts
    linear = [k for k in shapes if k.endswith(("in_proj_weight", "out_proj.weight", "c_fc.weight",
                                               "c_proj.weight"))]
    for t in range(tasks):
        generator = torch.Generator().manual_seed(seed * 7919 + t)
        grams = {}
        for key in linear:
            d_in = shapes[key][1]
            # A mean Gram XᵀX/n of correlated inputs: a random low-rank part plus a diagonal floor.
            factor = torch.randn(d_in, 64, generator=generator)
            grams[key] = factor @ factor.T / 64 + 0.1 * torch.eye(d_in)
        save_state_dict(grams, work / "grams" / f"task{t:02d}.safetensors")
    marker.write_text("ok\n")


def jobs(iters: int, wudi_keys: list[str]) -> list[dict]:
    """Each job: the nbmerge call and the FusionBench call that should produce the same weights."""
    return [
        {"name": "task_arithmetic", "nb": ("task_arithmetic", {"scale": 0.3}, {}),
         "fb": {"method": "task_arithmetic", "params": {"scale": 0.3}}},
        {"name": "ties_mean", "nb": ("ties", {"density": 0.2, "merge": "mean", "scale": 1.0}, {}),
         "fb": {"method": "ties", "params": {"reset_thresh": 20, "merge": "mean", "scale": 1.0}}},
        {"name": "ties_sum", "nb": ("ties", {"density": 0.2, "merge": "sum", "scale": 0.3}, {}),
         "fb": {"method": "ties", "params": {"reset_thresh": 20, "merge": "sum", "scale": 0.3}}},
        {"name": "tsv", "nb": ("tsv", {"scale": 1.0}, {}), "fb": {"method": "tsv", "params": {"scale": 1.0}}},
        {"name": "iso_c", "nb": ("iso_c", {"scale": 1.0}, {}), "fb": {"method": "iso_c", "params": {"scale": 1.0}}},
        {"name": "iso_cts", "nb": ("iso_cts", {"common_space_fraction": 0.8, "scale": 1.0}, {}),
         "fb": {"method": "iso_cts", "params": {"common_space_fraction": 0.8, "scale": 1.0}}},
        {"name": "regmean", "nb": ("regmean", {"offdiag_scale": 0.95}, {}),
         "fb": {"method": "regmean", "params": {"offdiag_scale": 0.95}}},
        # FusionBench's WUDI: every 2-D tensor, other tensors averaged (nbmerge's FusionBench-compatible walk).
        {"name": "wudi", "nb": ("wudi", {"iters": iters}, {"matrix_rule": "ndim2", "fallback": "mean"}),
         "fb": {"method": "wudi", "params": {"iters": iters}}, "keys": wudi_keys},
    ]


def compare(base: dict, ours: dict, theirs: dict) -> dict:
    worst_abs, worst_rel, worst_key = 0.0, 0.0, None
    for key in ours:
        a, b = ours[key].double(), theirs[key].double()
        diff = (a - b).abs().max().item()
        update = (b - base[key].double()).abs().max().item()
        rel = diff / update if update > 0 else (0.0 if diff == 0 else float("inf"))
        worst_abs = max(worst_abs, diff)
        if rel >= worst_rel:
            worst_rel, worst_key = rel, key
    return {"max_abs_diff": worst_abs, "max_rel_diff": worst_rel, "worst_key": worst_key}


ELEMENTWISE = {"task_arithmetic", "ties"}


def float64_check(method, params, walk_kw, key, base, experts, grams, ours, theirs) -> dict:
    """Which side is nearer the exact answer? Recompute the worst tensor in float64 (its kernel is per tensor)."""
    sub = lambda sd: {key: sd[key].double()}  # noqa: E731
    kwargs = {"grams": [{key: g[key].double()} if key in g else {} for g in grams]} if method == "regmean" else {}
    exact = nbmerge.merge(method, sub(base), [sub(e) for e in experts], params, walk=WalkOptions(**walk_kw), **kwargs)[key]
    update = (exact - base[key].double()).abs().max().item()
    return {"float64_key": key,
            "nbmerge_vs_float64": (ours[key].double() - exact).abs().max().item() / update,
            "fusionbench_vs_float64": (theirs[key].double() - exact).abs().max().item() / update}


def run(args) -> dict:
    torch.set_num_threads(args.threads)
    width, layers = (64, 2) if args.small else (768, 12)
    tag = hashlib.sha256(json.dumps([width, layers, args.tasks, args.seed]).encode()).hexdigest()[:10]
    work = Path(args.work_dir or Path(args.peer_dir) / f"work-{tag}")
    make_inputs(work, width, layers, args.tasks, args.seed)
    wudi_keys = [k for k in load_state_dict(work / "base.safetensors")
                 if k.startswith(tuple(f"visual.transformer.resblocks.{i}." for i in range(args.wudi_blocks)))]
    job_list = [j for j in jobs(args.wudi_iters, wudi_keys) if not args.only or j["name"] in args.only]

    python = ensure_peer_venv(Path(args.peer_dir))
    fb_out = work / "fusionbench"
    todo = [j for j in job_list if args.rerun or not (fb_out / f"{j['name']}.safetensors").exists()]
    if todo:
        spec = {"threads": args.threads, "jobs": [dict(j["fb"], name=j["name"], keys=j.get("keys"))
                                                  for j in todo]}
        spec_path = work / "fusionbench_jobs.json"
        spec_path.write_text(json.dumps(spec))
        subprocess.run([str(python), str(SIDE_SCRIPT), str(work), str(spec_path)], check=True,
                       env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    fb_times = json.loads((fb_out / "timings.json").read_text())
    fb_version = subprocess.run([str(python), "-c", "import torch, importlib.metadata as m; "
                                 "print(torch.__version__, m.version('fusion-bench'))"],
                                capture_output=True, text=True, check=True).stdout.split()

    base = load_state_dict(work / "base.safetensors")
    experts = [load_state_dict(p) for p in sorted((work / "experts").glob("*.safetensors"))]
    gram_files = sorted((work / "grams").glob("*.safetensors"))
    grams = [load_state_dict(p) for p in gram_files]
    rows = []
    for job in job_list:
        method, params, walk_kw = job["nb"]
        keys = job.get("keys") or list(base)
        b = {k: base[k] for k in keys}
        exps = [{k: e[k] for k in keys} for e in experts]
        kwargs = {"grams": grams} if method == "regmean" else {}
        start = time.perf_counter()
        ours = nbmerge.merge(method, b, exps, params, walk=WalkOptions(**walk_kw), **kwargs)
        nb_time = time.perf_counter() - start
        theirs = load_state_dict(fb_out / f"{job['name']}.safetensors")
        row = {"job": job["name"], "method": method, "params": params, "walk": walk_kw,
               "keys": "all" if keys is None or len(keys) == len(base) else f"{len(keys)} keys (first "
               f"{args.wudi_blocks} block(s))", "nbmerge_s": nb_time, "fusionbench_s": fb_times[job["name"]],
               **compare(b, ours, theirs)}
        row["speedup"] = row["fusionbench_s"] / row["nbmerge_s"]
        if method not in ELEMENTWISE and row["max_abs_diff"] > 0:
            row.update(float64_check(method, params, walk_kw, row["worst_key"], b, exps, grams, ours, theirs))
        rows.append(row)
        print(f"{job['name']:>16}: max rel diff {row['max_rel_diff']:.2e}  nbmerge {nb_time:7.2f}s  "
              f"fusionbench {row['fusionbench_s']:7.2f}s  ({row['speedup']:.2f}x)", flush=True)
    return {
        "config": {"width": width, "layers": layers, "tasks": args.tasks, "seed": args.seed,
                   "threads": args.threads, "wudi_iters": args.wudi_iters, "wudi_blocks": args.wudi_blocks},
        "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__, "peer_torch": fb_version[0],
                     "fusion_bench": fb_version[1], "python": platform.python_version(),
                     "machine": platform.machine(), "cpu_threads": args.threads},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "rows": rows,
    }


DIFFERENCES = """\
## Where nbmerge deliberately differs from FusionBench (each method's defaults: docs/methods.md)

| method | nbmerge default | FusionBench | FusionBench-compatible nbmerge setting |
|---|---|---|---|
| TIES | dis-mean, α = 1 (TIES paper / TSV protocol) | dis-sum, α = 0.3 | `--param merge=sum --param scale=0.3` |
| WUDI | official WUDI: only linear weights (`linear_only`), other tensors stay at θ₀, 300 Adam steps | every 2-D tensor, other tensors averaged, 400 steps in its config | `--matrix-rule ndim2 --fallback mean --param iters=400` |
| WUDI (speed) | gradient 2(τA − B) from precomputed A, B: one d_out·d_in² product per step | autograd through T products of d_out²·d_in per step | same iterates up to rounding |
| RegMean | a Gram applies to any 2-D weight under its own key, including open_clip's fused `attn.in_proj_weight`; Cholesky solve | Grams keyed by module name, so `in_proj_weight` cannot take one and is averaged; explicit `torch.inverse` | for the check, the FusionBench side sees `in_proj_weight` renamed to `in_proj.weight` |
| RegMean | `offdiag_scale` default 0.95 (FusionBench's CLIP value) | 0.95 for CLIP | same |
| DARE | masks from per-(seed, key, task) generators: independent of visit order and device | global RNG in dict order | not bit-compatible by design (stochastic; compare over seeds) |
| all | bf16/fp16 computed in fp32 and written back in the base's dtype | TSV casts to fp32; ISO raises on bf16 (CPU); WUDI runs Adam in bf16 | — |
"""


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_fusionbench.json", json.dumps(result, indent=1))
    c, v = result["config"], result["versions"]
    lines = [
        "# nbmerge vs FusionBench: same inputs, side by side",
        "",
        f"Generated by `make peer-fusionbench` (`python -m bench.peers.fusionbench`) on {result['date']}.",
        f"Inputs: random task vectors with open_clip ViT-B/32 image-tower shapes (width {c['width']}, "
        f"{c['layers']} blocks, fused `in_proj` {3 * c['width']}×{c['width']}, `c_fc` {4 * c['width']}×{c['width']}, "
        f"`c_proj` {c['width']}×{4 * c['width']}, biases, LayerNorms, conv1, class/positional embedding, proj), "
        f"{c['tasks']} tasks, seed {c['seed']}; RegMean Grams are random SPD matrices, one file per expert.",
        f"Both sides on the CPU with {c['threads']} threads. nbmerge {v['nbmerge']} on torch {v['torch']}; "
        f"FusionBench {v['fusion_bench']} on torch {v['peer_torch']} in its own venv. Python {v['python']}, {v['machine']}.",
        f"WUDI: {c['wudi_iters']} Adam steps on the first {c['wudi_blocks']} block(s) only — FusionBench's autograd "
        "loop costs about T·d_out²·d_in per step and tensor, hours for the whole model at 300 steps on 2 cores.",
        "",
        "Wall time: nbmerge from in-memory experts (task vectors, merge, θ₀ + α·τ); FusionBench the same "
        "(`state_dict_sub`, the merge function, `state_dict_add`), not counting file loading. Relative difference: "
        "max over tensors of max|θ_nbmerge − θ_FusionBench| / max|θ_FusionBench − θ₀| (relative to the merged update).",
        "",
        "Where the two differ, the worst tensor is recomputed by nbmerge in float64 and both sides are measured "
        "against it (same relative scale): the last two columns say which side carries the float32 round-off.",
        "",
        "| method | parameters | max abs diff | max rel diff | worst tensor | nbmerge s | FusionBench s | speed-up "
        "| nbmerge vs fp64 | FusionBench vs fp64 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        params = ", ".join(f"{k}={val}" for k, val in {**r["params"], **r["walk"]}.items())
        exact = (f"{r['nbmerge_vs_float64']:.2e} | {r['fusionbench_vs_float64']:.2e}" if "nbmerge_vs_float64" in r
                 else "— | —")
        lines.append(f"| {r['method']} ({r['job']}) | {params} | {r['max_abs_diff']:.2e} | {r['max_rel_diff']:.2e} | "
                     f"`{r['worst_key']}` | {r['nbmerge_s']:.2f} | {r['fusionbench_s']:.2f} | {r['speedup']:.2f}× "
                     f"| {exact} |")
    lines += ["", DIFFERENCES]
    atomic_write_text(out_dir / "peer_fusionbench.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="2 blocks of width 64 instead of ViT-B/32")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--wudi-iters", type=int, default=10)
    parser.add_argument("--wudi-blocks", type=int, default=1)
    parser.add_argument("--only", nargs="*", help="job names to run")
    parser.add_argument("--rerun", action="store_true", help="recompute FusionBench outputs")
    parser.add_argument("--peer-dir", default=os.environ.get("NBMERGE_PEER_DIR",
                                                             str(Path.home() / ".cache" / "nbmerge" / "peers")))
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--out", default="reports", help="folder for peer_fusionbench.{md,json}")
    args = parser.parse_args(argv)
    result = run(args)
    write_report(result, Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_fusionbench.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
