"""BMM on an anchor tuned like every other method: one suite's trial cache, its anchors, their searches.

The protocol the BMM studies follow (``tune_bmm`` does the search; this module sets it up the same way for every
study, so their trial-cache entries and search logs are shared):

* :func:`open_lab`: the suite's zoo, its trial cache (the seeded validation subset every notebook tunes on), its
  models, and the memo ``tune_bmm`` shares between searches (models, Grams, anchor merges, factorised solvers).
* :func:`tune_anchor`: the anchor's global coefficient α chosen on the validation subset over
  ``protocol.SCALE_GRID`` (``protocol.tune_method``, the recipe the ACE notebook and the tour use), with its test
  predictions at that α.
* :func:`run_search`: one seeded BMM search whose prior mean is that α*-tuned anchor; its log lives under the
  trial cache, named by the search's identity, so a warm rerun replays it and evaluates nothing.

Variants: ``data`` = data-assisted (each expert's input Grams on ``gram_examples`` training examples of its own
task); ``free`` = data-free (task-vector Grams τ_tᵀτ_t). An anchor that itself needs data Grams (RegMean) keeps them
in the data-free variant, so only BMM's likelihood is data-free there: it runs as ``grams="hybrid"`` with β = 0,
which is the task-vector Gram exactly (the normalised λ cancels the rescaling).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from .. import protocol
from ..errors import NbmergeError
from ..methods import get_method

VARIANTS = ("data", "free")
VARIANT_NAMES = {"data": "data-assisted", "free": "data-free"}


def check_anchor(anchor: str) -> None:
    """An anchor must be a registered method other than BMM itself."""
    if anchor == "bmm":
        raise NbmergeError("the anchor cannot be bmm itself")
    get_method(anchor)  # raises with the list of registered methods


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
    """One suite, opened: its trial cache (validation subset), models, test accuracies of the experts, and the memo
    ``tune_bmm`` shares between searches (models, Grams, anchor merges, solvers)."""

    zoo: object
    cache: protocol.TrialCache
    base: dict
    experts: list
    expert: dict
    memo: dict = field(default_factory=dict, repr=False)
    cache_dir: str = ""
    device: str = "cpu"
    val_examples: int = 100
    val_seed: int = 0

    @property
    def suite(self) -> str:
        return self.zoo.manifest.get("suite") or self.zoo.root.name

    def at_seed(self, seed: int) -> "Lab":
        """The same suite with the validation subset drawn with ``seed`` (its own trial cache view; the models and
        the memo of Grams, anchor merges and solvers, which do not depend on the subset, are shared). Each search
        seed tunes on its own subset, so the validation noise is part of the spread over seeds."""
        if seed == self.val_seed:
            return self
        trials = protocol.trial_cache(self.zoo, self.device, self.cache_dir, self.val_examples, seed)
        return replace(self, cache=trials, val_seed=seed)

    def release(self, keep_anchors: bool = True) -> None:
        """Free the factorised solvers (and the anchor merges unless ``keep_anchors``): one (anchor, variant) at a
        time is enough in memory."""
        for key in [k for k in self.memo if k[0] == "solver" or (k[0] == "anchor" and not keep_anchors)]:
            del self.memo[key]


def open_lab(suite: str, *, cache: str = "", device: str = "cpu", val_examples: int = 100, seed: int = 0) -> Lab:
    """The suite's zoo (built first if it is a missing embedded suite), its trial cache with the seeded validation
    subset (``val_examples`` per task, 0: the whole split), and its models."""
    from ..pools.zoo import open_zoo
    from .bmm import shared_models

    zoo = open_zoo(suite, cache)
    trials = protocol.trial_cache(zoo, device, cache, val_examples, seed)
    memo: dict = {}
    base, experts = shared_models(memo, zoo)
    return Lab(zoo, trials, base, experts, dict(zoo.manifest["expert_accuracy"]["test"]), memo, cache, device,
               val_examples, seed)


@dataclass
class AnchorRun:
    """A plug-in anchor with its α chosen on the validation subset (the same grid as every method) and its test
    predictions at that α."""

    name: str
    params: dict          # the anchor's own parameters (no α)
    tuned: protocol.Tuned
    test: protocol.Predictions

    @property
    def alpha(self) -> float:
        return self.tuned.alpha

    @property
    def val_accuracy(self) -> float:
        return next(r["val_accuracy"] for r in self.tuned.curve if r["alpha"] == self.tuned.alpha)


def tune_anchor(lab: Lab, anchor: str, *, wudi_steps: int = 300, gram_examples: int = 256, gram_seed: int = 0,
                device: str = "cpu") -> AnchorRun:
    """``anchor``'s α* on the lab's validation subset over ``protocol.SCALE_GRID``, and its test predictions there."""
    from .bmm import shared_grams

    params = anchor_params(anchor, wudi_steps)
    needs = anchor_needs_grams(anchor)
    tuned = protocol.tune_method(
        lab.cache, anchor, lab.base, lab.experts, params,
        grams=(lambda: shared_grams(lab.memo, lab.zoo, gram_examples, gram_seed)) if needs else None,
        grams_name=protocol.gram_name(gram_examples, gram_seed) if needs else None, device=device)
    return AnchorRun(anchor, params, tuned, protocol.method_test(lab.cache, tuned, lab.base))


def scaled_anchor(lab: Lab, anchor: AnchorRun, s: float) -> protocol.Predictions:
    """Test predictions of the anchor at α*·s: the anchor given BMM's assembly scale s too."""
    return protocol.test_at(lab.cache, replace(anchor.tuned, alpha=float(anchor.alpha * s)), anchor.tuned.merge_fn,
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
