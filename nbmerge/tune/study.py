"""The study layer every notebook and the ``bmm-search`` command stand on: one way to open a suite, tune an anchor,
run a BMM search and keep a small result, so that their trial-cache entries, search logs and records are shared.

* :func:`open_lab`: the suite's zoo, its trial cache (the seeded validation subset every notebook tunes on), its
  models, and the memo ``tune_bmm`` shares between searches (models, Grams, anchor merges, factorised solvers).
  A :class:`Lab` knows its suite's name and its experts' test accuracies (what normalizes every accuracy), and
  can stand for another expert set of the same tasks (:meth:`Lab.with_experts`) or another validation subset
  (:meth:`Lab.at_seed`).
* :func:`tune_anchor`: the anchor's global coefficient α chosen on the validation subset over
  ``alpha_tuning.SCALE_GRID`` (``alpha_tuning.tune_method``, the recipe the ACE notebook and the tour use), with its
  test predictions at that α.
* :func:`run_search`: one seeded BMM search whose prior mean is that α*-tuned anchor; its log lives under the
  trial cache, named by the search's identity, so a warm rerun replays it and evaluates nothing.
* :func:`stored`: a small JSON-able result (a noise estimate, a Gram alignment, an analysis of the checkpoints)
  kept sealed beside the trial cache, recomputed (never used) when it fails its checksum or its key.

Variants: ``data`` = data-assisted (each expert's input Grams on ``gram_examples`` training examples of its own
task); ``free`` = data-free (task-vector Grams τ_tᵀτ_t). An anchor that itself needs data Grams (RegMean) keeps them
in the data-free variant, so only BMM's likelihood is data-free there: it runs as ``grams="hybrid"`` with β = 0,
which is the task-vector Gram exactly (the normalised λ cancels the rescaling).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from ..evaluate import protocol
from . import alpha_tuning
from ..evaluate import trialcache
from ..errors import NbmergeError, NbmergeWarning
from ..methods import get_method

VARIANTS = ("data", "free")
VARIANT_NAMES = {"data": "data-assisted", "free": "data-free"}


def anchor_needs_grams(anchor: str) -> bool:
    return "grams" in get_method(anchor).needs


def gram_source(anchor: str, variant: str) -> tuple[str, float]:
    """``(grams, beta)`` for ``tune_bmm``: data → ("data", ·); free → ("task_vector", ·), or ("hybrid", 0.0) for
    an anchor that needs data Grams (its merge keeps them; BMM's own Gram is then exactly the task-vector one)."""
    if variant not in VARIANTS:
        raise NbmergeError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if variant == "data":
        return "data", 0.5
    return ("hybrid", 0.0) if anchor_needs_grams(anchor) else ("task_vector", 0.5)


def anchor_params(anchor: str, wudi_steps: int) -> dict:
    """The anchor's own parameters, without α (tuned on validation): the ACE notebook's recipes."""
    return {"iters": wudi_steps} if anchor == "wudi" else {}


def search_seconds(search) -> float:
    """A search's own wall time: per trial, the merge, the validation pass (on a trial-cache hit, the time the stored
    evaluation took when it ran) and the optimiser's ask + tell, summed. The one-off setup every strategy shares
    (Grams, the solver's factorisation) is left out, so the strategy that happens to run first is not charged it."""
    return float(sum(t.metrics.get("merge_seconds", 0.0) + t.metrics.get("eval_seconds", t.seconds) + t.search_seconds
                     for t in search.trials))


@dataclass
class Lab:
    """One suite, opened: its trial cache (validation subset), base and experts (the zoo's, loaded on first use
    and shared through the memo; or a named set of the same tasks), the experts' test accuracies that normalize
    every accuracy, and the memo ``tune_bmm`` shares between searches (models, Grams, anchor merges, solvers)."""

    zoo: object
    cache: trialcache.TrialCache
    expert_accuracy: dict                                     # the zoo's experts on their own tasks (test)
    memo: dict = field(default_factory=dict, repr=False)
    cache_dir: str = ""
    device: str = "cpu"
    val_examples: int = 100
    val_seed: int = 0
    experts_name: str = "zoo"                                 # which experts (part of every trial's recipe)
    merge_seconds: dict = field(default_factory=dict)         # recipe key → merge wall times measured in this run
    models: Optional[tuple] = field(default=None, repr=False)  # (base, experts) given; None: the zoo's, on first use

    def _models(self) -> tuple:
        if self.models is not None:
            return self.models
        from .bmm import shared_models

        return shared_models(self.memo, self.zoo)

    @property
    def base(self) -> dict:
        return self._models()[0]

    @property
    def experts(self) -> list:
        return self._models()[1]

    @property
    def suite(self) -> str:
        return self.zoo.suite

    @property
    def expert(self) -> dict:
        """The experts' test accuracies (the name the BMM studies read)."""
        return self.expert_accuracy

    def at_seed(self, seed: int) -> "Lab":
        """The same suite with the validation subset drawn with ``seed`` (its own trial cache view; the models and
        the memo of Grams, anchor merges and solvers, which do not depend on the subset, are shared). Each search
        seed tunes on its own subset, so the validation noise is part of the spread over seeds."""
        if seed == self.val_seed:
            return self
        trials = trialcache.trial_cache(self.zoo, self.device, self.cache_dir, self.val_examples, seed)
        return replace(self, cache=trials, val_seed=seed)

    def with_experts(self, experts: list, name: str) -> "Lab":
        """The same suite, trial cache and base with another set of experts of the same tasks (``name`` keeps their
        trials apart); accuracies are still normalized by the zoo's own experts."""
        return replace(self, models=(self.base, experts), experts_name=name, memo={})

    def release(self, keep_anchors: bool = True) -> None:
        """Free the factorised solvers (and the anchor merges unless ``keep_anchors``): one (anchor, variant) at a
        time is enough in memory."""
        for key in [k for k in self.memo if k[0] == "solver" or (k[0] == "anchor" and not keep_anchors)]:
            del self.memo[key]


def open_lab(suite: str, *, cache: str = "", device: str = "cpu", val_examples: int = 100, seed: int = 0,
             log: Optional[Callable] = None) -> Lab:
    """The suite's zoo (built first if it is a missing embedded suite), its trial cache with the seeded validation
    subset (``val_examples`` per task, 0: the whole split), and its models (loaded when first used: a study that
    only trains posteriors or reads the cache never holds them). ``log``: where the trial cache says what it
    quarantines or recomputes (default: nowhere but the warning)."""
    from ..pools.build import open_zoo

    zoo = open_zoo(suite, cache)
    trials = trialcache.trial_cache(zoo, device, cache, val_examples, seed, **({"log": log} if log else {}))
    return Lab(zoo, trials, zoo.expert_accuracy, {}, cache, device, val_examples, seed)


@dataclass
class AnchorRun:
    """A plug-in anchor with its α chosen on the validation subset (the same grid as every method) and its test
    predictions at that α."""

    name: str
    params: dict          # the anchor's own parameters (no α)
    tuned: alpha_tuning.Tuned
    test: protocol.Predictions

    @property
    def alpha(self) -> float:
        return self.tuned.alpha

    @property
    def val_accuracy(self) -> float:
        return next(r["val_accuracy"] for r in self.tuned.curve if r["alpha"] == self.tuned.alpha)


def tune_anchor(lab: Lab, anchor: str, *, wudi_steps: int = 300, gram_examples: int = 256, gram_seed: int = 0,
                device: str = "cpu") -> AnchorRun:
    """``anchor``'s α* on the lab's validation subset over ``alpha_tuning.SCALE_GRID``, and its test predictions
    there."""
    from .bmm import shared_grams

    params = anchor_params(anchor, wudi_steps)
    needs = anchor_needs_grams(anchor)
    tuned = alpha_tuning.tune_method(
        lab.cache, anchor, lab.base, lab.experts, params,
        grams=(lambda: shared_grams(lab.memo, lab.zoo, gram_examples, gram_seed)) if needs else None,
        grams_name=alpha_tuning.gram_name(gram_examples, gram_seed) if needs else None, device=device)
    return AnchorRun(anchor, params, tuned, alpha_tuning.method_test(lab.cache, tuned, lab.base))


def scaled_anchor(lab: Lab, anchor: AnchorRun, s: float) -> protocol.Predictions:
    """Test predictions of the anchor at α*·s: the anchor given BMM's assembly scale s too."""
    return alpha_tuning.test_at(lab.cache, replace(anchor.tuned, alpha=float(anchor.alpha * s)), anchor.tuned.merge_fn,
                            lab.base)


def run_search(lab: Lab, anchor: AnchorRun, variant: str, *, strategy: str = "bayes", seed: int = 0,
               budget: Optional[int] = None, n_initial: Optional[int] = None, grid_size: int = 15,
               with_scale: bool = False, gram_examples: int = 256, gram_seed: int = 0, depth_bins: int = 0,
               device: str = "cpu", workers: int = 1, ray_address: str = ""):
    """One BMM search (``tune_bmm``) on the α*-tuned anchor, through the lab's trial cache, its log in the cache
    (``workers`` > 1: trials on Ray, proposed in batches; such a search has its own log). ``strategy``: one of
    ``nbmerge.tune.search.STRATEGIES`` (the grid takes ``grid_size`` values per axis and no budget)."""
    from .bmm import tune_bmm

    grams, beta = gram_source(anchor.name, variant)
    return tune_bmm(lab.zoo, anchor.name, anchor_params={**anchor.params, "scale": anchor.alpha}, grams=grams,
                    beta=beta, strategy=strategy, budget=None if strategy == "grid" else budget, seed=seed,
                    log_path="cache", depth_bins=depth_bins, with_scale=with_scale, gram_examples=gram_examples,
                    gram_seed=gram_seed, n_initial=n_initial, grid_sizes=grid_size, device=device, progress=False,
                    cache=lab.cache, memo=lab.memo, workers=workers, ray_address=ray_address or None)


def record_path(root: Path, kind: str, name) -> Path:
    """Where the sealed record named by ``name`` (any JSON-able value; its digest names the file) lives."""
    from ..codehash import digest

    return Path(root) / kind / f"{digest(name, 16)}.json"


def read_record(root: Optional[Path], kind: str, key, log: Optional[Callable] = None, *, name=None) -> tuple:
    """``(found, value)`` of the record kept for ``key`` under ``root`` (:func:`stored`): not found when it is
    missing, or when it fails its checksum or was written for another key (said through ``log`` and a warning:
    such a record is never used)."""
    from ..codehash import unseal

    if root is None:
        return False, None
    path = record_path(root, kind, key if name is None else name)
    if not path.exists():
        return False, None
    ok, value, why = unseal(path.read_text(errors="replace"), key)
    if ok:
        return True, value
    message = f"cached {kind} record {path.name} is not used: {why}; recomputing"
    if log is not None:
        log(message)
    warnings.warn(message, NbmergeWarning, stacklevel=3)
    return False, None


def write_record(root: Optional[Path], kind: str, key, value, *, name=None) -> None:
    """Keep ``value`` sealed with ``key`` under ``root`` (atomically; nothing without a root)."""
    from ..codehash import seal
    from ..engine.io import atomic_write_text

    if root is None:
        return
    path = record_path(root, kind, key if name is None else name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, seal(key, value))


def stored(root: Optional[Path], kind: str, key, compute: Callable[[], object], log: Optional[Callable] = None, *,
           name=None):
    """A small JSON-able result kept sealed under ``root`` (``<root>/<kind>/<digest of name>.json``; a trial cache's
    folder, ``cache.root``), so that a warm run reads it instead of recomputing (a noise estimate, a Gram alignment,
    an analysis of the checkpoints, ACE's merge timings). A record that fails its checksum or was written for
    another key is recomputed with a warning, never used. ``name`` (default: the key) names the file: a key that also
    holds what may go stale (the code's fingerprint) keeps one file per name, replaced when stale. ``root`` None (a
    memory-only cache) always computes. The value comes back as a warm run reads it (JSON: tuples as lists)."""
    import json

    found, value = read_record(root, kind, key, log, name=name)
    if found:
        return value
    value = compute()
    write_record(root, kind, key, value, name=name)
    return json.loads(json.dumps(value, default=str))
