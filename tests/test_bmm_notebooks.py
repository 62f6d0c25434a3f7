"""The BMM report notebooks' logic (nbmerge.experiments.bmm_benchmark): verdicts on synthetic rows, the gain math,
the notebooks' parameters, and both notebooks' steps end to end on the micro zoo with smoke settings."""

import json
from dataclasses import fields
from pathlib import Path

import pytest
import torch

from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_benchmark as bench
from nbmerge.experiments.common import finish

REPO = Path(__file__).resolve().parents[1]


def row(suite, tasks, anchor, variant, anchor_test, bmm_test, **extra):
    return {"suite": suite, "tasks": tasks, "anchor": anchor, "variant": variant, "anchor_test": anchor_test,
            "bmm_test": bmm_test, "gain": bmm_test - anchor_test,
            "relative_gain": bench.relative_gain(bmm_test, anchor_test), "anchor_normalized": anchor_test / 0.9,
            "bmm_normalized": bmm_test / 0.9, "anchor_uses_data": anchor == "regmean", "experts": 0.9, **extra}


def sweep(loser=None):
    """tiny8/14/20 × (TA, TIES, TSV) × both variants; BMM wins everywhere except at ``loser`` (suite, anchor)."""
    rows = []
    for suite, tasks in (("tiny8", 8), ("tiny14", 14), ("tiny20", 20)):
        for anchor, acc, gain in (("task_arithmetic", 0.50, 0.10), ("ties", 0.55, 0.08), ("tsv", 0.70, 0.01)):
            for variant in ("data", "free"):
                delta = -0.01 if (suite, anchor) == loser else gain
                rows.append(row(suite, tasks, anchor, variant, acc, acc + delta))
    return rows


def verdicts(claims):
    return [c.verdict for c in claims]


# -- the math and the verdicts ------------------------------------------------------------------------------------

def test_relative_gain():
    assert bench.relative_gain(0.6, 0.5) == pytest.approx(0.2)
    assert bench.relative_gain(0.45, 0.5) == pytest.approx(-0.1)
    assert bench.relative_gain(0.5, 0.5) == 0.0
    assert bench.relative_gain(0.3, 0.0) != bench.relative_gain(0.3, 0.0)  # NaN: no finite gain over a zero anchor
    r = row("tiny8", 8, "ties", "data", 0.55, 0.6985)
    assert r["relative_gain"] == pytest.approx(0.27)  # the paper's "27% over weak anchors" is this quantity


def test_benchmark_claims_hold_on_a_clean_sweep():
    rows = sweep()
    claims = bench.benchmark_claims(rows, "tiny8")
    assert verdicts(claims) == ["held", "held", "held", "held"]
    assert "task_arithmetic 50.00% → 60.00% (+20.0%)" in claims[0].evidence
    assert "weak task_arithmetic +20.0%, ties +14.5%" in claims[2].evidence and "27%" in claims[2].evidence
    assert "tiny20 (20 tasks, data): beats 3/3 anchors" in claims[3].evidence
    headline = bench.benchmark_headline(rows, "tiny8")
    assert headline["value"] == pytest.approx(0.01 / 0.7)  # the smallest gain: TSV's
    assert "data-assisted" in headline["name"] and "tsv" in headline["name"]
    table = bench.comparison_table(rows)
    assert len(table) == 9 and table[0]["BMM-data"] == 0.6 and table[0]["gain free"] == pytest.approx(0.2)
    summary = bench.suite_summary(rows)
    assert [(s["suite"], s["variant"], s["won"]) for s in summary][:2] == [("tiny8", "data", 3), ("tiny8", "free", 3)]


