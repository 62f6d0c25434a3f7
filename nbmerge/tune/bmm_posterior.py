"""Sampling a tuned BMM's Gaussian posterior, through the trial cache.

BMM is a Bayesian linear regression per module: besides its posterior mean U* (the merge every other study
evaluates), each row of U has the posterior N(U*_row, σ²(XXᵀ + λI)⁻¹). Here:

* :func:`posterior_noise`: σ̂² = ‖Y − U*X‖²/(N·d_out) per module at the tuned point, N the tokens behind the data
  Grams (:func:`gram_tokens`); the *posterior temperature* τ widens it, σ² = τ·σ̂² (τ = 1: the textbook posterior).
* :func:`posterior_draws`: S draws at τ, each seeded by (seed, index) alone (:func:`draw_generator`), so the same
  standard-normal draws are scaled at every τ and a draw's predictions are cached by its :func:`draw_recipe`.
* :func:`ensemble`: the sampled predictive, the draws' probabilities averaged.
* :func:`sweep_row` and :func:`select_temperature`: τ chosen on validation by the ensemble's NLL after its own
  logit temperature scaling, among the τ whose accuracy stays within a margin of the point estimate's (the grid
  should reach down to τ where the draws barely move the point estimate, so that some τ is eligible).

The sampler itself is ``nbmerge.solvers.bmm.BMMSolver.sampled``.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence, Union

import numpy as np
import torch

from ..evaluate import trialcache
from ..evaluate.calibration import fit_temperature, rescaled
from ..errors import NbmergeError
from ..evaluate.protocol import Predictions
from .bmm import BMMTuning
from .study import stored

Noise = Union[Mapping[str, float], Callable[[], Mapping[str, float]]]


def gram_tokens(zoo, gram_examples: int, seed: int = 0) -> int:
    """N behind the zoo's sum Grams (``expert_grams``): the tokens of the examples ``collect_grams`` records with
    ``seed``, over the tasks (images: examples × tokens per image; texts: their unpadded tokens)."""
    from ..pools.zoo import gram_sample

    return sum(zoo.arch.tokens(zoo.arrays[t]["train_x"][gram_sample(zoo, t, gram_examples, seed)])
               for t in zoo.tasks)


def posterior_noise(cache: trialcache.TrialCache, zoo, tuning: BMMTuning) -> dict[str, float]:
    """σ̂² per linear module at the tuned point (the τ = 1 noise): the residual variance per token and output,
    N = the tokens behind the data Grams. Kept beside the trial cache (it needs the solver)."""
    gram_examples, gram_seed = tuning.settings["gram_examples"], tuning.settings["gram_seed"]

    def compute():
        tokens = gram_tokens(zoo, gram_examples, gram_seed)
        return tuning.build_solver().noise_variance(tuning.lambdas, tokens=tokens)

    return stored(cache.root, "bmm-noise", {"point": tuning.recipe, "noise": "residual per token"}, compute,
                  cache.log)


def draw_generator(seed: int, index: int) -> torch.Generator:
    """The CPU generator of posterior draw ``index`` under ``seed``: each draw has its own stream, so a draw is
    cached by (seed, index) alone, and the same standard-normal draws are scaled at every posterior temperature."""
    state = np.random.SeedSequence([int(seed), int(index)]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator(device="cpu").manual_seed(int(state) & ((1 << 63) - 1))


def draw_recipe(point_recipe: dict, temperature: float, seed: int, index: int) -> dict:
    """The trial-cache recipe of one posterior draw: the point estimate's recipe, σ² = τ·σ̂², the draw's seed/index."""
    return {"method": "bmm_posterior_draw", "point": point_recipe, "sigma2": "temperature x residual variance",
            "temperature": float(temperature), "seed": int(seed), "draw": int(index)}


def posterior_draws(cache: trialcache.TrialCache, tuning, noise: Noise, temperature: float, samples: int, seed: int,
                    split: str) -> list[Predictions]:
    """Predictions of ``samples`` posterior draws around ``tuning``'s point estimate at posterior temperature τ,
    each through the trial cache. ``noise``: σ̂² per module, or a function returning it (then it and the solver are
    only touched on a miss)."""
    if samples < 1:
        raise NbmergeError(f"samples must be >= 1, got {samples}")
    if not (math.isfinite(temperature) and temperature >= 0):
        raise NbmergeError(f"temperature must be a finite number >= 0, got {temperature!r}")

    def state(index: int):
        sigma2 = noise() if callable(noise) else noise
        variances = {key: temperature * value for key, value in sigma2.items()}
        return tuning.build_solver().sampled(dict(tuning.lambdas), variances, draw_generator(seed, index),
                                             tuning.scale)

    return [cache.predictions(draw_recipe(tuning.recipe, temperature, seed, i), split, lambda i=i: state(i))
            for i in range(samples)]


def ensemble(draws: Sequence[Predictions]) -> Predictions:
    """The sampled predictive: probabilities averaged over the draws, stored as logits log p̄ (softmax(log p̄) = p̄),
    averaged in log space so a confident miss does not underflow. ``extra["members"]``: each draw's mean accuracy."""
    if not draws:
        raise NbmergeError("ensemble: no draws")
    logits = {}
    for task in draws[0].tasks:
        stacked = torch.stack([torch.log_softmax(torch.from_numpy(d.logits[task]).double(), -1) for d in draws])
        logits[task] = (torch.logsumexp(stacked, 0) - math.log(len(draws))).float().numpy()
    return Predictions(logits, dict(draws[0].labels), draws[0].split,
                       extra={"members": [d.mean_accuracy() for d in draws], "samples": len(draws)})


def sweep_row(temperature: float, draws: Sequence[Predictions], point_val: Predictions, margin: float) -> dict:
    """One posterior temperature on validation: the ensemble's accuracy, its members' mean, NLL and ECE at T = 1 and
    after its own temperature scaling (fitted on these same examples), and whether its accuracy is eligible (at most
    ``margin`` points below the point estimate's mean accuracy)."""
    sampled = ensemble(draws)
    temps = fit_temperature(sampled)
    raw, scaled = sampled.summary(), rescaled(sampled, temps).summary()
    return {"temperature": temperature, "accuracy": raw["accuracy"],
            "member_accuracy": float(np.mean(sampled.extra["members"])), "nll": raw["nll"], "ece": raw["ece"],
            "nll_scaled": scaled["nll"], "ece_scaled": scaled["ece"],
            "eligible": raw["accuracy"] >= point_val.mean_accuracy() - margin / 100}


def select_temperature(rows: Sequence[dict]) -> dict:
    """The validation row with the lowest NLL after temperature scaling among the eligible ones (accuracy within
    the margin of the point estimate's). Adds ``eligible_count``; when it is 0 (a sweep that left no eligible
    setting) the row is the lowest-NLL one among all, for display only: a claim on it is not tested."""
    if not rows:
        raise NbmergeError("select_temperature: no posterior temperature was evaluated")
    eligible = [r for r in rows if r["eligible"]]
    best = min(eligible or rows, key=lambda r: (r["nll_scaled"], r["temperature"]))
    return {**best, "eligible_count": len(eligible)}
