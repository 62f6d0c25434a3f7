"""The BMM benchmark and search notebooks' logic (nbmerge.tune.anchors, .benchmark, .compare and
nbmerge.experiments.bmm_benchmark*, bmm_search): verdicts on synthetic predictions (B1-B4), the bootstrap math, the
notebooks' parameters, and both notebooks' steps end to end on the micro zoo with smoke settings (a second run with
warm caches evaluates nothing)."""

import json
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nbmerge import metrics, protocol
from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_benchmark, bmm_benchmark_claims, bmm_benchmark_figures, bmm_search
from nbmerge.experiments.common import finish
from nbmerge.params import notebook_config
from nbmerge.tune import compare
from nbmerge.tune.anchors import AnchorRun, anchor_params, gram_source
from nbmerge.tune.benchmark import BMMRun, SuiteResult, compare_with_anchor
from nbmerge.tune.compare import StrategyResult

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
BENCHMARK = NOTEBOOKS / "20_bmm_benchmark.ipynb"
SEARCH = NOTEBOOKS / "23_bmm_search.ipynb"


def bench_config(**overrides):
    """The benchmark notebook's config at its parameters cell's defaults, with ``overrides`` (as papermill's -p)."""
    return notebook_config(bmm_benchmark.BenchmarkConfig, BENCHMARK, **overrides)


def search_config(**overrides):
    """The search notebook's config at its parameters cell's defaults, with ``overrides``."""
    return notebook_config(bmm_search.SearchConfig, SEARCH, **overrides)
TASKS = ("a", "b", "c")
N = 400                       # test examples per task
EXPERT = {t: 0.9 for t in TASKS}


def fake(correct: float, wrong_shift: int = 1, classes: int = 4, offset: float = 0.0) -> protocol.Predictions:
    """Predictions on N examples per task, right on the examples in [offset, offset + correct) of the range (so two
    models with the same window agree everywhere); a wrong example predicts label + ``wrong_shift``."""
    logits, labels = {}, {}
    for k, task in enumerate(TASKS):
        y = (np.arange(N) * 7 + k) % classes
        right = np.zeros(N, bool)
        start = int(round(offset * N))
        right[start:start + int(round(correct * N))] = True
        pred = np.where(right, y, (y + wrong_shift) % classes)
        logits[task] = np.eye(classes, dtype=np.float32)[pred] * 5
        labels[task] = y
    return protocol.Predictions(logits, labels)


def anchor_run(name, test, alpha=1.0):
    tuned = protocol.Tuned({"method": name}, alpha, [{"alpha": alpha, "val_accuracy": test.mean_accuracy()}])
    return AnchorRun(name, {}, tuned, test)


def bmm_run(anchor: AnchorRun, variant, seed, test, control=None, s=1.0):
    tuning = SimpleNamespace(test_predictions=test)
    return BMMRun(anchor.name, variant, seed, tuning,
                        compare_with_anchor(test, anchor, EXPERT, control, s),
                        protocol.relative_gain_interval(test, anchor.test))


def suite(name="text8", anchors=(("task_arithmetic", 0.50, 0.12), ("ties", 0.55, 0.10), ("tsv", 0.70, 0.02)),
          seeds=(0, 1, 2), variants=("data", "free"), override=None, tasks=8):
    """Anchors at the given accuracy; BMM on each at +gain (a different window per seed); ``override`` maps
    (anchor, variant, seed) to a BMM Predictions."""
    result = SuiteResult(name, [f"t{i}" for i in range(tasks)], EXPERT)
    for anchor, acc, gain in anchors:
        run = result.anchors[anchor] = anchor_run(anchor, fake(acc))
        for variant in variants:
            for seed in seeds:
                test = (override or {}).get((anchor, variant, seed)) or fake(acc + gain - 0.002 * seed)
                result.runs.append(bmm_run(run, variant, seed, test))
    return result


def verdict(c):
    return c.verdict


# -- the bootstrap --------------------------------------------------------------------------------------------------

def test_relative_gain():
    assert metrics.relative_gain(0.6, 0.5) == pytest.approx(0.2)
    assert metrics.relative_gain(0.45, 0.5) == pytest.approx(-0.1)
    assert metrics.relative_gain(0.3, 0.0) != metrics.relative_gain(0.3, 0.0)  # NaN: no finite gain over a zero anchor


