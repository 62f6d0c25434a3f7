"""FusionBench side of the peer check. Runs in FusionBench's own venv; imports nothing from nbmerge.

Usage: <fusionbench-python> fusionbench_side.py WORKDIR JOBS_JSON
Reads WORKDIR/base.safetensors, WORKDIR/experts/*.safetensors (sorted), WORKDIR/grams/*.safetensors;
for each job runs the FusionBench function the same way its algorithm class does (task vectors from
state_dict_sub, merge, θ₀ + α·τ), writes WORKDIR/fusionbench/<job>.safetensors (unless the job says
"save": false, a run for timing only) and appends the timing to WORKDIR/fusionbench/timings.json (or the
spec's "timings_file"). Wall time covers task-vector computation, the merge and the final addition
(not file loading); stdout from FusionBench's prints is discarded.
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def load(path):
    return load_file(str(path))


def tall_masks(task_vectors, experts, base, multi_task, lam):
    """(τ_MTL, the T masks) on flat vectors: τ_MTL the sum ("ta") or TIES at 20 % summed ("ties"), the masks by
    FusionBench's port of the official TALL-mask function (parameter space, strict >)."""
    from fusion_bench.method.tall_mask.utils import generate_task_masks
    from fusion_bench.method.ties_merging.ties_merging_utils import state_dict_to_vector, ties_merging

    flat_tv = torch.vstack([state_dict_to_vector(tv, []) for tv in task_vectors])
    flat_ft = torch.vstack([state_dict_to_vector(e, []) for e in experts])
    multi = flat_tv.sum(0) if multi_task == "ta" else ties_merging(flat_tv, reset_thresh=20, merge_func="sum")
    masks = generate_task_masks(flat_tv, flat_ft, state_dict_to_vector(base, []), tv=multi, tall_mask_lambda=lam)
    return multi, masks


def rename(k):
    """FusionBench keys Grams by module name (param name minus ".weight"), so open_clip's `attn.in_proj_weight` is
    presented as `attn.in_proj.weight`: a renaming, not a change of math."""
    return k[: -len("in_proj_weight")] + "in_proj.weight" if k.endswith("in_proj_weight") else k


def run_job(method, params, keys, b, exps, grams):
    """One FusionBench merge, timed: (the merged state or None, the per-task states or None, seconds)."""
    from fusion_bench.method.isotropic_merging.iso_utils import iso_c, iso_cts
    from fusion_bench.method.regmean.regmean import merging_with_regmean_weights
    from fusion_bench.method.task_singular_vector.utils.TSVM_utils import compute_and_sum_svd_mem_reduction
    from fusion_bench.method.ties_merging.ties_merging_utils import (
        state_dict_to_vector,
        ties_merging,
        vector_to_state_dict,
    )
    from fusion_bench.method.wudi.wudi import wudi_merging
    from fusion_bench.utils.state_dict_arithmetic import state_dict_add, state_dict_mul, state_dict_sub

    per_task = None
    start = time.perf_counter()
    if method == "regmean":
        param_dict = {rename(k): [e[k] for e in exps] for k in keys}
        merged_named = merging_with_regmean_weights(param_dict, grams, params["offdiag_scale"], True)
        merged = {k: merged_named[rename(k)] for k in keys}
        scale = 1.0
    else:
        task_vectors = [state_dict_sub(e, b) for e in exps]
        exps_for_masks = list(exps) if method.startswith("consensus") or method == "tall" else []
        exps.clear()
        scale = params.get("scale", 1.0)
        if method == "task_arithmetic":
            total = task_vectors[0]
            for tv in task_vectors[1:]:
                total = state_dict_add(total, tv)
            tau = total
        elif method == "ties":
            flat = torch.vstack([state_dict_to_vector(tv, []) for tv in task_vectors])
            merged_flat = ties_merging(flat, reset_thresh=params["reset_thresh"],
                                       merge_func=params["merge"])
            tau = vector_to_state_dict(merged_flat, task_vectors[0], [])
        elif method == "tsv":
            tau = compute_and_sum_svd_mem_reduction(task_vectors, exclude_keys=[], accelerator="cpu")
        elif method == "iso_c":
            tau = iso_c(task_vectors, accelerator="cpu", exclude_keys=[])
        elif method == "iso_cts":
            tau = iso_cts(task_vectors, params["common_space_fraction"], accelerator="cpu",
                          exclude_keys=[])
        elif method == "emr":
            # task-aware: one model per task, θ₀ + (τ_uni ⊙ m_t)·λ_t, each written as <name>_t<t>
            from fusion_bench.method.emr_merging.utils import emr_merge

            unified, masks, rescalers = emr_merge(task_vectors)
            per_task = [{k: b[k] + unified[k] * masks[k][t] * rescalers[t] for k in keys}
                        for t in range(len(task_vectors))]
            tau = None
        elif method == "tall":
            # task-aware: θ₀ + m_t ⊙ τ_MTL per task, the masks by FusionBench's port of the official function
            multi, masks = tall_masks(task_vectors, exps_for_masks, b, "ta", params["lam"])
            per_task = []
            for t in range(len(task_vectors)):
                tv_t = vector_to_state_dict(multi * masks[t], {k: v.clone() for k, v in b.items()}, [])
                per_task.append(state_dict_add(b, tv_t))
            tau = None
            del masks
        elif method in ("consensus_ta", "consensus_ties"):
            # TALL masks by FusionBench's port of the official function (flat vectors, parameter space,
            # strict >); the consensus count has no FusionBench function: c = Σ_t m_t ≥ k, as the
            # official code builds it
            multi, masks = tall_masks(task_vectors, exps_for_masks, b, method.removeprefix("consensus_"),
                                      params["lam"])
            consensus = masks.float().sum(0) >= params["k"]
            tau = vector_to_state_dict(multi * consensus, {k: v.clone() for k, v in task_vectors[0].items()},
                                       [])
            del masks
        elif method == "wudi":
            tau = wudi_merging(task_vectors, accelerator="cpu", iter_num=params["iters"], exclude_keys=[])
            tau = {k: v.detach() for k, v in tau.items()}
        else:
            raise SystemExit(f"unknown method {method}")
        merged = state_dict_add(b, state_dict_mul(tau, scale)) if tau is not None else None
    elapsed = time.perf_counter() - start
    return merged, per_task, elapsed


