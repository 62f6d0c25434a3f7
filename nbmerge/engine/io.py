"""Checkpoint I/O: lazy per-tensor safetensors reading and atomic (optionally sharded) writing.

A *tensor source* is anything with ``keys()``, ``shape(key)``, ``dtype(key)`` and ``get(key)``. Merging
reads one tensor of each expert at a time through these sources, so merging T experts never holds T whole
models in memory. Every file is written under a temporary name and renamed into place only when complete.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import mmap
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Optional, Protocol, Union

import numpy as np
import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save as st_save
from safetensors.torch import save_file as st_save_file

from ..errors import CheckpointError, NbmergeError

StateDict = dict[str, torch.Tensor]

_ST_DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool,
}
INDEX_SUFFIX = ".index.json"
#: what O_DIRECT writes align their offsets, lengths and buffer to (covers 512-byte and 4 KiB sectors)
DIRECT_ALIGN = 4096


class TensorSource(Protocol):
    name: str

    def keys(self) -> list[str]: ...
    def shape(self, key: str) -> tuple[int, ...]: ...
    def dtype(self, key: str) -> torch.dtype: ...
    def get(self, key: str) -> torch.Tensor: ...


class DictSource:
    """An in-memory state dict seen as a tensor source."""

    def __init__(self, tensors: Mapping[str, torch.Tensor], name: str = "<state dict>"):
        for key, value in tensors.items():
            if not isinstance(value, torch.Tensor):
                raise CheckpointError(f"{name}: value of {key!r} is a {type(value).__name__}, not a tensor")
        self._tensors = tensors
        self.name = name

    def keys(self) -> list[str]:
        return list(self._tensors.keys())

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self._tensors[key].shape)

    def dtype(self, key: str) -> torch.dtype:
        return self._tensors[key].dtype

    def get(self, key: str) -> torch.Tensor:
        return self._tensors[key]


def _safe_open(file: Path):
    """safetensors' ``safe_open``, also for a file whose name is not UTF-8 (a Linux file name is bytes, which
    safetensors refuses): that file is opened here and handed over as ``/proc/self/fd/N``. safe_open maps the file
    while it opens it, so the descriptor is closed right after."""
    name = str(file)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        proc = Path("/proc/self/fd")
        if not proc.is_dir():
            raise OSError(f"the file name is not UTF-8 ({ascii(name)}), which safetensors cannot open on this "
                          "system: rename it") from None
        fd = os.open(file, os.O_RDONLY)
        try:
            return safe_open(str(proc / str(fd)), framework="pt", device="cpu")
        finally:
            os.close(fd)
    return safe_open(name, framework="pt", device="cpu")


class SafetensorsSource:
    """One or more safetensors files (a single file, a sharded ``*.index.json``, or a folder) read lazily."""

    def __init__(self, path: Union[str, os.PathLike]):
        path = Path(path)
        self.name = str(path)
        files = _resolve_files(path)
        #: the files read (what an output must never overwrite)
        self.files = tuple(files)
        self._handles = {}
        self._maps: dict[str, mmap.mmap] = {}  # file → its read-only map, made by the first view()
        self._where: dict[str, str] = {}
        #: key → (absolute byte offset of its data in its file, byte length), from the header safe_open checked
        self._spans: dict[str, tuple[int, int]] = {}
        for file in files:
            try:
                handle = _safe_open(file)
                self._spans.update(_data_spans(file))
            except (SafetensorError, OSError, ValueError, KeyError, TypeError) as exc:
                raise CheckpointError(f"{file}: not a readable safetensors file ({exc}); "
                                      "it may be corrupt or truncated") from exc
            self._handles[str(file)] = handle
            for key in handle.keys():
                if key in self._where:
                    raise CheckpointError(f"{self.name}: key {key!r} appears in two shards")
                self._where[key] = str(file)
        index = _index_of(path)
        if index is not None:
            weight_map = _weight_map(index)
            for key, file in self._where.items():
                if key not in weight_map:
                    raise CheckpointError(f"{index}: weight_map leaves out {key!r}, which {Path(file).name} holds "
                                          "(an index that does not match its shards)")
                if Path(file).name != weight_map[key]:
                    raise CheckpointError(f"{index}: weight_map puts {key!r} in {weight_map[key]}, but "
                                          f"{Path(file).name} holds it")
            absent = sorted(set(weight_map) - set(self._where))
            if absent:
                raise CheckpointError(f"{index}: weight_map lists {absent[0]!r}, which no shard holds "
                                      f"({len(absent)} such keys)")

    def keys(self) -> list[str]:
        return list(self._where.keys())

    def _slice(self, key: str):
        return self._handles[self._where[key]].get_slice(key)

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self._slice(key).get_shape())

    def dtype(self, key: str) -> torch.dtype:
        code = self._slice(key).get_dtype()
        if code not in _ST_DTYPES:
            raise CheckpointError(f"{self.name}: tensor {key!r} has unsupported dtype {code}")
        return _ST_DTYPES[code]

    def get(self, key: str) -> torch.Tensor:
        """A new tensor with ``key``'s values. Read with ``pread`` into memory of its own rather than copied out of
        safetensors' memory map: the pages of a map stay counted in the process's resident set until the handle
        closes (after a merge's pass over the model: every input), and a read leaves them to the page cache."""
        file = self._where[key]
        try:
            code = self._slice(key).get_dtype()
            if code not in _ST_DTYPES or sys.byteorder != "little":
                return self._handles[file].get_tensor(key)
            start, nbytes = self._spans[key]
            return _read_span(file, start, nbytes).view(_ST_DTYPES[code]).reshape(self.shape(key))
        except (SafetensorError, OSError, RuntimeError) as exc:
            raise CheckpointError(f"{file}: cannot read tensor {key!r} ({exc}); the file may be truncated") from exc

    def view(self, key: str) -> torch.Tensor:
        """``key``'s values without a copy: a tensor over the file's pages (a private, copy-on-write memory map:
        a write would change this process's copy, never the file), for a pass that reads each entry once (the
        walker's slices). :meth:`release` drops its pages from this process's resident set afterwards (they stay
        in the page cache)."""
        code = self._slice(key).get_dtype()
        if code not in _ST_DTYPES or sys.byteorder != "little":
            return self.get(key)
        file = self._where[key]
        start, nbytes = self._spans[key]
        mapped = self._map(file, start + nbytes)
        if nbytes == 0:
            return torch.empty(self.shape(key), dtype=_ST_DTYPES[code])
        flat = torch.frombuffer(mapped, dtype=torch.uint8, count=nbytes, offset=start)
        return flat.view(_ST_DTYPES[code]).reshape(self.shape(key))

    def release(self, key: str) -> None:
        """Drop the pages of ``key``'s bytes that :meth:`view` mapped from this process (a hint: the data stays
        readable, from the page cache)."""
        self._advise(key, mmap.MADV_DONTNEED)

    def populate(self, key: str) -> None:
        """Map all of ``key``'s pages that :meth:`view` mapped in one call (``MADV_POPULATE_READ``, Linux 5.14+; a
        hint, ignored elsewhere): a pass that then reads them takes no page fault per 64 KiB (measured 3-5 times
        cheaper per byte than faulting them in one by one)."""
        self._advise(key, MADV_POPULATE_READ)

    def _advise(self, key: str, advice: int) -> None:
        mapped = self._maps.get(self._where[key])
        if mapped is None or not hasattr(mapped, "madvise"):
            return
        start, nbytes = self._spans[key]
        page = mmap.PAGESIZE
        first, last = (start // page) * page, -(-(start + nbytes) // page) * page
        try:
            mapped.madvise(advice, first, min(last, len(mapped)) - first)
        except (OSError, ValueError):
            pass

    def prefetch(self, key: str) -> None:
        """Ask the kernel to read ``key``'s bytes ahead (asynchronous readahead into the page cache), so that the
        next tensor's reads overlap this one's merge."""
        file = self._where[key]
        start, nbytes = self._spans[key]
        if nbytes and hasattr(os, "posix_fadvise"):
            try:
                fd = os.open(file, os.O_RDONLY)
                try:
                    os.posix_fadvise(fd, start, nbytes, os.POSIX_FADV_WILLNEED)
                finally:
                    os.close(fd)
            except OSError:
                pass

    def _map(self, file: str, end: int):
        """The file's shared read-only map (one per file, kept while this source lives). A file now shorter than
        the header says is refused here: reading past its end through a map would kill the process (SIGBUS)."""
        mapped = self._maps.get(file)
        try:
            size = os.stat(file).st_size
            if size < end:
                raise CheckpointError(f"{file}: {size} bytes, but its header places data up to byte {end}; the file "
                                      "was truncated after it was opened")
            if mapped is None:
                with open(file, "rb") as handle:  # copy-on-write: a writable buffer for torch, the file untouched
                    mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
                self._maps[file] = mapped
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{file}: cannot map it for reading ({exc})") from exc
        return mapped


def _drop_cached(fd: int) -> None:
    """Let the kernel drop a file's written and synced pages from the page cache (``POSIX_FADV_DONTNEED``; dirty
    pages stay): the output's later tensors are then written into the memory these pages free, which is still
    the machine's, instead of into fresh memory (on a virtual machine whose host takes free memory back, writing
    into fresh memory was measured up to 9 times slower). The merged file is read from the disk afterwards."""
    if hasattr(os, "posix_fadvise"):
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            pass


#: madvise(2)'s MADV_POPULATE_READ (Linux 5.14+; Python's mmap module names it only from 3.13 on)
MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)


def _data_spans(file: Path) -> dict[str, tuple[int, int]]:
    """Key → (absolute offset, length) of each tensor's bytes: an 8-byte little-endian header length, the JSON
    header (``data_offsets`` relative to the end of the header), then the data."""
    with open(file, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    return {key: (8 + size + info["data_offsets"][0], info["data_offsets"][1] - info["data_offsets"][0])
            for key, info in header.items() if key != "__metadata__"}


def _read_span(file: str, start: int, nbytes: int) -> torch.Tensor:
    """``nbytes`` bytes of ``file`` from ``start``, read into a new uint8 tensor."""
    out = torch.empty(nbytes, dtype=torch.uint8)
    if nbytes:
        view = memoryview(out.numpy())
        with open(file, "rb", buffering=0) as handle:
            handle.seek(start)
            done = 0
            while done < nbytes:
                got = handle.readinto(view[done:])
                if not got:
                    raise OSError(f"end of file after {done} of {nbytes} bytes")
                done += got
    return out


def _index_of(path: Path) -> Path | None:
    """The shard index a checkpoint path is read through: the path itself, or a folder's only index."""
    if path.is_dir():
        indexes = sorted(path.glob("*.safetensors" + INDEX_SUFFIX))
        return indexes[0] if len(indexes) == 1 else None
    return path if path.name.endswith(INDEX_SUFFIX) else None


def _weight_map(index: Path) -> dict[str, str]:
    try:
        weight_map = json.loads(index.read_text())["weight_map"]
        if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
            raise TypeError("weight_map is not a map of key to file name")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{index}: not a valid safetensors index ({exc})") from exc
    return weight_map


def _resolve_files(path: Path) -> list[Path]:
    if path.is_dir():
        index = _index_of(path)
        if index is not None:
            return _resolve_files(index)
        files = sorted(path.glob("*.safetensors"))
        if not files:
            raise CheckpointError(f"{path}: folder holds no *.safetensors files")
        return files
    if not path.exists():
        raise CheckpointError(f"{path}: no such file")
    if path.name.endswith(INDEX_SUFFIX):
        shard_names = sorted(set(_weight_map(path).values()))
        files = [path.parent / name for name in shard_names]
        missing = [str(f) for f in files if not f.exists()]
        if missing:
            raise CheckpointError(f"{path}: shard files missing: {', '.join(missing)}")
        return files
    return [path]


Source = Union[str, os.PathLike, Mapping[str, torch.Tensor], TensorSource]


def as_source(obj: Source, name: str | None = None, base: TensorSource | None = None) -> TensorSource:
    """Accept a path, a state dict, or an existing source. A LoRA adapter folder (``adapter_config.json``) is an
    expert read over ``base``: the model θ₀ + ΔW it defines (:mod:`nbmerge.engine.adapters`)."""
    if isinstance(obj, (str, os.PathLike)):
        from .adapters import AdapterExpert, is_adapter

        if is_adapter(obj):
            if base is None:
                raise CheckpointError(f"{obj} is a LoRA adapter: it is read as an expert over a base model, not alone")
            return AdapterExpert(obj, base)
        return SafetensorsSource(obj)
    if isinstance(obj, Mapping):
        return DictSource(obj, name or "<state dict>")
    if all(hasattr(obj, attr) for attr in ("keys", "shape", "dtype", "get")):
        return obj  # type: ignore[return-value]
    raise CheckpointError(f"cannot read a checkpoint from a {type(obj).__name__}")


def load_state_dict(path: Union[str, os.PathLike]) -> StateDict:
    """Load a whole checkpoint (file, index or folder) into memory."""
    source = SafetensorsSource(path)
    return {key: source.get(key) for key in source.keys()}


def sha256_file(path: Union[str, os.PathLike]) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ----------------------------------------------------------------------------------------------------------
# Writing


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_temp(directory: Path, prefix: str, data: bytes) -> str:
    """Write ``data`` to a new hidden temporary file in ``directory`` (fsynced, mode as a normal file)."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp creates 0600; final files get the usual permissions
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return tmp


def check_output_file(path: Path) -> None:
    """A one-line error if a file output cannot be written at ``path`` (a folder there, or a file as its parent)."""
    if path.is_dir():
        raise CheckpointError(f"{path} is a folder: give a file name for the output, such as "
                              f"{path / 'merged.safetensors'}")
    if path.parent.exists() and not path.parent.is_dir():
        raise CheckpointError(f"cannot write {path}: {path.parent} is a file, not a folder")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    check_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(path.parent, f".{path.name}.", data)
    try:
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _os_error_of(exc: Exception, path) -> Optional[OSError]:
    """The OSError inside a safetensors serialisation error ("I/O error: No space left on device (os error 28)"),
    so that a full disk reads the same whichever library wrote the file; None when it is not one."""
    found = re.search(r"\(os error (\d+)\)", str(exc))
    if not found:
        return None
    code = int(found.group(1))
    return OSError(code, os.strerror(code), str(path))


def atomic_write_text(path: Union[str, os.PathLike], text: str) -> None:
    atomic_write_bytes(Path(path), text.encode("utf-8", "backslashreplace"))  # a non-UTF-8 file name escaped


def write_tagged(path: Union[str, os.PathLike], tensors: Mapping[str, torch.Tensor], fmt: str, **fields) -> Path:
    """A safetensors file of nbmerge's own (learned coefficients, masks, checkpoints), written atomically: the
    tensors, ``metadata["format"] = fmt`` and each field JSON-encoded beside it."""
    path = Path(path)
    meta = {"format": fmt, **{name: json.dumps(value) for name, value in fields.items()}}
    atomic_write_bytes(path, st_save(_contiguous_cpu(tensors), metadata=meta))
    return path


def read_tagged(path: Union[str, os.PathLike], fmt: str, what: str) -> tuple[dict[str, torch.Tensor], dict]:
    """The tensors and decoded fields of a file :func:`write_tagged` wrote with ``fmt``; a file that is not one (or
    not readable) is a ``CheckpointError`` naming ``what`` it should have been."""
    try:
        with safe_open(str(path), framework="pt") as handle:
            meta = handle.metadata() or {}
            if meta.get("format") != fmt:
                raise CheckpointError(f"{path}: not {what}")
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
        return tensors, {name: json.loads(value) for name, value in meta.items() if name != "format"}
    except (FileNotFoundError, CheckpointError):
        raise
    except Exception as exc:  # noqa: BLE001 - safetensors' and json's own messages vary by version
        raise CheckpointError(f"{path}: not a readable file of {what} ({exc})") from exc


def _contiguous_cpu(tensors: Mapping[str, torch.Tensor]) -> StateDict:
    return {key: value.detach().to("cpu").contiguous() for key, value in tensors.items()}


def save_state_dict(tensors: Mapping[str, torch.Tensor], path: Union[str, os.PathLike],
                    metadata: Mapping[str, str] | None = None) -> None:
    """Write one safetensors file atomically."""
    data = st_save(_contiguous_cpu(tensors), metadata=dict(metadata) if metadata else None)
    atomic_write_bytes(Path(path), data)


class ShardedWriter:
    """Stream tensors into safetensors shards of at most ``max_shard_bytes`` each.

    Shards go to hidden temporary files; ``close()`` renames them to ``<stem>-0000i-of-0000n.safetensors``
    and writes ``<name>.index.json`` last. If everything fits in one shard the output is the single file
    ``path``. On error (or ``abort()``) every temporary file is removed and nothing appears at ``path``.
    """

    def __init__(self, path: Union[str, os.PathLike], max_shard_bytes: int | None = None,
                 metadata: Mapping[str, str] | None = None):
        self.path = Path(path)
        self.max_shard_bytes = max_shard_bytes
        self.metadata = dict(metadata) if metadata else None
        self._pending: StateDict = {}
        self._pending_bytes = 0
        self._shards: list[tuple[Path, list[str]]] = []
        check_output_file(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def add(self, key: str, tensor: torch.Tensor) -> None:
        size = tensor.numel() * tensor.element_size()
        if self.max_shard_bytes and self._pending and self._pending_bytes + size > self.max_shard_bytes:
            self._flush()
        self._pending[key] = tensor.detach().to("cpu").contiguous()
        self._pending_bytes += size

    def _flush(self) -> None:
        # save_file writes the tensors' memory straight to the file: no serialised copy of the shard in memory.
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.shard{len(self._shards)}.", suffix=".tmp",
                                   dir=self.path.parent)
        try:
            os.close(fd)
            try:
                st_save_file(self._pending, tmp, metadata=self.metadata)
            except Exception as exc:  # safetensors reports the OS's refusal as its own error type
                raise _os_error_of(exc, self.path) or exc
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o666 & ~current_umask())
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self._shards.append((Path(tmp), list(self._pending)))
        self._pending, self._pending_bytes = {}, 0

    def close(self) -> list[Path]:
        try:
            if self._pending or not self._shards:
                self._flush()
            # The new output is complete (in temporary files): now what an earlier output at this name left is
            # removed, its index first, so that no reader can combine old and new files.
            index = output_index(self.path)
            index.unlink(missing_ok=True)
            if len(self._shards) == 1:
                os.replace(self._shards[0][0], self.path)
                self._shards = []
                _remove_shards(self.path, keep=())
                return [self.path]
            self.path.unlink(missing_ok=True)
            stem = _stem(self.path)
            n = len(self._shards)
            weight_map, finals = {}, []
            try:
                for i, (tmp, keys) in enumerate(self._shards, start=1):
                    final = self.path.parent / f"{stem}-{i:05d}-of-{n:05d}.safetensors"
                    os.replace(tmp, final)
                    finals.append(final)
                    weight_map.update({key: final.name for key in keys})
                atomic_write_text(index, json.dumps({"metadata": self.metadata or {}, "weight_map": weight_map},
                                                    indent=1))
            except BaseException:
                # The index is written last, so no reader saw a complete checkpoint: remove the renamed shards.
                for final in finals:
                    final.unlink(missing_ok=True)
                raise
            self._shards = []
            _remove_shards(self.path, keep=finals)
            return finals + [index]
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        for tmp, _ in self._shards:
            if tmp.exists():
                tmp.unlink()
        self._shards, self._pending = [], {}


class PlannedWriter(ShardedWriter):
    """:class:`ShardedWriter`'s output (the same shards, index and atomic rename), written while the tensors are
    still being computed: the keys, dtypes and shapes are known up front (``plan``, in the order :meth:`add` gets
    them), so each shard's header is written first and a background thread writes every tensor's bytes at its
    place as soon as it arrives, and pushes them to the disk (``fdatasync`` every :data:`SYNC_BYTES`) while the
    merge goes on; what is queued is bounded (:data:`QUEUE_BYTES`). Nothing is held until the end, and
    ``close()`` only waits for the last bytes. The data are laid out by dtype size, largest first, as safetensors
    does, so that every tensor starts at a multiple of its element size.

    An output of at least :data:`DIRECT_MIN_BYTES` whose tensors arrive in the order they lie in its files (one
    dtype size per shard, as a model usually is) is written past the page cache where the file system allows it
    (``O_DIRECT``, :class:`_DirectStage`): its bytes touch no memory but one reused buffer, where page-cache writes
    take a fresh page for every 4 KiB of output (on a virtual machine whose host takes freed memory back, that
    first touch was measured at 2 s per GiB, against 0.5 s per GiB for the whole aligned write)."""

    SYNC_BYTES = 1 << 28
    QUEUE_BYTES = 1 << 29
    DIRECT_MIN_BYTES = 1 << 26
    STAGE_BYTES = 1 << 25

    def __init__(self, path: Union[str, os.PathLike], plan: Iterable[tuple[str, torch.dtype, tuple[int, ...]]],
                 max_shard_bytes: int | None = None, metadata: Mapping[str, str] | None = None):
        super().__init__(path, max_shard_bytes=max_shard_bytes, metadata=metadata)
        self._plan = [(key, dtype, tuple(shape)) for key, dtype, shape in plan]
        groups: list[list[tuple[str, torch.dtype, tuple[int, ...], int]]] = [[]]
        size_of_group = 0
        for key, dtype, shape in self._plan:
            size = math.prod(shape) * dtype.itemsize
            if max_shard_bytes and groups[-1] and size_of_group + size > max_shard_bytes:
                groups.append([])
                size_of_group = 0
            groups[-1].append((key, dtype, shape, size))
            size_of_group += size
        self._where: dict[str, tuple[int, int]] = {}  # key → (shard, absolute offset of its bytes)
        self._fds: list[int] = []
        self._error: Optional[BaseException] = None
        self._thread: Optional[threading.Thread] = None
        self._stage: Optional[_DirectStage] = None
        try:
            headers, ends = [], []
            for number, group in enumerate(groups):
                fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.shard{number}.", suffix=".tmp",
                                           dir=self.path.parent)
                self._fds.append(fd)
                self._shards.append((Path(tmp), [key for key, *_ in group]))
                headers.append(self._layout(number, group))
                ends.append(len(headers[-1]) + sum(item[3] for item in group))
                os.ftruncate(fd, ends[-1])
            in_file_order = all(sorted(g, key=lambda item: -item[1].itemsize) == g for g in groups)
            if in_file_order and sum(ends) >= self.DIRECT_MIN_BYTES:
                self._stage = _DirectStage.open([tmp for tmp, _ in self._shards], self._fds, headers, ends,
                                                self.STAGE_BYTES)
            if self._stage is None:
                for fd, header in zip(self._fds, headers):
                    _write_all(fd, header, 0)
        except BaseException:
            self.abort()
            raise
        self._next = 0
        self._queue: list = []
        self._queued = 0
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._drain, name="nbmerge-writer", daemon=True)
        self._thread.start()

    def _layout(self, number: int, group) -> bytes:
        """Shard ``number``'s header (the bytes before its data); records where each of its tensors goes."""
        layout = sorted(group, key=lambda item: -item[1].itemsize)  # stable
        header: dict[str, Any] = {"__metadata__": self.metadata} if self.metadata else {}
        offset = 0
        for key, dtype, shape, size in layout:
            header[key] = {"dtype": _ST_CODES[dtype], "shape": list(shape), "data_offsets": [offset, offset + size]}
            offset += size
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        start = 8 + len(text)
        for key, _, _, _ in layout:
            self._where[key] = (number, start + header[key]["data_offsets"][0])
        return len(text).to_bytes(8, "little") + text

    def add(self, key: str, tensor: torch.Tensor) -> None:
        if self._error is not None:
            raise self._error
        if self._next >= len(self._plan):
            raise CheckpointError(f"writer: {key!r} is not in the output's plan")
        want, dtype, shape = self._plan[self._next]
        if key != want or tensor.dtype != dtype or tuple(tensor.shape) != shape:
            raise CheckpointError(f"writer: got {key!r} ({tensor.dtype}, {list(tensor.shape)}), the plan says "
                                  f"{want!r} ({dtype}, {list(shape)})")
        self._next += 1
        tensor = tensor.detach().to("cpu").contiguous()
        size = tensor.numel() * tensor.element_size()
        with self._ready:
            while self._queue and self._queued + size > self.QUEUE_BYTES and self._error is None:
                self._ready.wait()
            self._queue.append((key, tensor))
            self._queued += size
            self._ready.notify_all()

    def _drain(self) -> None:
        unsynced = [0] * len(self._fds)
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                key, tensor = self._queue[0]
            if key is None:
                return
            try:
                if self._error is None and self._stage is not None:  # past the page cache: nothing to sync
                    self._stage.put(*self._where[key], tensor.reshape(-1).view(torch.uint8).numpy())
                elif self._error is None:
                    number, offset = self._where[key]
                    if tensor.numel():
                        _write_all(self._fds[number], tensor.reshape(-1).view(torch.uint8).numpy(), offset)
                    unsynced[number] += tensor.numel() * tensor.element_size()
                    if unsynced[number] >= self.SYNC_BYTES:  # to the disk now, while the merge goes on
                        os.fdatasync(self._fds[number])
                        unsynced[number] = 0
                        _drop_cached(self._fds[number])
            except BaseException as exc:  # reported by the next add() or by close()
                self._error = _os_error_of(exc, self.path) or exc
            with self._ready:
                self._queue.pop(0)
                self._queued -= tensor.numel() * tensor.element_size()
                self._ready.notify_all()

    def _stop(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            with self._ready:
                self._queue.append((None, torch.empty(0)))
                self._ready.notify_all()
            self._thread.join()

    def close(self) -> list[Path]:
        try:
            self._stop()
            if self._error is not None:
                raise self._error
            if self._next != len(self._plan):
                raise CheckpointError(f"writer: {len(self._plan) - self._next} planned tensors never came "
                                      f"(the first: {self._plan[self._next][0]!r})")
            if self._stage is not None:
                self._stage.finish()
            for fd in self._fds:
                os.fsync(fd)
                os.fchmod(fd, 0o666 & ~current_umask())
            self._close_fds()
        except BaseException:
            self.abort()
            raise
        return super().close()

    def _flush(self) -> None:  # the shards exist from the start: nothing is pending
        return None

    def _close_fds(self) -> None:
        for fd in self._fds + (self._stage.close() if self._stage is not None else []):
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds, self._stage = [], None


class _DirectStage:
    """A planned output's bytes written past the page cache: gathered, in file order, into one reused buffer
    aligned to :data:`DIRECT_ALIGN` and written a buffer at a time through a second descriptor of each shard opened
    with ``O_DIRECT``. A shard's header goes first, its last buffer is padded to the alignment and the file cut back
    to its size. A file system that refuses an aligned direct write gets that buffer and the rest through the page
    cache; one that cannot open a file for it (tmpfs, a system without ``O_DIRECT``) never gets here."""

    def __init__(self, direct: list[int], plain: list[int], headers: list[bytes], ends: list[int], size: int):
        self.opened, self.direct, self.plain, self.headers, self.ends = direct, list(direct), plain, headers, ends
        self.size = -(-size // DIRECT_ALIGN) * DIRECT_ALIGN
        self.buffer = mmap.mmap(-1, self.size)  # page-aligned
        self.array = np.frombuffer(self.buffer, dtype=np.uint8)  # NumPy's copies: one thread, no OpenMP team
        self.shard, self.offset, self.pos = -1, 0, 0  # the buffer holds shard bytes [offset, offset + pos)

    @classmethod
    def open(cls, paths: list[Path], plain: list[int], headers: list[bytes], ends: list[int], size: int
             ) -> Optional[_DirectStage]:
        flag = getattr(os, "O_DIRECT", 0)
        if not flag:
            return None
        direct: list[int] = []
        try:
            for path in paths:
                direct.append(os.open(path, os.O_WRONLY | flag))
        except OSError:  # the file system has no direct mode (tmpfs: EINVAL)
            for fd in direct:
                os.close(fd)
            return None
        return cls(direct, plain, headers, ends, size)

    def put(self, shard: int, where: int, data: np.ndarray) -> None:
        """Append ``data`` (bytes) to ``shard``, whose bytes must go on at ``where``."""
        if shard != self.shard:
            self.finish()
            self.shard, self.offset, self.pos = shard, 0, 0
            self._append(np.frombuffer(self.headers[shard], dtype=np.uint8))
        if where != self.offset + self.pos:
            raise CheckpointError(f"writer: bytes for offset {where} of shard {shard} arrived at "
                                  f"{self.offset + self.pos}, out of file order")
        self._append(data)

    def _append(self, data: np.ndarray) -> None:
        done = 0
        while done < data.size:
            take = min(self.size - self.pos, data.size - done)
            self.array[self.pos:self.pos + take] = data[done:done + take]
            self.pos, done = self.pos + take, done + take
            if self.pos == self.size:
                self._write(self.size)
                self.offset, self.pos = self.offset + self.size, 0

    def finish(self) -> None:
        """Write what the buffer holds of the current shard (padded to the alignment) and cut the file to size."""
        if self.shard < 0:
            return
        if self.pos:
            self._write(-(-self.pos // DIRECT_ALIGN) * DIRECT_ALIGN)
            self.offset, self.pos = self.offset + self.pos, 0
        if self.offset != self.ends[self.shard]:
            raise CheckpointError(f"writer: shard {self.shard} ended at byte {self.offset} of "
                                  f"{self.ends[self.shard]}")
        os.ftruncate(self.plain[self.shard], self.ends[self.shard])
        self.shard = -1

    def _write(self, length: int) -> None:
        view = memoryview(self.buffer)[:length]
        try:
            _write_all(self.direct[self.shard], view, self.offset)
        except OSError as exc:
            if exc.errno != errno.EINVAL or self.direct[self.shard] == self.plain[self.shard]:
                raise
            self.direct[self.shard] = self.plain[self.shard]  # this file system refuses direct writes after all
            _write_all(self.plain[self.shard], view, self.offset)

    def close(self) -> list[int]:
        """The direct descriptors, for the writer to close (the buffer is freed with this object)."""
        return self.opened

    def abort(self) -> None:
        self._error = self._error or CheckpointError("writer: aborted")
        self._stop()
        self._close_fds()
        super().abort()


def _write_all(fd: int, data, offset: int) -> None:
    view = memoryview(data).cast("B")
    done = 0
    while done < len(view):
        done += os.pwrite(fd, view[done:], offset + done)


_ST_CODES = {dtype: code for code, dtype in _ST_DTYPES.items()}


def _stem(path: Path) -> str:
    return path.name[: -len(".safetensors")] if path.name.endswith(".safetensors") else path.name


def output_index(path: Path) -> Path:
    """The index a sharded output at ``path`` writes beside its shards."""
    return path.parent / (path.name + INDEX_SUFFIX)


def output_shards(path: Path) -> list[Path]:
    """Existing shard files of a sharded output at ``path`` (``<stem>-0000i-of-0000n.safetensors``)."""
    pattern = re.compile(re.escape(_stem(path)) + r"-\d{5}-of-\d{5}\.safetensors")
    if not path.parent.is_dir():
        return []
    return sorted(p for p in path.parent.iterdir() if pattern.fullmatch(p.name))


def _remove_shards(path: Path, keep) -> None:
    keep = {Path(p).name for p in keep}
    for shard in output_shards(path):
        if shard.name not in keep:
            shard.unlink(missing_ok=True)


def check_not_an_input(out: Union[str, os.PathLike], inputs: Iterable[object], what: str = "--out") -> None:
    """Refuse an output that would overwrite or change an input: the same file, one of its shards or index, or a
    file written into a folder that is read as a whole checkpoint."""
    out = Path(out)
    footprint = [out, output_index(out), *output_shards(out)]
    footprint = {os.path.realpath(p) for p in footprint if p.exists()}
    real_out = os.path.realpath(out)
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)):
            continue
        source = Path(item)
        # a checkpoint folder is read as a whole: nothing may be written anywhere inside it, and a file given from a
        # model folder (config.json, an index or an adapter config beside it) protects that folder too
        folder = source if source.is_dir() else source.parent if _is_model_folder(source.parent) else None
        if folder is not None and real_out.startswith(os.path.realpath(folder) + os.sep):
            raise CheckpointError(f"{what} {out} is inside {folder}, which is read as a checkpoint folder "
                                  f"({'the input' if folder == source else f'the folder of the input {source}'}): "
                                  "writing there would change that input; choose a path outside it")
        if source.is_file() and not _is_checkpoint_file(source) and os.path.realpath(source) in footprint:
            raise CheckpointError(f"{what} {out} would overwrite the input {source}: choose another output path")
        try:
            index = _index_of(source)
            files = _resolve_files(source) + ([index] if index else [])
        except CheckpointError:
            continue  # an unreadable input is reported when it is read
        for file in files:
            if os.path.realpath(file) in footprint:
                raise CheckpointError(f"{what} {out} would overwrite the input {file}: choose another output path")


def _is_model_folder(folder: Path) -> bool:
    """A folder that is one checkpoint (a Hugging Face model or its weights by their Hugging Face names, a sharded
    checkpoint, an adapter), not a folder that merely holds checkpoint files side by side: writing another
    ``.safetensors`` there would make it a second shard of that model."""
    return any((folder / name).is_file() for name in ("config.json", "adapter_config.json", "model.safetensors")) \
        or any(folder.glob("*.safetensors.index.json")) or any(folder.glob("model-*-of-*.safetensors"))


def _is_checkpoint_file(path: Path) -> bool:
    return path.suffix in (".safetensors", ".pt", ".pth", ".bin")


def write_tensors(items: Iterable[tuple[str, torch.Tensor]], path: Union[str, os.PathLike],
                  max_shard_bytes: int | None = None, metadata: Mapping[str, str] | None = None,
                  plan: Optional[Iterable[tuple[str, torch.dtype, tuple[int, ...]]]] = None) -> list[Path]:
    """Consume ``(key, tensor)`` pairs into an atomic (possibly sharded) safetensors output. ``plan``: the
    ``(key, dtype, shape)`` of every pair, in order, when known up front: the bytes are then written (and synced to
    the disk) while the pairs are still being computed (:class:`PlannedWriter`)."""
    if plan is not None:
        writer = PlannedWriter(path, plan, max_shard_bytes=max_shard_bytes, metadata=metadata)
    else:
        writer = ShardedWriter(path, max_shard_bytes=max_shard_bytes, metadata=metadata)
    try:
        for key, tensor in items:
            writer.add(key, tensor)
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def jsonable(value: Any, where: Optional[str] = None) -> Any:
    """Plain JSON types for a record: dataclasses as dicts, tuples as lists, numpy/torch scalars as numbers,
    non-finite floats as None (so a record read back equals the one written). Anything else is returned as it is,
    or, with ``where`` given, refused with an error naming it."""
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value), where)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, where) for v in value]
    if isinstance(value, (bool, str, int)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
        return jsonable(value.item(), where)
    if where is not None:
        raise NbmergeError(f"{where}: {value!r} ({type(value).__name__}) cannot be written as JSON")
    return value
