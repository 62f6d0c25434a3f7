"""Peer check: nbmerge's ``ace`` against the official ACE-Merging code on the same inputs, side by side.

    python -m bench.peers.ace_official --ace-repo /tmp/ace-official     # the report in reports/

``--ace-repo`` is a local checkout or export of unravel-xu/ACE-Merging (it has no licence: it is read and run from
outside this repository, never copied in). Its ``src/merge/strategy.py`` is imported by file path in a separate
process (``ace_official_side.py``, which imports nothing from nbmerge) run by ``--python`` — any interpreter with
torch, numpy and safetensors; the default is this one.

Inputs: random open_clip-layout ViTs (``nbmerge.testing``; fused ``in_proj``, positional embedding, ``proj``, plus a
2-D ``text_projection`` with a non-zero task vector so that the reference's exclusion is exercised), 8 tasks, in two
settings: *homogeneous* (``random_experts``: similar norms, the flag never fires) and *heterogeneous* (task t's
vectors scaled by 10^(−1 … 1): squared norms over four decades, the flag fires on every matrix). Each setting runs
with ε = 1e-2 (code default) and 1e-5 (paper, ViT), in float32 (as the official code runs) and float64. The merged
task vectors τ_M are compared tensor by tensor: max|τ_nbmerge − τ_official| / max|τ_official|. Both are also
measured against nbmerge's kernel run in float64 on the same float32 task vectors. A ViT-B/32-sized block in
both settings adds two timing rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

import nbmerge
from nbmerge.evaluate.diagnostics import ace_diagnostics
from nbmerge.engine.io import atomic_write_text, load_state_dict, save_state_dict
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model

SIDE_SCRIPT = Path(__file__).with_name("ace_official_side.py")
SETTINGS = ("homogeneous", "heterogeneous")
EPSILONS = (1e-2, 1e-5)
DTYPES = ("float32", "float64")
K_FRAC = 0.3
#: heterogeneous task-vector scales 10^linspace(−SPREAD, SPREAD, T)
HETEROGENEOUS_SPREAD = 1.0


def model_shapes(width: int, layers: int) -> dict[str, tuple[int, ...]]:
    if width == 768:  # ViT-B/32's image tower
        shapes = openclip_vit_shapes(768, layers, patch=32, grid=7, output_dim=512)
    else:
        shapes = openclip_vit_shapes(width, layers, patch=8, grid=4, output_dim=width // 2)
    out_dim = shapes["visual.proj"][1]
    # A CLIP text projection in the same state dict: the reference sends it to the mean, not the matrix path.
    shapes["text_projection"] = (out_dim, out_dim)
    return shapes


def task_scales(setting: str, tasks: int) -> list[float]:
    if setting == "homogeneous":
        return [1.0] * tasks
    if setting == "heterogeneous":
        return torch.logspace(-HETEROGENEOUS_SPREAD, HETEROGENEOUS_SPREAD, tasks, dtype=torch.float64).tolist()
    raise ValueError(f"unknown setting {setting!r}; valid: {SETTINGS}")


def make_inputs(width: int, layers: int, tasks: int, seed: int, setting: str):
    """Base and experts in float64: θ_t = θ₀ + s_t·τ_t with ``random_experts``' task vectors."""
    base = random_model(model_shapes(width, layers), seed=seed, scale=0.02, dtype=torch.float64)
    experts = random_experts(base, tasks, seed=seed + 1, scale=0.002)
    return base, [{k: base[k] + s * (e[k] - base[k]) for k in base} for s, e in
                  zip(task_scales(setting, tasks), experts)]


