"""What the BMM benchmark (``20_bmm_benchmark``) and search (``23_bmm_search``) notebooks share: the paper they
test and how their evidence strings write an interval (their common search settings, such as ``budget`` and
``n_initial``, are checked by the rules their configs declare: ``nbmerge.experiments.rules``)."""

from __future__ import annotations

WEAK_ANCHORS = ("task_arithmetic", "ties")   # the paper's "weak anchors (TA, TIES)"

SOURCE = "BMM, arXiv 2605.12843"


def fmt_interval(interval: dict, unit: str = " pts", scale: float = 1.0, digits: int = 2) -> str:
    """``+d [+low, +high] pts`` of an interval dict (``protocol.beats``'s ``interval``)."""
    f = f"{{:+.{digits}f}}"
    return (f"{f.format(scale * interval['diff'])} [{f.format(scale * interval['low'])}, "
            f"{f.format(scale * interval['high'])}]{unit}")


def fmt_pct(interval: dict) -> str:
    """A relative-gain interval (fractions) in percent."""
    return f"{100 * interval['diff']:+.1f}% [{100 * interval['low']:+.1f}%, {100 * interval['high']:+.1f}%]"


def per_seed(decisions: list[dict]) -> str:
    """Each seed's interval of a list of ``protocol.beats`` decisions (with ``seed``), and why one was not tested."""
    return ", ".join(f"seed {d['seed']} {fmt_interval(d['interval'])}"
                     + (f" (not tested: {d['why']})" if d["why"] else "") for d in decisions)


# ------------------------------------------------------------------------------------------ decisions over parts



def combine(parts: dict, what: str = "part"):
    """One decision for a claim over several parts (anchors, comparators, suites, accuracy and time):
    :func:`nbmerge.evaluate.verdicts.combine`."""
    from ..evaluate.verdicts import combine as combine_parts

    return combine_parts(parts, what)


def part_lines(parts: dict) -> str:
    """Each part's decision as one line: ``label: decision.text()``."""
    return " | ".join(f"{k}: {d.text()}" for k, d in parts.items())


def seeded_accuracy(per_seed, n_boot: int = 2000, seed: int = 0):
    """Mean-over-tasks test accuracy of several models at several seeds, with a two-level bootstrap: each replicate
    draws the seeds with replacement, then the test examples within each task (the same indices for every seed and
    model: one test set), and averages each model's accuracy over the drawn seeds (``verdicts.hierarchical_samples``'
    scheme, for statistics that are not a mean of per-example differences, such as a relative gain).

    ``per_seed[s][m]``: model ``m``'s :class:`~nbmerge.evaluate.protocol.Predictions` at seed ``s``. Returns
    ``(point [M], samples [M, n_boot])`` as fractions."""
    import numpy as np

    s, m = len(per_seed), len(per_seed[0])
    tasks = per_seed[0][0].tasks
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, s, size=(n_boot, s)) if s > 1 else np.zeros((n_boot, 1), dtype=int)
    point = np.zeros(m)
    samples = np.zeros((m, n_boot))
    for task in tasks:
        correct = np.stack([[p.correct(task).astype(np.float64) for p in row] for row in per_seed])   # [S, M, n]
        n = correct.shape[2]
        point += correct.mean(axis=(0, 2))
        idx = rng.integers(0, n, size=(n_boot, n))
        counts = np.zeros((n_boot, n))
        np.add.at(counts, (np.arange(n_boot)[:, None], idx), 1.0)
        acc = correct.reshape(s * m, n) @ counts.T / n                  # [S·M, B]
        acc = acc.reshape(s, m, n_boot)
        drawn = acc[seeds.T, :, np.arange(n_boot)[None, :]]             # [S, B, M]
        samples += drawn.mean(axis=0).T
    return point / len(tasks), samples / len(tasks)
