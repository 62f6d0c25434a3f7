"""Small linear-algebra helpers shared by the SVD- and Gram-based kernels."""

from __future__ import annotations

import torch

from .errors import NumericalError

# Singular vectors from a float64 Gram: eigenvalue errors are ~eps64·σ_max², so directions whose singular value
# is above GRAM_RCOND·σ_max come out at float32 round-off (relative error ≲ eps64/GRAM_RCOND² ≈ 1e-8). Below
# that the kernels fall back to the LAPACK SVD. The Gram route costs one float64 product and a symmetric
# eigendecomposition of the smaller side instead of a full SVD: several times faster on a CPU.
GRAM_RCOND = 1e-4


def top_singular(matrix: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The k leading singular triplets (U[:, :k], S[:k], Vh[:k]) of ``matrix``, in its dtype."""
    rows, cols = matrix.shape
    if k <= 0:
        return matrix.new_zeros(rows, 0), matrix.new_zeros(0), matrix.new_zeros(0, cols)
    x = matrix.double()
    tall = rows >= cols
    values, vectors = torch.linalg.eigh(x.T @ x if tall else x @ x.T)
    values, vectors = values.flip(0)[:k], vectors.flip(1)[:, :k]
    top = values[0].clamp(min=0).sqrt()
    singular = values.clamp(min=0).sqrt()
    if top == 0 or singular[-1] <= GRAM_RCOND * top:
        u, s, vh = torch.linalg.svd(matrix, full_matrices=False)
        return u[:, :k], s[:k], vh[:k]
    if tall:
        right_t = vectors.T
        left = (x @ vectors) / singular
    else:
        left = vectors
        right_t = (vectors.T @ x) / singular[:, None]
    return left.to(matrix.dtype), singular.to(matrix.dtype), right_t.to(matrix.dtype)


def polar_factor(matrix: torch.Tensor, return_singular_values: bool = False):
    """Orthogonal polar factor P Qᵀ of ``matrix`` = P Σ Qᵀ (the nearest matrix with orthonormal columns/rows).

    This is the orthogonal-Procrustes step of TSV-M and ISO-CTS (and ISO-C's U Vᵀ). Computed as
    X (XᵀX)^(-1/2) from a float64 Gram when X is well conditioned, else from the SVD.
    """
    rows, cols = matrix.shape
    x = matrix.double()
    tall = rows >= cols
    values, vectors = torch.linalg.eigh(x.T @ x if tall else x @ x.T)
    if values[0] > (GRAM_RCOND ** 2) * values[-1] > 0:
        inv_sqrt = (vectors * values.rsqrt()) @ vectors.T
        factor = (x @ inv_sqrt if tall else inv_sqrt @ x).to(matrix.dtype)
        singular = values.flip(0).sqrt().to(matrix.dtype)
    else:
        left, singular, right_t = torch.linalg.svd(matrix, full_matrices=False)
        factor = left @ right_t
    return (factor, singular) if return_singular_values else factor


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
