"""The figures of ``notebooks/20_bmm_benchmark.ipynb``: BMM's gain over each anchor with the intervals that
decide B1, and accuracy against the task count (only with several suites: no one-point trend)."""

from __future__ import annotations

from statistics import mean

import numpy as np

from ..errors import NbmergeError
from ..tune.study import VARIANTS
from ..tune.benchmark import SuiteResult


def plot_gains(results: dict[str, SuiteResult]):
    """Per suite: BMM − each anchor (at α*, and at α*·s* when the scale was searched) in normalized test points, per
    variant; the error bars are the 95% intervals over seeds × test examples that decide B1 (``verdicts.compare``).
    Differences are drawn from 0, so the bars' lengths are the gains themselves (no cut axis)."""
    import matplotlib.pyplot as plt

    from .bmm_benchmark import comparison_table

    rows = comparison_table(results)
    suites = list(results)
    fig, axes = plt.subplots(1, len(suites), figsize=(4.6 * len(suites) + 1, 3.9), squeeze=False, sharey=True)
    colours = {"data": "#1f77b4", "free": "#ff7f0e"}
    for ax, suite in zip(axes[0], suites):
        sel = [r for r in rows if r["suite"] == suite and r["estimate"] is not None]
        labels = list(dict.fromkeys(f"{r['anchor']} at {r['at']}" for r in sel))
        variants = list(dict.fromkeys(r["variant"] for r in sel))
        width = 0.8 / max(1, len(variants))
        x = np.arange(len(labels))
        for i, v in enumerate(variants):
            by = {f"{r['anchor']} at {r['at']}": r for r in sel if r["variant"] == v}
            est = np.array([by[k]["estimate"] if k in by else np.nan for k in labels])
            low = np.array([by[k]["low"] if k in by else np.nan for k in labels])
            high = np.array([by[k]["high"] if k in by else np.nan for k in labels])
            ax.bar(x + (i - (len(variants) - 1) / 2) * width, est, width, yerr=[est - low, high - est], capsize=3,
                   color=colours.get(v), label=f"BMM-{v} − anchor")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{suite} ({len(results[suite].tasks)} tasks)")
    axes[0][0].set_ylabel("BMM − anchor, normalized test acc. (points)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def gains_alt(results: dict[str, SuiteResult]) -> str:
    """Alt text of :func:`plot_gains`: what it shows and its numbers."""
    from .bmm_benchmark import comparison_table

    rows = comparison_table(results)
    key = "BMM − anchor (normalized pts), seeds × examples"
    parts = "; ".join(f"BMM-{r['variant']} − {r['anchor']} at {r['at']}: {r[key]} ({r['outcome']})" for r in rows)
    return ("Bar chart of BMM's gain over each tuned anchor in normalized test accuracy points, one bar per anchor "
            "and variant, drawn from zero, with the 95% intervals over seeds and test examples that decide claims "
            f"B1a and B1b as error bars. {parts}.")


def plot_task_count(results: dict[str, SuiteResult]):
    """Normalized test accuracy against the number of tasks: per anchor, the tuned anchor (dotted) and BMM per
    variant (mean over seeds). Only for two suites or more (no one-point trend)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if len({len(r.tasks) for r in results.values()}) < 2:
        raise NbmergeError("plot_task_count needs suites of at least two task counts (no one-point trend)")
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    anchors = list(dict.fromkeys(a for r in results.values() for a in r.anchors))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = {"anchor": ":", "data": "-", "free": "--"}
    for i, anchor in enumerate(anchors):
        colour = colours[i % len(colours)]
        points = sorted((len(r.tasks), 100 * mean(a.test.normalized(r.expert) for a in r.anchors[anchor].values()))
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


def task_count_alt(results: dict[str, SuiteResult]) -> str:
    counts = sorted({len(r.tasks) for r in results.values()})
    return ("Line chart of normalized test accuracy against the number of merged tasks "
            f"({', '.join(map(str, counts))}): per anchor, the tuned anchor dotted and BMM per variant (mean over "
            "seeds) solid or dashed; 100% is each expert on its own task.")
