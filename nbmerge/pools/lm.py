"""Language-model pools in the zoo layout: ``glue-<model>-<n>`` (sequence classifiers on GLUE) and
``lm-<model>-<n>`` (causal LMs, a task per text), imported from local Hugging Face folders and local data.

Checkpoints (``checkpoints``): the base in ``base/`` (or ``--base PATH``), and one folder per task named after the
task, or ending in ``_<task>``/``-<task>`` (FusionBench's ``gpt2_cola``, ``roberta-base_sst2``). An expert folder
is a fine-tuned model (``from_pretrained`` layout, sharded or not) or a PEFT LoRA adapter over the base; an
adapter is turned into the dense expert it defines (θ₀ + s·B·A, ``nbmerge.engine.adapters``) when the pool is written.

For a GLUE pool the base may be the bare backbone (``GPT2Model``), the language model (``GPT2LMHeadModel``,
``RobertaForMaskedLM``) or a classifier; the pool keeps the weights the experts' backbone has, under the
classifier's names (``transformer.h.0...``, ``roberta.encoder...``), and each task's classification head comes
from its own expert (``score`` or ``classifier.*``), as FusionBench evaluates them. A causal pool keeps every weight
and evaluates next-token prediction (``tasks.glue``). GPT-2's Conv1D weights are stored transposed
(``models.lm``).

The pool is written once (a pool imported from the same sources and settings is returned as it is) and measured
like an embedded zoo: base, experts, averaging and task arithmetic's λ grid on validation.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Optional, Sequence, Union

import torch

from ..engine.adapters import AdapterExpert, is_adapter
from ..errors import CheckpointError, NbmergeError
from ..engine.io import SafetensorsSource, as_source, atomic_write_text, jsonable, sha256_file
from ..models.base import ClassifierHead, IdentityHead
from ..models.lm import LMArchitecture, backbone_prefix, conv1d_weights, head_layers
from ..tasks import glue
from .clip import imported_from, pool_recipe
from .store import Built, Store, cache_root, link_file
from .build import build_environment, measure_zoo
from .zoo import recipe_hash

KINDS = {"glue": "classification", "lm": "causal"}
#: task arithmetic's λ grid on validation (the papers' range for language models; each point is a validation pass)
LM_TA_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
PathLike = Union[str, os.PathLike]


def parse_name(suite: str) -> tuple[str, str, str]:
    """(kind, model, size) of ``glue-<model>-<n>`` or ``lm-<model>-<n>``."""
    match = re.fullmatch(r"(glue|lm)-([a-z0-9][a-z0-9._-]*?)-([0-9]+)", suite)
    if match is None:
        raise NbmergeError(f"pool name {suite!r} is not glue-<model>-<n> or lm-<model>-<n> (e.g. glue-gpt2-7, "
                           "lm-llama-3)")
    return match.groups()


def _expert_dirs(checkpoints: Path, base: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(checkpoints.iterdir()) if p.is_dir() and p.resolve() != base.resolve()}


def suite_tasks(suite: str, tasks: Optional[Sequence[str]] = None, checkpoints: Optional[PathLike] = None,
                base: Optional[PathLike] = None) -> list[str]:
    """The tasks of a language-model pool: ``tasks`` if given (n of them), else GLUE's seven (FusionBench's) or
    eight for a ``glue-...-7``/``-8`` pool, else the expert folders beside the base, sorted."""
    kind, _, size = parse_name(suite)
    if tasks is None:
        if kind == "glue" and int(size) in (7, 8):
            tasks = glue.GLUE7 if int(size) == 7 else glue.GLUE8
        elif checkpoints is not None:
            root = Path(checkpoints).expanduser()
            tasks = [_task_of(name, kind) for name in _expert_dirs(root, _base_dir(root, base))]
        else:
            raise NbmergeError(f"pool {suite!r}: give its tasks (--tasks a,b,...)")
    tasks = [str(t) for t in tasks]
    if len(tasks) != int(size) or len(set(tasks)) != len(tasks):
        raise NbmergeError(f"pool {suite!r} names {size} tasks; got {len(tasks)} distinct of {tasks}")
    if kind == "glue":
        for task in tasks:
            glue.glue_task(task)
    return tasks


def _task_of(folder: str, kind: str) -> str:
    """The task an expert folder is for: its name, or for GLUE the task its name ends with (``gpt2_cola``)."""
    if kind != "glue" or folder in glue.GLUE:
        return folder
    tail = re.split(r"[_-]", folder)[-1]
    if tail not in glue.GLUE:
        raise NbmergeError(f"expert folder {folder!r} does not name a GLUE task (<task>, *_<task> or *-<task>)")
    return tail


def _base_dir(checkpoints: Path, base: Optional[PathLike]) -> Path:
    path = Path(base).expanduser() if base else checkpoints / "base"
    if not (path / "config.json").is_file():
        raise CheckpointError(f"no base model at {path} (a folder with config.json; or pass base=/--base)")
    return path


def locate(checkpoints: PathLike, tasks: Sequence[str], base: Optional[PathLike] = None) -> tuple[Path, dict]:
    """(base folder, {task: expert folder}), each expert the folder named after its task or ending in
    ``_<task>``/``-<task>``; a clear error naming what was looked for."""
    root = Path(checkpoints).expanduser()
    if not root.is_dir():
        raise CheckpointError(f"checkpoints folder {root} does not exist")
    base_path = _base_dir(root, base)
    folders = _expert_dirs(root, base_path)
    experts = {}
    for task in tasks:
        found = [p for name, p in folders.items()
                 if name == task or name.endswith((f"_{task}", f"-{task}"))]
        if len(found) != 1:
            raise CheckpointError(f"task {task!r}: {'no' if not found else 'more than one'} expert folder in {root} "
                                  f"named {task}, *_{task} or *-{task}" + (f" ({[p.name for p in found]})"
                                                                           if found else ""))
        experts[task] = found[0]
    return base_path, experts


def _source_files(folder: Path) -> list[Path]:
    names = ("*.safetensors", "*.json", "tokenizer*", "*.model", "vocab*", "merges.txt")
    return sorted({p for pattern in names for p in folder.glob(pattern) if p.is_file()})


def _digest(folder: Path, memo: dict) -> dict[str, str]:
    out = {}
    for file in _source_files(folder):
        stat = file.stat()
        key = f"{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
        if key not in memo:
            memo[key] = sha256_file(file)
        out[file.name] = memo[key]
    return out


def _expected(arch: LMArchitecture) -> dict[str, tuple]:
    with torch.device("meta"):
        encoder = arch.build()
    return {k: tuple(v.shape) for k, v in encoder.state_dict().items()}


def _read_model(folder: Path, base_state: Optional[dict] = None) -> dict[str, torch.Tensor]:
    """A dense model's tensors (float32), or, for an adapter folder, the dense expert it defines over the base."""
    if is_adapter(folder):
        if base_state is None:
            raise CheckpointError(f"{folder} is a LoRA adapter: the base cannot be one")
        expert = AdapterExpert(folder, as_source(_with_saved_heads(base_state, folder), "the base"))
        return {k: expert.get(k).float() for k in expert.keys()}
    source = SafetensorsSource(folder)
    return {k: source.get(k).float() for k in source.keys()}