def plan_jobs(widths: list[int], layers: int, tasks: int, timing_width: int, timing_layers: int) -> list[dict]:
    """Every comparison: one official call and one nbmerge call on the same files."""
    jobs = []
    for width in widths:
        for setting in SETTINGS:
            for dtype in DTYPES:
                for eps in EPSILONS:
                    jobs.append({"name": f"w{width}-{setting}-{dtype}-eps{eps:g}", "width": width, "layers": layers,
                                 "tasks": tasks, "setting": setting, "dtype": dtype, "eps": eps})
    for setting in SETTINGS if timing_width else ():
        # ViT-B/32-sized block(s) as the official code runs them (float32, the paper's ViT ε): the timing rows
        jobs.append({"name": f"w{timing_width}x{timing_layers}-{setting}-float32-eps1e-05", "width": timing_width,
                     "layers": timing_layers, "tasks": tasks, "setting": setting, "dtype": "float32", "eps": 1e-5})
    return jobs


def input_dir(work: Path, job: dict) -> Path:
    return work / f"inputs-w{job['width']}x{job['layers']}-T{job['tasks']}-{job['setting']}-{job['dtype']}"


def write_inputs(work: Path, job: dict, seed: int) -> Path:
    folder = input_dir(work, job)
    if (folder / ".complete").exists():
        return folder
    base, experts = make_inputs(job["width"], job["layers"], job["tasks"], seed, job["setting"])
    dtype = getattr(torch, job["dtype"])
    save_state_dict({k: v.to(dtype) for k, v in base.items()}, folder / "base.safetensors")
    for t, expert in enumerate(experts):
        save_state_dict({k: v.to(dtype) for k, v in expert.items()}, folder / "experts" / f"task{t:02d}.safetensors")
    (folder / ".complete").write_text("ok\n")
    return folder


def compare_updates(ours: dict, theirs: dict) -> dict:
    """Per tensor: max|ours − theirs| / max|theirs| (relative to the official merged update), and the worst one."""
    per_tensor, worst_abs, worst_rel, worst_key = {}, 0.0, 0.0, None
    for key in theirs:
        a, b = ours[key].double(), theirs[key].double()
        diff = (a - b).abs().max().item()
        size = b.abs().max().item()
        rel = diff / size if size > 0 else (0.0 if diff == 0 else float("inf"))
        per_tensor[key] = rel
        worst_abs = max(worst_abs, diff)
        if worst_key is None or rel > worst_rel:
            worst_rel, worst_key = rel, key
    return {"max_abs_diff": worst_abs, "max_rel_diff": worst_rel, "worst_key": worst_key, "per_tensor": per_tensor}


def flag_summary(diagnostics: dict[str, dict]) -> dict:
    gammas = [d["gamma"] for d in diagnostics.values()]
    return {"matrices": len(diagnostics), "flagged": sum(d["flag"] for d in diagnostics.values()),
            "gamma_min": min(gammas), "gamma_max": max(gammas),
            "condition_max": max(d.get("condition", float("nan")) for d in diagnostics.values())}


def task_vectors_of(base: dict, experts: list[dict]) -> list[dict]:
    # θ_t − θ₀ in the checkpoint dtype, exactly as the official TaskVector.compute (and nbmerge's walker) form it
    return [{k: e[k] - base[k] for k in base} for e in experts]