def test_joint_bootstrap_resamples_like_the_protocol():
    a, b = fake(0.62), fake(0.55, offset=0.1)
    boot = protocol.bootstrap_accuracy([a, b])
    ours = protocol.quantile_interval(100 * (boot[0] - boot[1]), 100 * (a.mean_accuracy() - b.mean_accuracy()))
    theirs = protocol.paired_difference(a, b)  # plain accuracy, the same seed: the same resamples
    assert ours["low"] == pytest.approx(theirs.low) and ours["high"] == pytest.approx(theirs.high)
    rel = protocol.relative_gain_interval(a, b)
    assert rel["diff"] == pytest.approx((0.62 - 0.55) / 0.55) and rel["low"] < rel["diff"] < rel["high"]
    assert protocol.agreement(a, a) == 1.0 and protocol.agreement(a, b) < 1.0
    with pytest.raises(NbmergeError, match="different examples"):
        other = fake(0.5)
        other.labels["a"] = other.labels["a"][::-1].copy()
        protocol.bootstrap_accuracy([a, other])


# -- B1, B2 ---------------------------------------------------------------------------------------------------------

def test_b1_holds_when_bmm_beats_every_tuned_anchor_at_every_seed():
    results = {"text8": suite()}
    claims = bmm_benchmark_claims.benchmark_claims(results, "text8")
    assert [c.id for c in claims] == ["B1", "B1", "B1", "B2"]
    assert [verdict(c) for c in claims] == ["held", "held", "held", "not tested"]
    assert "seed 0 +" in claims[0].evidence and "tsv (α* = 1)" in claims[0].evidence
    assert "ablated" in claims[0].evidence and "3 search seeds" in claims[0].evidence
    assert claims[0].ours.startswith("task_arithmetic +") and claims[0].paper.startswith("ViT-L/14")
    assert "arXiv 2605.12843" in claims[0].source and "BRIEF" not in claims[0].source
    # the relative gain: largest over a weak anchor (TA: 0.12 / 0.50), with an interval
    assert "largest over a weak anchor +24.0%" in claims[2].ours and "reported, not tested" in claims[2].evidence
    assert bmm_benchmark_claims.NOT_IN_DEFAULT in claims[3].evidence
    headline = bmm_benchmark.benchmark_headline(results, "text8")
    assert "tsv" in headline["name"] and headline["value"] == pytest.approx(100 * np.mean(
        [(0.02 - 0.002 * s) / 0.9 for s in range(3)]), abs=0.1)  # windows round to whole examples
    table = bmm_benchmark.comparison_table(results)
    assert len(table) == 6 and {r["verdict"] for r in table} == {"held"}


def test_b1_fails_on_one_seed_and_is_not_tested_when_bmm_is_its_anchor():
    # one seed of one anchor loses: the data-assisted claim fails and names it; data-free still holds
    loss = {("tsv", "data", 1): fake(0.66)}
    claims = bmm_benchmark_claims.benchmark_claims({"text8": suite(override=loss)}, "text8")
    assert [verdict(c) for c in claims[:2]] == ["did not hold", "held"]
    assert "Not beaten at every seed: tsv" in claims[0].evidence
    # a gain inside the noise does not count: +4 examples per task, but 44 that change either way
    tiny = {("tsv", "data", s): fake(0.71, offset=0.05) for s in range(3)}
    assert verdict(bmm_benchmark_claims.claim_b1(suite(override=tiny), "data")) == "did not hold"
    # BMM collapsed onto its anchor at every seed: that anchor is not testable, so neither is B1
    same = {("ties", "free", s): fake(0.55) for s in range(3)}
    c = bmm_benchmark_claims.claim_b1(suite(override=same), "free")
    assert verdict(c) == "not tested" and "collapsed" in c.evidence and "Not testable: ties" in c.evidence
    # a variant that did not run
    c = bmm_benchmark_claims.claim_b1(suite(variants=("data",)), "free")
    assert verdict(c) == "not tested" and "variants" in c.evidence


def test_b1_with_the_scale_given_to_the_anchor_too():
    result = SuiteResult("text8", list(TASKS), EXPERT, with_scale=True)
    anchor = result.anchors["tsv"] = anchor_run("tsv", fake(0.60))
    # BMM beats the anchor at α* but not the anchor at α*·s* (re-scaling alone explains the gain)
    for seed in range(3):
        result.runs.append(bmm_run(anchor, "data", seed, fake(0.66), control=fake(0.67), s=1.3))
    c = bmm_benchmark_claims.claim_b1(result, "data")
    assert verdict(c) == "did not hold" and "α*·s*" in c.evidence and "searched its assembly scale" in c.evidence


