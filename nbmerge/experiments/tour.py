"""The steps of ``notebooks/00_tour.ipynb``: its config, the classic merges tuned alike, BMM on an anchor, the
Pareto preview, and what metrics.json keeps.

The measurements of the checkpoints (task-vector geometry, interference) are library code in
:mod:`nbmerge.evaluate.interference`; the tour's figures are in :mod:`.tour_figures`, its claims in :mod:`.tour_claims`.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..evaluate import verdicts
from ..evaluate.trialcache import TrialCache
from ..tune import alpha_tuning
from ..errors import NbmergeError
from ..engine.merging import merge
from ..methods import get_method
from ..evaluate.metrics import normalized_mean
from ..pools.sequential import grams_of_kind
from ..tune import study
from ..tune.study import Lab
from ..engine.walker import WalkOptions
from ..engine.taskaware import shown
from .analyses import cached  # noqa: F401 (the notebook's `tour.cached`)
from . import rules
from .rules import knob

# What each classic method fixes, in one line (shown in the comparison table and the notebook).
EXPLAINS = {
    "task_arithmetic": "adds the task vectors, scaled by one coefficient α",
    "ties": "trims small entries, elects one sign per entry, averages only the agreeing ones",
    "consensus": "task arithmetic kept only where at least two tasks' TALL masks claim the weight",
    "tsv": "keeps each task's top singular directions and whitens them so tasks stop overlapping",
    "cart": "the mean task vector plus each task's low-rank deviation from it",
    "pcb": "weights each entry by how much its own task and the others need it, keeps the top 5% per task",
    "localize_stitch": "keeps each task's largest 10% of task-vector entries, shares the overlaps equally",
    "emr": "one unified task vector, with a mask and a rescaler per task (task t runs its own model)",
    "tsv_c": "each task's own top singular directions (task t runs its own model)",
    "iso_cts": "flattens the spectrum of the common subspace, adds task-specific directions",
    "regmean": "solves for the weights that reproduce every expert's outputs on its inputs (needs Grams)",
    "regmean_plusplus": "RegMean, block by block, on the inputs the merged earlier blocks produce (needs data)",
    "ace": "RegMean's closed form with each task's input covariance estimated from its own task vector (no data)",
    "bmm": "a Bayesian regression of each layer, with an anchor merge as the prior mean",
    "adamerging": "a coefficient per task and layer, learned by lowering the entropy of the predictions on unlabeled "
                  "validation inputs (needs data)",
    "localize_stitch_learned": "Localize-and-Stitch with each task's mask learned on labeled validation examples, "
                               "overlaps shared equally (needs data)",
}
# Tour names that are a registered method trained in the tour rather than a recipe of its own: Localize-and-Stitch
# with masks learned per validation seed (the registered name alone is its dataless variant).
VARIANTS = {"localize_stitch_learned": "localize_stitch"}
# Each method's parameters in the tour: its paper's defaults, except ACE at the paper's ViT ε = 1e-5 (the official
# code's default is 1e-2), so that "ace" is one configuration under one name in every notebook (10_ace.ipynb's
# headline ACE; the trial cache shares its entries).
PARAMS = {"ace": {"eps": 1e-5}}
REFERENCE = "task_arithmetic"   # every claim of the tour compares a method with task arithmetic
GRAM_SOURCES = ("data", "task_vector")
GRAM_LABELS = {"data": "data-assisted", "task_vector": "data-free"}
DATA_GRAMS = ("data", "hybrid")   # BMM's `gram` sources that read data Grams
BMM_LOG10_RHO = -1.0            # the registered bmm's default prior strength (23_bmm_search.ipynb tunes it)


def _tour_method(value, params):
    """A registered method a notebook can run, or one of the tour's trained variants (``VARIANTS``)."""
    return rules.one_of("method", lambda: rules.method_names() + list(VARIANTS))(value, params)


