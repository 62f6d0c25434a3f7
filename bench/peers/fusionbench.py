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
import cProfile
import ctypes
import ctypes.util
import gc
import hashlib
import json
import os
import platform
import pstats
import subprocess
import sys
import time
from pathlib import Path

import torch

import nbmerge
from nbmerge.engine.io import atomic_write_text, load_state_dict, save_state_dict
from nbmerge.engine.linalg import top_singular
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model
from nbmerge.engine.walker import WalkOptions, check_gram, sum_kernel
from nbmerge.methods.iso_cts import subspace_sizes
from nbmerge.methods.regmean import shrink_off_diagonal

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


# -- each method's own limit ---------------------------------------------------------------------------------
#
# The linear algebra a method cannot avoid, timed alone on the same inputs with the same torch calls nbmerge makes
# (nbmerge/engine/linalg.py): a merge cannot be faster than this floor, so nbmerge's time over it says how much is
# left to gain, and FusionBench's time over it how much FusionBench spends around (or instead of) the same work.

#: nbmerge within this factor of its floor: the method is at its own limit
AT_LIMIT = 1.2
#: what the profile of a method away from its floor lists (functions by own time)
PROFILE_TOP = 6


def clock(fn, *args):
    """(fn(*args), seconds it took)."""
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def matmul_rate(dtype: torch.dtype, n: int = 2048, repeats: int = 3) -> float:
    """GFLOP/s of an n×n by n×n matmul (2n³ FLOPs), the best of ``repeats``: the rate the machine reaches now."""
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=generator, dtype=dtype)
    b = torch.randn(n, n, generator=generator, dtype=dtype)
    best = min(clock(torch.mm, a, b)[1] for _ in range(repeats))
    return 2 * n ** 3 / best / 1e9


def gram_eigh(matrix: torch.Tensor):
    """nbmerge's decomposition (``top_singular``, ``polar_factor``): the float64 Gram of the smaller side and its
    symmetric eigendecomposition, which give the singular values and vectors without a LAPACK SVD."""
    x = matrix.double()
    return torch.linalg.eigh(x.T @ x if x.shape[0] >= x.shape[1] else x @ x.T)


def gram_eigh_flops(rows: int, cols: int) -> float:
    """Nominal FLOPs of :func:`gram_eigh`: the Gram 2·m·n² (n the smaller side) and a symmetric eigendecomposition
    with vectors 9n³ (Golub & Van Loan, symmetric QR)."""
    m, n = max(rows, cols), min(rows, cols)
    return 2 * m * n ** 2 + 9 * n ** 3


def svd_flops(rows: int, cols: int) -> float:
    """Nominal FLOPs of a reduced SVD with both factors: min(Golub-Reinsch 14mn² + 8n³, R-SVD 6mn² + 20n³)."""
    m, n = max(rows, cols), min(rows, cols)
    return min(14 * m * n ** 2 + 8 * n ** 3, 6 * m * n ** 2 + 20 * n ** 3)


def task_vectors(key: str, base: dict, experts: list) -> list[torch.Tensor]:
    return [e[key] - base[key] for e in experts]


def matrix_keys(base: dict) -> list[str]:
    """The tensors ISO-C/ISO-CTS decompose: every 2-D tensor, as stored (the walk's defaults, ndim2 and as_is)."""
    assert WalkOptions().qkv == "as_is"
    return [k for k, v in base.items() if v.dim() == 2]


def iso_c_limit(base: dict, experts: list, params: dict, grams) -> dict:
    """ISO-C: one decomposition of each matrix's task-vector sum. Also FusionBench's decomposition of the same
    matrices (a float32 LAPACK reduced SVD), for reference."""
    seconds = flops = svd_seconds = svd_total = 0.0
    for key in matrix_keys(base):
        total = sum_kernel(task_vectors(key, base, experts))
        seconds += clock(gram_eigh, total)[1]
        svd_seconds += clock(torch.linalg.svd, total, False)[1]
        flops += gram_eigh_flops(*total.shape)
        svd_total += svd_flops(*total.shape)
    return {"what": "float64 Gram + eigh of each matrix's task-vector sum", "limit_s": seconds,
            "decomposition_s": seconds, "decomposition_gflop": flops / 1e9, "decomposition_dtype": "float64",
            "svd_f32_s": svd_seconds, "svd_f32_gflop": svd_total / 1e9}


