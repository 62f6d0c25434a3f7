"""The figures of ``notebooks/00_tour.ipynb``: task-vector geometry, interference, spectra, α-curves, the test
comparison. Each takes the numbers the tour computed (dicts, or a :class:`.tour.Comparison`) and returns a figure."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..evaluate.metrics import normalized_mean

if TYPE_CHECKING:
    from .tour import Comparison


def plot_geometry(geometry: dict):
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    tasks = geometry["tasks"]
    left.bar(tasks, geometry["norms"], color="#4c72b0")
    left.set_title("‖τ_t‖ (task-vector norm)")
    left.set_ylabel("L2 norm")
    left.set_xticks(range(len(tasks)), tasks, rotation=40, ha="right")  # task names are long: keep them apart
    image = right.imshow(np.array(geometry["cosines"]), vmin=-1, vmax=1, cmap="RdBu_r")
    right.set_xticks(range(len(tasks)), tasks, rotation=40, ha="right")
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
        chosen = next(r["val_accuracy"] for r in tuned.curve if r["alpha"] == tuned.alpha)
        ax.plot([tuned.alpha], [100 * chosen], "o", markersize=9, markerfacecolor="none",
                color=line.get_color())
    ax.axhline(100 * comparison.base_val, color="grey", linestyle="--", label="base (α = 0)")
    ax.set_xscale("log")
    ax.set_xlabel("α (global coefficient; log scale)")
    ax.set_ylabel("validation accuracy (%)")
    ax.set_title(f"{title} ({comparison.suite}, validation seed {comparison.seeds[0]}; circles: chosen α)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: the curves stay visible
    fig.tight_layout()
    return fig


def plot_comparison(comparison: Comparison):
    """Left: normalized test accuracy at the chosen α (mean over seeds). Right: the 95% interval against the
    reference (over seeds and test examples)."""
    import matplotlib.pyplot as plt

    names = list(comparison.runs)
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
    others = [n for n in names if n in comparison.versus and comparison.versus[n].interval is not None]
    decisions = [comparison.versus[n] for n in others]
    y = np.arange(len(others))
    right.errorbar([d.estimate for d in decisions], y, fmt="o", color="#4c72b0",
                   xerr=[[d.estimate - d.interval[0] for d in decisions],
                         [d.interval[1] - d.estimate for d in decisions]])
    right.axvline(0, color="black", linewidth=0.8)
    right.set_yticks(y, others)
    right.invert_yaxis()
    right.set_xlabel(f"model − {comparison.reference} (normalized points, 95% interval over seeds and examples)")
    fig.suptitle(f"test split of {comparison.suite}, at each model's validation-chosen α (mean over "
                 f"{len(comparison.seeds)} seeds)", fontsize=10)
    fig.tight_layout()
    return fig
