"""The pareto notebook's setting: the posterior families, the claims' constants, the config, front names."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from .. import rules
from ..rules import knob

# family → (label, what it is). The IVON families are nested (isotropic ⊂ diagonal ⊂ mixture) on the same runs.
FAMILIES = {
    "simple": ("simple (isotropic, IVON mean)", "α-weighted average of one IVON run's means"),
    "ivon_hess": ("IVON-Hess", "diagonal Gaussian: one IVON run's mean and precision"),
    "soup_ivon_hess": ("SoupIVON-Hess", "diagonal Gaussian from each task's K IVON runs collapsed into one"),
    "multi_ivon_hess": ("MultiIVON-Hess (MoG, EM)", "mixture of each task's K IVON runs, merged by EM"),
    "adamw_simple": ("simple (isotropic, AdamW experts)", "α-weighted average of the zoo's AdamW experts"),
    "adamw_sg_hess": ("AdamW-SG-Hess", "diagonal Gaussian: AdamW expert, squared-gradient precision"),
}
IVON_FAMILIES = ("simple", "ivon_hess", "soup_ivon_hess", "multi_ivon_hess")
NESTED = ("simple", "ivon_hess", "multi_ivon_hess")   # the theorem's Q1 ⊂ Q2 ⊂ Q3
PER_RUN = ("simple", "ivon_hess")                     # one front per IVON run k
MIXTURE, PLAIN = "multi_ivon_hess", "multi_ivon_hess_plain"
SOURCE_THEOREM = ("Variational merging, arXiv 2412.08147, abstract (theorem: a more flexible family gives a better "
                  "front)")
SOURCE_EXAMPLE = "Variational merging, arXiv 2412.08147, experiments (the quoted example; its table not verified)"
SOURCE_COST = "Variational merging, arXiv 2412.08147, abstract and experiments (cost of previews vs multitask)"
PAPER_EXAMPLE = (76.9, 87.2, 90.4)   # simple → mixture, against multitask fine-tuning (accuracy %)
PAPER_SHARE = 100 * (PAPER_EXAMPLE[1] - PAPER_EXAMPLE[0]) / (PAPER_EXAMPLE[2] - PAPER_EXAMPLE[0])  # 76% closed
MOST = 0.5                           # "closes most of the gap": the share closed must clear one half
SPEEDUP = 100.0                      # "seconds vs hours": a front ≥ 100× cheaper than as many multitask runs
PAPER_SPEEDUP = 17 * 60.0            # Gemma-2B: 17 hours of multitask training against about 1 minute of merging
REPORTED_ALPHAS = 101                # P3 speaks of a front of this many α (per-α cost × 101)
COLLAPSED_RESPONSIBILITY = 0.99      # a mixture whose every responsibility is ≥ this on one run is that run
MULTITASK_IVON = "multitask_ivon"    # the IVON multitask reference (same optimizer and steps as the posteriors)
LEVEL = 0.95


@dataclass(frozen=True)
class ParetoConfig:
    """Every knob of notebooks/30_pareto.ipynb; its parameters cell holds the defaults (``nbmerge.params.build_config``
    builds this from it), ``PREVIEW`` the tour's; the rules are written here, once (``rules.knob``)."""

    suite: str = knob(rules.SUITE)
    # 2 tasks: the 2-task subset; 3 tasks: the 3-task subset and the 2-task subset of its first two
    tasks: tuple = knob(rules.list_of(rules.task_of_suite, distinct=True, sizes=(2, 3)))
    device: str = knob(rules.DEVICE)
    # seeds the IVON runs, the squared-gradient sample, the val subset, bootstrap
    seed: int = knob(rules.SEED)
    smoke: bool = knob()
    families: tuple = knob(rules.list_of(rules.one_of("family", lambda: FAMILIES), distinct=True))
    # K IVON runs per task (the paper: 10 for ViT, 3 for RoBERTa)
    components: int = knob(rules.COUNT)
    # 0: the zoo's expert steps
    ivon_steps: int = knob(rules.COUNT_OR_ALL)
    ivon_lr: float = knob(rules.POSITIVE)
    # λ, shared by the tasks (λ = N kept the tiny encoder at chance)
    ivon_ess: float = knob(rules.POSITIVE)
    ivon_hess_init: float = knob(rules.POSITIVE)
    ivon_beta2: float = knob(rules.number(0.0, 1.0, high_open=True))
    # δ: prior precision λδ around the base, for IVON and squared gradients
    prior_weight_decay: float = knob(rules.number(0.0))
    # per-example gradients for the squared-gradient precision
    sg_examples: int = knob(rules.COUNT)
    # "a few EM steps"
    em_iterations: int = knob(rules.COUNT)
    # ... stopping once no responsibility moves by more than this
    em_tolerance: float = knob(rules.number(0.0))
    # f: responsibility temperature τ = f·G, chosen on validation
    temperatures: tuple = knob(rules.POSITIVES)
    # 0: the zoo's expert steps (then a vertex is the zoo's expert)
    multitask_steps: int = knob(rules.COUNT_OR_ALL)
    # multitask α₁ ∈ {0, 1/2, 1} on the 2-task subset
    multitask_divisions_2: int = knob(rules.COUNT)
    # multitask α on the 3-task simplex grid of step 1/2 ...
    multitask_divisions_3: int = knob(rules.COUNT)
    # ... plus (1/3, 1/3, 1/3)
    multitask_centroid: bool = knob()
    # fronts evaluated (test, whole split) at α₁ ∈ {0, 1/4, ..., 1} ∪ multitask α
    front_divisions_2: int = knob(rules.COUNT)
    # ... and on the 3-task grid of this step ∪ multitask α
    front_divisions_3: int = knob(rules.COUNT)
    # P3: a front of d + 1 α merged and timed per family (0: the evaluated front's own merges, timed as they ran)
    timing_divisions_2: int = knob(rules.COUNT_OR_ALL)
    # ... and of (d+1)(d+2)/2 α on 3 tasks
    timing_divisions_3: int = knob(rules.COUNT_OR_ALL)
    # P3: median of this many interleaved timings of a per-α merge and a multitask step
    timing_repeats: int = knob(rules.COUNT)
    # validation subset per task for every choice (0: the whole split)
    val_examples: int = knob(rules.COUNT_OR_ALL)
    # paired bootstrap resamples over test examples
    bootstrap: int = knob(rules.COUNT)
    # zoo cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)
    cache: str = knob(rules.CACHE)

    def __post_init__(self):
        rules.check(self)
        rules.normalise(self)

    def ivon(self):
        from ...pools.posteriors import IvonSettings

        return IvonSettings(steps=self.ivon_steps, lr=self.ivon_lr, ess=self.ivon_ess, hess_init=self.ivon_hess_init,
                            beta2=self.ivon_beta2, weight_decay=self.prior_weight_decay)

    def squared_gradients(self):
        from ...pools.posteriors import SquaredGradientSettings

        return SquaredGradientSettings(examples=self.sg_examples, ess=self.ivon_ess,
                                       weight_decay=self.prior_weight_decay)

    def multitask(self):
        from ...pools.posteriors import MultitaskSettings

        return MultitaskSettings(steps=self.multitask_steps)


