"""Merging by method name: the entry point the CLI and the notebooks share."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .errors import MethodError
from .io import Source, StateDict, check_not_an_input, write_tensors
from .methods import get_method
from .sources import CastOutput, WeightedExpert
from .walker import WalkOptions


def merge(method: str, base: Source, experts: Sequence[Source], params: Optional[Mapping[str, Any]] = None, *,
          grams=None, fishers=None, walk: Optional[WalkOptions] = None) -> StateDict:
    """Merge ``experts`` (paths or state dicts) into ``base`` with the registered ``method``."""
    return get_method(method).run(base, experts, params, grams=grams, fishers=fishers, walk=walk)


def merge_to_file(method: str, base: Source, experts: Sequence[Source], out: str | os.PathLike,
                  params: Optional[Mapping[str, Any]] = None, *, grams=None, fishers=None,
                  walk: Optional[WalkOptions] = None, max_shard_bytes: Optional[int] = None,
                  weights: Optional[Sequence[float]] = None, out_dtype=None) -> list[Path]:
    """Merge and write the result tensor by tensor, atomically (sharded above ``max_shard_bytes``).

    Nothing is written until every check passed; ``out`` may not be (or overwrite) an input. An earlier output at
    ``out`` (single file, or shards and index) is replaced as a whole once the new one is complete.
    ``weights``: one per expert, scaling its task vector before merging (a recipe's per-model weights).
    ``out_dtype``: the output's floating-point dtype (default: the base's, tensor by tensor).
    """
    inputs = [base, *(experts if isinstance(experts, Sequence) and not isinstance(experts, (str, bytes)) else ()),
              *(grams or ()), *(fishers or ())]
    check_not_an_input(out, inputs)
    if weights is not None:
        if len(weights) != len(experts):
            raise MethodError(f"{len(weights)} weights for {len(experts)} experts: give one per expert")
        experts = [e if w == 1.0 else WeightedExpert(base, e, w) for e, w in zip(experts, weights)]
    items = get_method(method).run(base, experts, params, grams=grams, fishers=fishers, walk=walk, stream=True)
    if out_dtype is not None:
        items = CastOutput(items, out_dtype)
    # One metadata key: safetensors stores the header map unordered, so several keys would make the bytes of
    # identical merges differ from run to run.
    record = {"method": method, "params": get_method(method).check_params(dict(params or {}))}  # as parsed
    if weights is not None:
        record["weights"] = [float(w) for w in weights]
    metadata = {"nbmerge": json.dumps(record, sort_keys=True, default=str)}
    return write_tensors(items, out, max_shard_bytes=max_shard_bytes, metadata=metadata)


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
