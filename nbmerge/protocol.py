"""The comparison protocol every claim in the reports uses: one tuning rule, cached trials, paired intervals.

* **Same tuning for every method.** Each merge's global coefficient α (θ = θ₀ + α·τ_merged, the ``scale`` every
  registered method takes) is chosen on the same grid (:data:`SCALE_GRID`) by mean accuracy on the same seeded
  validation subset; test data never chooses anything. θ_α is linear in α, so a method is merged once (α = 1)
  and every grid point is θ₀ + α·(θ₁ − θ₀).
* **A trial cache.** Every evaluation is stored under ``$NBMERGE_CACHE/trials/<suite>-<zoo checksum>-<code>/``
  keyed by the exact recipe (method, parameters, α, experts, split, subset) and the code fingerprint
  (:mod:`nbmerge.codehash`) with its per-example logits and their checksum, so no merge + evaluation is computed
  twice, in one run or across runs and notebooks, intervals need no new evaluation, changed code recomputes, and a
  damaged entry is quarantined and recomputed, never used.
* **Paired intervals.** :func:`paired_difference` is a stratified paired bootstrap over test examples (examples
  resampled within each task; the statistic is the difference of normalized accuracy, mean over tasks, in points).
  Claims are decided from such intervals by :mod:`nbmerge.verdicts` (held / contradicted / inconclusive).
* **No vacuous verdicts.** :func:`vacuous` says why a comparison cannot test anything: a model at chance, two
  models that make the same prediction on almost every test example (collapsed onto one another), or a tie.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import torch

from .errors import NbmergeError
from .io import atomic_write_bytes

# α grid of every method's global coefficient (0 is the base). Wide enough for this zoo's optima (TIES and TSV-M
# near 1.5, ISO-CTS near 4 on MiniLM) and for CLIP's (TA ≈ 0.3).
SCALE_GRID = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0, 5.6)
BOOTSTRAP = 2000
LEVEL = 0.95
# two merges whose test predictions agree on at least this share of examples are the same model for a verdict
COLLAPSED_AGREEMENT = 0.995
# a model whose mean accuracy is within this many points of chance (mean over tasks of 1/classes) is at chance
CHANCE_MARGIN = 0.02


# ------------------------------------------------------------------------------------------------ predictions

@dataclass
class Predictions:
    """Per task: logits [n, classes] (float32) and labels [n] of one model on one split."""

    logits: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    split: str = "test"
    seconds: float = 0.0                    # evaluation time when computed (0 when read from the cache)
    extra: dict = field(default_factory=dict)

    @property
    def tasks(self) -> list[str]:
        return list(self.logits)

    def correct(self, task: str) -> np.ndarray:
        return self.logits[task].argmax(-1) == self.labels[task]

    def accuracy(self) -> dict[str, float]:
        return {t: float(self.correct(t).mean()) for t in self.tasks}

    def mean_accuracy(self) -> float:
        return float(np.mean(list(self.accuracy().values())))

    def normalized(self, expert: Mapping[str, float]) -> float:
        acc = self.accuracy()
        ratios = [acc[t] / expert[t] for t in self.tasks if expert.get(t, 0) > 0]
        return float(np.mean(ratios)) if ratios else float("nan")

    def probs(self, task: str, temperature: float = 1.0) -> np.ndarray:
        z = self.logits[task].astype(np.float64) / temperature
        z -= z.max(-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(-1, keepdims=True)

    def chance(self) -> float:
        return float(np.mean([1.0 / self.logits[t].shape[-1] for t in self.tasks]))

    def summary(self, expert: Optional[Mapping[str, float]] = None, temperature: float = 1.0) -> dict:
        """Mean accuracy, NLL and ECE (at ``temperature``), normalized accuracy when ``expert`` is given."""
        from .metrics import expected_calibration_error

        nlls, eces = [], []
        for t in self.tasks:
            p = self.probs(t, temperature)
            y = self.labels[t]
            nlls.append(float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-300, None)).mean()))
            eces.append(expected_calibration_error(torch.from_numpy(p), torch.from_numpy(y)))
        out = {"accuracy": self.mean_accuracy(), "nll": float(np.mean(nlls)), "ece": float(np.mean(eces)),
               "per_task": self.accuracy()}
        if expert is not None:
            out["normalized"] = self.normalized(expert)
        return out


def evaluate_predictions(evaluator, state: Optional[Mapping[str, torch.Tensor]], split: str,
                         tasks: Optional[Sequence[str]] = None) -> Predictions:
    """Run ``evaluator`` on ``state`` (``None``: the weights already loaded) and keep every example's logits."""
    import time

    from .taskaware import is_task_aware

    start = time.perf_counter()
    per_task = is_task_aware(state)  # a task-aware merge: each task is evaluated on its own model
    if state is not None and not per_task:
        evaluator.load(state)
    logits, labels = {}, {}
    for task in tasks or evaluator.task_names:
        if per_task:
            evaluator.load(state.for_task(task, evaluator.task_names.index(task)))
        out, y = evaluator.logits(task, split)
        logits[task] = out.float().cpu().numpy()
        labels[task] = y.cpu().numpy()
    return Predictions(logits, labels, split, time.perf_counter() - start)


