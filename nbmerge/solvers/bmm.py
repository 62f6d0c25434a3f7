"""BMM's fast repeated solves: every module of a model factorised once, so that the λ search re-solves the whole
model with matrix products only, and the row-wise Gaussian posterior can be sampled (Appendix B, calibration)."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Optional, Union

import torch

from ..errors import MethodError, NbmergeWarning, NumericalError
from ..engine.io import Source, StateDict, as_source
from ..methods.bmm import (
    anchor_task_vector,
    bmm_grams,
    check_anchor,
    check_bmm_params,
    normal_equations_and_fit,
    resolve_gram_source,
    rho_of,
    run_anchor,
)
from ..engine.modules import is_linear_module, module_groups, unrecognised_matrices
from ..engine.walker import ModelView, WalkOptions


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
    (default ``module_groups(linear keys, depth_bins)``; a Gram key with no known module name is its own group).
    Everything lives on ``device`` in ``dtype`` (float64 by default; float32 halves memory and is much faster on
    GPUs, at float32 accuracy). ``keep_normal_equations`` also stores A, B, τ_anchor for ``solve_naive``.
    ``module_kinds``: ``{regex: kind}`` for linear modules the built-in names do not know (data-free only).
    """

    def __init__(self, base: Source, experts: Sequence[Source], anchor: Source,
                 grams: Optional[Sequence[Source]] = None, *, gram: str = "auto", beta: float = 0.5,
                 tv_norm: str = "none", offdiag_scale: float = 1.0, depth_bins: int = 0,
                 groups: Optional[Mapping[str, str]] = None, device: str = "cpu",
                 dtype: torch.dtype = torch.float64, exclude: Sequence[str] = (), matrix_exclude: Sequence[str] = (),
                 keep_normal_equations: bool = False, module_kinds: Optional[Mapping[str, str]] = None):
        check_bmm_params(gram=gram, beta=beta, tv_norm=tv_norm, offdiag_scale=offdiag_scale)
        if dtype not in (torch.float32, torch.float64):
            raise MethodError(f"BMMSolver: dtype must be float32 or float64, got {dtype}")
        source = resolve_gram_source(gram, grams is not None)
        if source == "task_vector" and grams is not None:
            raise MethodError("bmm: gram='task_vector' does not use the given grams")
        walk = WalkOptions(exclude=tuple(exclude), matrix_exclude=tuple(matrix_exclude), device=device,
                           module_kinds=module_kinds or {})
        data = source != "task_vector"
        view = ModelView(base, experts, walk, {"grams": grams if data else None})
        anchor_source = as_source(anchor, "anchor")
        anchor_state = {key: anchor_source.get(key) for key in view.float_keys() if key in anchor_source.keys()}
        check_anchor(view, anchor_state)
        self.device, self.dtype, self.tasks = walk.device, dtype, view.T
        self.options = {"gram": gram, "beta": beta, "tv_norm": tv_norm, "offdiag_scale": offdiag_scale}
        self.order = list(view.base.keys())
        matrix_exclude_re = [re.compile(p) for p in matrix_exclude]
        if data:
            gram_keys = set(view.stats["grams"][0].keys())
            linear = [k for k in view.float_keys() if k in gram_keys]
        else:
            linear = [k for k in view.float_keys() if is_linear_module(k, view.base.shape(k), walk.module_kinds)
                      and not any(p.search(k) for p in matrix_exclude_re)]
            if not linear:
                raise MethodError("bmm: no tensor of this model has a known linear-module name; name them with "
                                  "module_kinds (WalkOptions), or give data Grams")
            left = unrecognised_matrices(((k, view.base.shape(k)) for k in view.float_keys()
                                          if not any(p.search(k) for p in matrix_exclude_re)), linear,
                                         "the anchor's values")
            if left:
                warnings.warn(f"BMMSolver (data-free): {left}", NbmergeWarning, stacklevel=2)
        self.modules: dict[str, _Module] = {}
        for key in linear:
            self.modules[key] = self._factorise(view, key, anchor_state, keep_normal_equations)
        # Non-linear tensors: θ₀ and τ_anchor in the walker's compute dtype, so the assembly matches bmm's exactly.
        self.fixed: dict[str, tuple[torch.Tensor, torch.Tensor, torch.dtype]] = {}
        for key in view.float_keys():
            if key not in self.modules:
                base_t = view.base_tensor(key)
                self.fixed[key] = (base_t, anchor_task_vector(anchor_state, key, base_t), view.base.dtype(key))
        self.copied = {key: view.base.get(key) for key in self.order
                       if key not in self.modules and key not in self.fixed}
        known = module_groups(linear, depth_bins, walk.module_kinds)
        self.groups = dict(groups) if groups is not None else {k: known.get(k, k) for k in linear}
        missing = [k for k in linear if k not in self.groups]
        if missing:
            raise MethodError(f"BMMSolver: groups has no entry for linear module {missing[0]!r}")

    @classmethod
    def from_method(cls, base: Source, experts: Sequence[Source], anchor: str = "task_arithmetic",
                    anchor_params=None, grams: Optional[Sequence[Source]] = None, **options) -> "BMMSolver":
        """Build the solver with the anchor merged by a registered method (its defaults unless ``anchor_params``)."""
        walk = WalkOptions(exclude=tuple(options.get("exclude", ())), device=options.get("device", "cpu"),
                           module_kinds=options.get("module_kinds") or {})
        anchor_state = run_anchor(base, experts, anchor, anchor_params, grams=grams, walk=walk)
        return cls(base, experts, anchor_state, grams, **options)

    def _factorise(self, view: ModelView, key: str, anchor_state, keep: bool) -> _Module:
        base_t = view.base_tensor(key)
        deltas = [d.double() for d in view.deltas(key, base_t)]
        grams = view.stat("grams", key)
        grams = None if grams is None else [g.double() for g in grams]
        used = bmm_grams(deltas, grams, **self.options)
        a, b, fit = normal_equations_and_fit(deltas, used)
        anchor_delta = anchor_task_vector(anchor_state, key, base_t).double()
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
        lam = rho_of(log10_rho) * module.level
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
