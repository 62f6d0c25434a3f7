"""The trial cache: per-example logits of every evaluated merge, on disk, keyed by the recipe that made them and
the code that did, checksummed (:class:`TrialCache`); one per zoo under the nbmerge cache (:func:`trial_cache`)."""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import torch

from ..engine.io import atomic_write_bytes
from ..errors import NbmergeError
from .protocol import Predictions, evaluate_predictions

# ------------------------------------------------------------------------------------------------ trial cache

def _digest(value) -> str:
    from ..codehash import digest

    return digest(value, 24)


def _entry_checksum(meta: dict, logits: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray]) -> str:
    """sha256 of a trial-cache entry: its meta (canonical JSON), then per task in ``meta["tasks"]`` order its logits
    and labels (each with its name, dtype and shape, then its bytes in C order)."""
    digest = hashlib.sha256(b"nbmerge-trial-2\0")
    digest.update(json.dumps(meta, sort_keys=True, default=str).encode() + b"\0")
    for task in meta["tasks"]:
        for kind, array in (("logits", logits[task]), ("labels", labels[task])):
            array = np.ascontiguousarray(array)
            digest.update(f"{kind}/{task}:{array.dtype.str}:{list(array.shape)}\0".encode())
            digest.update(array.tobytes())
    return digest.hexdigest()


def zoo_fingerprint(zoo) -> str:
    """A short hash of the zoo's checkpoints (the manifest's sha256 of base, heads and experts)."""
    return _digest(zoo.manifest.get("checksums", {}))[:12]


