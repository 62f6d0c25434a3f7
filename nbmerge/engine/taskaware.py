"""Task-aware merges: one model per task, from shared parts, for methods that need the task at inference.

EMR-Merging and TSV-C do not return one merged model. They store one shared part (EMR's unified task vector, TSV-C
nothing) and a small per-task part (EMR's mask and rescaler, TSV-C's low-rank factors), and task t is evaluated on
its own reconstruction θ₀ + α·τ̂_t. :class:`TaskModels` holds those reconstructions, one state dict per expert in
expert order; the trial cache evaluates each task on its own model (``protocol.evaluate_predictions``), ``scaled``
applies α to each, and every table marks such a method "task-aware (not a single model)". They are not comparable
to single-model merges as merges: they store more than one model's worth of task information and need the task
identity at inference, which the papers' tables say too.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import torch

from .walker import ModelView, WalkOptions

TASK_AWARE_NOTE = "task-aware (not a single model)"


class TaskModels(list):
    """One state dict per task (expert order). ``names``: the tasks' names when known (else evaluation pairs the
    i-th model with the evaluator's i-th task); ``info``: what the method stores (rescalers, ranks ...)."""

    def __init__(self, models: Sequence[Mapping[str, torch.Tensor]], names: Optional[Sequence[str]] = None,
                 info: Optional[dict] = None):
        super().__init__(dict(m) for m in models)
        self.names = list(names) if names is not None else None
        self.info = dict(info or {})

    def for_task(self, task: str, position: int) -> dict:
        if self.names is not None:
            return self[self.names.index(task)]
        return self[position]


def is_task_aware(value) -> bool:
    return isinstance(value, TaskModels)


def shown(label: str, method: str) -> str:
    """A table's name for ``method``: marked when it is task-aware, so that no reader takes it for one model (the
    method must be registered: ``nbmerge.methods`` imported, as every notebook has)."""
    from .registry import get_method

    try:
        aware = get_method(method).task_aware
    except Exception:  # noqa: BLE001 - not a registered method (an expert, the base): shown as it is
        return label
    return f"{label} ({TASK_AWARE_NOTE})" if aware else label


def float_task_vectors(base, experts, walk: Optional[WalkOptions] = None
                       ) -> tuple[ModelView, list[str], dict[str, torch.Tensor], list[dict[str, torch.Tensor]]]:
    """The checked view, its floating keys, θ₀ (compute dtype) and every τ_t, whole models in memory."""
    view = ModelView(base, experts, walk or WalkOptions(), {})
    keys = view.float_keys()
    theta0 = {key: view.base_tensor(key) for key in keys}
    deltas = {key: view.deltas(key, theta0[key]) for key in keys}
    taus = [{key: deltas[key][t] for key in keys} for t in range(view.T)]
    return view, keys, theta0, taus


def assemble(view: ModelView, keys: Sequence[str], theta0: Mapping[str, torch.Tensor],
             updates: Sequence[Mapping[str, torch.Tensor]], scale: float) -> list[dict]:
    """θ₀ + α·update_t for every task, in the base's dtypes; non-floating tensors as the base has them."""
    from ..errors import NumericalError
    from .walker import all_finite

    models = []
    for t, update in enumerate(updates):
        model = {}
        for key in view.base.keys():
            if key in update:
                model[key] = (theta0[key] + scale * update[key]).to(view.base.dtype(key))
                if not all_finite(model[key]):
                    raise NumericalError(f"task {t}'s model: tensor {key!r} is not finite in "
                                         f"{str(model[key].dtype).replace('torch.', '')} at scale {scale:g}; "
                                         "nothing was written")
            else:
                model[key] = view.base.get(key)
        models.append(model)
    return models