# The tour's preview (``preview.tour_preview``) sets the subset, device, seed, families, K and IVON steps; these are
# the rest. The posterior recipe (ivon_*, prior_weight_decay) equals 30_pareto's defaults, so that the two share
# their cached IVON runs (a test checks it).
PREVIEW = dict(smoke=False, ivon_lr=0.2, ivon_ess=1e6, ivon_hess_init=0.01, ivon_beta2=0.99, prior_weight_decay=1e-4,
               sg_examples=256, em_iterations=20, em_tolerance=1e-3, temperatures=(0.3, 1.0, 3.0), multitask_steps=0,
               multitask_divisions_2=2, multitask_divisions_3=2, multitask_centroid=True, front_divisions_2=4,
               front_divisions_3=2, timing_divisions_2=0, timing_divisions_3=0, timing_repeats=5, val_examples=200, bootstrap=2000,
               cache="")


def as_dict(config: ParetoConfig) -> dict:
    return asdict(config)


# --------------------------------------------------------------------------------------------- fronts by name

def front_names(config: ParetoConfig) -> list[str]:
    """The fronts a subset evaluates: one simple and one IVON-Hess front per IVON run (``simple@k``), SoupIVON,
    the mixture at its validation-chosen temperature and at τ = 1 (``multi_ivon_hess_plain``), the AdamW ones."""
    names = []
    for family in config.families:
        if family in PER_RUN:
            names += [f"{family}@{k}" for k in range(config.components)]
        elif family == MIXTURE:
            names += [MIXTURE, PLAIN]
        else:
            names.append(family)
    return names


def family_of(name: str) -> tuple[str, Optional[int]]:
    if "@" in name:
        family, run = name.split("@")
        return family, int(run)
    return (MIXTURE if name == PLAIN else name), None


def label(name: str) -> str:
    if name == PLAIN:
        return "MultiIVON-Hess, τ = 1 (plain mixture)"
    if name == "multitask":
        return "multitask fine-tuning (AdamW, ground truth)"
    if name == MULTITASK_IVON:
        return "multitask fine-tuning (IVON, same steps as the posteriors)"
    family, run = family_of(name)
    text = FAMILIES[family][0] if family in FAMILIES else name
    return f"{text}, run {run}" if run is not None else text