def iso_cts_limit(base: dict, experts: list, params: dict, grams) -> dict:
    """ISO-CTS: the decompositions of each matrix's sum, of each task's residual outside the common subspace and of
    the two concatenated factors (their polar factors), on the matrices nbmerge's kernel builds."""
    seconds = flops = 0.0
    for key in matrix_keys(base):
        deltas = task_vectors(key, base, experts)
        common, per_task = subspace_sizes(min(deltas[0].shape), len(deltas), params["common_space_fraction"])
        total = sum_kernel(deltas)
        decomposed = [total]
        seconds += clock(gram_eigh, total)[1]
        u_common, s_common, vh_common = top_singular(total, common)
        left, right = [], []
        for delta in deltas:
            residual = delta - u_common @ (u_common.T @ delta)
            seconds += clock(gram_eigh, residual)[1]
            ut, _, vht = top_singular(residual, per_task)
            decomposed.append(residual)
            left.append(ut)
            right.append(vht)
        for factor in (torch.cat(left + [u_common], dim=1), torch.cat(right + [vh_common], dim=0)):
            seconds += clock(gram_eigh, factor)[1]
            decomposed.append(factor)
        flops += sum(gram_eigh_flops(*m.shape) for m in decomposed)
    return {"what": "float64 Gram + eigh of each sum, T residuals and 2 concatenated factors", "limit_s": seconds,
            "decomposition_s": seconds, "decomposition_gflop": flops / 1e9, "decomposition_dtype": "float64"}


def regmean_products(deltas: list[torch.Tensor], shrunk: list[torch.Tensor]):
    """The products RegMean cannot avoid: Σ_t G̃_t and Σ_t τ_t G̃_t, as ``regmean_matrix`` forms them."""
    return sum(shrunk), sum(delta @ g for delta, g in zip(deltas, shrunk))


def regmean_solve(numerator: torch.Tensor, gram: torch.Tensor) -> torch.Tensor:
    """nbmerge's solve (``solve_right``): a Cholesky factor of the Gram sum and two triangular solves."""
    factor, _ = torch.linalg.cholesky_ex(gram)
    return torch.cholesky_solve(numerator.T, factor).T


def regmean_limit(base: dict, experts: list, params: dict, grams) -> dict:
    """RegMean, per layer with Grams: the Gram sum, the T products τ_t·G̃_t and their sum, and the solve; and the check
    nbmerge makes of each expert's Gram before it uses it (``check_gram``: symmetric, and positive semi-definite by a
    float64 Cholesky), which FusionBench does not make."""
    products_s = solve_s = check_s = products_flops = solve_flops = check_flops = 0.0
    for key in [k for k in base if k in grams[0]]:
        deltas = task_vectors(key, base, experts)
        shrunk = [shrink_off_diagonal(g[key], params["offdiag_scale"]) for g in grams]
        (gram, numerator), seconds = clock(regmean_products, deltas, shrunk)
        products_s += seconds
        solve_s += clock(regmean_solve, numerator, gram)[1]
        check_s += sum(clock(check_gram, g[key], key)[1] for g in grams)
        rows, cols = deltas[0].shape
        products_flops += 2 * len(deltas) * rows * cols ** 2
        solve_flops += cols ** 3 / 3 + 2 * rows * cols ** 2
        check_flops += len(grams) * cols ** 3 / 3
    return {"what": "Σ G̃_t, Σ τ_t G̃_t and the Cholesky solve of each layer with Grams, and the check of each "
                    "expert's Gram", "limit_s": products_s + solve_s + check_s, "decomposition_s": solve_s,
            "decomposition_gflop": solve_flops / 1e9,
            "decomposition_dtype": str(next(iter(grams[0].values())).dtype).removeprefix("torch."),
            "products_s": products_s, "products_gflop": products_flops / 1e9,
            "check_s": check_s, "check_gflop": check_flops / 1e9}


