"""Interference statistics (``nbmerge.evaluate.interference``): analytic checks on tiny inputs."""

import pytest
import torch

from nbmerge.evaluate import interference

W = "visual.transformer.resblocks.{}.{}"


def _model(values: dict) -> dict:
    return {k: torch.as_tensor(v, dtype=torch.float64) for k, v in values.items()}


def test_module_kind_reads_open_clip_and_hf_names():
    assert interference.module_kind(W.format(3, "attn.in_proj_weight")) == ("attn-in", 3)
    assert interference.module_kind(W.format(0, "attn.out_proj.weight")) == ("attn-out", 0)
    assert interference.module_kind(W.format(1, "mlp.c_fc.weight")) == ("mlp-in", 1)
    assert interference.module_kind(W.format(2, "mlp.c_proj.weight")) == ("mlp-out", 2)
    assert interference.module_kind("vision_model.encoder.layers.5.self_attn.k_proj.weight") == ("attn-in", 5)
    assert interference.module_kind("vision_model.encoder.layers.5.mlp.fc2.weight") == ("mlp-out", 5)
    assert interference.module_kind("visual.proj") == ("other", None)


def test_sign_conflicts_count_disagreeing_entries():
    key = W.format(0, "mlp.c_fc.weight")
    base = _model({key: torch.zeros(2, 5)})
    # task 1 and task 2 disagree on the sign of the first row, agree on the second
    one = _model({key: [[1, 2, 3, 4, 5], [1, 1, 1, 1, 1]]})
    two = _model({key: [[-1, -2, -3, -4, -5], [2, 2, 2, 2, 2]]})
    (row,) = interference.sign_conflicts(base, [one, two], density=1.0)
    assert row["all"] == pytest.approx(0.5) and row["trimmed"] == pytest.approx(0.5)
    (row,) = interference.sign_conflicts(base, [one, two], density=0.3)  # keeps the 3 largest of each: row 0's 3,4,5
    assert row["trimmed"] == pytest.approx(1.0)


def test_subspace_overlap_is_one_for_shared_and_zero_for_disjoint_directions():
    key = W.format(0, "attn.out_proj.weight")
    base = _model({key: torch.zeros(4, 4)})
    e = torch.eye(4, dtype=torch.float64)
    same = [_model({key: 3 * torch.outer(e[0], e[1])}), _model({key: torch.outer(e[0], e[2])})]
    apart = [_model({key: torch.outer(e[0], e[1])}), _model({key: torch.outer(e[3], e[1])})]
    assert interference.subspace_overlap(base, same, top_fraction=0.25)[0]["overlap"] == pytest.approx(1.0)
    assert interference.subspace_overlap(base, apart, top_fraction=0.25)[0]["overlap"] == pytest.approx(0.0, abs=1e-12)