# ------------------------------------------------------------------------------------------------ trial cache

def _digest(value) -> str:
    from .codehash import digest

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
        from .codehash import code_fingerprint

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

        from .errors import NbmergeWarning

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
    from .pools.store import cache_root

    # a view of the zoo's one evaluator: trial caches at different seeds each keep their own validation subset
    evaluator = zoo.evaluator(device).with_val_subset(val_examples, seed)
    return TrialCache(zoo, evaluator, cache_root(cache or None) / "trials", log=log)


# ------------------------------------------------------------------------------------------ α on validation

def scaled(base: Mapping[str, torch.Tensor], merged: Mapping[str, torch.Tensor], alpha: float,
           out: Optional[dict] = None) -> dict:
    """θ₀ + α·(θ₁ − θ₀) for a merge θ₁ made at α = 1 (computed in float32, float64 for float64 tensors, and cast
    back to each tensor's dtype). A task-aware merge (one model per task) is scaled model by model."""
    from .taskaware import TaskModels, is_task_aware

    if is_task_aware(merged):
        return TaskModels([scaled(base, model, alpha) for model in merged], merged.names, merged.info)
    out = {} if out is None else out
    for key, w1 in merged.items():
        w0 = base[key]
        if not torch.is_floating_point(w1):
            out[key] = w1
            continue
        work = torch.float64 if w1.dtype == torch.float64 else torch.float32
        out[key] = (w0.to(work) + alpha * (w1.to(work) - w0.to(work))).to(w1.dtype)
    return out


@dataclass
class Tuned:
    """A method after α was chosen on validation: the grid's validation curve and the chosen α."""

    recipe: dict
    alpha: float
    curve: list[dict]           # [{"alpha", "val_accuracy"}]
    merge_seconds: float = 0.0
    merge_fn: Optional[Callable] = field(default=None, repr=False, compare=False)  # merges at α = 1
    merged: Optional[dict] = field(default=None, repr=False, compare=False)  # the α = 1 merge, when it was made

    def at(self, alpha: float) -> dict:
        return {**self.recipe, "scale": alpha}

    @property
    def best(self) -> dict:
        return self.at(self.alpha)


