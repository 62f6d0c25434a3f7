"""Why a merge works: measurements on task vectors and Grams that the notebooks plot.

* ``gram_alignment``: BMM's Theorem 1, do activation Grams align with task-vector Grams?
  ``gram_alignment_vs_chance`` adds the baselines a random eigenbasis gives, ``alignment_summary`` the medians per
  module type, ``ratio_interval`` a bootstrap interval over modules.
* ``ace_diagnostics``: ACE's heterogeneity γ per unit, and whether its gate fires; ``gate_summary`` sums it up
  over a model (where the gate fires, median and largest γ).
* ACE's ablation: ``ace_params`` (a variant as a canonical recipe), ``LADDER`` (the paper's ablation steps) and
  ``effective`` (which variants the gate makes the same model).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import median
from typing import Optional

import numpy as np
import torch

from . import protocol
from ..errors import MethodError
from ..engine.io import Source
from ..methods.ace import CODE_EPS, RULE, ace_system, check_params, reference_walk, refinement_rank
from ..methods.bmm import task_vector_gram
from ..engine.modules import MODULE_TYPES, module_depth, module_type
from ..engine.walker import ModelView, WalkOptions, matrix_blocks


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
    view = ModelView(base, experts, WalkOptions(device=device), {"grams": grams})
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


def gram_alignment_vs_chance(base, experts, grams, k_fraction: float = 0.1, device: str = "cpu") -> list[dict]:
    """``gram_alignment``'s rows (cosine, top-k overlap and its chance k/d per module), plus ``chance_cosine``.

    Two PSD matrices always have a cosine ≥ 0, so "positive" says nothing by itself. The baseline is the cosine
    expected if Σ_t τ_tᵀτ_t kept its spectrum but had a random eigenbasis: E_Q⟨A, QBQᵀ⟩ = tr A·tr B/d for Haar Q,
    so chance_cosine = tr A·tr B/(d·‖A‖_F‖B‖_F). ``cosine_ratio`` and ``overlap_ratio`` divide by the baselines.
    """
    rows = gram_alignment(base, experts, grams, k_fraction=k_fraction, device=device)
    for row in rows:
        key = row["key"]
        data = sum(g[key].double() for g in grams)
        proxy = sum(task_vector_gram(e[key].double() - base[key].double()) for e in experts)
        norms = float(data.norm() * proxy.norm())
        chance = float(data.trace() * proxy.trace()) / (row["d_in"] * norms) if norms > 0 else float("nan")
        row["chance_cosine"] = chance
        row["cosine_ratio"] = row["cosine"] / chance if chance > 0 else float("nan")
        row["overlap_ratio"] = row["overlap"] / row["chance"]
    return rows


def alignment_summary(rows: Sequence[dict]) -> list[dict]:
    """Per module type (and "all"): modules, median cosine and its baseline, median overlap and chance, and the
    share of modules above *both* baselines."""
    out = []
    for kind in (*MODULE_TYPES, "all"):
        chosen = [r for r in rows if kind == "all" or r["module_type"] == kind]
        if not chosen:
            continue
        above = [r["cosine"] > r["chance_cosine"] and r["overlap"] > r["chance"] for r in chosen]
        out.append({"module_type": kind, "modules": len(chosen),
                    "cosine": median(r["cosine"] for r in chosen),
                    "chance_cosine": median(r["chance_cosine"] for r in chosen),
                    "overlap": median(r["overlap"] for r in chosen),
                    "chance_overlap": median(r["chance"] for r in chosen),
                    "above_both": sum(above) / len(above)})
    return out


def ratio_interval(rows: Sequence[dict], key: str, n_boot: int = protocol.BOOTSTRAP, seed: int = 0,
                   level: float = protocol.LEVEL) -> dict:
    """Median over modules of ``key`` (a ratio to its chance baseline) with a bootstrap 95% interval over modules
    (modules resampled with replacement): how robust "typically above chance" is to which modules we looked at."""
    values = np.array([r[key] for r in rows if math.isfinite(r[key])], dtype=float)
    if len(values) == 0:
        return {"median": float("nan"), "low": float("nan"), "high": float("nan"), "modules": 0}
    rng = np.random.default_rng(seed)
    boots = np.median(values[rng.integers(0, len(values), size=(n_boot, len(values)))], axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(boots, [tail, 1 - tail])
    return {"median": float(np.median(values)), "low": float(low), "high": float(high), "modules": len(values),
            "above": int((values > 1).sum())}


def ace_diagnostics(base, experts, walk: Optional[WalkOptions] = None, *, eps: float = CODE_EPS, tau_threshold: float = 0.3,
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


def gate_summary(base, experts, eps: float = CODE_EPS) -> dict:
    """γ per matrix and where the official gate (γ > 0.3) fires, for these experts: the share of matrices it fires
    on, the median and largest γ."""
    diagnostics = ace_diagnostics(base, experts, eps=eps, condition=False)
    gammas = {k: d["gamma"] for k, d in diagnostics.items()}
    fired = [k for k, d in diagnostics.items() if d["flag"]]
    values = [g for g in gammas.values() if np.isfinite(g)]
    return {"gamma": gammas, "fired": fired, "fired_fraction": len(fired) / max(1, len(diagnostics)),
            "max_gamma": max(values) if values else float("nan"),
            "median_gamma": float(np.median(values)) if values else float("nan"), "matrices": len(diagnostics)}


# ----------------------------------------------------------------------------------------------- ACE's ablation

# The official defaults of ACE's switches; a recipe names only what differs from them, so ACE with the paper's ε
# is {"eps": 1e-5} in every notebook that merges it.
ACE_DEFAULTS = {"eps": CODE_EPS, "adaptive": "auto", "prior": True, "refine": "auto"}
# The paper's ablation ladder, in its order: (step, switches, gated). The official gate (γ > 0.3) decides where the
# gated components act: on ViT it never fires and the paper shows +0 for those two steps.
LADDER = (
    ("basic closed form", {"adaptive": "off", "prior": False, "refine": "off"}, None),
    ("+ adaptive normalisation", {"adaptive": "auto", "prior": False, "refine": "off"}, "gated"),
    ("+ structural prior", {"adaptive": "auto", "prior": True, "refine": "off"}, None),
    ("+ spectral refinement", {"adaptive": "auto", "prior": True, "refine": "auto"}, "gated"),
)
COMPONENTS = ("adaptive normalisation", "structural prior", "spectral refinement")
FORCED_ON = {"adaptive": "on", "prior": True, "refine": "on"}      # both gated components on every matrix
GATED_OFF = {"adaptive": "off", "prior": True, "refine": "off"}    # both gated components off (prior kept)


def ace_params(eps: float = CODE_EPS, **switches) -> dict:
    """ACE's parameters as a canonical recipe: only the values that differ from the official defaults."""
    values = {**ACE_DEFAULTS, "eps": float(eps), **switches}
    return {k: v for k, v in values.items() if v != ACE_DEFAULTS[k]}


def effective(switches: Mapping, gate_off: bool) -> tuple:
    """The switches as the merge applies them: with the gate off on every matrix, "auto" is "off" (same code)."""
    return tuple((k, "off" if gate_off and v == "auto" else v) for k, v in sorted(switches.items()))
