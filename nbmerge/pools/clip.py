"""Import a pool of real CLIP checkpoints (a pretrained base, per-task experts, zero-shot heads) and local task data
as a suite that every zoo notebook opens with ``load_zoo("clip-<model>-<n>")``.

Layout under the cache (``$NBMERGE_CACHE`` or ``~/.cache/nbmerge``)::

    pools/<suite>/store/            Store: base, experts/<task>, heads/<task>, data/<task>.npz, journal.json,
                                    sources.json (what each artifact was made from; a changed source rebuilds it)
    pools/<suite>/                  base.safetensors  experts/<task>.safetensors  heads/<task>.safetensors (links)
        manifest.json               the keys ``build_zoo`` writes plus ``source``; written last

Checkpoint layouts read from ``checkpoints`` (a model's folder, e.g. ``checkpoints/ViT-B-32``):

* ``open_clip`` (task_vectors, TALL-masks/TSV): the base ``zeroshot.pt`` (or a task folder's
  ``[nonlinear_]zeroshot.pt``), experts ``<Task>Val/[nonlinear_]finetuned.pt`` or ``<Task>/[nonlinear_]finetuned.pt``,
  heads ``head_<Task>Val.pt`` or ``head_<Task>.pt``. The pickles are read without running them (``nbmerge.models.clip_checkpoints``).
* ``hf`` (FusionBench): a base folder (``clip-vit-base-patch32``...; config.json + safetensors) and expert folders
  ``<base>_<task>`` (``clip-vit-base-patch32_stanford-cars``). FusionBench's experts are plain ``CLIPVisionModel``s
  without the projection: they share the base's (frozen, never fine-tuned) ``visual_projection``, which is copied in.

Heads come from head files when present (``heads/<Task>.safetensors`` in ``nbmerge.tasks.clip_heads`` format too), else
are built from a text tower: ``text_model`` = an open_clip CLIP state dict (with ``text_config``, an open_clip model
name or config dict) or a Hugging Face ``CLIPModel`` folder (with its tokenizer files); an HF base folder holding a
full ``CLIPModel`` serves as the text tower by default.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import CheckpointError, NbmergeError
from ..engine.io import atomic_write_text, jsonable, load_state_dict, sha256_file
from ..models.base import Head
from ..models.clip import ClipArchitecture
from ..models.clip_checkpoints import image_encoder_state, load_head_file, load_hf_clip_vision, load_torch_checkpoint
from ..tasks.clip import load_suite_manifest, load_task_manifest, open_task
from ..tasks.clip_heads import DEFAULT_LOGIT_SCALE, build_zeroshot_head
from .train import ZooRecipe
from .store import Built, Store, cache_root, link_file, store_root
from .build import build_environment, measure_zoo
from .zoo import recipe_hash, seed_of_task

PathLike = Union[str, os.PathLike]
FORMATS = ("open_clip", "hf")
SUITE_SIZES = (8, 14, 20)
# TSV/ISO/TALL-masks' α grid, linspace(0, 3, 31)[1:] (docs/methods.md, α grid): λ* is picked on validation.
TSV_GRID = tuple(round(0.1 * i, 1) for i in range(1, 31))
# The <model> part of a suite name → open_clip config name and FusionBench base folder.
MODELS = {"vit-b32": ("ViT-B-32", "clip-vit-base-patch32"), "vit-b16": ("ViT-B-16", "clip-vit-base-patch16"),
          "vit-l14": ("ViT-L-14", "clip-vit-large-patch14")}
# Fine-tuning on the stored train sample, for the notebooks that train on a pool (posteriors, variant experts):
# task_vectors' optimiser settings (AdamW, lr 1e-5, weight decay 0.1), for 8 epochs of the sample at batch 32 with a
# 10% warm-up. The released experts were trained far longer on the full splits; these runs are the notebooks' own.
TRAIN_BATCH, TRAIN_EPOCHS, TRAIN_LR, TRAIN_WEIGHT_DECAY = 32, 8, 1e-5, 0.1
_HF_FILES = ("config.json", "*.safetensors", "*.safetensors.index.json")
_TOKENIZER_FILES = ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


@dataclass
class PoolSources:
    """Where a pool's checkpoints were found. ``heads[task]`` is None when the head comes from a text tower."""

    format: str
    base: Path
    experts: dict[str, Path]
    heads: dict[str, Optional[Path]]
    looked_for_heads: dict[str, list[Path]]