def _with_saved_heads(base_state: dict, folder: Path) -> dict:
    """The base, plus a zero placeholder for each classification-head weight a SEQ_CLS adapter saves in full
    (``modules_to_save``): the base backbone has no head, and the adapter's values replace the placeholders."""
    from safetensors import safe_open

    from ..engine.adapters import WEIGHTS

    out = dict(base_state)
    with safe_open(str(folder / WEIGHTS), "pt") as handle:
        for key in handle.keys():
            name = re.sub(r"^base_model\.model\.", "", key)
            name = re.sub(r"\.(modules_to_save(\.default)?|original_module)\.", ".", name)
            if "lora_" not in key and name not in out and name.split(".")[0] in {"score", "classifier"}:
                out[name] = torch.zeros(handle.get_slice(key).get_shape())
    return out


def _with_prefix(state: dict, prefix: str, expected: dict) -> dict:
    """A base read as the bare backbone (``h.0...``) gets the classifier's prefix where that is what matches."""
    if not prefix or any(k.startswith(prefix) for k in state):
        return state
    return {prefix + k: v for k, v in state.items() if prefix + k in expected}


def _backbone(state: dict, expected: dict, transposed: set, name: str) -> dict[str, torch.Tensor]:
    """The weights the pool's encoder has, checked against its shapes (Conv1D weights transposed)."""
    out = {}
    for key, shape in expected.items():
        if key not in state:
            if key == "lm_head.weight" and "model.embed_tokens.weight" in state:  # a tied head, stored untied
                out[key] = state["model.embed_tokens.weight"].clone()
                continue
            if key == "lm_head.weight" and "transformer.wte.weight" in state:
                out[key] = state["transformer.wte.weight"].clone()
                continue
            raise CheckpointError(f"{name}: no weight {key!r} (the pool's {len(expected)} weights come from the "
                                  "base's config)")
        value = state[key].T.contiguous() if key in transposed else state[key]
        if tuple(value.shape) != shape:
            raise CheckpointError(f"{name}: {key} has shape {list(value.shape)}, the base's config gives "
                                  f"{list(shape)}")
        out[key] = value.float().contiguous()
    return out


