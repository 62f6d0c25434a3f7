"""Peer check of the baselines added beside BMM and ACE: each against a peer's implementation on the same inputs.

    python -m bench.peers.baselines            # ViT-B/32 shapes, 8 tasks (reports/peer_baselines.md)
    python -m bench.peers.baselines --small    # 2 blocks of width 64, for a quick check

* EMR-Merging against FusionBench 0.2.33's ``emr_merge``, and TALL masks against its TALL-mask function (both
  task-aware: every task's model compared).
* Consensus TA and Consensus TIES against FusionBench 0.2.33's port of the official TALL-mask function
  (``fusion_bench.method.tall_mask.utils.generate_task_masks``; its TIES for the TIES variant). FusionBench has
  no consensus step of its own (its algorithm class also passes θ₀ where θ_t belongs, which makes the masks nearly
  dense): the side script counts the masks as the official code does.
* Model Breadcrumbs (sum and TIES sign election), DELLA (``della`` and ``della_linear``, mergekit's global seed set
  per tensor to nbmerge's mask seed), SLERP (the base and the first expert), the Karcher mean (the experts alone:
  mergekit counts a given base as one more input) and Model Stock (per tensor and per row) against mergekit 0.1.5's
  in-memory API, tensor by tensor.
* CART and PCB have no peer that runs offline here (FusionBench 0.2.33 has neither; the official repositories are
  research scripts tied to their datasets, and CART's carries no licence): they are checked against a float64
  reference of each paper's steps on the whole flattened model, in ``tests/test_baselines.py``, and the report says so.

Inputs are the FusionBench check's (random task vectors with open_clip ViT-B/32 image-tower shapes, written once
and reused). Each peer runs in its own venv under ``--peer-dir``; every step resumes.
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
from nbmerge.engine.io import atomic_write_text, load_state_dict

from ..mergekit import MERGEKIT_VERSION, ensure_mergekit
from .fusionbench import FUSIONBENCH_VERSION, compare, ensure_peer_venv, make_inputs

HERE = Path(__file__).parent
SIDES = {"fusionbench": HERE / "fusionbench_side.py", "mergekit": HERE / "mergekit_side.py"}


def jobs() -> list[dict]:
    """Each job: the nbmerge call and the peer call that should give the same weights."""
    return [
        {"name": "consensus_ta", "nb": ("consensus", {"lam": 0.6, "k": 2, "base_merge": "ta", "scale": 1.0}),
         "peer": "fusionbench", "call": {"method": "consensus_ta", "params": {"lam": 0.6, "k": 2, "scale": 1.0}}},
        {"name": "consensus_ties", "nb": ("consensus", {"lam": 0.4, "k": 2, "base_merge": "ties", "scale": 1.0}),
         "peer": "fusionbench", "call": {"method": "consensus_ties", "params": {"lam": 0.4, "k": 2, "scale": 1.0}}},
        {"name": "tall", "nb": ("tall", {"lam": 0.6}), "peer": "fusionbench",
         "call": {"method": "tall", "params": {"lam": 0.6}}, "task_aware": True},
        {"name": "emr", "nb": ("emr", {}), "peer": "fusionbench", "call": {"method": "emr", "params": {}},
         "task_aware": True},
        {"name": "breadcrumbs", "nb": ("breadcrumbs", {"density": 0.9, "gamma": 0.01, "merge": "sum", "scale": 0.3}),
         "peer": "mergekit", "call": {"method": "breadcrumbs",
                                      "params": {"weight": 1.0, "density": 0.9, "gamma": 0.01, "lambda": 0.3}}},
        {"name": "breadcrumbs_ties", "nb": ("breadcrumbs", {"density": 0.8, "gamma": 0.05, "merge": "ties",
                                                            "scale": 0.5}),
         "peer": "mergekit", "call": {"method": "breadcrumbs_ties",
                                      "params": {"weight": 1.0, "density": 0.8, "gamma": 0.05, "lambda": 0.5}}},
        {"name": "della", "nb": ("della", {"density": 0.5, "epsilon": 0.15, "merge": "ties", "seed": 0}),
         "peer": "mergekit", "seeded": True,
         "call": {"method": "della", "params": {"weight": 1.0, "density": 0.5, "epsilon": 0.15, "lambda": 1.0}}},
        {"name": "della_linear", "nb": ("della", {"density": 0.6, "epsilon": 0.1, "merge": "sum", "seed": 0,
                                                  "scale": 0.3}),
         "peer": "mergekit", "seeded": True,
         "call": {"method": "della_linear", "params": {"weight": 1.0, "density": 0.6, "epsilon": 0.1,
                                                       "lambda": 0.3}}},
        {"name": "slerp", "nb": ("slerp", {"t": 0.3}), "peer": "mergekit", "experts": 1,
         "call": {"method": "slerp", "params": {"t": 0.3}, "experts": 1}},
        {"name": "karcher", "nb": ("karcher", {}), "peer": "mergekit",
         "call": {"method": "karcher", "params": {"max_iter": 10, "tol": 1e-5}, "with_base": False}},
        {"name": "model_stock", "nb": ("model_stock", {}), "peer": "mergekit",
         "call": {"method": "model_stock", "params": {}}},
        {"name": "model_stock_rows", "nb": ("model_stock", {"filter_wise": True}), "peer": "mergekit",
         "call": {"method": "model_stock", "params": {"filter_wise": True}}},
    ]


TOY_ONLY = [
    ("cart", "rank_ratio=0.12, prior=2.0 (and 0.5/1.5, 0.25/0.7; ρ ∈ {0, 1} and T = 1 identities)",
     "none runs here: not in FusionBench 0.2.33; the official repository has no licence"),
    ("pcb", "ratio ∈ {0.05, 0.2, 1.0}, λ = 1.2; 96 tasks and an all-zero task vector stay finite",
     "none runs here: not in FusionBench 0.2.33; the official code is a research script tied to its datasets"),
]


def seeds(job: dict, keys: list[str]) -> dict:
    """For a stochastic job, the per-tensor seed of nbmerge's masks, which the peer sets as torch's global seed
    before its call on that tensor (it then draws the same masks)."""
    if not job.get("seeded"):
        return {}
    from nbmerge.methods.della import tensor_seed

    return {"seeds": {k: tensor_seed(job["nb"][1].get("seed", 0), k) for k in keys}}


def entries_differing(ours: dict, theirs: dict) -> tuple[int, int]:
    differing = sum(int((ours[k] != theirs[k]).sum()) for k in ours if ours[k].is_floating_point())
    return differing, sum(v.numel() for v in ours.values() if v.is_floating_point())


def run(args) -> dict:
    torch.set_num_threads(args.threads)
    width, layers = (64, 2) if args.small else (768, 12)
    tag = hashlib.sha256(json.dumps([width, layers, args.tasks, args.seed]).encode()).hexdigest()[:10]
    work = Path(args.work_dir or Path(args.peer_dir) / f"work-{tag}")
    make_inputs(work, width, layers, args.tasks, args.seed)
    job_list = [j for j in jobs() if not args.only or j["name"] in args.only]
    # FusionBench's TALL-mask function and EMR hold every task's flattened model several times over (about 20 GB for
    # ViT-B/32 × 8): they run on the first --fb-blocks transformer blocks (both sides on the same keys; both methods
    # are elementwise, and their global steps, TIES's trim and EMR's rescalers, see the same subset on both sides)
    all_keys = list(load_state_dict(work / "base.safetensors"))
    subset = [k for k in all_keys if any(k.startswith(f"visual.transformer.resblocks.{i}.")
                                         for i in range(args.fb_blocks))] or all_keys
    pythons = {"fusionbench": ensure_peer_venv(Path(args.peer_dir)),
               "mergekit": ensure_mergekit(Path(args.peer_dir)) / "bin" / "python"}
    versions = {}
    for peer in ("fusionbench", "mergekit"):
        todo = [j for j in job_list if j["peer"] == peer and (args.rerun or not (
            work / peer / f"{j['name']}{'_t0' if j.get('task_aware') else ''}.safetensors").exists())]
        if todo:
            spec = {"threads": args.threads, "jobs": [dict(j["call"], name=j["name"], keys=subset if peer ==
                                                           "fusionbench" else None, **seeds(j, all_keys))
                                                      for j in todo]}
            spec_path = work / f"{peer}_baseline_jobs.json"
            spec_path.write_text(json.dumps(spec))
            subprocess.run([str(pythons[peer]), str(SIDES[peer]), str(work), str(spec_path)], check=True,
                           env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
        package = "fusion-bench" if peer == "fusionbench" else "mergekit"
        versions[peer] = subprocess.run([str(pythons[peer]), "-c", "import torch, importlib.metadata as m; "
                                         f"print(torch.__version__, m.version('{package}'))"],
                                        capture_output=True, text=True, check=True).stdout.split()

    base = load_state_dict(work / "base.safetensors")
    experts = [load_state_dict(p) for p in sorted((work / "experts").glob("*.safetensors"))]
    rows = []
    for job in job_list:
        method, params = job["nb"]
        keys = subset if job["peer"] == "fusionbench" else all_keys
        b, exps = {k: base[k] for k in keys}, [{k: e[k] for k in keys} for e in experts[:job.get("experts")]]
        start = time.perf_counter()
        ours = nbmerge.merge(method, b, exps, params)
        nb_time = time.perf_counter() - start
        peer_out = work / job["peer"]
        peer_time = json.loads((peer_out / "timings.json").read_text())[job["name"]]
        if job.get("task_aware"):  # one model per task: the worst task is reported
            pairs = [(model, load_state_dict(peer_out / f"{job['name']}_t{t}.safetensors"))
                     for t, model in enumerate(ours)]
        else:
            pairs = [(ours, load_state_dict(peer_out / f"{job['name']}.safetensors"))]
        compared = [compare(b, mine, theirs) for mine, theirs in pairs]
        worst = max(compared, key=lambda c: c["max_rel_diff"])
        worst["max_abs_diff"] = max(c["max_abs_diff"] for c in compared)
        counts = [entries_differing(mine, theirs) for mine, theirs in pairs]
        differing, total = sum(c[0] for c in counts), sum(c[1] for c in counts)
        row = {"job": job["name"], "method": method, "params": params, "peer": job["peer"],
               "keys": "all" if len(keys) == len(all_keys) else f"{len(keys)} keys (the first {args.fb_blocks} "
               "blocks)", "peer_call": job["call"], "nbmerge_s": nb_time, "peer_s": peer_time, "speedup": peer_time / nb_time,
               "entries_differing": differing, "entries": total, "task_aware": bool(job.get("task_aware")),
               **worst}
        if not job.get("task_aware") and row["max_abs_diff"] > 0:
            # which side carries the rounding? the worst tensor again in float64 (these kernels are per tensor)
            key = row["worst_key"]
            exact = nbmerge.merge(method, {key: b[key].double()}, [{key: e[key].double()} for e in exps],
                                  params)[key]
            update = (exact - base[key].double()).abs().max().item() or 1.0
            row.update(float64_key=key, nbmerge_vs_float64=(ours[key].double() - exact).abs().max().item() / update,
                       peer_vs_float64=(pairs[0][1][key].double() - exact).abs().max().item() / update)
        rows.append(row)
        print(f"{job['name']:>18}: max rel diff {row['max_rel_diff']:.2e} ({differing} of {total} entries differ)  "
              f"nbmerge {nb_time:7.2f}s  {job['peer']} {peer_time:7.2f}s  ({row['speedup']:.2f}x)", flush=True)
    return {
        "config": {"width": width, "layers": layers, "tasks": args.tasks, "seed": args.seed, "threads": args.threads},
        "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__,
                     "fusionbench": versions.get("fusionbench"), "mergekit": versions.get("mergekit"),
                     "python": platform.python_version(), "machine": platform.machine()},
        "expected_versions": {"fusionbench": FUSIONBENCH_VERSION, "mergekit": MERGEKIT_VERSION},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "rows": rows,
        "toy_only": [{"method": m, "checked": what, "peer": why} for m, what, why in TOY_ONLY],
    }


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_baselines.json", json.dumps(result, indent=1))
    c, v = result["config"], result["versions"]
    lines = [
        "# The added baselines against their peers: same inputs, side by side",
        "",
        f"Generated by `make peer-baselines` (`python -m bench.peers.baselines`) on {result['date']}. Inputs: random "
        f"task vectors with open_clip ViT-B/32 image-tower shapes (width {c['width']}, {c['layers']} blocks), "
        f"{c['tasks']} tasks, seed {c['seed']} (the FusionBench check's). Every side on the CPU with {c['threads']} "
        f"threads: nbmerge {v['nbmerge']} on torch {v['torch']}; FusionBench {v['fusionbench'][1]} on torch "
        f"{v['fusionbench'][0]} and mergekit {v['mergekit'][1]} on torch {v['mergekit'][0]}, each in its own venv. "
        f"Python {v['python']}, {v['machine']}.",
        "",
        "Wall time: the merge from in-memory tensors on each side (mergekit: `merge_tensors` per tensor, as its "
        "executor calls it), not file loading. Relative difference: max over tensors of max|θ_nbmerge − θ_peer| / "
        "max|θ_peer − θ₀| (a task-aware method: over every task's model). A peer's outputs and time come from the "
        "run that first produced them (reused until `--rerun`), nbmerge's from this run. The entry count says how "
        "many weights "
        "differ at all. Model Stock's update is tiny on random task vectors (their cosines are near 0, so t is "
        "too), which makes one float32 rounding of θ a large fraction of it.",
        "",
        "Where the two differ, the worst tensor is merged again by nbmerge in float64 and both sides are measured "
        "against it (same relative scale): the last two columns say which side carries the float32 rounding.",
        "",
        "| method | nbmerge parameters | peer (call) | tensors | max abs diff | max rel diff | entries differing "
        "| nbmerge s | peer s | speed-up | nbmerge vs fp64 | peer vs fp64 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        params = ", ".join(f"{k}={val}" for k, val in r["params"].items()) or "defaults"
        call = f"{r['peer']} `{r['peer_call']['method']}` " + ", ".join(
            f"{k}={val}" for k, val in r["peer_call"]["params"].items())
        lines.append(f"| {r['method']} ({r['job']}) | {params} | {call} | {r['keys']} | {r['max_abs_diff']:.2e} | "
                     f"{r['max_rel_diff']:.2e} | {r['entries_differing']:,} of {r['entries']:,} | {r['nbmerge_s']:.2f} "
                     f"| {r['peer_s']:.2f} | {r['speedup']:.2f}× | "
                     + (f"{r['nbmerge_vs_float64']:.2e} | {r['peer_vs_float64']:.2e} |" if "nbmerge_vs_float64" in r
                        else "— | — |"))
    lines += ["", "Checked against a float64 reference of the paper's steps (no runnable peer):", "",
              "| method | what the reference checks (tests/test_baselines.py) | peer |", "|---|---|---|"]
    for t in result["toy_only"]:
        lines.append(f"| {t['method']} | {t['checked']} | {t['peer']} |")
    lines += [
        "",
        "Where nbmerge's defaults differ from the peers' (docs/methods.md): Consensus uses one λ for every task "
        "(the official code picks λ_t per task on validation from 0.2–0.6), α = 0.3 by default; Breadcrumbs "
        "defaults to density 0.9, γ = 0.01 (mergekit's function default, density 1, is a no-op); Model Stock's α "
        "is an extra outer coefficient (1 = mergekit); DELLA defaults to density 0.5 (mergekit's 1 keeps every "
        "entry) and draws its masks from one generator per tensor, which the check hands to mergekit as torch's "
        "global seed before each tensor's call; SLERP merges the base and the first expert; the Karcher mean is "
        "of the experts alone (mergekit counts a given base as one more input, so its call here names none); "
        "SLERP and Karcher rebuild each expert as θ₀ + τ, so they agree to float32 rounding, not bit for bit.",
    ]
    atomic_write_text(out_dir / "peer_baselines.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="2 blocks of width 64 instead of ViT-B/32")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="job names to run")
    parser.add_argument("--fb-blocks", type=int, default=3,
                        help="the FusionBench jobs run on the first N transformer blocks (memory)")
    parser.add_argument("--rerun", action="store_true", help="recompute the peers' outputs")
    parser.add_argument("--peer-dir", default=os.environ.get("NBMERGE_PEER_DIR",
                                                             str(Path.home() / ".cache" / "nbmerge" / "peers")))
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--out", default="reports", help="folder for peer_baselines.{md,json}")
    args = parser.parse_args(argv)
    write_report(run(args), Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_baselines.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
