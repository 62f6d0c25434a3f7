"""GPU check: every registered merge method on open_clip ViT-B/32 and ViT-L/14 image towers, timed and checked
against the CPU.

Run it when a session is lent a GPU::

    python -m bench.gpu --out reports/gpu_check

Time: meant to fit one 10-minute device call (~8 min on one H200 with 16 CPU cores), but written without a GPU
and not yet timed there. The file reads are the bulk: each method reads every expert once, TIES ~4 times,
BMM twice, RegMean/Fisher one statistics file per expert besides (~450 GB from the page cache for l14-20 in
float32). So ``--budget-s`` (default 450) starts no new measurement after that many seconds; the report marks
the cells it skipped (the last block, l14 in bfloat16, goes first) and a second call fills them, e.g.
``--suites l14-20 --dtypes bf16 --cpu-reference none --out reports/gpu_check_l14_20``.

Through the device tool, whose files come back only from ``$OUT`` (and whose python3 has no open_clip: the
shapes then come from ``nbmerge.testing.openclip_vit_shapes``, which tests/test_bench_gpu.py checks against
open_clip's real state dict)::

    PYTHONUNBUFFERED=1 timeout 580 python3 -m bench.gpu --out $OUT/gpu_check; cp $OUT/gpu_check.* reports/

(run with ``timeout_s=600``; copy ``gpu_check.json``/``.md`` from the returned files into ``reports/``).
Smoke test without a GPU: ``python -m bench.gpu --cpu-only --quick --out /tmp/gpu_check``.

What it does, per shape (b32, l14) and input dtype (float32, bfloat16): writes a random base and 20 experts
(base + seeded random task vectors: low rank plus noise) as safetensors once, and every suite of that shape
(8 or 20 tasks) reads the first T of them. Each method is timed at its registered defaults with
``WalkOptions(device=accelerator)``. On the suites named by ``--cpu-reference`` (default b32-8 and l14-8) the method
also runs on the CPU and on the accelerator over the first ``--compare-blocks`` transformer blocks (the
other blocks excluded, on both sides: a whole-tower CPU merge of ViT-L/14 takes many minutes for the SVD
methods) and the two results are compared: relative error ‖θ_acc − θ_cpu‖_F / ‖θ_cpu − θ₀‖_F (against the
merged task vector, which is what the method computes) must stay under ``TOLERANCE[dtype]``. A comparison past
it, or a merge that raises, is recorded and the other methods still run; the report then says FAILED and the
command exits with status 1.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import torch
from safetensors.torch import save_file

from nbmerge import __version__
from nbmerge.device import resolve_device, synchronize
from nbmerge.engine.io import load_state_dict
from nbmerge.engine.merging import merge
from nbmerge.methods import all_methods, get_method
from nbmerge.testing import openclip_vit_shapes
from nbmerge.engine.walker import WalkOptions, is_linear_weight

from .reporting import write_pair

#: open_clip ``VisionTransformer`` arguments of the two image towers (open_clip's ViT-B-32 / ViT-L-14 configs)
TOWERS = {
    "b32": dict(image_size=224, patch_size=32, width=768, layers=12, heads=12, mlp_ratio=4, output_dim=512),
    "l14": dict(image_size=224, patch_size=14, width=1024, layers=24, heads=16, mlp_ratio=4, output_dim=768),
}
#: --quick: the same layouts at toy widths, so the whole check runs in seconds on a laptop CPU
QUICK_TOWERS = {
    "b32": dict(image_size=32, patch_size=8, width=32, layers=2, heads=2, mlp_ratio=4, output_dim=16),
    "l14": dict(image_size=28, patch_size=7, width=48, layers=3, heads=4, mlp_ratio=4, output_dim=24),
}
SUITES = {"b32-8": ("b32", 8), "b32-20": ("b32", 20), "l14-8": ("l14", 8), "l14-20": ("l14", 20)}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
DTYPE_ALIASES = {"fp32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16"}
#: Pass/fail bound on ‖θ_acc − θ_cpu‖_F / ‖θ_cpu − θ₀‖_F. float32: kernels differ by summation order (cuBLAS vs
#: the CPU BLAS, ~1e-6 of the task vector); bfloat16: the result is rounded to bf16 once, and a float32
#: difference that straddles a rounding boundary moves that entry by one bf16 ulp of θ (~2e-4 at |θ| ≈ 0.05).
TOLERANCE = {"float32": 1e-4, "bfloat16": 1e-2}
#: past the tolerance, the accelerator still passes within this factor of the CPU float32 error against float64
ROUNDOFF_FACTOR = 2.0
#: Parameters of the CPU-vs-accelerator comparison runs that differ from the defaults, and why: WUDI's 300 Adam
#: steps cost ~300 d_out·d_in² products per matrix (minutes per block on a CPU); 30 steps exercise the same code.
COMPARE_PARAMS = {"wudi": {"iters": 30}}
#: Grams / Fishers: this many distinct seeded sets, expert t using set t mod STAT_SETS (twenty distinct ViT-L/14
#: Gram sets would take 38 GB of disk, two take 3.8 GB; a merge reads one file per expert either way).
STAT_SETS = 2
GRAM_RANK = 32
TASK_VECTOR_RANK = 16
TASK_VECTOR_SCALE = 0.01
BASE_SCALE = 0.05


# -- shapes and random checkpoints ------------------------------------------------------------------------------

def vit_shapes(tower: Mapping[str, Any]) -> tuple[dict[str, tuple[int, ...]], str]:
    """State-dict shapes (``visual.`` prefix) of an open_clip image tower, and where they came from.

    open_clip's own module is built on the meta device (no memory); without open_clip (the device machine's
    image has none) ``openclip_vit_shapes`` gives the same names and shapes.
    """
    try:
        from open_clip.transformer import VisionTransformer
    except Exception as exc:  # absent, or broken by the machine's torch/torchvision: the table is the same
        grid = tower["image_size"] // tower["patch_size"]
        shapes = openclip_vit_shapes(tower["width"], tower["layers"], tower["patch_size"], grid,
                                     tower["output_dim"], tower["mlp_ratio"])
        return shapes, f"nbmerge.testing.openclip_vit_shapes (open_clip not importable: {type(exc).__name__})"
    with torch.device("meta"):
        model = VisionTransformer(**tower)
    shapes = {f"visual.{k}": tuple(v.shape) for k, v in model.state_dict().items()}
    return shapes, "open_clip.transformer.VisionTransformer"


def random_base(shapes: Mapping[str, tuple[int, ...]], seed: int, device: str) -> dict[str, torch.Tensor]:
    generator = torch.Generator(device=device).manual_seed(seed)
    return {k: torch.randn(s, generator=generator, device=device) * BASE_SCALE for k, s in shapes.items()}


def random_task_vector(base: Mapping[str, torch.Tensor], seed: int) -> dict[str, torch.Tensor]:
    """Rank-16 plus noise for matrices (so SVD methods see structure), noise otherwise; float32 on base's device."""
    device = next(iter(base.values())).device
    generator = torch.Generator(device=device).manual_seed(seed)
    out = {}
    for key, value in base.items():
        noise = torch.randn(value.shape, generator=generator, device=device)
        if value.dim() == 2:
            rank = min(TASK_VECTOR_RANK, *value.shape)
            left = torch.randn(value.shape[0], rank, generator=generator, device=device)
            right = torch.randn(rank, value.shape[1], generator=generator, device=device)
            noise = (left @ right) / rank**0.5 + 0.1 * noise
        out[key] = noise * TASK_VECTOR_SCALE
    return out


