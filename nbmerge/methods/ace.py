"""ACE-Merging (Xu et al., CVPR 2026): a data-free closed-form merge from task-vector covariances.

Reproduces the official ``src/merge/strategy.py::ace_merging`` (unravel-xu/ACE-Merging @ 22d9dfea); see
docs/methods.md, ACE. Per matrix tensor, with ΔW_t the task vectors (d_out×d_in) and W̃_t = ΔW_t minus its mean row:

1. heterogeneity γ = Var_t[log ‖ΔW_t‖²] / (E_t[log ‖ΔW_t‖²])² (eq. 7); flag = γ > τ;
2. Σ̂_t = W̃_tᵀW̃_t; adaptive normalisation (eqs. 8-10): Σ̃_t = Σ̂_t/tr(Σ̂_t), ε_t = ε/tr(Σ̂_t) when it applies,
   else Σ̃_t = Σ̂_t, ε_t = ε; Σ_reg,t = Σ̃_t + ε_t I;
3. collective prior (eqs. 11-13): C_agg = 1cᵀ, c = column means of Σ_t Σ̃_t (divided by τ̄ = mean_t ‖ΔW_t‖² when
   normalised);
4. W̄_pre = (Σ_t W̃_t Σ_reg,t)(Σ_t Σ_reg,t + C_agg)⁻¹ (eq. 14);
5. spectral refinement (eqs. 15-19): Δ_res = Σ_t ΔW_t(Σ̃_t − Σ̄_reg), W_fused = W̄_pre + Δ_res = U S Vᵀ,
   k = int(r·k_frac), W̄ = W̄_pre + mean(S[:k])·U_k V_kᵀ (Δ_res only picks the directions; it is not added).

The reference walk: every 2-D tensor (``ndim2``, open_clip's fused ``in_proj_weight`` as one 3d×d matrix) except
keys containing ``text_projection`` takes the matrix path; everything else gets the mean task vector; θ = θ₀ + s·τ
with s = 1. Its RoBERTa/GPT-2 runs also drop keys from the task vectors, which then stay at θ₀: RoBERTa
``WalkOptions(exclude=("classifier", "bias", "LayerNorm", "embeddings"))``, GPT-2 ``WalkOptions(exclude=("score",))``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Optional

import torch

from ..errors import MethodError, NumericalError
from ..engine.linalg import LowRank, gram_of, top_singular
from ..engine.registry import register
from ..engine.walker import Rule, WalkOptions, walk_merge

#: ε of the official code (the ``ace_merging`` signature default, used as-is by its step3.py). The paper's notes give
#: per-family values instead (docs/methods.md, ACE); they conflict with the code, so the code's value is the
#: default and these are documented constants: ``{"eps": PAPER_EPS["vit"]}`` or ``--param eps=1e-5``.
CODE_EPS = 1e-2
PAPER_EPS = {"vit": 1e-5, "roberta-base": 2e-4, "gpt2": 4e-2}
MODES = ("auto", "on", "off")
#: The reference adds 1e-12 inside the log of the norms, to every trace and to τ̄; kept for parity.
TINY = 1e-12
#: Keys the reference sends to the mean even though they are 2-D (CLIP's text projection).
REFERENCE_MATRIX_EXCLUDE = ("text_projection",)


def check_params(eps: float, tau_threshold: float, k_frac: float, adaptive: str, refine: str) -> None:
    # `not x > 0` also rejects NaN. ε = 0 is rejected: the centred Grams have rank ≤ d_out − 1 and the sum is
    # singular whenever T·(d_out − 1) < d_in.
    if not (isinstance(eps, (int, float)) and eps > 0 and math.isfinite(eps)):
        raise MethodError(f"ace: eps must be a finite number > 0, got {eps!r} (paper values: {PAPER_EPS})")
    if not (isinstance(tau_threshold, (int, float)) and math.isfinite(tau_threshold)):
        raise MethodError(f"ace: tau_threshold must be a finite number, got {tau_threshold!r}")
    if not (isinstance(k_frac, (int, float)) and 0 < k_frac <= 1):
        raise MethodError(f"ace: k_frac must be in (0, 1], got {k_frac!r}")
    for name, value in (("adaptive", adaptive), ("refine", refine)):
        if value not in MODES:
            raise MethodError(f"ace: {name} must be one of {MODES}, got {value!r}")


def heterogeneity(norms_sq: torch.Tensor) -> float:
    """γ of eq. 7 from the squared Frobenius norms of the (uncentred) task vectors.

    Variance is unbiased (``torch.var``, as the reference). With one task it is undefined: NaN, and the reference's
    ``NaN > τ`` makes the flag false. γ is not scale-free: it blows up when the mean log-norm is near 0
    (‖ΔW‖_F ≈ 1), whatever the spread — a property of the published formula, kept as is.
    """
    if norms_sq.numel() < 2:
        return float("nan")
    logs = torch.log(norms_sq.double() + TINY)
    return float(torch.var(logs) / (logs.mean().square() + TINY))


@dataclasses.dataclass
class AceSystem:
    """The linear system of one matrix tensor: W̄_pre·lhs = rhs, plus what the refinement needs."""

    gamma: float
    flag: bool
    normalised: bool
    refined: bool
    lhs: torch.Tensor                      # Σ_t Σ_reg,t (+ C_agg): d_in×d_in, not symmetric with the prior
    rhs: Optional[torch.Tensor] = None     # Σ_t W̃_t Σ_reg,t
    residual: Optional[torch.Tensor] = None  # Δ_res = Σ_t ΔW_t (Σ̃_t − Σ̄_reg)


def _times_gram(left: torch.Tensor, centred: torch.Tensor) -> torch.Tensor:
    """left·W̃ᵀW̃, associated so that the cost is the smaller of d_out²·d_in and d_out·d_in²."""
    if centred.shape[0] < centred.shape[1]:
        return (left @ centred.T) @ centred
    return left @ (centred.T @ centred)


def ace_system(deltas: Sequence[torch.Tensor], *, eps: float = CODE_EPS, tau_threshold: float = 0.3,
               adaptive: str = "auto", prior: bool = True, refine: str = "auto", lhs_only: bool = False,
               factors: Optional[Sequence[Optional[LowRank]]] = None) -> AceSystem:
    """Steps 1-3 and the terms of steps 4-5, in float64 (see ``ace_matrix`` for why).

    ``adaptive``/``refine``: "auto" follows the flag (the reference), "on"/"off" force the stage for ablations.
    The 1/τ̄ on C_agg goes with the normalisation (the reference ties both to the flag): it rescales the prior
    built from trace-normalised Σ̃_t, so it is applied exactly when they are normalised.
    ``lhs_only=True`` builds only the left-hand side (diagnostics). ``factors``: per task, ΔW_t as exact low-rank
    factors (LoRA adapters) or None; centring keeps the rank (the mean row of L·R is mean(L)·R), so the Grams and
    products come from them at r·d_in·(d_in + d_out) instead of d_out·d_in² each.
    """
    T = len(deltas)
    d_in = deltas[0].shape[1]
    factors = [None if f is None else f.double() for f in factors] if factors else [None] * T
    norms_sq = torch.stack([d.double().square().sum() for d in deltas])
    gamma = heterogeneity(norms_sq)
    flag = bool(gamma > tau_threshold)  # False for NaN (T = 1), as in the reference
    normalised = adaptive == "on" or (adaptive == "auto" and flag)
    refined = refine == "on" or (refine == "auto" and flag)
    need_rhs = not lhs_only
    need_residual = need_rhs and refined

    gram_sum = torch.zeros(d_in, d_in, dtype=torch.float64, device=deltas[0].device)
    eps_sum = 0.0
    numerator = torch.zeros(deltas[0].shape, dtype=torch.float64, device=deltas[0].device) if need_rhs else None
    residual = torch.zeros_like(numerator) if need_residual else None
    for delta, f in zip(deltas, factors):
        delta = delta.double()
        centred = delta - delta.mean(dim=0, keepdim=True)  # eq. 5: subtract the mean row
        centred_f = None if f is None else f.centred()
        gram = gram_of(centred, centred_f)
        trace = float(gram.diagonal().sum()) + TINY
        weight = 1.0 / trace if normalised else 1.0
        eps_t = eps * weight
        gram_sum += gram * weight
        eps_sum += eps_t
        if need_rhs:
            # W̃_t Σ_reg,t = w·W̃_t Σ̂_t + ε_t W̃_t: the centred task vector in the numerator, as in the official code
            product = _times_gram(centred, centred) if f is None else centred_f.times(gram)
            numerator += product * weight + eps_t * centred
        if need_residual:
            # uncentred ΔW_t, un-regularised Σ̃_t (eq. 16)
            residual += (_times_gram(delta, centred) if f is None else f.times(gram)) * weight

    eye = torch.eye(d_in, dtype=torch.float64, device=gram_sum.device)
    reg_sum = gram_sum + eps_sum * eye
    lhs = reg_sum.clone()
    if prior:
        # C_agg = 1cᵀ: every row of the d_in×d_in matrix gets cᵀ (the code's keepdim mean broadcast); not symmetrised.
        c = gram_sum.mean(dim=0, keepdim=True)
        if normalised:
            c = c / (float(norms_sq.mean()) + TINY)
        lhs += c
    if need_residual:
        total = torch.zeros_like(residual)
        for delta in deltas:
            total += delta.double()
        residual -= total @ (reg_sum / T)  # Σ̄_reg includes the ε_t I terms, as in the code
    return AceSystem(gamma, flag, normalised, refined, lhs, numerator, residual)


def solve_right_general(rhs: torch.Tensor, lhs: torch.Tensor, what: str = "") -> torch.Tensor:
    """X with X·lhs = rhs for a general (non-symmetric) square ``lhs``.

    The reference forms ``torch.linalg.inv(A)`` and falls back to ``pinv`` when inversion fails. An LU solve
    gives the same X to rounding without the explicit inverse (backward stable; one factorisation). A is
    provably non-singular for ε > 0 (S = ΣΣ_reg is SPD and the prior is 1cᵀ with 1 + cᵀS⁻¹1 ≥ 1), so the
    ``pinv`` fallback, kept for parity, only triggers when LU meets an exactly zero pivot.
    """
    solution, info = torch.linalg.solve_ex(lhs, rhs, left=False)
    if int(info) != 0:
        solution = rhs @ torch.linalg.pinv(lhs)
    if not torch.isfinite(solution).all():
        raise NumericalError(f"{what or 'ace'}: the closed-form solve produced NaN/Inf "
                             f"({lhs.shape[0]}x{lhs.shape[1]} system); use a larger eps")
    return solution


def refinement_rank(shape: Sequence[int], k_frac: float) -> int:
    # The reference's expression, in floating point: int(r * k_frac).
    return int(min(shape) * k_frac)


def ace_matrix(deltas: list[torch.Tensor], *, eps: float = CODE_EPS, tau_threshold: float = 0.3,
               k_frac: float = 0.3, adaptive: str = "auto", prior: bool = True, refine: str = "auto",
               key: str = "", factors: Optional[Sequence[Optional[LowRank]]] = None) -> torch.Tensor:
    """Merged task vector of one matrix: the preliminary closed form plus, when refined, σ_iso·U_k V_kᵀ.

    Everything runs in float64 and is cast back to the input dtype. The system has condition numbers up to
    ~‖Σ‖/ε (1e5-1e8 at the paper's ε = 1e-5), so a float32 solve loses most digits there: the reference itself,
    which runs in float32, is off the exact answer by more than our float64 result is (reports/peer_ace.md).
    With T = 1 the flag is off (γ undefined), so the result is W̃ Σ_reg(Σ_reg + 1cᵀ)⁻¹ — exactly the centred task
    vector W̃ when ``prior=False``. With k = int(r·k_frac) = 0 the refinement is skipped (the reference would take
    the mean of an empty spectrum and return NaN).
    """
    check_params(eps, tau_threshold, k_frac, adaptive, refine)
    for t, delta in enumerate(deltas):
        if not torch.isfinite(delta).all():
            raise NumericalError(f"ace {key}: task vector {t} contains NaN or Inf")
    system = ace_system(deltas, eps=eps, tau_threshold=tau_threshold, adaptive=adaptive, prior=prior,
                        refine=refine, factors=factors)
    merged = solve_right_general(system.rhs, system.lhs, what=f"ace {key}")
    if system.refined:
        k = refinement_rank(merged.shape, k_frac)
        if k > 0:
            # Only U_k, V_k and mean(S[:k]) are used, so the top-k triplets suffice (U_kV_kᵀ does not depend on
            # the signs of the singular vectors).
            left, singular, right = top_singular(merged + system.residual, k)
            merged = merged + singular.mean() * (left @ right)
    return merged.to(deltas[0].dtype)


RULE = Rule(matrix=ace_matrix, fallback="mean", matrix_rule="ndim2")


def reference_walk(walk: Optional[WalkOptions]) -> WalkOptions:
    """The caller's walk with the reference's ``text_projection`` exclusion added (mean instead of the matrix path)."""
    walk = walk or WalkOptions()
    extra = tuple(p for p in REFERENCE_MATRIX_EXCLUDE if p not in walk.matrix_exclude)
    return dataclasses.replace(walk, matrix_exclude=walk.matrix_exclude + extra) if extra else walk


@register("ace", paper="https://arxiv.org/abs/2603.02945",
          help={"eps": "ridge ε on each Σ_t (code default 1e-2; paper: ViT 1e-5, RoBERTa-Base 2e-4, GPT-2 4e-2)",
                "tau_threshold": "heterogeneity threshold τ: the flag fires when γ > τ (official 0.3)",
                "k_frac": "spectral refinement rank k = int(r·k_frac), r = min(d_out, d_in) (official 0.3)",
                "adaptive": "trace normalisation of Σ_t: auto = when the flag fires (official), on, off",
                "prior": "add the collective structural prior C_agg = 1cᵀ to the solved matrix (official: on)",
                "refine": "spectral refinement: auto = when the flag fires (official), on, off",
                "scale": "global coefficient s on every tensor (official scaling_coefficient 1.0)"})
def ace(base, experts, *, eps: float = CODE_EPS, tau_threshold: float = 0.3, k_frac: float = 0.3,
        adaptive: str = "auto", prior: bool = True, refine: str = "auto", scale: float = 1.0, walk=None,
        stream=False):
    """ACE-Merging: adaptive covariance estimation from task vectors, solved in closed form per layer."""
    check_params(eps, tau_threshold, k_frac, adaptive, refine)
    params = {"eps": eps, "tau_threshold": tau_threshold, "k_frac": k_frac, "adaptive": adaptive, "prior": prior,
              "refine": refine}
    return walk_merge(base, experts, RULE, params=params, scale=scale, walk=reference_walk(walk), stream=stream)
