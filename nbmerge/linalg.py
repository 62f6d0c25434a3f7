"""Small linear-algebra helpers shared by the SVD- and Gram-based kernels."""

from __future__ import annotations

import torch

from .errors import NumericalError


def polar_factor(matrix: torch.Tensor) -> torch.Tensor:
    """Orthogonal polar factor P Qᵀ of ``matrix`` = P Σ Qᵀ (the nearest matrix with orthonormal columns/rows).

    This is the orthogonal-Procrustes step of TSV-M and ISO-CTS.
    """
    left, _, right_t = torch.linalg.svd(matrix, full_matrices=False)
    return left @ right_t


def solve_right(lhs: torch.Tensor, gram: torch.Tensor, what: str = "") -> torch.Tensor:
    """X with X·gram = lhs for a symmetric positive-definite ``gram`` (Cholesky; never an explicit inverse).

    A Gram sum that is not numerically positive definite raises a clear error instead of returning garbage.
    """
    factor, info = torch.linalg.cholesky_ex(gram)
    if int(info) != 0:
        raise NumericalError(f"{what or 'matrix'}: the Gram sum ({gram.shape[0]}x{gram.shape[1]}) is singular or "
                             f"not positive definite (Cholesky failed at pivot {int(info)}); add regularisation "
                             "(shrink off-diagonals, or a ridge)")
    solution = torch.cholesky_solve(lhs.transpose(-1, -2), factor).transpose(-1, -2)
    if not torch.isfinite(solution).all():
        raise NumericalError(f"{what or 'matrix'}: the solve produced NaN/Inf (ill-conditioned Gram sum)")
    return solution


def pinv_psd(gram: torch.Tensor, rcond: float = 1e-10) -> torch.Tensor:
    """Moore-Penrose pseudo-inverse of a symmetric positive semi-definite matrix (eigenvalues below
    ``rcond``·max are treated as zero)."""
    values, vectors = torch.linalg.eigh(gram)
    cutoff = rcond * values.abs().max().clamp(min=torch.finfo(values.dtype).tiny)
    inverse = torch.where(values > cutoff, 1.0 / values, torch.zeros_like(values))
    return (vectors * inverse) @ vectors.T
