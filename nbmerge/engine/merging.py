"""Merging by method name: the entry point the CLI and the notebooks share."""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

import torch

from ..errors import MethodError, NbmergeWarning
from .hf import DEFAULT_MAX_SHARD_BYTES, base_folder, check_output_folder, write_folder
from .io import Source, StateDict, as_source, check_not_an_input, write_tensors
from ..methods import get_method
from .pairing import check_pairing
from .sources import CastOutput, WeightedExpert
from .walker import MergeStream, WalkOptions


def merge(method: str, base: Source, experts: Sequence[Source], params: Optional[Mapping[str, Any]] = None, *,
          grams=None, fishers=None, walk: Optional[WalkOptions] = None) -> StateDict:
    """Merge ``experts`` (paths or state dicts) into ``base`` with the registered ``method``."""
    _check_pairings(experts, grams, fishers)
    return get_method(method).run(base, experts, params, grams=grams, fishers=fishers, walk=walk)


def merge_to_file(method: str, base: Source, experts: Sequence[Source], out: str | os.PathLike,
                  params: Optional[Mapping[str, Any]] = None, *, grams=None, fishers=None,
                  walk: Optional[WalkOptions] = None, max_shard_bytes: Optional[int] = None,
                  weights: Optional[Sequence[float]] = None, out_dtype=None,
                  progress: Optional[bool] = None) -> list[Path]:
    """Merge and write the result tensor by tensor, atomically (sharded above ``max_shard_bytes``).

    Nothing is written until every check passed; ``out`` may not be (or overwrite) an input. An earlier output at
    ``out`` (single file, or shards and index) is replaced as a whole once the new one is complete.
    ``weights``: one per expert, scaling its task vector before merging (a recipe's per-model weights).
    ``out_dtype``: the output's floating-point dtype (default: the base's, tensor by tensor).
    ``progress``: a progress bar on stderr over the bytes merged (shown after 2 s); ``None``: when stderr is a
    terminal. An expert may be a LoRA adapter folder (:mod:`nbmerge.engine.adapters`).
    """
    check_not_an_input(out, _inputs(base, experts, grams, fishers))
    _check_pairings(experts, grams, fishers)
    items, record = _merged(method, base, experts, params, grams, fishers, walk, weights, out_dtype, progress)
    # One metadata key: safetensors stores the header map unordered, so several keys would make the bytes of
    # identical merges differ from run to run.
    metadata = {"nbmerge": json.dumps(record, sort_keys=True, default=str)}
    with _reusing_outputs():
        return write_tensors(items, out, max_shard_bytes=max_shard_bytes, metadata=metadata,
                             plan=getattr(items, "plan", None))


def _reusing_outputs():
    """While a merge streams to a writer: the writer releases each tensor once written, and its memory serves a
    later one (:func:`nbmerge.engine.fused.reusing_outputs`; numba is imported only where a merge needs it)."""
    from .fused import reusing_outputs

    return reusing_outputs()


def merge_to_folder(method: str, base: Source, experts: Sequence[Source], out: str | os.PathLike,
                    params: Optional[Mapping[str, Any]] = None, *, grams=None, fishers=None,
                    walk: Optional[WalkOptions] = None, max_shard_bytes: Optional[int] = DEFAULT_MAX_SHARD_BYTES,
                    weights: Optional[Sequence[float]] = None, out_dtype=None,
                    progress: Optional[bool] = None) -> Path:
    """Merge into a Hugging Face folder that ``AutoModel*.from_pretrained(out)`` loads (:mod:`nbmerge.engine.hf`).

    The weights go to ``model.safetensors`` (shards and ``model.safetensors.index.json`` above
    ``max_shard_bytes``); ``config.json``, ``generation_config.json`` and the tokenizer files are copied from the
    base's folder, and a ``README.md`` model card records the merge. The folder appears complete or not at all;
    an existing ``out`` must be empty or an earlier nbmerge output, and no input may lie inside it. Other
    arguments as :func:`merge_to_file`. Sequence-classifier experts with per-task heads (GLUE) merge their backbone
    and give one folder per task under ``out`` (:mod:`nbmerge.engine.classifiers`).
    """
    from .classifiers import backbone_sources, is_classifier_merge, write_classifier_folders

    _check_pairings(experts, grams, fishers)
    if is_classifier_merge(base, experts):  # GLUE-style experts: the backbone merged, one folder per task's head
        check_output_folder(out, _inputs(base, experts, grams, fishers))
        base_view, expert_views, prefix = backbone_sources(base, experts)
        items, record = _merged(method, base_view, expert_views, params, grams, fishers, walk, weights, out_dtype,
                                progress)
        record["params"] = {**{p.name: p.default for p in get_method(method).params.values()}, **record["params"]}
        with _reusing_outputs():
            write_classifier_folders(items, record, base, experts, prefix, out, max_shard_bytes)
        return Path(out)
    if get_method(method).task_aware:
        return _write_task_models(method, base, experts, out, params, grams, fishers, walk, max_shard_bytes,
                                  weights, out_dtype)
    if base_folder(base) is None or not (base_folder(base) / "config.json").is_file():
        warnings.warn(f"the base {base if isinstance(base, (str, os.PathLike)) else '(in memory)'} is not a Hugging "
                      "Face folder with a config.json: the output folder holds the weights and a model card, which "
                      "from_pretrained cannot load without a config", NbmergeWarning, stacklevel=2)
    check_output_folder(out, _inputs(base, experts, grams, fishers))
    items, record = _merged(method, base, experts, params, grams, fishers, walk, weights, out_dtype, progress)
    if out_dtype is not None:
        record["dtype"] = str(out_dtype).replace("torch.", "")
    defaults = {p.name: p.default for p in get_method(method).params.values()}
    record["params"] = {**defaults, **record["params"]}  # the card names every value the merge used
    with _reusing_outputs():  # before, only merge_to_file reused: a folder output took fresh memory per tensor
        return write_folder(items, out, base=base, experts=experts, record=record,
                            max_shard_bytes=max_shard_bytes, out_dtype=out_dtype)


