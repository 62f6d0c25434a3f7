"""BMM over several plug-in anchors on one suite, each search compared with its anchor by a paired interval.

For every anchor: α* on the validation subset (:func:`nbmerge.tune.anchors.tune_anchor`); then, per variant (data
Grams or task-vector Grams) and search seed, one BMM search whose prior mean is that tuned anchor
(:func:`nbmerge.tune.anchors.run_search`); its best point's test predictions are compared with the anchor's by
``protocol.beats`` (the paired bootstrap of normalized test accuracy) and by the relative gain
(BMM − anchor)/anchor with its paired interval (``protocol.relative_gain_interval``).

BMM's assembly scale s: with ``with_scale=False`` it is ablated (s = 1), BMM and its anchor share the anchor's α*,
and at ρ → ∞ BMM *is* the tuned anchor, so a gain cannot be re-scaling. With ``with_scale=True`` BMM is also
compared with the anchor at α*·s*, s* being the scale its own search chose (the anchor given BMM's scale too).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from .. import protocol
from .anchors import AnchorRun, Lab, run_search, scaled_anchor, tune_anchor


@dataclass
class BMMRun:
    """One BMM search on one anchor: its test predictions and its comparisons with the anchor."""

    anchor: str
    variant: str
    seed: int
    tuning: object                    # bmm.BMMTuning
    decisions: dict                   # comparator name → protocol.beats(BMM, comparator)
    relative: dict                    # relative gain over the α*-tuned anchor, with its interval (fractions)

    @property
    def test(self) -> protocol.Predictions:
        return self.tuning.test_predictions


@dataclass
class SuiteResult:
    suite: str
    tasks: list
    expert: dict                      # each expert's test accuracy on its own task (normalizes accuracy)
    anchors: dict = field(default_factory=dict)      # name → AnchorRun
    runs: list = field(default_factory=list)         # BMMRun, in (anchor, variant, seed) order
    with_scale: bool = False
    evaluations: int = 0                              # trial-cache misses: 0 on a rerun with warm caches

    def runs_of(self, anchor: str, variant: str) -> list[BMMRun]:
        return [r for r in self.runs if r.anchor == anchor and r.variant == variant]


def compare_with_anchor(bmm: protocol.Predictions, anchor: AnchorRun, expert: dict,
                        control: Optional[protocol.Predictions] = None, s: float = 1.0) -> dict:
    """BMM against the α*-tuned anchor (and, with ``control``, against the anchor at α*·s)."""
    out = {"anchor": protocol.beats(bmm, anchor.test, expert, names=("BMM", f"{anchor.name} (α*={anchor.alpha:g})"))}
    if control is not None:
        out["anchor·s"] = protocol.beats(bmm, control, expert,
                                         names=("BMM", f"{anchor.name} (α*·s = {anchor.alpha * s:.3g})"))
    return out


def bmm_over_anchors(lab: Lab, anchors: Sequence[str], variants: Sequence[str], seeds: Sequence[int], *,
                     budget: int, n_initial: Optional[int], with_scale: bool, wudi_steps: int, gram_examples: int,
                     gram_seed: int, depth_bins: int, device: str = "cpu", log: Callable = print) -> SuiteResult:
    """Every anchor tuned on the lab's validation subset, then BMM on it per variant and search seed (``budget``
    trials of Bayesian optimisation each), each compared with its anchor by a paired interval."""
    start = time.perf_counter()
    result = SuiteResult(lab.suite, list(lab.zoo.tasks), lab.expert, with_scale=with_scale)
    for name in anchors:
        anchor = result.anchors[name] = tune_anchor(lab, name, wudi_steps=wudi_steps, gram_examples=gram_examples,
                                                    gram_seed=gram_seed, device=device)
        log(f"{lab.suite:>7} {name:<16} α* = {anchor.alpha:g}: test {anchor.test.mean_accuracy():.4f}")
        for variant in variants:
            for seed in seeds:
                tuning = run_search(lab, anchor, variant, seed=seed, budget=budget, n_initial=n_initial,
                                    with_scale=with_scale, gram_examples=gram_examples, gram_seed=gram_seed,
                                    depth_bins=depth_bins, device=device)
                control = scaled_anchor(lab, anchor, tuning.scale) if with_scale else None
                bmm = tuning.test_predictions
                entry = BMMRun(name, variant, seed, tuning,
                               compare_with_anchor(bmm, anchor, lab.expert, control, tuning.scale),
                               protocol.relative_gain_interval(bmm, anchor.test))
                result.runs.append(entry)
                log(f"{'':>7}   BMM-{variant} seed {seed}: test {bmm.mean_accuracy():.4f}, "
                    + "; ".join(d["evidence"] for d in entry.decisions.values())
                    + (f" ({tuning.search.replayed} trials from the log)" if tuning.search.replayed else ""))
            lab.release()
    result.evaluations = lab.cache.misses
    log(f"{lab.suite}: {time.perf_counter() - start:.0f} s (trial cache: {lab.cache.hits} hits, "
        f"{lab.cache.misses} evaluations)")
    return result
