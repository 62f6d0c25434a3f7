"""Merging by method name: the entry point the CLI and the notebooks share."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .errors import MethodError
from .io import Source, StateDict, check_not_an_input, write_tensors
from .methods import get_method
from .sources import CastOutput, WeightedExpert
from .walker import Walk


def merge(method: str, base: Source, experts: Sequence[Source], params: Optional[Mapping[str, Any]] = None, *,
          grams=None, fishers=None, walk: Optional[Walk] = None) -> StateDict:
    """Merge ``experts`` (paths or state dicts) into ``base`` with the registered ``method``."""
    return get_method(method).run(base, experts, params, grams=grams, fishers=fishers, walk=walk)


def merge_to_file(method: str, base: Source, experts: Sequence[Source], out: str | os.PathLike,
                  params: Optional[Mapping[str, Any]] = None, *, grams=None, fishers=None,
                  walk: Optional[Walk] = None, max_shard_bytes: Optional[int] = None,
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