class TrialCache:
    """Per-example logits of evaluated merges, on disk, keyed by the recipe that made them and the code that did.

    ``cache.predictions(recipe, split, make_state)`` returns the stored predictions when ``recipe`` (any JSON-able
    description that determines the weights: method, parameters, α, which experts, seeds) was evaluated on ``split``
    before, and otherwise calls ``make_state()`` (only then: the merge itself is skipped on a hit), evaluates and
    stores. Files are written atomically. ``root=None``: memory only.

    **Keyed by code.** The key (and the folder, ``<root>/<suite>-<zoo checksum>-<code fingerprint>/``, so that
    search logs and records kept beside the entries are keyed by it too) includes
    :func:`nbmerge.codehash.code_fingerprint`, a sha256 of the package's source (every module that can change a
    merge or its evaluation): after any change to that code a warm cache misses and recomputes.

    **Verified.** Every entry holds a sha256 of its arrays (each task's logits and labels, in the order of its meta's
    tasks) and of its meta (recipe, split, subset, code fingerprint, key), written at :meth:`put` and checked at
    :meth:`get`. An entry that is unreadable, lacks the checksum, does not match it, or was written for another key
    is never used: it is moved aside to ``<root>/quarantine/<folder>/`` (nothing is deleted), a line says so (to
    ``log`` and as an ``NbmergeWarning``) and the entry is recomputed.

    Safe under concurrent workers (processes or machines sharing ``root``, e.g. a distributed search's): a miss is
    computed under an exclusive lock on ``<root>/.locks/<key>.lock``, and the entry is looked up again once the lock
    is held, so one recipe is never computed twice at once; the others wait and read it.
    """

    FORMAT = 2  # 2: checksummed entries keyed by code (format-1 entries, without either, are never read)

    def __init__(self, zoo, evaluator, root: Optional[os.PathLike] = None, log: Callable = lambda *_: None):
        from ..codehash import code_fingerprint

        self.zoo = zoo
        self.evaluator = evaluator
        self.suite = zoo.root.name
        self.code = code_fingerprint()
        self.root = None if root is None else Path(root) / f"{self.suite}-{zoo_fingerprint(zoo)}-{self.code[:12]}"
        self.memory: dict[str, Predictions] = {}
        self.hits = 0
        self.misses = 0
        self.quarantined: list[Path] = []
        self.log = log

    def key(self, recipe, split: str) -> str:
        return _digest({"recipe": recipe, "split": split, "subset": self.evaluator.subset_spec(split),
                        "code": self.code})

    def get(self, recipe, split: str, _locked: bool = False) -> Optional[Predictions]:
        """The stored predictions of ``recipe`` on ``split``, or None (absent, or bad and quarantined). A bad entry
        is moved aside only under its key's lock (``_locked``: the caller holds it), after reading it once more:
        another worker may just have replaced it with a good one."""
        key = self.key(recipe, split)
        if key in self.memory:
            return self.memory[key]
        if self.root is None:
            return None
        path = self.root / f"{key}.npz"
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["__meta__"]))
                logits = {t: data[f"logits/{t}"] for t in meta["tasks"]}
                labels = {t: data[f"labels/{t}"] for t in meta["tasks"]}
                stored = str(data["__checksum__"]) if "__checksum__" in data.files else None
        except Exception as exc:  # noqa: BLE001 - a damaged entry is recomputed, never trusted
            problem = f"is unreadable ({type(exc).__name__}: {exc})"
        else:
            if stored is None:
                problem = "has no checksum"
            elif _entry_checksum(meta, logits, labels) != stored:
                problem = "does not match its checksum (altered or damaged after it was written)"
            elif meta.get("key") != key:
                problem = f"was written for another entry ({meta.get('key')!r})"
            else:
                problem = None
        if problem is not None:
            if not _locked:
                with self._key_lock(key):
                    return self.get(recipe, split, _locked=True)
            self._quarantine(path, problem)
            return None
        preds = Predictions(logits, labels, split, 0.0, {"cached": True, "seconds": meta.get("seconds", 0.0)})
        self.memory[key] = preds
        return preds

    def put(self, recipe, split: str, preds: Predictions) -> None:
        key = self.key(recipe, split)
        self.memory[key] = preds
        if self.root is None:
            return
        import io

        self.root.mkdir(parents=True, exist_ok=True)
        meta = {"recipe": recipe, "split": split, "tasks": preds.tasks, "seconds": preds.seconds,
                "subset": self.evaluator.subset_spec(split), "code": self.code, "key": key, "format": self.FORMAT}
        meta = json.loads(json.dumps(meta, sort_keys=True, default=str))  # exactly what a read gives back
        logits = {t: np.ascontiguousarray(preds.logits[t]) for t in preds.tasks}
        labels = {t: np.ascontiguousarray(preds.labels[t]) for t in preds.tasks}
        arrays = {f"logits/{t}": logits[t] for t in preds.tasks}
        arrays.update({f"labels/{t}": labels[t] for t in preds.tasks})
        arrays["__meta__"] = np.array(json.dumps(meta, sort_keys=True))
        arrays["__checksum__"] = np.array(_entry_checksum(meta, logits, labels))
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        atomic_write_bytes(self.root / f"{key}.npz", buffer.getvalue())

    def _quarantine(self, path: Path, why: str) -> None:
        """Move a bad entry to ``<root>/quarantine/<folder>/`` (kept, never read again) and say so."""
        import time
        import warnings

        from ..errors import NbmergeWarning

        folder = self.root.parent / "quarantine" / self.root.name
        target = folder / f"{path.stem}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}{path.suffix}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
            where = f"moved to {target}"
        except FileNotFoundError:
            where = "already moved aside by another process"
        except OSError as exc:
            where = f"could not be moved aside ({exc}); it is ignored"
        self.quarantined.append(target)
        message = f"trial cache: entry {path} {why}: not used, {where}; recomputing it"
        self.log(message)
        warnings.warn(message, NbmergeWarning, stacklevel=3)

    def predictions(self, recipe, split: str, make_state: Callable[[], Mapping[str, torch.Tensor]],
                    tasks: Optional[Sequence[str]] = None) -> Predictions:
        if split == "test" and isinstance(recipe, dict) and recipe.get("chosen_on") == "test":
            raise NbmergeError("a recipe chosen on the test split cannot be evaluated as a result")
        found = self.get(recipe, split)
        if found is None and self.root is not None:
            with self._key_lock(self.key(recipe, split)):
                found = self.get(recipe, split, _locked=True)  # another worker may have computed it meanwhile
                if found is None:
                    return self._compute(recipe, split, make_state, tasks)
        if found is not None:
            self.hits += 1
            return found
        return self._compute(recipe, split, make_state, tasks)

    def _compute(self, recipe, split: str, make_state, tasks) -> Predictions:
        self.misses += 1
        preds = evaluate_predictions(self.evaluator, make_state(), split, tasks)
        self.put(recipe, split, preds)
        return preds

    @contextmanager
    def _key_lock(self, key: str):
        """An exclusive lock on one entry's key (blocking: whoever holds it is computing that very entry)."""
        import fcntl

        folder = self.root / ".locks"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{key}.lock", "a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def trial_cache(zoo, device: str = "cpu", cache: str = "", val_examples: int = 0, seed: int = 0,
                log: Callable = lambda *_: None) -> TrialCache:
    """The trial cache of ``zoo`` under the nbmerge cache, with its evaluator's ``val`` split cut to a seeded
    subset of ``val_examples`` per task (0: the whole split). Test is always the whole split."""
    from ..pools.store import cache_root

    # a view of the zoo's one evaluator: trial caches at different seeds each keep their own validation subset
    evaluator = zoo.evaluator(device).with_val_subset(val_examples, seed)
    return TrialCache(zoo, evaluator, cache_root(cache or None) / "trials", log=log)