LIMITS = {"iso_c": iso_c_limit, "iso_cts": iso_cts_limit, "regmean": regmean_limit}


def profile_merge(method, params, walk_kw, base, experts, grams) -> tuple[list, float]:
    """Where nbmerge's time goes: the merge again under cProfile, the functions with the most own time, and the
    wall time of that second merge (cProfile's overhead included), which tells whether the timed one was typical."""
    kwargs = {"grams": grams} if method == "regmean" else {}
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(nbmerge.merge, method, base, experts, params, walk=WalkOptions(**walk_kw), **kwargs)
    seconds = time.perf_counter() - start
    stats = pstats.Stats(profiler).stats
    top = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:PROFILE_TOP]
    return [{"function": function if file == "~" else f"{Path(file).name}:{line} {function}", "calls": calls,
             "own_s": own} for (file, line, function), (_, calls, own, _, _) in top], seconds


def own_limit(job, base, experts, grams, nb_time, repeats: int = 1) -> dict:
    """The method's floor (the fastest of ``repeats`` timings, as the merges' own times are) and, where nbmerge is
    not near it, the profile of where the rest of its time goes."""
    method, params, walk_kw = job["nb"]
    tries = [LIMITS[method](base, experts, params, grams) for _ in range(repeats)]
    limit = min(tries, key=lambda t: t["limit_s"])
    if repeats > 1:
        limit["limit_runs"] = [t["limit_s"] for t in tries]
    if nb_time > AT_LIMIT * limit["limit_s"]:
        limit["profile"], limit["profiled_merge_s"] = profile_merge(method, params, walk_kw, base, experts, grams)
    return {"limit": limit}


def matmul_rates() -> dict:
    return {"float32": matmul_rate(torch.float32), "float64": matmul_rate(torch.float64)}


def fusionbench_round(python: Path, work: Path, job_list: list[dict], threads: int, *, save: set,
                      timings_file: str) -> None:
    """One run of FusionBench's side over ``job_list`` in its own process: every job timed into
    ``fusionbench/<timings_file>``, the merged weights written for the jobs in ``save``."""
    spec = {"threads": threads, "timings_file": timings_file,
            "jobs": [dict(j["fb"], name=j["name"], keys=j.get("keys"), save=j["name"] in save) for j in job_list]}
    spec_path = work / "fusionbench_jobs.json"
    if timings_file != "timings.json":  # a round's own times: none left from an earlier run
        (work / "fusionbench" / timings_file).unlink(missing_ok=True)
    atomic_write_text(spec_path, json.dumps(spec))
    subprocess.run([str(python), str(SIDE_SCRIPT), str(work), str(spec_path)], check=True,
                   env=dict(os.environ, OMP_NUM_THREADS=str(threads)))


def release_memory() -> None:
    """Give this process's freed memory back to the system before FusionBench's process runs beside it: glibc keeps
    the freed heap of the last merges (its mmap threshold grows after large frees), which left too little for
    FusionBench's TIES on a 24 GB machine."""
    gc.collect()
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def peer_versions(python: Path) -> list[str]:
    """[torch's version, fusion-bench's version] in the peer venv."""
    return subprocess.run([str(python), "-c", "import torch, importlib.metadata as m; "
                           "print(torch.__version__, m.version('fusion-bench'))"],
                          capture_output=True, text=True, check=True).stdout.split()


def job_inputs(job: dict, base: dict, experts: list) -> tuple[list[str], dict, list]:
    keys = job.get("keys") or list(base)
    return keys, {k: base[k] for k in keys}, [{k: e[k] for k in keys} for e in experts]


