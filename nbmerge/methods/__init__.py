"""The registered merge methods, one module each; importing this package registers them all."""

from ..engine.registry import Method, all_methods, get_method
from . import (  # noqa: F401
    ace, adamerging, average, bmm, breadcrumbs, cart, consensus, dare, della, emr, fisher, iso_c, iso_cts, karcher, knots,
    localize_stitch, model_stock, mog_em, pcb, regmean, regmean_plusplus, slerp, tall, task_arithmetic, ties, tsv,
    tsv_c, wudi, wudi_closed_form,
)

__all__ = ["Method", "all_methods", "get_method"]
