"""The figures of ``notebooks/21_bmm_calibration.ipynb`` (the τ sweep, reliability diagrams, the verdicts'
intervals) and ``notebooks/22_bmm_datafree.ipynb`` (Gram alignment across depth, data-free against data-assisted
BMM). Each returns the figure; the notebooks show it with ``experiments.common.figure(fig, alt)``. Error bars are
the intervals the verdicts use."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..evaluate.calibration import reliability, rescaled
from ..engine.modules import MODULE_TYPES
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


def plot_sources(study: SourceStudy, decision=None):
    """Left: normalized test accuracy per anchor and seed: the anchor at its α* (grey), data-assisted and data-free
    BMM (dots). Right: the verdict's interval of data-free − data-assisted over seeds × test examples (the error
    bar), each seed's own estimate as a dot, the ±margin band."""
    import matplotlib.pyplot as plt

    from .bmm_datafree import equivalence_decision

    decision = decision or equivalence_decision(study)[0]
    anchors = list(study.decisions)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [2, 1]})
    labels, position, values = [], 0, []
    for anchor in anchors:
        for d in study.decisions[anchor]:
            seed = d["seed"]
            anchor_value = 100 * study.anchors[anchor][seed]["normalized"]
            axes[0].bar([position], [anchor_value], 0.6, color="#d0d0d0", label="anchor at α*" if position == 0 else None)
            values.append(anchor_value)
            for offset, gram, color in ((-0.12, "data", "#4c72b0"), (0.12, "free", "#dd8452")):
                value = 100 * study.run(anchor, gram, seed).summary["normalized"]
                values.append(value)
                axes[0].plot([position + offset], [value], "o", color=color,
                             label=f"BMM {GRAM_LABELS[gram]}" if position == 0 else None)
            labels.append(f"{anchor}\nseed {seed}")
            position += 1
    if values:
        axes[0].set_ylim(max(0.0, min(values) - 5), max(values) + 3)
    axes[0].set_xticks(range(len(labels)), labels, fontsize=7)
    axes[0].set_ylabel("normalized test accuracy (%)")
    axes[0].legend(fontsize=7)
    gaps = [d["gap"]["diff"] for ds in study.decisions.values() for d in ds if not d["why"]]
    axes[1].plot(np.full(len(gaps), -0.15), gaps, "o", color="#8c8c8c", label="one seed × anchor (estimate)")
    if decision.outcome != "not tested":
        color = {"held": "#55a868", "contradicted": "#c44e52"}.get(decision.outcome, "#8c8c8c")
        lo, hi = decision.interval
        axes[1].errorbar([0.15], [decision.estimate], yerr=[[decision.estimate - lo], [hi - decision.estimate]],
                         fmt="s", color=color, capsize=5, label=f"verdict's 95% interval: {decision.outcome}")
    axes[1].axhspan(-study.margin, study.margin, color="#55a868", alpha=0.12, label=f"±{study.margin:g} pts margin")
    axes[1].axhline(0, color="black", linewidth=0.8)
    axes[1].set_xlim(-0.6, 0.6)
    axes[1].set_xticks([])
    axes[1].set_ylabel("data-free − data-assisted (normalized pts)")
    axes[1].set_title("B5a over seeds × test examples", fontsize=9)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_calibration_verdicts(found: dict):
    """The parts of B6/B6s with the intervals the verdicts use (over seeds × test examples) against their
    thresholds: the ECE reduction at T = 1 and temperature-scaled (ECE points, left), normalized accuracy sampled −
    point against −margin (right)."""
    import matplotlib.pyplot as plt

    from .bmm_calibration import PART_NAMES

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), gridspec_kw={"width_ratios": [2, 1]})
    colors = {"held": "#55a868", "contradicted": "#c44e52", "inconclusive": "#8c8c8c"}
    for ax, names in ((axes[0], ("ece_raw", "ece_scaled")), (axes[1], ("accuracy",))):
        for i, name in enumerate(names):
            d = found["parts"][name]
            if d.outcome == "not tested":
                ax.text(i, 0, "not tested", ha="center", fontsize=8)
                continue
            lo, hi = d.interval
            ax.errorbar([i], [d.estimate], yerr=[[d.estimate - lo], [hi - d.estimate]], fmt="o", capsize=5,
                        color=colors[d.outcome], label=d.outcome)
            ax.hlines(d.threshold, i - 0.3, i + 0.3, color="black", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(names)), [PART_NAMES[n].replace(" (", "\n(") for n in names], fontsize=7)
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.axhline(0, color="black", linewidth=0.5, alpha=0.4)
    axes[0].set_ylabel("ECE points (larger: sampling calibrates better)")
    axes[1].set_ylabel("normalized accuracy points")
    axes[0].set_title("ECE reduction, point − sampled; threshold 0 dashed", fontsize=9)
    axes[1].set_title("accuracy kept? threshold −margin dashed", fontsize=9)
    fig.tight_layout()
    return fig


def plot_temperature(run: PosteriorRun, margin: float = 1.0):
    """Validation accuracy, NLL and ECE of the sampled ensemble against the posterior temperature τ (T = 1 solid,
    temperature-scaled dotted), the point estimate dashed (T = 1) and dash-dotted (scaled); the eligibility line
    (the point estimate's accuracy − ``margin`` points) and the chosen τ (when one was eligible)."""
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
        if run.chosen["eligible_count"]:
            ax.axvline(run.chosen["temperature"], color="#c44e52", alpha=0.5,
                       label=f"chosen τ = {run.chosen['temperature']:g}")
        if key == "accuracy":
            ax.axhline(factor * point[key] - margin, color="#c44e52", linestyle=":", linewidth=1,
                       label="eligibility: point − margin")
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
