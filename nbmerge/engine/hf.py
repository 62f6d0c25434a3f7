"""Hugging Face folders as merge outputs: weights, the base's config and tokenizer, and a model card.

A folder output is what ``AutoModel*.from_pretrained`` loads: ``model.safetensors`` (or shards
``model-0000i-of-0000n.safetensors`` with ``model.safetensors.index.json`` above the shard size), the base folder's
``config.json``, ``generation_config.json`` and tokenizer files, and a ``README.md`` naming the method, its
parameters, the experts and the nbmerge version. The folder is built in a hidden sibling folder and renamed into
place when complete, so nothing ever appears under the output's name half-written. An existing output folder is
replaced only if it is empty or an earlier nbmerge output (its model card says so); any other folder is refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

import torch

from .adapters import is_adapter
from ..errors import CheckpointError
from .io import check_not_an_input, current_umask, write_tensors

#: the default largest shard of a folder output (as ``--max-shard-size 5G``)
DEFAULT_MAX_SHARD_BYTES = 5 * 2**30
WEIGHTS = "model.safetensors"
CARD = "README.md"
#: the first line of a model card's marker: a folder whose README.md holds it is an earlier nbmerge output
MARKER = "<!-- nbmerge:"
#: files copied from the base folder: the model's configuration, and whatever its tokenizer saved
COPIED = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
          "special_tokens_map.json", "added_tokens.json", "vocab.json", "vocab.txt", "merges.txt", "tokenizer.model",
          "spiece.model", "sentencepiece.bpe.model", "chat_template.jinja", "chat_template.json")
_DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
                torch.float64: "float64"}


def is_folder_output(out: Union[str, os.PathLike]) -> bool:
    """``--out DIR/`` (a trailing slash) asks for a Hugging Face folder; any other name is one safetensors file."""
    text = os.fspath(out)
    return text.endswith("/") or text.endswith(os.sep)


def base_folder(base: Any) -> Optional[Path]:
    """The Hugging Face folder a base checkpoint comes from (a folder, or the folder of a file or index in one)."""
    if not isinstance(base, (str, os.PathLike)):
        return None
    path = Path(base)
    if path.is_dir():
        return path
    return path.parent if (path.parent / "config.json").is_file() else None


def is_nbmerge_output(folder: Path) -> bool:
    card = folder / CARD
    try:
        return card.is_file() and MARKER in card.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False


def check_output_folder(out: Union[str, os.PathLike], inputs: Iterable[object]) -> Path:
    """The output folder, or a one-line error: a file there, a folder that is not ours, or an input inside it."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise CheckpointError(f"--out {out}: {folder} is a file; a trailing slash asks for a Hugging Face folder")
    real = os.path.realpath(folder)
    inputs = list(inputs)
    for item in inputs:
        if isinstance(item, (str, os.PathLike)):
            path = os.path.realpath(item)
            if path == real or path.startswith(real + os.sep):
                raise CheckpointError(f"--out {out} would replace the input {item}: choose another output folder")
    check_not_an_input(folder / WEIGHTS, inputs)  # not inside an input's checkpoint folder either
    if folder.is_dir() and any(folder.iterdir()) and not is_nbmerge_output(folder):
        raise CheckpointError(f"--out {out}: the folder exists and is not an earlier nbmerge output (no nbmerge "
                              f"model card): choose another folder, or empty it")
    foreign = foreign_entries(folder) if folder.is_dir() else []
    if foreign:  # replacing the folder would delete them
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise CheckpointError(f"--out {out}: the earlier nbmerge output there also holds files nbmerge did not write "
                              f"({shown}); replacing it would delete them: move them out, or choose another folder")
    return folder


_SHARD = re.compile(r"^model-\d{5}-of-\d{5}\.safetensors$")


def foreign_entries(folder: Path, depth: int = 0) -> list[str]:
    """What in an nbmerge output folder nbmerge did not write: anything but the weights (shards and index), the
    model card and the files copied from the base; a classifier merge's per-task folders hold the same files."""
    ours = {WEIGHTS, f"{WEIGHTS}.index.json", CARD, *COPIED}
    foreign = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and depth == 0:
            foreign += [f"{entry.name}/{name}" for name in foreign_entries(entry, depth + 1)]
        elif not (entry.is_file() and (entry.name in ours or _SHARD.match(entry.name))):
            foreign.append(entry.name + ("/" if entry.is_dir() else ""))
    return foreign