def main(workdir, jobs_json):
    work = Path(workdir)
    jobs = json.loads(Path(jobs_json).read_text())
    torch.set_num_threads(int(jobs["threads"]))

    base = load(work / "base.safetensors")
    expert_paths = sorted((work / "experts").glob("*.safetensors"))
    out_dir = work / "fusionbench"
    out_dir.mkdir(exist_ok=True)
    timings_path = out_dir / jobs.get("timings_file", "timings.json")
    timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
    failures_path = out_dir / "failures.json"
    failures = json.loads(failures_path.read_text()) if failures_path.exists() else {}

    for job in jobs["jobs"]:
        name, method, params = job["name"], job["method"], job.get("params", {})
        keys = job.get("keys") or list(base)
        b = {k: base[k] for k in keys}
        # Loaded per job and released once the task vectors exist, to keep the peak memory of the
        # whole-model TIES vectors within a 24 GB machine.
        exps = [{k: v for k, v in load(p).items() if k in b} for p in expert_paths]
        grams = None
        if method == "regmean":
            # FusionBench keys Grams by module name (param name minus ".weight"), so open_clip's
            # `attn.in_proj_weight` is presented as `attn.in_proj.weight` — a renaming, not a change of math.
            gram_files = [load(p) for p in sorted((work / "grams").glob("*.safetensors"))]
            grams = [{rename(k)[: -len(".weight")]: g for k, g in gf.items()} for gf in gram_files]
        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                merged, per_task, elapsed = run_job(method, params, keys, b, exps, grams)
        except torch.linalg.LinAlgError as err:  # FusionBench's own failure: recorded, the other jobs go on
            if not job.get("save", True):  # a timing-only run: no time for it, the first run's record stands
                print(f"fusionbench {name}: failed in a timing run ({type(err).__name__})", flush=True)
                continue
            failures[name] = f"{type(err).__name__}: {' '.join(str(err).split())}"
            failures_path.write_text(json.dumps(failures, indent=1))
            timings.pop(name, None)
            timings_path.write_text(json.dumps(timings, indent=1))
            (out_dir / f"{name}.safetensors").unlink(missing_ok=True)
            print(f"fusionbench {name}: failed ({failures[name]})", flush=True)
            continue
        del exps
        timings[name] = elapsed
        timings_path.write_text(json.dumps(timings, indent=1))
        print(f"fusionbench {name}: {elapsed:.2f}s", flush=True)
        if not job.get("save", True):
            continue
        failures.pop(name, None)
        failures_path.write_text(json.dumps(failures, indent=1))
        outputs = {name: merged} if merged is not None else {f"{name}_t{t}": m for t, m in enumerate(per_task)}
        for out_name, state in outputs.items():
            tmp = out_dir / f".{out_name}.safetensors.tmp"
            save_file({k: v.detach().contiguous() for k, v in state.items()}, str(tmp))
            tmp.replace(out_dir / f"{out_name}.safetensors")
        del merged, outputs
        per_task = None


if __name__ == "__main__":
    main(*sys.argv[1:3])
