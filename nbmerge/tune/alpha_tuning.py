"""The global coefficient α of every merge, chosen the same way for every method: on one grid
(:data:`SCALE_GRID`), by mean accuracy on the same seeded validation subset, through the trial cache; test data
never chooses anything. θ_α is linear in α, so a method is merged once (α = 1) and every grid point is
θ₀ + α·(θ₁ − θ₀) (:func:`scaled`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

import torch

from ..errors import NbmergeError
from ..evaluate.protocol import Predictions
from ..evaluate.trialcache import TrialCache

# α grid of every method's global coefficient (0 is the base). Wide enough for this zoo's optima (TIES and TSV-M
# near 1.5, ISO-CTS near 4 on MiniLM) and for CLIP's (TA ≈ 0.3).
SCALE_GRID = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0, 5.6)


# ------------------------------------------------------------------------------------------ α on validation

def scaled(base: Mapping[str, torch.Tensor], merged: Mapping[str, torch.Tensor], alpha: float,
           out: Optional[dict] = None) -> dict:
    """θ₀ + α·(θ₁ − θ₀) for a merge θ₁ made at α = 1 (computed in float32, float64 for float64 tensors, and cast
    back to each tensor's dtype). A task-aware merge (one model per task) is scaled model by model."""
    from ..engine.taskaware import TaskModels, is_task_aware

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
    from ..engine.merging import merge
    from ..engine.walker import WalkOptions

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
