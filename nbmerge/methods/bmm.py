"""BMM — Bayesian Model Merging (Li, Han, Su, Ji, arXiv 2605.12843), inner level: anchor-prior regression.

Per linear module (docs/methods.md, BMM), with the rows of U under the prior N(U₀, (σ²/λ)I) centred on an anchor
merge U₀ and the likelihood of the experts' outputs on their inputs:

    U* = W₀ + (Σ_t τ_t G_t + λ τ_anchor)(Σ_t G_t + λ I)⁻¹,   τ_anchor = U₀ − W₀,

λ→∞ gives the anchor, λ→0 RegMean. Every other tensor takes the anchor's value. G_t are the input Grams (data),
the task-vector proxy c·τ_tᵀτ_t (Theorem 1, data-free), or a mix of the two (Appendix F, "hybrid").

The paper body was out of reach, so several details are decisions of ours (marked [D]; listed in docs/methods.md,
BMM); each is a parameter, and the comment where it is made says why. This file also holds what the outer level
(Bayesian optimisation over per-group λ) needs: ``BMMSolver`` re-solves a whole model for a new λ with matrix
products only (``nbmerge.solvers.bmm``), and ``nbmerge.engine.modules`` names and groups the linear modules.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Optional

import torch

from ..errors import CheckpointError, MethodError, NbmergeWarning
from ..engine.io import Source, StateDict
from ..engine.linalg import LowRank, gram_of, solve_right, times_of
from ..engine.modules import is_linear_module, unrecognised_matrices
from ..params import parse_pairs
from ..engine.registry import get_method, register
from ..engine.walker import ModelView, Rule, WalkOptions, walk_merge
from .regmean import shrink_off_diagonal

GRAM_SOURCES = ("data", "task_vector", "hybrid", "auto")
TV_NORMS = ("none", "frobenius")


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

def task_vector_gram(delta: torch.Tensor, tv_norm: str = "none", factors: Optional[LowRank] = None) -> torch.Tensor:
    """The data-free proxy of X_tX_tᵀ (Theorem 1): τ_tᵀτ_t, or τ_tᵀτ_t/‖τ_t‖_F² (WUDI's normalisation).

    The constant c of G_t ≈ c·τ_tᵀτ_t cancels under the normalised λ (λ ∝ tr ΣG), so it is not a parameter.
    ``factors``: τ_t as exact low-rank factors (a LoRA adapter), which give the same Gram at a fraction of the cost.
    """
    gram = gram_of(delta, factors)
    if tv_norm == "frobenius":
        norm_sq = delta.square().sum() if factors is None else factors.square_norm()
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
              beta: float = 0.5, tv_norm: str = "none", offdiag_scale: float = 1.0,
              factors: Optional[list[Optional[LowRank]]] = None) -> list[torch.Tensor]:
    """The per-task Grams G_t the solve uses, in the inputs' dtype (data, proxy or hybrid; then RegMean shrinkage)."""
    source = resolve_gram_source(gram, grams is not None)
    factors = factors or [None] * len(deltas)
    if source == "data":
        used = list(grams)
    elif source == "task_vector":
        used = [task_vector_gram(d, tv_norm, f) for d, f in zip(deltas, factors)]
    else:
        # Appendix F's hybrid for few-shot data, in our reading [D]: β·Ĝ_data + (1−β)·Ĝ_tv, each normalised
        # (see _normalised); a source whose weight is 0 is not computed at all.
        parts = []
        if beta > 0:
            parts.append([beta * g for g in _normalised(list(grams))])
        if beta < 1:
            proxies = [task_vector_gram(d, tv_norm, f) for d, f in zip(deltas, factors)]
            parts.append([(1 - beta) * g for g in _normalised(proxies)])
        used = [sum(gs) for gs in zip(*parts)]
    if offdiag_scale != 1.0:
        used = [shrink_off_diagonal(g, offdiag_scale) for g in used]
    return used


def normal_equations(deltas: list[torch.Tensor], grams: list[torch.Tensor],
                     factors: Optional[list[Optional[LowRank]]] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A = Σ_t G_t and B = Σ_t τ_t G_t."""
    a, b, _ = normal_equations_and_fit(deltas, grams, factors)
    return a, b


def normal_equations_and_fit(deltas: list[torch.Tensor], grams: list[torch.Tensor],
                             factors: Optional[list[Optional[LowRank]]] = None):
    """A, B and Σ_t tr(τ_t G_t τ_tᵀ) (the residual's constant term), sharing the products τ_t G_t (from τ_t's
    low-rank factors where given: L(RG) costs r·d_in·(d_in + d_out) against d_out·d_in²)."""
    a = torch.zeros_like(grams[0])
    b = torch.zeros_like(deltas[0])
    fit = 0.0
    for delta, gram, f in zip(deltas, grams, factors or [None] * len(deltas)):
        a += gram
        product = times_of(delta, gram, f)
        b += product
        fit += float((product * delta).sum())
    return a, b, fit


def rho_of(log10_rho: float) -> float:
    try:
        return 10.0 ** float(log10_rho)
    except OverflowError:
        raise MethodError(f"bmm: log10_rho = {log10_rho} overflows λ; use a value in about [-30, 30]") from None


def prior_lambda(gram_sum: torch.Tensor, log10_rho: float) -> float:
    """λ = ρ·tr(ΣG)/d_in: ρ is relative to the mean eigenvalue of ΣG, so one log10 ρ range (ours: [−4, 2]) fits
    every module whatever its activation scale, and the proxy's constant c cancels. 0 when ΣG = 0."""
    lam = rho_of(log10_rho) * float(gram_sum.trace()) / gram_sum.shape[0]
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
               offdiag_scale: float = 1.0, key: str = "", factors: Optional[list[Optional[LowRank]]] = None
               ) -> torch.Tensor:
    """τ* = (Σ_t τ_t G_t + λ τ_anchor)(Σ_t G_t + λ I)⁻¹ for one module, solved in float64.

    ``factors``: per task, τ_t as exact low-rank factors (LoRA adapters) or None: the Grams τ_tᵀτ_t and products
    τ_t G_t are then built from them (the same values, fewer operations)."""
    check_bmm_params(gram=gram, log10_rho=log10_rho, beta=beta, tv_norm=tv_norm, offdiag_scale=offdiag_scale)
    # Float64 throughout: A + λI spans many orders of magnitude for small ρ, and the λ→0 limit must reach RegMean.
    deltas64 = [d.double() for d in deltas]
    grams64 = None if grams is None else [g.double() for g in grams]
    factors64 = None if factors is None else [None if f is None else f.double() for f in factors]
    used = bmm_grams(deltas64, grams64, gram=gram, beta=beta, tv_norm=tv_norm, offdiag_scale=offdiag_scale,
                     factors=factors64)
    a, b = normal_equations(deltas64, used, factors64)
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
    return parse_pairs(text.split(","), "bmm: anchor_params ('k=v,k=v')", MethodError)


def run_anchor(base: Source, experts: Sequence[Source], anchor: str = "task_arithmetic", anchor_params=None, *,
               grams: Optional[Sequence[Source]] = None, walk: Optional[WalkOptions] = None) -> StateDict:
    """The anchor merge U₀ ("plug-and-play": any registered method, with its own defaults unless given params).

    It runs with the caller's exclusions, q/k/v layout and device, but with its *own* reference matrix rule and
    fallback (the WalkOptions' matrix_rule/fallback describe BMM's merge, not the anchor's) and no per-module overrides.
    """
    if anchor == "bmm":
        raise MethodError("bmm: the anchor cannot be bmm itself; pick another method (e.g. task_arithmetic, ties)")
    try:
        spec = get_method(anchor)
    except MethodError as exc:
        raise MethodError(f"bmm: unknown anchor: {exc}") from None
    walk = walk or WalkOptions()
    anchor_walk = replace(walk, matrix_rule=None, fallback=None, module_params={})
    uses_grams = "grams" in spec.needs or "grams" in spec.optional
    try:
        return spec.run(base, experts, parse_anchor_params(anchor_params), grams=grams if uses_grams else None,
                        walk=anchor_walk)
    except MethodError as exc:
        raise MethodError(f"bmm anchor {anchor!r}: {exc}") from None


def anchor_task_vector(anchor_state: Mapping[str, torch.Tensor], key: str, base: torch.Tensor) -> torch.Tensor:
    return anchor_state[key].to(device=base.device, dtype=base.dtype) - base


def check_anchor(view: ModelView, anchor_state: Mapping[str, torch.Tensor]) -> None:
    for key in view.float_keys():
        if key not in anchor_state:
            raise CheckpointError(f"bmm: the anchor model has no tensor {key!r}")
        if tuple(anchor_state[key].shape) != tuple(view.base.shape(key)):
            raise CheckpointError(f"bmm: anchor tensor {key!r} has shape {list(anchor_state[key].shape)}, "
                                  f"base {list(view.base.shape(key))}")


def _check_walk(walk: WalkOptions) -> None:
    # U* is computed row by row against one Gram, so splitting a fused in_proj into q/k/v blocks changes nothing
    # with data Grams; fused/split only matter for the proxy τᵀτ, and the walker does not tell a kernel which block
    # it is on (the anchor's rows would not line up). Not offered rather than silently wrong.
    if walk.qkv != "as_is":
        raise MethodError(f"bmm: qkv={walk.qkv!r} is not supported; use qkv='as_is' (with data Grams the split "
                          "gives the same result, since each row of U* is solved against the same Gram)")


# -- the registered method --------------------------------------------------------------------------------------

def _prepare(view: ModelView, *, anchor_state: Mapping[str, torch.Tensor], data: bool) -> dict:
    check_anchor(view, anchor_state)
    if data:
        return {"anchor_state": anchor_state, "linear_keys": None}
    kinds = view.walk.module_kinds
    linear = {key for key in view.float_keys() if is_linear_module(key, view.base.shape(key), kinds)}
    if not linear:
        raise MethodError("bmm: no tensor of this model has a known linear-module name (attention in/out, MLP "
                          "in/out); name them with module_kinds (--module-kind REGEX=KIND), or give data Grams, "
                          "which name the modules to regress")
    left = unrecognised_matrices(((k, view.base.shape(k)) for k in view.float_keys()), linear, "the anchor's values")
    if left:
        warnings.warn(f"bmm (data-free): {left}", NbmergeWarning, stacklevel=2)
    return {"anchor_state": anchor_state, "linear_keys": linear}


def _anchor_fallback(deltas, *, key, base, anchor_state):
    # Non-linear tensors (biases, norms, embeddings, projections) keep the anchor's values [D]: the anchor is the
    # prior mean and BMM has no likelihood for them.
    return anchor_task_vector(anchor_state, key, base)


# A kernel is called with the keywords its signature names (walker.Rule): every parameter is spelled out here.
def _unit_kernel(deltas, *, key, base, anchor_state, linear_keys=None, grams=None, gram="auto", log10_rho=-1.0,
                 beta=0.5, tv_norm="none", offdiag_scale=1.0, factors=None):
    anchor_delta = anchor_task_vector(anchor_state, key, base)
    if linear_keys is not None and key not in linear_keys:
        return anchor_delta  # a 2-D tensor that is not a block's linear module (data-free mode)
    return bmm_matrix(deltas, anchor_delta=anchor_delta, grams=grams, gram=gram, log10_rho=log10_rho, beta=beta,
                      tv_norm=tv_norm, offdiag_scale=offdiag_scale, key=key, factors=factors)


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
    walk = walk or WalkOptions()
    _check_walk(walk)
    source = resolve_gram_source(gram, grams is not None)
    if source == "task_vector" and grams is not None:
        raise MethodError("bmm: gram='task_vector' does not use the given grams; drop them, or use gram=data, "
                          "hybrid or auto")
    anchor_state = run_anchor(base, experts, anchor, anchor_params, grams=grams, walk=walk)
    data = source != "task_vector"
    return walk_merge(base, experts, _rule(anchor_state, data), params=params, scale=scale, walk=walk,
                      stream=stream, grams=grams if data else None)
