"""KnOTS (Stoica et al., ICLR 2025, arXiv 2410.19735): put every task's LoRA update of a layer in one SVD basis,
then merge the tasks' coordinates there (TIES by default).

Per LoRA-adapted weight, as the official code (gstoica27/KnOTS, MIT) computes it (docs/methods.md, section 20):

    [ΔW_1 | ΔW_2 | … | ΔW_T] = U·diag(s)·[V_1 | … | V_T]     (O × T·I, SVD in float64, components with s ≤ 1e-5 dropped)
    Z_t = diag(s)·V_t                                          (the task's coordinates in the shared basis U)
    M = TIES(Z_1, …, Z_T): per task the top ``density`` of |Z_t| over every adapted weight of the model, one sign per
        entry from the sum of the trimmed values (zero sums take the majority sign of the model), the mean of the
        agreeing entries
    θ = θ₀ + α·U·M

Only LoRA adapter experts (PEFT folders) are merged: the weights every adapter targets take the path above, every
other tensor keeps the base's value (the official code leaves it pretrained), and an expert that changes one (a
dense checkpoint, a trained bias, ``modules_to_save``) is refused. With one expert and ``density`` = 1 the merge is
that expert (U·Z_1 = ΔW_1).
"""

from __future__ import annotations

import math

import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge
from .ties import trim_stack, check_ties_params, global_order_statistics, ties_kernel

SV_EPS = 1e-5  # the official absolute threshold on singular values (float64 SVD)


def align(deltas: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """``(U, [Z_t])``: the shared left basis of the side-by-side task updates and each task's coordinates
    diag(s)·V_t, in the deltas' dtype."""
    dtype = deltas[0].dtype
    width = deltas[0].shape[1]
    u, s, vh = torch.linalg.svd(torch.cat(deltas, dim=1).to(torch.float64), full_matrices=False)
    kept = s > SV_EPS
    u, s, vh = u[:, kept], s[kept], vh[kept]
    coordinates = s[:, None] * vh
    return u.to(dtype), [coordinates[:, t * width:(t + 1) * width].to(dtype) for t in range(len(deltas))]


def knots_prepare(view, *, density: float = 0.2, merge: str = "mean") -> dict:
    check_ties_params(density, merge)
    adapted, untouched = {}, []
    for key in view.float_keys():
        factors = view.low_rank(key)
        if factors is not None and all(f is not None for f in factors) and len(view.base.shape(key)) == 2:
            adapted[key] = align(view.deltas(key))
        elif factors is not None:
            missing = [e.name for e, f in zip(view.experts, factors) if f is None]
            raise MethodError(f"knots: {key!r} is adapted by some experts but not by {', '.join(missing)}: KnOTS "
                              "aligns the same LoRA-adapted weights of every expert")
        else:
            untouched.append(key)
    if not adapted:
        raise MethodError("knots merges LoRA adapters (PEFT folders with adapter_config.json): no weight is adapted by "
                          "every expert (dense checkpoints have no LoRA updates to align; use ties or tsv for them)")
    rows = view.T
    total = sum(z.numel() for _, zs in adapted.values() for z in zs[:1])
    k = total - int(total * density)
    if k < 1:  # density 1 keeps every coordinate
        thresholds = torch.zeros(rows, device=view.device)
    else:
        def magnitudes():
            for _, zs in adapted.values():
                for t, z in enumerate(zs):
                    yield t, z.abs().reshape(-1)
        thresholds = global_order_statistics(magnitudes, rows, torch.full((rows,), k), view.device)
    signs = torch.zeros((), dtype=torch.float64)
    for _, zs in adapted.values():  # zero elected signs take the sign of the model's sum of elected signs
        signs += torch.sign(trim_stack(zs, thresholds).sum(0)).sum(dtype=torch.float64).cpu()
    return {"aligned": adapted, "thresholds": thresholds, "majority": float(torch.sign(signs))}


def knots_kernel(deltas: list[torch.Tensor], *, key: str, aligned: dict, thresholds: torch.Tensor, majority: float,
                 merge: str = "mean") -> torch.Tensor:
    if key not in aligned:
        changed = [t for t, d in enumerate(deltas) if bool((d != 0).any())]
        if changed:
            raise MethodError(f"knots: expert {changed[0] + 1} changes {key!r}, which is not a LoRA-adapted weight "
                              "of every expert (a dense expert, a trained bias or modules_to_save): KnOTS merges "
                              "LoRA updates only")
        return torch.zeros_like(deltas[0])
    u, coordinates = aligned[key]
    merged = ties_kernel(coordinates, thresholds=thresholds, majority=majority, merge=merge)
    return (u @ merged.to(u.dtype)).to(deltas[0].dtype)


RULE = Rule(matrix=None, fallback=knots_kernel, prepare=knots_prepare)


# Defaults: the official ViT-B/32 rank-16 KnOTS-TIES configuration (topK 20 %, disjoint mean, λ = 0.6).
@register("knots", paper="https://arxiv.org/abs/2410.19735", lora_only=True,
          help={"density": "share of each task's aligned coordinates kept, over every adapted weight of the model "
                           "(the official topK 20 %)",
                "merge": "what the aligned coordinates are merged by after trimming and sign election: mean "
                         "(disjoint mean, KnOTS-TIES), sum or max (TIES's options)",
                "scale": "global coefficient α (the official λ): θ = θ₀ + α·U·M"})
def knots(base, experts, *, density: float = 0.2, merge: str = "mean", scale: float = 0.6, walk=None,
          stream=False):
    """KnOTS: align every task's LoRA update of a layer by one SVD, then TIES-merge the aligned coordinates."""
    if isinstance(density, bool) or not isinstance(density, (int, float)) or not math.isfinite(density):
        raise MethodError(f"knots: density must be a number in (0, 1], got {density!r}")
    return walk_merge(base, experts, RULE, params={"density": density, "merge": merge}, scale=scale, walk=walk,
                      stream=stream)