# ----------------------------------------------------------------------------------------------------------------
# Suites and task names


def suite_tasks(suite: str, tasks: Optional[Sequence[str]] = None) -> tuple[str, list[str]]:
    """(model part, canonical task names) of ``clip-<model>-<n>``; ``tasks`` overrides the n-task list."""
    match = re.fullmatch(r"clip-([a-z0-9][a-z0-9._-]*?)-([a-z0-9]+)", suite)
    if match is None:
        raise NbmergeError(f"pool name {suite!r} is not clip-<model>-<n> (e.g. clip-vit-b32-8, clip-vit-l14-20)")
    model, size = match.groups()
    if tasks is None:
        if not size.isdigit() or int(size) not in SUITE_SIZES:
            raise NbmergeError(f"pool name {suite!r}: <n> must be one of {SUITE_SIZES} (or pass tasks=)")
        tasks = load_suite_manifest(f"clip-{size}")["tasks"]
    names = [load_task_manifest(task)["name"] for task in tasks]
    if not names or len(set(names)) != len(names):
        raise NbmergeError(f"tasks {list(tasks)} must be non-empty and distinct")
    return model, names


def _task_names(task: str, fmt: str) -> list[str]:
    """The names a task's checkpoints may carry, most likely first (TSV's, task_vectors', FusionBench's...)."""
    manifest = load_task_manifest(task)
    order = ("tsv", "task_vectors", "fusionbench") if fmt == "open_clip" else ("fusionbench", "tsv")
    names = [manifest["names"].get(key) for key in order] + [manifest["name"], *manifest["aliases"]]
    return list(dict.fromkeys(n for n in names if n))


# ----------------------------------------------------------------------------------------------------------------
# Finding checkpoints


def _first(candidates: list[Path], looked: list[Path], is_ok: Callable[[Path], bool] = Path.is_file) -> Optional[Path]:
    for path in candidates:
        looked.append(path)
        if is_ok(path):
            return path
    return None


def _is_hf_folder(path: Path) -> bool:
    return path.is_dir() and (path / "config.json").is_file()


def _head_candidates(root: Path, task: str, fmt: str) -> list[Path]:
    out = []
    for name in _task_names(task, fmt):
        out += [root / f"head_{name}Val.pt", root / f"head_{name}.pt", root / "heads" / f"{name}.safetensors"]
    return out


def _missing(what: str, looked: Mapping[str, list[Path]]) -> CheckpointError:
    lines = [f"  {task}: " + (", ".join(str(p) for p in paths) or "no candidate (pass base=)")
             for task, paths in looked.items()]
    return CheckpointError(f"{what}; looked at:\n" + "\n".join(lines))


def detect_format(checkpoints: Path) -> str:
    """``open_clip`` when task_vectors/TSV pickles are there, ``hf`` when Hugging Face folders are."""
    if (checkpoints / "zeroshot.pt").is_file() or any(checkpoints.glob("*/*zeroshot.pt")) \
            or any(checkpoints.glob("*/*finetuned.pt")):
        return "open_clip"
    if any(_is_hf_folder(p) for p in checkpoints.iterdir()):
        return "hf"
    raise CheckpointError(f"{checkpoints}: no checkpoints found: expected task_vectors/TSV files (zeroshot.pt, "
                          "<Task>Val/finetuned.pt...) or FusionBench Hugging Face folders (clip-vit-base-patch32, "
                          "clip-vit-base-patch32_<task>, each with config.json)")


