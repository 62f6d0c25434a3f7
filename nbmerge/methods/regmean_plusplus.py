"""RegMean++ (Nguyen et al., arXiv 2508.03121): RegMean whose Grams see the merged earlier blocks."""

from __future__ import annotations

import os

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import walk_merge
from .regmean import RULE

RECORDED = "sequential"  # the ``recorded`` metadata of Gram files written by ``nbmerge stats --sequential``


def _recorded(path) -> dict:
    from safetensors import safe_open

    try:
        with safe_open(os.fspath(path), framework="pt", device="cpu") as handle:
            return dict(handle.metadata() or {})
    except Exception:  # noqa: BLE001 - an unreadable file is reported by the loader, with its own message
        return {}


def check_sequential(grams, offdiag_scale: float) -> None:
    """Gram files must come from ``nbmerge stats --sequential`` with the same shrinkage: plain RegMean Grams would
    silently give plain RegMean. In-memory Grams carry no record and are taken as given."""
    for path in grams or ():
        if not isinstance(path, (str, os.PathLike)):
            continue
        meta = _recorded(path)
        if meta.get("recorded") != RECORDED:
            raise MethodError(f"regmean_plusplus: {path} holds Grams recorded on the expert alone (plain RegMean's); "
                              "RegMean++ needs Grams recorded through the merged earlier blocks: "
                              "nbmerge stats --sequential --suite SUITE --out FOLDER")
        if "offdiag_scale" in meta and float(meta["offdiag_scale"]) != float(offdiag_scale):
            raise MethodError(f"regmean_plusplus: {path} was recorded with offdiag_scale {meta['offdiag_scale']} "
                              f"(the merged blocks it saw), but this merge uses {offdiag_scale}: record again with "
                              f"--offdiag-scale {offdiag_scale}, or merge with offdiag_scale={meta['offdiag_scale']}")


# RegMean's rule on RegMean++'s Grams: block l's merge reads only block l's Grams, so merging with the finished
# sequential Grams equals merging block by block (nbmerge.pools.sequential records them).
@register("regmean_plusplus", paper="https://arxiv.org/abs/2508.03121", needs=("grams",),
          help={"offdiag_scale": "RegMean α: off-diagonal Gram entries are multiplied by it; must equal the value "
                                 "the Grams were recorded with (FusionBench's CLIP setting 0.95)",
                "scale": "global coefficient α on every tensor (1 reproduces RegMean++)"})
def regmean_plusplus(base, experts, *, grams, offdiag_scale: float = 0.95, scale: float = 1.0, walk=None,
                     stream=False):
    """RegMean++: RegMean with each block's Grams recorded on inputs that passed through the merged earlier blocks
    (``nbmerge stats --sequential``), so each layer is fit to what the merged model feeds it."""
    check_sequential(grams, offdiag_scale)
    return walk_merge(base, experts, RULE, params={"offdiag_scale": offdiag_scale}, scale=scale, walk=walk,
                      stream=stream, grams=grams)