def time_nbmerge(job: dict, base: dict, experts: list, grams) -> tuple[dict, float]:
    """nbmerge's merge of ``job`` from in-memory experts: (the merged weights, seconds)."""
    method, params, walk_kw = job["nb"]
    _, b, exps = job_inputs(job, base, experts)
    kwargs = {"grams": grams} if method == "regmean" else {}
    start = time.perf_counter()
    ours = nbmerge.merge(method, b, exps, params, walk=WalkOptions(**walk_kw), **kwargs)
    return ours, time.perf_counter() - start


def run(args) -> dict:
    """Both sides on the same inputs. With ``--repeats R`` above 1 each side runs R times, interleaved (FusionBench's
    process, then nbmerge's merges, the order swapped every other round) and each time is the best of its R runs:
    on a machine whose speed drifts, one run of each side compares two moments as much as two tools."""
    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()
    width, layers = (64, 2) if args.small else (768, 12)
    tag = hashlib.sha256(json.dumps([width, layers, args.tasks, args.seed]).encode()).hexdigest()[:10]
    work = Path(args.work_dir or Path(args.peer_dir) / f"work-{tag}")
    make_inputs(work, width, layers, args.tasks, args.seed)
    wudi_keys = [k for k in load_state_dict(work / "base.safetensors")
                 if k.startswith(tuple(f"visual.transformer.resblocks.{i}." for i in range(args.wudi_blocks)))]
    job_list = [j for j in jobs(args.wudi_iters, wudi_keys) if not args.only or j["name"] in args.only]

    python = ensure_peer_venv(Path(args.peer_dir))
    fb_out = work / "fusionbench"
    failures_path = fb_out / "failures.json"
    missing = {j["name"] for j in job_list if args.rerun or not (fb_out / f"{j['name']}.safetensors").exists()}
    fb_version = peer_versions(python)

    def load_inputs() -> tuple[dict, list, list]:
        """The base, the experts and the Grams, read afresh: every nbmerge side gets new tensors, as a new process
        would (nbmerge checks a Gram once per tensor it has not seen, so reused inputs would skip RegMean's checks
        after round 1), and holds them only while it runs (on a 24 GB machine they cannot stay in this process while
        FusionBench's runs beside it)."""
        return (load_state_dict(work / "base.safetensors"),
                [load_state_dict(p) for p in sorted((work / "experts").glob("*.safetensors"))],
                [load_state_dict(p) for p in sorted((work / "grams").glob("*.safetensors"))])

    def read_failures() -> dict:
        """FusionBench's recorded failures: job name → its error."""
        return json.loads(failures_path.read_text()) if failures_path.exists() else {}

    repeats = args.repeats
    fb_runs: dict[str, list] = {j["name"]: [] for j in job_list}
    nb_runs: dict[str, list] = {j["name"]: [] for j in job_list}
    rows: dict[str, dict] = {}
    rates_start = matmul_rates()

    def fusionbench_side(round_: int) -> None:
        release_memory()
        with open("/proc/self/statm") as handle:
            resident = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        print(f"FusionBench's side, round {round_ + 1} of {repeats} (this process holds {resident / 1e9:.1f} GB)",
              flush=True)
        if repeats == 1:  # one run: FusionBench only where its output is missing (or --rerun), times kept
            if missing:
                fusionbench_round(python, work, [j for j in job_list if j["name"] in missing], args.threads,
                                  save=missing, timings_file="timings.json")
            times = json.loads((fb_out / "timings.json").read_text())
        else:
            failed = read_failures() if round_ else {}
            todo = [j for j in job_list if j["name"] not in failed]
            fusionbench_round(python, work, todo, args.threads, save=missing if round_ == 0 else set(),
                              timings_file=f"timings-round{round_}.json")
            times = json.loads((fb_out / f"timings-round{round_}.json").read_text())
        for name in fb_runs:
            if name in times:
                fb_runs[name].append(times[name])

    def nbmerge_side(round_: int, compare_now: bool) -> None:
        failed = read_failures()
        base, experts, grams = load_inputs()
        for job in job_list:
            ours, seconds = time_nbmerge(job, base, experts, grams)
            nb_runs[job["name"]].append(seconds)
            print(f"{job['name']:>16}: nbmerge {seconds:7.2f}s (round {round_ + 1} of {repeats})", flush=True)
            if compare_now:
                rows[job["name"]] = compare_row(job, base, experts, grams, ours, failed, fb_out, args)
            del ours

    for round_ in range(repeats):
        fusionbench_first = round_ % 2 == 0  # round 1 always: its outputs are compared in the same round
        if fusionbench_first:
            fusionbench_side(round_)
        nbmerge_side(round_, compare_now=round_ == 0)
        if not fusionbench_first:
            fusionbench_side(round_)

    base, experts, grams = load_inputs()
    out_rows = []
    for job in job_list:
        row = rows[job["name"]]
        row["nbmerge_s"] = min(nb_runs[job["name"]])
        if repeats > 1:
            row["nbmerge_runs"] = nb_runs[job["name"]]
        if "fusionbench_error" not in row and not fb_runs[job["name"]]:
            row["fusionbench_error"] = "raised in every timing run (its earlier output was compared)"
        if "fusionbench_error" not in row:
            row["fusionbench_s"] = min(fb_runs[job["name"]])
            if repeats > 1:
                row["fusionbench_runs"] = fb_runs[job["name"]]
                if len(fb_runs[job["name"]]) < repeats:  # raised in a later round: said, not hidden
                    row["fusionbench_failed_rounds"] = repeats - len(fb_runs[job["name"]])
            row["speedup"] = row["fusionbench_s"] / row["nbmerge_s"]
            print(f"{job['name']:>16}: nbmerge {row['nbmerge_s']:7.2f}s  fusionbench {row['fusionbench_s']:7.2f}s "
                  f" ({row['speedup']:.2f}x{', best of ' + str(repeats) if repeats > 1 else ''})", flush=True)
            method = job["nb"][0]
            if method in LIMITS:
                _, b, exps = job_inputs(job, base, experts)
                row.update(own_limit(job, b, exps, grams, row["nbmerge_s"], repeats))
                floor = row["limit"]["limit_s"]
                print(f"{'':>16}  own limit {floor:7.2f}s  (nbmerge {row['nbmerge_s'] / floor:.2f}x it, "
                      f"fusionbench {row['fusionbench_s'] / floor:.2f}x)", flush=True)
        out_rows.append(row)
    return {
        "config": {"width": width, "layers": layers, "tasks": args.tasks, "seed": args.seed,
                   "threads": args.threads, "wudi_iters": args.wudi_iters, "wudi_blocks": args.wudi_blocks,
                   "repeats": repeats},
        "versions": {"nbmerge": nbmerge.__version__, "torch": torch.__version__, "peer_torch": fb_version[0],
                     "fusion_bench": fb_version[1], "python": platform.python_version(),
                     "machine": platform.machine(), "cpu_threads": args.threads},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "not_run": [j["name"] for j in jobs(args.wudi_iters, wudi_keys) if j not in job_list],
        "load_average": {"start": load_start[0], "end": os.getloadavg()[0]},
        "matmul_gflops": {"start": rates_start, "end": matmul_rates()},
        "rows": out_rows,
    }


