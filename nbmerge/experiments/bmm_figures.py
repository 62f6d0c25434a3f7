"""The figures of ``notebooks/21_bmm_calibration.ipynb`` (the τ sweep, reliability diagrams) and
``notebooks/22_bmm_datafree.ipynb`` (Gram alignment across depth, data-free against data-assisted BMM)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..calibration import reliability, rescaled
from ..modules import MODULE_TYPES
from .bmm_calibration import PosteriorRun
from .bmm_datafree import GRAM_LABELS, SourceStudy

_TYPE_STYLE = {"attn_in": ("#4c72b0", "o"), "attn_out": ("#55a868", "s"), "mlp_in": ("#dd8452", "^"),
               "mlp_out": ("#c44e52", "D")}


def plot_alignment(rows: Sequence[dict]):
    """Cosine (left) and top-k overlap (right) per module across depth, one line per module type, with the
    baselines dashed."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.9), sharex=True)
    for kind in MODULE_TYPES:
        chosen = sorted((r for r in rows if r["module_type"] == kind), key=lambda r: r["depth"] or 0)
        if not chosen:
            continue
        color, marker = _TYPE_STYLE[kind]
        depth = [r["depth"] for r in chosen]
        for ax, value, chance in ((axes[0], "cosine", "chance_cosine"), (axes[1], "overlap", "chance")):
            ax.plot(depth, [r[value] for r in chosen], marker=marker, color=color, label=kind)
            ax.plot(depth, [r[chance] for r in chosen], linestyle="--", color=color, alpha=0.6)
    axes[0].set_title("cosine(Σ_t X_tX_tᵀ, Σ_t τ_tᵀτ_t)")
    axes[0].set_ylabel("Frobenius cosine")
    axes[1].set_title("overlap of the top-k eigen-subspaces")
    axes[1].set_ylabel("‖Q_dataᵀ Q_τ‖²_F / k")
    for ax in axes:
        ax.set_xlabel("block (depth)")
        ax.set_ylim(0, 1.02)
    axes[0].legend(fontsize=8, title="solid: measured, dashed: chance", title_fontsize=7)
    fig.tight_layout()
    return fig


def plot_sources(study: SourceStudy):
    """Left: normalized test accuracy per anchor — the anchor (bar), each seed's data-assisted and data-free BMM
    (dots). Right: each seed's paired 95% interval of data-free − data-assisted, with the ±margin band."""
    import matplotlib.pyplot as plt

    anchors = list(study.decisions)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    x = np.arange(len(anchors))
    axes[0].bar(x, [100 * study.anchors[a]["normalized"] for a in anchors], 0.6, color="#d0d0d0",
                label="anchor at α*")
    for offset, gram, color in ((-0.12, "data", "#4c72b0"), (0.12, "task_vector", "#dd8452")):
        for i, anchor in enumerate(anchors):
            values = [100 * r.summary["normalized"] for r in study.runs if (r.anchor, r.gram) == (anchor, gram)]
            axes[0].plot([i + offset] * len(values), values, "o", color=color,
                         label=f"BMM {GRAM_LABELS[gram]} (one dot per seed)" if i == 0 else None)
    values = [100 * study.anchors[a]["normalized"] for a in anchors] + [100 * r.summary["normalized"]
                                                                        for r in study.runs]
    axes[0].set_ylim(max(0.0, min(values) - 5), max(values) + 3)
    axes[0].set_xticks(x, anchors, fontsize=8)
    axes[0].set_ylabel("normalized test accuracy (%)")
    axes[0].legend(fontsize=7)
    labels, position = [], 0
    for anchor in anchors:
        for decision in study.decisions[anchor]:
            gap = decision["gap"]
            color = {True: "#55a868", False: "#c44e52", None: "#8c8c8c"}[decision["held"]]
            axes[1].errorbar([position], [gap["diff"]], yerr=[[gap["diff"] - gap["low"]], [gap["high"] - gap["diff"]]],
                             fmt="o", color=color, capsize=4)
            labels.append(f"{anchor}\nseed {decision['seed']}")
            position += 1
    axes[1].axhspan(-study.margin, study.margin, color="#55a868", alpha=0.12, label=f"±{study.margin:g} pts margin")
    axes[1].axhline(0, color="black", linewidth=0.8)
    axes[1].set_xticks(range(len(labels)), labels, fontsize=7)
    axes[1].set_ylabel("data-free − data-assisted (normalized pts)")
    axes[1].set_title("paired 95% interval per seed", fontsize=9)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig



def plot_temperature(run: PosteriorRun):
    """Validation accuracy, NLL and ECE of the sampled ensemble against the posterior temperature τ (T = 1 solid,
    temperature-scaled dotted), the point estimate dashed (T = 1) and dash-dotted (scaled)."""
    import matplotlib.pyplot as plt

    point = run.point_val.summary()
    point_scaled = rescaled(run.point_val, run.point_temperatures).summary()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    t = [r["temperature"] for r in run.sweep]
    for ax, key in zip(axes, ("accuracy", "nll", "ece")):
        factor = 100.0 if key == "accuracy" else 1.0
        ax.semilogx(t, [factor * r[key] for r in run.sweep], "o-", color="#4c72b0", label="sampled, T = 1")
        if key == "accuracy":
            ax.semilogx(t, [factor * r["member_accuracy"] for r in run.sweep], "x:", color="#8c8c8c",
                        label="single draws (mean)")
        else:
            ax.semilogx(t, [r[f"{key}_scaled"] for r in run.sweep], "s:", color="#4c72b0", label="sampled, scaled")
            ax.axhline(point_scaled[key], color="black", linestyle="-.", label="point, scaled")
        ax.axhline(factor * point[key], color="black", linestyle="--", label="point, T = 1")
        ax.axvline(run.chosen["temperature"], color="#c44e52", alpha=0.5,
                   label=f"chosen τ = {run.chosen['temperature']:g}")
        ax.set_xlabel("posterior temperature τ (σ² = τ·σ̂²)")
        ax.set_title(f"validation {key}" + (" (%)" if key == "accuracy" else ""))
    axes[1].legend(fontsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"seed {run.seed}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_reliability(run: PosteriorRun, title: str = "test split, pooled over tasks"):
    """Reliability diagrams of the point estimate and the sampled ensemble, at T = 1 (top) and temperature-scaled
    (bottom)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.6), sharex=True, sharey=True)
    panels = ((0, 0, "point estimate, T = 1", run.point_test),
              (0, 1, "sampled ensemble, T = 1", run.sampled_test),
              (1, 0, "point estimate, temperature-scaled", rescaled(run.point_test, run.point_temperatures)),
              (1, 1, "sampled ensemble, temperature-scaled", rescaled(run.sampled_test, run.sampled_temperatures)))
    for i, j, name, preds in panels:
        ax, data = axes[i, j], reliability(preds)
        edges = np.array(data["edges"])
        centres, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
        accuracy = np.nan_to_num(np.array(data["accuracy"], dtype=float))
        confidence = np.nan_to_num(np.array(data["confidence"], dtype=float))
        filled = np.array(data["count"]) > 0
        ax.bar(centres[filled], accuracy[filled], width * 0.95, color="#4c72b0", label="accuracy")
        ax.bar(centres[filled], (confidence - accuracy)[filled], width * 0.95, bottom=accuracy[filled],
               color="#c44e52", alpha=0.35, label="gap to confidence")
        ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="perfect calibration")
        ax.plot(centres, np.array(data["count"]) / max(1, data["examples"]), color="#8c8c8c", marker=".",
                linewidth=1, label="share of examples")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(f"{name}: pooled ECE {data['ece']:.4f}", fontsize=9)
    for ax in axes[1]:
        ax.set_xlabel("confidence (max predictive probability)")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy in the bin")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{title}, seed {run.seed}", fontsize=9)
    fig.tight_layout()
    return fig
