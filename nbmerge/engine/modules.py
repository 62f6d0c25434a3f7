"""Module names: which tensors of a transformer are the linear modules of its blocks, their function (attention
in/out, MLP in/out) and depth, and the tying groups BMM's search tunes one value per."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Optional

from ..errors import MethodError

MODULE_TYPES = ("attn_in", "attn_out", "mlp_in", "mlp_out")

# The four functional groups of the paper's tying, for open_clip, HF CLIP/ViT, Llama-style and BERT-style names. Only
# weights stored (d_out, d_in) as nn.Linear does. GPT-2's Conv1D stores (d_in, d_out): the language-model pools
# store its c_attn/c_proj/c_fc weights transposed (nbmerge.models.lm), the layout these groups assume; in a raw
# GPT-2 folder data-free BMM regresses them over their output side, and data Grams do not fit (refused by shape).
# Order matters: attention-out before MLP-out.
_MODULE_PATTERNS = (
    ("attn_in", re.compile(r"(attn\.in_proj_weight|\.[qkv]_proj\.weight|attention\.self\.(query|key|value)\.weight"
                           r"|attn\.qkv\.weight|attn\.c_attn\.weight)$")),
    ("attn_out", re.compile(r"(attn\.out_proj\.weight|\.o_proj\.weight|attention\.output\.dense\.weight"
                            r"|attn\.proj\.weight|attn\.c_proj\.weight)$")),
    ("mlp_in", re.compile(r"(mlp\.c_fc\.weight|(^|\.)fc1\.weight|\.(gate|up)_proj\.weight|intermediate\.dense\.weight"
                          r"|(^|\.)linear1\.weight)$")),
    ("mlp_out", re.compile(r"(mlp\.c_proj\.weight|(^|\.)fc2\.weight|\.down_proj\.weight"
                           r"|(?<!attention\.)output\.dense\.weight|(^|\.)linear2\.weight)$")),
)
# (PyTorch's own nn.TransformerEncoderLayer names its MLP linear1/linear2 and its attention self_attn.in_proj_weight /
# self_attn.out_proj.) Any other layout: ``module_kinds`` (WalkOptions, a recipe's walk block, --module-kind) maps
# regexes of keys to these four kinds, tried before the built-in names.
_DEPTH = re.compile(r"^(?P<stack>(?:.*?\.)?(?:resblocks|layers|layer|blocks|h))\.(?P<index>\d+)\.")


def check_module_kinds(kinds: Optional[Mapping[str, str]]) -> dict[str, str]:
    """A user's ``{regex: kind}`` as a plain dict, every regex compiled and every kind one of :data:`MODULE_TYPES`."""
    if not kinds:
        return {}
    if not isinstance(kinds, Mapping):
        raise MethodError(f"module_kinds must map key regexes to kinds ({', '.join(MODULE_TYPES)}), got {kinds!r}")
    for pattern, kind in kinds.items():
        if kind not in MODULE_TYPES:
            raise MethodError(f"module_kinds: {pattern!r} maps to {kind!r}; kinds are {', '.join(MODULE_TYPES)}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise MethodError(f"module_kinds: {pattern!r} is not a regular expression ({exc})") from None
    return dict(kinds)


def module_type(key: str, kinds: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """``attn_in`` | ``attn_out`` | ``mlp_in`` | ``mlp_out`` for a transformer linear weight, else None.

    ``kinds``: the user's ``{regex: kind}``, searched first (the first matching regex wins). Positional/token
    embeddings, ``visual.proj``, ``visual_projection``, conv patch embeddings, biases and norms are not linear
    modules of a block: BMM gives them the anchor's value.
    """
    for pattern, kind in (kinds or {}).items():
        if re.search(pattern, key):
            return kind
    for name, pattern in _MODULE_PATTERNS:
        if pattern.search(key):
            return name
    return None


def module_depth(key: str) -> Optional[int]:
    """The block index in ``...resblocks.<i>.``, ``...layers.<i>.``, ``...layer.<i>.``, ``...blocks.<i>.``."""
    match = _DEPTH.match(key)
    return int(match["index"]) if match else None


def module_groups(keys: Iterable[str], depth_bins: int = 0,
                  kinds: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """Map every linear-module key to its tying group; other keys are left out (they take the anchor).

    ``depth_bins`` = 0 or 1: the four groups ``attn_in``, ``attn_out``, ``mlp_in``, ``mlp_out`` (the paper's tying).
    ``depth_bins`` = n ≥ 2: each group split into n equal depth bins, named ``attn_in:0`` (lowest blocks) ...
    ``attn_in:{n-1}``; n = 2 is the lower/upper-half split. Bins are counted within each stack of blocks (a CLIP's
    image and text towers are binned separately but share group names).
    """
    if depth_bins < 0:
        raise MethodError(f"module_groups: depth_bins must be >= 0, got {depth_bins}")
    typed = {key: module_type(key, kinds) for key in keys}
    typed = {key: kind for key, kind in typed.items() if kind is not None}
    if depth_bins <= 1:
        return typed
    stacks: dict[str, int] = {}
    for key in typed:
        match = _DEPTH.match(key)
        if match:
            stacks[match["stack"]] = max(stacks.get(match["stack"], 0), int(match["index"]) + 1)
    groups = {}
    for key, kind in typed.items():
        match = _DEPTH.match(key)
        depth_bin = int(match["index"]) * depth_bins // stacks[match["stack"]] if match else 0
        groups[key] = f"{kind}:{depth_bin}"
    return groups


def group_module_params(groups: Mapping[str, str], values: Mapping[str, float],
                        name: str = "log10_rho") -> dict[str, dict[str, float]]:
    """``WalkOptions.module_params`` that give every key of a group the group's value (BO tunes ``{group: value}``)."""
    missing = sorted(set(groups.values()) - set(values))
    if missing:
        raise MethodError(f"no {name} given for group(s) {missing}")
    return {key: {name: values[group]} for key, group in groups.items()}


def is_linear_module(key: str, shape, kinds: Optional[Mapping[str, str]] = None) -> bool:
    """A block's linear weight, by name (or the user's ``kinds``) and by being a matrix (what data-free BMM
    regresses)."""
    return len(shape) == 2 and module_type(key, kinds) is not None


def unrecognised_matrices(keys_and_shapes: Iterable[tuple[str, Sequence[int]]], recognised: Iterable[str],
                          what: str) -> Optional[str]:
    """A warning naming the weight matrices (2-D, ``*weight``, not embeddings) that a method which only regresses
    known linear modules leaves at ``what``, or None when it recognised them all. In a model with numbered blocks
    only the blocks' matrices count: a projection, pooler or head outside them is expected to stay."""
    recognised = set(recognised)
    matrices = [key for key, shape in keys_and_shapes if len(shape) == 2 and key.endswith("weight")
                and "embed" not in key.lower()]
    blocks = any(module_depth(key) is not None for key in matrices)
    left = [key for key in matrices if key not in recognised and (not blocks or module_depth(key) is not None)]
    if not left:
        return None
    shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
    return (f"{len(left)} weight matrices are not recognised as attention/MLP linear modules and keep {what}: "
            f"{shown} (recognised: {len(recognised)}). If they are linear layers of the blocks, name their kind "
            f"with module_kinds (--module-kind REGEX=KIND, a recipe's walk.module_kinds; kinds: "
            f"{', '.join(MODULE_TYPES)}); if not, this is expected (projections, heads)")