def test_weak_anchor_gains_can_fail_and_collapse_is_not_tested():
    # larger relative gains over the strong anchor: fails
    strong_gains = (("task_arithmetic", 0.50, 0.01), ("tsv", 0.60, 0.10))
    assert verdict(bmm_benchmark_claims.claim_b1_weak(suite(anchors=strong_gains))) == "did not hold"
    # BMM lands on one model whatever the anchor: a larger gain over the weaker anchor is then no test
    one = fake(0.75)
    same = {(a, v, s): one for a in ("task_arithmetic", "tsv") for v in ("data", "free") for s in range(3)}
    c = bmm_benchmark_claims.claim_b1_weak(suite(anchors=(("task_arithmetic", 0.5, 0), ("tsv", 0.7, 0)), override=same))
    assert verdict(c) == "not tested" and "same model from weak and strong anchors" in c.evidence
    # only weak anchors ran
    c = bmm_benchmark_claims.claim_b1_weak(suite(anchors=(("task_arithmetic", 0.5, 0.1), ("ties", 0.55, 0.1))))
    assert verdict(c) == "not tested" and "one other anchor" in c.evidence


def test_b2_needs_suites_up_to_20_tasks_and_every_suite_to_hold():
    sweep = {"text8": suite("text8", tasks=8), "text14": suite("text14", tasks=14), "text20": suite("text20", tasks=20)}
    c = bmm_benchmark_claims.claim_b2(sweep)
    assert verdict(c) == "held" and c.suite == "text8, text14, text20" and "20 tasks" in c.ours
    sweep["text20"] = suite("text20", tasks=20, override={("ties", "free", 2): fake(0.5)})
    c = bmm_benchmark_claims.claim_b2(sweep)
    assert verdict(c) == "did not hold" and "ties not beaten" in c.evidence
    short = {"text8": suite("text8", tasks=8), "text14": suite("text14", tasks=14)}
    c = bmm_benchmark_claims.claim_b2(short)
    assert verdict(c) == "not tested" and "stop short of 20" in c.evidence


# -- B3, B4 ---------------------------------------------------------------------------------------------------------

def search_run(test, seconds, trials):
    """A search whose trials took ``seconds`` in all (evaluation only, as logged)."""
    logged = [SimpleNamespace(seconds=99.0, search_seconds=0.0, metrics={"merge_seconds": 0.0,
                                                                          "eval_seconds": seconds / trials})
              for _ in range(trials)]
    return SimpleNamespace(test_predictions=test, search=SimpleNamespace(trials=logged),
                           test_accuracy=test.mean_accuracy())


def strategies(bo=0.70, grid=0.62, shared=0.64, random=0.60, bo_seconds=30.0, grid_seconds=400.0, budget=8,
               grid_points=49):
    anchor = anchor_run("task_arithmetic", fake(0.5))
    result = StrategyResult("text8", EXPERT, anchor, budget=budget, grid_points=grid_points)
    result.runs.append(("grid", 0, search_run(fake(grid), grid_seconds, grid_points)))
    for seed in range(3):
        result.runs.append(("bayes", seed, search_run(fake(bo - 0.002 * seed), bo_seconds, budget)))
        result.runs.append(("shared", seed, search_run(fake(shared), bo_seconds, budget)))
        result.runs.append(("random", seed, search_run(fake(random, offset=0.05 * seed), bo_seconds, budget)))
    return result


def test_b3_b4_hold_when_bo_beats_every_baseline_at_every_seed():
    claims = bmm_search.search_claims(strategies())
    assert [c.id for c in claims] == ["B3", "B4", "B4"]
    assert [verdict(c) for c in claims] == ["held", "held", "held"]
    assert "here: 8 BO iterations against a 49-configuration grid" in claims[0].claim
    assert "225" in claims[0].claim and "grid/BO wall time 13.33" in claims[0].evidence
    assert "seed 2 +" in claims[1].evidence and "arXiv 2605.12843" in claims[1].source
    paper = strategies(budget=20, grid_points=225, grid_seconds=900)
    assert bmm_search.claim_b3(paper).claim.endswith("at much lower wall time")


