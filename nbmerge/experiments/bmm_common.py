"""What the BMM benchmark (``20_bmm_benchmark``) and search (``23_bmm_search``) notebooks share: the paper they
test, the checks of their common search settings, and how their evidence strings write an interval."""

from __future__ import annotations

from ..errors import NbmergeError

SOURCE = "BMM, arXiv 2605.12843"


def check_search_settings(config) -> None:
    """``budget``, ``n_initial``, ``gram_examples``, ``wudi_steps``, ``val_examples`` and ``depth_bins`` of a BMM
    notebook's config; the error names the bad parameter and its value."""
    if config.budget < 1:
        raise NbmergeError(f"parameter 'budget' must be >= 1, got {config.budget}")
    if config.n_initial is not None and (isinstance(config.n_initial, bool) or not isinstance(config.n_initial, int)
                                         or not 1 <= config.n_initial <= config.budget):
        raise NbmergeError(f"parameter 'n_initial' must be in [1, budget], got {config.n_initial}")
    if config.gram_examples < 1:
        raise NbmergeError(f"parameter 'gram_examples' must be >= 1, got {config.gram_examples}")
    if config.wudi_steps < 1:
        raise NbmergeError(f"parameter 'wudi_steps' must be >= 1, got {config.wudi_steps}")
    if config.val_examples < 0:
        raise NbmergeError(f"parameter 'val_examples' must be >= 0, got {config.val_examples}")
    if config.depth_bins < 0:
        raise NbmergeError(f"parameter 'depth_bins' must be >= 0, got {config.depth_bins}")


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
