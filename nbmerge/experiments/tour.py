"""The logic behind ``notebooks/00_tour.ipynb``: task vectors, interference, and the classic merges side by side.

Every function takes a built zoo (or its task vectors) and returns plain numbers or a matplotlib figure, so the
notebook's cells stay one or two lines each and everything here is tested.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np
import torch

from .. import protocol
from ..device import resolve_device
from ..errors import NbmergeError
from ..merging import merge
from ..methods import get_method
from ..metrics import normalized_mean
from ..modules import module_depth, module_type
from ..pools.zoo import expert_grams
from ..walker import Walk, is_linear_weight, task_vectors
from .common import check_config

# What each classic method fixes, in one line (shown in the comparison table and the notebook).
EXPLAINS = {
    "task_arithmetic": "adds the task vectors, scaled by one coefficient α",
    "ties": "trims small entries, elects one sign per entry, averages only the agreeing ones",
    "tsv": "keeps each task's top singular directions and whitens them so tasks stop overlapping",
    "iso_cts": "flattens the spectrum of the common subspace, adds task-specific directions",
    "regmean": "solves for the weights that reproduce every expert's outputs on its inputs (needs Grams)",
    "ace": "RegMean's closed form with each task's input covariance estimated from its own task vector (no data)",
    "bmm": "a Bayesian regression of each layer, with an anchor merge as the prior mean",
}
REFERENCE = "task_arithmetic"   # every claim of the tour compares a method with task arithmetic
GRAM_SOURCES = ("data", "task_vector")
BMM_LOG10_RHO = -1.0            # the registered bmm's default prior strength (23_bmm_search.ipynb tunes it)


@dataclass(frozen=True)
class TourConfig:
    suite: str = "text8"
    device: str = "cpu"
    seed: int = 0                # seeds the validation subset and the Gram sample
    methods: tuple = ("task_arithmetic", "ties", "tsv", "iso_cts", "regmean", "ace")
    val_examples: int = 100      # validation examples per task on which α is chosen (0: the whole split)
    gram_examples: int = 256     # training examples per task whose activations form RegMean's (and BMM's) Grams
    top_fraction: float = 0.1    # share of singular directions compared in the subspace-overlap figure
    bmm_anchor: str = "task_arithmetic"   # the BMM section's anchor (prior mean), a data-free method
    bmm_grams: tuple = GRAM_SOURCES       # BMM with data Grams and/or data-free (task-vector Grams)
    pareto_preview: bool = False  # train IVON posteriors for the Pareto preview (off: a pointer to 30_pareto.ipynb)
    pareto_tasks: tuple = ()     # the preview's two tasks (empty: the zoo's first two)
    pareto_components: int = 2   # IVON runs per task in the Pareto preview (MultiIVON components)
    pareto_ivon_steps: int = 0   # IVON steps per run (0: the zoo's expert steps)
    pareto_divisions: int = 10   # α grid of the 2-task preview: α₁ ∈ {0, 1/n, ..., 1}
    cache: str = ""              # zoo cache folder; "" means $NBMERGE_CACHE or ~/.cache/nbmerge

    def __post_init__(self):
        check_config(self)
        for name in ("methods", "bmm_grams", "pareto_tasks"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "device", resolve_device(self.device))
        unknown = [g for g in self.bmm_grams if g not in GRAM_SOURCES]
        if unknown:
            raise NbmergeError(f"bmm_grams: unknown Gram sources {unknown}; valid: {', '.join(GRAM_SOURCES)}")
        if self.bmm_grams and get_method(self.bmm_anchor).needs:
            raise NbmergeError(f"bmm_anchor {self.bmm_anchor!r} needs statistics; the tour's BMM anchor must be "
                               "data-free (e.g. task_arithmetic, ties, tsv), or data-free BMM would use data")
        if self.pareto_tasks and len(self.pareto_tasks) != 2:
            raise NbmergeError(f"pareto_tasks: the preview shows two tasks, got {list(self.pareto_tasks)}")


def module_kind(key: str) -> tuple[str, Optional[int]]:
    """(attn-in | attn-out | mlp-in | mlp-out | other, block depth), by BMM's tying rules (``nbmerge/modules.py``)."""
    kind = module_type(key)
    return (kind.replace("_", "-") if kind else "other"), module_depth(key)


