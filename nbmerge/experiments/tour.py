"""The logic behind ``notebooks/00_tour.ipynb``: task vectors, interference, and the classic merges side by side.

Every function takes a built zoo (or its task vectors) and returns plain numbers or a matplotlib figure, so the
notebook's cells stay one or two lines each and everything here is tested.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import torch

from ..io import load_state_dict
from ..merge import merge
from ..metrics import normalized_mean
from ..methods.bmm import module_depth, module_type
from ..walker import is_linear_weight, resolve_device, task_vectors
from .common import check_config

# What each classic method fixes, in one line (shown in the comparison table and the notebook).
EXPLAINS = {
    "task_arithmetic": "adds the task vectors, scaled by one coefficient α",
    "ties": "trims small entries, elects one sign per entry, averages only the agreeing ones",
    "tsv": "keeps each task's top singular directions and whitens them so tasks stop overlapping",
    "iso_cts": "flattens the spectrum of the common subspace, adds task-specific directions",
    "regmean": "solves for the weights that reproduce every expert's outputs on its inputs (needs Grams)",
    "ace": "RegMean's closed form with each task's input covariance estimated from its own task vector (no data)",
}



@dataclass(frozen=True)
class TourConfig:
    suite: str = "micro"
    device: str = "cpu"
    seed: int = 0
    smoke: bool = False
    methods: tuple = ("task_arithmetic", "ties", "tsv", "iso_cts", "regmean", "ace")
    gram_examples: int = 256     # training images per task whose activations form RegMean's Grams
    top_fraction: float = 0.1    # share of singular directions compared in the subspace-overlap figure
    bmm_anchor: str = "task_arithmetic"   # the BMM section's anchor (prior mean)
    pareto_components: int = 2   # IVON runs per task in the Pareto preview (MultiIVON components)
    pareto_ivon_steps: int = 0   # IVON steps per run (0: the zoo's expert steps)
    pareto_divisions: int = 10   # α grid of the 2-task preview: α₁ ∈ {0, 1/n, ..., 1}
    cache: str = ""              # zoo cache folder; "" means $NBMERGE_CACHE or ~/.cache/nbmerge

    def __post_init__(self):
        check_config(self)
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "device", resolve_device(self.device))


def module_kind(key: str) -> tuple[str, Optional[int]]:
    """(attn-in | attn-out | mlp-in | mlp-out | other, block depth), by BMM's tying rules (``methods/bmm.py``)."""
    kind = module_type(key)
    return (kind.replace("_", "-") if kind else "other"), module_depth(key)


def open_zoo(config: TourConfig):
    from ..zoo.build import build_zoo, load_zoo

    build_zoo(config.suite, cache=config.cache or None, quiet=True, log=lambda *_: None)
    return load_zoo(config.suite, config.cache or None)


def load_models(zoo) -> tuple[dict, list[dict]]:
    return load_state_dict(zoo.base_path), [load_state_dict(p) for p in zoo.expert_paths]


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


def expert_grams(zoo, n: int, seed: int = 0) -> list[dict]:
    """Per task, the input Grams of each expert on its own task's training images (RegMean's statistics)."""
    from ..zoo.build import collect_grams

    return [collect_grams(zoo, load_state_dict(path), n, seed=seed, tasks=[task])[task]["grams"]
            for task, path in zip(zoo.tasks, zoo.expert_paths)]


def compare_methods(zoo, config: TourConfig, base: dict, experts: list[dict]) -> list[dict]:
    """One row per model: the base, each expert on its own task, averaging, then each method in ``config``."""
    evaluator = zoo.evaluator(config.device)
    tasks = zoo.tasks
    expert_test = zoo.manifest["expert_accuracy"]["test"]

    def row(name, state, seconds=None, note=""):
        result = evaluator.evaluate(state, "test")
        accs = {t: result["tasks"][t]["accuracy"] for t in tasks}
        return {"method": name, **accs, "mean": float(np.mean(list(accs.values()))),
                "normalized": normalized_mean(accs, expert_test, tasks),
                "seconds": seconds, "what it fixes": note}

    rows = [row("base (zero-shot)", base, note="the pretrained encoder with each task's head")]
    experts_row = {"method": "experts (own task)", **{t: expert_test[t] for t in tasks},
                   "mean": float(np.mean([expert_test[t] for t in tasks])), "normalized": 1.0, "seconds": None,
                   "what it fixes": "the ceiling: one model per task"}
    rows.append(experts_row)
    grams = None
    for method in ("average", *config.methods):
        kwargs = {}
        if method == "regmean":
            grams = grams or expert_grams(zoo, 64 if config.smoke else config.gram_examples, config.seed)
            kwargs["grams"] = grams
        start = time.perf_counter()
        merged = merge(method, base, experts, **kwargs)
        seconds = time.perf_counter() - start
        note = EXPLAINS.get(method, "the mean of the experts' weights")
        rows.append(row(method, merged, seconds, note))
    return rows


