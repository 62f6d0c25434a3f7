"""The registered merge methods, one module each; importing this package registers them all."""

from ..registry import Method, all_methods, get_method
from . import ace, average, bmm, dare, fisher, iso_c, iso_cts, regmean, task_arithmetic, ties, tsv, wudi  # noqa: F401

__all__ = ["Method", "all_methods", "get_method"]