def test_benchmark_claims_that_do_not_hold():
    # a loss at 20 tasks: claim 1 (read on tiny8) holds, claim 2 does not
    claims = bench.benchmark_claims(sweep(loser=("tiny20", "tsv")), "tiny8")
    assert verdicts(claims) == ["held", "held", "held", "did not hold"]
    assert "tiny20 (20 tasks, data): beats 2/3 anchors" in claims[3].evidence
    # a loss on the claim suite: both variants fail claim 1 and name the anchor not beaten
    claims = bench.benchmark_claims(sweep(loser=("tiny8", "ties")), "tiny8")
    assert verdicts(claims)[:2] == ["did not hold", "did not hold"] and "Not beaten: ties" in claims[0].evidence
    # the largest gains over strong anchors: the weak-anchor claim fails
    rows = [row("tiny8", 8, "task_arithmetic", "data", 0.5, 0.51), row("tiny8", 8, "tsv", "data", 0.5, 0.6)]
    assert verdicts(bench.benchmark_claims(rows, "tiny8"))[2] == "did not hold"
    # a tie is not a win (MIN_GAIN = 0, strict)
    rows = [row("tiny8", 8, "task_arithmetic", "data", 0.5, 0.5)]
    assert verdicts(bench.benchmark_claims(rows, "tiny8"))[0] == "did not hold"


def test_benchmark_claims_not_tested():
    rows = [row("micro", 3, "task_arithmetic", "data", 0.5, 0.6), row("micro", 3, "ties", "data", 0.5, 0.6)]
    claims = bench.benchmark_claims(rows, "micro")
    # only data-assisted ran; only weak anchors ran; one 3-task suite is no sweep to 20 tasks
    assert verdicts(claims) == ["held", "not tested", "not tested", "not tested"]
    assert "variants" in claims[1].evidence and "micro (3 tasks)" in claims[3].evidence
    # two suites that stop short of 20 tasks are not a test of claim 2 either
    short = [r for r in sweep() if r["suite"] != "tiny20"]
    assert verdicts(bench.benchmark_claims(short, "tiny8"))[3] == "not tested"
    assert "data-free" in bench.benchmark_headline([r for r in sweep() if r["variant"] == "free"], "tiny8")["name"]


def srow(strategy, seed, test, seconds, trials=20, val=None):
    return {"strategy": strategy, "seed": seed, "trials": trials, "val": test if val is None else val, "test": test,
            "seconds": seconds, "merge_s": 0.01, "eval_s": 1.0, "optimiser_s": 0.1, "anchor_val": 0.4,
            "anchor_test": 0.4, "convergence": [0.4] * trials}


def test_search_claims():
    rows = [srow("bayes", 0, 0.62, 20), srow("bayes", 1, 0.60, 22), srow("shared", 0, 0.58, 20),
            srow("shared", 1, 0.59, 20), srow("random", 0, 0.55, 19), srow("random", 1, 0.57, 19),
            srow("grid", 0, 0.60, 230, trials=225)]
    claims = bench.search_claims(rows)
    assert verdicts(claims) == ["held", "held", "held"]
    assert "11.0× lower" in claims[0].evidence and "[60.00–62.00]" in claims[0].evidence
    summary = {s["strategy"]: s for s in bench.strategy_summary(rows)}
    assert summary["bayes"]["test"] == pytest.approx(0.61) and summary["grid"]["runs"] == 1
    assert bench.search_headline(rows)["value"] == pytest.approx(1.0)  # BO − grid, points
    assert bench.timing_table(rows)[0]["eval / merge"] == pytest.approx(100)
    # BO better but not 5× faster; BO not better than the shared λ
    slow = [srow("bayes", 0, 0.62, 100), srow("grid", 0, 0.60, 300, trials=225), srow("shared", 0, 0.62, 90)]
    assert verdicts(bench.search_claims(slow))[:2] == ["did not hold", "did not hold"]
    # BO faster but the grid is more accurate
    worse = [srow("bayes", 0, 0.59, 20), srow("grid", 0, 0.60, 300, trials=225)]
    assert verdicts(bench.search_claims(worse)) == ["did not hold", "not tested", "not tested"]
    only_bo = [srow("bayes", 0, 0.6, 20)]
    assert verdicts(bench.search_claims(only_bo)) == ["not tested"] * 3
    assert bench.search_headline(only_bo)["name"] == "BO test accuracy"


# -- configuration and parameters -----------------------------------------------------------------------------------

def test_gram_source_keeps_data_for_an_anchor_that_needs_it():
    assert bench.gram_source("task_arithmetic", "data")[0] == "data"
    assert bench.gram_source("task_arithmetic", "free")[0] == "task_vector"
    assert bench.gram_source("regmean", "free") == ("hybrid", 0.0)
    with pytest.raises(NbmergeError, match="variant"):
        bench.gram_source("ties", "both")