def run(args) -> dict:
    torch.set_num_threads(args.threads)
    work = Path(args.work_dir)
    job_list = plan_jobs(args.widths, args.layers, args.tasks, args.timing_width, args.timing_layers)
    if args.only:
        job_list = [j for j in job_list if j["name"] in args.only]
    side_jobs = []
    for job in job_list:
        folder = write_inputs(work, job, args.seed)
        side_jobs.append({"name": job["name"], "input": str(folder), "dtype": job["dtype"], "eps": job["eps"],
                          "k_frac": K_FRAC, "scale": 1.0,
                          "output": str(work / "official" / f"{job['name']}.safetensors"),
                          "tau_output": str(work / "official" / f"{job['name']}.tau.safetensors")})
    todo = [j for j in side_jobs if args.rerun or not Path(j["tau_output"]).exists()]
    timings_path, identity_path = work / "official" / "timings.json", work / "official" / "identity.json"
    if todo or not identity_path.exists():
        spec = {"threads": args.threads, "repeats": args.repeats, "timings": str(timings_path),
                "identity": str(identity_path),
                "jobs": todo}
        spec_path = work / "official_jobs.json"
        spec_path.parent.mkdir(parents=True, exist_ok=True)
        spec_path.write_text(json.dumps(spec))
        subprocess.run([args.python, str(SIDE_SCRIPT), str(args.ace_repo), str(spec_path)], check=True,
                       env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    official_times = json.loads(timings_path.read_text())
    identity = json.loads(identity_path.read_text())
    peer_torch = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                                text=True, check=True).stdout.strip()

    rows = []
    for job, side in zip(job_list, side_jobs):
        folder = Path(side["input"])
        base = load_state_dict(folder / "base.safetensors")
        experts = [load_state_dict(p) for p in sorted((folder / "experts").glob("*.safetensors"))]
        params = {"eps": job["eps"], "k_frac": K_FRAC}
        nb_time = float("inf")
        for _ in range(args.repeats):  # the fastest of a few runs, on both sides: the CPU is shared
            start = time.perf_counter()
            merged = nbmerge.merge("ace", base, experts, params)
            nb_time = min(nb_time, time.perf_counter() - start)
        # The merged update itself: the same walk from a zero base on the same task vectors (θ₀ + τ would add
        # the output dtype's rounding of θ, ~1e-6 of the update in float32, to both sides).
        tvs = task_vectors_of(base, experts)
        zero = {k: torch.zeros_like(v) for k, v in base.items()}
        ours_tau = nbmerge.merge("ace", zero, tvs, params)
        theirs_tau = load_state_dict(side["tau_output"])
        theirs = load_state_dict(side["output"])
        row = {"job": job["name"], **{k: job[k] for k in ("width", "layers", "tasks", "setting", "dtype", "eps")},
               "nbmerge_s": nb_time, "official_s": official_times[job["name"]],
               **compare_updates(ours_tau, theirs_tau),
               "weights_max_abs_diff": max((merged[k].double() - theirs[k].double()).abs().max().item() for k in base)}
        row["speedup"] = row["official_s"] / row["nbmerge_s"]
        # Which side is nearer the exact answer: nbmerge's kernel in float64 on the same task vectors.
        exact = nbmerge.merge("ace", {k: v.double() for k, v in zero.items()},
                              [{k: v.double() for k, v in tv.items()} for tv in tvs], params)
        row["nbmerge_vs_float64"] = compare_updates(ours_tau, exact)["max_rel_diff"]
        row["official_vs_float64"] = compare_updates(theirs_tau, exact)["max_rel_diff"]
        row.update(flag_summary(ace_diagnostics(base, experts, eps=job["eps"], k_frac=K_FRAC,
                                                condition=job["width"] <= 256)))
        rows.append(row)
        print(f"{job['name']:>42}: max rel diff {row['max_rel_diff']:.2e}  flagged {row['flagged']}/"
              f"{row['matrices']}  nbmerge {nb_time:6.2f}s  official {row['official_s']:6.2f}s", flush=True)
    return {
        "config": {"widths": args.widths, "layers": args.layers, "tasks": args.tasks, "seed": args.seed,
                   "threads": args.threads, "repeats": args.repeats, "k_frac": K_FRAC,
                   "heterogeneous_spread": HETEROGENEOUS_SPREAD,
                   "timing_width": args.timing_width, "timing_layers": args.timing_layers},
        "official": {"repo": "unravel-xu/ACE-Merging", "path": str(args.ace_repo), "note": args.source_note,
                     **identity},
        "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__, "peer_torch": peer_torch,
                     "python": platform.python_version(), "machine": platform.machine(),
                     "cpu_threads": args.threads},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "rows": rows,
    }