def linear_keys(base: dict) -> list[str]:
    return [k for k, v in base.items() if is_linear_weight(k, v.shape) and module_kind(k)[0] != "other"]


def task_vector_geometry(base: dict, experts: list[dict], tasks: list[str]) -> dict:
    """Norms and pairwise cosines of the flattened task vectors τ_t = θ_t − θ_0."""
    vectors = task_vectors(base, experts)
    flat = torch.stack([torch.cat([v.reshape(-1).double() for v in tv.values()]) for tv in vectors])
    norms = flat.norm(dim=1)
    cosines = (flat @ flat.T) / (norms[:, None] * norms[None, :])
    off = cosines[~torch.eye(len(tasks), dtype=torch.bool)]
    return {"tasks": tasks, "norms": norms.tolist(), "cosines": cosines.tolist(),
            "mean_offdiag_cosine": float(off.mean()) if len(off) else float("nan"),
            "base_norm": float(torch.cat([v.reshape(-1).double() for v in base.values()]).norm())}


def sign_conflicts(base: dict, experts: list[dict], density: float = 0.2) -> list[dict]:
    """Per linear module: the share of entries whose task-vector signs disagree across tasks.

    ``all`` counts every entry; ``trimmed`` counts only entries that survive TIES's trim (top ``density`` of
    each task's magnitudes) in at least two tasks — the conflicts TIES's sign election then resolves.
    """
    vectors = task_vectors(base, experts)
    rows = []
    for key in linear_keys(base):
        stack = torch.stack([tv[key].double() for tv in vectors])
        signs = torch.sign(stack)
        mixed = (signs.max(0).values > 0) & (signs.min(0).values < 0)
        k = max(1, int(density * stack[0].numel()))
        keep = torch.stack([t.abs() >= t.abs().flatten().kthvalue(t.numel() - k + 1).values for t in stack])
        kept_signs = signs * keep
        trimmed_mixed = (kept_signs.max(0).values > 0) & (kept_signs.min(0).values < 0)
        shared = keep.sum(0) >= 2
        kind, depth = module_kind(key)
        rows.append({"key": key, "kind": kind, "depth": depth, "all": float(mixed.double().mean()),
                     "trimmed": float(trimmed_mixed.double().sum() / shared.sum().clamp(min=1))})
    return rows


def subspace_overlap(base: dict, experts: list[dict], top_fraction: float = 0.1) -> list[dict]:
    """Per linear module: mean pairwise overlap ‖U_iᵀU_j‖²_F / k of the tasks' top-k left singular subspaces.

    1 means the tasks write into the same output directions (they interfere when added); random k-dimensional
    subspaces of R^d overlap by k/d on average, reported as ``chance``.
    """
    vectors = task_vectors(base, experts)
    rows = []
    for key in linear_keys(base):
        mats = [tv[key].double() for tv in vectors]
        d = min(mats[0].shape)
        k = max(1, int(round(top_fraction * d)))
        bases = [torch.linalg.svd(m, full_matrices=False)[0][:, :k] for m in mats]
        pairs = [float((bases[i].T @ bases[j]).pow(2).sum() / k)
                 for i in range(len(bases)) for j in range(i + 1, len(bases))]
        kind, depth = module_kind(key)
        rows.append({"key": key, "kind": kind, "depth": depth, "k": k, "overlap": float(np.mean(pairs)),
                     "chance": k / mats[0].shape[0]})
    return rows


def spectra(base: dict, experts: list[dict], key: str) -> dict:
    """Singular values of each task vector and of their sum at one module (normalised to the largest)."""
    vectors = task_vectors(base, experts)
    single = [torch.linalg.svdvals(tv[key].double()) for tv in vectors]
    total = torch.linalg.svdvals(sum(tv[key].double() for tv in vectors))
    return {"key": key, "tasks": [(s / s[0]).tolist() for s in single], "sum": (total / total[0]).tolist()}