def test_configs_validate():
    config = bench.BenchmarkConfig(suites=["tiny8"], anchors=["ties"])
    assert config.suites == ("tiny8",) and config.anchors == ("ties",)
    with pytest.raises(NbmergeError, match="must be one of suites"):
        bench.BenchmarkConfig(suite="micro")
    with pytest.raises(NbmergeError, match="unknown"):
        bench.BenchmarkConfig(anchors=["no_such_method"])
    with pytest.raises(NbmergeError, match="bmm itself"):
        bench.SearchConfig(anchor="bmm")
    with pytest.raises(NbmergeError, match="variants"):
        bench.BenchmarkConfig(variants=["data", "dataless"])
    with pytest.raises(NbmergeError, match="n_initial"):
        bench.BenchmarkConfig(budget=3, n_initial=4)
    with pytest.raises(NbmergeError, match="parameter 'budget'"):
        bench.SearchConfig(budget="20")
    with pytest.raises(NbmergeError, match="strategies"):
        bench.SearchConfig(strategies=["bayes", "annealing"])
    with pytest.raises(NbmergeError, match="variant"):
        bench.SearchConfig(variant="task_vector")


def test_log_names_follow_the_settings(tmp_path):
    one = bench.log_file(str(tmp_path), "tiny8", "ties", "data", "bayes", 0, {"budget": 12})
    assert one == bench.log_file(str(tmp_path), "tiny8", "ties", "data", "bayes", 0, {"budget": 12})
    assert one != bench.log_file(str(tmp_path), "tiny8", "ties", "data", "bayes", 0, {"budget": 20})
    assert one.parent == tmp_path and one.name.startswith("tiny8-ties-data-bayes-seed0-")


@pytest.mark.parametrize("name, config_class", [("bmm_benchmark", bench.BenchmarkConfig),
                                                ("bmm_search", bench.SearchConfig)])
def test_notebook_parameters_match_the_config(name, config_class):
    from nbmerge.report.pipeline import notebook_parameters, resolve_parameters

    path = REPO / "notebooks" / f"{name}.ipynb"
    declared = notebook_parameters(path)
    # checkpoints / data_root are read by prepare_suites (importing a clip-... pool), not by the config
    assert {"checkpoints", "data_root"} <= set(declared)
    declared = {k: v for k, v in declared.items() if k not in ("checkpoints", "data_root")}
    assert set(declared) == {f.name for f in fields(config_class)}
    assert {"suite", "device", "seed", "smoke"} <= set(declared)
    config_class(**declared)  # the notebook's own defaults are a valid config
    for smoke in (False, True):
        resolved = resolve_parameters([path], REPO / "notebooks" / "parameters", smoke, {})[name]
        config_class(**{**declared, **resolved})  # ... and so are the report's layers
    assert resolved["suite"] == "micro"


# -- end to end on the micro zoo ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.zoo.build import load_zoo

    return load_zoo("micro", micro_cache)


def test_hybrid_with_beta_zero_is_the_task_vector_gram(micro):
    from nbmerge.experiments.tour import expert_grams, load_models
    from nbmerge.methods.bmm import BMMSolver, run_anchor

    base, experts = load_models(micro)
    grams = expert_grams(micro, 16, 0)
    anchor = run_anchor(base, experts, "regmean", grams=grams)
    free = BMMSolver(base, experts, anchor, gram="task_vector")
    hybrid = BMMSolver(base, experts, anchor, grams, gram="hybrid", beta=0.0)
    assert set(free.modules) == set(hybrid.modules) and free.group_names() == hybrid.group_names()
    lambdas = {"attn_in": -2.0, "attn_out": 0.0, "mlp_in": -1.0, "mlp_out": 1.0}
    a, b = free.merged(lambdas, 0.9), hybrid.merged(lambdas, 0.9)
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6)