def _head(state: dict, name: str, num_classes: int) -> ClassifierHead:
    layers = head_layers(state)
    head = ClassifierHead([state[f"{m}.weight"].float() for m in layers],
                          [state[f"{m}.bias"].float() if f"{m}.bias" in state else None for m in layers])
    if head.weights[-1].shape[0] != num_classes:
        raise CheckpointError(f"{name}: its head has {head.weights[-1].shape[0]} outputs, the task has "
                              f"{num_classes} classes")
    return head


def import_lm_pool(suite: str, checkpoints: PathLike, data_root: PathLike, *, tasks: Optional[Sequence[str]] = None,
                   base: Optional[PathLike] = None, device: str = "cpu", eval_examples: int = 500,
                   train_examples: int = 256, max_length: int = 128, ta_grid: Sequence[float] = LM_TA_GRID,
                   seed: int = 0, cache=None, log=print) -> Path:
    """Import ``glue-<model>-<n>`` or ``lm-<model>-<n>`` and return its folder (``load_zoo`` opens it).

    Idempotent: a pool imported from the same sources (sha256) and settings is returned as is. Otherwise the data
    is read again (seconds), and the converted base, experts and heads are reused where their sources are unchanged
    and their files verify: an interrupted import resumes after the last expert it finished, and a changed expert
    re-converts that expert alone. The measurements then run again."""
    kind, _, _ = parse_name(suite)
    out = cache_root(cache) / "pools" / suite
    if tasks is None and (out / "manifest.json").is_file():  # re-imported (a notebook's setup): keep its task list
        tasks = json.loads((out / "manifest.json").read_text())["tasks"]
    checkpoints, data_root = Path(checkpoints).expanduser(), Path(data_root).expanduser()
    tasks = suite_tasks(suite, tasks, checkpoints, base)
    base_path, experts = locate(checkpoints, tasks, base)
    store = Store(out / "store", log=log)
    memo_path = store.root / "sha256.json"
    memo = json.loads(memo_path.read_text()) if memo_path.is_file() else {}
    settings = {"tasks": tasks, "eval_examples": eval_examples, "train_examples": train_examples,
                "max_length": max_length, "ta_grid": [float(v) for v in ta_grid], "seed": seed}
    source = {"kind": kind, "checkpoints": str(checkpoints), "data_root": str(data_root), "base": str(base_path),
              "experts": {t: str(p) for t, p in experts.items()}, "settings": settings,
              "sha256": {"base": _digest(base_path, memo), **{t: _digest(p, memo) for t, p in experts.items()}}}
    atomic_write_text(memo_path, json.dumps(memo, indent=1, sort_keys=True))
    manifest_path = out / "manifest.json"
    if imported_from(out, source, log):
        return out

    timings, threads = {}, torch.get_num_threads()
    start = time.perf_counter()
    tokenizer = glue.load_tokenizer(str(base_path))
    arrays = {}
    for task in tasks:  # every task's data is read first: a missing or malformed file fails before the long steps
        log(f"{suite}: reading {task} from {data_root}")
        if kind == "glue":
            data = glue.glue_arrays(task, glue.glue_splits(task, data_root), tokenizer, max_length, eval_examples,
                                    train_examples, seed)
        else:
            data = glue.causal_arrays(task, glue.text_files(task, data_root), tokenizer, max_length, eval_examples,
                                      train_examples, seed)
        store.put_arrays(f"data/{task}.npz", data)
        arrays[task] = store.load_arrays(f"data/{task}.npz")
    timings["data_s"] = time.perf_counter() - start

    start = time.perf_counter()
    built = Built(store, store.root / "artifacts.json")
    config = json.loads((base_path / "config.json").read_text())
    config = {k: v for k, v in config.items() if k not in ("architectures", "transformers_version", "_name_or_path",
                                                           "torch_dtype", "dtype", "id2label", "label2id")}
    arch = LMArchitecture(json.dumps(config, sort_keys=True), KINDS[kind], max_length)
    expected = _expected(arch)
    transposed = set(conv1d_weights(arch.config, arch.task))
    prefix = "" if kind == "lm" else backbone_prefix(arch.config) + "."
    base_key = {"kind": kind, "sha256": source["sha256"]["base"]}
    base_state = None

    def read_base() -> dict:
        log(f"{suite}: reading the base {base_path}")
        return _with_prefix(_read_model(base_path), prefix, expected)

    if not built.fresh("base.safetensors", base_key):
        base_state = read_base()
        store.put_tensors("base.safetensors", _backbone(base_state, expected, transposed, str(base_path)))
        built.record("base.safetensors", base_key)
    for index, (task, folder) in enumerate(experts.items(), start=1):
        key = {"base": base_key, "sha256": source["sha256"][task], "classes": len(arrays[task]["class_names"])}
        rels = (f"experts/{task}.safetensors", f"heads/{task}.safetensors")
        if all(built.fresh(rel, key) for rel in rels):
            continue
        base_state = base_state if base_state is not None else read_base()
        log(f"{suite}: converting expert {index}/{len(tasks)} ({task}) from {folder}")
        state = _read_model(folder, base_state)
        store.put_tensors(rels[0], _backbone(state, expected, transposed, str(folder)))
        head = IdentityHead() if kind == "lm" else _head(state, str(folder), len(arrays[task]["class_names"]))
        store.put_tensors(rels[1], head.state_dict())
        for rel in rels:
            built.record(rel, key)
    timings["experts_s"] = time.perf_counter() - start

    artifacts = ["base.safetensors"] + [f"{k}/{t}.safetensors" for t in tasks for k in ("heads", "experts")]
    for rel in artifacts:
        link_file(store.verify(rel), out / rel)
    train_size = min(len(arrays[t]["train_y"]) for t in tasks)
    recipe = pool_recipe(arch, eval_examples, train_size, ta_grid, seed)
    start = time.perf_counter()
    measured = measure_zoo(out, tasks, arrays, recipe, device=device, log=lambda message: log(f"{suite}: {message}"))
    timings["evaluation_s"] = time.perf_counter() - start
    manifest = {
        "suite": suite, "tasks": tasks, "recipe": recipe.to_dict(), "recipe_hash": recipe_hash(recipe),
        "store": os.path.relpath(store.root, out), "checksums": {rel: store.journal[rel] for rel in artifacts},
        "classes": {t: [str(c) for c in arrays[t]["class_names"]] for t in tasks},
        "timings": timings, "environment": build_environment(threads), **measured, "source": jsonable(source),
    }
    atomic_write_text(manifest_path, json.dumps(manifest, indent=1))
    return out

