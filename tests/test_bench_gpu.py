"""The GPU check and the memory benchmark at toy widths, with the CPU playing the accelerator."""

import json
import math

import pytest
import torch

from bench import gpu as bench_gpu
from bench.gpu import TOWERS, compare, run_check, vit_shapes
from bench.memory import run_memory
from nbmerge.methods import all_methods
from nbmerge.testing import openclip_vit_shapes

ALL = [m.name for m in all_methods() if bench_gpu.checked_on_gpu(m)]  # single models of dense experts, own kernels


def test_tower_shapes_are_open_clips_and_the_fallback_agrees():
    # The device machine has no open_clip: the fallback table must give the same names and shapes.
    pytest.importorskip("open_clip")
    b32, source = vit_shapes(TOWERS["b32"])
    assert source.startswith("open_clip")
    assert b32 == openclip_vit_shapes(768, 12, 32, 7, 512)
    assert sum(math.prod(s) for s in b32.values()) == 87_849_216
    l14, _ = vit_shapes(TOWERS["l14"])
    assert l14 == openclip_vit_shapes(1024, 24, 14, 16, 768)


def test_compare_measures_error_against_the_merged_task_vector():
    base = {"w": torch.zeros(2, 2), "steps": torch.tensor([3])}
    reference = {"w": torch.tensor([[1.0, 0.0], [0.0, 1.0]]), "steps": torch.tensor([3])}
    accelerated = {"w": torch.tensor([[1.0, 0.0], [0.0, 1.1]]), "steps": torch.tensor([3])}
    result = compare(accelerated, reference, base)
    assert result["max_abs_diff"] == pytest.approx(0.1)
    assert result["rel_fro"] == pytest.approx(0.1 / math.sqrt(2))
    assert result["worst_key"] == "w"


def test_gpu_check_quick_with_the_cpu_as_accelerator(tmp_path):
    out = tmp_path / "reports" / "gpu_check"
    suites, dtypes = ["b32-8", "l14-20"], ["float32", "bfloat16"]
    report = run_check(out, suites=suites, dtypes=dtypes, device="cpu", quick=True, cpu_reference=["b32-8", "l14"],
                       workdir=tmp_path / "work", budget_s=None)
    assert report["check"]["passed"], report["check"]["failures"]
    saved = json.loads(out.with_name("gpu_check.json").read_text())
    markdown = out.with_name("gpu_check.md").read_text()
    assert "PASSED" in markdown
    rows = saved["results"]
    assert len(rows) == len(ALL) * len(suites) * len(dtypes)
    for row in rows:
        assert "skipped" not in row
        assert all(math.isfinite(s) and s > 0 for s in row["seconds"])
        c = row["compare"]  # both suites are compared (l14 names every l14 suite)
        assert math.isfinite(c["rel_fro"]) and c["rel_fro"] <= c["tolerance"] and c["passed"]
        assert math.isfinite(c["max_abs_diff"]) and c["cpu_s"] > 0 and c["accelerator_s"] > 0
        assert c["max_abs_merged_task_vector"] > 0
    for method in ALL:
        assert f"| {method} |" in markdown
    assert saved["environment"]["torch"] == torch.__version__
    assert saved["check"]["compared"] == len(rows)
    assert saved["shapes"]["l14"]["compare_exclude"] == [r"\.resblocks\.1\.", r"\.resblocks\.2\."]
    assert not any((tmp_path / "work").iterdir())  # the experts are deleted


def test_check_fails_loudly_past_its_tolerance(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(bench_gpu.TOLERANCE, "bfloat16", -1.0)
    monkeypatch.setattr(bench_gpu, "ROUNDOFF_FACTOR", 0.5)  # the CPU-only "accelerator" is as far from float64
    out = tmp_path / "gc"
    status = bench_gpu.main(["--cpu-only", "--quick", "--suites", "b32-8", "--dtypes", "bf16", "--methods",
                             "task_arithmetic", "--out", str(out)])
    assert status == 1
    assert "GPU CHECK FAILED" in capsys.readouterr().err
    assert "**FAILED" in out.with_name("gc.md").read_text()


def test_past_the_tolerance_a_merge_as_close_to_float64_as_the_cpu_passes_as_round_off(tmp_path, monkeypatch):
    monkeypatch.setitem(bench_gpu.TOLERANCE, "float32", -1.0)
    report = run_check(tmp_path / "gc", suites=["b32-8"], methods=["iso_c"], dtypes=["fp32"], device="cpu",
                       quick=True)
    compared = [r["compare"] for r in report["results"] if "compare" in r]
    assert compared and all(c["passed_by"] == "float32 round-off" for c in compared)
    assert all(0 < c["cpu_vs_float64"] < 1e-4 and c["accelerator_vs_float64"] == c["cpu_vs_float64"]
               for c in compared)
    assert "| round-off |" in (tmp_path / "gc.md").read_text()


def test_a_merge_that_raises_is_a_recorded_failure_and_the_rest_still_runs(tmp_path, monkeypatch):
    real = bench_gpu.merge

    def flaky(method, *args, **kwargs):
        if method == "tsv":
            raise RuntimeError("CUDA out of memory (simulated)")
        return real(method, *args, **kwargs)

    monkeypatch.setattr(bench_gpu, "merge", flaky)
    report = run_check(tmp_path / "gc", suites=["b32-8"], methods=["tsv", "average"], dtypes=["fp32"], device="cpu",
                       quick=True)
    assert not report["check"]["passed"]
    tsv, average = report["results"]
    assert tsv["error"] == "RuntimeError: CUDA out of memory (simulated)" and average["compare"]["passed"]
    assert "**error**" in (tmp_path / "gc.md").read_text()


def test_spent_budget_skips_and_still_writes_the_report(tmp_path):
    report = run_check(tmp_path / "gc", suites=["b32-8"], methods=["average"], dtypes=["fp32"], device="cpu",
                       quick=True, budget_s=0.0)
    assert report["results"] == [{"suite": "b32-8", "shape": "b32", "tasks": 8, "dtype": "float32",
                                  "method": "average", "skipped": "time budget spent"}]
    assert "skipped" in (tmp_path / "gc.md").read_text()


def test_unknown_names_fail_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="unknown suite"):
        run_check(tmp_path / "gc", suites=["b16-8"], device="cpu", quick=True)
    with pytest.raises(ValueError, match="cpu-reference"):
        run_check(tmp_path / "gc", suites=["b32-8"], cpu_reference=["h14"], device="cpu", quick=True)
    assert not (tmp_path / "gc.json").exists()


def test_memory_benchmark_quick_in_subprocesses(tmp_path):
    out = tmp_path / "memory"
    report = run_memory(out, methods=("task_arithmetic", "tsv"), tasks=(3,), quick=True, workdir=tmp_path / "work")
    saved = json.loads(out.with_name("memory.json").read_text())
    assert [(r["method"], r["tasks"]) for r in saved["runs"]] == [("task_arithmetic", 3), ("tsv", 3)]
    for row in saved["runs"]:
        assert row["peak_rss"] >= row["baseline_rss"] > 0
        assert row["merged_bytes"] == report["model"]["parameters"] * 4
        assert row["all_experts_bytes"] == 3 * report["model"]["expert_bytes"]
    markdown = out.with_name("memory.md").read_text()
    assert "| 3 | tsv |" in markdown and saved["machine"]["torch"] == torch.__version__
    assert not (tmp_path / "work" / "experts").exists()