def locate_checkpoints(checkpoints: PathLike, tasks: Sequence[str], fmt: str = "auto", base: Optional[str] = None,
                       model: str = "") -> PoolSources:
    """Find the base, every expert and the head files of ``tasks`` under ``checkpoints``; a missing base or
    expert raises CheckpointError naming every path looked at (a missing head file is not an error here)."""
    root = Path(checkpoints).expanduser()
    if not root.is_dir():
        raise CheckpointError(f"checkpoint folder {root} does not exist")
    fmt = detect_format(root) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise NbmergeError(f"unknown checkpoint format {fmt!r}; formats: auto, {', '.join(FORMATS)}")
    looked: dict[str, list[Path]] = {}
    if fmt == "open_clip":
        task_dirs = {t: [root / d for n in _task_names(t, fmt) for d in (f"{n}Val", n)] for t in tasks}
        candidates = [root / "zeroshot.pt", root / "nonlinear_zeroshot.pt"] + [
            d / f for t in tasks for d in task_dirs[t] for f in ("nonlinear_zeroshot.pt", "zeroshot.pt")]
        base_path = _first(candidates, looked.setdefault("base", []))
        expert_of = {t: [d / f for d in task_dirs[t] for f in ("nonlinear_finetuned.pt", "finetuned.pt")]
                     for t in tasks}
        found_ok = Path.is_file
    else:
        names = [base] if base else ([MODELS[model][1]] if model in MODELS else [])
        if not names:  # the one HF folder that other folders extend as <base>_<task>
            folders = sorted(p.name for p in root.iterdir() if _is_hf_folder(p))
            names = [n for n in folders if any(o.startswith(n + "_") for o in folders)]
            if len(names) > 1:
                raise CheckpointError(f"{root}: several candidate base folders ({', '.join(names)}): pass base=")
        base_path = _first([Path(n) if Path(n).is_absolute() else root / n for n in names],
                           looked.setdefault("base", []), _is_hf_folder)
        stem = base_path.name if base_path else (Path(names[0]).name if names else "<base>")
        expert_of = {t: [root / f"{stem}_{n}" for n in _task_names(t, fmt)] for t in tasks}
        found_ok = _is_hf_folder
    if base_path is None:
        raise _missing(f"no base ({fmt} layout) under {root}", looked)
    experts, missing = {}, {}
    for task in tasks:
        paths: list[Path] = []
        found = _first(expert_of[task], paths, found_ok)
        if found is None:
            missing[task] = paths
        experts[task] = found
    if missing:
        raise _missing(f"no expert for {', '.join(missing)} ({fmt} layout) under {root}", missing)
    heads, looked_heads = {}, {}
    for task in tasks:
        looked_heads[task] = []
        heads[task] = _first(_head_candidates(root, task, fmt), looked_heads[task])
    return PoolSources(fmt, base_path, experts, heads, looked_heads)


# ----------------------------------------------------------------------------------------------------------------
# Reading and converting


def _float32(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in state.items()}


def _read_tower(path: Path, fmt: str) -> tuple[dict[str, torch.Tensor], Optional[dict]]:
    """(``visual.*`` state, HF vision config or None)."""
    if fmt == "hf":
        state, config = load_hf_clip_vision(path)
        return _float32(state), config
    return _float32(image_encoder_state(path)), None


def _match_base(expert: dict[str, torch.Tensor], base: Mapping[str, torch.Tensor], name: str,
                log: Callable) -> dict[str, torch.Tensor]:
    """The expert with the base's keys and shapes; a missing projection is the base's (FusionBench's experts)."""
    if "visual.proj" in base and "visual.proj" not in expert:
        log(f"{name}: no visual.proj (a plain CLIPVisionModel): using the base's, which fine-tuning never changes")
        expert = {**expert, "visual.proj": base["visual.proj"]}
    missing, unexpected = sorted(set(base) - set(expert)), sorted(set(expert) - set(base))
    if missing or unexpected:
        detail = ([f"missing {missing[0]!r} ({len(missing)} missing)"] if missing else []) + \
            ([f"unexpected {unexpected[0]!r} ({len(unexpected)} unexpected)"] if unexpected else [])
        raise CheckpointError(f"{name} does not match the base: " + "; ".join(detail))
    for key, value in base.items():
        if expert[key].shape != value.shape:
            raise CheckpointError(f"{name}: {key!r} has shape {list(expert[key].shape)}, the base's "
                                  f"{list(value.shape)}")
    return {key: expert[key] for key in base}