def tune_scale(cache: TrialCache, recipe: dict, merge_fn: Callable[[], Mapping[str, torch.Tensor]],
               base: Mapping[str, torch.Tensor], grid: Sequence[float] = SCALE_GRID) -> Tuned:
    """Choose α on ``grid`` by mean validation accuracy (ties: the smaller α). ``merge_fn()`` merges at α = 1 and
    is called at most once, only when some grid point is not cached. ``recipe`` must not hold ``scale``."""
    import time

    if "scale" in recipe.get("params", {}):
        raise NbmergeError("tune_scale: the recipe's params must not fix `scale` (α is what is tuned)")
    state: dict = {}
    seconds = [0.0]

    def merged_at_one():
        if "one" not in state:
            start = time.perf_counter()
            state["one"] = merge_fn()
            seconds[0] = time.perf_counter() - start
        return state["one"]

    curve = []
    buffer: dict = {}
    for alpha in grid:
        preds = cache.predictions({**recipe, "scale": float(alpha)}, "val",
                                  lambda a=alpha: scaled(base, merged_at_one(), a, buffer))
        curve.append({"alpha": float(alpha), "val_accuracy": preds.mean_accuracy()})
    best = max(curve, key=lambda r: (r["val_accuracy"], -r["alpha"]))
    # the α = 1 merge is kept (one model's worth of memory) so that the test pass does not merge again
    return Tuned(dict(recipe), best["alpha"], curve, seconds[0], merge_fn, state.get("one"))


def test_at(cache: TrialCache, tuned: Tuned, merge_fn: Callable[[], Mapping[str, torch.Tensor]],
            base: Mapping[str, torch.Tensor]) -> Predictions:
    """Test predictions of a tuned method at its validation-chosen α (reusing the α = 1 merge tuning made, if any;
    it is released afterwards)."""
    def make():
        merged = tuned.merged if tuned.merged is not None else merge_fn()
        return scaled(base, merged, tuned.alpha)

    preds = cache.predictions(tuned.best, "test", make)
    tuned.merged = None
    return preds


# ------------------------------------------------------------------------------------------ paired intervals

@dataclass(frozen=True)
class Interval:
    """A difference of normalized accuracy A − B on test (points), with its paired-bootstrap 95% interval."""

    diff: float
    low: float
    high: float
    agreement: float            # share of test examples where A and B predict the same class

    def __str__(self) -> str:
        return f"{self.diff:+.2f} [{self.low:+.2f}, {self.high:+.2f}] pts"

    def to_dict(self) -> dict:
        return {"diff": self.diff, "low": self.low, "high": self.high, "agreement": self.agreement}


def paired_difference(a: Predictions, b: Predictions, expert: Optional[Mapping[str, float]] = None,
                      n_boot: int = BOOTSTRAP, seed: int = 0, level: float = LEVEL) -> Interval:
    """Stratified paired bootstrap of (normalized) accuracy A − B over the test examples, in points.

    Examples are resampled within each task, the same indices for A and B (paired); the statistic is the mean
    over tasks of (acc_A − acc_B) / expert accuracy (plain accuracy when ``expert`` is None)."""
    if set(a.tasks) != set(b.tasks):
        raise NbmergeError(f"paired_difference: different tasks {a.tasks} vs {b.tasks}")
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_boot)
    point = 0.0
    agree, total = 0, 0
    tasks = a.tasks
    for task in tasks:
        if not np.array_equal(a.labels[task], b.labels[task]):
            raise NbmergeError(f"paired_difference: task {task!r} has different examples in A and B")
        scale = 1.0 / expert[task] if expert and expert.get(task, 0) > 0 else 1.0
        pa, pb = a.logits[task].argmax(-1), b.logits[task].argmax(-1)
        d = ((pa == a.labels[task]).astype(np.float64) - (pb == b.labels[task]).astype(np.float64)) * scale
        n = len(d)
        agree += int((pa == pb).sum())
        total += n
        point += d.mean()
        idx = rng.integers(0, n, size=(n_boot, n))
        stats += d[idx].mean(axis=1)
    k = len(tasks)
    stats, point = 100 * stats / k, 100 * point / k
    tail = (1 - level) / 2
    low, high = np.quantile(stats, [tail, 1 - tail])
    return Interval(float(point), float(low), float(high), agree / max(total, 1))


