"""Every merge method: one file each, registered by importing it here."""

from . import ace, average, bmm, dare, fisher, iso_c, iso_cts, regmean, task_arithmetic, ties, tsv, wudi  # noqa: F401