def test_benchmark_notebook_steps_on_micro(micro_cache, tmp_path, capsys):
    logs = tmp_path / "logs"
    config = bench.BenchmarkConfig(suite="micro", suites=["micro"], anchors=["task_arithmetic", "regmean"],
                                   budget=2, n_initial=1, gram_examples=32, wudi_steps=5, smoke=True,
                                   logs=str(logs), cache=str(micro_cache))
    rows = bench.benchmark(config, log=lambda *_: None)
    assert [(r["anchor"], r["variant"], r["gram"]) for r in rows] == [
        ("task_arithmetic", "data", "data"), ("task_arithmetic", "free", "task_vector"),
        ("regmean", "data", "data"), ("regmean", "free", "hybrid")]
    for r in rows:
        assert r["suite"] == "micro" and r["tasks"] == 3 and r["trials"] == 2 and r["replayed"] == 0
        assert 0 <= r["anchor_test"] <= 1 and 0 <= r["bmm_test"] <= 1 and 0 < r["experts"] <= 1
        assert r["relative_gain"] == pytest.approx((r["bmm_test"] - r["anchor_test"]) / r["anchor_test"])
        assert r["bmm_normalized"] > 0 and set(r["lambdas"]) == {"attn_in", "attn_out", "mlp_in", "mlp_out"}
    # the anchor is the same model in both variants (RegMean keeps its data Grams in the data-free row)
    assert rows[2]["anchor_test"] == rows[3]["anchor_test"] and rows[0]["anchor_test"] == rows[1]["anchor_test"]
    assert len(list(logs.glob("micro-*.jsonl"))) == 4
    # rerun: every trial comes from the logs, the numbers are the same
    again = bench.benchmark(config, log=lambda *_: None)
    assert all(r["replayed"] == 2 for r in again)
    assert [r["bmm_test"] for r in again] == [r["bmm_test"] for r in rows]
    claims = bench.benchmark_claims(rows, "micro")
    assert verdicts(claims)[3] == "not tested" and all(c.verdict in ("held", "did not hold") for c in claims[:3])
    for plot in (bench.plot_accuracy_per_anchor, bench.plot_task_count):
        assert plot(rows).axes
    out = tmp_path / "metrics.json"
    finish("bmm_benchmark", headline=bench.benchmark_headline(rows, "micro"), claims=claims,
           config=bench.as_dict(config), metrics={"rows": rows, "summary": bench.suite_summary(rows)}, out=out)
    record = json.loads(out.read_text())
    assert record["parameters"]["anchors"] == ["task_arithmetic", "regmean"] and len(record["claims"]) == 4


def test_search_notebook_steps_on_micro(micro, micro_cache, tmp_path):
    config = bench.SearchConfig(suite="micro", budget=3, n_initial=2, repeats=2, grid_size=2, gram_examples=32,
                                variant="free", bench_vit_b32=False, smoke=True, logs=str(tmp_path / "logs"),
                                cache=str(micro_cache))
    rows = bench.compare_strategies(config, log=lambda *_: None)
    assert [(r["strategy"], r["seed"], r["trials"]) for r in rows] == [
        ("bayes", 0, 3), ("bayes", 1, 3), ("shared", 0, 3), ("shared", 1, 3), ("random", 0, 3), ("random", 1, 3),
        ("grid", 0, 4)]
    for r in rows:
        assert len(r["convergence"]) == r["trials"] and r["convergence"][-1] == r["val"]
        assert r["seconds"] > 0 and r["merge_s"] > 0 and r["eval_s"] > 0
    shared = rows[2]["best_params"]
    assert len({shared[g] for g in ("attn_in", "attn_out", "mlp_in", "mlp_out")}) == 1  # one λ for every group
    assert rows[0]["best_params"] != rows[1]["best_params"]  # another seed, another search
    claims = bench.search_claims(rows)
    assert len(claims) == 3 and all(c.verdict in ("held", "did not hold") for c in claims)
    assert bench.plot_convergence(rows, config.budget).axes
    solves = bench.solve_benchmark(micro, config)
    assert [s["model"] for s in solves] == ["zoo"]
    assert solves[0]["width"] == micro.arch.width and solves[0]["max_abs_difference"] < 1e-8
    assert solves[0]["fast_ms_per_trial"] > 0 and solves[0]["method_ms_per_trial"] > 0
    json.dumps({"runs": rows, "timing": bench.timing_table(rows), "solves": solves})
