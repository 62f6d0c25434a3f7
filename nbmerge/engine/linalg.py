"""Small linear-algebra helpers shared by the SVD- and Gram-based kernels."""

from __future__ import annotations

import torch

from ..errors import NumericalError

# Singular vectors from a float64 Gram: eigenvalue errors are ~eps64·σ_max², so directions whose singular value
# is above GRAM_RCOND·σ_max come out at float32 round-off (relative error ≲ eps64/GRAM_RCOND² ≈ 1e-8). Below
# that the kernels fall back to the LAPACK SVD. The Gram route costs one float64 product and a symmetric
# eigendecomposition of the smaller side instead of a full SVD: several times faster on a CPU.
GRAM_RCOND = 1e-4


def _svd(matrix: torch.Tensor, wide: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The thin SVD behind the Gram routes' fallback. On the CPU it is LAPACK's in ``matrix``'s dtype (float32
    round-off, like every other CPU kernel). Off the CPU it is taken of ``wide``, the float64 copy, and returned in
    float64 for the caller to round once: a GPU's float32 SVD (reports/gpu_check.md) moves ISO-CTS's merge much
    further from the float64 merge than the CPU's float32 SVD does, and the directions near a cut between close
    singular values are the ones these kernels keep or drop."""
    if wide_svd(matrix.device):
        return torch.linalg.svd(wide, full_matrices=False)
    return torch.linalg.svd(matrix, full_matrices=False)


def wide_svd(device: torch.device) -> bool:
    """Whether the fallback SVD on ``device`` is computed in float64 (everywhere but the CPU)."""
    return torch.device(device).type != "cpu"


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
        u, s, vh = _svd(matrix, x)
        return u[:, :k].to(matrix.dtype), s[:k].to(matrix.dtype), vh[:k].to(matrix.dtype)
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
        left, singular, right_t = _svd(matrix, x)
        factor, singular = (left @ right_t).to(matrix.dtype), singular.to(matrix.dtype)
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


class LowRank:
    """A matrix held as ``left @ right`` (out × r and r × in): a LoRA task vector s·B·A, with s folded into ``left``.

    The products a Gram-based kernel needs of a task vector τ cost O(r) instead of O(d) per entry of their result:
    ``gram()`` τᵀτ = Rᵀ(LᵀL)R in r·in² + out·r² operations against out·in², ``times(M)`` τ·M = L(RM) in
    r·in·(in + out) against out·in². They are exact: the same matrices up to round-off (smaller than that of the
    dense τ, which carries the rounding of θ₀ + s·B·A − θ₀).
    """

    def __init__(self, left: torch.Tensor, right: torch.Tensor):
        if left.ndim != 2 or right.ndim != 2 or left.shape[1] != right.shape[0]:
            raise ValueError(f"LowRank: left {list(left.shape)} and right {list(right.shape)} do not multiply")
        self.left, self.right = left, right

    @property
    def shape(self) -> tuple[int, int]:
        return self.left.shape[0], self.right.shape[1]

    def to(self, *args, **kwargs) -> "LowRank":
        return LowRank(self.left.to(*args, **kwargs), self.right.to(*args, **kwargs))

    def double(self) -> "LowRank":
        return self.to(torch.float64)

    def row_blocks(self, count: int) -> list["LowRank"]:
        """The factors of ``count`` equal row blocks (a fused q/k/v weight cut into its parts)."""
        return [LowRank(part, self.right) for part in self.left.chunk(count, dim=0)]

    def dense(self) -> torch.Tensor:
        return self.left @ self.right

    def centred(self) -> "LowRank":
        """τ minus its mean row: the mean row of L·R is mean(L)·R, so the result keeps the rank."""
        return LowRank(self.left - self.left.mean(dim=0, keepdim=True), self.right)

    def gram(self) -> torch.Tensor:
        """τᵀτ (in × in)."""
        return self.right.T @ ((self.left.T @ self.left) @ self.right)

    def square_norm(self) -> torch.Tensor:
        """‖τ‖_F² = tr(LᵀL·RRᵀ)."""
        return ((self.left.T @ self.left) * (self.right @ self.right.T)).sum()

    def times(self, matrix: torch.Tensor) -> torch.Tensor:
        """τ·M for an in × k matrix M."""
        return self.left @ (self.right @ matrix)


def gram_of(delta: torch.Tensor, factors: "LowRank | None" = None) -> torch.Tensor:
    """τᵀτ, from the low-rank factors of τ where they are known."""
    return delta.T @ delta if factors is None else factors.gram()


def times_of(delta: torch.Tensor, matrix: torch.Tensor, factors: "LowRank | None" = None) -> torch.Tensor:
    """τ·M, from the low-rank factors of τ where they are known."""
    return delta @ matrix if factors is None else factors.times(matrix)
