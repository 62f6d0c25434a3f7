"""Classification metrics shared by the zoo, the notebooks and calibration studies."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import torch
import torch.nn.functional as F


def accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    return (logits.argmax(-1) == labels).double().mean().item()


def nll(logits: torch.Tensor, labels: torch.Tensor) -> float:
    return F.cross_entropy(logits.double(), labels).item()


def expected_calibration_error(probs: torch.Tensor, labels: torch.Tensor, bins: int = 15) -> float:
    """ECE with equal-width confidence bins (Guo et al., 2017): Σ_b |B_b|/n · |acc(B_b) − conf(B_b)|."""
    confidence, predicted = probs.max(-1)
    correct = (predicted == labels).double()
    edges = torch.linspace(0, 1, bins + 1, dtype=confidence.dtype, device=confidence.device)
    # bin i holds confidences in (edges[i], edges[i+1]]; confidence 0 goes to the first bin
    index = (torch.bucketize(confidence, edges, right=False) - 1).clamp(0, bins - 1)
    total = torch.zeros(bins, dtype=torch.float64, device=probs.device)
    count = torch.zeros(bins, dtype=torch.float64, device=probs.device)
    conf_sum = torch.zeros(bins, dtype=torch.float64, device=probs.device)
    count.index_add_(0, index, torch.ones_like(correct))
    total.index_add_(0, index, correct)
    conf_sum.index_add_(0, index, confidence.double())
    return ((total - conf_sum).abs().sum() / len(labels)).item()


def ece_bins(probs: np.ndarray, labels: np.ndarray, bins: int = 15):
    """Per example: confidence, correctness (0/1) and confidence-bin index, binned as
    :func:`expected_calibration_error` bins (what a reliability diagram or a bootstrap of the ECE adds up)."""
    confidence = probs.max(-1)
    correct = (probs.argmax(-1) == labels).astype(np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, bins - 1)
    return confidence, correct, index


def normalized_mean(accuracies: Mapping[str, float], expert_accuracies: Mapping[str, float],
                    tasks: Iterable[str]) -> float:
    """Mean over ``tasks`` of accuracy / the task's expert accuracy (the papers' normalized accuracy).

    A task whose expert scores 0 (a broken checkpoint, a wrong head) has no normalized accuracy: it is left out
    of the mean; NaN when no task has one."""
    ratios = [accuracies[t] / expert_accuracies[t] for t in tasks if expert_accuracies[t] > 0]
    return sum(ratios) / len(ratios) if ratios else float("nan")


def relative_gain(value: float, reference: float) -> float:
    """(value − reference)/reference, e.g. of a merge's accuracy over its anchor's; NaN when the reference is 0 (no
    finite relative gain)."""
    return (value - reference) / reference if reference > 0 else float("nan")