def save_scratch(tensors: Mapping[str, torch.Tensor], path: Path, dtype: Optional[torch.dtype] = None) -> int:
    """Write a scratch safetensors file (temporary name, then rename; no fsync: these files die with the run)."""
    tmp = path.with_name(f".{path.name}.tmp")
    save_file({k: v.to(device="cpu", dtype=dtype or v.dtype).contiguous() for k, v in tensors.items()}, str(tmp))
    os.replace(tmp, path)
    return path.stat().st_size


@dataclass
class ExpertFiles:
    base: Path
    experts: list[Path]
    expert_bytes: int
    seconds: float


def write_experts(folder: Path, shapes: Mapping[str, tuple[int, ...]], tasks: int, dtype: torch.dtype,
                  seed: int = 0, device: str = "cpu") -> ExpertFiles:
    """θ₀ and θ_t = θ₀ + τ_t (t < tasks), generated in float32 on ``device`` and stored in ``dtype``.

    The same seed gives the same float32 values for every dtype on one device (bf16 files are their rounding);
    CPU and CUDA generators give different streams, so the device is recorded in the report.
    """
    start = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    base = random_base(shapes, seed, device)
    base_path = folder / "base.safetensors"
    save_scratch(base, base_path, dtype)
    paths, size = [], 0
    for t in range(tasks):
        delta = random_task_vector(base, seed * 1000 + t + 1)
        path = folder / f"expert{t:02d}.safetensors"
        size = save_scratch({k: base[k] + delta[k] for k in base}, path, dtype)
        paths.append(path)
        del delta
    return ExpertFiles(base_path, paths, size, time.perf_counter() - start)


