"""The embedded model zoo's recipes and suites, and opening a built suite or imported pool.

``Zoo`` is one opened suite: its name, tasks and experts' accuracies (from its manifest), its checkpoints, heads,
per-task data and a cached evaluator. ``load_zoo`` opens a built suite, verifying every checksum; ``info`` is what
``nbmerge zoo info`` prints; ``gram_sample``, ``load_models``, ``expert_grams`` and ``collect_grams`` read the models
and their data statistics. Building and measuring a suite, and ``open_zoo`` (which builds a missing embedded suite
first), are ``nbmerge.pools.build``, whose docstring gives the cache's layout and how a build heals; the store on
disk is ``nbmerge.pools.store``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from ..errors import CacheError, CheckpointError, NbmergeError
from ..engine.io import load_state_dict, sha256_file
from ..models import arch_from_dict
from ..models.base import Head, load_head
from ..models.minilm import TextArchitecture
from ..models.base import ModelFamily
from .kinds import is_pool, pool_patterns
from .store import Store, cache_root, json_problem, read_manifest, remedy_for, store_root
from .train import ZooRecipe


TINY_RECIPE = ZooRecipe()
# micro: the 3-task suite the tests build; a small pool and short runs so it builds in seconds.
MICRO_RECIPE = replace(ZooRecipe(), pool_classes=100, pool_per_class=30, pretrain_epochs=8, pretrain_batch=128,
                       expert_steps=100, expert_lr=1e-3, warmup_steps=5, ta_grid=(0.3, 0.6, 1.0),
                       eval_examples=600)


# text8/14/20: the pretrained all-MiniLM-L6-v2 is the base (pretrain_epochs=0: nothing to pretrain) and the heads
# are zero-shot, from the class descriptions (head_shots=0); the experts fine-tune the whole encoder: 100 steps at
# batch 32 (about two epochs of a task's train split), ~1 minute per expert on 2 cores.
TEXT_RECIPE = replace(ZooRecipe(), arch=TextArchitecture(), pool_per_class=0, pretrain_epochs=0, pretrain_batch=0,
                      pretrain_lr=0.0, pretrain_weight_decay=0.0, head_shots=0, logit_scale=30.0, expert_steps=100,
                      expert_batch=32, expert_lr=1e-4, warmup_steps=10, eval_examples=300)

# text-micro: the text zoo's test suite (3 short-text tasks, 10-step experts): builds in about a minute.
TEXT_MICRO_RECIPE = replace(TEXT_RECIPE, expert_steps=10, warmup_steps=2, eval_examples=60, ta_grid=(0.3, 0.6, 1.0))


def suites() -> dict[str, tuple[str, ...]]:
    """Every embedded suite: the vision zoo's and the text zoo's."""
    from ..tasks.text import TEXT_SUITES
    from ..tasks.vision import SUITES

    return {**SUITES, **TEXT_SUITES}


def recipe_for(suite: str) -> ZooRecipe:
    if suite.startswith("text"):
        return TEXT_MICRO_RECIPE if suite == "text-micro" else TEXT_RECIPE
    return MICRO_RECIPE if suite == "micro" else TINY_RECIPE


def recipe_hash(recipe: ZooRecipe) -> str:
    from ..codehash import digest

    return digest(recipe.to_dict(), 12)


def store_hash(recipe: ZooRecipe) -> str:
    """Hash of what the trained artifacts depend on: evaluation-only knobs (the TA grid) are left out, so that
    changing them re-evaluates a suite without retraining its base and experts."""
    return recipe_hash(replace(recipe, ta_grid=()))


def suite_dir(suite: str, cache=None) -> Path:
    """A suite's folder: an imported pool's under ``pools/``, an embedded zoo's named by its recipe's hash."""
    if is_pool(suite):
        return cache_root(cache) / "pools" / suite
    return cache_root(cache) / "zoo" / f"{suite}-{recipe_hash(recipe_for(suite))}"


def load_heads(root: Path, tasks: list[str]) -> dict[str, Head]:
    """Each task's classification head, from ``<root>/heads/<task>.safetensors``."""
    return {t: load_head(load_state_dict(root / "heads" / f"{t}.safetensors")) for t in tasks}


