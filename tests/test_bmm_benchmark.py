"""BMM claims B1a-B2 (notebook 20_bmm_benchmark; nbmerge.experiments.bmm_benchmark, bmm_benchmark_claims,
bmm_benchmark_figures and nbmerge.tune.benchmark): verdicts on synthetic predictions, the relative gain, the configs
and parameters of notebooks 20 and 23 (whose BO runs are the benchmark's), and the benchmark's steps end to end on the
micro zoo with smoke settings (a second run with warm caches evaluates nothing)."""

import json
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.fakes import (BENCHMARK, EXPERT, NOTEBOOKS, OUTCOMES, SEARCH, TASKS, anchor_run, bench_config, fake,
                         search_config, verdict)

from nbmerge.evaluate import metrics
from nbmerge.tune import alpha_tuning
from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_benchmark, bmm_benchmark_claims, bmm_benchmark_figures, bmm_search
from nbmerge.experiments.common import finish
from nbmerge.params import notebook_config
from nbmerge.tune.study import AnchorRun
from nbmerge.tune.benchmark import BMMRun, SuiteResult

REPO = Path(__file__).resolve().parents[1]


def bmm_run(anchor: AnchorRun, variant, seed, test, control=None, s=1.0):
    return BMMRun(anchor.name, variant, seed, SimpleNamespace(test_predictions=test), anchor, control, s)


def suite(name="text8", anchors=(("task_arithmetic", 0.50, 0.12), ("ties", 0.55, 0.10), ("tsv", 0.70, 0.02)),
          seeds=(0, 1, 2), variants=("data", "free"), override=None, tasks=8):
    """Anchors at the given accuracy (the same at every seed); BMM on each at +gain (a different window per seed);
    ``override`` maps (anchor, variant, seed) to a BMM Predictions."""
    result = SuiteResult(name, [f"t{i}" for i in range(tasks)], EXPERT)
    for anchor, acc, gain in anchors:
        result.anchors[anchor] = {}
        for seed in seeds:
            run = result.anchors[anchor][seed] = anchor_run(anchor, fake(acc))
            for variant in variants:
                test = (override or {}).get((anchor, variant, seed)) or fake(acc + gain - 0.002 * seed)
                result.runs.append(bmm_run(run, variant, seed, test))
    return result


# -- the relative gain (nbmerge.evaluate.metrics), B1c's measure ----------------------------------------------------

def test_relative_gain():
    assert metrics.relative_gain(0.6, 0.5) == pytest.approx(0.2)
    assert metrics.relative_gain(0.45, 0.5) == pytest.approx(-0.1)
    assert metrics.relative_gain(0.3, 0.0) != metrics.relative_gain(0.3, 0.0)  # NaN: no finite gain over a zero anchor


# -- B1, B2 ---------------------------------------------------------------------------------------------------------

def test_b1_held_when_bmm_beats_every_tuned_anchor():
    results = {"text8": suite()}
    claims = bmm_benchmark_claims.benchmark_claims(results, "text8")
    assert [c.id for c in claims] == ["B1a", "B1b", "B1c", "B1cs", "B2"]
    assert [verdict(c) for c in claims] == ["held", "held", "held", "held", "not tested"]
    assert all(c.verdict in OUTCOMES and c.setting for c in claims)
    c = claims[0]
    assert "tsv at α*: " in c.evidence and "held" in c.evidence and "3 search seeds" in c.evidence
    assert "ablated" in c.evidence and c.decision.estimate is not None and c.decision.interval
    # the claim carries the least favourable anchor's numbers: tsv's gain is the smallest
    tsv = bmm_benchmark_claims.anchor_decisions(results["text8"], "data")["tsv at α*"]
    assert c.decision.interval == tsv.interval and c.decision.threshold == 0.0
    assert c.paper.startswith("ViT-L/14") and "arXiv 2605.12843" in c.source and "BRIEF" not in c.source
    # B1c: the relative gain over TA is 0.12 / 0.50 = 24%; B1cs: weak − strong
    assert "task_arithmetic" in claims[2].ours and claims[2].decision.estimate == pytest.approx(24.0, abs=0.5)
    assert claims[2].decision.threshold == bmm_benchmark_claims.LARGE_GAIN and claims[2].reading == "paper"
    assert claims[3].reading == "strict" and "same test prediction" in claims[3].evidence
    assert bmm_benchmark_claims.NOT_IN_DEFAULT in claims[4].evidence
    headline = bmm_benchmark.benchmark_headline(results, "text8")
    assert "tsv" in headline["name"] and headline["value"] == pytest.approx(tsv.estimate)
    table = bmm_benchmark.comparison_table(results)
    assert len(table) == 6 and {r["outcome"] for r in table} == {"held"}
    assert bmm_benchmark_figures.plot_gains(results).axes and "error bars" in bmm_benchmark_figures.gains_alt(results)


