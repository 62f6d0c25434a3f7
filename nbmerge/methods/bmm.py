"""BMM — Bayesian Model Merging (Li, Han, Su, Ji, arXiv 2605.12843), inner level: anchor-prior regression.

Per linear module (docs/methods.md, BMM), with the rows of U under the prior N(U₀, (σ²/λ)I) centred on an anchor
merge U₀ and the likelihood of the experts' outputs on their inputs:

    U* = W₀ + (Σ_t τ_t G_t + λ τ_anchor)(Σ_t G_t + λ I)⁻¹,   τ_anchor = U₀ − W₀,

λ→∞ gives the anchor, λ→0 RegMean. Every other tensor takes the anchor's value. G_t are the input Grams (data),
the task-vector proxy c·τ_tᵀτ_t (Theorem 1, data-free), or a mix of the two (Appendix F, "hybrid").

The paper body was out of reach, so several details are decisions of ours (marked [D]; listed in docs/methods.md,
BMM); each is a parameter, and the comment where it is made says why. This file also holds what the outer level
(Bayesian optimisation over per-group λ) needs: ``BMMSolver`` re-solves a whole model for a new λ with matrix
products only, ``module_groups`` ties modules by function, ``gram_alignment`` checks Theorem 1 on data Grams, and
the solver samples the row-wise Gaussian posterior (Appendix B, calibration).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Optional, Union

import torch

from ..errors import CheckpointError, MethodError, NumericalError
from ..io import Source, StateDict, as_source
from ..linalg import solve_right
from ..registry import get_method, register
from ..walker import ModelView, Rule, Walk, walk_merge
from .regmean import shrink_off_diagonal

GRAM_SOURCES = ("data", "task_vector", "hybrid", "auto")
TV_NORMS = ("none", "frobenius")
MODULE_TYPES = ("attn_in", "attn_out", "mlp_in", "mlp_out")

# -- module names: which tensors are the linear modules BMM regresses, and their function and depth -----------

# The four functional groups of the paper's tying, for open_clip, HF CLIP/ViT, Llama-style and BERT-style names. Only
# weights stored (d_out, d_in) as nn.Linear does: GPT-2's Conv1D stores (d_in, d_out), so its c_attn/c_proj are
# left out on purpose rather than regressed on the wrong side. Order matters: attention-out before MLP-out.
_MODULE_PATTERNS = (
    ("attn_in", re.compile(r"(attn\.in_proj_weight|\.[qkv]_proj\.weight|attention\.self\.(query|key|value)\.weight"
                           r"|attn\.qkv\.weight)$")),
    ("attn_out", re.compile(r"(attn\.out_proj\.weight|\.o_proj\.weight|attention\.output\.dense\.weight"
                            r"|attn\.proj\.weight)$")),
    ("mlp_in", re.compile(r"(mlp\.c_fc\.weight|\.fc1\.weight|\.(gate|up)_proj\.weight|intermediate\.dense\.weight)$")),
    ("mlp_out", re.compile(r"(mlp\.c_proj\.weight|\.fc2\.weight|\.down_proj\.weight"
                           r"|(?<!attention\.)output\.dense\.weight)$")),
)
_DEPTH = re.compile(r"^(?P<stack>(?:.*?\.)?(?:resblocks|layers|layer|blocks|h))\.(?P<index>\d+)\.")


def module_type(key: str) -> Optional[str]:
    """``attn_in`` | ``attn_out`` | ``mlp_in`` | ``mlp_out`` for a transformer linear weight, else None.

    Positional/token embeddings, ``visual.proj``, ``visual_projection``, conv patch embeddings, biases and norms are
    not linear modules of a block: BMM gives them the anchor's value.
    """
    for name, pattern in _MODULE_PATTERNS:
        if pattern.search(key):
            return name
    return None


def module_depth(key: str) -> Optional[int]:
    """The block index in ``...resblocks.<i>.``, ``...layers.<i>.``, ``...layer.<i>.``, ``...blocks.<i>.``."""
    match = _DEPTH.match(key)
    return int(match["index"]) if match else None


def module_groups(keys: Iterable[str], by_depth: int = 0) -> dict[str, str]:
    """Map every linear-module key to its tying group; other keys are left out (they take the anchor).

    ``by_depth`` = 0 or 1: the four groups ``attn_in``, ``attn_out``, ``mlp_in``, ``mlp_out`` (the paper's tying).
    ``by_depth`` = n ≥ 2: each group split into n equal depth bins, named ``attn_in:0`` (lowest blocks) ...
    ``attn_in:{n-1}``; n = 2 is the lower/upper-half split. Bins are counted within each stack of blocks (a CLIP's
    image and text towers are binned separately but share group names).
    """
    if by_depth < 0:
        raise MethodError(f"module_groups: by_depth must be >= 0, got {by_depth}")
    typed = {key: module_type(key) for key in keys}
    typed = {key: kind for key, kind in typed.items() if kind is not None}
    if by_depth <= 1:
        return typed
    stacks: dict[str, int] = {}
    for key in typed:
        match = _DEPTH.match(key)
        if match:
            stacks[match["stack"]] = max(stacks.get(match["stack"], 0), int(match["index"]) + 1)
    groups = {}
    for key, kind in typed.items():
        match = _DEPTH.match(key)
        depth_bin = int(match["index"]) * by_depth // stacks[match["stack"]] if match else 0
        groups[key] = f"{kind}:{depth_bin}"
    return groups


def group_module_params(groups: Mapping[str, str], values: Mapping[str, float],
                        name: str = "log10_rho") -> dict[str, dict[str, float]]:
    """``Walk.module_params`` that give every key of a group the group's value (BO tunes ``{group: value}``)."""
    missing = sorted(set(groups.values()) - set(values))
    if missing:
        raise MethodError(f"no {name} given for group(s) {missing}")
    return {key: {name: values[group]} for key, group in groups.items()}


# -- parameters ------------------------------------------------------------------------------------------------

def check_bmm_params(*, gram: str = "auto", log10_rho: float = -1.0, beta: float = 0.5, tv_norm: str = "none",
                     offdiag_scale: float = 1.0) -> None:
    if gram not in GRAM_SOURCES:
        raise MethodError(f"bmm: gram must be one of {GRAM_SOURCES}, got {gram!r}")
    if tv_norm not in TV_NORMS:
        raise MethodError(f"bmm: tv_norm must be one of {TV_NORMS}, got {tv_norm!r}")
    if not isinstance(log10_rho, (int, float)) or not math.isfinite(log10_rho):
        raise MethodError(f"bmm: log10_rho must be a finite number (λ = 10^log10_rho·tr(ΣG)/d_in), got {log10_rho!r}")
    if not 0.0 <= beta <= 1.0:
        raise MethodError(f"bmm: beta (hybrid weight of the data Gram) must be in [0, 1], got {beta}")
    if not 0.0 <= offdiag_scale <= 1.0:
        raise MethodError(f"bmm: offdiag_scale must be in [0, 1], got {offdiag_scale}")


def resolve_gram_source(gram: str, have_grams: bool) -> str:
    """``auto`` → ``data`` when Grams are given, else ``task_vector``; data-based sources demand Grams."""
    if gram == "auto":
        return "data" if have_grams else "task_vector"
    if gram in ("data", "hybrid") and not have_grams:
        raise MethodError(f"bmm: gram={gram!r} needs data Grams (one grams file per expert); "
                          "use gram='task_vector' (or 'auto') to merge without data")
    return gram


# -- per-module math --------------------------------------------------------------------------------------------

def task_vector_gram(delta: torch.Tensor, tv_norm: str = "none") -> torch.Tensor:
    """The data-free proxy of X_tX_tᵀ (Theorem 1): τ_tᵀτ_t, or τ_tᵀτ_t/‖τ_t‖_F² (WUDI's normalisation).

    The constant c of G_t ≈ c·τ_tᵀτ_t cancels under the normalised λ (λ ∝ tr ΣG), so it is not a parameter.
    """
    gram = delta.T @ delta
    if tv_norm == "frobenius":
        norm_sq = delta.square().sum()
        return gram / norm_sq if norm_sq > 0 else gram  # a zero task vector has a zero Gram either way
    return gram


def _normalised(grams: list[torch.Tensor]) -> list[torch.Tensor]:
    # One scalar per source (the mean eigenvalue of the task sum), so each source keeps its own relative task
    # weights and β alone sets the data/proxy balance; β = 1 or 0 is then a rescaling of the pure source, which the
    # normalised λ cancels: hybrid reproduces data and task_vector exactly at its end points.
    size = grams[0].shape[0]
    level = sum(g.trace() for g in grams) / size
    return [g / level for g in grams] if level > 0 else grams


def bmm_grams(deltas: list[torch.Tensor], grams: Optional[list[torch.Tensor]] = None, *, gram: str = "auto",
              beta: float = 0.5, tv_norm: str = "none", offdiag_scale: float = 1.0) -> list[torch.Tensor]:
    """The per-task Grams G_t the solve uses, in the inputs' dtype (data, proxy or hybrid; then RegMean shrinkage)."""
    source = resolve_gram_source(gram, grams is not None)
    if source == "data":
        used = list(grams)
    elif source == "task_vector":
        used = [task_vector_gram(d, tv_norm) for d in deltas]
    else:
        # Appendix F's hybrid for few-shot data, in our reading [D]: β·Ĝ_data + (1−β)·Ĝ_tv, each normalised
        # (see _normalised); a source whose weight is 0 is not computed at all.
        parts = []
        if beta > 0:
            parts.append([beta * g for g in _normalised(list(grams))])
        if beta < 1:
            parts.append([(1 - beta) * g for g in _normalised([task_vector_gram(d, tv_norm) for d in deltas])])
        used = [sum(gs) for gs in zip(*parts)]
    if offdiag_scale != 1.0:
        used = [shrink_off_diagonal(g, offdiag_scale) for g in used]
    return used


def normal_equations(deltas: list[torch.Tensor], grams: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """A = Σ_t G_t and B = Σ_t τ_t G_t."""
    a, b, _ = _normal_equations_and_fit(deltas, grams)
    return a, b


def _normal_equations_and_fit(deltas: list[torch.Tensor], grams: list[torch.Tensor]):
    """A, B and Σ_t tr(τ_t G_t τ_tᵀ) (the residual's constant term), sharing the products τ_t G_t."""
    a = torch.zeros_like(grams[0])
    b = torch.zeros_like(deltas[0])
    fit = 0.0
    for delta, gram in zip(deltas, grams):
        a += gram
        product = delta @ gram
        b += product
        fit += float((product * delta).sum())
    return a, b, fit


def _rho(log10_rho: float) -> float:
    try:
        return 10.0 ** float(log10_rho)
    except OverflowError:
        raise MethodError(f"bmm: log10_rho = {log10_rho} overflows λ; use a value in about [-30, 30]") from None


def prior_lambda(gram_sum: torch.Tensor, log10_rho: float) -> float:
    """λ = ρ·tr(ΣG)/d_in: ρ is relative to the mean eigenvalue of ΣG, so one log10 ρ range (ours: [−4, 2]) fits
    every module whatever its activation scale, and the proxy's constant c cancels. 0 when ΣG = 0."""
    lam = _rho(log10_rho) * float(gram_sum.trace()) / gram_sum.shape[0]
    if not math.isfinite(lam):
        raise MethodError(f"bmm: λ = 10^{log10_rho}·tr(ΣG)/d_in is not finite")
    return lam


def bmm_solve(gram_sum: torch.Tensor, numerator: torch.Tensor, anchor_delta: torch.Tensor, lam: float,
              what: str = "bmm") -> torch.Tensor:
    """τ* = (B + λ τ_anchor)(A + λ I)⁻¹ by a Cholesky solve (never an inverse); a clear error if A + λI is singular."""
    if lam == 0.0 and float(gram_sum.trace()) == 0.0:
        return anchor_delta.clone()  # no data direction at all: the posterior is the prior (λ→0⁺ limit)
    system = gram_sum.clone()
    system.diagonal().add_(lam)
    return solve_right(numerator + lam * anchor_delta, system, what=what)


def bmm_matrix(deltas: list[torch.Tensor], *, anchor_delta: torch.Tensor, grams: Optional[list[torch.Tensor]] = None,
               gram: str = "auto", log10_rho: float = -1.0, beta: float = 0.5, tv_norm: str = "none",
               offdiag_scale: float = 1.0, key: str = "") -> torch.Tensor:
    """τ* = (Σ_t τ_t G_t + λ τ_anchor)(Σ_t G_t + λ I)⁻¹ for one module, solved in float64."""
    check_bmm_params(gram=gram, log10_rho=log10_rho, beta=beta, tv_norm=tv_norm, offdiag_scale=offdiag_scale)
    # Float64 throughout: A + λI spans many orders of magnitude for small ρ, and the λ→0 limit must reach RegMean.
    deltas64 = [d.double() for d in deltas]
    grams64 = None if grams is None else [g.double() for g in grams]
    used = bmm_grams(deltas64, grams64, gram=gram, beta=beta, tv_norm=tv_norm, offdiag_scale=offdiag_scale)
    a, b = normal_equations(deltas64, used)
    lam = prior_lambda(a, log10_rho)
    merged = bmm_solve(a, b, anchor_delta.double(), lam, what=f"bmm {key}")
    return merged.to(deltas[0].dtype)


def residual_variance(deltas: list[torch.Tensor], grams: list[torch.Tensor], merged_delta: torch.Tensor,
                      tokens: Optional[float] = None) -> float:
    """σ̂² = ‖Y − U*X‖²/(N·d_out) = Σ_t tr((τ_t − τ*) G_t (τ_t − τ*)ᵀ)/(N·d_out), in Grams only.

    With *sum* Grams G_t = X_tX_tᵀ (the zoo's ``nbmerge stats`` files: sums over all tokens, with a ``tokens``
    metadata entry per task), N is the total number of tokens, Σ_t tokens_t. With *mean* Grams (G_t = X_tX_tᵀ/n_t,
    FusionBench's convention) pass N = T (the default, ``tokens=None``): each task then counts as one average token,
    and the posterior covariance σ²(A + λI)⁻¹ built from mean Grams is n times too wide, so treat σ² as a temperature.
    """
    total = merged_delta.new_zeros((), dtype=torch.float64)
    for delta, gram in zip(deltas, grams):
        residual = delta.double() - merged_delta.double()
        total += ((residual @ gram.double()) * residual).sum()
    count = len(deltas) if tokens is None else float(tokens)
    if count <= 0:
        raise MethodError(f"bmm: tokens must be positive, got {tokens}")
    return max(float(total), 0.0) / (count * merged_delta.shape[0])


# -- the anchor -------------------------------------------------------------------------------------------------

def parse_anchor_params(anchor_params) -> dict:
    """``None``/``""`` → {}; a mapping; a JSON object; or ``"k=v,k=v"`` (the CLI convention: values stay strings
    and are coerced by the anchor method's own parameter check)."""
    if anchor_params is None or anchor_params == "":
        return {}
    if isinstance(anchor_params, Mapping):
        return dict(anchor_params)
    if not isinstance(anchor_params, str):
        raise MethodError(f"bmm: anchor_params must be a mapping or a 'k=v,k=v' string, got {anchor_params!r}")
    text = anchor_params.strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MethodError(f"bmm: anchor_params is not valid JSON ({exc}): {anchor_params!r}") from None
        if not isinstance(parsed, dict):
            raise MethodError(f"bmm: anchor_params must be a JSON object, got {anchor_params!r}")
        return parsed
    out = {}
    for item in text.split(","):
        if "=" not in item:
            raise MethodError(f"bmm: anchor_params expects 'k=v,k=v', got {anchor_params!r}")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


def run_anchor(base: Source, experts: Sequence[Source], anchor: str = "task_arithmetic", anchor_params=None, *,
               grams: Optional[Sequence[Source]] = None, walk: Optional[Walk] = None) -> StateDict:
    """The anchor merge U₀ ("plug-and-play": any registered method, with its own defaults unless given params).

    It runs with the caller's exclusions, q/k/v layout and device, but with its *own* reference matrix rule and
    fallback (a Walk's matrix_rule/fallback describe BMM's merge, not the anchor's) and no per-module overrides.
    """
    if anchor == "bmm":
        raise MethodError("bmm: the anchor cannot be bmm itself; pick another method (e.g. task_arithmetic, ties)")
    try:
        spec = get_method(anchor)
    except MethodError as exc:
        raise MethodError(f"bmm: unknown anchor: {exc}") from None
    walk = walk or Walk()
    anchor_walk = replace(walk, matrix_rule=None, fallback=None, module_params={})
    uses_grams = "grams" in spec.needs or "grams" in spec.optional
    try:
        return spec.run(base, experts, parse_anchor_params(anchor_params), grams=grams if uses_grams else None,
                        walk=anchor_walk)
    except MethodError as exc:
        raise MethodError(f"bmm anchor {anchor!r}: {exc}") from None


def _anchor_delta(anchor_state: Mapping[str, torch.Tensor], key: str, base: torch.Tensor) -> torch.Tensor:
    return anchor_state[key].to(device=base.device, dtype=base.dtype) - base


def _check_anchor(view: ModelView, anchor_state: Mapping[str, torch.Tensor]) -> None:
    for key in view.float_keys():
        if key not in anchor_state:
            raise CheckpointError(f"bmm: the anchor model has no tensor {key!r}")
        if tuple(anchor_state[key].shape) != tuple(view.base.shape(key)):
            raise CheckpointError(f"bmm: anchor tensor {key!r} has shape {list(anchor_state[key].shape)}, "
                                  f"base {list(view.base.shape(key))}")


def _check_walk(walk: Walk) -> None:
    # U* is computed row by row against one Gram, so splitting a fused in_proj into q/k/v blocks changes nothing
    # with data Grams; fused/split only matter for the proxy τᵀτ, and the walker does not tell a kernel which block
    # it is on (the anchor's rows would not line up). Not offered rather than silently wrong.
    if walk.qkv != "as_is":
        raise MethodError(f"bmm: qkv={walk.qkv!r} is not supported; use qkv='as_is' (with data Grams the split "
                          "gives the same result, since each row of U* is solved against the same Gram)")


# -- the registered method --------------------------------------------------------------------------------------

def _prepare(view: ModelView, *, anchor_state: Mapping[str, torch.Tensor], data: bool, **_params) -> dict:
    _check_anchor(view, anchor_state)
    if data:
        return {"anchor_state": anchor_state, "linear_keys": None}
    linear = {key for key in view.float_keys() if module_type(key) is not None and len(view.base.shape(key)) == 2}
    if not linear:
        raise MethodError("bmm: no tensor of this model has a known linear-module name (attention in/out, MLP "
                          "in/out); give data Grams, which name the modules to regress")
    return {"anchor_state": anchor_state, "linear_keys": linear}


def _anchor_fallback(deltas, *, key, base, anchor_state):
    # Non-linear tensors (biases, norms, embeddings, projections) keep the anchor's values [D]: the anchor is the
    # prior mean and BMM has no likelihood for them.
    return _anchor_delta(anchor_state, key, base)


# The walker passes a kernel only the keywords its signature names, so every parameter is spelled out here.
def _unit_kernel(deltas, *, key, base, anchor_state, linear_keys=None, grams=None, gram="auto", log10_rho=-1.0,
                 beta=0.5, tv_norm="none", offdiag_scale=1.0):
    anchor_delta = _anchor_delta(anchor_state, key, base)
    if linear_keys is not None and key not in linear_keys:
        return anchor_delta  # a 2-D tensor that is not a block's linear module (data-free mode)
    return bmm_matrix(deltas, anchor_delta=anchor_delta, grams=grams, gram=gram, log10_rho=log10_rho, beta=beta,
                      tv_norm=tv_norm, offdiag_scale=offdiag_scale, key=key)


def _rule(anchor_state: Mapping[str, torch.Tensor], data: bool) -> Rule:
    # With data Grams the Gram files name the modules (as RegMean); data-free, the known linear-module names do.
    prepare = partial(_prepare, anchor_state=anchor_state, data=data)
    if data:
        return Rule(matrix=_unit_kernel, fallback=_anchor_fallback, prepare=prepare, matrix_from_stats="grams")
    return Rule(matrix=_unit_kernel, fallback=_anchor_fallback, prepare=prepare, matrix_rule="linear_only")


# log10_rho = −1 is the centre of our search range [−4, 2] (docs/methods.md, BMM). offdiag_scale = 1 (no
# shrinkage) keeps the λ→0 limit equal to plain RegMean. beta = 0.5 weighs data and proxy equally after
# normalisation. tv_norm = "none" follows Theorem 1 as stated (one c for all tasks); "frobenius" is WUDI's per-task
# normalisation.
@register("bmm", paper="https://arxiv.org/abs/2605.12843", optional=("grams",),
          help={"anchor": "registered method whose merge is the prior mean U₀ (e.g. task_arithmetic, ties, tsv)",
                "anchor_params": "the anchor's parameters: 'k=v,k=v' or a JSON object (default: its own defaults)",
                "gram": "Gram source: data | task_vector (data-free τᵀτ) | hybrid | auto (data if grams given)",
                "log10_rho": "prior strength: λ = 10^log10_rho · tr(Σ_t G_t)/d_in (one range fits every module)",
                "beta": "hybrid only: weight of the normalised data Gram against the normalised task-vector Gram",
                "tv_norm": "task-vector Gram: none (τᵀτ) | frobenius (τᵀτ/‖τ‖², WUDI's normalisation)",
                "offdiag_scale": "RegMean α applied to every G_t: off-diagonals times it (1 = none)",
                "scale": "assembly scale s: θ = θ₀ + s·(θ_BMM − θ₀), on every tensor (1 = the posterior mean)"})
def bmm(base, experts, *, grams=None, anchor: str = "task_arithmetic", anchor_params=None, gram: str = "auto",
        log10_rho: float = -1.0, beta: float = 0.5, tv_norm: str = "none", offdiag_scale: float = 1.0,
        scale: float = 1.0, walk=None, stream=False):
    """BMM: per-module Bayesian linear regression of the merged weight with an anchor merge as the prior mean."""
    params = {"gram": gram, "log10_rho": log10_rho, "beta": beta, "tv_norm": tv_norm, "offdiag_scale": offdiag_scale}
    check_bmm_params(**params)
    walk = walk or Walk()
    _check_walk(walk)
    source = resolve_gram_source(gram, grams is not None)
    if source == "task_vector" and grams is not None:
        raise MethodError("bmm: gram='task_vector' does not use the given grams; drop them, or use gram=data, "
                          "hybrid or auto")
    anchor_state = run_anchor(base, experts, anchor, anchor_params, grams=grams, walk=walk)
    data = source != "task_vector"
    return walk_merge(base, experts, _rule(anchor_state, data), params=params, scale=scale, walk=walk,
                      stream=stream, grams=grams if data else None)


# -- fast repeated solves for the λ search ----------------------------------------------------------------------

@dataclass
class _Module:
    """One linear module in the eigenbasis of A = Σ_t G_t = Q diag(w) Qᵀ: U*(λ) = W₀ + (BQ + λ τ_a Q)/(w + λ) Qᵀ."""

    base: torch.Tensor          # W₀ (solver dtype)
    eigenvalues: torch.Tensor   # w
    basis: torch.Tensor         # Q
    numerator: torch.Tensor     # B Q
    anchor: torch.Tensor        # τ_anchor Q
    level: float                # tr(A)/d_in: λ = 10^log10_rho · level
    fit: float                  # Σ_t tr(τ_t G_t τ_tᵀ), for the residual variance
    out_dtype: torch.dtype
    normal_equations: Optional[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = None  # A, B, τ_anchor (naive path)


class BMMSolver:
    """Every BMM module of a model, factorised once so that a new λ costs matrix products only.

    Precomputation per module (float64): A = Σ_t G_t, B = Σ_t τ_t G_t, A = Q diag(w) Qᵀ, then BQ and τ_anchor Q.
    For each trial, U*(λ) = W₀ + (BQ + λ τ_anchor Q) diag(1/(w + λ)) Qᵀ: two elementwise passes and one
    d_out·d_in² product (the naive solve also factorises A + λI, a d_in³ step, each time). Identical, up to
    round-off, to the registered ``bmm`` with the same options.

    ``anchor``: the anchor model (a state dict, a path, or a source), e.g. from ``run_anchor``; ``from_method``
    computes it by name. ``gram``/``beta``/``tv_norm``/``offdiag_scale`` as for ``bmm``. ``groups``: key → group
    (default ``module_groups(linear keys, by_depth)``; a Gram key with no known module name is its own group).
    Everything lives on ``device`` in ``dtype`` (float64 by default; float32 halves memory and is much faster on
    GPUs, at float32 accuracy). ``keep_normal_equations`` also stores A, B, τ_anchor for ``solve_naive``.
    """

    def __init__(self, base: Source, experts: Sequence[Source], anchor: Source,
                 grams: Optional[Sequence[Source]] = None, *, gram: str = "auto", beta: float = 0.5,
                 tv_norm: str = "none", offdiag_scale: float = 1.0, by_depth: int = 0,
                 groups: Optional[Mapping[str, str]] = None, device: str = "cpu",
                 dtype: torch.dtype = torch.float64, exclude: Sequence[str] = (), matrix_exclude: Sequence[str] = (),
                 keep_normal_equations: bool = False):
        check_bmm_params(gram=gram, beta=beta, tv_norm=tv_norm, offdiag_scale=offdiag_scale)
        if dtype not in (torch.float32, torch.float64):
            raise MethodError(f"BMMSolver: dtype must be float32 or float64, got {dtype}")
        source = resolve_gram_source(gram, grams is not None)
        if source == "task_vector" and grams is not None:
            raise MethodError("bmm: gram='task_vector' does not use the given grams")
        walk = Walk(exclude=tuple(exclude), matrix_exclude=tuple(matrix_exclude), device=device)
        data = source != "task_vector"
        view = ModelView(base, experts, walk, {"grams": grams if data else None})
        anchor_source = as_source(anchor, "anchor")
        anchor_state = {key: anchor_source.get(key) for key in view.float_keys() if key in anchor_source.keys()}
        _check_anchor(view, anchor_state)
        self.device, self.dtype, self.tasks = walk.device, dtype, view.T
        self.options = {"gram": gram, "beta": beta, "tv_norm": tv_norm, "offdiag_scale": offdiag_scale}
        self.order = list(view.base.keys())
        matrix_exclude_re = [re.compile(p) for p in matrix_exclude]
        if data:
            gram_keys = set(view.stats["grams"][0].keys())
            linear = [k for k in view.float_keys() if k in gram_keys]
        else:
            linear = [k for k in view.float_keys() if module_type(k) is not None and len(view.base.shape(k)) == 2
                      and not any(p.search(k) for p in matrix_exclude_re)]
            if not linear:
                raise MethodError("bmm: no tensor of this model has a known linear-module name; give data Grams")
        self.modules: dict[str, _Module] = {}
        for key in linear:
            self.modules[key] = self._factorise(view, key, anchor_state, keep_normal_equations)
        # Non-linear tensors: θ₀ and τ_anchor in the walker's compute dtype, so the assembly matches bmm's exactly.
        self.fixed: dict[str, tuple[torch.Tensor, torch.Tensor, torch.dtype]] = {}
        for key in view.float_keys():
            if key not in self.modules:
                base_t = view.base_tensor(key)
                self.fixed[key] = (base_t, _anchor_delta(anchor_state, key, base_t), view.base.dtype(key))
        self.copied = {key: view.base.get(key) for key in self.order
                       if key not in self.modules and key not in self.fixed}
        known = module_groups(linear, by_depth)
        self.groups = dict(groups) if groups is not None else {k: known.get(k, k) for k in linear}
        missing = [k for k in linear if k not in self.groups]
        if missing:
            raise MethodError(f"BMMSolver: groups has no entry for linear module {missing[0]!r}")

    @classmethod
    def from_method(cls, base: Source, experts: Sequence[Source], anchor: str = "task_arithmetic",
                    anchor_params=None, grams: Optional[Sequence[Source]] = None, **options) -> "BMMSolver":
        """Build the solver with the anchor merged by a registered method (its defaults unless ``anchor_params``)."""
        walk = Walk(exclude=tuple(options.get("exclude", ())), device=options.get("device", "cpu"))
        anchor_state = run_anchor(base, experts, anchor, anchor_params, grams=grams, walk=walk)
        return cls(base, experts, anchor_state, grams, **options)

    def _factorise(self, view: ModelView, key: str, anchor_state, keep: bool) -> _Module:
        base_t = view.base_tensor(key)
        deltas = [d.double() for d in view.deltas(key, base_t)]
        grams = view.stat("grams", key)
        grams = None if grams is None else [g.double() for g in grams]
        used = bmm_grams(deltas, grams, **self.options)
        a, b, fit = _normal_equations_and_fit(deltas, used)
        anchor_delta = _anchor_delta(anchor_state, key, base_t).double()
        eigenvalues, basis = torch.linalg.eigh(a)
        cast = partial(torch.Tensor.to, dtype=self.dtype)
        return _Module(base=cast(base_t), eigenvalues=cast(eigenvalues), basis=cast(basis), numerator=cast(b @ basis),
                       anchor=cast(anchor_delta @ basis), level=float(a.trace()) / a.shape[0], fit=fit,
                       out_dtype=view.base.dtype(key), normal_equations=(a, b, anchor_delta) if keep else None)

    # λ per module ------------------------------------------------------------------------------------------------
    def group_names(self) -> list[str]:
        return sorted(set(self.groups.values()))

    def log10_rhos(self, lambdas: Union[float, Mapping[str, float]]) -> dict[str, float]:
        """Resolve ``lambdas`` to one log10 ρ per linear key: a number (shared by all), or a mapping whose names are
        state-dict keys (most specific), group names, or ``"*"`` (every module not otherwise named)."""
        if not isinstance(lambdas, Mapping):
            lambdas = {"*": lambdas}
        valid = set(self.modules) | set(self.groups.values()) | {"*"}
        unknown = sorted(set(lambdas) - valid)
        if unknown:
            raise MethodError(f"BMMSolver: {unknown[0]!r} is neither a linear-module key nor a group; groups: "
                              f"{', '.join(self.group_names())}")
        out = {}
        for key in self.modules:
            for name in (key, self.groups[key], "*"):
                if name in lambdas:
                    value = lambdas[name]
                    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                        raise MethodError(f"BMMSolver: log10_rho for {name!r} must be a finite number, got {value!r}")
                    out[key] = float(value)
                    break
            else:
                raise MethodError(f"BMMSolver: no log10_rho for {key!r} (group {self.groups[key]!r}); name its "
                                  "group or give '*'")
        return out

    def prior_lambda(self, key: str, log10_rho: float) -> float:
        module = self.modules[key]
        lam = _rho(log10_rho) * module.level
        if not math.isfinite(lam):
            raise MethodError(f"bmm {key}: λ = 10^{log10_rho}·tr(ΣG)/d_in is not finite")
        smallest, largest = float(module.eigenvalues.min()), float(module.eigenvalues.max())
        # The Cholesky route of ``bmm`` fails about where A + λI stops being numerically positive definite: below
        # d_in·ε₆₄ relative to its largest eigenvalue the solve would return round-off, so refuse here as well.
        if module.level > 0 and not smallest + lam > module.basis.shape[0] * 2.2e-16 * (largest + lam):
            raise NumericalError(f"bmm {key}: A + λI is singular (λ = {lam:.3g}, eigenvalues of A from "
                                 f"{smallest:.3g} to {largest:.3g}); raise log10_rho")
        return lam

    def _coefficients(self, module: _Module, lam: float) -> torch.Tensor:
        """τ* Q = (BQ + λ τ_a Q) diag(1/(w + λ)); τ_anchor itself when A = 0 (no data direction)."""
        if module.level == 0:
            return module.anchor.clone()
        return torch.add(module.numerator, module.anchor, alpha=lam).div_(module.eigenvalues + lam)

    def merged_delta(self, key: str, log10_rho: float) -> torch.Tensor:
        """τ* of one module, in the solver dtype."""
        module = self.modules[key]
        return self._coefficients(module, self.prior_lambda(key, log10_rho)) @ module.basis.T

    # whole models ------------------------------------------------------------------------------------------------
    def merged(self, lambdas: Union[float, Mapping[str, float]], scale: float = 1.0,
               out: Optional[StateDict] = None) -> StateDict:
        """θ = θ₀ + s·(θ_BMM − θ₀) for the given log10 ρ per group/key, in the base's dtypes on the solver's device.
        ``out``: a state dict from an earlier call, overwritten in place (no new model-sized allocations)."""
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
            raise MethodError(f"BMMSolver: scale must be a finite number, got {scale!r}")
        rhos = self.log10_rhos(lambdas)
        result = {} if out is None else out
        for key in self.order:
            if key in self.modules:
                module = self.modules[key]
                coefficients = self._coefficients(module, self.prior_lambda(key, rhos[key]))
                value = torch.addmm(module.base, coefficients, module.basis.T, alpha=scale).to(module.out_dtype)
            elif key in self.fixed:
                base_t, anchor_delta, out_dtype = self.fixed[key]
                value = (base_t + scale * anchor_delta).to(out_dtype)
            else:
                value = self.copied[key]
            if out is None:
                result[key] = value
            else:
                result[key].copy_(value)
        return result

    def solve_naive(self, key: str, log10_rho: float) -> torch.Tensor:
        """τ* of one module by ``torch.linalg.solve`` on A + λI (needs ``keep_normal_equations=True``): the reference
        the fast path is tested and timed against."""
        module = self.modules[key]
        if module.normal_equations is None:
            raise MethodError("BMMSolver.solve_naive needs keep_normal_equations=True")
        a, b, anchor_delta = module.normal_equations
        lam = self.prior_lambda(key, log10_rho)
        system = a.clone()
        system.diagonal().add_(lam)
        return torch.linalg.solve(system, (b + lam * anchor_delta).T).T

    def gram_level(self) -> dict[str, float]:
        """tr(A)/d_in per module: multiply a temperature by it for a noise level that the proxy's c does not change."""
        return {key: module.level for key, module in self.modules.items()}

    # the posterior -----------------------------------------------------------------------------------------------
    def noise_variance(self, lambdas: Union[float, Mapping[str, float]], tokens: Optional[float] = None
                       ) -> dict[str, float]:
        """σ̂² per module from the residual ‖Y − U*X‖²/(N·d_out), expanded in the Grams the solve used (the true
        data residual when gram='data' and offdiag_scale=1). N as in ``residual_variance``: total tokens for sum
        Grams, T (default) for mean Grams."""
        rhos = self.log10_rhos(lambdas)
        out = {}
        for key, module in self.modules.items():
            coefficients = self._coefficients(module, self.prior_lambda(key, rhos[key])).double()
            numerator = module.numerator.double()
            # Σ_t tr((τ_t − τ*)G_t(τ_t − τ*)ᵀ) = Σ_t tr(τ_tG_tτ_tᵀ) − 2 tr(B τ*ᵀ) + tr(τ* A τ*ᵀ), with τ*Q = P:
            # tr(B τ*ᵀ) = Σ (BQ ⊙ P) and tr(τ* A τ*ᵀ) = Σ_j w_j ‖P_:j‖².
            total = module.fit - 2 * float((numerator * coefficients).sum()) \
                + float((coefficients.square() * module.eigenvalues.double()).sum())
            n = self.tasks if tokens is None else float(tokens)
            if n <= 0:
                raise MethodError(f"bmm: tokens must be positive, got {tokens}")
            out[key] = max(total, 0.0) / (n * module.base.shape[0])
        return out

    def sample(self, key: str, log10_rho: float, num_samples: int, temperature: float,
               generator: torch.Generator, scale: float = 1.0) -> torch.Tensor:
        """S draws of one module's merged weight, [S, d_out, d_in]: each row ~ N(U*_row, σ²(A + λI)⁻¹), σ² =
        ``temperature``, then assembled as W₀ + s·(U − W₀). U = U* + σ·Z diag((w+λ)^-½) Qᵀ with Z standard normal
        drawn from ``generator`` on its own device (a CPU generator gives the same draws on any device)."""
        if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature >= 0):
            raise MethodError(f"bmm: temperature (σ²) must be a finite number >= 0, got {temperature!r}")
        if num_samples < 1:
            raise MethodError(f"bmm: num_samples must be >= 1, got {num_samples}")
        module = self.modules[key]
        lam = self.prior_lambda(key, log10_rho)
        coefficients = self._coefficients(module, lam)
        noise = torch.randn((num_samples, *coefficients.shape), generator=generator, dtype=self.dtype,
                            device=generator.device).to(self.device)
        if module.level > 0:
            noise.mul_((module.eigenvalues + lam).rsqrt())
        else:
            noise.zero_()  # A = 0: the prior alone; its variance σ²/λ is unbounded as λ → 0, so no noise is drawn
        coefficients = coefficients + math.sqrt(temperature) * noise
        return module.base + scale * (coefficients @ module.basis.T)

    def sampled(self, lambdas: Union[float, Mapping[str, float]], temperature: Union[float, Mapping[str, float]],
                generator: torch.Generator, scale: float = 1.0) -> StateDict:
        """One whole-model posterior draw (every linear module sampled, the rest as in ``merged``).
        ``temperature``: σ² shared by every module, or per key (e.g. from ``noise_variance``)."""
        rhos = self.log10_rhos(lambdas)
        result = self.merged(rhos, scale)
        for key in self.modules:
            sigma2 = temperature[key] if isinstance(temperature, Mapping) else temperature
            draw = self.sample(key, rhos[key], 1, sigma2, generator, scale)[0]
            result[key] = draw.to(self.modules[key].out_dtype)
        return result


# -- Theorem 1: do activation Grams align with task-vector Grams? -----------------------------------------------

def _top_eigenvectors(matrix: torch.Tensor, k: int) -> torch.Tensor:
    _, vectors = torch.linalg.eigh(matrix)
    return vectors[:, -k:]


def gram_alignment(base: Source, experts: Sequence[Source], grams: Sequence[Source], *, k: Optional[int] = None,
                   k_fraction: float = 0.1, device: str = "cpu") -> list[dict]:
    """Per module with a data Gram, how E[xxᵀ] (Σ_t G_t) aligns with Σ_t τ_tᵀτ_t (Theorem 1's claim).

    Rows: ``key``, ``module_type``, ``depth``, ``d_in``, ``k``, ``cosine`` (Frobenius cosine of the two matrices;
    ≥ 0 for PSD matrices), ``overlap`` = ‖Q_aᵀQ_b‖_F²/k of their top-k eigenvectors (1 = same subspace), and
    ``chance`` = k/d_in, the expected overlap of random subspaces. k = ``k`` or max(1, round(k_fraction·d_in)).
    """
    if k is None and not 0.0 < k_fraction <= 1.0:
        raise MethodError(f"gram_alignment: k_fraction must be in (0, 1], got {k_fraction}")
    view = ModelView(base, experts, Walk(device=device), {"grams": grams})
    gram_keys = set(view.stats["grams"][0].keys())
    rows = []
    for key in view.float_keys():
        if key not in gram_keys:
            continue
        data = sum(g.double() for g in view.stat("grams", key))
        proxy = sum(task_vector_gram(d.double()) for d in view.deltas(key))
        d_in = data.shape[0]
        top = k if k is not None else max(1, round(k_fraction * d_in))
        if not 1 <= top <= d_in:
            raise MethodError(f"gram_alignment: k = {top} is outside [1, {d_in}] for {key!r}")
        norms = data.norm() * proxy.norm()
        cosine = float((data * proxy).sum() / norms) if norms > 0 else float("nan")
        overlap = (_top_eigenvectors(data, top).T @ _top_eigenvectors(proxy, top)).square().sum() / top
        rows.append({"key": key, "module_type": module_type(key), "depth": module_depth(key), "d_in": d_in,
                     "k": top, "cosine": cosine, "overlap": float(overlap), "chance": top / d_in})
    return rows
