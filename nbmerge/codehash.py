"""A fingerprint of the code that computes cached results, so that a cache filled by other code is never read.

:func:`code_fingerprint` is a sha256 over the source of the nbmerge package: every ``nbmerge/**/*.py``, as its
path relative to the package (POSIX form) and its bytes, in sorted order. Only content and relative path count:
not mtimes, not where the package is installed, not ``.pyc`` files (only ``.py`` sources are read). It is
computed once per process.

The set is the whole package except the modules that only *read* cached results and never compute one
(:data:`EXCLUDED`): the report pipeline (``report/``), the verdict and claim logic (``evaluate/claims.py``,
``evaluate/verdicts.py``, the notebooks' ``*_claims.py`` and ``claims.py``) and their figures (``*_figures.py``,
``figures.py``). Everything else can change a merge or its evaluation (the methods and their kernels, the walker,
solvers, models, tasks, the evaluator, ``protocol``, the tuning and the experiments' own merge code), so it is in.
A file edit that cannot change a result (a docstring) still changes the fingerprint: a cache then recomputes once,
which costs time, never correctness.
"""

from __future__ import annotations

import fnmatch
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

PACKAGE = Path(__file__).resolve().parent

# relative paths (POSIX, fnmatch patterns) of modules that only read cached results
EXCLUDED = (
    "report/*",
    "evaluate/claims.py",
    "evaluate/verdicts.py",
    "experiments/*_claims.py",
    "experiments/*_figures.py",
    "experiments/*/claims.py",
    "experiments/*/figures.py",
)


# what trains the Pareto experiments' posteriors and multitask runs (``pools.posteriors``): the training loops, the
# zoo's training recipe and batches they reuse, and the models they train. Narrower than the package, so that an
# edit elsewhere does not retrain them (minutes each).
TRAINING = ("pools/posteriors.py", "pools/train.py", "models/*.py")


def fingerprint_files(root: Optional[Path] = None) -> list[str]:
    """The relative paths (POSIX, sorted) that :func:`code_fingerprint` covers under ``root`` (the package)."""
    root = Path(root) if root is not None else PACKAGE
    out = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") or part == "__pycache__" for part in rel.split("/")):
            continue  # editor backups, caches
        if any(fnmatch.fnmatchcase(rel, pattern) for pattern in EXCLUDED):
            continue
        out.append(rel)
    return sorted(out)


def fingerprint_of(root: Optional[Path] = None, files: Optional[Iterable[str]] = None) -> str:
    """sha256 (hex) over ``files`` (relative paths; default :func:`fingerprint_files`) under ``root``: each
    file's relative path and length-prefixed content, in sorted order."""
    root = Path(root) if root is not None else PACKAGE
    digest = hashlib.sha256(b"nbmerge-code-1\0")
    for rel in sorted(files if files is not None else fingerprint_files(root)):
        data = (root / rel).read_bytes()
        digest.update(rel.encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0")
        digest.update(data)
    return digest.hexdigest()


@lru_cache(maxsize=None)
def _package_fingerprint() -> str:
    return fingerprint_of(PACKAGE)


def code_fingerprint() -> str:
    """The fingerprint of this process's nbmerge source (computed on first use, then cached)."""
    return _package_fingerprint()


@lru_cache(maxsize=None)
def training_fingerprint() -> str:
    """The fingerprint of the code that trains cached posteriors and multitask runs (:data:`TRAINING`)."""
    files = [f for f in fingerprint_files(PACKAGE) if any(fnmatch.fnmatchcase(f, p) for p in TRAINING)]
    return fingerprint_of(PACKAGE, files)


# ------------------------------------------------------------------------------------- small sealed JSON records

def digest(value, length: int = 16) -> str:
    """The first ``length`` hex digits of the sha256 of ``value``'s canonical JSON (keys sorted; anything JSON
    cannot write, as ``str``): the one name every cache entry, log and store folder is given from its key."""
    import json

    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:length]


def seal(key, value) -> str:
    """A small cached record as JSON text carrying a sha256 of its canonical content (key and value), so that a
    damaged or edited record is recognised on read (:func:`unseal`)."""
    import json

    body = json.dumps({"key": key, "value": value}, sort_keys=True, default=str)
    return json.dumps({"key": key, "value": value, "sha256": hashlib.sha256(body.encode()).hexdigest()},
                      default=str)


def unseal(text: str, key) -> tuple[bool, object, str]:
    """(ok, value, why) of a record written by :func:`seal` for ``key``: not ok when it is unreadable, lacks the
    checksum, fails it, or was written for another key."""
    import json

    try:
        record = json.loads(text)
        stored_key, value, digest = record["key"], record["value"], record["sha256"]
    except (ValueError, KeyError, TypeError) as exc:
        return False, None, f"unreadable or unsealed ({type(exc).__name__})"
    body = json.dumps({"key": stored_key, "value": value}, sort_keys=True, default=str)
    if hashlib.sha256(body.encode()).hexdigest() != digest:
        return False, None, "its checksum does not match its content"
    if json.loads(json.dumps(key, sort_keys=True, default=str)) != json.loads(json.dumps(stored_key, sort_keys=True,
                                                                                          default=str)):
        return False, None, "it was written for another key"
    return True, value, ""
