"""The pareto notebook's setting: the posterior families, the claims' constants, the config, front names."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from ...device import resolve_device
from ...errors import NbmergeError
from ..common import check_config

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
    builds this from it), ``PREVIEW`` the tour's."""

    suite: str
    # 2 tasks: the 2-task subset; 3 tasks: the 3-task subset and the 2-task subset of its first two
    tasks: tuple
    device: str
    seed: int  # seeds the IVON runs, the squared-gradient sample, the val subset, bootstrap
    smoke: bool
    families: tuple
    components: int  # K IVON runs per task (the paper: 10 for ViT, 3 for RoBERTa)
    ivon_steps: int  # 0: the zoo's expert steps
    ivon_lr: float
    ivon_ess: float  # λ, shared by the tasks (λ = N kept the tiny encoder at chance)
    ivon_hess_init: float
    ivon_beta2: float
    prior_weight_decay: float  # δ: prior precision λδ around the base, for IVON and squared gradients
    sg_examples: int  # per-example gradients for the squared-gradient precision
    em_iterations: int  # "a few EM steps"
    em_tolerance: float  # ... stopping once no responsibility moves by more than this
    temperatures: tuple  # f: responsibility temperature τ = f·G, chosen on validation
    multitask_steps: int  # 0: the zoo's expert steps (then a vertex is the zoo's expert)
    multitask_divisions_2: int  # multitask α₁ ∈ {0, 1/2, 1} on the 2-task subset
    multitask_divisions_3: int  # multitask α on the 3-task simplex grid of step 1/2 ...
    multitask_centroid: bool  # ... plus (1/3, 1/3, 1/3)
    front_divisions_2: int  # fronts evaluated (test, whole split) at α₁ ∈ {0, 1/4, ..., 1} ∪ multitask α
    front_divisions_3: int  # ... and on the 3-task grid of this step ∪ multitask α
    timing_divisions_2: int  # P3: a front of d + 1 α merged and timed per family (0: the evaluated
    timing_divisions_3: int  # front's own merges, timed as they ran) ... and of (d+1)(d+2)/2 α on 3 tasks
    timing_repeats: int  # P3: median of this many interleaved timings of a per-α merge and a multitask step
    val_examples: int  # validation subset per task for every choice (0: the whole split)
    bootstrap: int  # paired bootstrap resamples over test examples
    cache: str  # zoo cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)

    def __post_init__(self):
        check_config(self)
        for name in ("tasks", "families", "temperatures"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise NbmergeError(f"unknown families {unknown}; valid: {', '.join(FAMILIES)}")
        if len(self.tasks) not in (2, 3) or len(set(self.tasks)) != len(self.tasks):
            raise NbmergeError(f"tasks must name 2 or 3 distinct tasks, got {list(self.tasks)}")
        for name in ("components", "timing_repeats", "em_iterations", "multitask_divisions_2", "multitask_divisions_3",
                     "front_divisions_2", "front_divisions_3", "bootstrap"):
            if getattr(self, name) < 1:
                raise NbmergeError(f"parameter {name!r} must be ≥ 1, got {getattr(self, name)}")
        if not self.temperatures or not all(isinstance(f, (int, float)) and f > 0 for f in self.temperatures):
            raise NbmergeError(f"temperatures must be positive factors, got {list(self.temperatures)}")
        if min(self.val_examples, self.timing_divisions_2, self.timing_divisions_3) < 0 or self.em_tolerance < 0:
            raise NbmergeError("val_examples, timing_divisions_2/3 and em_tolerance must be ≥ 0")
        object.__setattr__(self, "device", resolve_device(self.device))

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