def _bmm_anchor(value, params):
    """With BMM in the tour (``bmm_grams``), its anchor must be data-free, or data-free BMM would use data."""
    return rules.DATA_FREE_ANCHOR(value, params) if params.get("bmm_grams") else rules.ANCHOR(value, params)


@dataclass(frozen=True)
class TourConfig:
    """The tour's knobs; their defaults are written once, in the notebook's parameters cell (build the config with
    ``nbmerge.params.build_config`` or ``notebook_config``), their rules once, here (``rules.knob``)."""

    suite: str = knob(rules.SUITE)
    device: str = knob(rules.DEVICE)
    seed: int = knob(rules.SEED)  # seeds the Gram sample (and the trial cache's first validation subset)
    seeds: tuple = knob(rules.SEEDS)  # validation subsets, one α choice each (0: the whole split, then one seed)
    methods: tuple = knob(rules.list_of(_tour_method, distinct=True))
    adamerging_steps: int = knob(rules.COUNT)  # AdaMerging's Adam steps on the unlabeled validation inputs
    val_examples: int = knob(rules.COUNT_OR_ALL)  # validation examples per task choosing α (0: the whole split)
    gram_examples: int = knob(rules.COUNT)  # training examples per task forming RegMean's (and BMM's) Grams
    top_fraction: float = knob(rules.UNIT_FRACTION)  # share of singular directions in the subspace-overlap figure
    bmm_anchor: str = knob(_bmm_anchor)  # the BMM section's anchor (prior mean), a data-free method
    # BMM with data Grams and/or data-free (task-vector Grams)
    bmm_grams: tuple = knob(rules.list_of(rules.one_of("Gram source", lambda: GRAM_SOURCES), False, distinct=True))
    pareto_preview: bool = knob()  # train IVON posteriors for the Pareto preview (off: a pointer to 30_pareto.ipynb)
    # the preview's two tasks (empty: the zoo's first two)
    pareto_tasks: tuple = knob(rules.list_of(rules.task_of_suite, non_empty=False, distinct=True, sizes=(0, 2)))
    pareto_components: int = knob(rules.COUNT)  # IVON runs per task in the Pareto preview (MultiIVON components)
    pareto_ivon_steps: int = knob(rules.COUNT_OR_ALL)  # IVON steps per run (0: the zoo's expert steps)
    pareto_divisions: int = knob(rules.COUNT)  # α grid of the 2-task preview: α₁ ∈ {0, 1/n, ..., 1}
    cache: str = knob(rules.CACHE)  # zoo cache folder; "" means $NBMERGE_CACHE or ~/.cache/nbmerge

    def __post_init__(self):
        rules.check(self)
        rules.normalise(self)


# ------------------------------------------------------------------------------------- the merges, tuned alike

BASE_RECIPE = {"method": "base", "params": {}, "grams": None, "experts": "zoo", "scale": 0.0}


def open_lab(config: TourConfig) -> Lab:
    """The suite opened by the study layer: zoo, models and the shared trial cache, its validation split cut to the
    first seed's subset (each α choice switches to its own seed's, :func:`seeded_validation`)."""
    return study.open_lab(config.suite, cache=config.cache, device=config.device, val_examples=config.val_examples,
                          seed=validation_seeds(config)[0])


def gram_source(zoo, config: TourConfig):
    """Data Grams as a function collected on first call only: a run whose merges are all cached needs none.
    ``grams("sequential")``: RegMean++'s (recorded through the merged earlier blocks), also once."""
    held: dict = {}

    def grams(kind: str = "data"):
        if kind not in held:
            held[kind] = grams_of_kind(zoo, kind, config.gram_examples, config.seed)
        return held[kind]
    return grams


def uses_data(method: str, params: dict) -> bool:
    """Whether ``method`` with ``params`` reads data Grams: the registry says it needs them, or it takes them
    optionally (BMM) and its ``gram`` source is data-based."""
    spec = get_method(method)
    return "grams" in spec.needs or ("grams" in spec.optional and params.get("gram") in DATA_GRAMS)


