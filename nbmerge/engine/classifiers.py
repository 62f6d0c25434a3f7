"""Merging sequence classifiers that keep one head per task (GPT-2/RoBERTa GLUE experts, as FusionBench ships them).

Each expert is a ``...ForSequenceClassification`` folder: a backbone under the classifier's prefix
(``transformer.``, ``roberta.``, ``model.``) and a head (``score``, ``classifier.*``) whose shape depends on the task's
classes. The base is the pretrained model: the bare backbone (``GPT2Model``; keys without the prefix), the language
model (``GPT2LMHeadModel``, ``RobertaForMaskedLM``) or a classifier. Only the backbone is merged; heads are never
averaged across tasks. ``--out DIR/`` then writes one folder per expert, ``DIR/<expert folder name>/``, holding
the merged backbone with that expert's own head, config (its labels) and tokenizer, so that
``AutoModelForSequenceClassification.from_pretrained("DIR/gpt2_cola")`` is the merged model for CoLA. ``DIR/README.md``
is the model card of the whole merge.

The keys are matched by name: the base's backbone keys gain the prefix when they lack it, the base's keys the
experts do not have (an LM head, a pooler) are left out, and an expert lacking a backbone key of the base is an error.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import torch

from .adapters import is_adapter
from ..errors import CheckpointError
from .io import SafetensorsSource, write_tensors

PathLike = Union[str, os.PathLike]


def _config(folder: Path) -> dict:
    path = folder / "config.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def is_classifier_merge(base: Any, experts: Sequence[Any]) -> bool:
    """Experts are sequence-classifier folders whose heads the base does not have (the per-task-head case)."""
    if not isinstance(base, (str, os.PathLike)) or not experts:
        return False
    if not all(isinstance(e, (str, os.PathLike)) and Path(e).is_dir() and not is_adapter(e) for e in experts):
        return False
    if not all(any(a.endswith("ForSequenceClassification") for a in _config(Path(e)).get("architectures") or ())
               for e in experts):
        return False
    base_keys = set(SafetensorsSource(base).keys()) if Path(base).exists() else set()
    heads = {k for k in SafetensorsSource(experts[0]).keys() if k.split(".")[0] in ("score", "classifier")}
    return bool(heads - base_keys) or len({tuple(SafetensorsSource(e).shape(k)) for e in experts for k in heads}) > 1


class _Renamed:
    """A tensor source under other names: ``names`` maps each exposed key to the source's key."""

    def __init__(self, source, names: Mapping[str, str], name: str):
        self.source, self.names, self.name = source, dict(names), name
        self.files = getattr(source, "files", ())

    def keys(self) -> list[str]:
        return list(self.names)

    def shape(self, key: str) -> tuple[int, ...]:
        return tuple(self.source.shape(self.names[key]))

    def dtype(self, key: str) -> torch.dtype:
        return self.source.dtype(self.names[key])

    def get(self, key: str) -> torch.Tensor:
        return self.source.get(self.names[key])


def _prefix(expert: Path) -> str:
    from transformers import AutoConfig

    from ..models.lm import backbone_prefix

    return backbone_prefix(AutoConfig.from_pretrained(expert, local_files_only=True)) + "."


def backbone_sources(base: PathLike, experts: Sequence[PathLike]) -> tuple[_Renamed, list[_Renamed], str]:
    """(base, experts) restricted to the backbone, under the experts' names, and the backbone prefix."""
    prefix = _prefix(Path(experts[0]))
    base_source = SafetensorsSource(base)
    first = set(SafetensorsSource(experts[0]).keys())
    names = {}
    for key in base_source.keys():
        named = key if key.startswith(prefix) else prefix + key
        if named in first:
            names[named] = key
    if not names:
        raise CheckpointError(f"the base {base} shares no backbone weight with {experts[0]} (prefix {prefix!r}): "
                              "a base of another model?")
    sources = []
    for expert in experts:
        source = SafetensorsSource(expert)
        missing = [k for k in names if k not in set(source.keys())]
        if missing:
            raise CheckpointError(f"{expert}: missing backbone weight {missing[0]!r} of the base ({len(missing)} "
                                  "missing)")
        sources.append(_Renamed(source, {k: k for k in names}, str(expert)))
    return _Renamed(base_source, names, str(base)), sources, prefix


def write_classifier_folders(items, record: dict, base: PathLike, experts: Sequence[PathLike], prefix: str,
                             out: PathLike, max_shard_bytes: Optional[int] = None) -> list[Path]:
    """Write the merged backbone ``items`` (``(key, tensor)`` pairs) as one classifier folder per expert under
    ``out`` (module doc), atomically; ``record`` goes to the model card. Returns the per-task folders."""
    from .hf import CARD, COPIED, model_card, publish_folder
    from .io import current_umask

    folder = Path(out)
    names = [Path(e).name for e in experts]
    if len(set(names)) != len(names):
        raise CheckpointError(f"experts share a folder name ({names}): each becomes {folder}/<name>/")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        merged_file = tmp / ".backbone.safetensors"
        write_tensors(items, merged_file)
        merged = SafetensorsSource(merged_file)
        for expert, name in zip(experts, names):
            source = SafetensorsSource(expert)
            heads = [k for k in source.keys() if not k.startswith(prefix)]
            tensors = [(k, merged.get(k)) for k in merged.keys()] + [(k, source.get(k)) for k in heads]
            target = tmp / name
            write_tensors(iter(tensors), target / "model.safetensors", max_shard_bytes=max_shard_bytes)
            for file in COPIED:  # the expert's config (its labels); the tokenizer from the expert, else the base
                for origin in (Path(expert), Path(base)):
                    if (origin / file).is_file():
                        shutil.copyfile(origin / file, target / file)
                        break
        del merged
        merged_file.unlink()
        card = model_card(dict(record, per_task_heads=True), str(base), [str(e) for e in experts], folder.name)
        card += ("\nOnly the backbone is merged; each task keeps its own head. Load a task's model from its folder: "
                 + ", ".join(f"`{n}/`" for n in names) + ".\n")
        (tmp / CARD).write_text(card, encoding="utf-8")
        os.chmod(tmp, 0o777 & ~current_umask())
        publish_folder(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [folder / name for name in names]
