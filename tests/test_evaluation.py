"""The evaluator (nbmerge.evaluate.evaluation): a seeded validation subset, test always whole."""

from __future__ import annotations

import torch


def test_val_subset_is_seeded_and_leaves_test_whole(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    zoo = load_zoo("micro", micro_cache)
    evaluator = zoo.evaluator("cpu")
    full_val = {t: len(evaluator._inputs[(t, "val")][1]) for t in zoo.tasks}
    full_test = {t: len(evaluator._inputs[(t, "test")][1]) for t in zoo.tasks}
    evaluator.use_val_subset(20, seed=3)
    first = {t: evaluator._inputs[(t, "val")][1].clone() for t in zoo.tasks}
    assert all(len(v) == 20 for v in first.values())
    assert {t: len(evaluator._inputs[(t, "test")][1]) for t in zoo.tasks} == full_test
    assert evaluator.subset_spec("val") == [20, 3] and evaluator.subset_spec("test") is None
    evaluator.use_val_subset(0)
    assert {t: len(evaluator._inputs[(t, "val")][1]) for t in zoo.tasks} == full_val
    evaluator.use_val_subset(20, seed=3)
    for t in zoo.tasks:
        assert torch.equal(evaluator._inputs[(t, "val")][1], first[t])
