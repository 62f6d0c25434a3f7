"""Where task vectors interfere: their norms and cosines, sign conflicts, overlapping singular subspaces, spectra.

Measurements on the checkpoints alone (no data), per model or per linear module, as plain numbers the tour
notebook plots:

* ``task_vector_geometry``: ‖τ_t‖ and cosine(τ_i, τ_j) of the flattened task vectors τ_t = θ_t − θ₀;
* ``sign_conflicts``: the share of entries whose signs disagree across tasks (all of them, and after TIES's trim);
* ``subspace_overlap``: how much the tasks' top left singular subspaces overlap, against random subspaces;
* ``spectra``: the singular values of each task vector and of their sum at one module;
* ``task_vector_norms``: ‖τ_t‖ per task over the whole state dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

import numpy as np
import torch

from ..engine.modules import module_depth, module_type
from ..engine.walker import is_linear_weight, task_vectors


def module_kind(key: str) -> tuple[str, Optional[int]]:
    """(attn-in | attn-out | mlp-in | mlp-out | other, block depth), by BMM's tying rules
    (``nbmerge/engine/modules.py``)."""
    kind = module_type(key)
    return (kind.replace("_", "-") if kind else "other"), module_depth(key)


def linear_keys(base: Mapping) -> list[str]:
    """The state-dict keys of the linear weights that belong to a transformer block (attention or MLP)."""
    return [k for k, v in base.items() if is_linear_weight(k, v.shape) and module_kind(k)[0] != "other"]


def task_vector_geometry(base: dict, experts: Sequence[dict], tasks: Sequence[str]) -> dict:
    """Norms and pairwise cosines of the flattened task vectors τ_t = θ_t − θ_0."""
    vectors = task_vectors(base, experts)
    flat = torch.stack([torch.cat([v.reshape(-1).double() for v in tv.values()]) for tv in vectors])
    norms = flat.norm(dim=1)
    cosines = (flat @ flat.T) / (norms[:, None] * norms[None, :])
    off = cosines[~torch.eye(len(tasks), dtype=torch.bool)]
    return {"tasks": list(tasks), "norms": norms.tolist(), "cosines": cosines.tolist(),
            "mean_offdiag_cosine": float(off.mean()) if len(off) else float("nan"),
            "base_norm": float(torch.cat([v.reshape(-1).double() for v in base.values()]).norm())}


def sign_conflicts(base: dict, experts: Sequence[dict], density: float = 0.2) -> list[dict]:
    """Per linear module: the share of entries whose task-vector signs disagree across tasks.

    ``all`` counts every entry; ``trimmed`` counts only entries that survive TIES's trim (top ``density`` of
    each task's magnitudes) in at least two tasks — the conflicts TIES's sign election then resolves.
    """
    vectors = task_vectors(base, experts)
    rows = []
    for key in linear_keys(base):
        stack = torch.stack([tv[key].double() for tv in vectors])
        signs = torch.sign(stack)
        mixed = (signs.max(0).values > 0) & (signs.min(0).values < 0)
        k = max(1, int(density * stack[0].numel()))
        keep = torch.stack([t.abs() >= t.abs().flatten().kthvalue(t.numel() - k + 1).values for t in stack])
        kept_signs = signs * keep
        trimmed_mixed = (kept_signs.max(0).values > 0) & (kept_signs.min(0).values < 0)
        shared = keep.sum(0) >= 2
        kind, depth = module_kind(key)
        rows.append({"key": key, "kind": kind, "depth": depth, "all": float(mixed.double().mean()),
                     "trimmed": float(trimmed_mixed.double().sum() / shared.sum().clamp(min=1))})
    return rows


def subspace_overlap(base: dict, experts: Sequence[dict], top_fraction: float = 0.1) -> list[dict]:
    """Per linear module: mean pairwise overlap ‖U_iᵀU_j‖²_F / k of the tasks' top-k left singular subspaces.

    1 means the tasks write into the same output directions (they interfere when added); random k-dimensional
    subspaces of R^d overlap by k/d on average, reported as ``chance``.
    """
    vectors = task_vectors(base, experts)
    rows = []
    for key in linear_keys(base):
        mats = [tv[key].double() for tv in vectors]
        d = min(mats[0].shape)
        k = max(1, int(round(top_fraction * d)))
        bases = [torch.linalg.svd(m, full_matrices=False)[0][:, :k] for m in mats]
        pairs = [float((bases[i].T @ bases[j]).pow(2).sum() / k)
                 for i in range(len(bases)) for j in range(i + 1, len(bases))]
        kind, depth = module_kind(key)
        rows.append({"key": key, "kind": kind, "depth": depth, "k": k, "overlap": float(np.mean(pairs)),
                     "chance": k / mats[0].shape[0]})
    return rows


def spectra(base: dict, experts: Sequence[dict], key: str) -> dict:
    """Singular values of each task vector and of their sum at one module (normalised to the largest)."""
    vectors = task_vectors(base, experts)
    single = [torch.linalg.svdvals(tv[key].double()) for tv in vectors]
    total = torch.linalg.svdvals(sum(tv[key].double() for tv in vectors))
    return {"key": key, "tasks": [(s / s[0]).tolist() for s in single], "sum": (total / total[0]).tolist()}


def task_vector_norms(base: Mapping, experts: Sequence[Mapping], tasks: Sequence[str]) -> dict[str, float]:
    """‖τ_t‖ over every tensor of the base's state dict, per task (how unequal the experts' updates are)."""
    return {t: float(torch.sqrt(sum(((e[k].double() - base[k].double()) ** 2).sum() for k in base)))
            for t, e in zip(tasks, experts)}