def write_stats(folder: Path, shapes: Mapping[str, tuple[int, ...]], kind: str, sets: int = STAT_SETS,
                seed: int = 0, device: str = "cpu") -> list[Path]:
    """``sets`` seeded statistics files for the linear weights: SPD Grams (d_in × d_in) or positive Fishers.

    Gram = diag(u) + U Uᵀ/r with u ~ U(0.5, 1.5), U ∈ R^{d_in×32}: symmetric positive definite, and it stays so
    after RegMean's off-diagonal shrinkage (a convex combination with its diagonal). Fisher ~ U(0, 1) + 1e-3.
    """
    folder.mkdir(parents=True, exist_ok=True)
    keys = [k for k, s in shapes.items() if is_linear_weight(k, s)]
    paths = []
    for index in range(sets):
        generator = torch.Generator(device=device).manual_seed(seed * 1000 + 500 + index)
        tensors = {}
        for key in keys:
            shape = shapes[key]
            if kind == "grams":
                d = shape[1]
                factor = torch.randn(d, GRAM_RANK, generator=generator, device=device)
                gram = factor @ factor.T / GRAM_RANK
                gram.diagonal().add_(torch.rand(d, generator=generator, device=device) + 0.5)
                tensors[key] = gram
            elif kind == "fishers":
                tensors[key] = torch.rand(shape, generator=generator, device=device) + 1e-3
            else:
                raise ValueError(f"unknown statistics kind {kind!r}")
        path = folder / f"{kind}{index}.safetensors"
        save_scratch(tensors, path)
        paths.append(path)
    return paths


# -- measuring ---------------------------------------------------------------------------------------------------

def timed(fn: Callable[[], Any], device: str) -> tuple[float, Any, Optional[float]]:
    """Seconds of one call (CUDA synchronised), its result, and the peak GPU memory it allocated (GiB)."""
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    synchronize(device)
    start = time.perf_counter()
    result = fn()
    synchronize(device)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None
    return seconds, result, peak


def compare(accelerated: Mapping[str, torch.Tensor], reference: Mapping[str, torch.Tensor],
            base: Mapping[str, torch.Tensor]) -> dict:
    """max |θ_acc − θ_cpu|, and ‖θ_acc − θ_cpu‖_F / ‖θ_cpu − θ₀‖_F over every floating tensor (in float64)."""
    diff_sq, delta_sq, max_abs, worst, max_delta = 0.0, 0.0, 0.0, None, 0.0
    for key, ref in reference.items():
        if not ref.is_floating_point():
            continue
        ref64 = ref.double()
        diff = accelerated[key].to("cpu", torch.float64) - ref64
        delta = ref64 - base[key].double()
        diff_sq += float(diff.square().sum())
        delta_sq += float(delta.square().sum())
        max_delta = max(max_delta, float(delta.abs().max()))
        key_max = float(diff.abs().max())
        if key_max > max_abs or worst is None:
            max_abs, worst = key_max, key
    rel = math.sqrt(diff_sq) / math.sqrt(delta_sq) if delta_sq > 0 else (0.0 if diff_sq == 0 else math.inf)
    return {"max_abs_diff": max_abs, "max_abs_merged_task_vector": max_delta, "rel_fro": rel, "worst_key": worst}


def block_exclusion(shapes: Mapping[str, tuple[int, ...]], blocks: Optional[int]) -> tuple[str, ...]:
    """WalkOptions.exclude regexes that keep transformer blocks ``blocks`` and later at the base (None: exclude none)."""
    layers = 1 + max(int(k.split(".resblocks.")[1].split(".")[0]) for k in shapes if ".resblocks." in k)
    if blocks is None or blocks >= layers:
        return ()
    return tuple(rf"\.resblocks\.{i}\." for i in range(blocks, layers))


class Budget:
    """Wall-clock budget: once spent, no new measurement starts (the report lists what was skipped)."""

    def __init__(self, seconds: Optional[float]):
        self.seconds, self.start = seconds, time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def spent(self) -> bool:
        return self.seconds is not None and self.elapsed() > self.seconds


def environment(device: str) -> dict:
    env = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
           "host": socket.gethostname(), "platform": platform.platform(), "machine": platform.machine(),
           "python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "nbmerge": __version__, "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
           "float32_matmul_precision": torch.get_float32_matmul_precision(), "accelerator": device,
           "gpu": None}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        env["gpu"] = {"name": torch.cuda.get_device_name(device), "memory_gib": round(props.total_memory / 2**30, 1),
                      "capability": f"{props.major}.{props.minor}", "multiprocessors": props.multi_processor_count,
                      "cudnn": torch.backends.cudnn.version()}
    return env


#: registered methods whose kernel another entry already times: RegMean++ merges with RegMean's kernel (its own part
#: is recording Grams through a model, which the check's random checkpoints have none of)
SAME_KERNEL = {"regmean_plusplus": "regmean"}


