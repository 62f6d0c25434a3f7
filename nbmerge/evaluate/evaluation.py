"""Fast evaluation of zoo checkpoints: the hot loop of every search (BMM evaluates a merged model per trial).

Preprocessed inputs are cached per task and split; one encoder instance is reused (weights loaded in place);
batches run under ``inference_mode`` with no per-example Python work.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Optional

import numpy as np
import torch

from .metrics import accuracy, expected_calibration_error, nll
from ..models.base import Head, features, load_encoder_weights
from ..models.base import ModelFamily


class Evaluator:
    def __init__(self, arch: ModelFamily, tasks: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]],
                 heads: Mapping[str, Head], expert_accuracy: Optional[Mapping[str, Mapping[str, float]]] = None,
                 batch: int = 0, device: str = "cpu"):
        """``tasks[name][split] = (inputs [N, ...] as the zoo stores them, labels int64 [N])``: uint8 images for the
        vision zoo, token ids and masks [N, 2, L] for the text zoo (``arch`` knows which)."""
        self.device = device
        self.arch = arch
        self.encoder = arch.build().to(device).eval()
        self.heads = {name: h.to(device) for name, h in heads.items()}
        self.batch = batch or arch.eval_batch
        self.expert_accuracy = expert_accuracy or {}
        self._inputs: dict[tuple[str, str], tuple[torch.Tensor, torch.Tensor]] = {}
        # a family may fix the order examples are evaluated in (text: by length, so that each batch, trimmed to its
        # longest example, carries little padding); every metric here is order-free
        for name, splits in tasks.items():
            for split, (images, labels) in splits.items():
                chosen = arch.eval_order(images)
                if chosen is not None:
                    images, labels = images[chosen], labels[chosen]
                self._inputs[(name, split)] = (arch.inputs(images).contiguous().to(device),
                                               torch.from_numpy(labels).long().to(device))
        self.task_names = list(tasks)
        self._full_val = {name: self._inputs[(name, "val")] for name in self.task_names if (name, "val") in self._inputs}
        self._val_subset = (0, 0)
        self.images_seen = 0
        self.seconds = 0.0

    def use_val_subset(self, per_task: int = 0, seed: int = 0) -> None:
        """Cut the ``val`` split to a fixed, seeded subset of ``per_task`` examples per task (0: the whole split).

        Searches and α grids evaluate many models on ``val``; a fixed subset makes each trial cheaper while every
        trial still sees the same examples. Test is never cut."""
        if isinstance(per_task, bool) or not isinstance(per_task, int) or per_task < 0:
            raise ValueError(f"val subset size must be a non-negative integer, got {per_task!r}")
        self._val_subset = (per_task, seed) if per_task else (0, 0)
        for k, name in enumerate(self.task_names):
            if name not in self._full_val:
                continue
            inputs, labels = self._full_val[name]
            if per_task and per_task < len(labels):
                chosen = np.sort(np.random.default_rng([seed, k, 11]).choice(len(labels), per_task, replace=False))
                index = torch.from_numpy(chosen).to(labels.device)
                inputs, labels = inputs[index], labels[index]
            self._inputs[(name, "val")] = (inputs, labels)

    def with_val_subset(self, per_task: int = 0, seed: int = 0) -> "Evaluator":
        """A view of this evaluator (the same encoder, heads and inputs) whose ``val`` split is its own seeded subset
        (:meth:`use_val_subset`): views at different seeds never move one another's subset. Like the evaluator
        itself, views evaluate one model at a time (they share the encoder whose weights :meth:`load` sets)."""
        import copy

        view = copy.copy(self)
        view._inputs = dict(self._inputs)
        view.use_val_subset(per_task, seed)
        return view

    def unlabeled(self, task: str, split: str = "val") -> torch.Tensor:
        """The inputs of ``task``'s whole ``split``, ready for the encoder, without their labels (what an
        unsupervised method such as AdaMerging may see; the validation subset of :meth:`use_val_subset` does not cut
        it)."""
        if split == "test":
            raise ValueError("unlabeled inputs come from validation: test data never chooses anything")
        return (self._full_val[task] if split == "val" else self._inputs[(task, split)])[0]

    def labeled(self, task: str, split: str = "val") -> tuple[torch.Tensor, torch.Tensor]:
        """``task``'s validation inputs and labels as evaluated now (the seeded subset of :meth:`use_val_subset`, or
        the whole split): the labeled examples a method may learn from where validation already chooses α."""
        if split != "val":
            raise ValueError("labeled examples come from validation: test data never chooses anything")
        return self._inputs[(task, split)]

    def subset_spec(self, split: str) -> Optional[list]:
        """What part of ``split`` is evaluated (None: all of it): part of every cached trial's key."""
        return list(self._val_subset) if split == "val" and self._val_subset[0] else None

    def load(self, state_dict: Mapping[str, torch.Tensor]) -> None:
        load_encoder_weights(self.encoder, dict(state_dict), self.arch.prefix)

    @torch.inference_mode()
    def logits(self, task: str, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        inputs, labels = self._inputs[(task, split)]
        head = self.heads[task]
        start = time.perf_counter()
        out = torch.cat([head.logits(features(self.encoder, inputs[i:i + self.batch]))
                         for i in range(0, len(inputs), self.batch)])
        self.seconds += time.perf_counter() - start
        self.images_seen += len(inputs)
        return out, labels

    def evaluate(self, state_dict: Optional[Mapping[str, torch.Tensor]] = None, split: str = "test",
                 tasks: Optional[Sequence[str]] = None) -> dict:
        """Per-task accuracy, NLL, ECE (and normalized accuracy when expert accuracies are known), with means."""
        if state_dict is not None:
            self.load(state_dict)
        per_task = {}
        for task in tasks or self.task_names:
            logits, labels = self.logits(task, split)
            row = {"accuracy": accuracy(logits, labels), "nll": nll(logits, labels),
                   "ece": expected_calibration_error(logits.softmax(-1), labels)}
            expert = self.expert_accuracy.get(task, {}).get(split)
            if expert:
                row["normalized_accuracy"] = row["accuracy"] / expert
            per_task[task] = row
        keys = sorted({k for row in per_task.values() for k in row})
        means = {k: float(np.mean([row[k] for row in per_task.values() if k in row])) for k in keys}
        return {"split": split, "tasks": per_task, "mean": means}

    @property
    def throughput(self) -> float:
        return self.images_seen / self.seconds if self.seconds else float("nan")