def validation_seeds(config) -> tuple:
    """The validation subsets α is chosen on, one per seed: ``config.seeds``, or only the first when validation is
    the whole split (``val_examples = 0``: every seed would draw the same examples)."""
    return tuple(config.seeds) if config.val_examples else tuple(config.seeds[:1])


@contextmanager
def seeded_validation(cache, val_examples: int, seed: int):
    """Within the block, ``cache``'s evaluator validates on the subset drawn with ``seed`` (a trial's key holds the
    subset, so each seed has its own entries; test entries do not depend on it and are shared)."""
    evaluator = cache.evaluator
    before = evaluator.subset_spec("val") or [0, 0]
    evaluator.use_val_subset(val_examples, seed)
    try:
        yield
    finally:
        evaluator.use_val_subset(int(before[0]), int(before[1]))


def tune_and_test(cache, method: str, base: dict, experts: list[dict], grams, config: TourConfig,
                  params: Optional[dict] = None, seeds: Optional[Sequence[int]] = None) -> list[tuple]:
    """Per validation seed (``validation_seeds(config)`` unless given): α of ``method`` chosen on that seed's validation
    subset over the shared grid, then its test predictions, as ``[(Tuned, Predictions), ...]``, under the canonical
    recipe (``alpha_tuning.method_recipe``, as ``alpha_tuning.tune_method`` makes it: every notebook that merges
    ``method`` with ``params`` reuses the same entries). The α = 1 merge is made at most once for all seeds, and only on
    a cache miss; seeds that choose the same α share their test predictions."""
    params = dict(PARAMS.get(method, {}) if params is None else params)
    if method == "adamerging":   # learned per seed on the unlabeled validation inputs, then α like every method
        from ..tune.adamerging import AdaMergingSettings, tune_and_test as adamerging_runs

        return adamerging_runs(cache, base, experts,
                               lambda s: AdaMergingSettings(**{"steps": config.adamerging_steps, **params, "seed": s}),
                               validation_seeds(config) if seeds is None else seeds,
                               lambda s: seeded_validation(cache, config.val_examples, s), config.device)
    if method == "localize_stitch_learned":   # masks learned per seed on its labeled subset, then α like every method
        from ..tune.localize import LocalizeSettings, tune_and_test as localize_runs

        return localize_runs(cache, base, experts, lambda s: LocalizeSettings(**{**params, "seed": s}),
                             validation_seeds(config) if seeds is None else seeds,
                             lambda s: seeded_validation(cache, config.val_examples, s), config.device)
    data = uses_data(method, params)
    kind = alpha_tuning.gram_kind(method)   # RegMean++'s Grams are recorded at its default offdiag_scale
    recipe = alpha_tuning.method_recipe(method, params, alpha_tuning.gram_name(config.gram_examples, config.seed, kind)
                                    if data else None)
    held: dict = {}

    def merged_at_one():
        if "state" not in held:
            held["state"] = merge(method, base, experts, {**params, "scale": 1.0}, grams=grams(kind) if data else None,
                                  walk=WalkOptions(device=config.device))
        return held["state"]

    out = alpha_tuning.tune_at_seeds(cache, base, validation_seeds(config) if seeds is None else seeds,
                                 lambda s: seeded_validation(cache, config.val_examples, s),
                                 lambda s: (recipe, merged_at_one))
    held.clear()  # a merged model is ~90 MB on MiniLM: keep none once its predictions are cached
    return out