def compare_row(job, base, experts, grams, ours, failed, fb_out: Path, args) -> dict:
    """The row of one job: what was run, and how far nbmerge's weights are from FusionBench's (or FusionBench's
    error); the times are added once every round has run."""
    method, params, walk_kw = job["nb"]
    keys, b, exps = job_inputs(job, base, experts)
    row = {"job": job["name"], "method": method, "params": params, "walk": walk_kw,
           "keys": "all" if len(keys) == len(base) else f"{len(keys)} keys (first {args.wudi_blocks} block(s))"}
    if job["name"] in failed:  # FusionBench raised on these inputs: nothing to compare, said so
        row["fusionbench_error"] = failed[job["name"]]
        print(f"{job['name']:>16}: fusionbench failed: {row['fusionbench_error']}", flush=True)
        return row
    theirs = load_state_dict(fb_out / f"{job['name']}.safetensors")
    row.update(compare(b, ours, theirs))
    if method not in ELEMENTWISE and row["max_abs_diff"] > 0:
        row.update(float64_check(method, params, walk_kw, row["worst_key"], b, exps, grams, ours, theirs))
    print(f"{job['name']:>16}: max rel diff {row['max_rel_diff']:.2e}", flush=True)
    return row


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


def limit_verdict(r: dict) -> str:
    """One sentence: is nbmerge at the method's own floor, and what would 2× FusionBench take?"""
    limit, nb, fb = r["limit"]["limit_s"], r["nbmerge_s"], r["fusionbench_s"]
    head = (f"**{r['job']}**: nbmerge takes {nb:.2f} s, {nb / limit:.2f}× the {limit:.2f} s its floor takes alone; "
            f"FusionBench {fb:.2f} s, {fb / limit:.2f}× the same floor. 2× FusionBench means {fb / 2:.2f} s, "
            f"{fb / 2 / limit:.2f}× the floor")
    if fb / 2 < limit:
        reach = (f" — below it, so 2× is out of reach: even at its floor nbmerge would be {fb / limit:.2f}× "
                 "FusionBench, whose time beyond this floor is all there is to gain against")
    elif nb <= AT_LIMIT * limit:
        reach = (f" — above it, but nbmerge is within {AT_LIMIT}× of its floor: what is left to gain is the "
                 f"{nb - limit:.2f} s around the linear algebra")
    else:
        reach = f" — above it: {nb - limit:.2f} s of nbmerge's time are spent outside the floor"
    verdict = " The method is at its own limit." if nb <= AT_LIMIT * limit else ""
    return head + reach + "." + verdict