def checked_on_gpu(method) -> bool:
    """Single models of dense experts with a kernel of their own (task-aware and LoRA-only methods are not, nor a
    method whose coefficients are learned: AdaMerging's merge is task arithmetic's weighted sum)."""
    return not (method.task_aware or method.lora_only or method.learned or method.name in SAME_KERNEL)


def _stat_kwargs(method: str, stats: Mapping[str, list[Path]], tasks: int) -> dict:
    needs = get_method(method).needs
    return {name: [stats[name][t % len(stats[name])] for t in range(tasks)] for name in needs}


def warm_up(methods: Sequence[str], device: str, seed: int) -> None:
    """One untimed merge per method on toy in-memory tensors: CUDA context, cuBLAS/cuSOLVER handles, kernels."""
    shapes, _ = vit_shapes(QUICK_TOWERS["b32"])
    base = random_base(shapes, seed, "cpu")
    experts = [{k: base[k] + v.cpu() for k, v in random_task_vector(base, seed + 1 + t).items()} for t in range(3)]
    stats = {"grams": [{k: torch.eye(s[1]) for k, s in shapes.items() if is_linear_weight(k, s)}] * 3,
             "fishers": [{k: torch.ones(s) for k, s in shapes.items() if is_linear_weight(k, s)}] * 3}
    for method in methods:
        count = get_method(method).max_experts or len(experts)
        kwargs = {name: stats[name][:count] for name in get_method(method).needs}
        merge(method, base, experts[:count], walk=WalkOptions(device=device), **kwargs)
    synchronize(device)


# -- the check ---------------------------------------------------------------------------------------------------

def run_check(out: str | os.PathLike, *, suites: Sequence[str] = tuple(SUITES), methods: Optional[Sequence[str]] = None,
              dtypes: Sequence[str] = ("float32", "bfloat16"), repeats: int = 1, device: str = "cuda",
              cpu_reference: Sequence[str] = ("b32-8", "l14-8"), compare_blocks: Optional[int] = 1,
              quick: bool = False, workdir: Optional[str | os.PathLike] = None, seed: int = 0,
              budget_s: Optional[float] = 450.0, command: str = "") -> dict:
    """Time every method on ``device`` and compare it with the CPU; write ``<out>.json`` and ``<out>.md``.

    Work goes in blocks of one input dtype and one shape (float32 b32, float32 l14, bfloat16 b32, ...), each
    writing that shape's experts once, running its 8-task suite (with the CPU comparison) before its 20-task
    one, and rewriting the report, so a spent budget or an interrupted run leaves what was measured, the
    comparisons first. Returns the report; ``report["check"]["passed"]`` is False if a comparison failed.
    """
    device = resolve_device(device)
    # the single-model methods (a task-aware method's T models are not compared tensor by tensor here)
    methods = list(methods) if methods else [m.name for m in all_methods() if checked_on_gpu(m)]
    for method in methods:
        if get_method(method).task_aware:  # unknown names fail here too, before anything is written
            raise ValueError(f"{method} is task-aware (one model per task): the GPU check compares single models")
    dtypes = [_dtype_name(d) for d in dtypes]
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite {unknown[0]!r}; valid: {', '.join(SUITES)}")
    cpu_reference = expand_reference(cpu_reference, suites)
    towers = QUICK_TOWERS if quick else TOWERS
    budget = Budget(budget_s)
    report: dict = {
        "command": command, "environment": environment(device),
        "options": {"suites": list(suites), "methods": methods, "dtypes": dtypes, "repeats": repeats,
                    "cpu_reference": cpu_reference, "compare_blocks": compare_blocks, "quick": quick, "seed": seed,
                    "budget_s": budget_s, "tolerance_rel_fro": TOLERANCE, "compare_params": COMPARE_PARAMS,
                    "stat_sets": STAT_SETS},
        "shapes": {}, "blocks": [], "results": [], "check": {"passed": True, "failures": [], "compared": 0}}
    own_workdir = workdir is None
    root = Path(tempfile.mkdtemp(prefix="nbmerge-gpu-check-") if own_workdir else workdir)
    shapes = list(dict.fromkeys(SUITES[s][0] for s in suites))
    try:
        if device != "cpu":
            report["environment"]["warm_up_s"] = round(timed(lambda: warm_up(methods, device, seed), device)[0], 2)
        for dtype_name in dtypes:
            for shape in shapes:
                shape_suites = sorted((s for s in suites if SUITES[s][0] == shape), key=lambda s: SUITES[s][1])
                if budget.spent():
                    report["results"].extend(_skipped(s, dtype_name, m, "time budget spent") for s in shape_suites
                                             for m in methods)
                    continue
                _run_block(report, root, shape, towers[shape], dtype_name, shape_suites, methods, repeats, device,
                           cpu_reference, compare_blocks, seed, budget)
                report["total_s"] = round(budget.elapsed(), 1)
                write_report(report, out)
    finally:
        report["total_s"] = round(budget.elapsed(), 1)
        write_report(report, out)
        shutil.rmtree(root if own_workdir else root / "stats", ignore_errors=True)
    return report