@dataclass
class Comparison:
    """Models compared on one zoo: per validation seed, α chosen on that seed's subset and the test predictions at
    it; and each model against a reference over the seeds (:func:`nbmerge.evaluate.verdicts.compare`)."""

    suite: str
    tasks: list
    expert: dict                  # each expert's test accuracy on its own task (normalizes accuracy)
    base_test: dict               # the base's test accuracy per task (the zoo's manifest)
    base_val: float               # the base's mean accuracy on the first validation subset (α = 0 of every curve)
    reference: str = REFERENCE
    runs: dict = field(default_factory=dict)      # name → [(alpha_tuning.Tuned, protocol.Predictions on test)] per seed
    versus: dict = field(default_factory=dict)    # name → verdicts.Decision of name − reference (threshold 0)
    seed: int = 0
    seeds: tuple = (0,)
    experts_label: str = "MiniLM text experts"   # what the experts are (the zoo's model family)
    published: Optional[dict] = None             # other papers' figures for these very checkpoints (pools.published)

    def add(self, name: str, runs: Sequence[tuple]) -> None:
        if not runs:
            raise NbmergeError(f"{name}: no seed was run")
        self.runs[name] = list(runs)

    @property
    def tuned(self) -> dict:
        """name → the first seed's Tuned (its α-curve is the one the figure draws)."""
        return {name: runs[0][0] for name, runs in self.runs.items()}

    @property
    def test(self) -> dict:
        """name → the first seed's test predictions."""
        return {name: runs[0][1] for name, runs in self.runs.items()}

    def pairs(self, name: str, other: str) -> list[tuple]:
        """(name, other) test predictions, one pair per seed they share."""
        return [(a[1], b[1]) for a, b in zip(self.runs[name], self.runs[other])]

    def decide(self) -> None:
        """Each model against the reference over the seeds: hierarchical bootstrap of normalized test accuracy."""
        if self.reference not in self.runs:
            return
        for name in self.runs:
            if name != self.reference:
                self.versus[name] = verdicts.compare(self.pairs(name, self.reference), self.expert,
                                                     names=(name, self.reference), seed=self.seed)

    def alphas(self, name: str) -> list[float]:
        return [tuned.alpha for tuned, _ in self.runs[name]]

    def normalized(self, name: str) -> float:
        """Normalized test accuracy at the chosen α, mean over the seeds."""
        return float(np.mean([test.normalized(self.expert) for _, test in self.runs[name]]))

    def mean_accuracy(self, name: str) -> float:
        return float(np.mean([test.mean_accuracy() for _, test in self.runs[name]]))

    def accuracy(self, name: str) -> dict:
        per_seed = [test.accuracy() for _, test in self.runs[name]]
        return {t: float(np.mean([acc[t] for acc in per_seed])) for t in per_seed[0]}

    def val_at_alpha(self, name: str) -> float:
        """Validation accuracy at the chosen α, mean over the seeds (each on its own subset)."""
        return float(np.mean([next(r["val_accuracy"] for r in tuned.curve if r["alpha"] == tuned.alpha)
                              for tuned, _ in self.runs[name]]))


def open_comparison(zoo, config: TourConfig, cache, base: dict, reference: str = REFERENCE) -> Comparison:
    from ..pools.published import published_figures

    base_val = cache.predictions(BASE_RECIPE, "val", lambda: base).mean_accuracy()
    return Comparison(zoo.suite, list(zoo.tasks), zoo.expert_accuracy, dict(zoo.manifest["base_accuracy"]["test"]),
                      base_val, reference, seed=config.seed, seeds=validation_seeds(config),
                      experts_label=zoo.arch.label, published=published_figures(zoo.suite, zoo.manifest))


def compare_methods(zoo, config: TourConfig, base: dict, experts: list[dict], cache: TrialCache,
                    grams=None) -> Comparison:
    """Every method of ``config.methods`` with its α chosen, at each validation seed, on that seed's subset over the
    same grid (``alpha_tuning.SCALE_GRID``), tested once at that α, and compared with task arithmetic over the seeds."""
    grams = grams or gram_source(zoo, config)
    comparison = open_comparison(zoo, config, cache, base)
    for method in config.methods:
        comparison.add(method, tune_and_test(cache, method, base, experts, grams, config))
    comparison.decide()
    return comparison


