"""The notebook's figures: 2-task and 3-task fronts, the mixture's responsibilities."""

from __future__ import annotations

import numpy as np

from .config import MIXTURE, MULTITASK_IVON, PLAIN, family_of

# ---------------------------------------------------------------------------------------------------- figures

STYLE = {"simple": ("tab:blue", "-"), "ivon_hess": ("tab:orange", "-"), "soup_ivon_hess": ("tab:green", "--"),
         "multi_ivon_hess": ("tab:red", "-"), "adamw_simple": ("tab:purple", ":"), "adamw_sg_hess": ("tab:brown", ":")}


def _style(name: str) -> tuple[str, str]:
    family, run = family_of(name)
    color, line = STYLE.get(family, ("gray", "-"))
    if name == PLAIN:
        return color, ":"
    return color, ("--" if run else line)


def plot_front_2d(result: dict, ax=None):
    """Accuracy on task 1 against task 2 along α₁ for every front, the multitask runs and the base."""
    import matplotlib.pyplot as plt

    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 6))
    order = np.argsort(np.array(result["alphas"])[:, 0])
    for name, front in result["fronts"].items():
        acc = 100 * np.array(front["accuracy"])[order]
        color, line = _style(name)
        ax.plot(acc[:, 0], acc[:, 1], line, color=color, marker=".", markersize=4, label=front.get("label", name))
    if "multitask" in result:
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.plot(truth[:, 0], truth[:, 1], "ks-", label="multitask fine-tuning (AdamW)", markersize=6)
    if MULTITASK_IVON in result:
        truth = 100 * np.array(result[MULTITASK_IVON]["accuracy"])
        ax.plot(truth[:, 0], truth[:, 1], "D--", color="0.35", label="multitask fine-tuning (IVON)", markersize=6)
    ref = 100 * np.array(result["reference"])
    ax.plot([ref[0]], [ref[1]], "k*", markersize=12, label="base (reference point)")
    ax.set_xlabel(f"{result['tasks'][0]} accuracy (%)")
    ax.set_ylabel(f"{result['tasks'][1]} accuracy (%)")
    ax.set_title(f"α-fronts (test): {' vs '.join(result['tasks'])}")
    ax.legend(fontsize=8, loc="best")
    if fig is not None:
        fig.tight_layout()
    return fig or ax.figure


def plot_front_3d(result: dict):
    """The 3-task fronts as their three pairwise projections (points, since the α grid is 2-dimensional)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.3))
    tasks = result["tasks"]
    for ax, (i, j) in zip(axes, ((0, 1), (0, 2), (1, 2))):
        for name, front in result["fronts"].items():
            acc = 100 * np.array(front["accuracy"])
            ax.scatter(acc[:, i], acc[:, j], s=8, color=_style(name)[0], label=front.get("label", name), alpha=0.6)
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.scatter(truth[:, i], truth[:, j], s=40, marker="s", color="black", label="multitask fine-tuning")
        ref = 100 * np.array(result["reference"])
        ax.plot([ref[i]], [ref[j]], "k*", markersize=12, label="base")
        ax.set_xlabel(f"{tasks[i]} (%)")
        ax.set_ylabel(f"{tasks[j]} (%)")
    axes[0].legend(fontsize=6)
    fig.suptitle(f"3-task fronts ({', '.join(tasks)}), pairwise projections")
    fig.tight_layout()
    return fig


def plot_responsibilities(result: dict):
    """Heat map of the chosen-temperature mixture's responsibilities: rows α, columns (task, run); sized to be read
    at the page's width (labels unclipped, a labelled colorbar)."""
    import matplotlib.pyplot as plt

    records = result["em"].get(MIXTURE)
    if not records:
        return None
    matrix = np.array([[x for r in rec["responsibilities"] for x in r] for rec in records])
    k = len(records[0]["responsibilities"][0])
    width = min(12.0, max(8.0, 3.0 + 1.1 * matrix.shape[1]))
    height = min(14.0, max(4.5, 1.8 + 0.42 * matrix.shape[0]))
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for (i, j), value in np.ndenumerate(matrix):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=9,
                color="white" if value < 0.6 else "black")
    ax.set_xticks(range(matrix.shape[1]), [f"{t}\nrun {j}" for t in result["tasks"] for j in range(k)],
                  fontsize=10)
    ax.set_yticks(range(len(records)), ["(" + ", ".join(f"{a:.2f}" for a in alpha) + ")"
                                        for alpha in result["alphas"]], fontsize=10)
    ax.set_ylabel("task weights α", fontsize=11)
    ax.set_xlabel("task and IVON run (component)", fontsize=11)
    tau = result["temperature"]["chosen"]
    ax.set_title(f"the mixture's responsibilities at the merged θ, τ = {tau['factor']:g}·G", fontsize=12)
    bar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
    bar.set_label("responsibility r_tk (each task's runs sum to 1)", fontsize=10)
    bar.ax.tick_params(labelsize=10)
    return fig


def alt_front_2d(result: dict) -> str:
    t = result["tasks"]
    return (f"Line plot of test accuracy on {t[1]} (y) against {t[0]} (x), in %, for every merging front over "
            f"{len(result['alphas'])} task weights α: simple and IVON-Hess per IVON run, SoupIVON-Hess, the mixture "
            "at the chosen temperature and at τ = 1; black squares are AdamW multitask fine-tuning, grey diamonds "
            "IVON multitask fine-tuning, the star the base model. Up and to the right is better.")


def alt_front_3d(result: dict) -> str:
    return (f"Three scatter plots, the pairwise projections of the 3-task fronts on {', '.join(result['tasks'])}: "
            "test accuracy (%) of one task against another for every front's α, multitask runs as black squares "
            "and the base as a star.")


def alt_responsibilities(result: dict) -> str:
    records = result["em"].get(MIXTURE) or []
    c = result.get("collapsed")
    return (f"Heat map of the mixture's responsibilities: {len(records)} rows, one per task weight α, and one column "
            f"per task and IVON run; colour and printed value from 0 to 1, each task's runs summing to 1. "
            + (f"Every row is one-hot: {c['text']}." if c else "Values between 0 and 1 mean the runs are mixed."))
