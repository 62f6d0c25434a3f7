"""Merge speed and memory against mergekit 0.1.5: the same Llama-shaped checkpoints through both command lines.

    python -m bench.mergekit --out reports/mergekit            # ~1.1 B parameters (TinyLlama-1.1B shapes), bf16
    python -m bench.mergekit --quick --out /tmp/mergekit       # a Llama of a few MB (tests, a smoke check)

mergekit (LGPL-3.0) is only *run* here: it is installed with pip into a virtual environment of its own under
``--peer-dir`` (default ``~/.cache/nbmerge/peers/mergekit-0.1.5``, next to the CPU-only torch build), never
imported by nbmerge and never a dependency. ``--no-mergekit`` runs the nbmerge side alone.

What one run does:

1. writes a random bf16 Llama (``config.json`` for ``LlamaForCausalLM``, ``generation_config.json``, weights in
   ``model-0000i-of-0000n.safetensors`` shards with ``model.safetensors.index.json``) and 3 experts = base +
   seeded task vectors (a low-rank part plus noise, a few percent of the weights' scale), tensor by tensor,
   into a scratch folder (``--workdir`` keeps and reuses it; default a temp dir under /tmp, removed at the end);
2. measures the machine's memory-copy bandwidth (best of several large copies, NumPy and torch);
3. runs task arithmetic, TIES and DARE-TIES through ``nbmerge merge`` and ``mergekit-yaml``, each merge in a
   fresh process, alternating which tool goes first, ``--repeats`` times; the input files are read once before
   (page cache warm for both). Each run records the wall time, the peak resident set of the process tree, and
   its I/O counters (see :class:`TreeSampler`);
4. compares the two outputs tensor by tensor (bf16 ulps of θ and the relative difference of the merged task
   vector θ − θ₀); DARE's random masks cannot agree element-wise, so its rows compare statistics;
5. writes ``<out>.json`` and ``<out>.md`` (atomically) and removes the scratch folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

import torch

from nbmerge.engine.io import SafetensorsSource

from .peers import install_pinned_venv
from .reporting import machine, write_pair

MERGEKIT_VERSION = "0.1.5"
#: the CPU-only torch build pip finds on this machine's disk; mergekit accepts any torch >= 2.0
PEER_TORCH = "2.13.0"

#: TinyLlama-1.1B's shapes (LlamaConfig arguments): 1.10 B parameters, 2.2 GB in bf16
LLAMA = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
             num_key_value_heads=4, vocab_size=32000)
#: --quick: the same layout at a toy size (~0.9 M parameters, ~1.8 MB in bf16)
QUICK_LLAMA = dict(hidden_size=128, intermediate_size=344, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=1024)
#: input shard size: the 2.2 GB model is written as 3 shards (--quick: as 3 shards of the toy model too)
SHARD_BYTES = 1_000_000_000
QUICK_SHARD_BYTES = 700_000
EXPERTS = 3
#: the random model: weights ~ N(0, BASE_STD²) (norm weights 1); a task vector is a rank-TV_RANK matrix with
#: entries of standard deviation TV_LOW_RANK_STD plus i.i.d. noise of TV_NOISE_STD, ~4% of the weights' scale
BASE_STD = 0.02
TV_RANK = 16
TV_LOW_RANK_STD = 6e-4
TV_NOISE_STD = 4e-4

METHODS = ("task_arithmetic", "ties", "dare_ties")
#: the settings under test. nbmerge: ``--method`` and ``--param``s; mergekit: the YAML's merge_method, the
#: per-model parameters and the global parameters. Chosen so that the two compute the same merge
#: (docs in the report: DIFFERENCES).
SETTINGS = {
    "task_arithmetic": {
        "nbmerge": ("task_arithmetic", {"scale": 0.3}),
        "mergekit": ("task_arithmetic", {"weight": 1.0}, {"lambda": 0.3, "normalize": False}),
    },
    "ties": {
        "nbmerge": ("ties", {"density": 0.2, "merge": "mean", "scale": 1.0}),
        "mergekit": ("ties", {"weight": 1.0, "density": 0.2}, {"lambda": 1.0, "normalize": True}),
    },
    "dare_ties": {
        "nbmerge": ("dare", {"merge": "ties", "p": 0.5, "density": 1.0, "scale": 1.0}),
        "mergekit": ("dare_ties", {"weight": 1.0, "density": 0.5}, {"lambda": 1.0, "normalize": True,
                                                                      "rescale": True}),
    },
}
#: mergekit computes in the dtype its YAML names (absent: the checkpoints' own, here bf16) and writes
#: out_dtype; nbmerge computes in float32 and writes the base's dtype
MERGEKIT_DTYPE, MERGEKIT_OUT_DTYPE = "float32", "bfloat16"
SEED = 0
#: nbmerge's CLI asks torch for transparent huge pages (THP_MEM_ALLOC_ENABLE=1); mergekit runs at its defaults, and
#: once more with the same setting (these methods), to show how much of the difference that setting is
MERGEKIT_THP = "mergekit+THP"
THP_VARIANT_METHODS = ("task_arithmetic",)

#: targets of issue 29: every method at least 5× mergekit's speed, task arithmetic (after start-up) within 4× of its
#: floor, the larger of the bytes moved at the copy rate and the output written and fsync'd at the disk's rate
TARGET_SPEEDUP = 5.0
TARGET_FLOOR_RATIO = 4.0
#: "one model's size plus a few tensors": the allowance is this many of the largest tensor in float32
FEW_TENSORS = EXPERTS + 2


# -- the model ----------------------------------------------------------------------------------------------------

def llama_shapes(cfg: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
    """Key → shape of a ``LlamaForCausalLM`` state dict (untied head), in the order Hugging Face writes it."""
    h, inter, heads, kv = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"], \
        cfg["num_key_value_heads"]
    head_dim = h // heads
    shapes = {"model.embed_tokens.weight": (cfg["vocab_size"], h)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({
            p + "self_attn.q_proj.weight": (heads * head_dim, h),
            p + "self_attn.k_proj.weight": (kv * head_dim, h),
            p + "self_attn.v_proj.weight": (kv * head_dim, h),
            p + "self_attn.o_proj.weight": (h, heads * head_dim),
            p + "mlp.gate_proj.weight": (inter, h),
            p + "mlp.up_proj.weight": (inter, h),
            p + "mlp.down_proj.weight": (h, inter),
            p + "input_layernorm.weight": (h,),
            p + "post_attention_layernorm.weight": (h,),
        })
    shapes["model.norm.weight"] = (h,)
    shapes["lm_head.weight"] = (cfg["vocab_size"], h)
    return shapes


def shard_plan(shapes: Mapping[str, tuple[int, ...]], shard_bytes: int, itemsize: int = 2) -> list[list[str]]:
    """Keys grouped into consecutive shards of at most ``shard_bytes`` (a larger tensor gets a shard alone)."""
    shards: list[list[str]] = [[]]
    size = 0
    for key, shape in shapes.items():
        nbytes = math.prod(shape) * itemsize
        if shards[-1] and size + nbytes > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(key)
        size += nbytes
    return shards


def _generator(*parts: Any) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32("/".join(map(str, parts)).encode()))


def base_tensor(key: str, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """θ₀[key] in bf16: N(0, BASE_STD²) for matrices, 1 for norm weights (as a trained Llama's are near 1)."""
    if len(shape) == 1:
        return torch.ones(shape, dtype=torch.bfloat16)
    return (torch.randn(shape, generator=_generator(seed, "base", key)) * BASE_STD).to(torch.bfloat16)


def task_vector(key: str, shape: tuple[int, ...], seed: int, task: int) -> torch.Tensor:
    """τ_t[key] in float32: a random rank-``TV_RANK`` matrix plus noise (1-D tensors: noise only)."""
    g = _generator(seed, "task", task, key)
    noise = torch.randn(shape, generator=g) * TV_NOISE_STD
    if len(shape) == 1:
        return noise
    left = torch.randn(shape[0], TV_RANK, generator=g)
    right = torch.randn(TV_RANK, shape[1], generator=g)
    return noise.add_(left @ right, alpha=TV_LOW_RANK_STD / math.sqrt(TV_RANK))


def llama_config_json(cfg: Mapping[str, int]) -> dict:
    """config.json of the random Llama (transformers' ``LlamaConfig`` when importable, so every field is there)."""
    fields = dict(cfg, architectures=["LlamaForCausalLM"], model_type="llama", tie_word_embeddings=False,
                  max_position_embeddings=2048, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2,
                  dtype="bfloat16")
    try:
        from transformers import LlamaConfig
    except ImportError:
        return fields
    config = LlamaConfig(**{k: v for k, v in fields.items() if k not in ("model_type", "dtype")})
    config.dtype = torch.bfloat16
    return config.to_dict()


def write_model(folder: Path, cfg: Mapping[str, int], shapes: Mapping[str, tuple[int, ...]],
                shards: Sequence[Sequence[str]], tensor) -> int:
    """A Hugging Face folder: ``tensor(key, shape)`` shard by shard (one shard in memory), index, configs.
    Returns the weights' bytes."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    weight_map, total = {}, 0
    for i, keys in enumerate(shards, start=1):
        name = f"model-{i:05d}-of-{len(shards):05d}.safetensors"
        tensors = {key: tensor(key, shapes[key]).contiguous() for key in keys}
        total += sum(t.numel() * t.element_size() for t in tensors.values())
        save_file(tensors, str(folder / name), metadata={"format": "pt"})
        weight_map.update({key: name for key in keys})
        del tensors
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    (folder / "config.json").write_text(json.dumps(llama_config_json(cfg), indent=2, sort_keys=True) + "\n")
    (folder / "generation_config.json").write_text(json.dumps({"bos_token_id": 1, "eos_token_id": 2}, indent=2)
                                                    + "\n")
    return total


def make_checkpoints(root: Path, cfg: Mapping[str, int], *, experts: int = EXPERTS, seed: int = SEED,
                     shard_bytes: int = SHARD_BYTES) -> dict:
    """Write (or reuse, when ``root`` holds the same spec) the base and the experts; returns their description."""
    spec = {"cfg": dict(cfg), "experts": experts, "seed": seed, "shard_bytes": shard_bytes, "base_std": BASE_STD,
            "tv": [TV_RANK, TV_LOW_RANK_STD, TV_NOISE_STD]}
    marker = root / "checkpoints.json"
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("spec") == spec:
            return info
    shapes = llama_shapes(cfg)
    shards = shard_plan(shapes, shard_bytes)
    for name in ["base"] + [f"expert{t}" for t in range(experts)]:
        shutil.rmtree(root / name, ignore_errors=True)
    start = time.perf_counter()
    model_bytes = write_model(root / "base", cfg, shapes, shards, lambda k, s: base_tensor(k, s, seed))
    for t in range(experts):
        write_model(root / f"expert{t}", cfg, shapes, shards,
                    lambda k, s, t=t: (base_tensor(k, s, seed).float() + task_vector(k, s, seed, t))
                    .to(torch.bfloat16))
    largest = max(math.prod(s) for s in shapes.values())
    info = {"spec": spec, "base": str(root / "base"), "experts": [str(root / f"expert{t}") for t in range(experts)],
            "parameters": sum(math.prod(s) for s in shapes.values()), "tensors": len(shapes),
            "model_bytes": model_bytes, "shards": len(shards), "largest_tensor_parameters": largest,
            "write_s": round(time.perf_counter() - start, 1)}
    marker.write_text(json.dumps(info, indent=1) + "\n")
    return info


# -- the two command lines --------------------------------------------------------------------------------------

def nbmerge_command(method: str, base: str, experts: Sequence[str], out: str, device: str = "cpu") -> list[str]:
    """``nbmerge merge`` for one benchmark method (the console script beside this interpreter) on ``device``."""
    name, params = SETTINGS[method]["nbmerge"]
    script = Path(sys.executable).with_name("nbmerge")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "nbmerge"]
    command += ["merge", "--method", name, "--base", base, "--experts", *experts, "--out", out.rstrip("/") + "/",
                "--device", device]
    for key, value in params.items():
        command += ["--param", f"{key}={value}"]
    if name == "dare":
        command += ["--seed", str(SEED)]
    return command + ["--quiet"]


def mergekit_config(method: str, base: str, experts: Sequence[str]) -> dict:
    """mergekit's YAML (as a mapping) for one benchmark method."""
    name, per_model, shared = SETTINGS[method]["mergekit"]
    return {"merge_method": name, "base_model": base,
            "models": [{"model": e, "parameters": dict(per_model)} for e in experts],
            "parameters": dict(shared), "dtype": MERGEKIT_DTYPE, "out_dtype": MERGEKIT_OUT_DTYPE}


def mergekit_command(mergekit_yaml: str, config_path: str, out: str) -> list[str]:
    """``mergekit-yaml`` on the CPU (its default device) with its default lazy reading; no tokenizer to copy."""
    return [mergekit_yaml, config_path, out, "--device", "cpu", "--random-seed", str(SEED), "--no-copy-tokenizer",
            "--quiet"]


def ensure_mergekit(peer_dir: Path) -> Path:
    """The venv with mergekit (made on first use: torch pinned to the local CPU build, then mergekit)."""
    return install_pinned_venv(peer_dir / f"mergekit-{MERGEKIT_VERSION}", PEER_TORCH,
                               f"mergekit=={MERGEKIT_VERSION}", "a few minutes, ~1.6 GB")


def mergekit_versions(venv: Path) -> dict:
    code = ("import json, torch, importlib.metadata as m; print(json.dumps({'mergekit': m.version('mergekit'), "
            "'torch': torch.__version__, 'transformers': m.version('transformers'), "
            "'safetensors': m.version('safetensors'), 'threads': torch.get_num_threads()}))")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- measuring one command ----------------------------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                out += [int(p) for p in handle.read().split()]
    except OSError:
        pass
    return out


def _status(pid: int) -> dict[str, int]:
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                parts = value.split()
                if len(parts) == 2 and parts[1] == "kB":
                    fields[name] = int(parts[0]) * 1024
    except OSError:
        pass
    return fields


def _io(pid: int) -> dict[str, int]:
    try:
        with open(f"/proc/{pid}/io") as handle:
            return {k: int(v) for k, v in (line.split(": ") for line in handle)}
    except OSError:
        return {}


class TreeSampler(threading.Thread):
    """Polls /proc every ``interval`` s for the descendants of ``pid`` (the launcher itself is left out): the peaks
    of their summed resident set and of its anonymous (tensors) and file-backed (mapped checkpoint pages) parts,
    and their last I/O counters (rchar/wchar count read()/write() calls, not pages touched through mmap)."""

    def __init__(self, pid: int, interval: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peaks = {"VmRSS": 0, "RssAnon": 0, "RssFile": 0}
        self.io: dict[int, dict[str, int]] = {}
        self._halt = threading.Event()

    def tree(self) -> list[int]:
        pids, todo = [], _children(self.pid)
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo += _children(pid)
        return pids

    def sample(self) -> None:
        totals = dict.fromkeys(self.peaks, 0)
        for pid in self.tree():
            status = _status(pid)
            for name in totals:
                totals[name] += status.get(name, 0)
            io = _io(pid)
            if io:
                self.io[pid] = io
        for name, value in totals.items():
            self.peaks[name] = max(self.peaks[name], value)

    def io_total(self, name: str) -> Optional[int]:
        return sum(io.get(name, 0) for io in self.io.values()) if self.io else None

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


#: Runs a command and reports its rusage. ``ru_maxrss`` is the high-water mark of the process *including the memory
#: of the process it was forked from before exec* (Linux keeps the larger), so a command forked straight from this
#: benchmark (torch imported, ~0.9 GB) could never report less than that: this small launcher (~10 MB) is the
#: command's parent instead, and times it from fork to wait4.
LAUNCHER = """\
import json, os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(out, "w") as handle:
    json.dump({"wall_s": wall, "maxrss_kb": usage.ru_maxrss, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
               "status": os.waitstatus_to_exitcode(status)}, handle)
"""


def measure(command: Sequence[str], env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None) -> dict:
    """Run ``command`` to the end under :data:`LAUNCHER`: wall time, the kernel's peak RSS of the command
    (``ru_maxrss`` from ``wait4``: its own high-water mark, or a waited-for descendant's if larger), the sampled
    tree peaks (:class:`TreeSampler`), CPU times and I/O counters."""
    with tempfile.TemporaryDirectory(prefix="nbmerge-measure-") as scratch:
        result_path = os.path.join(scratch, "rusage.json")
        process = subprocess.Popen([sys.executable, "-I", "-c", LAUNCHER, result_path, *command],
                                   env=dict(env) if env is not None else None, cwd=cwd,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sampler = TreeSampler(process.pid)
        sampler.start()
        output = process.communicate()[0]
        sampler.stop()
        if process.returncode != 0 or not os.path.exists(result_path):
            raise RuntimeError(f"the launcher of {' '.join(command)} failed (status {process.returncode}):\n"
                               f"{output[-4000:]}")
        with open(result_path) as handle:
            usage = json.load(handle)
    if usage["status"] != 0:
        raise RuntimeError(f"{' '.join(command)} failed (status {usage['status']}):\n{output[-4000:]}")
    return {"wall_s": round(usage["wall_s"], 3), "peak_rss": usage["maxrss_kb"] * 1024,
            "peak_rss_sampled": sampler.peaks["VmRSS"], "peak_anon_sampled": sampler.peaks["RssAnon"],
            "peak_file_sampled": sampler.peaks["RssFile"], "user_s": round(usage["user_s"], 2),
            "sys_s": round(usage["sys_s"], 2), "rchar": sampler.io_total("rchar"),
            "wchar": sampler.io_total("wchar")}


def memory_copy_bandwidth(nbytes: int, repeats: int = 5) -> dict:
    """Bytes moved per second (read + written) by the best of ``repeats`` copies of an ``nbytes`` buffer: NumPy's
    copy (one thread) and torch's ``copy_`` (its intra-op threads); the larger is the machine's limit here."""
    import numpy as np

    src = np.ones(nbytes // 8)
    dst = np.zeros_like(src)
    best_np = min(_timed(lambda: np.copyto(dst, src)) for _ in range(repeats))
    tsrc, tdst = torch.from_numpy(src), torch.from_numpy(dst)
    best_torch = min(_timed(lambda: tdst.copy_(tsrc)) for _ in range(repeats))
    moved = 2 * src.nbytes
    out = {"buffer_bytes": src.nbytes, "repeats": repeats, "numpy_copy_Bps": moved / best_np,
           "torch_copy_Bps": moved / best_torch, "torch_threads": torch.get_num_threads()}
    out["limit_Bps"] = max(out["numpy_copy_Bps"], out["torch_copy_Bps"])
    return out


def write_fsync_rate(folder: Path, nbytes: int, block: int = 1 << 24, repeats: int = 3) -> dict:
    """Bytes per second of writing ``nbytes`` to a new file in ``folder`` and fsync'ing it (what writing a merged
    model costs at least on that disk), the best of ``repeats`` writes of each kind: through the page cache, and
    past it (``O_DIRECT`` from one aligned buffer, where the file system allows it), since a tool may do either; a
    limit: on a virtual machine the first write into memory the host has taken back was measured 9× slower than the
    next. The rate is the better kind's; the file is removed."""
    import mmap

    path = folder / ".write-rate.tmp"
    buffer = mmap.mmap(-1, block)  # page-aligned, as O_DIRECT needs
    buffer.write(b"\1" * block)  # touched once, before any timing

    def write(flags: int) -> float:
        start = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | flags, 0o644)
        try:
            written = 0
            with memoryview(buffer) as view:
                while written < nbytes:  # whole blocks: O_DIRECT lengths stay aligned (≤ one block over nbytes)
                    written += os.write(fd, view)
            os.fsync(fd)
        finally:
            os.close(fd)
            path.unlink()
        return time.perf_counter() - start

    written = -(-nbytes // block) * block
    kinds = {"page_cache": 0, "direct": getattr(os, "O_DIRECT", None)}
    times: dict[str, list[float]] = {}
    for kind, flags in kinds.items():
        try:
            if flags is not None:
                times[kind] = [write(flags) for _ in range(repeats)]
        except OSError:  # no direct mode on this file system
            continue
    best = {kind: min(t) for kind, t in times.items()}
    kind = min(best, key=best.get)
    return {"bytes": written, "seconds": best[kind], "Bps": written / best[kind], "kind": kind,
            "all_s": [round(t, 3) for t in times[kind]],
            "by_kind": {k: {"seconds": best[k], "all_s": [round(t, 3) for t in times[k]]} for k in best}}


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def read_files(paths: Sequence[str]) -> int:
    """Read every file under ``paths`` once (so that both tools start from a warm page cache); bytes read."""
    total = 0
    for path in paths:
        for file in sorted(Path(path).iterdir()):
            with open(file, "rb") as handle:
                while block := handle.read(1 << 24):
                    total += len(block)
    return total


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- comparing the outputs --------------------------------------------------------------------------------------

def _ulps(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a − b| in bf16 units in the last place of the larger magnitude (both given in float32)."""
    diff = (a - b).abs()
    _, exponent = torch.frexp(torch.maximum(a.abs(), b.abs()))
    return diff / torch.ldexp(torch.ones_like(diff), (exponent - 8).to(torch.int32))


def compare_outputs(method: str, base: str, experts: Sequence[str], ours: str, theirs: str,
                    density: Optional[float] = None) -> dict:
    """Tensor by tensor: how far nbmerge's output (``ours``) is from mergekit's (``theirs``).

    Deterministic methods: elements that differ, max difference in bf16 ulps of θ, and the relative difference of
    the merged task vectors ‖τ_nb − τ_mk‖ / ‖τ_mk‖ (per tensor: the worst; overall: over the whole model).
    TIES also gets a third result: nbmerge's TIES kernel with mergekit's *per-tensor* top-k (its thresholds from
    each tensor alone), which separates the trim's scope from everything else. DARE: statistics of each side's
    merged task vector (fraction non-zero, norm, cosine with each other and with the undropped dis-mean).
    """
    from nbmerge.methods.ties import ties_kernel, topk_threshold

    b, nb, mk = SafetensorsSource(base), SafetensorsSource(ours), SafetensorsSource(theirs)
    xs = [SafetensorsSource(e) for e in experts]
    acc = {"elements": 0, "differ": 0, "max_ulps": 0.0, "diff_sq": 0.0, "mk_sq": 0.0, "nb_sq": 0.0, "dot": 0.0,
           "nb_nonzero": 0, "mk_nonzero": 0, "ref_sq": 0.0, "nb_ref_dot": 0.0, "mk_ref_dot": 0.0,
           "pt_differ": 0, "pt_differ_elsewhere": 0, "pt_diff_sq": 0.0, "pt_max_ulps": 0.0, "tied": 0,
           "worst_rel": 0.0, "worst_key": None}
    for key in b.keys():
        theta0 = b.get(key).float()
        a, c = nb.get(key).float(), mk.get(key).float()
        tau_nb, tau_mk = a - theta0, c - theta0
        acc["elements"] += a.numel()
        acc["differ"] += int((a != c).sum())
        acc["max_ulps"] = max(acc["max_ulps"], float(_ulps(a, c).max()))
        d_sq, mk_sq = float((tau_nb - tau_mk).double().pow(2).sum()), float(tau_mk.double().pow(2).sum())
        acc["diff_sq"] += d_sq
        acc["mk_sq"] += mk_sq
        acc["nb_sq"] += float(tau_nb.double().pow(2).sum())
        acc["dot"] += float((tau_nb.double() * tau_mk.double()).sum())
        rel = math.sqrt(d_sq / mk_sq) if mk_sq > 0 else (0.0 if d_sq == 0 else math.inf)
        if rel >= acc["worst_rel"]:
            acc["worst_rel"], acc["worst_key"] = rel, key
        if method == "dare_ties":
            acc["nb_nonzero"] += int((tau_nb != 0).sum())
            acc["mk_nonzero"] += int((tau_mk != 0).sum())
            deltas = [x.get(key).float() - theta0 for x in xs]
            ref = ties_kernel(deltas, thresholds=torch.zeros(len(deltas)), majority=1.0, merge="mean")
            acc["ref_sq"] += float(ref.double().pow(2).sum())
            acc["nb_ref_dot"] += float((tau_nb.double() * ref.double()).sum())
            acc["mk_ref_dot"] += float((tau_mk.double() * ref.double()).sum())
        elif method == "ties":
            deltas = [x.get(key).float() - theta0 for x in xs]
            thresholds = torch.stack([topk_threshold(d.abs(), density) for d in deltas])
            at_threshold = torch.zeros(theta0.shape, dtype=torch.bool)
            for d, th in zip(deltas, thresholds):
                at_threshold |= d.abs() == th
            acc["tied"] += int(at_threshold.sum())
            emulated = (theta0 + ties_kernel(deltas, thresholds=thresholds, majority=1.0, merge="mean")
                        ).to(torch.bfloat16).float()
            acc["pt_differ"] += int((emulated != c).sum())
            acc["pt_differ_elsewhere"] += int(((emulated != c) & ~at_threshold).sum())
            acc["pt_diff_sq"] += float((emulated - c).double().pow(2).sum())
            acc["pt_max_ulps"] = max(acc["pt_max_ulps"], float(_ulps(emulated, c).max()))
    out = {"elements": acc["elements"], "elements_differ": acc["differ"],
           "fraction_differ": acc["differ"] / acc["elements"], "max_ulps": acc["max_ulps"],
           "rel_diff": math.sqrt(acc["diff_sq"] / acc["mk_sq"]) if acc["mk_sq"] else 0.0,
           "worst_tensor_rel_diff": acc["worst_rel"], "worst_tensor": acc["worst_key"],
           "norm_ratio": math.sqrt(acc["nb_sq"] / acc["mk_sq"]) if acc["mk_sq"] else None,
           "cosine": acc["dot"] / math.sqrt(acc["nb_sq"] * acc["mk_sq"]) if acc["nb_sq"] * acc["mk_sq"] else None}
    if method == "dare_ties":
        out.update(nbmerge_nonzero=acc["nb_nonzero"] / acc["elements"],
                   mergekit_nonzero=acc["mk_nonzero"] / acc["elements"],
                   nbmerge_cosine_undropped=acc["nb_ref_dot"] / math.sqrt(acc["nb_sq"] * acc["ref_sq"]),
                   mergekit_cosine_undropped=acc["mk_ref_dot"] / math.sqrt(acc["mk_sq"] * acc["ref_sq"]),
                   nbmerge_norm_over_undropped=math.sqrt(acc["nb_sq"] / acc["ref_sq"]),
                   mergekit_norm_over_undropped=math.sqrt(acc["mk_sq"] / acc["ref_sq"]))
    if method == "ties":
        out.update(per_tensor_trim_elements_differ=acc["pt_differ"],
                   per_tensor_trim_fraction_differ=acc["pt_differ"] / acc["elements"],
                   per_tensor_trim_rel_diff=math.sqrt(acc["pt_diff_sq"] / acc["mk_sq"]) if acc["mk_sq"] else 0.0,
                   per_tensor_trim_max_ulps=acc["pt_max_ulps"], at_threshold=acc["tied"],
                   per_tensor_trim_differ_elsewhere=acc["pt_differ_elsewhere"])
    return out


# -- the run ----------------------------------------------------------------------------------------------------

def _child_env(python_path: Optional[str] = None, threads: Optional[int] = None) -> dict:
    """The environment of a measured command: offline, PYTHONPATH only where given, the same threads for both."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    for name in ("PYTHONPATH", "THP_MEM_ALLOC_ENABLE", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)
    if python_path:
        env["PYTHONPATH"] = python_path
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def startup(command: Sequence[str], env: Mapping[str, str], repeats: int = 2) -> dict:
    """The tool's start-up alone (Python importing its merge code): best wall time and the peak RSS."""
    runs = [measure(command, env) for _ in range(repeats)]
    best = min(runs, key=lambda r: r["wall_s"])
    return {"wall_s": best["wall_s"], "peak_rss": max(r["peak_rss"] for r in runs)}


def run_benchmark(out: str | os.PathLike, *, quick: bool = False, methods: Sequence[str] = METHODS, repeats: int = 2,
                  budget_min: float = 30.0, threads: Optional[int] = None, startup_repeats: int = 2,
                  workdir: Optional[str | os.PathLike] = None, peer_dir: Optional[str | os.PathLike] = None,
                  with_mergekit: bool = True, command: str = "", device: str = "cpu") -> dict:
    """Write the checkpoints, time every (method, tool), compare the outputs, write ``<out>.json``/``.md``.

    Repetition r runs every method once on each side (tools alternating first); after the first, a method is
    repeated only if that is expected (at its first repetition's pace) to end within ``budget_min`` minutes of the
    start. ``threads``: OMP/MKL threads of both tools (None: their defaults, all cores).
    """
    cfg = QUICK_LLAMA if quick else LLAMA
    repo = str(Path(__file__).resolve().parents[1])
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="nbmerge-mergekit-") if own else workdir)
    root.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    report: dict[str, Any] = {"command": command, "quick": quick, "machine": machine(), "load_start": load_average(),
                              "repeats": repeats, "budget_min": budget_min, "threads": threads, "methods": []}
    if threads:
        torch.set_num_threads(threads)
    try:
        parameters = sum(math.prod(s) for s in llama_shapes(cfg).values())
        needed = (EXPERTS + 3) * parameters * 2
        free = shutil.disk_usage(root).free
        if free < 1.2 * needed:
            raise OSError(f"{root}: {free / 1e9:.1f} GB free, checkpoints and outputs need {needed / 1e9:.1f} GB")
        print(f"writing the checkpoints to {root}", flush=True)
        model = make_checkpoints(root, cfg, shard_bytes=QUICK_SHARD_BYTES if quick else SHARD_BYTES)
        report["model"] = {"config": dict(cfg), **{k: v for k, v in model.items() if k not in ("base", "experts",
                                                                                              "spec")},
                           "experts": EXPERTS, "seed": SEED, "base_std": BASE_STD, "tv_rank": TV_RANK,
                           "tv_low_rank_std": TV_LOW_RANK_STD, "tv_noise_std": TV_NOISE_STD}
        report["bandwidth"] = memory_copy_bandwidth((64 << 20) if quick else (1 << 30))
        print(f"memory copy: {report['bandwidth']['limit_Bps'] / 1e9:.1f} GB/s (read + written)", flush=True)
        report["write"] = write_fsync_rate(root, model["model_bytes"])
        print(f"write + fsync: {report['write']['Bps'] / 1e9:.2f} GB/s", flush=True)

        envs = {"nbmerge": _child_env(repo, threads)}
        imports = {"nbmerge": [sys.executable, "-c", "import nbmerge.cli, nbmerge.engine.merging"]}
        report["startup"] = {}
        if startup_repeats:  # (0: not measured, for the tests)
            report["startup"]["nbmerge"] = startup(imports["nbmerge"], envs["nbmerge"], startup_repeats)
        if with_mergekit:
            venv = ensure_mergekit(Path(peer_dir or default_peer_dir()))
            report["mergekit"] = {"venv": portable(str(venv), root, None), **mergekit_versions(venv)}
            mergekit_yaml = str(venv / "bin" / "mergekit-yaml")
            envs["mergekit"] = _child_env(None, threads)
            envs[MERGEKIT_THP] = dict(envs["mergekit"], THP_MEM_ALLOC_ENABLE="1")
            imports["mergekit"] = imports[MERGEKIT_THP] = [str(venv / "bin" / "python"), "-c",
                                                           "import mergekit.merge, mergekit.scripts.run_yaml"]
            if startup_repeats:
                report["startup"]["mergekit"] = startup(imports["mergekit"], envs["mergekit"], startup_repeats)
        base, experts = model["base"], model["experts"]
        report["model"]["inputs_bytes"] = read_files([base, *experts])

        rows, commands = {}, {}
        for method in methods:
            row = rows[method] = {"method": method, "runs": [], "commands": {}}
            report["methods"].append(row)
            todo = commands[method] = {
                "nbmerge": nbmerge_command(method, base, experts, str(root / f"out-{method}-nbmerge"), device)}
            if with_mergekit:
                config_path = root / f"mergekit-{method}.yml"
                import yaml

                config_path.write_text(yaml.safe_dump(mergekit_config(method, base, experts), sort_keys=False))
                row["mergekit_yaml"] = portable(config_path.read_text(), root, venv)
                todo["mergekit"] = mergekit_command(mergekit_yaml, str(config_path),
                                                    str(root / f"out-{method}-mergekit"))
                if method in THP_VARIANT_METHODS:
                    todo[MERGEKIT_THP] = todo["mergekit"]
            row["commands"] = {tool: portable(" ".join(c), root, venv if with_mergekit else None)
                               for tool, c in todo.items()}
        for rep in range(repeats):
            for method in methods:
                row = rows[method]
                # a repetition after the first runs only if, at the first one's pace, it ends within the budget
                expected = sum(r["wall_s"] for r in row["runs"] if r["repeat"] == 0)
                if rep and (time.perf_counter() - began + expected) / 60 > budget_min:
                    row.setdefault("skipped_repeats", []).append(rep)
                    continue
                tools = list(commands[method])
                for tool in (tools if rep % 2 == 0 else tools[::-1]):
                    # (the THP variant reruns mergekit's command: same output folder, same bytes)
                    shutil.rmtree(root / f"out-{method}-{'nbmerge' if tool == 'nbmerge' else 'mergekit'}",
                                  ignore_errors=True)
                    # the previous command's output still being written back (mergekit does not fsync its own)
                    # would slow this one's writes: every run starts with nothing dirty
                    os.sync()
                    # Warm, as the report says: the other tool's run (a different torch) and the comparisons can
                    # push this tool's libraries and the inputs out of the page cache on a small machine (measured:
                    # nbmerge's task arithmetic 7.4 s cold, 4.9 s warm); both are read again, untimed.
                    subprocess.run(imports[tool], env=envs[tool], check=True)
                    read_files([base, *experts])
                    run = measure(commands[method][tool], envs[tool])
                    run.update(tool=tool, repeat=rep, load=load_average())
                    row["runs"].append(run)
                    print(f"{method:>16} {tool:>13} #{rep}: {run['wall_s']:8.2f} s, peak RSS "
                          f"{run['peak_rss'] / 1e9:.2f} GB, load {run['load'][0]}", flush=True)
                    write_report(summarise(report), out)
                if rep == 0 and with_mergekit:
                    density = SETTINGS[method]["nbmerge"][1].get("density")
                    row["agreement"] = compare_outputs(method, base, experts, str(root / f"out-{method}-nbmerge"),
                                                       str(root / f"out-{method}-mergekit"), density=density)
                for folder in root.glob(f"out-{method}-*"):
                    shutil.rmtree(folder, ignore_errors=True)
        report["load_end"] = load_average()
        report["elapsed_min"] = round((time.perf_counter() - began) / 60, 1)
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for folder in root.glob("out-*"):
                shutil.rmtree(folder, ignore_errors=True)
    report = summarise(report)
    write_report(report, out)
    return report


def portable(text: str, root: Path, venv: Optional[Path]) -> str:
    """``text`` with this machine's paths replaced: the scratch folder by $WORK, mergekit's venv by $MERGEKIT_VENV,
    the home folder by ~, and the folder of this interpreter (where the ``nbmerge`` script is) left out."""
    text = text.replace(str(root), "$WORK")
    if venv is not None:
        text = text.replace(str(venv), "$MERGEKIT_VENV")
    text = text.replace(str(Path(sys.executable).parent) + os.sep, "")
    return text.replace(str(Path.home()), "~")


def default_peer_dir() -> str:
    return os.environ.get("NBMERGE_PEER_DIR", str(Path.home() / ".cache" / "nbmerge" / "peers"))


# -- the arithmetic and the report ------------------------------------------------------------------------------

def summarise(report: dict) -> dict:
    """Per method and tool: runs, best and median wall time, peak RSS, bytes/s against the copy limit; the speed-up
    against mergekit; the memory budget and the targets. Pure arithmetic on the recorded runs (the tests feed it
    made-up numbers)."""
    model, limit = report.get("model", {}), report.get("bandwidth", {}).get("limit_Bps")
    model_bytes = model.get("model_bytes", 0)
    moved = (model.get("experts", EXPERTS) + 2) * model_bytes  # base + experts read once, the output written once
    largest = model.get("largest_tensor_parameters", 0) * 4
    startup_rss = report.get("startup", {}).get("nbmerge", {}).get("peak_rss", 0)
    report["memory_budget"] = {"startup_bytes": startup_rss, "model_bytes": model_bytes, "few_tensors": FEW_TENSORS,
                               "largest_tensor_fp32_bytes": largest,
                               "budget_bytes": startup_rss + model_bytes + FEW_TENSORS * largest}
    report["bytes_moved"] = moved
    if limit:
        report["copy_floor_s"] = moved / limit
        write = report.get("write", {}).get("Bps")
        report["write_floor_s"] = model_bytes / write if write else 0.0
        report["floor_s"] = max(report["copy_floor_s"], report["write_floor_s"])
    for row in report.get("methods", []):
        summary = {}
        for tool in (t for t in TOOLS if any(r["tool"] == t for r in row.get("runs", []))):
            runs = [r for r in row["runs"] if r["tool"] == tool]
            walls = [r["wall_s"] for r in runs]
            best = min(walls)
            summary[tool] = {"runs": len(runs), "best_s": best, "median_s": statistics.median(walls),
                             "peak_rss": max(r["peak_rss"] for r in runs),
                             "peak_anon": max(r["peak_anon_sampled"] for r in runs),
                             "peak_file": max(r["peak_file_sampled"] for r in runs),
                             "bytes_per_s": moved / best if best else None,
                             "peak_over_model": max(r["peak_rss"] for r in runs) / model_bytes if model_bytes else None}
            if limit and best:
                summary[tool]["bandwidth_fraction"] = moved / best / limit
        for tool in ("mergekit", MERGEKIT_THP):
            if "nbmerge" in summary and tool in summary:
                summary[tool]["speedup_best"] = summary[tool]["best_s"] / summary["nbmerge"]["best_s"]
                summary[tool]["speedup_median"] = summary[tool]["median_s"] / summary["nbmerge"]["median_s"]
        row["summary"] = summary
    report["targets"] = targets(report)
    return report


#: the tools in table order
TOOLS = ("nbmerge", "mergekit", MERGEKIT_THP)


def targets(report: dict) -> list[dict]:
    """Each target of the issue with the measured number and whether it was met."""
    out = []
    budget = report["memory_budget"]["budget_bytes"]
    for row in report.get("methods", []):
        s = row.get("summary", {})
        mk = s.get("mergekit", {})
        if "speedup_best" in mk:
            out.append({"target": f"{row['method']}: at least {TARGET_SPEEDUP:g}× mergekit's speed",
                        "value": mk["speedup_best"], "unit": "× (mergekit's best time / nbmerge's)",
                        "met": mk["speedup_best"] >= TARGET_SPEEDUP})
        nb = s.get("nbmerge")
        if nb and row["method"] == "task_arithmetic" and report.get("floor_s"):
            after = nb["best_s"] - report.get("startup", {}).get("nbmerge", {}).get("wall_s", 0.0)
            out.append({"target": f"task_arithmetic after start-up: within {TARGET_FLOOR_RATIO:g}× of its floor",
                        "value": after / report["floor_s"],
                        "unit": f"× the floor ({report['floor_s']:.2f} s; ≤ {TARGET_FLOOR_RATIO:g} needed)",
                        "met": after <= TARGET_FLOOR_RATIO * report["floor_s"]})
        if nb and budget:
            out.append({"target": f"{row['method']}: peak RSS below start-up + one model + a few tensors",
                        "value": nb["peak_rss"] / budget, "unit": "of the budget (≤ 1 needed)",
                        "met": nb["peak_rss"] <= budget})
    return out


def _seconds_list(write: Mapping) -> str:
    times = write.get("all_s")
    return "one write" if not times else "writes took " + ", ".join(f"{t:.2f}" for t in times) + " s"


def _write_kinds(write: Mapping) -> str:
    """How the disk's rate was measured: through the page cache and past it (O_DIRECT), the better one kept."""
    kinds = write.get("by_kind")
    if not kinds:
        return ""
    names = {"page_cache": "page-cache writes", "direct": "O_DIRECT writes"}
    return "; " + ", ".join(f"{names.get(k, k)} {v['seconds']:.2f} s at best" for k, v in kinds.items()) + \
        (", the faster kept" if len(kinds) > 1 else "")


def _gb(value: Optional[float]) -> str:
    return "—" if value is None else f"{value / 1e9:.2f}"


def _x(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.2f}×"


#: (setting, nbmerge, mergekit 0.1.5, how this benchmark matches them)
DIFFERENCES = (
    ("compute dtype", "float32 for bf16 inputs, output in the base's dtype",
     "the YAML's `dtype` (absent: the checkpoints' own, bf16 here), output `out_dtype`",
     "`dtype: float32`, `out_dtype: bfloat16`"),
    ("task arithmetic scale", "`scale` α (default 0.3) on Σ_t τ_t",
     "per-model `weight` (required) and `lambda` (default 1)", "weight 1, `lambda` = α = 0.3"),
    ("TIES trim", "top-k by magnitude over the **whole model**, per task (the TIES paper's reference code)",
     "top-k **per tensor** (`density`, default 1: no trim)",
     "no setting matches: see the per-tensor note under *Output agreement*"),
    ("TIES merge", "dis-mean (`merge=mean`), α = 1",
     "`normalize: true` (the default for `ties`) divides by the agreeing weights: dis-mean; `lambda` 1",
     "density 0.2, weight 1"),
    ("TIES sign election", "sign of Σ_t τ̂_t; a zero sum takes the model's majority sign",
     "sign of Σ_t w_t τ̂_t; a zero sum counts as +", "the same wherever an entry survives the trim"),
    ("TIES threshold", "keeps every entry with \\|τ\\| ≥ the (n − int(n·density))-th smallest: int(n·density) + 1 "
     "entries, more where values tie",
     "keeps exactly int(n·density) entries (`argsort`: which of several tied entries is arbitrary)",
     "differs only where some \\|τ_t\\| equals its threshold"),
    ("DARE-TIES", "`dare` with `merge=ties`: drop with probability p, rescale by 1/(1 − p), then TIES **with** its "
     "magnitude trim (`density` 0.2) and dis-mean; α default 0.3",
     "`dare_ties`: keep with probability `density`, rescale to the original L1 norm, sign election, **no** "
     "magnitude trim, `normalize` **false** (dis-sum); `lambda` 1",
     "nbmerge `p=0.5 density=1.0 scale=1.0`; mergekit `density: 0.5`, `normalize: true`"),
    ("DARE masks", "one generator per (seed, key, task)", "torch's global generator (`--random-seed`)",
     "never equal: the outputs are compared by statistics"),
)


def differences_table() -> list[str]:
    lines = ["## Settings, and where the two tools' defaults differ", "",
             "| | nbmerge | mergekit 0.1.5 | matched here by |", "|---|---|---|---|"]
    return lines + ["| " + " | ".join(row) + " |" for row in DIFFERENCES]


def render_markdown(report: dict) -> str:
    m, model, bw = report["machine"], report.get("model", {}), report.get("bandwidth", {})
    mk = report.get("mergekit")
    threads = report.get("threads")
    lines = [
        "# Speed and memory against mergekit",
        "",
        f"Generated by `{report.get('command') or 'python -m bench.mergekit'}` on {m['date_utc']} on {m['host']} "
        f"({m['platform']}, {m['cpu_count']} CPUs"
        + (f", {m['mem_total'] / 2**30:.1f} GiB RAM" if "mem_total" in m else "")
        + f"); nbmerge {m['nbmerge']} on torch {m['torch']}, safetensors {m.get('safetensors', '?')}, Python "
        f"{m['python']}"
        + (f"; mergekit {mk['mergekit']} on torch {mk['torch']}, transformers {mk['transformers']}, in its own venv"
           if mk else "; mergekit not run (--no-mergekit)")
        + ". Threads: "
        + (f"OMP_NUM_THREADS={threads} for both tools." if threads else "each tool's default (all cores)."),
        "",
        f"Load average (1, 5, 15 min) at the start {report.get('load_start')}, at the end "
        f"{report.get('load_end', '(unfinished)')}, after {report.get('elapsed_min', '?')} min; the machine is "
        "shared, so each run's own load is in the JSON.",
        "",
    ]
    if model:
        cfg = model["config"]
        lines += [
            "Model: a random bf16 Llama with TinyLlama-1.1B's shapes"
            + (" at toy size (--quick)" if report.get("quick") else "") +
            f" (hidden {cfg['hidden_size']}, intermediate {cfg['intermediate_size']}, {cfg['num_hidden_layers']} "
            f"layers, {cfg['num_attention_heads']} heads, {cfg['num_key_value_heads']} KV heads, vocabulary "
            f"{cfg['vocab_size']}): {model['parameters'] / 1e9:.3f} B parameters in {model['tensors']} tensors, "
            f"{_gb(model['model_bytes'])} GB in {model['shards']} shards per folder (`LlamaForCausalLM` config). "
            f"Base θ₀ ~ N(0, {model['base_std']}²), norm weights 1; {model['experts']} experts θ₀ + τ_t, τ_t a "
            f"rank-{model['tv_rank']} matrix (entry std {model['tv_low_rank_std']}) plus noise (std "
            f"{model['tv_noise_std']}), rounded to bf16. Written in {model.get('write_s', '?')} s and read once "
            "before the runs, so both tools start from a warm page cache.",
            "",
        ]
    if bw:
        lines += [
            f"Memory-copy bandwidth (bytes read + written per second, best of {bw['repeats']} copies of "
            f"{bw['buffer_bytes'] / 2**30:.2f} GiB): NumPy {bw['numpy_copy_Bps'] / 1e9:.1f} GB/s, torch "
            f"{bw['torch_copy_Bps'] / 1e9:.1f} GB/s ({bw['torch_threads']} thread(s)); the limit is the larger, "
            f"**{bw['limit_Bps'] / 1e9:.1f} GB/s**. A merge reads at least the base and the experts once and writes "
            f"the merged model once ({_gb(report.get('bytes_moved'))} GB): *GB/s* is that over the wall time, and "
            f"at the copy limit it would take {report.get('copy_floor_s', report.get('floor_s', 0)):.2f} s."
            + (f" Writing a model-sized file ({_gb(report['write']['bytes'])} GB) to the output's disk and fsync'ing it "
               f"took {report['write']['seconds']:.2f} s at best ({report['write']['Bps'] / 1e9:.2f} GB/s; "
               f"{_seconds_list(report['write'])}{_write_kinds(report['write'])}): a merge's "
               f"floor is the larger of the two, **{report.get('floor_s', 0):.2f} s**."
               if report.get("write") else ""),
            "",
        ]
    startup_text = ", ".join(f"{tool} {s['wall_s']:.1f} s and {_gb(s['peak_rss'])} GB"
                             for tool, s in report.get("startup", {}).items())
    lines += [
        "Each merge is one command in a fresh process, and its wall time includes the start-up (Python importing "
        f"the tool's merge code: {startup_text or 'not measured'}). Every repetition runs each method on both "
        "sides, alternating which goes first, each after `sync` (nothing of the previous command's output is still "
        "being written back; nbmerge fsyncs its output within its wall time, mergekit does not) and warm: the "
        "tool's imports and the input files are read once more, untimed, just before (the other tool's run and the "
        "output comparisons push them out of the page cache on a small machine). *Peak RSS*: the kernel's high-water mark of the command's process "
        "(`ru_maxrss` from `wait4`, by a small launcher, so that the benchmark's own memory is not inherited "
        "through `fork`); it counts mapped file pages as well as allocated memory. *anon*/*file*: the largest "
        "sampled (50 ms) totals of RssAnon and RssFile over the process tree. *Speed-up*: that row's best "
        f"(median) wall time over nbmerge's (> 1: nbmerge faster). *{MERGEKIT_THP}*: mergekit again with "
        "`THP_MEM_ALLOC_ENABLE=1`, the torch setting nbmerge's command line turns on (transparent huge pages for "
        "large tensors). The commands (below the targets) name the scratch folder $WORK and mergekit's venv "
        f"$MERGEKIT_VENV (`{mk['venv'] if mk else '~/.cache/nbmerge/peers/mergekit-' + MERGEKIT_VERSION}`).",
        "",
        "| method | tool | runs | best s | median s | speed-up best / median | peak RSS GB | peak / model | "
        "anon GB | file GB | GB/s | of the copy limit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report.get("methods", []):
        s = row.get("summary", {})
        for tool in TOOLS:
            t = s.get(tool)
            if not t:
                continue
            speed = f"{_x(t['speedup_best'])} / {_x(t['speedup_median'])}" if "speedup_best" in t else ""
            fraction = f"{t['bandwidth_fraction']:.1%}" if "bandwidth_fraction" in t else "—"
            lines.append(f"| {row['method']} | {tool} | {t['runs']} | {t['best_s']:.2f} | {t['median_s']:.2f} | "
                         f"{speed} | {_gb(t['peak_rss'])} | {t['peak_over_model'] or 0:.2f} | {_gb(t['peak_anon'])} | "
                         f"{_gb(t['peak_file'])} | {_gb(t['bytes_per_s'])} | {fraction} |")
    skipped = [f"{row['method']} (repetition {', '.join(str(r + 1) for r in row['skipped_repeats'])})"
               for row in report.get("methods", []) if row.get("skipped_repeats")]
    if skipped:
        lines += ["", f"Not repeated, to end within {report.get('budget_min'):g} minutes: " + "; ".join(skipped) + "."]
    agreement = [row for row in report.get("methods", []) if "agreement" in row]
    if agreement:
        lines += [
            "",
            "## Output agreement",
            "",
            "Both outputs are bf16, compared tensor by tensor against each other. *Differ*: entries of θ that are not "
            "bit-identical; *max ulps*: the largest difference in units in the last place of θ (bf16); *rel. diff*: "
            "‖τ_nb − τ_mk‖ / ‖τ_mk‖ over the whole model for the merged task vectors τ = θ − θ₀ (worst tensor in "
            "brackets); *cosine* and *norm ratio* of τ_nb against τ_mk.",
            "",
            "| method | differ | max ulps | rel. diff (worst tensor) | cosine | norm ratio nb/mk |",
            "|---|---|---|---|---|---|",
        ]
        for row in agreement:
            a = row["agreement"]
            lines.append(f"| {row['method']} | {a['elements_differ']:,} of {a['elements']:,} "
                         f"({a['fraction_differ']:.2e}) | {a['max_ulps']:.0f} | {a['rel_diff']:.2e} "
                         f"({a['worst_tensor_rel_diff']:.2e}, `{a['worst_tensor']}`) | {a['cosine']:.6f} | "
                         f"{a['norm_ratio']:.4f} |")
        lines += [""] + [f"* {note}" for note in agreement_notes(report)]
    lines += ["", "## Targets (issue 29)", ""]
    budget = report.get("memory_budget", {})
    if budget.get("budget_bytes"):
        lines += [f"Memory budget: nbmerge's start-up ({_gb(budget['startup_bytes'])} GB) + one model "
                  f"({_gb(budget['model_bytes'])} GB) + {budget['few_tensors']} times the largest tensor in float32 "
                  f"({_gb(budget['largest_tensor_fp32_bytes'])} GB) = {_gb(budget['budget_bytes'])} GB.", ""]
    lines += ["| target | measured | met |", "|---|---|---|"]
    for t in report.get("targets", []):
        met = "yes" if t["met"] else "**no**"
        if "aim_met" in t:
            met += f" (aim {'met' if t['aim_met'] else 'not met'})"
        lines.append(f"| {t['target']} | {t['value']:.2f} {t['unit']} | {met} |")
    notes = findings(report)
    if notes:
        lines += ["", "## Why", ""] + [f"* {note}" for note in notes]
    lines.append("")
    for row in report.get("methods", []):
        commands = row.get("commands", {})
        lines += [f"<details><summary>{row['method']}: commands{' and mergekit YAML' if 'mergekit_yaml' in row else ''}"
                  "</summary>", "", "```"]
        lines += [commands[tool] for tool in ("nbmerge", "mergekit") if tool in commands]
        lines += ["```", ""]
        if "mergekit_yaml" in row:
            lines += ["```yaml", row["mergekit_yaml"].rstrip(), "```", ""]
        lines += ["</details>", ""]
    lines += differences_table()
    return "\n".join(lines) + "\n"


def findings(report: dict) -> list[str]:
    """What the numbers say about the targets (computed from the report, for the full-size run and --quick alike)."""
    out = []
    rows = {row["method"]: row.get("summary", {}) for row in report.get("methods", [])}
    ta = rows.get("task_arithmetic", {})
    nb = ta.get("nbmerge")
    if nb and "bandwidth_fraction" in nb:
        startup_s = report.get("startup", {}).get("nbmerge", {}).get("wall_s", 0.0)
        write = report.get("write", {})
        out.append(
            f"Floor: a task-arithmetic merge reads the base and the experts once and writes the merge once "
            f"({_gb(report.get('bytes_moved'))} GB): {report.get('copy_floor_s', 0):.2f} s at the measured copy rate; "
            f"writing the output ({_gb(report.get('model', {}).get('model_bytes'))} GB) and fsync'ing it takes "
            f"{report.get('write_floor_s', 0):.2f} s at the output disk's measured rate "
            f"({_gb(write.get('Bps'))} GB/s), so the floor is {report.get('floor_s', 0):.2f} s. nbmerge's task "
            f"arithmetic takes {nb['best_s']:.2f} s, {startup_s:.2f} s of it the start-up: "
            f"{(nb['best_s'] - startup_s) / report['floor_s']:.2f}× the floor after start-up."
            if report.get("floor_s") else f"Bandwidth: {nb['bandwidth_fraction']:.1%} of the copy limit.")
        out.append(
            "How: each input tensor is read where the checkpoint's pages are (a memory map, no copy, its pages "
            "mapped in one `madvise` call; the next tensor's pages are read ahead while this one merges). Task "
            "arithmetic and averaging are one compiled loop per tensor (`nbmerge.engine.fused`, numba): each stored "
            "bf16 entry of θ₀ and the experts read once, the task vectors summed in float32, scaled, added to θ₀ and "
            "rounded to bf16 once, each output entry written once, in reused output memory (tests/test_fused.py: "
            "the torch path's bits). TIES and DARE are compiled loops too, each pass one read of the stored bytes: "
            "two threshold counts of the bits of |τ_t|, the sign pass, and the merge pass (trim, elected sign, the "
            "agreeing entries' mean, θ₀ + α·τ rounded once), the T trimmed values of 2048 entries held in cache; "
            "DARE's masks are drawn once per tensor with torch's generators (the torch path's draws, one thread per "
            "task), kept as one bit per entry and task, and applied in the loops. Every output is bit-identical to "
            "the torch paths' (tests/test_fused.py, tests/test_sliced_merge.py). The writer "
            "gathers the output's bytes in file order into one reused, aligned buffer and writes them past the page "
            "cache (O_DIRECT; a file system without it gets page-cache writes, synced every 256 MB), so writing "
            "the output takes no fresh memory; the merge's output tensors reuse memory the writer has released, "
            "in a folder output as in a single file.")
    mk, thp = ta.get("mergekit"), ta.get(MERGEKIT_THP)
    if nb and mk and thp:
        out.append(f"Huge pages: mergekit's task arithmetic takes {mk['best_s']:.1f} s at its defaults and "
                   f"{thp['best_s']:.1f} s with `THP_MEM_ALLOC_ENABLE=1`, the setting nbmerge's command line makes; "
                   f"nbmerge's lead over mergekit with it is {thp['speedup_best']:.2f}× (without: "
                   f"{mk['speedup_best']:.2f}×).")
    budget = report.get("memory_budget", {})
    over = [(method, s["nbmerge"]) for method, s in rows.items() if "nbmerge" in s and budget.get("budget_bytes")
            and s["nbmerge"]["peak_rss"] > budget["budget_bytes"]]
    for method, s in over:
        why = ("the merged model (one model, which the budget allows: the output is a single shard below 5 GB, "
               "written when complete) plus the float32 temporaries of the last and largest tensor (`lm_head`: θ₀, "
               "the T task vectors and the kernel's result"
               + (", and DARE's mask of each task while it drops entries" if method == "dare_ties" else "")
               + "; TIES' global thresholds hold no model-sized buffer: a radix selection over the tensors)")
        out.append(f"Memory, {method}: nbmerge peaks at {_gb(s['peak_rss'])} GB against a budget of "
                   f"{_gb(budget['budget_bytes'])} GB: {why}.")
    for method, s in rows.items():
        if "nbmerge" in s and "mergekit" in s and s["mergekit"].get("speedup_best", 2) < 1:
            out.append(f"Speed, {method}: mergekit is faster ({s['mergekit']['best_s']:.1f} s against nbmerge's "
                       f"{s['nbmerge']['best_s']:.1f} s).")
    if report.get("threads"):
        out.append(f"Threads: both tools ran with {report['threads']} thread(s) (OMP_NUM_THREADS), because the "
                   "machine is shared: with as many threads as cores and another busy process, PyTorch's OpenMP "
                   "threads spin-wait for each other and both tools take several times longer, by amounts that "
                   "change from run to run.")
    return out


def agreement_notes(report: dict) -> list[str]:
    """What the agreement table means, method by method, from the numbers."""
    notes = []
    for row in report.get("methods", []):
        a = row.get("agreement")
        if not a:
            continue
        if row["method"] == "task_arithmetic":
            notes.append(f"Task arithmetic: {a['elements_differ']:,} entries differ (max {a['max_ulps']:.0f} ulp). "
                         + ("Bit-identical: both compute θ₀ + λ·Σ_t (θ_t − θ₀) in float32 from the same bf16 inputs "
                            "and round once to bf16." if a["elements_differ"] == 0 else
                            "Both compute θ₀ + λ·Σ_t (θ_t − θ₀) in float32 and round once to bf16; the differing "
                            "entries come from a different order of the float32 operations, one ulp at most."))
        elif row["method"] == "ties":
            notes.append(
                f"TIES: {a['fraction_differ']:.2%} of the entries differ (rel. diff {a['rel_diff']:.2e} of the merged "
                "task vector): nbmerge trims each task vector at one threshold over the whole model (as the TIES "
                "reference code does), mergekit at one threshold per tensor, and no setting of either tool changes "
                "that. nbmerge's own TIES kernel run with mergekit's per-tensor thresholds differs from mergekit's "
                f"output in {a['per_tensor_trim_elements_differ']:,} entries "
                f"({a['per_tensor_trim_fraction_differ']:.2e}, rel. diff {a['per_tensor_trim_rel_diff']:.2e}), "
                "of which "
                f"{a['per_tensor_trim_differ_elsewhere']:,} lie where no task's |τ_t| equals its tensor's threshold "
                f"({a['at_threshold']:,} entries do): the rest of the disagreement is which of several tied entries "
                "at the threshold are kept (bf16 task vectors take few distinct values), and nbmerge keeping the "
                "entry at the threshold itself.")
        elif row["method"] == "dare_ties":
            notes.append(
                "DARE-TIES: the drop masks are random and drawn differently (so "
                f"{a['fraction_differ']:.0%} of the entries differ, cosine {a['cosine']:.3f}); the statistics agree: "
                f"non-zero merged entries {a['nbmerge_nonzero']:.3f} (nbmerge) vs {a['mergekit_nonzero']:.3f} "
                f"(mergekit), cosine with the undropped dis-mean {a['nbmerge_cosine_undropped']:.3f} vs "
                f"{a['mergekit_cosine_undropped']:.3f}, norm over it {a['nbmerge_norm_over_undropped']:.3f} vs "
                f"{a['mergekit_norm_over_undropped']:.3f} (rescaling by 1/(1 − p) and to the L1 norm agree on "
                "average).")
    return notes


def write_report(report: dict, out: str | os.PathLike) -> None:
    write_pair(out, report, render_markdown(report))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mergekit", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports/mergekit", help="writes <out>.json and <out>.md")
    parser.add_argument("--quick", action="store_true", help="a Llama of a few MB (tests, a smoke check)")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--repeats", type=int, default=2, help="runs per (method, tool), alternating the order")
    parser.add_argument("--budget-min", type=float, default=30.0,
                        help="repeat a method only if that should end within this many minutes of the start")
    parser.add_argument("--threads", type=int, default=None,
                        help="OMP/MKL threads of both tools (default: their own, all cores)")
    parser.add_argument("--workdir", default=None, help="keep (and reuse) the checkpoints here")
    parser.add_argument("--peer-dir", default=default_peer_dir(), help="where mergekit's venv lives")
    parser.add_argument("--no-mergekit", action="store_true", help="the nbmerge side alone")
    parser.add_argument("--device", default="cpu", help="nbmerge's --device (cuda: the GPU check, bench/gpu_check.sh; "
                                                        "mergekit runs on the CPU)")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        parser.error(f"unknown method {unknown[0]!r}; choose from {', '.join(METHODS)}")
    report = run_benchmark(args.out, quick=args.quick, methods=methods, repeats=args.repeats,
                           budget_min=args.budget_min, threads=args.threads, workdir=args.workdir,
                           peer_dir=args.peer_dir, with_mergekit=not args.no_mergekit, device=args.device,
                           command="python -m bench.mergekit " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(render_markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
