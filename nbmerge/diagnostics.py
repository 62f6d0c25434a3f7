"""Why a merge works: measurements on task vectors and Grams that the notebooks plot.

* ``gram_alignment``: BMM's Theorem 1, do activation Grams align with task-vector Grams?
* ``ace_diagnostics``: ACE's heterogeneity γ per unit, and whether its gate fires.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import torch

from .errors import MethodError
from .io import Source
from .methods.ace import CODE_EPS, RULE, ace_system, check_params, reference_walk, refinement_rank
from .methods.bmm import task_vector_gram
from .modules import module_depth, module_type
from .walker import ModelView, Walk, matrix_blocks


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


def ace_diagnostics(base, experts, walk: Optional[Walk] = None, *, eps: float = CODE_EPS, tau_threshold: float = 0.3,
                    k_frac: float = 0.3, adaptive: str = "auto", prior: bool = True, refine: str = "auto",
                    condition: bool = True) -> dict[str, dict]:
    """Per matrix tensor of the merge: γ, whether the flag fired, which stages ran, the refinement rank k and the
    2-norm condition number of the solved matrix Σ_t Σ_reg,t + C_agg (``condition=False`` skips its SVD).

    Walks the model exactly as ``ace`` does (same matrix path, q/k/v handling and per-module parameters). Keys
    are state-dict names; a fused q/k/v unit is reported under its q key, split blocks as ``key[i]``.
    """
    check_params(eps, tau_threshold, k_frac, adaptive, refine)
    walk = reference_walk(walk)
    view = ModelView(base, experts, walk, {})
    defaults = {"eps": eps, "tau_threshold": tau_threshold, "k_frac": k_frac, "adaptive": adaptive, "prior": prior,
                "refine": refine}
    out: dict[str, dict] = {}
    for name, block, params in matrix_blocks(view, RULE, walk, defaults):
        params = {n: v for n, v in params.items() if n in defaults}
        system = ace_system(block, eps=params["eps"], tau_threshold=params["tau_threshold"],
                            adaptive=params["adaptive"], prior=params["prior"], refine=params["refine"],
                            lhs_only=True)
        entry = {"shape": tuple(block[0].shape), "gamma": system.gamma, "flag": system.flag,
                 "normalised": system.normalised, "refined": system.refined,
                 "k": refinement_rank(block[0].shape, params["k_frac"]) if system.refined else 0}
        if condition:
            singular = torch.linalg.svdvals(system.lhs)
            entry["condition"] = float(singular[0] / singular[-1])
        out[name] = entry
    return out
