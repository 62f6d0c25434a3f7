"""BMM tuned under the comparison protocol, on a zoo's shared trial cache (what the BMM studies do before they
compare anything).

* :func:`open_trials`: the zoo and its trial cache, whose ``val`` split is the seeded validation subset every
  notebook tunes on.
* :func:`tune_anchor`: an anchor's α chosen on that subset over ``protocol.SCALE_GRID`` (``protocol.tune_method``,
  the canonical recipe, so its cache entries are shared with every notebook).
* :func:`search_bmm`: ``tune_bmm`` with the anchor at that α, the search seeded, its resumable log under the trial
  cache (:func:`search_log`), so a second run replays it and recomputes nothing.
* :func:`stored`: a small JSON-able result (σ̂², a Gram alignment) kept beside the trial cache.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Callable, Mapping, Optional

from .. import protocol
from ..errors import NbmergeError, NbmergeWarning
from ..io import atomic_write_text
from ..methods import get_method
from ..pools.zoo import expert_grams, load_models
from .bmm import BMMTuning, tune_bmm


def check_search_settings(config) -> None:
    """The settings every BMM study shares (``budget``, ``gram_examples``, ``val_examples``, ``seeds``), checked
    on a config object; the error names the bad parameter and its value."""
    if config.budget < 1:
        raise NbmergeError(f"parameter 'budget' must be >= 1, got {config.budget}")
    if config.gram_examples < 1:
        raise NbmergeError(f"parameter 'gram_examples' must be >= 1, got {config.gram_examples}")
    if config.val_examples < 0:
        raise NbmergeError(f"parameter 'val_examples' must be >= 0 (0: the whole split), got {config.val_examples}")
    if not config.seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in config.seeds) \
            or len(set(config.seeds)) != len(config.seeds):
        raise NbmergeError(f"parameter 'seeds' must be distinct integers, got {list(config.seeds)}")


def open_trials(config, log: Callable = lambda *_: None):
    """The zoo of ``config.suite`` (built first if it is an embedded suite that is missing) and its shared trial
    cache, whose ``val`` split is the seeded validation subset (``val_examples`` per task, ``seed``)."""
    from ..pools.zoo import open_zoo

    zoo = open_zoo(config.suite, config.cache)
    return zoo, protocol.trial_cache(zoo, config.device, config.cache, config.val_examples, config.seed, log=log)


def tune_anchor(cache: protocol.TrialCache, zoo, anchor: str, *, gram_examples: int = 256, seed: int = 0,
                device: str = "cpu") -> protocol.Tuned:
    """The anchor's α chosen on the validation subset over ``protocol.SCALE_GRID``, under the canonical recipe (the
    same cache entries as the tour's and the ACE/BMM notebooks'). Data Grams only for an anchor that needs them."""
    base, experts = load_models(zoo)
    data = "grams" in get_method(anchor).needs
    return protocol.tune_method(cache, anchor, base, experts, {},
                                grams=(lambda: expert_grams(zoo, gram_examples, seed)) if data else None,
                                grams_name=protocol.gram_name(gram_examples, seed) if data else None, device=device)


def suite_name(zoo) -> str:
    return zoo.manifest.get("suite") or zoo.root.name


def expert_accuracy(zoo) -> dict[str, float]:
    """Each expert's test accuracy on its own task (the denominators of normalized accuracy)."""
    return {t: zoo.manifest["expert_accuracy"]["test"][t] for t in zoo.tasks}


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:10]


def search_log(cache: protocol.TrialCache, anchor: str, gram: str, seed: int, identity: Mapping) -> Optional[Path]:
    """The resumable trial log of one search, under the trial cache's folder (``<cache>/trials/<suite>-<zoo>/logs``,
    never the notebook's run folder): named by what the log's identity checks, so another budget, α, subset or
    Gram sample starts a new log instead of being refused by the old one. ``None`` for a memory-only cache."""
    if cache.root is None:
        return None
    path = cache.root / "logs" / f"bmm-{anchor}-{gram}-seed{seed}-{_digest(dict(identity))}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def search_bmm(zoo, cache: protocol.TrialCache, anchor: str, alpha: float, gram: str, *, seed: int,
               strategy: str = "bayes", budget: int = 8, gram_examples: int = 256, gram_seed: int = 0,
               device: str = "cpu", memo: Optional[dict] = None) -> BMMTuning:
    """``tune_bmm`` under the protocol: the anchor at its validation-chosen α, the search on the cache's validation
    subset with ``seed``, the data Grams (``gram="data"``; ``"task_vector"``: the data-free proxy) sampled with
    ``gram_seed``, its log under the cache. ``memo``: shared by the searches of one study, so the models, Grams,
    anchor and factorised solver are built once."""
    anchor_params = {"scale": float(alpha)}
    identity = {"anchor_params": anchor_params, "strategy": strategy, "budget": budget, "gram_seed": gram_seed,
                "gram_examples": gram_examples if gram != "task_vector" else None,
                "val": cache.evaluator.subset_spec("val")}
    return tune_bmm(zoo, anchor, anchor_params=anchor_params, grams=gram, strategy=strategy, budget=budget,
                    seed=seed, gram_seed=gram_seed, gram_examples=gram_examples, device=device, progress=False,
                    log_path=search_log(cache, anchor, gram, seed, identity), cache=cache, memo=memo)


def stored(cache: protocol.TrialCache, kind: str, key, compute: Callable[[], object]):
    """A small JSON-able result kept beside the trial cache (``<root>/<kind>/<hash of key>.json``), so that a warm
    run reads it instead of recomputing (Grams, factorisations). Memory-only caches always compute."""
    if cache.root is None:
        return compute()
    from ..codehash import seal, unseal

    path = cache.root / kind / f"{_digest(key)}.json"
    if path.exists():
        ok, value, why = unseal(path.read_text(errors="replace"), key)
        if ok:
            return value
        message = f"cached {kind} record {path.name} is not used: {why}; recomputing"
        cache.log(message)
        warnings.warn(message, NbmergeWarning, stacklevel=2)
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, seal(key, value))
    return value