def eval_splits(arrays: dict, tasks: list[str]) -> dict:
    """``{task: {split: (images, labels)}}`` for the validation and test splits."""
    return {t: {s: (arrays[t][f"{s}_x"], arrays[t][f"{s}_y"]) for s in ("val", "test")} for t in tasks}


def encoder_from_state(state: dict[str, torch.Tensor], arch: ModelFamily) -> torch.nn.Module:
    from ..models.base import load_encoder_weights

    encoder = arch.build()
    load_encoder_weights(encoder, state, arch.prefix)
    return encoder.eval()


def seed_of_task(task: str) -> int:
    return int(hashlib.sha256(task.encode()).hexdigest()[:8], 16)


class Zoo:
    """A built zoo: paths, heads, per-task data, and a cached evaluator."""

    def __init__(self, root: Path, manifest: dict, arrays: dict[str, dict[str, np.ndarray]]):
        self.root = root
        self.manifest = manifest
        self.tasks = list(manifest["tasks"])
        self.arrays = arrays
        self.arch = arch_from_dict(manifest["recipe"]["arch"])
        self._evaluator = None

    @property
    def suite(self) -> str:
        """The suite's name (``text8``, ``clip-vit-b32-8`` ...): the manifest's, else the folder's."""
        return self.manifest.get("suite") or self.root.name

    @property
    def expert_accuracy(self) -> dict[str, float]:
        """Each expert's test accuracy on its own task (what normalizes every accuracy), a fresh dict."""
        return dict(self.manifest["expert_accuracy"]["test"])

    @property
    def recipe(self) -> ZooRecipe:
        """The recipe the suite was built (or imported) with, as its manifest records it."""
        recorded = self.manifest["recipe"]
        return ZooRecipe(**{**recorded, "arch": self.arch, "ta_grid": tuple(recorded["ta_grid"])})

    @property
    def base_path(self) -> Path:
        return self.root / "base.safetensors"

    def expert_path(self, task: str) -> Path:
        return self.root / "experts" / f"{task}.safetensors"

    @property
    def expert_paths(self) -> list[Path]:
        return [self.expert_path(t) for t in self.tasks]

    def heads(self) -> dict[str, Head]:
        return load_heads(self.root, self.tasks)

    @property
    def store_root(self) -> Path:
        """The folder of the store the suite's artifacts and data live in (``store_root``)."""
        return store_root(self.root, self.manifest)

    def evaluator(self, device: str = "cpu"):
        from ..evaluate.evaluation import Evaluator

        if self._evaluator is None:
            expert = {t: {s: self.manifest["expert_accuracy"][s][t] for s in ("val", "test")} for t in self.tasks}
            self._evaluator = Evaluator(self.arch, eval_splits(self.arrays, self.tasks), self.heads(), expert,
                                        device=device)
        return self._evaluator


def load_zoo(suite: str, cache=None) -> Zoo:
    """Open a built suite, verifying every checkpoint's checksum (a clear, one-line error if it is incomplete or
    corrupt, or if its manifest or its store's journal is)."""
    root = suite_dir(suite, cache)
    manifest_path = root / "manifest.json"
    if not manifest_path.exists():
        if is_pool(suite):
            raise NbmergeError(f"pool {suite!r} is not imported (no {manifest_path}): run `nbmerge pool import "
                               f"{suite} --checkpoints PATH --data-root PATH`, or give the notebook its "
                               "`checkpoints` and `data_root` parameters")
        if suite not in suites():
            raise NbmergeError(f"unknown suite {suite!r}: the embedded suites are {', '.join(suites())}, and "
                               f"imported pools are named {pool_patterns()}")
        raise NbmergeError(f"suite {suite!r} is not built (no {manifest_path}): run `nbmerge zoo build {suite}`")
    remedy = remedy_for(suite)
    manifest = read_manifest(manifest_path, remedy)
    for rel, digest in manifest["checksums"].items():
        path = root / rel
        if not path.exists() or sha256_file(path) != digest:
            raise CheckpointError(f"{path} is missing, truncated or altered: run `nbmerge zoo build {suite}`")
    store_path = store_root(root, manifest)
    if not store_path.is_dir():
        raise CacheError(f"the store {store_path} that {manifest_path} records does not exist: {remedy}")
    store = Store(store_path, log=lambda *_: None, heal=False, remedy=remedy)
    arrays = {task: store.load_arrays(f"data/{task}.npz") for task in manifest["tasks"]}
    try:
        return Zoo(root, manifest, arrays)
    except NbmergeError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CacheError(f"{manifest_path} is corrupt (its recipe cannot be read: {json_problem(exc)}): "
                         f"{remedy}") from exc


