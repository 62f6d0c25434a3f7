"""The figures of ``notebooks/20_bmm_benchmark.ipynb``: accuracy per anchor, and accuracy against the task count."""

from __future__ import annotations

from statistics import mean

import numpy as np

from ..tune.anchors import VARIANTS
from ..tune.benchmark import SuiteResult


def plot_accuracy_per_anchor(results: dict[str, SuiteResult]):
    """Per suite: each tuned anchor, BMM-data and BMM-free (mean over seeds, bars from min to max); the experts'
    average as the ceiling."""
    import matplotlib.pyplot as plt

    suites = list(results)
    fig, axes = plt.subplots(1, len(suites), figsize=(4.2 * len(suites) + 1, 3.8), squeeze=False, sharey=True)
    for ax, suite in zip(axes[0], suites):
        r = results[suite]
        anchors = list(r.anchors)
        variants = list(dict.fromkeys(x.variant for x in r.runs))
        kinds = [("anchor", "anchor (α*)", "#bbbbbb")] + [(v, f"BMM-{v}", c) for v, c in (("data", "#1f77b4"),
                                                                                        ("free", "#ff7f0e"))
                                                       if v in variants]
        width = 0.8 / len(kinds)
        x = np.arange(len(anchors))
        low = 100.0
        for i, (kind, label, colour) in enumerate(kinds):
            if kind == "anchor":
                values = [100 * r.anchors[a].test.mean_accuracy() for a in anchors]
                err = None
            else:
                accs = [[100 * x_.test.mean_accuracy() for x_ in r.runs_of(a, kind)] or [np.nan] for a in anchors]
                values = [float(np.mean(v)) for v in accs]
                err = np.array([[m - min(v) for m, v in zip(values, accs)], [max(v) - m for m, v in zip(values, accs)]])
            low = min(low, np.nanmin(values))
            ax.bar(x + (i - (len(kinds) - 1) / 2) * width, values, width, yerr=err, capsize=2, label=label,
                   color=colour)
        ax.axhline(100 * mean(r.expert[t] for t in r.tasks), color="black", linestyle="--", linewidth=1,
                   label="experts' average")
        ax.set_xticks(x, anchors, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"{suite} ({len(r.tasks)} tasks)")
        ax.set_ylim(max(0, low - 5), None)
    axes[0][0].set_ylabel("mean test accuracy (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


def plot_task_count(results: dict[str, SuiteResult]):
    """Normalized test accuracy against the number of tasks: per anchor, the tuned anchor (dotted) and BMM per
    variant (mean over seeds)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    anchors = list(dict.fromkeys(a for r in results.values() for a in r.anchors))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = {"anchor": ":", "data": "-", "free": "--"}
    for i, anchor in enumerate(anchors):
        colour = colours[i % len(colours)]
        points = sorted((len(r.tasks), 100 * r.anchors[anchor].test.normalized(r.expert))
                        for r in results.values() if anchor in r.anchors)
        ax.plot(*zip(*points), linestyle=styles["anchor"], marker=".", color=colour)
        for variant in VARIANTS:
            points = sorted((len(r.tasks), 100 * mean(x.test.normalized(r.expert) for x in r.runs_of(anchor, variant)))
                            for r in results.values() if r.runs_of(anchor, variant))
            if points:
                ax.plot(*zip(*points), linestyle=styles[variant], marker="o", color=colour)
    handles = [Line2D([], [], color=colours[i % len(colours)], label=a) for i, a in enumerate(anchors)]
    handles += [Line2D([], [], color="black", linestyle=s, label=("anchor (α*)" if k == "anchor" else f"BMM-{k}"))
                for k, s in styles.items()]
    ax.axhline(100, color="black", linewidth=0.8)
    ax.set_xticks(sorted({len(r.tasks) for r in results.values()}))
    ax.set_xlabel("number of merged tasks")
    ax.set_ylabel("normalized test accuracy (%)")
    ax.set_title("merging more tasks (100% = each expert on its own task)")
    ax.legend(handles=handles, fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
