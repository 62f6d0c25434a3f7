"""The peer-check plumbing (FusionBench itself runs only in `make peer-fusionbench`, in its own venv)."""

import json

import torch

import nbmerge
from bench.peers import fusionbench as peer


def test_every_peer_job_is_a_valid_nbmerge_call():
    for job in peer.jobs(iters=3, wudi_keys=["k"]):
        method, params, walk = job["nb"]
        spec = nbmerge.get_method(method)
        spec.check_params(params)
        nbmerge.WalkOptions(**walk)
        assert job["fb"]["method"] in {"task_arithmetic", "ties", "tsv", "iso_c", "iso_cts", "regmean", "wudi"}


def test_compare_reports_difference_relative_to_the_update():
    base = {"w": torch.zeros(3)}
    theirs = {"w": torch.tensor([1.0, 2.0, 4.0])}
    ours = {"w": torch.tensor([1.0, 2.0, 4.004])}
    result = peer.compare(base, ours, theirs)
    assert abs(result["max_abs_diff"] - 0.004) < 1e-6
    assert abs(result["max_rel_diff"] - 0.001) < 1e-6
    assert result["worst_key"] == "w"


def test_report_is_written_with_every_row(tmp_path):
    row = {"job": "tsv", "method": "tsv", "params": {"scale": 1.0}, "walk": {}, "keys": "all", "nbmerge_s": 1.0,
           "fusionbench_s": 2.0, "speedup": 2.0, "max_abs_diff": 1e-7, "max_rel_diff": 1e-6, "worst_key": "w"}
    result = {"config": {"width": 768, "layers": 12, "tasks": 8, "seed": 0, "threads": 2, "wudi_iters": 10,
                         "wudi_blocks": 1},
              "versions": {"nbmerge": "0", "torch": "t", "peer_torch": "p", "fusion_bench": "0.2.33",
                           "python": "3", "machine": "x", "cpu_threads": 2},
              "date": "today", "rows": [row]}
    peer.write_report(result, tmp_path)
    text = (tmp_path / "peer_fusionbench.md").read_text()
    assert "| tsv (tsv) | scale=1.0 | 1.00e-07 | 1.00e-06 | `w` | 1.00 | 2.00 | 2.00× | — | — |" in text
    assert "deliberately differs" in text
    assert json.loads((tmp_path / "peer_fusionbench.json").read_text())["rows"][0]["job"] == "tsv"