def expand_reference(names: Sequence[str], suites: Sequence[str]) -> list[str]:
    """Suite names stay; a shape name (``b32``) stands for every requested suite of that shape; ``none``: none."""
    out = []
    for name in names:
        if name == "none":
            continue
        if name in SUITES:
            out.append(name)
        elif name in TOWERS:
            out.extend(s for s in suites if SUITES[s][0] == name)
        else:
            raise ValueError(f"--cpu-reference: unknown suite or shape {name!r}; valid: {', '.join(SUITES)}, "
                             f"{', '.join(TOWERS)}, none")
    return list(dict.fromkeys(out))


def _dtype_name(name: str) -> str:
    if name not in DTYPE_ALIASES:
        raise ValueError(f"unknown dtype {name!r}; valid: {', '.join(DTYPE_ALIASES)}")
    return DTYPE_ALIASES[name]


def _shape_info(report: dict, root: Path, shape: str, tower: Mapping[str, Any], methods: list[str], device: str,
                compare_blocks: Optional[int], seed: int) -> dict:
    """The shape's entry in the report, with its statistics files (written once, kept for every dtype)."""
    if shape in report["shapes"]:
        return report["shapes"][shape]
    shapes, shapes_from = vit_shapes(tower)
    start = time.perf_counter()
    needs = sorted({n for m in methods for n in get_method(m).needs})
    stats = {kind: write_stats(root / "stats" / shape, shapes, kind, seed=seed, device=device) for kind in needs}
    info = {"tower": dict(tower), "shapes_from": shapes_from, "tensors": len(shapes),
            "parameters": sum(math.prod(s) for s in shapes.values()), "generated_on": device,
            "compare_exclude": list(block_exclusion(shapes, compare_blocks)),
            "stats_bytes": {kind: sum(p.stat().st_size for p in paths) for kind, paths in stats.items()},
            "stats_write_s": round(time.perf_counter() - start, 1), "experts_written": {},
            "_shapes": shapes, "_stats": stats}
    report["shapes"][shape] = info
    return info


def _run_block(report: dict, root: Path, shape: str, tower: Mapping[str, Any], dtype_name: str, suites: list[str],
               methods: list[str], repeats: int, device: str, cpu_reference: list[str],
               compare_blocks: Optional[int], seed: int, budget: Budget) -> None:
    block_start = budget.elapsed()
    info = _shape_info(report, root, shape, tower, methods, device, compare_blocks, seed)
    shapes, stats = info["_shapes"], info["_stats"]
    folder = root / f"{shape}-{dtype_name}"
    max_tasks = max(SUITES[s][1] for s in suites)
    files = write_experts(folder, shapes, max_tasks, DTYPES[dtype_name], seed=seed, device=device)
    info["experts_written"][dtype_name] = {"tasks": max_tasks, "expert_bytes": files.expert_bytes,
                                           "all_bytes": files.expert_bytes * max_tasks,
                                           "write_s": round(files.seconds, 1)}
    base_state = None
    try:
        for suite in suites:
            for method in methods:
                tasks = min(SUITES[suite][1], get_method(method).max_experts or SUITES[suite][1])  # SLERP: one
                experts = [str(p) for p in files.experts[:tasks]]
                if budget.spent():
                    report["results"].append(_skipped(suite, dtype_name, method, "time budget spent"))
                    continue
                row = {"suite": suite, "shape": shape, "tasks": tasks, "dtype": dtype_name, "method": method,
                       "device": device, "stats": sorted(get_method(method).needs)}
                report["results"].append(row)
                kwargs = _stat_kwargs(method, stats, tasks)
                try:
                    _time_method(row, method, str(files.base), experts, kwargs, device, repeats)
                    if suite in cpu_reference:
                        if base_state is None:
                            base_state = load_state_dict(files.base)
                        row["compare"] = _compare_run(method, str(files.base), experts, kwargs, device, shapes,
                                                      compare_blocks, base_state, dtype_name)
                        report["check"]["compared"] += 1
                        if not row["compare"]["passed"]:
                            c = row["compare"]
                            report["check"]["failures"].append(
                                f"{suite} {dtype_name} {method}: rel_fro {c['rel_fro']:.3g} > {c['tolerance']:g}, "
                                f"and {c['accelerator_vs_float64']:.3g} from the float64 merge against the CPU's "
                                f"{c['cpu_vs_float64']:.3g}")
                except Exception as exc:  # recorded as a failure; the other methods still run (fail loudly, lose nothing)
                    row["error"] = f"{type(exc).__name__}: {exc}"
                    report["check"]["failures"].append(f"{suite} {dtype_name} {method}: {row['error']}")
                report["check"]["passed"] = not report["check"]["failures"]
                if device.startswith("cuda"):
                    torch.cuda.empty_cache()
    finally:
        # Each block's experts go before the next are written: L/14 float32 ×20 is 24 GB of a 64 GB disk.
        shutil.rmtree(folder, ignore_errors=True)
    report["blocks"].append({"shape": shape, "dtype": dtype_name, "seconds": round(budget.elapsed() - block_start, 1),
                             "experts_write_s": round(files.seconds, 1)})