def test_b3_b4_fail_or_are_not_tested():
    # BO more accurate but not 5× faster
    assert verdict(bmm_search.claim_b3(strategies(bo_seconds=100.0))) == "did not hold"
    # the grid less than 5× BO's trials: the time part cannot be a test
    c = bmm_search.claim_b3(strategies(grid_points=30, grid_seconds=400.0))
    assert verdict(c) == "not tested" and "fewer than 5× BO's 8 trials" in c.evidence
    # ... but an accuracy loss fails it all the same
    assert verdict(bmm_search.claim_b3(strategies(bo=0.60, grid=0.70, grid_points=30))) == "did not hold"
    # BO and the grid end on the same model: not tested
    c = bmm_search.claim_b3(strategies(bo=0.62, grid=0.62))
    assert verdict(c) in ("not tested", "did not hold")
    same = strategies(grid=0.70)
    same.runs = [r for r in same.runs if r[0] != "bayes"] + [("bayes", s, search_run(fake(0.70), 30.0, 8))
                                                             for s in range(3)]
    c = bmm_search.claim_b3(same)
    assert verdict(c) == "not tested" and "collapsed" in c.evidence
    # the shared λ as good as BO: B4 (shared) does not hold; no random search: not tested
    result = strategies(shared=0.72)
    assert verdict(bmm_search.claim_b4(result, "shared")) == "did not hold"
    result.runs = [r for r in result.runs if r[0] != "random"]
    assert verdict(bmm_search.claim_b4(result, "random")) == "not tested"
    only_bo = strategies()
    only_bo.runs = [r for r in only_bo.runs if r[0] == "bayes"]
    assert [verdict(c) for c in bmm_search.search_claims(only_bo)] == ["not tested"] * 3


def test_strategy_tables():
    rows = [{"strategy": s, "seed": k, "trials": 8, "val": v, "test": v, "seconds": 30.0, "merge_s": 0.01,
             "eval_s": 1.0, "optimiser_s": 0.1, "anchor_val": 0.4, "convergence": [0.4] * 8}
            for s, k, v in (("bayes", 0, 0.62), ("bayes", 1, 0.60), ("grid", 0, 0.58))]
    summary = {s["strategy"]: s for s in compare.strategy_summary(rows)}
    assert summary["bayes"]["test"] == pytest.approx(0.61) and summary["grid"]["runs"] == 1
    assert summary["bayes"]["test over seeds (%)"].startswith("61.00 ± 1.41")
    assert compare.timing_table(rows)[0]["eval / merge"] == pytest.approx(100)
    assert bmm_search.plot_convergence(rows, 8).axes


# -- configuration and parameters -----------------------------------------------------------------------------------

def test_gram_source_keeps_data_for_an_anchor_that_needs_it():
    assert gram_source("task_arithmetic", "data")[0] == "data"
    assert gram_source("task_arithmetic", "free")[0] == "task_vector"
    assert gram_source("regmean", "free") == ("hybrid", 0.0)
    assert anchor_params("wudi", 300) == {"iters": 300} and anchor_params("ties", 300) == {}
    with pytest.raises(NbmergeError, match="variant"):
        gram_source("ties", "both")


def test_configs_validate():
    config = bench_config(suites=["text8"], anchors=["ties"], search_seeds=3, seed=4)
    assert config.suites == ("text8",) and config.anchors == ("ties",) and config.seeds == [4, 5, 6]
    with pytest.raises(NbmergeError, match="must be one of suites"):
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
    assert default.suites == ("text8",) and default.search_seeds >= 3 and not default.with_scale
    assert {"task_arithmetic", "ties"} & set(default.anchors) and set(default.anchors) - set(bmm_benchmark.WEAK_ANCHORS)
    assert paper.suites == ("text8", "text14", "text20") and paper.budget == 20 and paper.search_seeds >= 3
    assert set(paper.anchors) == set(bmm_benchmark.ANCHORS) and paper.with_scale and paper.val_examples == 0
    search = search_config(**_layers("23_bmm_search", ""))
    assert search.repeats >= 3 and search.grid_points >= bmm_search.MUCH_LOWER_FACTOR * search.budget
    # the search notebook's BO runs are the benchmark's (the same logs): the same search in every respect
    same = ("budget", "n_initial", "with_scale", "val_examples", "gram_examples", "gram_seed", "depth_bins", "seed")
    assert all(getattr(search, k) == getattr(default, k) for k in same)
    assert search.anchor in default.anchors and search.variant in default.variants
    paper_search = search_config(**_layers("23_bmm_search", "paper"))
    assert paper_search.budget == 20 and paper_search.grid_points == 225 and paper_search.repeats >= 3
    assert all(getattr(paper_search, k) == getattr(paper, k) for k in same)  # shared there too


# -- end to end on the micro zoo ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    return load_zoo("micro", micro_cache)


def test_hybrid_with_beta_zero_is_the_task_vector_gram(micro):
    import torch

    from nbmerge.pools.zoo import expert_grams, load_models
    from nbmerge.methods.bmm import run_anchor
    from nbmerge.solvers.bmm import BMMSolver

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


