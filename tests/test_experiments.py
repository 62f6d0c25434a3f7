"""The logic behind the notebooks (nbmerge.experiments): analytic checks on tiny inputs, determinism on `micro`."""

import json
from pathlib import Path

import pytest

from nbmerge.evaluate.verdicts import decide
import torch

from nbmerge.evaluate import interference
from nbmerge.errors import NbmergeError
from nbmerge.experiments import tour
from nbmerge.experiments.common import Claim, claim, finish
from nbmerge.params import notebook_config

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

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


def test_claim_verdicts():
    assert claim("x", "y", None).verdict == "not tested"
    held = decide(2.0, interval=[1.0, 3.0], threshold=0.0)
    assert claim("x", "y", held, id="T1").id == "T1" and claim("x", "y", held, id="T1").verdict == "held"
    with pytest.raises(NbmergeError, match="Decision"):
        claim("x", "y", True, id="T1")
    with pytest.raises(NbmergeError, match="verdict must be one of"):
        Claim("x", "y", "maybe")


def test_finish_writes_metrics(tmp_path, capsys):
    out = tmp_path / "metrics.json"
    config = notebook_config(tour.TourConfig, NOTEBOOKS / "00_tour.ipynb", suite="micro")
    finish("demo", headline={"name": "h", "value": torch.tensor(0.5)}, metrics={"nan": float("nan")},
           claims=[claim("c", "s", decide(2.0, interval=[1.0, 3.0], threshold=0.0), "e", id="X1")], config=config,
           out=out)
    record = json.loads(out.read_text())
    assert record["headline"]["value"] == 0.5 and record["metrics"]["nan"] is None
    assert record["claims"][0]["verdict"] == "held" and record["parameters"]["suite"] == "micro"
    assert record["claims"][0]["interval"] == [1.0, 3.0] and record["claims"][0]["outcome"] == "held"
    assert "git_sha" in record["fingerprint"] and "environment:" in capsys.readouterr().out
    with pytest.raises(NbmergeError, match="headline needs"):
        finish("demo", headline={"value": 1}, metrics={}, out=out)


# ------------------------------------------------------------------------------------------------------------ ACE
# (the ACE notebook's verdicts are tested in tests/test_ace_claims.py)

def test_variant_experts_reproduce_the_zoo_and_differ_when_asked(micro_cache):
    from nbmerge.engine.io import load_state_dict
    from nbmerge.pools.build import variant_experts
    from nbmerge.pools.zoo import load_zoo

    zoo = load_zoo("micro", micro_cache)
    # bit-exact only under the thread count the zoo was built with (reduction order); another file may change it
    threads = torch.get_num_threads()
    torch.set_num_threads(zoo.manifest["environment"]["threads"])
    try:
        same = variant_experts(zoo)  # factors 1: the zoo's own recipe and seeds
    finally:
        torch.set_num_threads(threads)
    for path, original in zip(same, zoo.expert_paths):
        a, b = load_state_dict(path), load_state_dict(original)
        assert all(torch.equal(a[k], b[k]) for k in a)
    scaled = variant_experts(zoo, lr_factors=(0.1, 3.0), step_factors=(0.5,))
    assert scaled[0] != scaled[1] and load_state_dict(scaled[0]).keys() == load_state_dict(same[0]).keys()
    with pytest.raises(NbmergeError, match="factors must be"):
        variant_experts(zoo, lr_factors=(0.0,))


def test_table_escapes_names_and_writes_only_its_own_markup():
    """Task, expert, method and parameter names come from the user's folders: a name that is HTML is shown as text."""
    from nbmerge.experiments.common import bold, table

    evil = "alpha<img src=x onerror=alert(1)>"
    page = table([{"expert": evil, "acc": 0.5, "best": bold("90.0%")}], caption=f"experts of {evil}",
                 formats={"acc": "{:.0%}"}).data
    assert "<img" not in page and page.count("&lt;img src=x onerror=alert(1)&gt;") == 2
    assert "<b>90.0%</b>" in page and "<td>50%</td>" in page
    assert "<th>expert</th>" in page and table([{"<th>": 1}]).data.count("&lt;th&gt;") == 1