def _time_method(row: dict, method: str, base: str, experts: list[str], kwargs: dict, device: str,
                 repeats: int) -> None:
    walk = WalkOptions(device=device)
    seconds, peaks = [], []
    for _ in range(repeats):
        s, merged, peak = timed(lambda: merge(method, base, experts, walk=walk, **kwargs), device)
        seconds.append(round(s, 4))
        peaks.append(peak)
        del merged
    row.update(seconds=seconds, best_s=min(seconds), peak_gpu_gib=None if peaks[0] is None else round(max(peaks), 3))


def _skipped(suite: str, dtype: str, method: str, reason: str) -> dict:
    shape, tasks = SUITES[suite]
    return {"suite": suite, "shape": shape, "tasks": tasks, "dtype": dtype, "method": method, "skipped": reason}


def _compare_run(method: str, base: str, experts: list[str], kwargs: dict, device: str,
                 shapes: Mapping[str, tuple[int, ...]], compare_blocks: Optional[int],
                 base_state: Mapping[str, torch.Tensor], dtype_name: str) -> dict:
    """The accelerator's merge against the CPU's, and both against a CPU merge computed in float64.

    Passes when ``rel`` (accelerator vs CPU) is within the tolerance, or when the accelerator is no further from the
    float64 merge than ``ROUNDOFF_FACTOR`` times the CPU's own float32 result is: a merge whose solve or SVD amplifies
    round-off (an ill-conditioned system, close singular values) differs between any two float32 implementations
    by about that much, and the CPU is no more right than the accelerator.
    """
    exclude = block_exclusion(shapes, compare_blocks)
    params = COMPARE_PARAMS.get(method, {})
    cpu_s, reference, _ = timed(lambda: merge(method, base, experts, params, walk=WalkOptions(device="cpu", exclude=exclude),
                                              **kwargs), "cpu")
    acc_s, accelerated, _ = timed(lambda: merge(method, base, experts, params,
                                                walk=WalkOptions(device=device, exclude=exclude), **kwargs), device)
    result = compare(accelerated, reference, base_state)
    exact = merge(method, base, experts, params, walk=WalkOptions(device="cpu", exclude=exclude,
                                                                  compute_dtype="float64"), **kwargs)
    cpu_vs_f64 = compare(reference, exact, base_state)["rel_fro"]
    acc_vs_f64 = compare(accelerated, exact, base_state)["rel_fro"]
    tolerance = TOLERANCE[dtype_name]
    within = math.isfinite(result["rel_fro"]) and result["rel_fro"] <= tolerance
    roundoff = math.isfinite(acc_vs_f64) and acc_vs_f64 <= max(tolerance, ROUNDOFF_FACTOR * cpu_vs_f64)
    return {"blocks": "all" if not exclude else compare_blocks, "params": params, "cpu_s": round(cpu_s, 3),
            "accelerator_s": round(acc_s, 3), **result, "cpu_vs_float64": cpu_vs_f64,
            "accelerator_vs_float64": acc_vs_f64, "tolerance": tolerance, "passed": within or roundoff,
            "passed_by": "tolerance" if within else ("float32 round-off" if roundoff else None)}


# -- the report --------------------------------------------------------------------------------------------------

def _fmt_rel(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.2e}"


def _ok(compare: dict) -> str:
    if not compare["passed"]:
        return "**NO**"
    return "round-off" if compare.get("passed_by") == "float32 round-off" else "yes"


