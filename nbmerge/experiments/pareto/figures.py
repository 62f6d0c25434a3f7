"""The notebook's figures: 2-task and 3-task fronts, the mixture's responsibilities."""

from __future__ import annotations

import numpy as np

from .config import MIXTURE, PLAIN, family_of

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
        fig, ax = plt.subplots(figsize=(6, 5))
    order = np.argsort(np.array(result["alphas"])[:, 0])
    for name, front in result["fronts"].items():
        acc = 100 * np.array(front["accuracy"])[order]
        color, line = _style(name)
        ax.plot(acc[:, 0], acc[:, 1], line, color=color, marker=".", markersize=4, label=front.get("label", name))
    if "multitask" in result:
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.plot(truth[:, 0], truth[:, 1], "ks-", label="multitask fine-tuning", markersize=6)
    ref = 100 * np.array(result["reference"])
    ax.plot([ref[0]], [ref[1]], "k*", markersize=12, label="base (reference point)")
    ax.set_xlabel(f"{result['tasks'][0]} accuracy (%)")
    ax.set_ylabel(f"{result['tasks'][1]} accuracy (%)")
    ax.set_title(f"α-fronts (test): {' vs '.join(result['tasks'])}")
    ax.legend(fontsize=6)
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
    """Heat map of the chosen-temperature mixture's responsibilities: rows α, columns (task, run)."""
    import matplotlib.pyplot as plt

    records = result["em"].get(MIXTURE)
    if not records:
        return None
    matrix = np.array([[x for r in rec["responsibilities"] for x in r] for rec in records])
    k = len(records[0]["responsibilities"][0])
    fig, ax = plt.subplots(figsize=(1 + 0.6 * matrix.shape[1], 0.8 + 0.35 * matrix.shape[0]))
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(matrix.shape[1]), [f"{t[:10]}\nrun {j}" for t in result["tasks"] for j in range(k)], fontsize=7)
    ax.set_yticks(range(len(records)), [", ".join(f"{a:.2f}" for a in alpha) for alpha in result["alphas"]],
                  fontsize=7)
    ax.set_ylabel("α")
    tau = result["temperature"]["chosen"]
    ax.set_title(f"responsibilities at τ = {tau['factor']:g}·G", fontsize=9)
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    return fig
