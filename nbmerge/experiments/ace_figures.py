"""The figures and tables of ``notebooks/10_ace.ipynb``: accuracy against the number of tasks, the spread of ACE's
heterogeneity γ against its gate, and the ablation table."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .ace import setting
from .common import bold


def plot_task_count(rows: list[dict]):
    """Normalized accuracy against the number of tasks, one line per method (needs two task counts or more)."""
    import matplotlib.pyplot as plt

    if len({r["tasks"] for r in rows}) < 2:
        raise ValueError("plot_task_count: one task count is no trend (the notebook prints why it has no plot)")

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for method in dict.fromkeys(r["method"] for r in rows):
        points = sorted((r["tasks"], 100 * r["normalized"]) for r in rows if r["method"] == method)
        style = {"linewidth": 2.5, "color": "black"} if method == "ace" else {"alpha": 0.8}
        ax.plot(*zip(*points), marker="o", label=method, **style)
    ax.set_xlabel("number of tasks")
    ax.set_ylabel("normalized accuracy (%)")
    ax.set_title("merging more tasks (α of every method tuned on validation)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def plot_gamma(gates: Sequence[tuple[str, dict]], threshold: float = 0.3):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    values = [np.array([g for g in gate["gamma"].values() if np.isfinite(g) and g > 0]) for _, gate in gates]
    low = min((v.min() for v in values if len(v)), default=1e-3)
    high = max(max((v.max() for v in values if len(v)), default=threshold), threshold * 2)
    bins = np.geomspace(max(low, 1e-6), high, 30)
    for (label, _), v in zip(gates, values):
        ax.hist(v, bins=bins, alpha=0.6, label=label)
    ax.axvline(threshold, color="red", linestyle="--", label="gate γ = 0.3")
    ax.set_xscale("log")
    ax.set_xlabel("heterogeneity γ per matrix")
    ax.set_ylabel("matrices")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def ladder_rows(*results: dict) -> list[dict]:
    return [{"experts": setting(r["experts"]), **{k: v for k, v in step.items() if k != "gated"}}
            for r in results for step in r["steps"]] + \
        [{"experts": setting(r["experts"]), "step": label, "alpha": run.row()["alpha"], "mean": run.row()["mean"],
          "normalized": run.row()["normalized"]}
         for r in results for label, run in r["runs"].items() if label in ("forced on", "gated components off")]


def validation_rows(runs: dict) -> list[dict]:
    """Per method: its validation accuracy at every α of its grid, the chosen α in bold (the α-curve as a table)."""
    rows = []
    for label, run in runs.items():
        row = {"method": label}
        for point in run.tuned.curve:
            value = f"{point['val_accuracy']:.1%}"
            row[f"α = {point['alpha']:g}"] = bold(value) if point["alpha"] == run.tuned.alpha else value
        rows.append(row)
    return rows


def plot_bootstrap(draws: np.ndarray, interval, title: str):
    """The bootstrap draws of A − B (points) with the point estimate and the 95% interval marked; ``interval`` is a
    :class:`nbmerge.evaluate.verdicts.Decision` (or anything with ``diff``, ``low`` and ``high``)."""
    import matplotlib.pyplot as plt
    from types import SimpleNamespace

    if hasattr(interval, "estimate"):
        interval = SimpleNamespace(diff=interval.estimate, low=interval.interval[0], high=interval.interval[1])

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.hist(draws, bins=40, color="#4c72b0", alpha=0.7)
    ax.axvline(interval.diff, color="black", label=f"difference {interval.diff:+.2f}")
    for end in (interval.low, interval.high):
        ax.axvline(end, color="red", linestyle="--")
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.plot([], [], "r--", label=f"95% interval [{interval.low:+.2f}, {interval.high:+.2f}]")
    ax.set_xlabel("normalized accuracy difference (points)")
    ax.set_ylabel("bootstrap draws")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
