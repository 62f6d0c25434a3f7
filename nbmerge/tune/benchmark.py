"""BMM over several plug-in anchors on one suite, at several search seeds, each seed on its own validation subset.

Per search seed: the lab's validation subset drawn with that seed (:meth:`nbmerge.tune.study.Lab.at_seed`); every
anchor's α* tuned on it (:func:`nbmerge.tune.study.tune_anchor`); then, per variant (data Grams or task-vector
Grams), one BMM search whose prior mean is that tuned anchor (:func:`nbmerge.tune.study.run_search`, seeded with
the same seed). The run keeps each search's test predictions beside its anchor's (and, when the scale is searched,
the anchor's at α*·s*): the claims compare them over the seeds and the test examples at once
(``nbmerge.evaluate.verdicts.compare``), so the validation noise and the search's draw are both in the interval.

BMM's assembly scale s: with ``with_scale=False`` it is ablated (s = 1), BMM and its anchor share the anchor's α*,
and at ρ → ∞ BMM *is* the tuned anchor, so a gain cannot be re-scaling. With ``with_scale=True`` BMM is also
compared with the anchor at α*·s*, s* being the scale its own search chose (the anchor given BMM's scale too).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ..evaluate import protocol
from .study import AnchorRun, Lab, run_search, scaled_anchor, tune_anchor


@dataclass
class BMMRun:
    """One BMM search on one anchor at one seed: its test predictions, the anchor it started from (tuned on the same
    seed's validation subset) and, when the scale was searched, the anchor's predictions at α*·s*."""

    anchor: str
    variant: str
    seed: int
    tuning: object                    # bmm.BMMTuning
    anchor_run: AnchorRun             # the anchor at this seed's α*
    control: Optional[protocol.Predictions] = None   # the anchor at α*·s* (with_scale), else None
    scale: float = 1.0

    @property
    def test(self) -> protocol.Predictions:
        return self.tuning.test_predictions

    def comparators(self) -> dict:
        """label → the comparator's test predictions: the anchor at α* (and at α*·s* when the scale was searched)."""
        out = {"α*": self.anchor_run.test}
        if self.control is not None:
            out["α*·s*"] = self.control
        return out


@dataclass
class SuiteResult:
    suite: str
    tasks: list
    expert: dict                      # each expert's test accuracy on its own task (normalizes accuracy)
    anchors: dict = field(default_factory=dict)      # name → {seed: AnchorRun}
    runs: list = field(default_factory=list)         # BMMRun, in (anchor, seed, variant) order
    with_scale: bool = False
    evaluations: int = 0                              # trial-cache misses: 0 on a rerun with warm caches

    def runs_of(self, anchor: str, variant: str) -> list[BMMRun]:
        return [r for r in self.runs if r.anchor == anchor and r.variant == variant]

    def anchor_at(self, anchor: str, seed: Optional[int] = None) -> AnchorRun:
        """The anchor tuned at ``seed``'s validation subset (the first seed's when None)."""
        per_seed = self.anchors[anchor]
        return per_seed[next(iter(per_seed)) if seed is None else seed]

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(x.variant for x in self.runs))

    @property
    def seeds(self) -> list[int]:
        return list(dict.fromkeys(x.seed for x in self.runs))


def bmm_over_anchors(lab: Lab, anchors: Sequence[str], variants: Sequence[str], seeds: Sequence[int], *,
                     budget: int, n_initial: Optional[int], with_scale: bool, wudi_steps: int, gram_examples: int,
                     gram_seed: int, depth_bins: int, device: str = "cpu", log: Callable = print) -> SuiteResult:
    """Per seed: the validation subset of that seed, every anchor tuned on it, then BMM on each anchor per variant
    (``budget`` trials of Bayesian optimisation, seeded with the seed)."""
    start = time.perf_counter()
    result = SuiteResult(lab.suite, list(lab.zoo.tasks), lab.expert, with_scale=with_scale)
    evaluations = 0
    for name in anchors:
        result.anchors[name] = {}
        for seed in seeds:
            slab = lab.at_seed(seed)
            misses = slab.cache.misses
            anchor = result.anchors[name][seed] = tune_anchor(slab, name, wudi_steps=wudi_steps,
                                                              gram_examples=gram_examples, gram_seed=gram_seed,
                                                              device=device)
            log(f"{lab.suite:>7} {name:<16} seed {seed}: α* = {anchor.alpha:g}, test {anchor.test.mean_accuracy():.4f}")
            for variant in variants:
                tuning = run_search(slab, anchor, variant, seed=seed, budget=budget, n_initial=n_initial,
                                    with_scale=with_scale, gram_examples=gram_examples, gram_seed=gram_seed,
                                    depth_bins=depth_bins, device=device)
                control = scaled_anchor(slab, anchor, tuning.scale) if with_scale else None
                run = BMMRun(name, variant, seed, tuning, anchor, control, tuning.scale)
                result.runs.append(run)
                log(f"{'':>7}   BMM-{variant} seed {seed}: test {run.test.mean_accuracy():.4f} (anchor "
                    f"{anchor.test.mean_accuracy():.4f}" + (f", at α*·s* {control.mean_accuracy():.4f}" if control
                                                             is not None else "") + ")"
                    + (f" ({tuning.search.replayed} trials from the log)" if tuning.search.replayed else ""))
            evaluations += slab.cache.misses - misses
            lab.release()
    result.evaluations = evaluations
    log(f"{lab.suite}: {time.perf_counter() - start:.0f} s ({evaluations} evaluations, the rest from the caches)")
    return result