# ------------------------------------------------------------------------------------- the merges, tuned alike

BASE_RECIPE = {"method": "base", "params": {}, "grams": None, "experts": "zoo", "scale": 0.0}


def trials(zoo, config: TourConfig) -> protocol.TrialCache:
    """The shared trial cache, its validation split cut to the seeded subset every notebook tunes α on."""
    return protocol.trial_cache(zoo, config.device, config.cache, config.val_examples, config.seed)


def gram_source(zoo, config: TourConfig):
    """Data Grams as a function collected on first call only: a run whose merges are all cached needs none."""
    held: list = []

    def grams():
        if not held:
            held.append(expert_grams(zoo, config.gram_examples, config.seed))
        return held[0]
    return grams


def uses_data(method: str, params: dict) -> bool:
    return "grams" in get_method(method).needs or params.get("gram") in ("data", "hybrid")


def tune_and_test(cache, method: str, base: dict, experts: list[dict], grams, config: TourConfig,
                  params: Optional[dict] = None) -> tuple[protocol.Tuned, protocol.Predictions]:
    """α of ``method`` chosen on the validation subset over the shared grid, then its test predictions, under the
    canonical recipe (``protocol.method_recipe``, as ``protocol.tune_method`` makes it: every notebook that merges
    ``method`` with ``params`` reuses the same entries). The α = 1 merge is kept until the test predictions exist,
    so a method is merged at most once (``tune_method`` would merge again for the test split)."""
    params = dict(params or {})
    data = uses_data(method, params)
    recipe = protocol.method_recipe(method, params, protocol.gram_name(config.gram_examples, config.seed)
                                    if data else None)
    held: dict = {}

    def merged_at_one():
        if "state" not in held:
            held["state"] = merge(method, base, experts, {**params, "scale": 1.0}, grams=grams() if data else None,
                                  walk=Walk(device=config.device))
        return held["state"]

    tuned = protocol.tune_scale(cache, recipe, merged_at_one, base)
    tuned.merge_fn = merged_at_one
    test = protocol.method_test(cache, tuned, base)
    held.clear()  # a merged model is ~90 MB on MiniLM: keep none once its predictions are cached
    return tuned, test


def cached(zoo, config: TourConfig, name: str, compute, **key):
    """An analysis of the zoo's checkpoints (task-vector geometry, interference), computed once per zoo and ``key``
    and kept as JSON beside the trial cache, so a warm run recomputes nothing."""
    import hashlib
    import json

    from ..io import atomic_write_text
    from ..pools.zoo import cache_root

    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    path = (cache_root(config.cache or None) / "analyses" / f"{zoo.root.name}-{protocol.zoo_fingerprint(zoo)}"
            / f"tour-{name}-{digest}.json")
    if path.exists():
        try:
            return json.loads(path.read_text())
        except ValueError:
            pass  # a damaged entry is recomputed
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(value))
    return value


@dataclass
class Comparison:
    """Models compared on one zoo: α chosen on validation, test predictions, and intervals against a reference."""

    suite: str
    tasks: list
    expert: dict                  # each expert's test accuracy on its own task (normalizes accuracy)
    base_test: dict               # the base's test accuracy per task (the zoo's manifest)
    base_val: float               # the base's mean accuracy on the validation subset (α = 0 of every curve)
    reference: str = REFERENCE
    tuned: dict = field(default_factory=dict)     # name → protocol.Tuned
    test: dict = field(default_factory=dict)      # name → protocol.Predictions (test, at the chosen α)
    versus: dict = field(default_factory=dict)    # name → protocol.beats(name, reference)
    seed: int = 0

    def add(self, name: str, tuned, test) -> None:
        self.tuned[name], self.test[name] = tuned, test

    def decide(self) -> None:
        """Each model against the reference: the paired 95% interval of normalized test accuracy."""
        if self.reference not in self.test:
            return
        for name, preds in self.test.items():
            if name != self.reference:
                self.versus[name] = protocol.beats(preds, self.test[self.reference], self.expert,
                                                   names=(name, self.reference), seed=self.seed)

    def normalized(self, name: str) -> float:
        return self.test[name].normalized(self.expert)

    def val_at_alpha(self, name: str) -> float:
        tuned = self.tuned[name]
        return next(r["val_accuracy"] for r in tuned.curve if r["alpha"] == tuned.alpha)


