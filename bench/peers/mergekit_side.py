"""mergekit side of the baselines' peer check. Runs in mergekit's own venv; imports nothing from nbmerge.

Usage: <mergekit-python> mergekit_side.py WORKDIR JOBS_JSON
Reads WORKDIR/base.safetensors and WORKDIR/experts/*.safetensors (sorted); for each job merges every tensor with
mergekit 0.1.5's in-memory API, ``merge_tensors([θ₀, θ_1, …, θ_T], method, base_index=0, parameters=…,
dtype=float32)``, tensor by tensor as its graph executor does, and writes WORKDIR/mergekit/<job>.safetensors and the
wall time (the merge calls, not file loading) to WORKDIR/mergekit/timings.json.
"""

import json
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def main(workdir, jobs_json):
    work = Path(workdir)
    jobs = json.loads(Path(jobs_json).read_text())
    torch.set_num_threads(int(jobs["threads"]))
    from mergekit.merge_methods import merge_tensors

    base = load_file(str(work / "base.safetensors"))
    experts = [load_file(str(p)) for p in sorted((work / "experts").glob("*.safetensors"))]
    out_dir = work / "mergekit"
    out_dir.mkdir(exist_ok=True)
    timings_path = out_dir / "timings.json"
    timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
    for job in jobs["jobs"]:
        name, method, params = job["name"], job["method"], job.get("params", {})
        # "experts": only the first N (slerp takes one); "with_base": false merges the experts alone (karcher treats a
        # base as one more input); "seeds": per tensor, torch's global seed set just before its call (DELLA's masks)
        chosen = experts[:job["experts"]] if job.get("experts") else experts
        with_base, seeds = job.get("with_base", True), job.get("seeds") or {}
        merged = {}
        start = time.perf_counter()
        for key, value in base.items():
            if not value.is_floating_point():
                merged[key] = value
                continue
            if key in seeds:
                torch.manual_seed(seeds[key])
            inputs = [value, *[e[key] for e in chosen]] if with_base else [e[key] for e in chosen]
            merged[key] = merge_tensors(inputs, method, base_index=0 if with_base else None, parameters=params,
                                        dtype=torch.float32)
        elapsed = time.perf_counter() - start
        tmp = out_dir / f".{name}.safetensors.tmp"
        save_file({k: v.detach().contiguous() for k, v in merged.items()}, str(tmp))
        tmp.replace(out_dir / f"{name}.safetensors")
        timings[name] = elapsed
        timings_path.write_text(json.dumps(timings, indent=1))
        print(f"mergekit {name}: {elapsed:.2f}s", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