def interval_text(decision) -> str:
    """A decision's estimate and interval for a table cell (or why it is not tested)."""
    if decision is None:
        return ""
    if decision.outcome == "not tested":
        return f"not tested: {decision.why}"
    return f"{decision.estimate:+.2f} [{decision.interval[0]:+.2f}, {decision.interval[1]:+.2f}] pts"


def comparison_rows(comparison: Comparison, notes: Optional[dict] = None) -> list[dict]:
    """The test table: base and experts (from the zoo's manifest), then each model at its validation-chosen α (one
    per seed) with its normalized accuracy (mean over seeds) and its 95% interval against the reference (points,
    over seeds and test examples)."""
    notes = EXPLAINS if notes is None else notes
    tasks, expert = comparison.tasks, comparison.expert
    base_mean = float(np.mean([comparison.base_test[t] for t in tasks]))
    rows = [{"method": "base (zero-shot)", "α": "", "val": comparison.base_val, "test": base_mean,
             "normalized": normalized_mean(comparison.base_test, expert, tasks), "vs reference": "",
             "what it does": "the pretrained encoder with each task's head", **comparison.base_test},
            {"method": "experts (own task)", "α": "", "val": "", "test": float(np.mean([expert[t] for t in tasks])),
             "normalized": 1.0, "vs reference": "", "what it does": "the ceiling: one model per task", **expert}]
    for name, runs in comparison.runs.items():
        versus = "reference" if name == comparison.reference else interval_text(comparison.versus.get(name))
        rows.append({"method": shown(name, runs[0][0].recipe["method"]),
                     "α": ", ".join(f"{a:g}" for a in comparison.alphas(name)),
                     "val": comparison.val_at_alpha(name), "test": comparison.mean_accuracy(name),
                     "normalized": comparison.normalized(name), "vs reference": versus,
                     "what it does": notes.get(name, notes.get(runs[0][0].recipe["method"], "")),
                     **comparison.accuracy(name)})
    return rows


def test_accuracy_by_method(comparison: Comparison) -> dict[str, dict[str, float]]:
    """{method: {task: test accuracy}} (mean over seeds), with the base and the experts: what the published CLIP
    figures are set beside (``nbmerge.pools.published.beside_ours``)."""
    out = {"base (zero-shot)": dict(comparison.base_test), "experts (own task)": dict(comparison.expert)}
    for name in comparison.runs:
        out[name] = comparison.accuracy(name)
    return out


def published_rows(zoo, comparison: Comparison) -> tuple[list[dict], str]:
    """The published CLIP figures beside ours, and their source line ([], why: none for this zoo)."""
    from ..pools.published import for_zoo

    return for_zoo(zoo, test_accuracy_by_method(comparison))


def curves(comparison: Comparison) -> dict:
    """Per model: the validation α-curve and the chosen α of each seed (for metrics.json and the figure)."""
    return {name: {"alpha": runs[0][0].alpha, "curve": runs[0][0].curve, "recipe": runs[0][0].recipe,
                   "seeds": list(comparison.seeds[:len(runs)]), "alphas": [t.alpha for t, _ in runs],
                   "curves": [t.curve for t, _ in runs]} for name, runs in comparison.runs.items()}


# ------------------------------------------------------------------------------------------------------ BMM

def bmm_params(anchor: str, anchor_alpha: float, gram: str) -> dict:
    """BMM's recipe: the anchor at its own validation-chosen α is the prior mean; the prior strength is the
    registered default. BMM's assembly scale s is then tuned on the same α grid as every other method."""
    return {"anchor": anchor, "anchor_params": {"scale": anchor_alpha}, "gram": gram, "log10_rho": BMM_LOG10_RHO}