def open_comparison(zoo, config: TourConfig, cache, base: dict, reference: str = REFERENCE) -> Comparison:
    tasks = list(zoo.tasks)
    base_val = cache.predictions(BASE_RECIPE, "val", lambda: base).mean_accuracy()
    manifest = zoo.manifest
    return Comparison(manifest.get("suite") or zoo.root.name, tasks, dict(manifest["expert_accuracy"]["test"]),
                      dict(manifest["base_accuracy"]["test"]), base_val, reference, seed=config.seed)


def compare_methods(zoo, config: TourConfig, base: dict, experts: list[dict], cache=None,
                    grams=None) -> Comparison:
    """Every method of ``config.methods`` with its α chosen on the validation subset over the same grid
    (``protocol.SCALE_GRID``), tested once at that α, and compared with task arithmetic by a paired interval."""
    cache = cache or trials(zoo, config)
    grams = grams or gram_source(zoo, config)
    comparison = open_comparison(zoo, config, cache, base)
    for method in config.methods:
        comparison.add(method, *tune_and_test(cache, method, base, experts, grams, config))
    comparison.decide()
    return comparison


def comparison_rows(comparison: Comparison, notes: Optional[dict] = None) -> list[dict]:
    """The test table: base and experts (from the zoo's manifest), then each model at its validation-chosen α
    with its normalized accuracy and its paired 95% interval against the reference (points)."""
    notes = EXPLAINS if notes is None else notes
    tasks, expert = comparison.tasks, comparison.expert
    base_mean = float(np.mean([comparison.base_test[t] for t in tasks]))
    rows = [{"method": "base (zero-shot)", "α": "", "val": comparison.base_val, "test": base_mean,
             "normalized": normalized_mean(comparison.base_test, expert, tasks), "vs reference": "",
             "what it does": "the pretrained encoder with each task's head", **comparison.base_test},
            {"method": "experts (own task)", "α": "", "val": "", "test": float(np.mean([expert[t] for t in tasks])),
             "normalized": 1.0, "vs reference": "", "what it does": "the ceiling: one model per task", **expert}]
    for name, tuned in comparison.tuned.items():
        decision = comparison.versus.get(name)
        versus = "reference" if name == comparison.reference else (
            str(protocol.Interval(**decision["interval"])) if decision else "")
        rows.append({"method": name, "α": f"{tuned.alpha:g}", "val": comparison.val_at_alpha(name),
                     "test": comparison.test[name].mean_accuracy(), "normalized": comparison.normalized(name),
                     "vs reference": versus, "what it does": notes.get(tuned.recipe["method"], ""),
                     **comparison.test[name].accuracy()})
    return rows


def curves(comparison: Comparison) -> dict:
    """Per model: the validation α-curve and the chosen α (for metrics.json and the figure)."""
    return {name: {"alpha": t.alpha, "curve": t.curve, "recipe": t.recipe} for name, t in comparison.tuned.items()}


# ------------------------------------------------------------------------------------------------------ BMM

def bmm_params(anchor: str, anchor_alpha: float, gram: str) -> dict:
    """BMM's recipe: the anchor at its own validation-chosen α is the prior mean; the prior strength is the
    registered default. BMM's assembly scale s is then tuned on the same α grid as every other method."""
    return {"anchor": anchor, "anchor_params": {"scale": anchor_alpha}, "gram": gram, "log10_rho": BMM_LOG10_RHO}


