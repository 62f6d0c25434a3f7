"""AdaMerging (Yang et al., ICLR 2024): task arithmetic with one learned coefficient per task and tensor.

θ_l = θ₀_l + α·Σ_t λ_{t,l}·τ_{t,l}, the λ read from a coefficient file that :mod:`nbmerge.tune.adamerging`
learns by entropy minimisation on unlabeled inputs (``nbmerge adamerging --suite ... --out coefficients.safetensors``).
The merge itself needs no data; learning the coefficients does, so the method is listed as data-assisted in the
notebooks. A tensor the file has no coefficients for (a buffer: the training only moves parameters) stays at θ₀,
and a warning counts them; a key of the file that the model lacks, or another number of tasks, is an error.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

import torch

from ..errors import MethodError, NbmergeError, NbmergeWarning
from ..engine.registry import register
from ..engine.walker import Rule, walk_merge

FORMAT = "nbmerge-adamerging-1"   # the coefficient file's metadata["format"]


@dataclass
class Coefficients:
    """What a run learned: ``lambdas[t, l]`` as the merge uses them (clamped when the run clamps) for ``tasks`` × the
    parameter ``keys`` (checkpoint names), and the loss of every step."""

    tasks: list[str]
    keys: list[str]
    lambdas: torch.Tensor
    losses: list[float] = field(default_factory=list)
    settings: Optional[dict] = None   # the learning run's settings (``AdaMergingSettings`` as a dict)

    def of(self, key: str) -> torch.Tensor:
        """λ_t of every task for the tensor ``key``."""
        return self.lambdas[:, self.keys.index(key)]

    def merged(self, base: Mapping[str, torch.Tensor], experts: Sequence[Mapping[str, torch.Tensor]]
               ) -> dict[str, torch.Tensor]:
        """θ₀ + Σ_t λ_{t,l} τ_{t,l} for every key with coefficients (computed in float32, cast back to the base's
        dtype); every other tensor is the base's."""
        if len(experts) != len(self.tasks):
            raise NbmergeError(f"adamerging: coefficients for {len(self.tasks)} tasks, {len(experts)} experts given")
        out = {}
        index = {k: i for i, k in enumerate(self.keys)}
        for key, theta0 in base.items():
            if key not in index:
                out[key] = theta0.clone()
                continue
            total = theta0.float().clone()
            for t, expert in enumerate(experts):
                total += float(self.lambdas[t, index[key]]) * (expert[key].float() - theta0.float())
            out[key] = total.to(theta0.dtype)
        return out

    def save(self, path: str | Path) -> Path:
        """One ``[T]`` float32 tensor per key, the tasks, key order and settings in the metadata (atomic)."""
        from ..engine.io import write_tagged

        tensors = {key: self.lambdas[:, i].float() for i, key in enumerate(self.keys)}
        return write_tagged(path, tensors, FORMAT, tasks=self.tasks, keys=self.keys, settings=self.settings,
                            final_loss=self.losses[-1] if self.losses else None)

    @classmethod
    def load(cls, path: str | Path) -> "Coefficients":
        from ..errors import CheckpointError
        from ..engine.io import read_tagged

        stored, meta = read_tagged(path, FORMAT, "an AdaMerging coefficient file (written by `nbmerge adamerging`)")
        tasks, keys = meta["tasks"], meta.get("keys")
        if keys is None or set(keys) != set(stored):   # the parameters' order (safetensors sorts names)
            keys = sorted(stored)
        tensors = [stored[k] for k in keys]
        if any(t.ndim != 1 or t.numel() != len(tasks) for t in tensors):
            raise CheckpointError(f"{path}: every coefficient must be a vector of {len(tasks)} (one per task)")
        lambdas = torch.stack(tensors, dim=1) if tensors else torch.zeros(len(tasks), 0)
        if not torch.isfinite(lambdas).all():
            raise CheckpointError(f"{path}: coefficients contain NaN or Inf")
        return cls(tasks, keys, lambdas, settings=meta.get("settings"))


def adamerging_prepare(view, *, coefficients: str = ""):
    if not coefficients:
        raise MethodError("adamerging needs its learned coefficients: --param coefficients=FILE, a file written by "
                          "`nbmerge adamerging --suite SUITE --out FILE` (entropy minimisation on unlabeled inputs)")
    learned = Coefficients.load(coefficients)
    if len(learned.tasks) != view.T:
        raise MethodError(f"adamerging: {coefficients} holds coefficients for {len(learned.tasks)} tasks "
                          f"({', '.join(learned.tasks)}), but {view.T} experts are merged")
    merged = set(view.keys)
    foreign = [k for k in learned.keys if k not in merged]
    if foreign:
        raise MethodError(f"adamerging: {coefficients} has coefficients for {foreign[0]!r}, which the base does not "
                          f"have ({len(foreign)} such keys): the file was learned for another model")
    kept = [k for k in view.keys if k not in set(learned.keys) and view.is_float(k)]
    if kept:
        warnings.warn(f"adamerging: {len(kept)} floating tensors have no learned coefficient and stay at the base "
                      f"(first: {kept[0]!r})", NbmergeWarning, stacklevel=2)
    return {"lambdas": {k: learned.of(k) for k in learned.keys}}


def adamerging_kernel(deltas: list[torch.Tensor], *, key: str, lambdas: dict) -> torch.Tensor:
    if key not in lambdas:
        return torch.zeros_like(deltas[0])
    weights = lambdas[key].tolist()
    total = deltas[0] * weights[0]
    for weight, delta in zip(weights[1:], deltas[1:]):
        total.add_(delta, alpha=weight)
    return total


RULE = Rule(matrix=None, fallback=adamerging_kernel, prepare=adamerging_prepare, elementwise=True)


@register("adamerging", paper="https://arxiv.org/abs/2310.02575", learned="unlabeled inputs",
          help={"coefficients": "file of learned λ_{t,l} (one per task and tensor), from `nbmerge adamerging`",
                "scale": "global coefficient α on the learned merge: θ = θ₀ + α·Σ_t λ_{t,l}·τ_{t,l} "
                         "(AdaMerging: 1)"})
def adamerging(base, experts, *, coefficients: str = "", scale: float = 1.0, walk=None, stream=False):
    """AdaMerging: task arithmetic with a coefficient per task and tensor, learned on unlabeled inputs."""
    return walk_merge(base, experts, RULE, params={"coefficients": coefficients}, scale=scale, walk=walk,
                      stream=stream)
