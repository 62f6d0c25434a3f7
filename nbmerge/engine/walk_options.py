"""The options of a merge's walk, declared once: the ``WalkOptions`` fields, the ``nbmerge merge`` flags and the
recipe's ``walk:`` keys all come from the fields below (a field with a ``flag`` is both a flag and a recipe key; the
others are set from Python only). Importing this module loads no torch, so the CLI builds its parser from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Optional

MATRIX_RULES = ("ndim2", "linear_only")
QKV_MODES = ("as_is", "split", "fused")
FALLBACKS = ("mean", "sum", "base")
COMPUTE_DTYPES = ("float64",)


def _option(default: Any = None, *, flag: Optional[str] = None, choices: Optional[tuple] = None,
            repeat: Optional[str] = None, help: str = "", factory=None):
    """A walk option; ``flag``: its ``nbmerge merge`` flag (and then a recipe key); ``choices``: its allowed values;
    ``repeat``: the metavar of a flag given once per item (a list, or ``REGEX=KIND`` pairs)."""
    metadata = {"flag": flag, "choices": choices, "repeat": repeat, "help": help}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class WalkOptions:
    """Structural options of a merge (how the model is walked) and where it computes.

    ``matrix_rule``/``fallback`` of ``None`` mean "the method's reference default".
    ``exclude``: regexes of keys kept at the base value and not checked against the experts.
    ``matrix_exclude``: regexes of 2-D keys sent to the fallback instead of the matrix path
    (the reference TSV/ISO/ACE codes exclude ``text_projection``).
    ``compute_dtype``: ``None`` computes in float32 (float64 where an input is float64); ``"float64"`` computes every
    floating tensor in float64, a reference for how much float32 round-off moves a merge (the GPU check uses it).
    ``low_rank``: Gram-based kernels (BMM, WUDI, ACE) build τᵀτ and τ·G of a LoRA adapter expert from its factors
    (the same values, r·d_in·(d_in + d_out) operations instead of d_out·d_in²); False forces the dense route.
    ``module_kinds``: ``{regex: kind}`` naming the attention/MLP linear modules of a layout the built-in names do not
    know (:mod:`nbmerge.engine.modules`); methods that regress only those modules (data-free BMM) read it.
    """

    matrix_rule: Optional[str] = _option(
        flag="--matrix-rule", choices=MATRIX_RULES,
        help="which tensors take the matrix path (default: the method's reference rule)")
    qkv: str = _option(
        "as_is", flag="--qkv", choices=QKV_MODES,
        help="attention projections: as stored, a fused in_proj split into q/k/v, or q/k/v stacked")
    fallback: Optional[str] = _option(
        flag="--fallback", choices=FALLBACKS, help="non-matrix tensors (default: the method's reference fallback)")
    exclude: tuple[str, ...] = _option(
        (), flag="--exclude", repeat="REGEX", help="keys kept at the base value and not checked against the experts")
    matrix_exclude: tuple[str, ...] = _option(
        (), flag="--matrix-exclude", repeat="REGEX", help="2-D keys sent to the fallback instead of the matrix path")
    module_params: Mapping[str, Mapping[str, Any]] = _option(factory=dict)
    device: str = _option("cpu", flag="--device", help="auto | cpu | cuda[:N]")
    check_finite: bool = _option(True)
    compute_dtype: Optional[str] = _option(
        flag="--compute-dtype", choices=COMPUTE_DTYPES,
        help="compute every tensor in float64 (default: float32, float64 where an input is float64): a reference for "
             "float32 round-off, and room for task vectors near float32's largest value")
    low_rank: bool = _option(True)
    module_kinds: Mapping[str, str] = _option(
        factory=dict, flag="--module-kind", repeat="REGEX=KIND",
        help="name the attention/MLP linear modules of a layout nbmerge does not know (KIND: attn_in, attn_out, "
             "mlp_in, mlp_out); data-free BMM regresses only such modules")

    def __post_init__(self):
        from ..device import resolve_device
        from ..errors import MethodError
        from .modules import check_module_kinds

        for name, allowed in (("matrix_rule", MATRIX_RULES), ("fallback", FALLBACKS),
                              ("compute_dtype", COMPUTE_DTYPES), ("qkv", QKV_MODES)):
            value = getattr(self, name)
            if not (value in allowed or (value is None and name != "qkv")):
                raise MethodError(f"{name} must be {'None or ' if name != 'qkv' else ''}one of {allowed}, "
                                  f"got {value!r}")
        object.__setattr__(self, "exclude", tuple(self.exclude))
        object.__setattr__(self, "matrix_exclude", tuple(self.matrix_exclude))
        object.__setattr__(self, "module_kinds", check_module_kinds(self.module_kinds))
        object.__setattr__(self, "device", resolve_device(self.device))


def flagged() -> list:
    """The fields that are ``nbmerge merge`` flags and recipe ``walk:`` keys, in declaration order."""
    return [f for f in fields(WalkOptions) if f.metadata.get("flag")]


RECIPE_KEYS = frozenset(f.name for f in flagged())   # the keys a recipe's ``walk:`` may set


def add_arguments(parser) -> None:
    """Add every flagged walk option to ``parser`` (``nbmerge merge``); ``--device`` defaults to ``auto``."""
    for f in flagged():
        meta = f.metadata
        kwargs: dict[str, Any] = {"help": meta["help"]}
        if meta["repeat"]:
            kwargs.update(action="append", default=[], metavar=meta["repeat"])
        else:
            kwargs.update(default="auto" if f.name == "device" else f.default)
            if meta["choices"]:
                kwargs["choices"] = list(meta["choices"])
        parser.add_argument(meta["flag"], dest=f.name, **kwargs)


def from_arguments(args, pairs) -> dict[str, Any]:
    """The recipe ``walk:`` mapping of parsed flags; ``pairs`` turns ``--module-kind REGEX=KIND`` items into a
    mapping."""
    walk = {}
    for f in flagged():
        value = getattr(args, f.name)
        if f.name == "module_kinds":
            value = pairs(value)
        elif f.metadata["repeat"]:
            value = list(value)
        walk[f.name] = value
    return walk