def test_b1_contradicted_inconclusive_and_not_tested():
    # one anchor loses at every seed: contradicted, with that anchor's numbers; data-free still holds
    loss = {("tsv", "data", s): fake(0.66) for s in range(3)}
    claims = bmm_benchmark_claims.benchmark_claims({"text8": suite(override=loss)}, "text8")
    assert [verdict(c) for c in claims[:2]] == ["contradicted", "held"]
    assert claims[0].decision.interval[1] <= 0 and "least favourable anchor: tsv at α*" in claims[0].decision.why
    # a gain inside the noise: +4 examples per task, but 44 that change either way
    tiny = {("tsv", "data", s): fake(0.71, offset=0.05) for s in range(3)}
    c = bmm_benchmark_claims.claim_b1(suite(override=tiny), "data")
    assert verdict(c) == "inconclusive" and "test examples would decide it" in c.evidence
    # BMM collapsed onto one anchor at every seed: that comparison is not tested, so the claim (every other anchor
    # beaten) is undecided: not tested, naming the collapsed anchor
    same = {("ties", "free", s): fake(0.55) for s in range(3)}
    c = bmm_benchmark_claims.claim_b1(suite(override=same), "free")
    assert verdict(c) == "not tested" and "collapsed" in c.evidence
    # ... and when it is the only anchor, the claim is not tested
    only = suite(anchors=(("ties", 0.55, 0.0),), override={("ties", "free", s): fake(0.55) for s in range(3)})
    assert verdict(bmm_benchmark_claims.claim_b1(only, "free")) == "not tested"
    # a variant that did not run
    c = bmm_benchmark_claims.claim_b1(suite(variants=("data",)), "free")
    assert verdict(c) == "not tested" and "variants" in c.evidence


def test_b1_with_the_scale_given_to_the_anchor_too():
    result = SuiteResult("text8", list(TASKS), EXPERT, with_scale=True)
    result.anchors["tsv"] = {}
    # BMM beats the anchor at α* but not the anchor at α*·s* (re-scaling alone explains the gain)
    for seed in range(3):
        anchor = result.anchors["tsv"][seed] = anchor_run("tsv", fake(0.60))
        result.runs.append(bmm_run(anchor, "data", seed, fake(0.66), control=fake(0.67), s=1.3))
    c = bmm_benchmark_claims.claim_b1(result, "data")
    assert verdict(c) == "contradicted" and "tsv at α*·s*" in c.evidence and "searched its assembly scale" in c.evidence
    assert "tsv at α*: +" in c.evidence


def test_b1c_readings_have_all_outcomes():
    b1c = bmm_benchmark_claims.claim_b1c
    # paper reading: the gain over a weak anchor is large (≥ 10%): 2% is contradicted, 10% inconclusive
    assert verdict(b1c(suite(anchors=(("task_arithmetic", 0.50, 0.01), ("tsv", 0.60, 0.10))))) == "contradicted"
    assert verdict(b1c(suite(anchors=(("task_arithmetic", 0.50, 0.05), ("tsv", 0.70, 0.02))))) == "inconclusive"
    # strict reading: larger relative gains over the strong anchor contradict it
    c = b1c(suite(anchors=(("task_arithmetic", 0.50, 0.01), ("tsv", 0.60, 0.10))), "strict")
    assert verdict(c) == "contradicted" and c.id == "B1cs"
    # equal relative gains (weak and strong): inconclusive
    c = b1c(suite(anchors=(("task_arithmetic", 0.50, 0.05), ("tsv", 0.60, 0.06))), "strict")
    assert verdict(c) == "inconclusive"
    # BMM lands on one model whatever the anchor: the agreement is reported (the paper reading nearly by construction)
    one = fake(0.75)
    same = {(a, v, s): one for a in ("task_arithmetic", "tsv") for v in ("data", "free") for s in range(3)}
    c = b1c(suite(anchors=(("task_arithmetic", 0.5, 0), ("tsv", 0.7, 0)), override=same))
    assert verdict(c) == "held" and "100.0–100.0% of examples" in c.evidence and "by construction" in c.evidence
    # only weak anchors: the strict reading is not tested; no weak anchor: neither is
    weak_only = suite(anchors=(("task_arithmetic", 0.5, 0.1), ("ties", 0.55, 0.1)))
    assert verdict(b1c(weak_only, "strict")) == "not tested" and verdict(b1c(weak_only)) == "held"
    assert verdict(b1c(suite(anchors=(("tsv", 0.7, 0.02),)))) == "not tested"