def info(suite: str, cache=None) -> dict:
    zoo = load_zoo(suite, cache)
    m = zoo.manifest
    targets_path = zoo.root / "targets.json"
    if "targets" not in m and targets_path.exists():
        try:
            m = {**m, "targets": json.loads(targets_path.read_text())}
        except (OSError, ValueError) as exc:
            raise CacheError(f"{targets_path} is corrupt ({json_problem(exc)}): run `nbmerge zoo targets {suite}` "
                             "to measure it again") from exc
    return {
        "suite": suite,
        "tasks": [{"name": t, "classes": len(m["classes"][t]), "base_accuracy": m["base_accuracy"]["test"][t],
                   "expert_accuracy": m["expert_accuracy"]["test"][t]} for t in zoo.tasks],
        "simple_average_normalized_accuracy": m["simple_average_normalized_accuracy"],
        "task_arithmetic_normalized_accuracy": m["task_arithmetic_normalized_accuracy"],
        "mean_base_accuracy": float(np.mean(list(m["base_accuracy"]["test"].values()))),
        "mean_expert_accuracy": float(np.mean(list(m["expert_accuracy"]["test"].values()))),
        "interference_ratio": m["diagnostics"]["interference_ratio"],
        "task_arithmetic_best_scale": m["task_arithmetic"]["best_scale"],
        "eval_throughput_images_per_s": m["eval_throughput_images_per_s"],
        "timings": m["timings"],
        **({"targets": m["targets"]} if "targets" in m else {}),
    }


def gram_sample(zoo: Zoo, task: str, n: int, seed: int = 0) -> np.ndarray:
    """Indices of the ``n`` training examples of ``task`` that ``collect_grams`` records (seeded)."""
    return np.random.default_rng([seed, seed_of_task(task), 5]).permutation(len(zoo.arrays[task]["train_x"]))[:n]


def load_models(zoo: Zoo) -> tuple[dict, list[dict]]:
    """The zoo's base and experts as state dicts (in the zoo's order of tasks)."""
    return load_state_dict(zoo.base_path), [load_state_dict(p) for p in zoo.expert_paths]


def expert_grams(zoo: Zoo, n: int, seed: int = 0) -> list[dict]:
    """Per task, the input Grams of each expert on ``n`` training examples of its own task (RegMean's and BMM's
    data statistics), sampled with ``seed``."""
    return [collect_grams(zoo, load_state_dict(path), n, seed=seed, tasks=[task])[task]["grams"]
            for task, path in zip(zoo.tasks, zoo.expert_paths)]


def collect_grams(zoo: Zoo, model_state: dict[str, torch.Tensor], n: int, seed: int = 0,
                  tasks: Optional[list[str]] = None) -> dict[str, dict]:
    """Per task (all of the suite's, or ``tasks``), the input Grams of every linear weight of ``model_state`` on
    ``n`` training examples."""
    encoder = encoder_from_state(model_state, zoo.arch)
    out = {}
    unknown = set(tasks or ()) - set(zoo.tasks)
    if unknown:
        raise NbmergeError(f"tasks {sorted(unknown)} are not in this suite ({', '.join(zoo.tasks)})")
    for task in tasks or zoo.tasks:
        x = zoo.arrays[task]["train_x"]
        chosen = gram_sample(zoo, task, n, seed)
        with torch.inference_mode(), zoo.arch.gram_recorder(encoder) as recorder:
            for i in range(0, len(chosen), 512):
                encoder(zoo.arch.inputs(x[chosen[i:i + 512]]))
        out[task] = {"grams": recorder.grams, "examples": len(chosen), "tokens": recorder.tokens}
    return out

