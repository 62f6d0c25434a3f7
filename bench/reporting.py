"""What every benchmark writes: ``<out>.json`` (the measurements) and ``<out>.md`` (the report), atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Optional

from nbmerge.io import atomic_write_text


def write_pair(out: str | os.PathLike, data: Any, markdown: str, default: Optional[Callable] = None) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_name(out.name + ".json"), json.dumps(data, indent=1, default=default) + "\n")
    atomic_write_text(out.with_name(out.name + ".md"), markdown)