def _copy_base_files(source: Optional[Path], target: Path, out_dtype: Optional[torch.dtype]) -> list[str]:
    copied = []
    if source is None:
        return copied
    for name in COPIED:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
            copied.append(name)
    if out_dtype is not None and "config.json" in copied:
        config = json.loads((target / "config.json").read_text())
        for key in ("dtype", "torch_dtype"):
            if key in config:
                config[key] = _DTYPE_NAMES[out_dtype]
        (target / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return copied


def model_card(record: Mapping[str, Any], base: str, experts: Sequence[str], title: str) -> str:
    """A short README.md: the method, its parameters, the experts (with weights) and the nbmerge version."""
    from .. import __version__

    weights = record.get("weights") or [1.0] * len(experts)
    lines = ["---", "library_name: transformers", "tags:", "- merge", "- nbmerge", "---",
             f"{MARKER} {json.dumps(dict(record, version=__version__), sort_keys=True, default=str)} -->", "",
             f"# {title}", "",
             f"Merged with nbmerge {__version__}, method `{record['method']}`, from the base model `{base}` and "
             f"{len(experts)} experts.", "", "## Experts", ""]
    lines += [f"- `{name}`" + (" (LoRA adapter)" if is_adapter(name) else "")
              + ("" if w == 1.0 else f" (task vector weight {w:g})") for name, w in zip(experts, weights)]
    lines += ["", "## Parameters", ""]
    params = record.get("params") or {}
    lines += [f"- `{key}`: `{value}`" for key, value in sorted(params.items())] or ["- the method's defaults"]
    if record.get("dtype"):
        lines += ["", f"Weights stored as {record['dtype']}."]
    return "\n".join(lines) + "\n"


def _name(item: Any) -> str:
    if isinstance(item, (str, os.PathLike)):
        return os.fspath(item)
    return getattr(item, "name", "<state dict>" if isinstance(item, Mapping) else type(item).__name__)


def write_folder(items: Iterable[tuple[str, torch.Tensor]], out: Union[str, os.PathLike], *, base: Any,
                 experts: Sequence[Any], record: Mapping[str, Any],
                 max_shard_bytes: Optional[int] = DEFAULT_MAX_SHARD_BYTES,
                 out_dtype: Optional[torch.dtype] = None) -> Path:
    """Consume ``(key, tensor)`` pairs into a complete Hugging Face folder at ``out``, atomically.

    Everything is written into a hidden sibling folder first; ``out`` then takes its place in one rename (an
    earlier nbmerge output there is moved aside first and removed afterwards).
    """
    folder = Path(out)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        write_tensors(items, tmp / WEIGHTS, max_shard_bytes=max_shard_bytes, metadata={"format": "pt"},
                      plan=getattr(items, "plan", None))  # a merge's stream: written while it is computed
        _copy_base_files(base_folder(base), tmp, out_dtype)
        card = model_card(record, _name(base), [_name(e) for e in experts], folder.name)
        # a path that is not UTF-8 (a Linux file name is bytes) is written with its undecodable bytes escaped
        (tmp / CARD).write_bytes(card.encode("utf-8", "backslashreplace"))
        os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes 0700; the output gets a normal folder's mode
        publish_folder(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def publish_folder(tmp: Path, folder: Path) -> None:
    """Rename the complete ``tmp`` folder to ``folder``, replacing an empty folder or an earlier nbmerge output."""
    check_output_folder(folder, ())  # again: the folder may have changed while merging
    if not folder.exists():
        os.rename(tmp, folder)
        return
    if not any(folder.iterdir()):
        folder.rmdir()
        os.rename(tmp, folder)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=folder.parent))
    old.rmdir()
    os.rename(folder, old)
    try:
        os.rename(tmp, folder)
    except BaseException:
        os.rename(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)

