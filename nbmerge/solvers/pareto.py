"""Pareto-front previews by variational model merging (Monzón Maldonado et al., arXiv 2412.08147).

Multitask fine-tuning with task weights α on the probability simplex minimises Σ_t α_t ℓ_t(θ) (plus the prior).
Each task's posterior p(θ|D_t) ∝ p₀(θ) e^{−ℓ_t(θ)} is replaced by an approximation q_t, and the preview of the
α-weighted model is the minimiser of the surrogate

    J(θ) = −Σ_t α_t log q_t(θ)                                                         (Σ_t α_t = 1)

which is −log of p₀ Π_t (q_t/p₀)^{α_t}: on the simplex the prior's factors cancel [D]. Three families of q_t:

* isotropic Gaussian, q_t = N(m_t, σ²I): θ̂(α) = θ₀ + s·Σ_t α_t τ_t with τ_t = m_t − θ₀ and s = 1 (the exact
  minimiser; ``scale`` s ≠ 1 gives task arithmetic's coefficient). Simple averaging at uniform α.
* diagonal Gaussian, q_t = N(m_t, diag(S_t)⁻¹): θ̂(α) = θ₀ + (Σ_t α_t S_t)⁻¹ Σ_t α_t S_t τ_t, elementwise.
  Writing S_t = S₀ + H_t (prior plus data precision) gives θ₀ + (S₀ + Σ α_t H_t)⁻¹ Σ α_t S_t τ_t. A common reading
  writes H_t, not S_t, in the numerator; that is the minimiser only when S₀ ≪ H_t, and it disagrees with the EM
  M-step below for one component. We use the exact form, so one-component MoG = Gaussian holds exactly [D].
* mixture of Gaussians, q_t = Σ_k π_tk N(m_tk, diag(S_tk)⁻¹): minimised by EM (an MM algorithm, so J never
  increases). E-step: responsibilities r_atk ∝ π_tk N(θ_a | m_tk, S_tk⁻¹), in log space. M-step: the precision-
  weighted average θ_a = Σ_tk α_t r_atk S_tk m_tk / Σ_tk α_t r_atk S_tk, elementwise (on the simplex).

Every kernel takes parameters as flat vectors ([P], [T, P] or [T, K, P]) and α as an [A, T] tensor, so a front of
hundreds of α is one batched computation (two matrix products per EM step). Kernels compute on their inputs'
device; quadratic forms and the EM run in float64 (log-density gaps scale with the number of parameters), results
come back in the base's dtype.

Front quality (our choices: the paper names no metric): the exact hypervolume of the per-task
accuracies in 2-D and 3-D against a reference point (the notebook uses the base model's accuracies), the α-matched
gap to the multitask-fine-tuned models, and the best-α mean accuracy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Optional, Union

import numpy as np
import torch

from ..errors import MethodError, NbmergeError

SIMPLEX_ATOL = 1e-6
ArrayLike = Union[torch.Tensor, np.ndarray, Sequence]


# ------------------------------------------------------------------------------------------------ α and shapes

def simplex_grid(tasks: int, divisions: int) -> torch.Tensor:
    """Every α on the simplex whose entries are multiples of 1/divisions, as a float64 [A, T] tensor.

    Rows are in lexicographic order of the counts (for two tasks: α₁ = 0, 1/d, ..., 1). There are
    C(divisions + tasks − 1, tasks − 1) rows: 101 for (2, 100), 66 for (3, 10), 231 for (3, 20).
    """
    if not isinstance(tasks, int) or tasks < 1:
        raise NbmergeError(f"simplex_grid: tasks must be a positive integer, got {tasks!r}")
    if not isinstance(divisions, int) or divisions < 1:
        raise NbmergeError(f"simplex_grid: divisions must be a positive integer, got {divisions!r}")
    rows = [counts for counts in itertools.product(range(divisions + 1), repeat=tasks) if sum(counts) == divisions]
    return torch.tensor(rows, dtype=torch.float64) / divisions


def check_alphas(alphas: ArrayLike, tasks: int, *, atol: float = SIMPLEX_ATOL) -> torch.Tensor:
    """α as a float64 [A, T] tensor, each row on the probability simplex (a 1-D α of length T is one row)."""
    try:
        values = torch.as_tensor(alphas, dtype=torch.float64)
    except (TypeError, ValueError) as err:
        raise NbmergeError(f"alphas must be numbers, an [A, T] array of task weights ({err})") from None
    if values.ndim == 1:
        values = values[None]
    if values.ndim != 2 or values.shape[0] == 0:
        raise NbmergeError(f"alphas must be an [A, T] array (A previews, T = {tasks} task weights each), "
                           f"got shape {list(values.shape)}")
    if values.shape[1] != tasks:
        raise NbmergeError(f"alphas have {values.shape[1]} task weights per row but there are {tasks} tasks")
    if not torch.isfinite(values).all():
        row = int((~torch.isfinite(values)).any(1).nonzero()[0])
        raise NbmergeError(f"alphas row {row} is not finite: {values[row].tolist()}")
    if (values < -atol).any():
        row, task = (int(i) for i in (values < -atol).nonzero()[0])
        raise NbmergeError(f"alphas must be non-negative (they are task weights on the simplex): row {row} has "
                           f"{values[row, task].item():g} for task {task}")
    sums = values.sum(1)
    off = (sums - 1).abs() > atol
    if off.any():
        row = int(off.nonzero()[0])
        raise NbmergeError(f"alphas must lie on the probability simplex (each row sums to 1): row {row} "
                           f"{values[row].tolist()} sums to {sums[row].item():g}")
    return values.clamp(min=0)


def _as_tensor(value, name: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return torch.tensor(float(value), dtype=torch.float64)
    if isinstance(value, (list, tuple)):
        if not value:
            raise NbmergeError(f"{name} is empty")
        if not any(isinstance(v, (torch.Tensor, np.ndarray)) for v in value):
            try:  # plain (nested) numbers
                return torch.as_tensor(value, dtype=torch.float64)
            except (TypeError, ValueError):
                pass
        parts = [_as_tensor(v, f"{name}[{i}]") for i, v in enumerate(value)]
        shapes = {tuple(p.shape) for p in parts}
        if len(shapes) > 1:
            listed = ", ".join(f"{name}[{i}] {list(p.shape)}" for i, p in enumerate(parts))
            raise NbmergeError(f"{name}: components of different shapes cannot be merged ({listed}); every "
                               "task needs the same number of components, each with one entry per parameter")
        return torch.stack(parts)
    raise NbmergeError(f"{name} must be a tensor or a (nested) list of tensors, got {type(value).__name__}")


def _all_finite(values: torch.Tensor) -> bool:
    """Whether every entry is finite. A sum is finite when every entry is (one cheap pass over the 22.7 M-entry
    MiniLM vectors, where ``isfinite`` takes seconds); only a non-finite sum (or an overflow) needs the full check."""
    if values.is_floating_point() and bool(torch.isfinite(values.sum(dtype=torch.float64))):
        return True
    return bool(torch.isfinite(values).all())


def _check_base(base) -> torch.Tensor:
    base = _as_tensor(base, "base")
    if base.ndim != 1 or not base.is_floating_point():
        raise NbmergeError(f"base must be a flat floating-point vector [P], got {base.dtype} {list(base.shape)} "
                           "(flatten a state dict with nbmerge.solvers.pareto.flatten_state)")
    if not _all_finite(base):
        raise NbmergeError("base has NaN or Inf entries")
    return base


def _check_means(means, base: torch.Tensor, ndim: int, what: str) -> torch.Tensor:
    means = _as_tensor(means, "means")
    layout = "[T, P]" if ndim == 2 else "[T, K, P]"
    if means.ndim != ndim:
        raise NbmergeError(f"{what}: means must be {layout} (P = {base.numel()} parameters), "
                           f"got shape {list(means.shape)}")
    if means.shape[-1] != base.numel():
        raise NbmergeError(f"{what}: means have {means.shape[-1]} parameters per component but base has "
                           f"{base.numel()}")
    if not _all_finite(means):
        raise NbmergeError(f"{what}: means have NaN or Inf entries")
    return means


def _check_precisions(precisions, means: torch.Tensor, what: str) -> torch.Tensor:
    precisions = _as_tensor(precisions, "precisions")
    if tuple(precisions.shape) != tuple(means.shape):
        raise NbmergeError(f"{what}: precisions have shape {list(precisions.shape)} but means have "
                           f"{list(means.shape)}; each mean needs a diagonal precision of the same shape")
    if not _all_finite(precisions):
        raise NbmergeError(f"{what}: precisions have NaN or Inf entries")
    if bool(precisions.min() > 0):
        return precisions
    bad = precisions <= 0
    if bad.any():
        where = tuple(int(i) for i in bad.nonzero()[0][:-1])
        label = "task {}".format(where[0]) + (f" component {where[1]}" if len(where) > 1 else "")
        raise NbmergeError(f"{what}: precisions must be positive (they are inverse variances), but {label} has "
                           f"{int(bad[where].sum())} entries ≤ 0 (min {precisions[where].min().item():g}); "
                           "add the prior precision to a data precision that can be zero")
    return precisions


def _check_tasks(count: int, alphas: torch.Tensor, what: str) -> None:
    if alphas.shape[1] != count:
        raise NbmergeError(f"{what}: alphas have {alphas.shape[1]} task weights per row but there are {count} tasks")


def _compute_dtype(*tensors: torch.Tensor) -> torch.dtype:
    return torch.float64 if any(t.dtype == torch.float64 for t in tensors) else torch.float32


# ------------------------------------------------------------------------------------------------------ merges

def isotropic_merge(base: ArrayLike, means: ArrayLike, alphas: ArrayLike, *, scale: float = 1.0) -> torch.Tensor:
    """Isotropic Gaussians: θ̂(α) = θ₀ + scale·Σ_t α_t (m_t − θ₀), for every row of α at once → [A, P].

    With ``scale`` = 1 this is the exact minimiser of J (α-weighted averaging of the means); at uniform α it is
    simple averaging, and ``scale`` = λ·T gives task arithmetic with coefficient λ.
    """
    base = _check_base(base)
    means = _check_means(means, base, 2, "isotropic_merge")
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not math.isfinite(scale):
        raise MethodError(f"isotropic_merge: scale must be a finite number, got {scale!r}")
    weights = check_alphas(alphas, means.shape[0])
    dtype = _compute_dtype(base, means)
    theta0 = base.to(dtype)
    vectors = means.to(dtype) - theta0
    merged = theta0 + scale * (weights.to(vectors.device, dtype) @ vectors)
    return merged.to(base.dtype)


def gaussian_merge(base: ArrayLike, means: ArrayLike, precisions: ArrayLike, alphas: ArrayLike) -> torch.Tensor:
    """Diagonal Gaussians: θ̂(α) = θ₀ + (Σ_t α_t S_t)⁻¹ Σ_t α_t S_t (m_t − θ₀), elementwise, every row of α → [A, P].

    ``precisions`` are the posterior precisions S_t (prior plus data), positive. Equal precisions give the
    isotropic merge exactly.
    """
    base = _check_base(base)
    means = _check_means(means, base, 2, "gaussian_merge")
    precisions = _check_precisions(precisions, means, "gaussian_merge")
    weights = check_alphas(alphas, means.shape[0])
    dtype = _compute_dtype(base, means, precisions)
    theta0 = base.to(dtype)
    s = precisions.to(dtype)
    w = weights.to(s.device, dtype)
    merged = theta0 + (w @ (s * (means.to(dtype) - theta0))) / (w @ s)
    return merged.to(base.dtype)


def collapse(means: ArrayLike, precisions: ArrayLike, weights: Optional[ArrayLike] = None
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """SoupIVON's collapse of one task's K components into one Gaussian [our reconstruction]: the mean
    precision S̄ = Σ_k π_k S_k and the precision-weighted mean m̄ = Σ_k π_k S_k m_k / S̄ (batched over leading
    dimensions: [..., K, P] → [..., P])."""
    means = _as_tensor(means, "means")
    precisions = _as_tensor(precisions, "precisions")
    if means.ndim < 2:
        raise NbmergeError(f"collapse: means must be [..., K, P], got shape {list(means.shape)}")
    precisions = _check_precisions(precisions, means, "collapse")
    pi = _mixture_weights(weights, means.shape[:-1], means.device)
    dtype = _compute_dtype(means, precisions)
    s = precisions.to(dtype) * pi.to(dtype)[..., None]
    total = s.sum(-2)
    mean = (s * means.to(dtype)).sum(-2) / total
    return mean.to(means.dtype), total.to(precisions.dtype)


def _mixture_weights(weights, shape: tuple, device) -> torch.Tensor:
    """π as float64 of ``shape`` ([..., K]), uniform when not given; rows must be positive and sum to 1."""
    if weights is None:
        return torch.full(shape, 1.0 / shape[-1], dtype=torch.float64, device=device)
    pi = _as_tensor(weights, "weights").to(device=device, dtype=torch.float64)
    if tuple(pi.shape) != tuple(shape):
        raise NbmergeError(f"mixture weights have shape {list(pi.shape)}, expected {list(shape)} (one per component)")
    if not torch.isfinite(pi).all() or (pi <= 0).any():
        raise NbmergeError("mixture weights must be positive and finite (drop a component instead of weighting it 0)")
    if ((pi.sum(-1) - 1).abs() > SIMPLEX_ATOL).any():
        raise NbmergeError(f"mixture weights must sum to 1 per task, got sums {pi.sum(-1).tolist()}")
    return pi


def _log_densities(delta: torch.Tensor, pieces: dict, temperature: float,
                   scratch: Optional[torch.Tensor] = None) -> torch.Tensor:
    """log N(θ_a | m_c, S_c⁻¹)/temperature for every α row a and component c → [A, C], all float64.

    Quadratic forms by expansion, Σ S(δ−τ)² = (δ²)·S − 2δ·(Sτ) + τ·Sτ, two matrix products for every (a, c);
    in offsets from θ₀ (δ = θ − θ₀, τ = m − θ₀), which keeps the cancellation small. ``scratch`` ([A, P]) lets the
    EM loop reuse memory: fresh [A, P] buffers cost page faults that dominate on a CPU.
    """
    squared = torch.mul(delta, delta, out=scratch) if scratch is not None else delta * delta
    quad = squared @ pieces["s"].T - 2.0 * (delta @ pieces["weighted"].T) + pieces["constant"]
    return (pieces["log_norms"] - 0.5 * quad.clamp(min=0)) / temperature


def mog_objective(theta: ArrayLike, base: ArrayLike, means: ArrayLike, precisions: ArrayLike, alphas: ArrayLike,
                  *, weights: Optional[ArrayLike] = None, temperature: float = 1.0) -> torch.Tensor:
    """J(θ_a) = −Σ_t α_t·τ·log Σ_k π_tk exp(log N(θ_a | m_tk, S_tk⁻¹)/τ) for each row a → float64 [A].

    τ = ``temperature`` = 1 is −Σ_t α_t log q_t(θ); EM never increases J at any temperature.
    """
    base = _check_base(base)
    means = _check_means(means, base, 3, "mog_objective")
    precisions = _check_precisions(precisions, means, "mog_objective")
    w = check_alphas(alphas, means.shape[0]).to(means.device)
    theta = _as_tensor(theta, "theta")
    if theta.ndim == 1:
        theta = theta[None]
    if theta.ndim != 2 or theta.shape != (w.shape[0], base.numel()):
        raise NbmergeError(f"theta must be [A, P] = {[w.shape[0], base.numel()]}, got {list(theta.shape)}")
    _check_temperature(temperature)
    pieces = _mog_pieces(base, means, precisions, weights)
    delta = theta.to(torch.float64) - pieces["theta0"]
    return _objective_from(_log_densities(delta, pieces, temperature), w, pieces, temperature)


def component_log_densities(theta: ArrayLike, base: ArrayLike, means: ArrayLike, precisions: ArrayLike
                            ) -> torch.Tensor:
    """log N(θ_a | m_tk, S_tk⁻¹) of every row of ``theta`` [A, P] under every component → float64 [A, T, K]."""
    base = _check_base(base)
    means = _check_means(means, base, 3, "component_log_densities")
    precisions = _check_precisions(precisions, means, "component_log_densities")
    theta = _as_tensor(theta, "theta")
    theta = theta[None] if theta.ndim == 1 else theta
    if theta.ndim != 2 or theta.shape[1] != base.numel():
        raise NbmergeError(f"theta must be [A, P] with P = {base.numel()}, got {list(theta.shape)}")
    pieces = _mog_pieces(base, means, precisions, None)
    t, k, _ = pieces["shape"]
    return _log_densities(theta.to(torch.float64) - pieces["theta0"], pieces, 1.0).reshape(-1, t, k)


def log_density_spread(base: ArrayLike, means: ArrayLike, precisions: ArrayLike, alphas: ArrayLike) -> torch.Tensor:
    """max_k − min_k of log N(θ | m_tk, S_tk⁻¹) at SoupIVON's Gaussian merge θ(α) (EM's starting point), for every
    row of α and task → float64 [A, T], in nats.

    This is the scale of the mixture's E-step: responsibilities are exp(−spread/τ)-close to one-hot at
    temperature τ, so τ = f·spread puts them at a chosen softness f whatever the parameter count (10⁵ nats and
    more on MiniLM's 22.7 M parameters at τ = 1, where every responsibility is 0 or 1)."""
    base = _check_base(base)
    means = _check_means(means, base, 3, "log_density_spread")
    precisions = _check_precisions(precisions, means, "log_density_spread")
    w = check_alphas(alphas, means.shape[0]).to(means.device)
    pieces = _mog_pieces(base, means, precisions, None)
    t, k, _ = pieces["shape"]
    delta = _m_step(w, pieces["pi"].expand(w.shape[0], t, k), pieces)
    logn = _log_densities(delta, pieces, 1.0).reshape(-1, t, k)
    return logn.amax(2) - logn.amin(2)


def _check_temperature(temperature) -> None:
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature > 0 \
            or not math.isfinite(temperature):
        raise MethodError(f"temperature must be a positive number (1 = the plain mixture), got {temperature!r}")


def _mog_pieces(base, means, precisions, weights) -> dict:
    """Everything the E- and M-steps reuse, computed once per merge (not once per α batch): on MiniLM each of
    these [T·K, P] float64 tensors is 0.7 GB and takes a second to build."""
    t, k, p = means.shape
    theta0 = base.to(torch.float64)
    s = precisions.reshape(t * k, p).to(torch.float64)
    offsets = means.reshape(t * k, p).to(torch.float64) - theta0  # not in place: means may be the caller's
    pi = _mixture_weights(weights, (t, k), means.device)
    # float32 logs summed in float64: ~1e-2 nats of error on MiniLM, at a third of the time of float64 logs
    log_norms = 0.5 * torch.log(precisions.reshape(t * k, p).float()).sum(1, dtype=torch.float64) \
        - 0.5 * p * math.log(2 * math.pi)
    weighted = s * offsets
    constant = (weighted * offsets).sum(1)
    del offsets  # only Sτ and τ·Sτ are needed from here on
    return {"theta0": theta0, "s": s, "weighted": weighted, "constant": constant, "pi": pi,
            "log_pi": torch.log(pi), "log_norms": log_norms, "shape": (t, k, p)}


def _log_q(logn: torch.Tensor, pieces: dict) -> torch.Tensor:
    """[A, T, K] log π_tk + log N/τ for the E-step and the objective."""
    t, k, _ = pieces["shape"]
    return logn.reshape(-1, t, k) + pieces["log_pi"]


def _objective_from(logn, w, pieces, temperature) -> torch.Tensor:
    return -(w * temperature * torch.logsumexp(_log_q(logn, pieces), dim=2)).sum(1)


def _m_step(w: torch.Tensor, responsibilities: torch.Tensor, pieces: dict, out: Optional[torch.Tensor] = None,
            scratch: Optional[torch.Tensor] = None) -> torch.Tensor:
    """δ = Σ_tk α_t r_atk S_tk τ_tk / Σ_tk α_t r_atk S_tk, elementwise → [A, P] (component (t, k) enters row a with
    coefficient α_t r_atk). With r = π it is SoupIVON's Gaussian merge of the collapsed components."""
    t, k, _ = pieces["shape"]
    coefficients = (w[:, :, None] * responsibilities).reshape(-1, t * k)
    delta = torch.matmul(coefficients, pieces["weighted"], out=out)
    return delta.div_(torch.matmul(coefficients, pieces["s"], out=scratch))


def mog_merge(base: ArrayLike, means: ArrayLike, precisions: ArrayLike, alphas: ArrayLike, *,
              weights: Optional[ArrayLike] = None, iterations: int = 20, tol: float = 1e-7,
              responsibility_tol: float = 0.0, temperature: float = 1.0, init: Optional[ArrayLike] = None,
              batch: Optional[int] = None, return_info: bool = False):
    """Mixture-of-Gaussians merge by EM (MultiIVON-Hess), every row of α → [A, P] (and ``info``).

    ``means``/``precisions``: [T, K, P] (K components per task, posterior precisions S_tk > 0); ``weights``: the
    mixture weights π [T, K] (uniform by default). Starts from the Gaussian merge of each task's collapsed
    components (SoupIVON-Hess) unless ``init`` ([A, P]) is given, and stops a row after ``iterations`` EM steps,
    when none of its entries moves by more than ``tol``·(1 + max|θ₀|), or when no responsibility changes by more
    than ``responsibility_tol`` (0: only when they repeat exactly, the usual end at τ = 1 in high dimension, where
    they are one-hot after the first step).

    ``temperature`` τ divides every log-density: τ = 1 is the plain mixture; τ → ∞ gives uniform
    responsibilities, whose M-step is SoupIVON-Hess; :func:`log_density_spread` gives the scale at which τ makes
    them informative (a rescaled precision would not: it leaves the log-determinant gaps ½Σ log S untouched).
    ``batch``: at most this many α rows per EM run (memory: three float64 [batch, P] buffers); the per-merge
    set-up is shared by every batch. ``info``: ``objective`` [steps + 1, A] (J before the first and after every
    M-step; never increases; a row that stopped keeps its last value), ``responsibilities`` [A, T, K] at the
    returned θ, ``iterations`` (M-steps of the longest row) and ``row_iterations`` [A].
    """
    batches = iter_mog_merge(base, means, precisions, alphas, weights=weights, iterations=iterations, tol=tol,
                             responsibility_tol=responsibility_tol, temperature=temperature, init=init, batch=batch)
    thetas, parts = [], []
    for _, part, info in batches:
        thetas.append(part)
        parts.append(info)
    merged = thetas[0] if len(thetas) == 1 else torch.cat(thetas)
    del thetas
    if not return_info:
        return merged
    steps = max(len(part["objective"]) for part in parts)
    objective = torch.cat([torch.cat([part["objective"], part["objective"][-1:].expand(steps - len(part["objective"]),
                                                                                       -1)]) for part in parts], 1)
    row_iterations = torch.cat([part["row_iterations"] for part in parts])
    return merged, {"objective": objective, "iterations": int(row_iterations.max()),
                    "row_iterations": row_iterations,
                    "responsibilities": torch.cat([part["responsibilities"] for part in parts])}


def iter_mog_merge(base: ArrayLike, means: ArrayLike, precisions: ArrayLike, alphas: ArrayLike, *,
                   weights: Optional[ArrayLike] = None, iterations: int = 20, tol: float = 1e-7,
                   responsibility_tol: float = 0.0, temperature: float = 1.0, init: Optional[ArrayLike] = None,
                   batch: Optional[int] = None):
    """:func:`mog_merge` one batch of α rows at a time: yields (rows, θ [rows, P] in the base's dtype, info of the
    batch), so that a front of hundreds of α never holds every θ at once. The set-up is done once."""
    base = _check_base(base)
    means = _check_means(means, base, 3, "mog_merge")
    precisions = _check_precisions(precisions, means, "mog_merge")
    w = check_alphas(alphas, means.shape[0]).to(means.device)
    _check_temperature(temperature)
    if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 0:
        raise MethodError(f"mog_merge: iterations must be a non-negative integer, got {iterations!r}")
    if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
        raise MethodError(f"mog_merge: batch must be a positive integer, got {batch!r}")
    p = means.shape[2]
    if init is not None:
        init = _as_tensor(init, "init").to(device=means.device, dtype=torch.float64)
        if tuple(init.shape) != (w.shape[0], p):
            raise NbmergeError(f"mog_merge: init must be [A, P] = {[w.shape[0], p]}, got {list(init.shape)}")
    return _iter_batches(base, w, _mog_pieces(base, means, precisions, weights), temperature, iterations, tol,
                         responsibility_tol, init, batch or w.shape[0])


def _iter_batches(base, w, pieces, temperature, iterations, tol, responsibility_tol, init, size):
    for first in range(0, w.shape[0], size):
        rows = slice(first, min(first + size, w.shape[0]))
        delta, info = _em(w[rows], pieces, temperature, iterations, tol, responsibility_tol,
                          None if init is None else init[rows] - pieces["theta0"])
        yield rows, (pieces["theta0"] + delta).to(base.dtype), info
        del delta


def _em(w: torch.Tensor, pieces: dict, temperature: float, iterations: int, tol: float, responsibility_tol: float,
        delta: Optional[torch.Tensor]) -> tuple[torch.Tensor, dict]:
    """EM for one batch of α rows from δ = θ − θ₀ (SoupIVON's merge when None) → (δ, info)."""
    t, k, _ = pieces["shape"]
    rows = w.shape[0]
    if delta is None:
        delta = _m_step(w, pieces["pi"].expand(rows, t, k), pieces)
    # Three [A, P] float64 buffers for the whole loop: θ − θ₀, its update, and scratch space.
    updated, scratch = torch.empty_like(delta), torch.empty_like(delta)
    logn = _log_densities(delta, pieces, temperature, scratch)
    history = [_objective_from(logn, w, pieces, temperature)]
    # Per-row bookkeeping stays on the CPU, whatever the device of θ (the GPU check found a mixed-device add here).
    done = torch.zeros(rows, dtype=torch.bool)
    row_steps = torch.zeros(rows, dtype=torch.long)
    threshold = tol * (1 + float(pieces["theta0"].abs().max()))
    previous, steps = None, 0
    while steps < iterations:
        responsibilities = torch.softmax(_log_q(logn, pieces), dim=2)  # E-step, [A, T, K]
        if previous is not None:
            # Responsibilities that (almost) repeat: the M-step would return (almost) θ itself, a fixed point.
            done |= ((responsibilities - previous).abs().flatten(1).amax(1) <= responsibility_tol).cpu()
        if bool(done.all()):
            break
        _m_step(w, responsibilities, pieces, out=updated, scratch=scratch)
        if bool(done.any()):
            # A converged row is frozen, so each θ_a is what a run with that α alone would return.
            updated[done.to(updated.device)] = delta[done.to(updated.device)]
        moved = torch.sub(updated, delta, out=scratch).abs_().amax(1).cpu()
        delta, updated = updated, delta
        row_steps += (~done).long()
        previous, steps = responsibilities, steps + 1
        logn = _log_densities(delta, pieces, temperature, scratch)
        history.append(_objective_from(logn, w, pieces, temperature))
        done |= moved <= threshold
        if bool(done.all()):
            break
    del updated, scratch
    return delta, {"objective": torch.stack(history), "row_iterations": row_steps,
                   "responsibilities": torch.softmax(_log_q(logn, pieces), dim=2)}


# --------------------------------------------------------------------------------------------- state dicts

def flatten_state(state: Mapping[str, torch.Tensor], keys: Optional[Sequence[str]] = None) -> torch.Tensor:
    """Concatenate the tensors of ``state`` (in ``keys`` order, default the state's own) into one vector [P]."""
    keys = list(state) if keys is None else list(keys)
    missing = [k for k in keys if k not in state]
    if missing:
        raise NbmergeError(f"flatten_state: {len(missing)} keys missing, first {missing[0]!r}")
    return torch.cat([state[k].reshape(-1) for k in keys])


def unflatten_state(vector: torch.Tensor, like: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Split a flat vector back into tensors shaped (and typed) like ``like``, in ``like``'s key order."""
    total = sum(v.numel() for v in like.values())
    if vector.ndim != 1 or vector.numel() != total:
        raise NbmergeError(f"unflatten_state: vector has shape {list(vector.shape)} but the template holds "
                           f"{total} parameters")
    out, offset = {}, 0
    for key, value in like.items():
        out[key] = vector[offset:offset + value.numel()].reshape(value.shape).to(value.dtype)
        offset += value.numel()
    return out


# -------------------------------------------------------------------------------------------- front quality

def _points(points: ArrayLike, dims: Optional[int] = None, name: str = "points") -> np.ndarray:
    values = np.asarray(points.detach().cpu() if isinstance(points, torch.Tensor) else points, dtype=np.float64)
    if values.ndim == 1 and dims is not None and values.size == dims:
        values = values[None]
    if values.ndim != 2 or (dims is not None and values.shape[1] != dims):
        raise NbmergeError(f"{name} must be an [N, {dims or 'D'}] array, got shape {list(values.shape)}")
    if not np.isfinite(values).all():
        raise NbmergeError(f"{name} has NaN or Inf entries")
    return values


def pareto_mask(points: ArrayLike) -> np.ndarray:
    """Which rows are not dominated (≥ in every objective and > in one) by another row; objectives are maximised.
    Duplicates of a non-dominated point are all kept."""
    values = _points(points)
    keep = np.ones(len(values), dtype=bool)
    for i, point in enumerate(values):
        dominated = (values >= point).all(1) & (values > point).any(1)
        keep[i] = not dominated.any()
    return keep


def _hypervolume_2d(values: np.ndarray, reference: np.ndarray) -> float:
    order = np.argsort(-values[:, 0], kind="stable")
    volume, height = 0.0, reference[1]
    for x, y in values[order]:
        if y > height:
            volume += (x - reference[0]) * (y - height)
            height = y
    return float(volume)


def hypervolume(points: ArrayLike, reference: ArrayLike) -> float:
    """Exact hypervolume (objectives maximised) dominated by ``points`` [N, D] and bounded below by ``reference``
    [D], for D = 2 (sweep) and D = 3 (slices along the third objective). Points that do not exceed the reference
    in every objective add nothing."""
    ref = _points(np.asarray(reference, dtype=np.float64).reshape(1, -1), name="reference").reshape(-1)
    values = _points(points, dims=ref.size)
    if ref.size not in (2, 3):
        raise NbmergeError(f"hypervolume is exact here only in 2-D and 3-D, got {ref.size} objectives")
    values = values[(values > ref).all(1)]
    if len(values) == 0:
        return 0.0
    if ref.size == 2:
        return _hypervolume_2d(values, ref)
    order = np.argsort(-values[:, 2], kind="stable")
    values = values[order]
    volume = 0.0
    for i in range(len(values)):
        floor = values[i + 1, 2] if i + 1 < len(values) else ref[2]
        if values[i, 2] > floor:
            volume += _hypervolume_2d(values[:i + 1, :2], ref[:2]) * (values[i, 2] - floor)
    return float(volume)


def alpha_matched_gap(preview: ArrayLike, truth: ArrayLike) -> float:
    """mean_α mean_t |acc_t(θ̂(α)) − acc_t(θ*(α))| for two [A, T] accuracy arrays on the same α rows."""
    a, b = _points(preview, name="preview"), _points(truth, name="truth")
    if a.shape != b.shape:
        raise NbmergeError(f"alpha_matched_gap: preview {list(a.shape)} and truth {list(b.shape)} must be "
                           "accuracies at the same α rows for the same tasks")
    return float(np.abs(a - b).mean())
