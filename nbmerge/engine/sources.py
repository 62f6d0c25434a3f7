"""Sources seen through a transformation, read lazily tensor by tensor: an expert whose task vector is weighted
(a recipe's per-model weight) and a merged stream cast to the output dtype."""

from __future__ import annotations

import torch

from ..errors import NumericalError
from .io import as_source


class WeightedExpert:
    """An expert seen through a task-vector weight: θ₀ + w·(θ − θ₀) on floating tensors (read lazily)."""

    def __init__(self, base, expert, weight: float):
        self.base, self.weight = as_source(base, "base"), weight
        self.expert = as_source(expert, "expert", base=self.base)
        self.name = f"{self.expert.name} (weight {weight:g})"
        self.files = getattr(self.expert, "files", ())

    def keys(self):
        return self.expert.keys()

    def shape(self, key):
        return self.expert.shape(key)

    def dtype(self, key):
        return self.expert.dtype(key)

    def get(self, key):
        value = self.expert.get(key)
        if not value.is_floating_point() or key not in self.base.keys() or self.base.shape(key) != self.shape(key):
            return value  # the walker's own checks report mismatches
        base = self.base.get(key).to(torch.float64 if value.dtype == torch.float64 else torch.float32)
        return (base + self.weight * (value.to(base.dtype) - base)).to(value.dtype)


class CastOutput:
    """The merged (key, tensor) stream with floating tensors cast to ``dtype`` (non-finite results refused)."""

    def __init__(self, items, dtype: torch.dtype):
        self.items, self.dtype = items, dtype

    def __iter__(self):
        for key, value in self.items:
            if value.is_floating_point():
                value = value.to(self.dtype)
                if not bool(value.isfinite().all()):
                    raise NumericalError(f"merged tensor {key!r} overflows {self.dtype}; nothing was written")
            yield key, value