def _fmt_s(value: Optional[float]) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def render_markdown(report: dict) -> str:
    env, options, check = report["environment"], report["options"], report["check"]
    gpu = env["gpu"]
    device_words = f"{gpu['name']} ({gpu['memory_gib']} GiB, sm {gpu['capability']})" if gpu else env["accelerator"]
    verdict = ("PASSED" if check["passed"] else "FAILED") + f": {check['compared']} CPU comparisons, " \
        f"{sum('error' in r for r in report['results'])} errors"
    lines = [
        "# nbmerge GPU check: every merge method on open_clip ViT-B/32 and ViT-L/14 image towers",
        "",
        f"**{verdict}**" + ("" if check["passed"] else " — " + "; ".join(check["failures"])),
        "",
        f"Generated by `{report.get('command') or 'python -m bench.gpu'}` on {env['date_utc']}, "
        f"in {report.get('total_s', '?')} s. Accelerator: {device_words}; torch {env['torch']}, CUDA {env['cuda']}, "
        f"nbmerge {env['nbmerge']}, Python {env['python']} on {env['machine']} ({env['cpu_count']} CPUs, "
        f"{env['torch_threads']} torch threads), float32 matmul precision `{env['float32_matmul_precision']}`.",
        "",
        "Inputs: a random base (N(0, 0.05²)) and experts θ_t = θ₀ + τ_t with seeded random task vectors (rank 16 "
        "plus noise, ‖entry‖ ≈ 0.01), written once per shape and input dtype as safetensors and read lazily by "
        "the walker; the 8-task suites read the first 8 of the 20 experts. Every method runs at its registered "
        "defaults with `WalkOptions(device=...)`, from files to a merged state dict on the device. RegMean gets seeded "
        f"SPD Grams and Fisher seeded positive Fishers for the linear weights ({options['stat_sets']} distinct "
        f"sets, expert t uses set t mod {options['stat_sets']}); BMM runs data-free (its Grams are optional and not "
        "given).",
        "",
    ]
    for name, info in report["shapes"].items():
        written = ", ".join(f"{d}: {w['tasks']} × {w['expert_bytes'] / 1e6:.0f} MB in {w['write_s']} s"
                            for d, w in info["experts_written"].items())
        lines.append(f"* `{name}`: {info['parameters'] / 1e6:.1f} M parameters in {info['tensors']} tensors "
                     f"(`{json.dumps(info['tower'])}`, shapes from {info['shapes_from']}); experts {written}.")
    if report.get("blocks"):
        lines.append("* Blocks (experts written, then every suite timed and compared): " + ", ".join(
            f"{b['shape']} {b['dtype']} {b['seconds']} s (writing experts {b['experts_write_s']} s)"
            for b in report["blocks"]) + f"; warm-up {env.get('warm_up_s', '—')} s.")
    lines += ["", "## Time per merge (seconds, best of "
              f"{options['repeats']}; peak GPU memory allocated in GiB)", ""]
    rows = report["results"]
    columns = [(s, d) for s in options["suites"] for d in options["dtypes"]]
    lines.append("| method | " + " | ".join(f"{s} {d}" for s, d in columns) + " |")
    lines.append("|---|" + "---|" * len(columns))
    for method in options["methods"]:
        cells = []
        for suite, dtype in columns:
            row = next((r for r in rows if r["method"] == method and r["suite"] == suite and r["dtype"] == dtype),
                       None)
            if row is None:
                cells.append("—")
            elif "skipped" in row:
                cells.append("skipped")
            elif "best_s" not in row:
                cells.append("**error**")
            else:
                peak = "" if row["peak_gpu_gib"] is None else f" ({row['peak_gpu_gib']:.1f})"
                cells.append(_fmt_s(row["best_s"]) + peak)
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    compared = [r for r in rows if "compare" in r]
    if compared:
        blocks = compared[0]["compare"]["blocks"]
        scope = "the whole tower" if blocks == "all" else (f"the first {blocks} transformer block(s) plus the "
                                                           "embeddings, conv1, LayerNorms and proj (later blocks "
                                                           "excluded, i.e. kept at θ₀, on both sides)")
        lines += ["", f"## Accelerator vs CPU, on {scope}", "",
                  "rel = ‖θ_acc − θ_cpu‖_F / ‖θ_cpu − θ₀‖_F (relative to the merged task vector); max |Δ| is "
                  "the largest entry difference, beside the largest merged task-vector entry. Times are of this "
                  "reduced merge on each side. *vs f64*: each side's rel against a CPU merge computed in float64 "
                  "(`WalkOptions(compute_dtype='float64')`): how far float32 round-off moves the merge. A row past "
                  f"the tolerance still passes when the accelerator's error against float64 is at most "
                  f"{ROUNDOFF_FACTOR:g} × the CPU's (*ok*: `round-off`)."
                  + (f" Comparison parameters differing from the defaults: "
                                                   f"`{json.dumps(options['compare_params'])}`."
                                                   if options["compare_params"] else ""),
                  "", "| suite | dtype | method | CPU s | acc. s | speed-up | max abs diff | max abs τ_M | rel | "
                  "CPU vs f64 | acc. vs f64 | tolerance | ok |", "|" + "---|" * 13]
        for row in compared:
            c = row["compare"]
            speedup = c["cpu_s"] / c["accelerator_s"] if c["accelerator_s"] > 0 else math.inf
            lines.append(f"| {row['suite']} | {row['dtype']} | {row['method']} | {_fmt_s(c['cpu_s'])} | "
                         f"{_fmt_s(c['accelerator_s'])} | {speedup:.1f}× | {c['max_abs_diff']:.2e} | "
                         f"{c['max_abs_merged_task_vector']:.2e} | {c['rel_fro']:.2e} | "
                         f"{_fmt_rel(c.get('cpu_vs_float64'))} | {_fmt_rel(c.get('accelerator_vs_float64'))} | "
                         f"{c['tolerance']:g} | {_ok(c)} |")
    skipped = [r for r in rows if "skipped" in r]
    lines += ["", "## Notes", "",
              f"* CPU comparisons ran on {', '.join(options['cpu_reference']) or 'no suite'} only "
              "(`--cpu-reference`): a CPU merge of the whole ViT-L/14 tower takes minutes per SVD method and "
              "far longer for WUDI's 300 Adam steps, beyond an 8-minute device call.",
              "* Grams/Fishers are synthetic (SPD diag(u) + UUᵀ/32; U(0, 1) + 1e-3), for the linear weights "
              "(`in_proj_weight`, `out_proj`, `c_fc`, `c_proj`); timings do not depend on their values.",
              "* Tolerances (relative Frobenius error of the merged task vector): "
              + ", ".join(f"{d} {t:g}" for d, t in options["tolerance_rel_fro"].items())
              + "; every kernel computes in float32 or float64 whatever the input dtype, and bf16 results are "
                "rounded once at the end.",
              "* Random task vectors from the accelerator's generator (CUDA and CPU streams differ), so numbers "
              "from a CPU-only run are not the same experts."]
    if skipped:
        lines.append(f"* {len(skipped)} measurement(s) skipped ({skipped[0]['skipped']}): "
                     + ", ".join(sorted({f"{r['suite']} {r['dtype']}" for r in skipped})) + ".")
    return "\n".join(lines) + "\n"


