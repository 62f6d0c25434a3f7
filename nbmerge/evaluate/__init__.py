"""Evaluation and its statistics: the evaluator, predictions and the trial cache, metrics, calibration,
claims and verdicts, and the diagnostics of why a merge works (interference, Gram alignment); language-model
evaluation."""
