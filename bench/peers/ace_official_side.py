"""Official side of the ACE peer check. Imports nothing from nbmerge; no official code is copied here.

Usage: <python> ace_official_side.py ACE_REPO JOBS_JSON
ACE_REPO is a checkout/export of unravel-xu/ACE-Merging. Only ``src/merge/strategy.py`` is imported, by file path,
so the rest of the repository (open_clip, transformers, its data) is not needed. For each job it reads
``<input>/base.safetensors`` and ``<input>/experts/*.safetensors`` (sorted), forms the task vectors as the
official ``TaskVector.compute`` does (θ_t − θ₀ in the checkpoint dtype), calls
``MergeStrategy(keys, task_vectors, "cpu").ace_merging(eps=..., k_frac=...)`` and applies the result as its
``apply_to_model`` does (θ₀ + s·τ). Writes the merged task vector τ to ``<tau_output>`` and the merged
weights to ``<output>`` (safetensors), the timing into JOBS_JSON's ``timings`` file. Wall time covers
ace_merging and the addition, not file loading: the fastest of ``repeats`` runs.

float64 jobs run under ``torch.set_default_dtype(torch.float64)``: the official function allocates its Gram sum
and identity with the default dtype, so without it a float64 input is silently accumulated in float32.
"""

import contextlib
import hashlib
import importlib.util
import inspect
import io
import json
import sys
import time
import types
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


def load_official(repo):
    path = Path(repo) / "src" / "merge" / "strategy.py"
    spec = importlib.util.spec_from_file_location("ace_official_strategy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = inspect.getsource(module.MergeStrategy.ace_merging)
    return module, {"strategy_py_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                    "ace_merging_sha256": hashlib.sha256(source.encode()).hexdigest()}


def main(repo, jobs_json):
    spec = json.loads(Path(jobs_json).read_text())
    torch.set_num_threads(int(spec["threads"]))
    module, identity = load_official(repo)
    timings_path = Path(spec["timings"])
    timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
    for job in spec["jobs"]:
        inputs = Path(job["input"])
        base = load_file(str(inputs / "base.safetensors"))
        experts = [load_file(str(p)) for p in sorted((inputs / "experts").glob("*.safetensors"))]
        keys = list(base)
        task_vectors = [types.SimpleNamespace(task_vector_param_dict={k: e[k] - base[k] for k in keys})
                        for e in experts]
        del experts
        dtype = {"float32": torch.float32, "float64": torch.float64}[job["dtype"]]
        previous = torch.get_default_dtype()
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            torch.set_default_dtype(dtype)
            try:
                elapsed = float("inf")
                for _ in range(int(spec.get("repeats", 1))):  # the fastest of a few runs: the CPU is shared
                    start = time.perf_counter()
                    strategy = module.MergeStrategy(keys, task_vectors, "cpu")
                    tau = strategy.ace_merging(eps=job["eps"], k_frac=job["k_frac"])
                    merged = {k: base[k] + tau[k] * job["scale"] for k in keys}
                    elapsed = min(elapsed, time.perf_counter() - start)
            finally:
                torch.set_default_dtype(previous)
        output = Path(job["output"])
        output.parent.mkdir(parents=True, exist_ok=True)
        for path, tensors in ((output, merged), (Path(job["tau_output"]), tau)):
            tmp = path.with_name("." + path.name + ".tmp")
            save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp))
            tmp.replace(path)
        timings[job["name"]] = elapsed
        timings_path.write_text(json.dumps(timings, indent=1))
        print(f"official {job['name']}: {elapsed:.2f}s", flush=True)
    Path(spec["identity"]).write_text(json.dumps(identity))


if __name__ == "__main__":
    main(*sys.argv[1:3])