def write_report(report: dict, out: str | os.PathLike) -> None:
    public = dict(report, shapes={name: {k: v for k, v in info.items() if not k.startswith("_")}
                                  for name, info in report["shapes"].items()})
    write_pair(out, public, render_markdown(report), default=str)


def _csv(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports/gpu_check", help="writes <out>.json and <out>.md")
    parser.add_argument("--suites", default=",".join(SUITES), help=f"comma-separated, of {', '.join(SUITES)}")
    parser.add_argument("--methods", default="", help="comma-separated registered methods (default: all)")
    parser.add_argument("--dtypes", default="float32,bfloat16", help="input dtypes: float32, bfloat16")
    parser.add_argument("--repeats", type=int, default=1, help="timed merges per cell (the best is reported)")
    parser.add_argument("--cpu-only", action="store_true", help="the CPU plays the accelerator (smoke test)")
    parser.add_argument("--device", default="cuda", help="the accelerator (ignored with --cpu-only)")
    parser.add_argument("--quick", action="store_true", help="toy widths with the same layouts (tests)")
    parser.add_argument("--cpu-reference", default="b32-8,l14-8",
                        help="suites (or shapes: b32, l14) compared with the CPU; 'none' for none")
    parser.add_argument("--compare-blocks", default="1",
                        help="transformer blocks merged in the CPU comparison ('all' for the whole tower)")
    parser.add_argument("--workdir", default=None, help="scratch folder for the experts (default: a temp dir)")
    parser.add_argument("--budget-s", type=float, default=450.0,
                        help="no new measurement starts after this many seconds (0: no limit)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    blocks = None if args.compare_blocks == "all" else int(args.compare_blocks)
    report = run_check(args.out, suites=_csv(args.suites), methods=_csv(args.methods) or None,
                       dtypes=_csv(args.dtypes), repeats=args.repeats, device="cpu" if args.cpu_only else args.device,
                       cpu_reference=_csv(args.cpu_reference), compare_blocks=blocks, quick=args.quick,
                       workdir=args.workdir, seed=args.seed, budget_s=args.budget_s or None,
                       command="python -m bench.gpu " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(f"wrote {args.out}.json and {args.out}.md ({report['total_s']} s)")
    if not report["check"]["passed"]:
        print("GPU CHECK FAILED:\n  " + "\n  ".join(report["check"]["failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
