"""The zoo's store on disk: where the cache lives, artifacts with a checksum journal, suite manifests, links.

Used by every kind of suite: the embedded zoos (built by ``nbmerge.pools.build``, opened by ``nbmerge.pools.zoo``),
imported CLIP and language-model pools (``pools.clip``, ``pools.lm``) and the posteriors trained beside a zoo
(``pools.posteriors``). Every artifact is written atomically and recorded in the journal only afterwards, so a file
not in the journal is not finished and a file whose sha256 differs is rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from ..errors import CacheError, CheckpointError
from ..engine.io import atomic_write_bytes, atomic_write_text, jsonable, save_state_dict, sha256_file
from .kinds import is_pool


def cache_root(cache: Optional[str | os.PathLike] = None) -> Path:
    return Path(cache or os.environ.get("NBMERGE_CACHE") or Path.home() / ".cache" / "nbmerge")


LINK_TMP = ".{name}.link.tmp"


def link_file(source: Path, target: Path) -> None:
    """Make ``target`` the file ``source`` (a hard link, or a copy across file systems), atomically. A target that
    already is that file is left alone (renaming one link of a file onto another is a no-op that would leave the
    temporary behind), and the temporary never outlives the call."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and os.path.samefile(source, target):
        return
    tmp = target.with_name(LINK_TMP.format(name=target.name))
    try:
        tmp.unlink(missing_ok=True)
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copy2(source, tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def remove_link_temporaries(folder: Path) -> None:
    """Remove the link temporaries an interrupted build (or an older version of ``link_file``) left in a suite
    folder."""
    if folder.is_dir():
        for stale in folder.rglob(LINK_TMP.format(name="*")):
            stale.unlink(missing_ok=True)


class Store:
    """Artifacts with a checksum journal: ``has`` is true only for complete, unaltered files.

    ``heal``: a corrupt journal is discarded (logged, naming it; ``discarded`` then says why) so that a build can
    re-verify what it can (``_recover_journal`` in ``pools.build``) and rebuild the rest. Without it (every reader: a
    discarded journal would make each artifact look unfinished, and a later write would drop the others' entries)
    opening the store raises a ``CacheError`` naming the journal and ``remedy``.
    """

    def __init__(self, root: Path, log=print, heal: bool = True, remedy: str = "run `nbmerge zoo build` to heal it"):
        self.root = Path(root)
        if heal:
            self.root.mkdir(parents=True, exist_ok=True)
        self.journal_path = self.root / "journal.json"
        self.log = log
        self.discarded: Optional[str] = None
        self.written: list[str] = []  # what this object recorded (a build session's "built")
        try:
            self.journal = read_journal(self.journal_path)
        except CacheError as exc:
            if not heal:
                raise CacheError(f"{exc}: {remedy}") from exc
            self.log(f"{exc}: discarding it (the artifacts that a suite manifest vouches for are kept, the rest "
                     "rebuilt)")
            self.discarded = str(exc)
            self.journal = {}

    def path(self, rel: str) -> Path:
        return self.root / rel

    def has(self, rel: str) -> bool:
        path = self.path(rel)
        if rel not in self.journal:
            return False
        if not path.exists() or sha256_file(path) != self.journal[rel]:
            self.log(f"cache file {path} is missing, truncated or altered (checksum mismatch): rebuilding it")
            del self.journal[rel]
            return False
        return True

    def verify(self, rel: str) -> Path:
        """The path of a finished artifact, or a clear error if it is absent or corrupt."""
        path = self.path(rel)
        if rel not in self.journal or not path.exists():
            raise CheckpointError(f"{path} is missing: run `nbmerge zoo build` to (re)build it")
        if sha256_file(path) != self.journal[rel]:
            raise CheckpointError(f"{path} is truncated or altered (sha256 differs from the build journal): "
                                  "run `nbmerge zoo build` to rebuild it")
        return path

    def _record(self, rel: str) -> None:
        self.journal[rel] = sha256_file(self.path(rel))
        self.written.append(rel)
        self.save()

    def save(self) -> None:
        atomic_write_text(self.journal_path, json.dumps(self.journal, indent=1, sort_keys=True))

    def put_tensors(self, rel: str, tensors: dict[str, torch.Tensor]) -> None:
        save_state_dict(tensors, self.path(rel))
        self._record(rel)

    def put_arrays(self, rel: str, arrays: dict[str, np.ndarray]) -> None:
        import io

        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        atomic_write_bytes(self.path(rel), buffer.getvalue())
        self._record(rel)

    def load_arrays(self, rel: str) -> dict[str, np.ndarray]:
        with np.load(self.verify(rel), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}


class Built:
    """Which inputs each artifact of an imported pool was built from, kept in a JSON ``document`` at ``path`` (under
    ``section``): a step whose inputs are unchanged and whose file verifies is skipped, so an interrupted import
    resumes where it stopped and a changed source rebuilds only what it affects."""

    def __init__(self, store: Store, path: Path, document: Optional[dict] = None, section: str = "artifacts"):
        self.store, self.path = store, path
        if document is None:
            document = json.loads(path.read_text()) if path.is_file() else {}
        self.document = document
        self.keys = document.setdefault(section, {})

    def fresh(self, rel: str, key: dict) -> bool:
        return self.store.has(rel) and self.keys.get(rel) == jsonable(key)

    def record(self, rel: str, key: dict) -> None:
        self.keys[rel] = jsonable(key)
        atomic_write_text(self.path, json.dumps(self.document, indent=1, sort_keys=True))


def json_problem(exc: BaseException) -> str:
    """Why a JSON file could not be read, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError):
        return f"unreadable: {exc.strerror or exc}"
    return " ".join(str(exc).split())


def read_journal(path: Path) -> dict[str, str]:
    """A store's journal ({} when there is none yet), or a CacheError naming it."""
    if not path.exists():
        return {}
    try:
        journal = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CacheError(f"the build journal {path} is corrupt ({json_problem(exc)})") from exc
    if not isinstance(journal, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in journal.items()):
        raise CacheError(f"the build journal {path} is corrupt (not a map of artifact to sha256)")
    return journal


def remedy_for(suite: str) -> str:
    if is_pool(suite):
        return f"run `nbmerge pool import {suite} --checkpoints PATH --data-root PATH` to re-import it"
    return f"run `nbmerge zoo build {suite}` to rebuild it"


MANIFEST_KEYS = {"tasks": list, "recipe": dict, "store": str, "checksums": dict}  # what opening a suite needs


def read_manifest(path: Path, remedy: str) -> dict:
    """A suite's manifest, or a one-line CacheError naming it (corrupt, not JSON, or lacking what opening needs)."""
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CacheError(f"{path} is corrupt ({json_problem(exc)}): {remedy}") from exc
    if not isinstance(manifest, dict):
        raise CacheError(f"{path} is corrupt (not a JSON object): {remedy}")
    wrong = [k for k, kind in MANIFEST_KEYS.items() if not isinstance(manifest.get(k), kind)]
    if wrong:
        raise CacheError(f"{path} is corrupt (missing or malformed {', '.join(wrong)}): {remedy}")
    return manifest


def store_root(root: Path, manifest: dict) -> Path:
    """The store a suite's manifest records: relative to the suite folder ``root`` (so that a moved cache works),
    or, in a manifest of an older build, absolute; an absolute path is looked up first by its name beside the
    suite folder (a zoo's ``store-<hash>``) or inside it (an imported pool's ``store``), where a moved cache has
    it, and used as recorded only when neither exists."""
    recorded = Path(manifest["store"])
    if not recorded.is_absolute():
        return Path(os.path.normpath(root / recorded))
    for candidate in (root.parent / recorded.name, root / recorded.name):
        if (candidate / "journal.json").is_file():
            return candidate
    return recorded