def bmm_section(zoo, config: TourConfig, base: dict, experts: list[dict], comparison: Comparison, cache=None,
                grams=None) -> Comparison:
    """BMM on the anchor ``config.bmm_anchor`` (reused from ``comparison`` when it was compared there), with data
    Grams and data-free, each against its anchor by a paired interval."""
    cache = cache or trials(zoo, config)
    grams = grams or gram_source(zoo, config)
    anchor = config.bmm_anchor
    section = open_comparison(zoo, config, cache, base, reference=anchor)
    if anchor in comparison.tuned:
        section.add(anchor, comparison.tuned[anchor], comparison.test[anchor])
    else:
        section.add(anchor, *tune_and_test(cache, anchor, base, experts, grams, config))
    for gram in config.bmm_grams:
        params = bmm_params(anchor, section.tuned[anchor].alpha, gram)
        section.add(f"BMM {GRAM_LABELS[gram]}", *tune_and_test(cache, "bmm", base, experts, grams, config, params))
    section.decide()
    return section


GRAM_LABELS = {"data": "data-assisted", "task_vector": "data-free"}


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


# ------------------------------------------------------------------------------------------------------- figures

def plot_geometry(geometry: dict):
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    tasks = geometry["tasks"]
    left.bar(tasks, geometry["norms"], color="#4c72b0")
    left.set_title("‖τ_t‖ (task-vector norm)")
    left.set_ylabel("L2 norm")
    image = right.imshow(np.array(geometry["cosines"]), vmin=-1, vmax=1, cmap="RdBu_r")
    right.set_xticks(range(len(tasks)), tasks, rotation=30)
    right.set_yticks(range(len(tasks)), tasks)
    right.set_title("cosine(τ_i, τ_j)")
    fig.colorbar(image, ax=right, fraction=0.046)
    fig.tight_layout()
    return fig


def module_label(row: dict) -> str:
    """``depth.kind``, with q/k/v told apart when a model stores them separately (BERT, HF CLIP)."""
    label = f"{row['depth']}.{row['kind']}"
    for part in row["key"].split("."):
        if part in ("query", "key", "value", "q_proj", "k_proj", "v_proj"):
            return f"{label}.{part[0]}"
    return label


def plot_interference(conflicts: list[dict], overlaps: list[dict]):
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    x = np.arange(len(conflicts))
    left.bar(x - 0.2, [r["all"] for r in conflicts], 0.4, label="all entries")
    left.bar(x + 0.2, [r["trimmed"] for r in conflicts], 0.4, label="after TIES trim (top 20%)")
    left.set_xticks(x, [module_label(r) for r in conflicts], rotation=90, fontsize=6)
    left.set_ylabel("share with conflicting signs")
    left.set_title("sign conflicts per module")
    left.set_ylim(0, 1.25)  # headroom: the legend sits above the bars, not on them
    left.legend(fontsize=8, loc="upper center", ncol=2)
    x = np.arange(len(overlaps))
    right.bar(x, [r["overlap"] for r in overlaps], color="#dd8452", label="task pairs (mean)")
    right.plot(x, [r["chance"] for r in overlaps], "k_", markersize=8, label="random subspaces")
    right.set_xticks(x, [module_label(r) for r in overlaps], rotation=90, fontsize=6)
    right.set_ylabel("‖U_iᵀU_j‖²_F / k")
    right.set_title("overlap of top singular subspaces")
    right.set_ylim(0, 1.25 * max([r["overlap"] for r in overlaps] + [r["chance"] for r in overlaps] + [1e-3]))
    right.legend(fontsize=8, loc="upper center", ncol=2)
    fig.tight_layout()
    return fig