def bootstrap_samples(a: Predictions, b: Predictions, expert: Mapping[str, float], n_boot: int = BOOTSTRAP,
                      seed: int = 0) -> np.ndarray:
    """The bootstrap distribution behind :func:`paired_difference` (same statistic, in points), as an array, so
    that differences measured on two independent test sets (two suites) can be compared."""
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_boot)
    for task in a.tasks:
        scale = 1.0 / expert[task] if expert.get(task, 0) > 0 else 1.0
        d = (a.correct(task).astype(np.float64) - b.correct(task).astype(np.float64)) * scale
        stats += d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
    return 100 * stats / len(a.tasks)


def vacuous(a: Predictions, b: Predictions, interval: Optional[Interval] = None, names=("A", "B")) -> Optional[str]:
    """Why comparing A with B cannot test a claim (None when it can): a model at chance, or the two collapsed onto
    one another (the same prediction on ≥ 99.5% of test examples)."""
    for name, p in zip(names, (a, b)):
        if p.mean_accuracy() <= p.chance() + CHANCE_MARGIN:
            return (f"{name} is at chance ({100 * p.mean_accuracy():.1f}% mean accuracy, chance "
                    f"{100 * p.chance():.1f}%)")
    if interval is not None and interval.agreement >= COLLAPSED_AGREEMENT:
        return (f"{names[0]} and {names[1]} collapsed onto one another: the same prediction on "
                f"{100 * interval.agreement:.1f}% of test examples")
    return None


def spread(values: Sequence[float]) -> str:
    """"mean ± sd (min–max, n)" of per-seed numbers, for evidence strings."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if len(v) == 0:
        return "n/a"
    sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return f"{v.mean():.2f} ± {sd:.2f} ({v.min():.2f}–{v.max():.2f}, {len(v)} seeds)"


def bootstrap_accuracy(models: Sequence[Predictions], n_boot: int = BOOTSTRAP, seed: int = 0) -> np.ndarray:
    """[models, n_boot] mean-over-tasks test accuracy of each model on the same stratified resamples (examples drawn
    within each task, the same indices for every model: a joint paired bootstrap, resampled exactly as
    :func:`paired_difference` does for the same seed)."""
    tasks = models[0].tasks
    rng = np.random.default_rng(seed)
    out = np.zeros((len(models), n_boot))
    for task in tasks:
        labels = models[0].labels[task]
        for m in models[1:]:
            if not np.array_equal(m.labels[task], labels):
                raise NbmergeError(f"bootstrap_accuracy: task {task!r} has different examples across models")
        idx = rng.integers(0, len(labels), size=(n_boot, len(labels)))
        for i, m in enumerate(models):
            out[i] += m.correct(task).astype(np.float64)[idx].mean(axis=1)
    return out / len(tasks)


def quantile_interval(samples: np.ndarray, point: float, level: float = LEVEL) -> dict:
    """``{"diff", "low", "high"}``: a point estimate with the central ``level`` interval of its bootstrap samples."""
    tail = (1 - level) / 2
    low, high = np.quantile(samples, [tail, 1 - tail])
    return {"diff": float(point), "low": float(low), "high": float(high)}


def relative_gain_interval(a: Predictions, b: Predictions, seed: int = 0) -> dict:
    """(A − B)/B of mean test accuracy (``metrics.relative_gain``), with its paired bootstrap 95% interval
    (fractions)."""
    from .metrics import relative_gain

    boot = bootstrap_accuracy([a, b], seed=seed)
    return quantile_interval((boot[0] - boot[1]) / boot[1], relative_gain(a.mean_accuracy(), b.mean_accuracy()))


def agreement(a: Predictions, b: Predictions) -> float:
    """Share of test examples where two models predict the same class."""
    same = sum(int((a.logits[t].argmax(-1) == b.logits[t].argmax(-1)).sum()) for t in a.tasks)
    return same / max(1, sum(len(a.labels[t]) for t in a.tasks))


# ------------------------------------------------------------------------------ registered methods, tuned alike

#: methods whose Grams are recorded through the merged earlier blocks (``pools.sequential``), not on each expert
SEQUENTIAL_GRAMS = frozenset({"regmean_plusplus"})


def gram_kind(method: str) -> str:
    """``"sequential"`` for a method that needs RegMean++'s Grams, ``"data"`` for every other."""
    return "sequential" if method in SEQUENTIAL_GRAMS else "data"