def head_from_file(path: Path, num_classes: int, embed_dim: int) -> Head:
    """A ``Head`` (unit rows, logit scale) from a task_vectors ``ClassificationHead`` pickle, whose weight is
    ``logit_scale · unit rows`` with a zero bias and normalised inputs, or from a head state dict / safetensors."""
    loaded = load_head_file(path)
    weight = loaded.weight.float()
    if loaded.bias is not None and loaded.bias.abs().max() > 0:
        raise CheckpointError(f"{path}: the head has a non-zero bias, which a cosine head (scale · f̂ Wᵀ) cannot "
                              "represent")
    if loaded.normalize is False:
        raise CheckpointError(f"{path}: ClassificationHead.normalize is False; zero-shot heads normalise features")
    if tuple(weight.shape) != (num_classes, embed_dim):
        raise CheckpointError(f"{path}: head weight {list(weight.shape)}, expected [{num_classes}, {embed_dim}] "
                              "(classes of the task manifest, the image tower's embedding dimension)")
    norms = weight.norm(dim=1)
    scale = loaded.logit_scale if loaded.logit_scale is not None else float(norms.mean())
    # task_vectors folds logit_scale.exp() into every row: the row norms must all be that one scale
    expected = 1.0 if loaded.logit_scale is not None else scale
    if not torch.isfinite(norms).all() or (norms / expected - 1).abs().max() > 1e-3:
        raise CheckpointError(f"{path}: head rows have norms {float(norms.min()):.4g}..{float(norms.max()):.4g}; a "
                              "zero-shot head has rows of one common norm (its logit scale) or unit rows and a "
                              "logit_scale")
    return Head(F.normalize(weight, dim=-1), float(scale))


class _HFTextTower(torch.nn.Module):
    """``encode_text`` over a transformers ``CLIPModel``, for ``build_zeroshot_head``."""

    def __init__(self, clip: torch.nn.Module):
        super().__init__()
        self.clip = clip
        self.logit_scale = clip.logit_scale

    def encode_text(self, batch) -> torch.Tensor:
        out = self.clip.get_text_features(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        return out if isinstance(out, torch.Tensor) else out.pooler_output  # transformers ≥ 5 returns an output


def _open_clip_config(text_config: Union[None, str, Mapping], model: str) -> tuple[dict, str]:
    import open_clip

    if text_config is None:
        if model not in MODELS:
            raise NbmergeError(f"text_model is an open_clip state dict: pass text_config (an open_clip model name "
                               f"such as 'ViT-B-32', or its config dict); the pool's <model> {model!r} is not one "
                               f"of {', '.join(MODELS)}")
        text_config = MODELS[model][0]
    if isinstance(text_config, Mapping):
        return dict(text_config), "config"
    if str(text_config).endswith(".json"):
        return json.loads(Path(text_config).read_text()), str(text_config)
    config = open_clip.get_model_config(str(text_config))
    if config is None:
        raise NbmergeError(f"open_clip has no built-in config {text_config!r}")
    return config, str(text_config)


def load_text_tower(text_model: PathLike, text_config: Union[None, str, Mapping] = None, act: str = "quick_gelu",
                    model: str = "") -> tuple[torch.nn.Module, Callable]:
    """(model with ``encode_text`` and ``logit_scale``, tokenizer) from an open_clip CLIP state dict (torch or
    safetensors; pickled wrappers are read safely) with its config, or from a Hugging Face ``CLIPModel`` folder."""
    path = Path(text_model).expanduser()
    if path.is_dir():
        import transformers

        config = json.loads((path / "config.json").read_text()) if (path / "config.json").is_file() else {}
        if config.get("model_type") != "clip":
            raise CheckpointError(f"{path}: not a Hugging Face CLIPModel folder (config.json model_type "
                                  f"{config.get('model_type')!r}, expected 'clip'): it has no text tower")
        missing = [name for name in ("vocab.json", "merges.txt") if not (path / name).is_file()]
        if missing and not (path / "tokenizer.json").is_file():
            raise CheckpointError(f"{path}: no tokenizer files ({', '.join(missing)} or tokenizer.json) for the "
                                  "text tower")
        clip = transformers.CLIPModel.from_pretrained(path, local_files_only=True, use_safetensors=True).eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        # truncated at the text tower's positions (77 for CLIP), also when the tokenizer files set no model_max_length
        positions = clip.config.text_config.max_position_embeddings
        return _HFTextTower(clip), lambda texts: tokenizer(texts, padding=True, truncation=True, max_length=positions,
                                                           return_tensors="pt")
    import open_clip
    from open_clip.model import CLIP

    config, name = _open_clip_config(text_config, model)
    if "hf_tokenizer_name" in config.get("text_cfg", {}):
        raise NbmergeError(f"{name}: text towers with a Hugging Face tokenizer are not supported (only CLIP's BPE)")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        clip = CLIP(embed_dim=config["embed_dim"], vision_cfg=config["vision_cfg"], text_cfg=config["text_cfg"],
                    quick_gelu=act == "quick_gelu")
    state = load_state_dict(path) if path.suffix == ".safetensors" else load_torch_checkpoint(path)
    anchor = [k for k in state if k.endswith("token_embedding.weight")]
    if len(anchor) != 1:
        raise CheckpointError(f"{path}: expected one open_clip text tower (a 'token_embedding.weight' key), found "
                              f"{len(anchor)}")
    prefix = anchor[0][:-len("token_embedding.weight")]
    state = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
    result = clip.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if not k.startswith("visual.")]
    if missing or result.unexpected_keys:
        raise CheckpointError(f"{path} does not fit the open_clip config {name}: missing {missing[:3]} "
                              f"({len(missing)}), unexpected {result.unexpected_keys[:3]} "
                              f"({len(result.unexpected_keys)})")
    tokenizer = open_clip.tokenizer.SimpleTokenizer(context_length=config["text_cfg"].get("context_length", 77))
    return clip.eval(), tokenizer