def bmm_section(zoo, config: TourConfig, base: dict, experts: list[dict], comparison: Comparison,
                cache: TrialCache, grams=None) -> Comparison:
    """BMM on the anchor ``config.bmm_anchor`` (reused from ``comparison`` when it was compared there), with data
    Grams and data-free, each against its anchor over the seeds. At each seed BMM's prior is the anchor at that
    seed's chosen α (seeds whose anchor chose the same α share one BMM merge)."""
    grams = grams or gram_source(zoo, config)
    anchor = config.bmm_anchor
    section = open_comparison(zoo, config, cache, base, reference=anchor)
    if anchor in comparison.runs:
        section.add(anchor, comparison.runs[anchor])
    else:
        section.add(anchor, tune_and_test(cache, anchor, base, experts, grams, config))
    seeds = validation_seeds(config)
    for gram in config.bmm_grams:
        by_alpha: dict = {}
        for seed, alpha in zip(seeds, section.alphas(anchor)):
            by_alpha.setdefault(alpha, []).append(seed)
        done = {}
        for alpha, group in by_alpha.items():
            params = bmm_params(anchor, alpha, gram)
            done.update(zip(group, tune_and_test(cache, "bmm", base, experts, grams, config, params, group)))
        section.add(f"BMM {GRAM_LABELS[gram]}", [done[seed] for seed in seeds])
    section.decide()
    return section


# ------------------------------------------------------------------------------------------- Pareto preview

def pareto_preview(zoo, config: TourConfig) -> Optional[dict]:
    """The Pareto notebook's 2-task preview (its IVON posteriors are cached in the zoo's store and shared with
    ``30_pareto.ipynb`` when the settings match); ``None`` when ``config.pareto_preview`` is off."""
    if not config.pareto_preview:
        return None
    from .pareto import tour_preview

    return tour_preview(zoo, tasks=list(config.pareto_tasks) or None, components=config.pareto_components,
                        ivon_steps=config.pareto_ivon_steps, divisions=config.pareto_divisions,
                        device=config.device, seed=config.seed, log=print)  # IVON training takes minutes: say so


def preview_summary(preview: Optional[dict]) -> str:
    if preview is None:
        return ("Pareto preview off (`pareto_preview = False`: training its IVON posteriors does not fit the "
                "tour's budget); the Pareto report (30_pareto.ipynb) shows the fronts with multitask fine-tuning.")
    volumes = {f: round(h, 4) for f, h in preview["hypervolume"].items()}
    text = f"hypervolume above the base model on {' vs '.join(preview['tasks'])}: {volumes}"
    if not any(h > 0 for h in volumes.values()):
        text += " — every front is dominated by the base here: this zoo shows no trade-off to preview"
    return text


# ------------------------------------------------------------------------------------------ metrics.json

def as_dict(config: TourConfig) -> dict:
    return asdict(config)


def headline(comparison: Comparison) -> dict:
    """The merge with the best validation accuracy (mean over seeds; chosen without test data) and its normalized
    test accuracy (mean over seeds)."""
    best = max(comparison.runs, key=comparison.val_at_alpha)
    return {"name": f"best merge on validation ({best}), normalized test accuracy",
            "value": comparison.normalized(best), "format": "{:.1%}"}


def metrics(comparison: Comparison, bmm: Optional[Comparison], preview: Optional[dict], **analyses) -> dict:
    """What metrics.json keeps: the tables, every α-curve, each interval, and the analyses' numbers."""
    out = {"rows": comparison_rows(comparison), "curves": curves(comparison), "seeds": list(comparison.seeds),
           "versus": {k: d.to_dict() for k, d in comparison.versus.items()}, **analyses}
    if bmm is not None:
        out["bmm"] = {"rows": comparison_rows(bmm), "curves": curves(bmm),
                      "versus": {k: d.to_dict() for k, d in bmm.versus.items()}}
    out["pareto_preview"] = None if preview is None else {k: v for k, v in preview.items() if k != "figure"}
    return out