def gram_name(examples: int, seed: int = 0, kind: str = "data") -> str:
    """How recipes name data Grams: each expert's input Grams on ``examples`` training examples of its own task,
    sampled with ``seed`` (``pools.zoo.expert_grams``); ``kind="sequential"``: RegMean++'s, recorded through the
    merged earlier blocks on the same examples (``pools.sequential.sequential_grams``)."""
    if kind not in ("data", "sequential"):
        raise NbmergeError(f"gram kind must be 'data' or 'sequential', got {kind!r}")
    return f"{kind}:{examples}:{seed}"


def method_recipe(method: str, params: Optional[Mapping] = None, grams: Optional[str] = None,
                  experts: str = "zoo") -> dict:
    """The canonical cache recipe of a registered method on a zoo: every notebook that merges ``method`` with
    these ``params`` (no ``scale``) on the zoo's own experts shares one cache entry. ``grams`` names the statistics
    it used (e.g. ``"data:256:0"``: Grams of 256 training examples per task, seed 0), ``experts`` which experts
    (``"zoo"``: the suite's own; anything else for variants)."""
    params = dict(params or {})
    if "scale" in params:
        raise NbmergeError("method_recipe: `scale` is the tuned α, not part of the recipe")
    return {"method": method, "params": {k: params[k] for k in sorted(params)}, "grams": grams, "experts": experts}


def tune_method(cache: TrialCache, method: str, base: Mapping[str, torch.Tensor], experts: Sequence,
                params: Optional[Mapping] = None, *, grams=None, grams_name: Optional[str] = None,
                experts_name: str = "zoo", grid: Sequence[float] = SCALE_GRID, device: str = "cpu") -> Tuned:
    """α of ``method`` chosen on the validation subset over ``grid`` (the same protocol for every method).
    ``grams`` may be a function returning them, called only if some grid point is not cached (a warm run then
    collects no Grams)."""
    from .merging import merge
    from .walker import WalkOptions

    recipe = method_recipe(method, params, grams_name, experts_name)

    def merge_fn():
        return merge(method, base, experts, {**dict(params or {}), "scale": 1.0},
                     grams=grams() if callable(grams) else grams, walk=WalkOptions(device=device))

    tuned = tune_scale(cache, recipe, merge_fn, base, grid)
    tuned.merge_fn = merge_fn
    return tuned


def tune_at_seeds(cache: TrialCache, base: Mapping[str, torch.Tensor], seeds: Sequence[int], validation: Callable,
                  recipe_and_merge: Callable[[int], tuple]) -> list[tuple]:
    """``[(Tuned, test Predictions)]``, one per seed: within ``validation(seed)`` (that seed's validation subset),
    ``recipe_and_merge(seed)`` gives the recipe and its α = 1 merge function, α is chosen on the grid
    (:func:`tune_scale`) and the model tested once at it (:func:`method_test`)."""
    out = []
    for seed in seeds:
        with validation(seed):
            recipe, merge_fn = recipe_and_merge(seed)
            tuned = tune_scale(cache, recipe, merge_fn, base)
            tuned.merge_fn = merge_fn
            out.append((tuned, method_test(cache, tuned, base)))
    return out


def method_test(cache: TrialCache, tuned: Tuned, base: Mapping[str, torch.Tensor]) -> Predictions:
    """Test predictions of a method tuned by :func:`tune_method`, at its validation-chosen α."""
    if tuned.merge_fn is None:
        raise NbmergeError("method_test: this Tuned has no merge function (use tune_method, or test_at)")
    return test_at(cache, tuned, tuned.merge_fn, base)