# ----------------------------------------------------------------------------------------------------------------
# Data


def eval_transform(image_size: int) -> Callable:
    """PIL image → uint8 [3, S, S]: open_clip's evaluation transform (bicubic resize of the shorter side, centre
    crop) up to, not including, ToTensor and Normalize, which ``ClipArchitecture.inputs`` applies."""
    from torchvision.transforms import CenterCrop, Compose, InterpolationMode, Resize

    resize = Compose([Resize(image_size, interpolation=InterpolationMode.BICUBIC), CenterCrop(image_size)])

    def transform(image) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(resize(image.convert("RGB")), dtype=np.uint8).transpose(2, 0, 1))

    return transform


def _open_splits(task: str, data_root: PathLike) -> dict:
    """The train/val/test datasets of a task (NbmergeError naming every path looked at when one is missing)."""
    return {split: open_task(task, data_root, split) for split in ("train", "val", "test")}


def _sample(dataset, n: int, generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if len(dataset) == 0:
        raise NbmergeError(f"{dataset!r} is empty")
    chosen = generator.permutation(len(dataset))[:n or None]
    images = np.stack([dataset[int(i)][0] for i in chosen])
    return images, np.asarray(dataset.labels[chosen], dtype=np.int64)


def task_arrays(task: str, splits: Mapping, class_names: Sequence[str], eval_examples: int, train_examples: int,
                seed: int = 0) -> dict[str, np.ndarray]:
    """``train_x/train_y`` (a seeded sample of ``train_examples``: what Grams and training notebooks use),
    ``val_*`` and ``test_*`` (the first ``eval_examples`` of a seeded permutation; 0: all), ``class_names``."""
    out = {"class_names": np.array(list(class_names))}
    for stream, (split, n) in enumerate((("train", train_examples), ("val", eval_examples), ("test", eval_examples))):
        generator = np.random.default_rng([seed, seed_of_task(task), 10 + stream])
        out[f"{split}_x"], out[f"{split}_y"] = _sample(splits[split], n, generator)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Sources, checksums, the recipe


def _source_files(path: Path, with_tokenizer: bool = False) -> list[Path]:
    if path.is_file():
        return [path]
    patterns = _HF_FILES + (_TOKENIZER_FILES if with_tokenizer else ())
    return sorted({p for pattern in patterns for p in path.glob(pattern) if p.is_file()})


class _Hashes:
    """sha256 of source files, remembered per (path, size, mtime) so that re-importing does not reread them."""

    def __init__(self, cache: dict, root: Path):
        self.cache, self.root = cache, root
        self.used: dict[str, str] = {}

    def __call__(self, path: Path, with_tokenizer: bool = False) -> list[str]:
        digests = []
        for file in _source_files(path, with_tokenizer):
            stat = file.stat()
            key = f"{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
            if key not in self.cache:
                self.cache[key] = sha256_file(file)
            try:
                name = str(file.resolve().relative_to(self.root.resolve()))
            except ValueError:
                name = str(file.resolve())
            self.used[name] = self.cache[key]
            digests.append(self.cache[key])
        return digests


def pool_recipe(arch: ClipArchitecture, eval_examples: int, train_size: int, ta_grid: Sequence[float],
                seed: int = 0) -> ZooRecipe:
    """A full ``ZooRecipe`` (so ``ZooRecipe(**manifest["recipe"])`` works): nothing is pretrained, heads are zero-shot
    (head_shots 0), and the expert_* fields are what notebooks that train on the pool use (see TRAIN_*)."""
    steps = max(1, round(TRAIN_EPOCHS * train_size / TRAIN_BATCH))
    return ZooRecipe(arch=arch, seed=seed, pool_per_class=0, pool_classes=0, pretrain_epochs=0, pretrain_batch=0,
                  pretrain_lr=0.0, pretrain_weight_decay=0.0, head_shots=0, logit_scale=DEFAULT_LOGIT_SCALE,
                  expert_steps=steps, expert_batch=TRAIN_BATCH, expert_lr=TRAIN_LR,
                  expert_weight_decay=TRAIN_WEIGHT_DECAY, warmup_steps=max(1, steps // 10),
                  eval_examples=eval_examples, ta_grid=tuple(float(v) for v in ta_grid))


def imported_from(out: Path, source: dict, log) -> bool:
    """True when the pool at ``out`` was imported from ``source`` (the same sources and settings) and verifies;
    otherwise its manifest is removed, with the reason logged, so that the import runs again."""
    manifest_path = out / "manifest.json"
    if not manifest_path.exists():
        return False
    try:
        previous = json.loads(manifest_path.read_text())
        if previous.get("source") == jsonable(source):
            _verify(out, previous)
            return True
        log(f"{out.name}: sources or settings differ from those of {manifest_path}: re-importing")
    except (NbmergeError, ValueError, KeyError) as exc:
        log(f"{out.name}: {exc}; re-importing")
    manifest_path.unlink()
    return False


def _verify(root: Path, manifest: dict) -> None:
    for rel, digest in manifest["checksums"].items():
        path = root / rel
        if not path.exists() or sha256_file(path) != digest:
            raise CheckpointError(f"{path} is missing, truncated or altered")
    store = Store(store_root(root, manifest), log=lambda *_: None, heal=False,
                  remedy=f"run `nbmerge pool import {root.name} ...` to re-import it")
    for task in manifest["tasks"]:
        store.verify(f"data/{task}.npz")


# ----------------------------------------------------------------------------------------------------------------
# The import


def import_clip_pool(suite: str, checkpoints: PathLike, data_root: PathLike, *, tasks: Optional[Sequence[str]] = None,
                     fmt: str = "auto", base: Optional[str] = None, text_model: Optional[PathLike] = None,
                     text_config: Union[None, str, Mapping] = None, device: str = "cpu", eval_examples: int = 500,
                     train_examples: int = 256, heads: Optional[int] = None, act: str = "quick_gelu",
                     ta_grid: Sequence[float] = TSV_GRID, seed: int = 0, cache=None, log=print) -> Path:
    """Import ``clip-<model>-<n>`` from ``checkpoints`` and ``data_root`` and return its folder (``load_zoo``
    opens it). Idempotent: a pool imported from the same sources (sha256) with the same settings is returned as
    is; a changed source or setting re-imports what it affects (every step resumes, as the zoo's build does).

    ``heads``: attention heads of the image tower (default width // 64); ``act``: its activation (QuickGELU for
    OpenAI-derived CLIP); ``device``: where the measurements (evaluations and merges) run.
    """
    out = cache_root(cache) / "pools" / suite
    if tasks is None and (out / "manifest.json").is_file():  # re-imported (a notebook's setup): keep its task list
        tasks = json.loads((out / "manifest.json").read_text())["tasks"]
    model, tasks = suite_tasks(suite, tasks)
    checkpoints, data_root = Path(checkpoints).expanduser(), Path(data_root).expanduser()
    sources = locate_checkpoints(checkpoints, tasks, fmt, base, model)
    store = Store(out / "store", log=log)
    provenance_path = store.root / "sources.json"
    provenance = json.loads(provenance_path.read_text()) if provenance_path.exists() else {}
    hashes = _Hashes(provenance.setdefault("hashes", {}), checkpoints)
    built = Built(store, provenance_path, provenance)

    text_path = Path(text_model).expanduser() if text_model is not None else None
    head_origin: dict[str, str] = {}
    needs_text = [t for t in tasks if sources.heads[t] is None]
    if needs_text and text_path is None and sources.format == "hf" and \
            json.loads((sources.base / "config.json").read_text()).get("model_type") == "clip":
        text_path = sources.base  # a full CLIPModel base (FusionBench's openai/clip-vit-base-patch32)
    if needs_text and text_path is None:
        raise _missing(f"no head file for {', '.join(needs_text)} and no text tower to build zero-shot heads "
                       "(pass text_model=)", {t: sources.looked_for_heads[t] for t in needs_text})
    base_key = {"format": sources.format, "sha256": hashes(sources.base)}
    expert_keys = {t: {"sha256": hashes(sources.experts[t]), "base": base_key} for t in tasks}
    class_names = {t: _class_names(t, sources.format) for t in tasks}
    head_keys = {}
    for task in tasks:
        if sources.heads[task] is not None:
            head_keys[task] = {"sha256": hashes(sources.heads[task])}
            head_origin[task] = str(sources.heads[task])
        else:
            manifest = load_task_manifest(task)
            head_keys[task] = {"text_tower": hashes(text_path, with_tokenizer=True), "act": act,
                               "text_config": jsonable(text_config) if text_config is not None else model,
                               "class_names": class_names[task], "templates": manifest["templates"]}
            head_origin[task] = f"zero-shot from the text tower {text_path}"
    settings = {"tasks": tasks, "eval_examples": eval_examples, "train_examples": train_examples, "heads": heads,
                "act": act, "ta_grid": [float(v) for v in ta_grid], "seed": seed, "base": base,
                "text_config": jsonable(text_config) if text_config is not None else None}
    source = {"checkpoints": str(checkpoints), "format": sources.format, "data_root": str(data_root),
              "sha256": dict(sorted(hashes.used.items())), "base": str(sources.base),
              "experts": {t: str(p) for t, p in sources.experts.items()}, "heads": head_origin,
              "text_model": str(text_path) if text_path is not None else None, "settings": settings}
    atomic_write_text(provenance_path, json.dumps(provenance, indent=1, sort_keys=True))

    manifest_path = out / "manifest.json"
    if imported_from(out, source, log):
        return out

    fresh, record = built.fresh, built.record

    timings: dict[str, float] = {}
    torch_threads = torch.get_num_threads()
    start = time.perf_counter()
    # every task's data is opened before the long steps: a missing split fails now
    data_splits = {task: _open_splits(task, data_root) for task in tasks}
    timings["data_s"] = time.perf_counter() - start

    start = time.perf_counter()
    base_state, vision_config = None, None
    if not fresh("base.safetensors", base_key):
        base_state, vision_config = _read_tower(sources.base, sources.format)
        store.put_tensors("base.safetensors", base_state)
        record("base.safetensors", base_key)
    if base_state is None:
        base_state = load_state_dict(store.verify("base.safetensors"))
    if sources.format == "hf" and vision_config is None:
        vision_config = load_hf_clip_vision(sources.base)[1]
    arch = _architecture(base_state, vision_config, heads, act, sources.base)
    timings["pretrain_s"] = time.perf_counter() - start

    start = time.perf_counter()
    transform = eval_transform(arch.image_size)
    arrays = {}
    for task in tasks:
        rel = f"data/{task}.npz"
        splits = data_splits[task]
        for dataset in splits.values():
            dataset.preprocess = transform
        key = {"data_root": str(data_root.resolve()), "image_size": arch.image_size, "seed": seed,
               "eval_examples": eval_examples, "train_examples": train_examples,
               "splits": {s: [str(d.location), d.format, len(d)] for s, d in splits.items()}}
        if not fresh(rel, key):
            log(f"{suite}: reading {task} from {data_root}")
            store.put_arrays(rel, task_arrays(task, splits, class_names[task], eval_examples, train_examples, seed))
            record(rel, key)
        arrays[task] = store.load_arrays(rel)
    timings["data_s"] += time.perf_counter() - start

    start = time.perf_counter()
    text_tower = None
    for task in tasks:
        rel = f"experts/{task}.safetensors"
        if not fresh(rel, expert_keys[task]):
            log(f"{suite}: converting the {task} expert {sources.experts[task]}")
            expert, _ = _read_tower(sources.experts[task], sources.format)
            store.put_tensors(rel, _match_base(expert, base_state, str(sources.experts[task]), log))
            record(rel, expert_keys[task])
        rel = f"heads/{task}.safetensors"
        if not fresh(rel, head_keys[task]):
            num_classes = load_task_manifest(task)["num_classes"]
            if sources.heads[task] is not None:
                head = head_from_file(sources.heads[task], num_classes, arch.embed_dim)
            else:
                if text_tower is None:
                    text_tower = load_text_tower(text_path, text_config, act, model)
                head = _text_head(text_tower, task, class_names[task], arch.embed_dim, device)
            store.put_tensors(rel, head.state_dict())
            record(rel, head_keys[task])
    timings["experts_s"] = time.perf_counter() - start

    artifacts = ["base.safetensors"] + [f"{kind}/{task}.safetensors" for task in tasks
                                        for kind in ("heads", "experts")]
    for rel in artifacts:
        link_file(store.verify(rel), out / rel)
    train_size = min(len(arrays[t]["train_y"]) for t in tasks)
    recipe = pool_recipe(arch, eval_examples, train_size, ta_grid, seed)
    start = time.perf_counter()
    # the full 0.1–3.0 TA grid wants a GPU
    measured = measure_zoo(out, tasks, arrays, recipe, device=device, log=lambda message: log(f"{suite}: {message}"))
    timings["evaluation_s"] = time.perf_counter() - start
    manifest = {
        "suite": suite, "tasks": tasks, "recipe": recipe.to_dict(), "recipe_hash": recipe_hash(recipe),
        "store": os.path.relpath(store.root, out), "checksums": {rel: store.journal[rel] for rel in artifacts},
        "classes": {task: [str(c) for c in arrays[task]["class_names"]] for task in tasks},
        "timings": timings, "environment": build_environment(torch_threads), **measured, "source": source,
    }
    atomic_write_text(manifest_path, json.dumps(manifest, indent=1))
    return out


def _class_names(task: str, fmt: str) -> list[str]:
    """The class names the heads are built from: FusionBench's own for its HF experts, else TSV's."""
    manifest = load_task_manifest(task)
    if fmt == "hf" and "fusionbench_class_names" in manifest:
        return list(manifest["fusionbench_class_names"])
    return list(manifest["class_names"])


def _text_head(text_tower: tuple, task: str, class_names: list[str], embed_dim: int, device: str) -> Head:
    model, tokenizer = text_tower
    model.to(device)
    head = build_zeroshot_head(model, tokenizer, class_names, load_task_manifest(task)["templates"], device)
    if head.weight.shape[1] != embed_dim:
        raise CheckpointError(f"the text tower embeds into {head.weight.shape[1]} dimensions, the image tower into "
                              f"{embed_dim}")
    return Head(head.weight.float().cpu(), head.logit_scale)


def _architecture(state: Mapping[str, torch.Tensor], vision_config: Optional[dict], heads: Optional[int], act: str,
                  base: Path) -> ClipArchitecture:
    if vision_config is None:
        return ClipArchitecture.from_state_dict(state, heads=heads, act=act)
    if vision_config["hidden_act"] != act:
        raise NbmergeError(f"{base / 'config.json'} says hidden_act {vision_config['hidden_act']!r}, act= says "
                           f"{act!r}")
    if vision_config["layer_norm_eps"] != 1e-5:
        raise NbmergeError(f"{base / 'config.json'}: layer_norm_eps {vision_config['layer_norm_eps']} (CLIP and "
                           "ClipArchitecture use 1e-5)")
    arch = ClipArchitecture.from_state_dict(state, heads=heads or vision_config["num_attention_heads"], act=act)
    if (arch.image_size, arch.patch_size) != (vision_config["image_size"], vision_config["patch_size"]):
        raise CheckpointError(f"{base}: weights give image/patch size {arch.image_size}/{arch.patch_size}, "
                              f"config.json {vision_config['image_size']}/{vision_config['patch_size']}")
    return arch