DIFFERENCES = """\
## How the two walk a model, and what differs

| aspect | official (`strategy.py::ace_merging`, `step1.py`, `step3.py`) | nbmerge `ace` default |
|---|---|---|
| matrix path | every tensor with `ndim == 2` whose name does not contain `text_projection` | `matrix_rule="ndim2"`, `text_projection` always added to `matrix_exclude` |
| fused q/k/v | open_clip `attn.in_proj_weight` merged as one 3d×d matrix | `qkv="as_is"` (same) |
| other tensors | mean task vector | walker fallback `"mean"` (same) |
| scaling | θ₀ + 1.0·τ (`scaling_coefficient`) | `scale=1.0` (same) |
| which tensors | `named_parameters()` only; ViT excludes nothing; RoBERTa drops `classifier`, `bias`, `LayerNorm`, `embeddings`, GPT-2 `score` (they stay at θ₀) | every floating tensor of the state dict (an image encoder has no floating buffers); the RoBERTa/GPT-2 drops are `WalkOptions(exclude=...)` |
| precision | the checkpoint dtype (float32); the Gram sum and identity use the *default* dtype, so float64 inputs are still accumulated in float32 | float64 throughout, result cast to the input dtype |
| solve | `torch.linalg.inv(A)`, `pinv` if inversion raises | LU solve `X·A = B`; `pinv` only on an exactly zero pivot (A is non-singular for ε > 0) |
| γ | from `trace(WᵀW)` (a full d_in×d_in Gram per task), in float32 | from the squared norms in float64 (same value to rounding) |
| refinement SVD | full `torch.linalg.svd` of W_fused | top-k triplets from a float64 Gram (`linalg.top_singular`); U_kV_kᵀ is the same |
| k = int(r·k_frac) = 0 | mean of an empty spectrum: NaN | refinement skipped |
| T = 1 | `torch.var` of one value: NaN (with a warning), flag false | γ = NaN explicitly, flag false |
"""


