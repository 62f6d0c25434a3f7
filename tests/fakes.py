"""Stand-ins the tests share. For the trial-cache tests: a zoo and its evaluator, no model, no data, logits computed
from a one-number "model" so that a stronger model is measurably stronger. For the BMM notebooks' tests (20-23):
synthetic predictions and the notebooks' configs at their parameters cells' defaults."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from nbmerge.evaluate import protocol
from nbmerge.evaluate.protocol import Predictions
from nbmerge.experiments import bmm_benchmark, bmm_calibration, bmm_datafree, bmm_search
from nbmerge.params import notebook_config
from nbmerge.tune import alpha_tuning
from nbmerge.tune.study import AnchorRun


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


# ------------------------------------------------------------------------------ the BMM notebooks and their configs

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
BENCHMARK = NOTEBOOKS / "20_bmm_benchmark.ipynb"
DATAFREE_NB = NOTEBOOKS / "22_bmm_datafree.ipynb"
SEARCH = NOTEBOOKS / "23_bmm_search.ipynb"


def bench_config(**overrides):
    """The benchmark notebook's config at its parameters cell's defaults, with ``overrides`` (as papermill's -p)."""
    return notebook_config(bmm_benchmark.BenchmarkConfig, BENCHMARK, **overrides)


def search_config(**overrides):
    """The search notebook's config at its parameters cell's defaults, with ``overrides``."""
    return notebook_config(bmm_search.SearchConfig, SEARCH, **overrides)


def _datafree(**overrides):
    return notebook_config(bmm_datafree.DatafreeConfig, DATAFREE_NB, **overrides)


def _labs(config):
    return bmm_calibration.seed_labs(config.suite, config.seeds, cache=config.cache, device=config.device,
                                     val_examples=config.val_examples)


# ------------------------------------------------------------------------------------------ synthetic predictions

TASKS = ("a", "b", "c")
N = 400                       # test examples per task
EXPERT = {t: 0.9 for t in TASKS}


def fake(correct: float, wrong_shift: int = 1, classes: int = 4, offset: float = 0.0) -> protocol.Predictions:
    """Predictions on N examples per task, right on the examples in [offset, offset + correct) of the range (so two
    models with the same window agree everywhere); a wrong example predicts label + ``wrong_shift``."""
    logits, labels = {}, {}
    for k, task in enumerate(TASKS):
        y = (np.arange(N) * 7 + k) % classes
        right = np.zeros(N, bool)
        start = int(round(offset * N))
        right[start:start + int(round(correct * N))] = True
        pred = np.where(right, y, (y + wrong_shift) % classes)
        logits[task] = np.eye(classes, dtype=np.float32)[pred] * 5
        labels[task] = y
    return protocol.Predictions(logits, labels)


def anchor_run(name, test, alpha=1.0):
    tuned = alpha_tuning.Tuned({"method": name}, alpha, [{"alpha": alpha, "val_accuracy": test.mean_accuracy()}])
    return AnchorRun(name, {}, tuned, test)


def verdict(c):
    return c.verdict


OUTCOMES = {"held", "contradicted", "inconclusive", "not tested"}


def _preds(logits, labels, split="test"):
    return Predictions({t: np.asarray(v, dtype=np.float32) for t, v in logits.items()},
                       {t: np.asarray(v) for t, v in labels.items()}, split)


def _calibrated_and_overconfident(n=3000, seed=0):
    """Two models with the same predictions: one calibrated, one whose confidences are pushed towards 1."""
    rng = np.random.default_rng(seed)
    z = 2 * rng.standard_normal((n, 3))
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in p])
    return _preds({"a": z}, {"a": y}), _preds({"a": 4 * z}, {"a": y})