def test_b2_needs_suites_up_to_20_tasks_and_every_suite_to_hold():
    sweep = {"text8": suite("text8", tasks=8), "text14": suite("text14", tasks=14), "text20": suite("text20", tasks=20)}
    c = bmm_benchmark_claims.claim_b2(sweep)
    assert verdict(c) == "held" and c.suite == "text8, text14, text20" and "text20 (20 tasks)" in c.evidence
    sweep["text20"] = suite("text20", tasks=20, override={("ties", "free", s): fake(0.5) for s in range(3)})
    c = bmm_benchmark_claims.claim_b2(sweep)
    assert verdict(c) == "contradicted" and "text20 (20 tasks) BMM-free − ties" in c.decision.why
    short = {"text8": suite("text8", tasks=8), "text14": suite("text14", tasks=14)}
    c = bmm_benchmark_claims.claim_b2(short)
    assert verdict(c) == "not tested" and "stop short of 20" in c.evidence


# -- configuration and parameters -----------------------------------------------------------------------------------

def test_configs_validate():
    config = bench_config(suites=["text8"], anchors=["ties"], search_seeds=3, seed=4)
    assert config.suites == ("text8",) and config.anchors == ("ties",) and config.seeds == [4, 5, 6]
    with pytest.raises(NbmergeError, match="must be one of the notebook's suites"):
        bench_config(suite="micro")
    with pytest.raises(NbmergeError, match="unknown"):
        bench_config(anchors=["no_such_method"])
    with pytest.raises(NbmergeError, match="bmm itself"):
        search_config(anchor="bmm")
    with pytest.raises(NbmergeError, match="variants"):
        bench_config(variants=["data", "dataless"])
    with pytest.raises(NbmergeError, match="n_initial"):
        bench_config(budget=3, n_initial=4)
    with pytest.raises(NbmergeError, match="search_seeds"):
        bench_config(search_seeds=0)
    with pytest.raises(NbmergeError, match="parameter 'budget'"):
        search_config(budget="20")
    with pytest.raises(NbmergeError, match="strategies"):
        search_config(strategies=["bayes", "annealing"])
    with pytest.raises(NbmergeError, match="variant"):
        search_config(variant="task_vector")
    with pytest.raises(NbmergeError, match="grid_repeats"):
        search_config(repeats=2, grid_repeats=3)
    with pytest.raises(NbmergeError, match="timing_trials"):
        search_config(timing_trials=-1)
    # no timing unless asked: a warm rerun computes none
    assert bmm_search.solve_benchmark(None, search_config()) == []
    assert search_config(grid_size=15, with_scale=True).grid_points == 225
    assert search_config(grid_size=15, with_scale=False).grid_points == 15


def _layers(name, profile):
    import yaml

    out = {}
    for layer in ("default", profile):
        if layer:
            out.update((yaml.safe_load((REPO / "notebooks" / "parameters" / f"{layer}.yaml").read_text()) or {})
                       .get(name, {}))
    return out


@pytest.mark.parametrize("path, config_class", [(BENCHMARK, bmm_benchmark.BenchmarkConfig),
                                                (SEARCH, bmm_search.SearchConfig)])
def test_notebook_parameters_match_the_config(path, config_class):
    from dataclasses import MISSING

    from nbmerge.params import build_config, notebook_parameters
    from nbmerge.report.pipeline import resolve_parameters

    declared = notebook_parameters(path)
    # checkpoints / data_root are read by prepare_suites (importing a clip-... pool), not by the config
    assert {"checkpoints", "data_root"} <= set(declared)
    assert set(declared) - {"checkpoints", "data_root"} == {f.name for f in fields(config_class)}
    # the parameters cell is the only place the defaults are written
    assert all(f.default is MISSING and f.default_factory is MISSING for f in fields(config_class))
    build_config(config_class, declared)  # the notebook's defaults make a valid config
    for smoke in (False, True):
        resolved = resolve_parameters([path], NOTEBOOKS / "parameters", smoke, {})[path.stem]
        notebook_config(config_class, path, **resolved)  # ... and so do the report's layers
    assert resolved["suite"] == "micro"
    for profile in ("", "paper"):
        notebook_config(config_class, path, **_layers(path.stem, profile))
    # no notebook text cites files outside the repository, nor calls the default zoo a ViT
    text = path.read_text()
    for outside in ("BRIEF.md", "METHODS.md", "ZOO_NOTES.md", "tiny ViT"):
        assert outside not in text
    with pytest.raises(NbmergeError, match="declares no parameter by_depth"):
        notebook_config(config_class, path, by_depth=2)  # renamed depth_bins