def findings(rows: list[dict]) -> list[str]:
    """The report's summary, computed from the rows so that it stays true when the check is rerun."""
    wide = [r for r in rows if r["dtype"] == "float64"]
    single = [r for r in rows if r["dtype"] == "float32"]
    timing = [r for r in single if r["width"] >= 768]
    lines = []
    if wide:
        lines.append(f"* float64: the two agree to {max(r['max_rel_diff'] for r in wide):.1e} (max relative "
                     f"difference over every tensor of {len(wide)} runs), with and without the flag, at both ε: "
                     "the same function, the same walk.")
    if single:
        worst = max(single, key=lambda r: r["max_rel_diff"])
        lines.append(f"* float32: differences up to {worst['max_rel_diff']:.1e} ({worst['job']}) are the official "
                     f"code's own float32 round-off: it is {max(r['official_vs_float64'] for r in single):.1e} "
                     f"from the float64 answer at worst, nbmerge {max(r['nbmerge_vs_float64'] for r in single):.1e} "
                     "(nbmerge computes in float64 and rounds once).")
    if timing:
        speed = ", ".join(f"{r['setting']} {r['speedup']:.2f}×" for r in timing)
        lines.append(f"* Speed at ViT-B/32 block size (official time / nbmerge time): {speed}. nbmerge does fewer "
                     "operations (no Gram just for a trace, no explicit inverse, top-k instead of a full SVD) but in "
                     "float64.")
    return lines


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_ace.json", json.dumps(result, indent=1))
    c, v, o = result["config"], result["versions"], result["official"]
    lines = [
        "# nbmerge `ace` vs the official ACE-Merging code: same inputs, side by side",
        "",
        f"Generated by `python -m bench.peers.ace_official --ace-repo PATH` on {result['date']}.",
        f"Official code: {o['repo']} `src/merge/strategy.py` (sha256 {o['strategy_py_sha256'][:16]}…, "
        f"`ace_merging` source sha256 {o['ace_merging_sha256'][:16]}…), imported by file path in its own process "
        f"on torch {v['peer_torch']}; nbmerge {v['nbmerge']} on torch {v['torch']}. Both on the CPU with "
        f"{c['threads']} threads; Python {v['python']}, {v['machine']}." + (f" {o['note']}" if o.get("note") else ""),
        f"Inputs: random open_clip-layout ViTs (`nbmerge.testing`) of widths {c['widths']} with {c['layers']} blocks "
        f"(fused `in_proj` 3d×d, `c_fc` 4d×d, `c_proj` d×4d, `positional_embedding`, `proj`, biases, LayerNorms, "
        f"conv1, class embedding) plus a 2-D `text_projection` with a non-zero task vector; {c['tasks']} tasks, "
        f"seed {c['seed']}. *homogeneous*: `random_experts` task vectors (similar norms); *heterogeneous*: task t's "
        f"vectors scaled by 10^linspace(−{c['heterogeneous_spread']:g}, {c['heterogeneous_spread']:g}, T). "
        "k_frac = 0.3, scale 1.",
        "",
        "Relative difference: max over tensors of max|τ_nbmerge − τ_official| / max|τ_official| for the merged "
        "task vector τ_M (both sides given the same θ_t − θ₀). The last two columns measure each side against "
        "nbmerge's kernel in float64 on the same task vectors. Wall time: the whole merge from in-memory state dicts "
        "(nbmerge: `nbmerge.engine.merging`; official: `ace_merging` plus θ₀ + τ), not counting file loading, the fastest of "
        f"{c.get('repeats', 1)} runs on each side. "
        "*flagged*: matrices whose heterogeneity γ exceeded 0.3 (adaptive normalisation and spectral refinement on); "
        "*cond*: the largest 2-norm condition number of the solved matrix ΣΣ_reg + C_agg. The CPU was shared with "
        "other work during the run: times under a second are mostly noise; the ViT-B/32-block rows are the timing "
        "comparison.",
        "",
        "## Findings",
        "",
        *findings(result["rows"]),
        "",
        "| job | setting | dtype | ε | flagged | γ range | cond max | max rel diff | worst tensor | nbmerge vs fp64 "
        "| official vs fp64 | nbmerge s | official s | speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        cond = f"{r['condition_max']:.1e}" if r["condition_max"] == r["condition_max"] else "—"
        lines.append(
            f"| {r['job']} | {r['setting']} | {r['dtype']} | {r['eps']:g} | {r['flagged']}/{r['matrices']} "
            f"| {r['gamma_min']:.2g} – {r['gamma_max']:.2g} | {cond} | {r['max_rel_diff']:.2e} | `{r['worst_key']}` "
            f"| {r['nbmerge_vs_float64']:.2e} | {r['official_vs_float64']:.2e} | {r['nbmerge_s']:.2f} "
            f"| {r['official_s']:.2f} | {r['speedup']:.2f}× |")
    lines += ["", DIFFERENCES]
    atomic_write_text(out_dir / "peer_ace.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ace-repo", required=True, type=Path,
                        help="checkout/export of unravel-xu/ACE-Merging (needs src/merge/strategy.py)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the official side (torch, numpy)")
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="timings are the fastest of this many runs")
    parser.add_argument("--timing-width", type=int, default=768, help="0: no ViT-B/32-sized timing row")
    parser.add_argument("--timing-layers", type=int, default=1)
    parser.add_argument("--source-note", default="", help="one sentence for the report on where --ace-repo came from")
    parser.add_argument("--only", nargs="*", help="job names to run")
    parser.add_argument("--rerun", action="store_true", help="recompute the official outputs")
    parser.add_argument("--work-dir", default=os.environ.get("NBMERGE_PEER_DIR", str(Path.home() / ".cache" / "nbmerge"
                                                                                   / "peers")) + "/ace-work")
    parser.add_argument("--out", default="reports", help="folder for peer_ace.{md,json}")
    args = parser.parse_args(argv)
    if not (args.ace_repo / "src" / "merge" / "strategy.py").exists():
        parser.error(f"{args.ace_repo}/src/merge/strategy.py not found: give a checkout of unravel-xu/ACE-Merging")
    result = run(args)
    write_report(result, Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_ace.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
