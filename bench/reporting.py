"""What every benchmark records: where it ran (``machine``), and ``<out>.json`` with ``<out>.md``, atomically."""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any, Callable, Optional

import torch

from nbmerge.engine.io import atomic_write_text

#: where a contention benchmark's busy neighbour runs. ``shared``: in the benchmark's own session, so with the kernel's
#: autogroup on it shares the job's scheduling group and CPU time is shared task by task (three runnable tasks of the
#: job against the neighbour's one get three quarters of the machine). ``apart``: in a session of its own, like a
#: program started from another terminal or by a service; with autogroup on, the kernel shares CPU time between the
#: two sessions, so the job gets half the machine however many threads or processes it runs.
NEIGHBOURS = ("shared", "apart")


def start_neighbour(command: list[str], where: str) -> subprocess.Popen:
    """Start the busy neighbour ``command`` in the job's session (``shared``) or in a new one (``apart``)."""
    if where not in NEIGHBOURS:
        raise ValueError(f"the neighbour runs {' or '.join(NEIGHBOURS)}, not {where!r}")
    return subprocess.Popen(command, start_new_session=where == "apart")


def autogroup() -> Optional[bool]:
    """Whether the kernel groups CPU time by session (``/proc/sys/kernel/sched_autogroup_enabled``); None where
    it does not say."""
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return None


def machine() -> dict:
    """Where a benchmark ran: host, platform, CPUs, versions, threads, memory and the time (UTC)."""
    info = {"host": socket.gethostname(), "platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "nbmerge": __import__("nbmerge").__version__, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "sched_autogroup": autogroup()}
    try:
        import safetensors
        info["safetensors"] = safetensors.__version__
    except (ImportError, AttributeError):
        pass
    try:
        with open("/proc/meminfo") as handle:
            info["mem_total"] = int(handle.readline().split()[1]) * 1024
    except OSError:
        pass
    return info


def write_pair(out: str | os.PathLike, data: Any, markdown: str, default: Optional[Callable] = None) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_name(out.name + ".json"), json.dumps(data, indent=1, default=default) + "\n")
    atomic_write_text(out.with_name(out.name + ".md"), markdown)
