"""Which statistics file (Grams, Fishers) belongs to which expert.

Methods pair ``grams[i]`` with ``experts[i]``. ``nbmerge stats`` records each Gram file's task in its metadata, and
a zoo's experts are named by their task, so a list given in another order than the experts is recognisable: it
is refused, naming both, rather than merged with each expert's statistics swapped. Files without a recorded task,
or whose tasks name no expert, are paired by position, and :func:`check_pairing` says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from ..errors import NbmergeError


def _metadata_task(path: Path) -> Optional[str]:
    if not path.is_file() or path.suffix != ".safetensors":
        return None
    try:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt", device="cpu") as handle:
            return (handle.metadata() or {}).get("task")
    except Exception:  # noqa: BLE001 - an unreadable file is reported by the loader, with its own message
        return None


def expert_task(path: Path) -> str:
    """An expert's task: recorded in its metadata, else its file's stem (a zoo's ``experts/<task>.safetensors``) or
    its folder's name."""
    return _metadata_task(path) or (path.stem if path.is_file() else path.name)


def check_pairing(experts: Sequence, stats: Optional[Sequence], flag: str = "--grams") -> list[str]:
    """Refuse statistics files whose recorded tasks contradict the experts' order; otherwise return notes to show
    (empty when every file's recorded task names its own expert). Only paths are checked (in-memory statistics
    carry no task); a count mismatch is left to the method, which names it."""
    if not stats or len(stats) != len(experts):
        return []
    if not all(isinstance(x, (str, os.PathLike)) for x in [*experts, *stats]):
        return []
    expert_paths, stat_paths = [Path(e) for e in experts], [Path(s) for s in stats]
    names = [expert_task(p) for p in expert_paths]
    tasks = [_metadata_task(p) for p in stat_paths]
    for i, task in enumerate(tasks):
        if task is not None and task != names[i] and task in names:
            order = [str(stat_paths[tasks.index(n)]) if n in tasks else "?" for n in names]
            raise NbmergeError(
                f"{flag}: file {i + 1} ({stat_paths[i]}) holds the statistics of task {task!r}, but expert {i + 1} is "
                f"{names[i]!r} ({expert_paths[i]}); the {task!r} expert is number {names.index(task) + 1}. Give "
                f"{flag} in the experts' order: {' '.join(order)}")
    if all(t == n for t, n in zip(tasks, names)):
        return []
    pairs = "; ".join(f"{n} <- {p.name}" + (f" (task {t!r})" if t else "") for n, p, t in zip(names, stat_paths, tasks))
    return [f"{flag} paired with the experts by position (no recorded task names its expert): {pairs}"]