def test_benchmark_notebook_steps_on_micro(micro_cache, tmp_path):
    config = bench_config(suite="micro", suites=["micro"], anchors=["regmean"], budget=2, n_initial=1,
                          search_seeds=2, gram_examples=32, wudi_steps=5, val_examples=50, smoke=True,
                          cache=str(micro_cache))
    results = bmm_benchmark.benchmark(config, log=lambda *_: None)
    result = results["micro"]
    assert [(x.anchor, x.variant, x.seed, x.tuning.settings["gram"]) for x in result.runs] == [
        ("regmean", "data", 0, "data"), ("regmean", "data", 1, "data"),
        ("regmean", "free", 0, "hybrid"), ("regmean", "free", 1, "hybrid")]
    anchor = result.anchors["regmean"]
    assert anchor.alpha in protocol.SCALE_GRID and anchor.tuned.recipe["grams"] == protocol.gram_name(32, 0)
    for x in result.runs:
        # BMM's prior is the α*-tuned anchor: the same trial-cache entry as the anchor's own test predictions
        assert x.tuning.settings["anchor_params"]["scale"] == anchor.alpha
        assert x.tuning.anchor_recipe == anchor.tuned.best
        assert np.array_equal(x.tuning.anchor_predictions["test"].logits["digits"], anchor.test.logits["digits"])
        assert len(x.tuning.search.trials) == 2 and "scale" not in x.tuning.search.best_params  # s ablated
        log = x.tuning.search.log_path
        assert log.parent.name == "bmm-logs" and log.parent.parent.parent.name == "trials"
        assert set(x.decisions) == {"anchor"} and x.decisions["anchor"]["held"] in (True, False, None)
    assert len({x.tuning.search.log_path for x in result.runs}) == 4
    rows = bmm_benchmark.run_rows(results)
    claims = bmm_benchmark_claims.benchmark_claims(results, "micro")
    assert [c.id for c in claims] == ["B1", "B1", "B1", "B2"] and claims[3].verdict == "not tested"
    assert claims[2].verdict == "not tested"  # no strong anchor ran
    assert bmm_benchmark_figures.plot_accuracy_per_anchor(results).axes
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
    assert record["parameters"]["anchors"] == ["regmean"] and len(record["claims"]) == 4


def test_search_notebook_steps_on_micro(micro, micro_cache):
    common = dict(budget=3, n_initial=2, gram_examples=32, val_examples=50, smoke=True, cache=str(micro_cache))
    # the benchmark's searches on task arithmetic (data-assisted) are the search notebook's BO runs
    bmm_benchmark.benchmark(bench_config(suite="micro", suites=["micro"], anchors=["task_arithmetic"],
                                         variants=["data"], search_seeds=2, **common), log=lambda *_: None)
    config = search_config(suite="micro", repeats=2, grid_size=3, bench_solves=True, **common)
    result = bmm_search.run(config, log=lambda *_: None)
    rows = compare.strategy_rows(result)
    assert [(r["strategy"], r["seed"], r["trials"], r["replayed"]) for r in rows] == [
        ("bayes", 0, 3, 3), ("bayes", 1, 3, 3), ("shared", 0, 3, 0), ("shared", 1, 3, 0), ("random", 0, 3, 0),
        ("random", 1, 3, 0), ("grid", 0, 3, 0)]
    for r in rows:
        assert len(r["convergence"]) == r["trials"] and r["convergence"][-1] == r["val"]
        assert r["seconds"] > 0 and r["eval_s"] > 0
    shared = rows[2]["best_params"]
    assert len({shared[g] for g in ("attn_in", "attn_out", "mlp_in", "mlp_out")}) == 1  # one λ for every group
    assert rows[0]["best_params"] != rows[1]["best_params"]  # another seed, another search
    claims = bmm_search.search_claims(result)
    assert [c.id for c in claims] == ["B3", "B4", "B4"]
    assert "3-configuration grid" in claims[0].claim and claims[0].verdict in ("not tested", "did not hold")
    json.dumps({"runs": rows, "summary": compare.strategy_summary(rows), "timing": compare.timing_table(rows)})
    again = bmm_search.run(config, log=lambda *_: None)
    assert again.evaluations == 0 and [t.test_accuracy for _, _, t in again.runs] == [r["test"] for r in rows]
    solves = bmm_search.solve_benchmark(micro, config)
    assert [s["model"] for s in solves] == ["zoo"]
    assert solves[0]["width"] == micro.arch.width and solves[0]["max_abs_difference"] < 1e-8