def _write_task_models(method, base, experts, out, params, grams, fishers, walk, max_shard_bytes, weights,
                       out_dtype) -> Path:
    """A task-aware method's models (:mod:`nbmerge.engine.taskaware`): ``out/<NN>-<expert name>/``, one model folder per
    task, each with its model card; the folder appears complete or not at all."""
    import shutil
    import tempfile

    if weights is not None and any(w != 1.0 for w in weights):
        raise MethodError(f"{method} is task-aware: per-expert weights have no meaning for it")
    check_output_folder(out, _inputs(base, experts, grams, fishers))
    models = get_method(method).run(base, experts, params, grams=grams, fishers=fishers, walk=walk)
    record = {"method": method, "params": {**{p.name: p.default for p in get_method(method).params.values()},
                                           **get_method(method).check_params(dict(params or {}))},
              "task_aware": True, **{k: v for k, v in models.info.items() if k != "task_aware"}}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        for t, (expert, model) in enumerate(zip(experts, models)):
            name = Path(str(expert)).name.removesuffix(".safetensors") if isinstance(expert, (str, os.PathLike)) \
                else f"expert{t}"
            items = ((k, v if out_dtype is None or not v.is_floating_point() else v.to(out_dtype))
                     for k, v in model.items())
            write_folder(items, staging / f"{t:02d}-{name}", base=base, experts=[expert],
                         record={**record, "task": t}, max_shard_bytes=max_shard_bytes, out_dtype=out_dtype)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _check_pairings(experts, grams, fishers) -> None:
    """Statistics files whose recorded tasks contradict the experts' order are refused
    (:mod:`nbmerge.engine.pairing`)."""
    check_pairing(experts, grams, "grams")
    check_pairing(experts, fishers, "fishers")


def _inputs(base, experts, grams, fishers) -> list:
    return [base, *(experts if isinstance(experts, Sequence) and not isinstance(experts, (str, bytes)) else ()),
            *(grams or ()), *(fishers or ())]


def _merged(method, base, experts, params, grams, fishers, walk, weights, out_dtype, progress):
    """The merged ``(key, tensor)`` stream (weighted, cast, with a progress bar) and the record of the merge."""
    if get_method(method).task_aware:
        raise MethodError(f"{method} is task-aware: it gives one model per task, not one merged model; give a "
                          "folder as the output (ending in /), which gets one model folder per task")
    if weights is not None:
        if len(weights) != len(experts):
            raise MethodError(f"{len(weights)} weights for {len(experts)} experts: give one per expert")
        experts = [e if w == 1.0 else WeightedExpert(base, e, w) for e, w in zip(experts, weights)]
    checked = get_method(method).check_params(dict(params or {}))  # as parsed: what runs is what is recorded
    items = get_method(method).run(base, experts, checked, grams=grams, fishers=fishers, walk=walk, stream=True)
    plan = getattr(items, "plan", None)  # a walker's stream says up front what it yields (MergeStream)
    if progress or (progress is None and getattr(sys.stderr, "isatty", lambda: False)()):
        items = _progress(items, as_source(base, "base"), method)
    if out_dtype is not None:
        items = CastOutput(items, out_dtype)
        if plan is not None:
            plan = [(k, out_dtype if d.is_floating_point else d, s) for k, d, s in plan]
    if plan is not None:
        items = MergeStream(items, plan)
    record = {"method": method, "params": checked}
    if weights is not None:
        record["weights"] = [float(w) for w in weights]
    return items, record


def _progress(items, base, method: str):
    """``items`` with a progress bar on stderr over the bytes of the base's tensors, shown after 2 seconds."""
    try:
        from tqdm import tqdm  # not tqdm.auto: in a notebook it warns about ipywidgets
    except ImportError:  # the core install has no tqdm: merge without a bar
        yield from items
        return
    total = sum(math.prod(base.shape(key)) * _itemsize(base.dtype(key)) for key in base.keys())
    with tqdm(total=total, desc=f"merging ({method})", unit="B", unit_scale=True, unit_divisor=1024,
              file=sys.stderr, delay=2.0, leave=False) as bar:
        for key, value in items:
            bar.update(value.numel() * value.element_size())
            yield key, value


def _itemsize(dtype) -> int:
    return dtype.itemsize if hasattr(dtype, "itemsize") else torch.empty((), dtype=dtype).element_size()


def time_merge(method: str, base: Source, experts: Sequence[Source], params: Optional[Mapping[str, Any]] = None, *,
               samples: Sequence[float] = (), repeats: int = 3, cap_s: float = 20.0, device: str = "cpu") -> dict:
    """Wall time of one merge at α = 1 (no evaluation): ``samples`` already measured (e.g. while tuning) are kept,
    and the merge is repeated while there are fewer than ``repeats`` and they add up to less than ``cap_s``
    seconds. Returns ``{"samples": [...], "median": ...}`` in seconds."""
    samples = list(samples)
    while len(samples) < repeats and sum(samples) < cap_s:
        start = time.perf_counter()
        merge(method, base, experts, {**dict(params or {}), "scale": 1.0}, walk=WalkOptions(device=device))
        samples.append(time.perf_counter() - start)
    return {"samples": samples, "median": statistics.median(samples)}


def timing_environment(device: str) -> dict:
    """What a merge time depends on besides the merge: device, threads, CPUs, machine and torch version."""
    import platform

    import torch

    return {"device": device, "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
            "machine": platform.machine(), "torch": torch.__version__}
