"""The LoRA low-rank benchmark runs end to end at toy widths, and both routes agree (the full run: reports/)."""

import pytest

pytest.importorskip("transformers")

from bench.lowrank import METHODS, main  # noqa: E402


def test_the_low_rank_benchmark_writes_both_routes_and_they_agree(tmp_path):
    import json

    out = tmp_path / "lowrank"
    assert main(["--quick", "--repeats", "1", "--out", str(out)]) == 0
    report = json.loads(out.with_name("lowrank.json").read_text())
    assert [row["method"] for row in report["merges"]] == list(METHODS)
    for row in report["merges"]:
        assert row["rel_diff"] < 1e-5 and row["low_rank_vs_float64"] < 1e-5, row
        assert row["dense_s"] > 0 and row["low_rank_s"] > 0
    assert all(row["rel_diff"] < 1e-12 for row in report["kernels"])  # float64 products
    text = out.with_name("lowrank.md").read_text()
    assert "| ace |" in text and "τᵀτ" in text
