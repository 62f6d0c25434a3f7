"""Stand-ins for a zoo and its evaluator that the trial-cache tests share: no model, no data, logits computed from a
one-number "model" so that a stronger model is measurably stronger."""

from __future__ import annotations

import numpy as np
import torch


class FakeZoo:
    def __init__(self, root):
        self.root = root
        self.manifest = {"checksums": {"base.safetensors": "abc"}}


class FakeEvaluator:
    """Two tasks of ``n`` examples; the 'model' is a dict {"shift": float} that moves the true class's logit."""

    task_names = ["a", "b"]

    def __init__(self, n: int = 50):
        self.n = n
        self.calls = 0
        self.state = None
        self.subset = None

    def subset_spec(self, split):
        return self.subset if split == "val" else None

    def load(self, state):
        self.state = state

    def logits(self, task, split):
        self.calls += 1
        rng = np.random.default_rng(0 if task == "a" else 1)
        labels = torch.from_numpy(rng.integers(0, 3, self.n))
        logits = torch.from_numpy(rng.normal(size=(self.n, 3))).float()
        logits[torch.arange(self.n), labels] += float(self.state["shift"])
        return logits, labels
