"""What every benchmark records: where it ran (``machine``), and ``<out>.json`` with ``<out>.md``, atomically."""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
from pathlib import Path
from typing import Any, Callable, Optional

import torch

from nbmerge.engine.io import atomic_write_text


def machine() -> dict:
    """Where a benchmark ran: host, platform, CPUs, versions, threads, memory and the time (UTC)."""
    info = {"host": socket.gethostname(), "platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "nbmerge": __import__("nbmerge").__version__, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
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