def plot_spectra(spectrum: dict):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, values in enumerate(spectrum["tasks"]):
        ax.semilogy(values, alpha=0.6, label=f"τ_{i + 1}")
    ax.semilogy(spectrum["sum"], "k", linewidth=2, label="Σ_t τ_t")
    ax.set_xlabel("singular value index")
    ax.set_ylabel("σ_i / σ_1")
    ax.set_title(f"spectra at {spectrum['key']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_alpha_curves(comparison: Comparison, title: str = "choosing α on the validation subset"):
    """Validation accuracy against α for every model (the same grid for all), each chosen α circled, the base as
    the α = 0 line."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.8))
    for name, tuned in comparison.tuned.items():
        alphas = [r["alpha"] for r in tuned.curve]
        line, = ax.plot(alphas, [100 * r["val_accuracy"] for r in tuned.curve], marker=".", label=name)
        ax.plot([tuned.alpha], [100 * comparison.val_at_alpha(name)], "o", markersize=9, markerfacecolor="none",
                color=line.get_color())
    ax.axhline(100 * comparison.base_val, color="grey", linestyle="--", label="base (α = 0)")
    ax.set_xscale("log")
    ax.set_xlabel("α (global coefficient; log scale)")
    ax.set_ylabel("validation accuracy (%)")
    ax.set_title(f"{title} ({comparison.suite}; circles: chosen α)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: the curves stay visible
    fig.tight_layout()
    return fig


def plot_comparison(comparison: Comparison):
    """Left: normalized test accuracy at the chosen α. Right: the paired 95% interval against the reference."""
    import matplotlib.pyplot as plt

    names = list(comparison.tuned)
    values = [100 * comparison.normalized(n) for n in names]
    base = 100 * normalized_mean(comparison.base_test, comparison.expert, comparison.tasks)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    left.bar(names, values, color="#55a868")
    left.axhline(base, color="grey", linestyle="--", label="base (zero-shot)")
    left.axhline(100, color="black", linestyle=":", label="experts")
    left.set_ylim(max(0, min(values + [base]) - 10), max(values + [100]) + 12)  # headroom for the legend
    left.set_ylabel("normalized test accuracy (%)")
    left.legend(fontsize=8, loc="upper center", ncol=2)
    plt.setp(left.get_xticklabels(), rotation=25, ha="right")
    others = [n for n in names if n in comparison.versus]
    intervals = [comparison.versus[n]["interval"] for n in others]
    y = np.arange(len(others))
    right.errorbar([i["diff"] for i in intervals], y, fmt="o", color="#4c72b0",
                   xerr=[[i["diff"] - i["low"] for i in intervals], [i["high"] - i["diff"] for i in intervals]])
    right.axvline(0, color="black", linewidth=0.8)
    right.set_yticks(y, others)
    right.invert_yaxis()
    right.set_xlabel(f"model − {comparison.reference} (normalized points, paired 95% interval)")
    fig.suptitle(f"test split of {comparison.suite}, at each model's validation-chosen α", fontsize=10)
    fig.tight_layout()
    return fig


def as_dict(config: TourConfig) -> dict:
    return asdict(config)


# ------------------------------------------------------------------------------------------------ claims, headline

# (id, model, claim, source, the paper's own figure). The three main papers have their own notebooks; the tour
# checks what each baseline claims against task arithmetic, and BMM against its anchor at the registered prior.
_CLAIMS = (
    ("T1", "ties", "TIES-Merging beats task arithmetic by trimming and resolving sign conflicts",
     "Yadav et al., NeurIPS 2023, arXiv 2306.01708; numbers as re-run in Marczak et al., arXiv 2502.04959, Table 1",
     "ViT-B/32, 8 tasks: 75.1% vs 70.8% absolute (above TA in all 9 vision settings of that table)"),
    ("T2", "tsv", "TSV-M beats task arithmetic by decorrelating the tasks' singular subspaces",
     "Gargiulo et al., CVPR 2025, arXiv 2412.00081, Table 2",
     "ViT-B/32, 8 tasks: 85.9% vs 70.8% absolute (92.3% vs 76.6% normalized)"),
    ("T3", "iso_cts", "ISO-CTS beats task arithmetic by flattening the spectrum of the merged update",
     "Marczak et al., ICML 2025, arXiv 2502.04959, Table 1",
     "ViT-B/32, 8 tasks: 86.2% vs 70.8% absolute"),
    ("T4", "regmean", "RegMean, which sees activation statistics, beats data-free task arithmetic",
     "Jin et al., ICLR 2023, arXiv 2212.09849 (the method); FusionBench's CLIP model-pool docs (the comparison)",
     "CLIP ViT-B/32, 8 tasks (FusionBench): 82.4% vs 68.0% absolute"),
    ("T5", "ace", "ACE-Merging, data-free, beats task arithmetic",
     "ACE-Merging, arXiv 2603.02945 (ViT-B/16 results table)",
     "ViT-B/16, 8/14/20 tasks: 90.6/86.1/82.1% vs 75.4/70.5/65.8% absolute"),
)
_BMM_CLAIMS = (
    ("T6", "BMM data-assisted", "BMM with data Grams beats its anchor (at the registered prior strength)"),
    ("T7", "BMM data-free", "Data-free BMM (task-vector Grams, Theorem 1) beats its anchor (at the registered "
                            "prior strength)"),
)
_BMM_SOURCE = "BMM, arXiv 2605.12843, abstract"
_BMM_PAPER = "ViT-L/14, 8 tasks: one merged model 95.1% vs the experts' 95.8%; above every anchor it plugs into"


def _verdict(id_, text, source, paper, comparison: Comparison, name: str):
    from .common import claim

    ref = comparison.reference
    if name not in comparison.test or ref not in comparison.test:
        missing = name if name not in comparison.test else ref
        return claim(text, source, None, f"not tested: {missing} was not run (parameters `methods`/`bmm_grams`)",
                     id=id_, paper=paper, suite=comparison.suite)
    decision = comparison.versus[name]
    ours = (f"{100 * comparison.normalized(name):.1f}% vs {100 * comparison.normalized(ref):.1f}% normalized; "
            f"Δ {protocol.Interval(**decision['interval'])}")
    evidence = (f"{decision['evidence']}; α chosen on the validation subset over the same grid: "
                f"{name} {comparison.tuned[name].alpha:g}, {ref} {comparison.tuned[ref].alpha:g}; one zoo, "
                f"paired bootstrap over test examples")
    return claim(text, source, decision["held"], evidence, id=id_, paper=paper, ours=ours, suite=comparison.suite)


def tour_claims(comparison: Comparison, bmm: Optional[Comparison] = None) -> list:
    """T1–T5: each baseline against task arithmetic; T6–T7: BMM against its anchor. "Beats" = the paired 95%
    interval of normalized test accuracy lies above 0; "not tested" when a model is at chance or the two
    collapsed onto one another (``protocol.beats``)."""
    out = [_verdict(id_, text, source, paper, comparison, method) for id_, method, text, source, paper in _CLAIMS]
    for id_, name, text in _BMM_CLAIMS:
        if bmm is None:
            from .common import claim

            out.append(claim(text, _BMM_SOURCE, None, "not tested: the BMM section was not run", id=id_,
                             paper=_BMM_PAPER, suite=comparison.suite))
        else:
            out.append(_verdict(id_, text, _BMM_SOURCE, _BMM_PAPER, bmm, name))
    return out


def headline(comparison: Comparison) -> dict:
    """The merge with the best validation accuracy (chosen without test data) and its normalized test accuracy."""
    best = max(comparison.tuned, key=comparison.val_at_alpha)
    return {"name": f"best merge on validation ({best}), normalized test accuracy",
            "value": comparison.normalized(best), "format": "{:.1%}"}


def metrics(comparison: Comparison, bmm: Optional[Comparison], preview: Optional[dict], **analyses) -> dict:
    """What metrics.json keeps: the tables, every α-curve, each interval, and the analyses' numbers."""
    out = {"rows": comparison_rows(comparison), "curves": curves(comparison), "versus": comparison.versus,
           **analyses}
    if bmm is not None:
        out["bmm"] = {"rows": comparison_rows(bmm), "curves": curves(bmm), "versus": bmm.versus}
    out["pareto_preview"] = None if preview is None else {k: v for k, v in preview.items() if k != "figure"}
    return out