def profile_lines(r: dict) -> list[str]:
    profile = r["limit"].get("profile")
    if not profile:
        return []
    listed = "; ".join(f"`{p['function']}` {p['own_s']:.2f} s ({p['calls']} calls)" for p in profile)
    again = (f" That profiled merge took {r['limit']['profiled_merge_s']:.2f} s in all."
             if "profiled_merge_s" in r["limit"] else "")
    return [f"  Where nbmerge's {r['job']} time goes (cProfile of the same merge, own time, the largest): {listed}."
            + again]


def limit_section(result: dict) -> list[str]:
    """The table of each method's own limit, the machine's matmul rates and one verdict per method."""
    rows = [r for r in result["rows"] if "limit" in r and "fusionbench_error" not in r]
    if not rows:
        return []
    rates = result["matmul_gflops"]
    best = {dtype: max(rates["start"][dtype], rates["end"][dtype]) for dtype in rates["start"]}
    load = result["load_average"]
    lines = [
        "## Each method's own limit",
        "",
        "Measured in the same run on the same inputs, right after each method: the linear algebra the method cannot "
        "avoid, with the same torch calls on the same shapes as nbmerge's kernel (`bench/peers/fusionbench.py`, "
        "`LIMITS`) and nothing around them. ISO-C and ISO-CTS decompose through a float64 Gram and its symmetric "
        "eigendecomposition (`nbmerge/engine/linalg.py`), RegMean solves by Cholesky; the floor of a method is the "
        "sum of those times over its matrices"
        + (f", the fastest of {result['config']['repeats']} timings (every one in the JSON)"
           if result["config"].get("repeats", 1) > 1 else "")
        + ". FLOPs are nominal (Gram 2mn², eigendecomposition with vectors 9n³, "
        "Cholesky n³/3 and its two triangular solves 2mn², reduced SVD min(14mn² + 8n³, 6mn² + 20n³)); the last "
        "column compares their rate with a 2048³ matmul of the same dtype timed in this run "
        f"(float32 {rates['start']['float32']:.0f} / {rates['end']['float32']:.0f} GFLOP/s, float64 "
        f"{rates['start']['float64']:.0f} / {rates['end']['float64']:.0f} GFLOP/s before / after the nbmerge side; "
        "the higher one is used). "
        f"Load average (1 min) {load['start']:.2f} at the start of the run, {load['end']:.2f} at the end: the "
        "machine was shared, which is why every ratio here is of times measured side by side in one run.",
        "",
        "| method | the floor times | floor s | nbmerge s | nbmerge / floor | FusionBench s | FusionBench / floor "
        "| decomposition/solve GFLOP | its s | its GFLOP/s | of the matmul rate |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lim = r["limit"]
        rate = lim["decomposition_gflop"] / lim["decomposition_s"]
        lines.append(f"| {r['method']} ({r['job']}) | {lim['what']} | {lim['limit_s']:.2f} | {r['nbmerge_s']:.2f} | "
                     f"{r['nbmerge_s'] / lim['limit_s']:.2f}× | {r['fusionbench_s']:.2f} | "
                     f"{r['fusionbench_s'] / lim['limit_s']:.2f}× | {lim['decomposition_gflop']:.1f} | "
                     f"{lim['decomposition_s']:.2f} | {rate:.1f} | {rate / best[lim['decomposition_dtype']]:.0%} "
                     f"({lim['decomposition_dtype']}) |")
    lines.append("")
    for r in rows:
        lim = r["limit"]
        lines.append("* " + limit_verdict(r))
        if "svd_f32_s" in lim:
            rate = lim["svd_f32_gflop"] / lim["svd_f32_s"]
            lines.append(f"  FusionBench's decomposition of the same matrices, a float32 LAPACK reduced SVD, takes "
                         f"{lim['svd_f32_s']:.2f} s alone ({lim['svd_f32_gflop']:.1f} nominal GFLOP, {rate:.1f} "
                         f"GFLOP/s, {rate / best['float32']:.0%} of the float32 matmul rate): FusionBench's "
                         f"{r['job']} is {r['fusionbench_s'] / lim['svd_f32_s']:.2f}× it, nbmerge's floor "
                         f"{lim['limit_s'] / lim['svd_f32_s']:.2f}× it.")
        if "products_s" in lim:
            rate = lim["products_gflop"] / lim["products_s"]
            lines.append(f"  Of the floor, the Gram sum and the products Σ τ_t·G̃_t take {lim['products_s']:.2f} s "
                         f"({lim['products_gflop']:.1f} GFLOP, {rate:.1f} GFLOP/s, {rate / best['float32']:.0%} of "
                         f"the float32 matmul rate) and the solve {lim['decomposition_s']:.2f} s"
                         + (f"; checking each expert's Gram before it is used (symmetric, and positive semi-definite "
                            f"by a float64 Cholesky: {lim['check_gflop']:.1f} GFLOP) takes {lim['check_s']:.2f} s, "
                            f"{lim['check_s'] / lim['limit_s']:.0%} of the floor. nbmerge refuses a Gram that is not "
                            "XᵀX (tests/test_reliability.py); FusionBench checks nothing, so without the check "
                            f"nbmerge's floor would be {lim['limit_s'] - lim['check_s']:.2f} s"
                            if "check_s" in lim else "") + ".")
        lines += profile_lines(r)
    return lines + [""]


def runs(row: dict) -> str:
    """Every run of a repeated row, nbmerge's then FusionBench's (and how many of FusionBench's raised)."""
    ours = ", ".join(f"{t:.2f}" for t in row.get("nbmerge_runs", []))
    theirs = ", ".join(f"{t:.2f}" for t in row.get("fusionbench_runs", [])) or "—"
    failed = row.get("fusionbench_failed_rounds")
    return f"{ours} / {theirs}" + (f" ({failed} raised)" if failed else "")


def write_report(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "peer_fusionbench.json", json.dumps(result, indent=1))
    c, v = result["config"], result["versions"]
    repeated = c.get("repeats", 1) > 1
    lines = [
        "# nbmerge vs FusionBench: same inputs, side by side",
        "",
        f"Generated by `{result.get('command') or 'python -m bench.peers.fusionbench'}` (`make peer-fusionbench` "
        f"runs it with `--out reports`) on {result['date']}.",
        f"Inputs: random task vectors with open_clip ViT-B/32 image-tower shapes (width {c['width']}, "
        f"{c['layers']} blocks, fused `in_proj` {3 * c['width']}×{c['width']}, `c_fc` {4 * c['width']}×{c['width']}, "
        f"`c_proj` {c['width']}×{4 * c['width']}, biases, LayerNorms, conv1, class/positional embedding, proj), "
        f"{c['tasks']} tasks, seed {c['seed']}; RegMean Grams are random SPD matrices, one file per expert.",
        f"Both sides on the CPU with {c['threads']} thread{'s' if c['threads'] != 1 else ''}. "
        f"nbmerge {v['nbmerge']} on torch {v['torch']}; "
        f"FusionBench {v['fusion_bench']} on torch {v['peer_torch']} in its own venv. Python {v['python']}, {v['machine']}.",
        f"WUDI: {c['wudi_iters']} Adam steps on the first {c['wudi_blocks']} block(s) only — FusionBench's autograd "
        "loop costs about T·d_out²·d_in per step and tensor, hours for the whole model at 300 steps on 2 cores.",
        "",
        "Wall time: nbmerge from in-memory experts (task vectors, merge, θ₀ + α·τ); FusionBench the same "
        "(`state_dict_sub`, the merge function, `state_dict_add`), not counting file loading. "
        + (f"Each side ran {c['repeats']} times, interleaved: FusionBench's process over every job, then nbmerge's "
           "merges, the order swapped every other round; a time is the best of its runs, and the last column lists "
           "every run (nbmerge / FusionBench). " if c.get("repeats", 1) > 1 else
           "One run per side: on a machine whose speed drifts this is one draw (`--repeats` interleaves more). ")
        + "Relative difference: "
        "max over tensors of max|θ_nbmerge − θ_FusionBench| / max|θ_FusionBench − θ₀| (relative to the merged update).",
        "",
        *([f"Not run this time (`--only`): {', '.join(result['not_run'])}.", ""] if result.get("not_run") else []),
        "Where the two differ, the worst tensor is recomputed by nbmerge in float64 and both sides are measured "
        "against it (same relative scale): the last two columns say which side carries the float32 round-off.",
        "",
        "| method | parameters | max abs diff | max rel diff | worst tensor | nbmerge s | FusionBench s | speed-up "
        "| nbmerge vs fp64 | FusionBench vs fp64 |" + (" every run, s |" if repeated else ""),
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if repeated else ""),
    ]
    for r in result["rows"]:
        params = ", ".join(f"{k}={val}" for k, val in {**r["params"], **r["walk"]}.items())
        if "fusionbench_error" in r:
            lines.append(f"| {r['method']} ({r['job']}) | {params} | — | — | — | {r['nbmerge_s']:.2f} | failed: "
                         f"{r['fusionbench_error']} | — | — | — |" + (f" {runs(r)} |" if repeated else ""))
            continue
        exact = (f"{r['nbmerge_vs_float64']:.2e} | {r['fusionbench_vs_float64']:.2e}" if "nbmerge_vs_float64" in r
                 else "— | —")
        lines.append(f"| {r['method']} ({r['job']}) | {params} | {r['max_abs_diff']:.2e} | {r['max_rel_diff']:.2e} | "
                     f"`{r['worst_key']}` | {r['nbmerge_s']:.2f} | {r['fusionbench_s']:.2f} | {r['speedup']:.2f}× "
                     f"| {exact} |" + (f" {runs(r)} |" if repeated else ""))
    lines += ["", *limit_section(result), DIFFERENCES]
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
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs per side, interleaved; each time is the best of its runs (1: one run, and "
                             "FusionBench's cached outputs and times are reused)")
    parser.add_argument("--peer-dir", default=os.environ.get("NBMERGE_PEER_DIR",
                                                             str(Path.home() / ".cache" / "nbmerge" / "peers")))
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--out", default="reports", help="folder for peer_fusionbench.{md,json}")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    result = run(args)
    result["command"] = " ".join(["python -m bench.peers.fusionbench", *(sys.argv[1:] if argv is None else argv)])
    write_report(result, Path(args.out))
    print(f"wrote {Path(args.out) / 'peer_fusionbench.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