def as_dict(config: TourConfig) -> dict:
    return asdict(config)


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


def plot_interference(conflicts: list[dict], overlaps: list[dict]):
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    labels = [f"{r['kind']}.{r['depth']}" for r in conflicts]
    x = np.arange(len(labels))
    left.bar(x - 0.2, [r["all"] for r in conflicts], 0.4, label="all entries")
    left.bar(x + 0.2, [r["trimmed"] for r in conflicts], 0.4, label="after TIES trim (top 20%)")
    left.set_xticks(x, labels, rotation=60, fontsize=7)
    left.set_ylabel("share with conflicting signs")
    left.set_title("sign conflicts per module")
    left.legend(fontsize=8)
    labels = [f"{r['kind']}.{r['depth']}" for r in overlaps]
    x = np.arange(len(labels))
    right.bar(x, [r["overlap"] for r in overlaps], color="#dd8452", label="task pairs (mean)")
    right.plot(x, [r["chance"] for r in overlaps], "k_", markersize=12, label="random subspaces")
    right.set_xticks(x, labels, rotation=60, fontsize=7)
    right.set_ylabel("‖U_iᵀU_j‖²_F / k")
    right.set_title("overlap of top singular subspaces")
    right.legend(fontsize=8)
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


def plot_comparison(rows: list[dict]):
    import matplotlib.pyplot as plt

    merged = [r for r in rows if r["seconds"] is not None]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar([r["method"] for r in merged], [100 * r["normalized"] for r in merged], color="#55a868")
    base = next(r for r in rows if r["method"].startswith("base"))
    ax.axhline(100 * base["normalized"], color="grey", linestyle="--", label="base (zero-shot)")
    ax.axhline(100, color="black", linestyle=":", label="experts")
    ax.set_ylabel("normalized accuracy (%)")
    low = min(100 * base["normalized"], min(100 * r["normalized"] for r in merged))
    ax.set_ylim(max(0, low - 10), 105)
    ax.set_title("merged models on the test splits")
    ax.legend(fontsize=8, loc="lower right")
    plt.setp(ax.get_xticklabels(), rotation=20)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------ claims, headline

# Claims of the baseline papers the tour can check on its zoo (the three main papers have their own notebooks).
_CLAIMS = (
    ("ties", "TIES-Merging beats task arithmetic by trimming and resolving sign conflicts",
     "Yadav et al., NeurIPS 2023 (arXiv 2306.01708)"),
    ("tsv", "TSV-M beats task arithmetic by decorrelating the tasks' singular subspaces",
     "Gargiulo et al., CVPR 2025 (arXiv 2412.00081)"),
    ("iso_cts", "ISO-CTS beats task arithmetic by flattening the spectrum of the merged update",
     "Marczak et al., ICML 2025 (arXiv 2502.04959)"),
    ("regmean", "RegMean, which sees activation statistics, beats data-free task arithmetic",
     "Jin et al., ICLR 2023 (arXiv 2212.09849)"),
)


def tour_claims(rows: list[dict]):
    from .common import claim

    by = {r["method"]: r for r in rows}
    out = []
    for method, text, source in _CLAIMS:
        if method not in by or "task_arithmetic" not in by:
            out.append(claim(text, source, None, f"{method} or task_arithmetic was not run (parameter `methods`)"))
            continue
        ours, ta = by[method]["normalized"], by["task_arithmetic"]["normalized"]
        out.append(claim(text, source, ours > ta,
                         f"normalized accuracy {100 * ours:.1f}% vs task arithmetic {100 * ta:.1f}% "
                         f"(default hyperparameters, one zoo, one seed)"))
    return out


def headline(rows: list[dict]) -> dict:
    merged = [r for r in rows if r["seconds"] is not None]
    best = max(merged, key=lambda r: r["normalized"])
    return {"name": f"best merge ({best['method']}), normalized accuracy", "value": best["normalized"],
            "format": "{:.1%}"}
