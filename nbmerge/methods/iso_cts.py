"""ISO-CTS (Marczak et al., ICML 2025): isotropic merging in the common and task-specific subspaces."""

from __future__ import annotations

import torch

from ..errors import MethodError
from ..engine.linalg import polar_factor, top_singular
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge


def subspace_sizes(rank: int, tasks: int, common_space_fraction: float) -> tuple[int, int]:
    """(directions of the common subspace, directions per task) for a matrix of rank ``rank``.

    The task-specific part is rounded to a multiple of T so that every task gets the same number of directions.
    """
    common = int(rank * common_space_fraction)
    task_total = round((rank - common) / tasks) * tasks
    return rank - task_total, task_total // tasks


def iso_cts_matrix(deltas: list[torch.Tensor], *, common_space_fraction: float = 0.8) -> torch.Tensor:
    """Common subspace of the TA sum plus each task's top directions outside it, with an isotropic spectrum."""
    if not 0.0 <= common_space_fraction <= 1.0:
        raise MethodError(f"iso_cts: common_space_fraction must be in [0, 1], got {common_space_fraction}")
    common, per_task = subspace_sizes(min(deltas[0].shape), len(deltas), common_space_fraction)
    u_common, s_common, vh_common = top_singular(sum_kernel(deltas), common)
    left, values, right = [], [], []
    for delta in deltas:
        residual = delta - u_common @ (u_common.T @ delta)
        ut, st, vht = top_singular(residual, per_task)
        left.append(ut)
        values.append(st)
        right.append(vht)
    left.append(u_common)
    values.append(s_common)
    right.append(vh_common)
    left_orth = polar_factor(torch.cat(left, dim=1))
    right_orth = polar_factor(torch.cat(right, dim=0))
    return torch.cat(values).mean() * (left_orth @ right_orth)


RULE = Rule(matrix=iso_cts_matrix, fallback="mean")


@register("iso_cts", paper="https://arxiv.org/abs/2502.04959",
          help={"common_space_fraction": "fraction of the rank given to the common subspace (official 0.8)",
                "scale": "global coefficient α on every tensor (FusionBench default 1.0; its docs use 1.5)"})
def iso_cts(base, experts, *, common_space_fraction: float = 0.8, scale: float = 1.0, walk=None, stream=False):
    """ISO-CTS: isotropic merge over the common subspace plus task-specific directions."""
    return walk_merge(base, experts, RULE, params={"common_space_fraction": common_space_fraction},
                      scale=scale, walk=walk, stream=stream)