def test_the_profiles_scale():
    default = bench_config(**_layers("20_bmm_benchmark", ""))
    paper = bench_config(**_layers("20_bmm_benchmark", "paper"))
    # the paper's budgets on text8: 20 BO trials at >= 3 seeds, the scale searched, TA and the strong TSV and WUDI
    assert default.suites == ("text8",) and default.search_seeds >= 3 and default.with_scale and default.budget == 20
    assert {"task_arithmetic", "tsv", "wudi"} <= set(default.anchors)
    assert paper.suites == ("text8", "text14", "text20") and paper.budget == 20 and paper.search_seeds >= 3
    assert set(paper.anchors) == set(bmm_benchmark.ANCHORS) and paper.with_scale and paper.val_examples == 0
    search = search_config(**_layers("23_bmm_search", ""))
    assert search.repeats >= 3 and search.grid_points == 225 and search.budget == 20 and search.timing_trials >= 5
    # the search notebook's BO runs are the benchmark's (the same logs): the same search in every respect
    same = ("budget", "n_initial", "with_scale", "val_examples", "gram_examples", "gram_seed", "depth_bins", "seed")
    assert all(getattr(search, k) == getattr(default, k) for k in same)
    assert search.anchor in default.anchors and search.variant in default.variants
    paper_search = search_config(**_layers("23_bmm_search", "paper"))
    assert paper_search.budget == 20 and paper_search.grid_points == 225 and paper_search.repeats >= 3
    assert all(getattr(paper_search, k) == getattr(paper, k) for k in same)  # shared there too


# -- end to end on the micro zoo ------------------------------------------------------------------------------------

def test_benchmark_notebook_steps_on_micro(micro_cache, tmp_path):
    config = bench_config(suite="micro", suites=["micro"], anchors=["regmean"], budget=2, n_initial=1,
                          search_seeds=2, gram_examples=32, wudi_steps=5, val_examples=50, with_scale=False,
                          smoke=True, cache=str(micro_cache))
    results = bmm_benchmark.benchmark(config, log=lambda *_: None)
    result = results["micro"]
    assert [(x.anchor, x.seed, x.variant, x.tuning.settings["gram"]) for x in result.runs] == [
        ("regmean", 0, "data", "data"), ("regmean", 0, "free", "hybrid"),
        ("regmean", 1, "data", "data"), ("regmean", 1, "free", "hybrid")]
    assert set(result.anchors["regmean"]) == {0, 1}
    for x in result.runs:
        anchor = result.anchors["regmean"][x.seed]
        assert x.anchor_run is anchor
        assert anchor.alpha in alpha_tuning.SCALE_GRID and anchor.tuned.recipe["grams"] == alpha_tuning.gram_name(32, 0)
        # BMM's prior is its own seed's α*-tuned anchor: the trial-cache entry of the anchor's test predictions
        assert x.tuning.settings["anchor_params"]["scale"] == anchor.alpha
        assert x.tuning.anchor_recipe == anchor.tuned.best
        assert np.array_equal(x.tuning.anchor_predictions["test"].logits["digits"], anchor.test.logits["digits"])
        assert len(x.tuning.search.trials) == 2 and "scale" not in x.tuning.search.best_params  # s ablated
        assert x.control is None and set(x.comparators()) == {"α*"}
        log = x.tuning.search.log_path
        assert log.parent.name == "bmm-logs" and log.parent.parent.parent.name == "trials"
    # each seed searched on its own validation subset
    assert result.runs[0].tuning.settings["val_subset"] != result.runs[2].tuning.settings["val_subset"]
    assert len({x.tuning.search.log_path for x in result.runs}) == 4
    rows = bmm_benchmark.run_rows(results)
    claims = bmm_benchmark_claims.benchmark_claims(results, "micro")
    assert [c.id for c in claims] == ["B1a", "B1b", "B1c", "B1cs", "B2"]
    assert all(c.verdict in OUTCOMES for c in claims) and claims[4].verdict == "not tested"
    assert claims[2].verdict == claims[3].verdict == "not tested"  # no weak anchor ran
    assert bmm_benchmark_figures.plot_gains(results).axes
    assert bmm_benchmark.search_rows(results, "micro")[0]["anchor"] == "regmean"
    # a second run with warm caches replays every search and evaluates nothing
    again = bmm_benchmark.benchmark(config, log=lambda *_: None)["micro"]
    assert again.evaluations == 0 and all(x.tuning.search.replayed == 2 for x in again.runs)
    assert [x.test.mean_accuracy() for x in again.runs] == [x.test.mean_accuracy() for x in result.runs]
    out = tmp_path / "metrics.json"
    finish("20_bmm_benchmark", headline=bmm_benchmark.benchmark_headline(results, "micro"), claims=claims,
           config=bmm_benchmark.as_dict(config),
           metrics={"runs": rows, "comparison": bmm_benchmark.comparison_table(results)},
           out=out)
    record = json.loads(out.read_text())
    assert record["parameters"]["anchors"] == ["regmean"] and len(record["claims"]) == 5
    assert {c["outcome"] for c in record["claims"]} <= OUTCOMES
