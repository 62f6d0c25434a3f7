"""Mixture-of-Gaussians merging by EM (MultiIVON-Hess; Monzón Maldonado et al., arXiv 2412.08147) for one α.

Each task's posterior is a mixture of K diagonal Gaussians N(m_tk, diag(S_tk)⁻¹), one per expert run of the task
(e.g. K IVON runs); the merge minimises J(θ) = −Σ_t α_t log q_t(θ) by EM (``nbmerge.solvers.pareto.mog_merge``,
docs/methods.md §15): the E-step weighs each component by its responsibility, the M-step is the precision-weighted
average θ = Σ_tk α_t r_tk S_tk m_tk / Σ_tk α_t r_tk S_tk. With K = 1 it is the α-weighted precision (Fisher) average.

The experts are the T·K component means, task-major (task 1's K runs, then task 2's, ...); the ``fishers`` files are
their diagonal precisions S_tk (IVON's Hessian estimates, or Fishers), one per expert. EM couples every parameter
through the responsibilities, so the keys the precision files cover are merged jointly, as one flat vector in
float64 (memory: about 3·T·K copies of those parameters); any other floating-point key gets the α-weighted task
vector Σ_t α_t τ̄_t (τ̄_t: the mean of task t's runs), the isotropic member of the same family. The Pareto notebook
draws whole fronts over many α with the batched solver; this method is one point of such a front.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..errors import MethodError, NumericalError
from ..engine.registry import register
from ..solvers.pareto import check_alphas, mog_merge
from ..engine.walker import ModelView, WalkOptions, all_finite


def alpha_row(alphas: Sequence[float], tasks: int) -> torch.Tensor:
    """Task weights α (a list, coerced by the registry from ``0.3,0.7`` on the CLI) → a float64 [T] row on the
    simplex; empty → uniform."""
    if not alphas:
        return torch.full((tasks,), 1.0 / tasks, dtype=torch.float64)
    return check_alphas(list(alphas), tasks)[0]


def _tasks(experts: int, components: int) -> int:
    if isinstance(components, bool) or components < 1 or experts % components:
        raise MethodError(f"mog_em: {experts} experts are not a whole number of tasks of components={components} "
                          "runs each (order them task-major: task 1's runs, then task 2's, ...)")
    return experts // components


@register("mog_em", paper="https://arxiv.org/abs/2412.08147", needs=("fishers",),
          help={"alphas": "task weights α on the simplex, a list (CLI: comma-separated; empty: uniform 1/T)",
                "components": "K, the expert runs per task (experts task-major; T = experts / K)",
                "iterations": "EM steps at most",
                "tol": "stop once no entry moves by more than tol·(1 + max|θ₀|) in an EM step",
                "temperature": "τ dividing every log-density (1: the plain mixture; large: uniform responsibilities)",
                "scale": "global coefficient on the merged task vector (1: the EM minimiser)"})
def mog_em(base, experts, *, fishers, alphas: tuple = (), components: int = 1, iterations: int = 20,
           tol: float = 1e-7, temperature: float = 1.0, scale: float = 1.0, walk=None, stream=False):
    """Mixture-of-Gaussians merge by EM of K posterior components per task, for one task weighting α."""
    view = ModelView(base, experts, walk or WalkOptions(), {"fishers": fishers})
    tasks = _tasks(view.T, components)
    alpha = alpha_row(alphas, tasks)
    floats = [k for k in view.keys if view.is_float(k)]
    covered = [k for k in floats if k in set(view.stats["fishers"][0].keys())]
    if not covered:
        raise MethodError("mog_em: the precision (fishers) files cover none of the model's floating-point keys")
    base_flat = torch.cat([view.base_tensor(k).double().reshape(-1) for k in covered])
    means = torch.cat([torch.stack([view.read(e, k, torch.float64).reshape(-1) for e in view.experts])
                       for k in covered], 1)
    precisions = torch.cat([torch.stack([s.double().reshape(-1) for s in view.stat("fishers", k)])
                            for k in covered], 1)
    shape = (tasks, components, base_flat.numel())
    merged = mog_merge(base_flat, means.reshape(shape), precisions.reshape(shape), alpha[None],
                       iterations=iterations, tol=tol, temperature=temperature)[0]
    delta = merged - base_flat
    del means, precisions
    out, offset = {}, 0
    for key in view.base.keys():
        original = view.base.get(key)
        if key in covered:
            size = original.numel()
            piece = delta[offset:offset + size].reshape(original.shape)
            offset += size
            out[key] = (original.to(view.device, torch.float64) + scale * piece).to(original.dtype)
        elif key in floats:
            base_tensor = view.base_tensor(key)
            runs = torch.stack(view.deltas(key, base_tensor)).reshape(tasks, components, *base_tensor.shape)
            tau = torch.einsum("t,t...->...", alpha.to(base_tensor.device, base_tensor.dtype), runs.mean(1))
            out[key] = (base_tensor + scale * tau).to(original.dtype)
        else:
            out[key] = original.clone()
            continue
        if view.walk.check_finite and not all_finite(out[key]):  # the same check every walker method makes
            bad = int((~torch.isfinite(out[key])).sum())
            raise NumericalError(f"merged tensor {key!r} is not finite in {str(original.dtype).replace('torch.', '')} "
                                 f"({bad} of {original.numel()} values; temperature {temperature:g}, scale {scale:g}); "
                                 "nothing was written")
    return iter(out.items()) if stream else out
