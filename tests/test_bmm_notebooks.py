"""The BMM benchmark and search notebooks' logic (nbmerge.tune.study, .benchmark, .compare and
nbmerge.experiments.bmm_benchmark*, bmm_search): verdicts on synthetic predictions (B1-B4), the bootstrap math, the
notebooks' parameters, and both notebooks' steps end to end on the micro zoo with smoke settings (a second run with
warm caches evaluates nothing)."""

import json
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nbmerge.evaluate import metrics, protocol
from nbmerge.tune import alpha_tuning
from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_benchmark, bmm_benchmark_claims, bmm_benchmark_figures, bmm_search
from nbmerge.experiments.common import finish
from nbmerge.params import notebook_config
from nbmerge.tune import compare
from nbmerge.tune.study import AnchorRun, anchor_params, gram_source
from nbmerge.tune.benchmark import BMMRun, SuiteResult
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
    tuned = alpha_tuning.Tuned({"method": name}, alpha, [{"alpha": alpha, "val_accuracy": test.mean_accuracy()}])
    return AnchorRun(name, {}, tuned, test)


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


def verdict(c):
    return c.verdict


OUTCOMES = {"held", "contradicted", "inconclusive", "not tested"}


# -- the bootstrap --------------------------------------------------------------------------------------------------

def test_relative_gain():
    assert metrics.relative_gain(0.6, 0.5) == pytest.approx(0.2)
    assert metrics.relative_gain(0.45, 0.5) == pytest.approx(-0.1)
    assert metrics.relative_gain(0.3, 0.0) != metrics.relative_gain(0.3, 0.0)  # NaN: no finite gain over a zero anchor


def test_seeded_accuracy_is_a_two_level_bootstrap():
    from nbmerge.experiments.bmm_common import seeded_accuracy

    a, b = fake(0.62), fake(0.55, offset=0.1)
    point, samples = seeded_accuracy([[a, b], [b, a]], n_boot=500)
    assert point == pytest.approx([(0.62 + 0.55) / 2] * 2) and samples.shape == (2, 500)
    # one seed: only the examples are resampled, the same indices for both models (the difference is tight)
    point, samples = seeded_accuracy([[a, b]], n_boot=500)
    assert point == pytest.approx([0.62, 0.55])
    assert np.std(samples[0] - samples[1]) < np.std(samples[0]) + np.std(samples[1])
    # two seeds that disagree: the seed level widens the interval
    _, two = seeded_accuracy([[a], [b]], n_boot=500)
    _, one = seeded_accuracy([[a]], n_boot=500)
    assert np.std(two[0]) > np.std(one[0])


def test_combine_takes_the_least_favourable_part():
    from nbmerge.evaluate import verdicts
    from nbmerge.experiments.bmm_common import combine

    held = verdicts.decide(2.0, interval=[1.0, 3.0])
    low = verdicts.decide(1.5, interval=[0.5, 2.5])
    unsure = verdicts.decide(0.5, interval=[-1.0, 2.0])
    lost = verdicts.decide(-2.0, interval=[-3.0, -1.0])
    skipped = verdicts.not_tested("collapsed")
    assert combine({"a": held, "b": low}).outcome == "held" and combine({"a": held, "b": low}).interval == [0.5, 2.5]
    assert combine({"a": held, "b": unsure}).outcome == "inconclusive"
    both = combine({"a": held, "b": unsure, "c": lost})
    assert both.outcome == "contradicted" and both.estimate == -2.0
    part = combine({"a": held, "b": skipped})   # undecided: the recorded interval alone would say "held"
    assert part.outcome == "not tested" and "collapsed" in part.why
    mixed = combine({"a": unsure, "b": skipped})
    assert mixed.outcome == "inconclusive" and "collapsed" in mixed.why
    assert combine({"b": skipped}).outcome == "not tested" and combine({}).outcome == "not tested"


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


# -- B3, B4 ---------------------------------------------------------------------------------------------------------

def search_run(test, seconds, trials):
    """A search whose trials took ``seconds`` in all (evaluation only, as logged)."""
    logged = [SimpleNamespace(seconds=99.0, search_seconds=0.0, metrics={"merge_seconds": 0.0,
                                                                          "eval_seconds": seconds / trials})
              for _ in range(trials)]
    return SimpleNamespace(test_predictions=test, search=SimpleNamespace(trials=logged),
                           test_accuracy=test.mean_accuracy())


def strategies(bo=0.70, grid=0.62, shared=0.64, random=0.60, budget=20, grid_points=225, bo_offset=0.0):
    anchor = anchor_run("task_arithmetic", fake(0.5))
    result = StrategyResult("text8", EXPERT, {s: anchor for s in range(3)}, budget=budget, grid_points=grid_points,
                            with_scale=True)
    result.runs.append(("grid", 0, search_run(fake(grid), 400.0, grid_points)))
    for seed in range(3):
        result.runs.append(("bayes", seed, search_run(fake(bo - 0.002 * seed, offset=bo_offset), 30.0, budget)))
        result.runs.append(("shared", seed, search_run(fake(shared), 30.0, budget)))
        result.runs.append(("random", seed, search_run(fake(random, offset=0.05 * seed), 30.0, budget)))
    return result


def times(bo_s=1.0, grid_s=1.0, budget=20, grid_points=225):
    """Fresh timings: 5 trials per arm around the given seconds, BO's optimiser 0.03 s per trial."""
    jitter = np.array([0.97, 1.0, 1.02, 0.99, 1.03])
    return {"bayes": {"seconds": list(bo_s * jitter), "optimiser_s": 0.03, "trials": budget, "seed": 0},
            "grid": {"seconds": list(grid_s * jitter[::-1]), "optimiser_s": 0.0, "trials": grid_points, "seed": 0}}


def test_b3_b4_held_when_bo_beats_every_baseline():
    claims = bmm_search.search_claims(strategies(), times())
    assert [c.id for c in claims] == ["B3", "B3s", "B4a", "B4b"]
    assert [verdict(c) for c in claims] == ["held"] * 4
    assert [c.reading for c in claims[:2]] == ["paper", "strict"]
    assert claims[0].claim.endswith("(paper reading: BO − grid above −1 normalized pt)")
    assert "wall time: " in claims[0].evidence and "225 trials × (median" in claims[0].evidence
    assert "grid/BO time 10.9 [" in claims[0].ours  # 225 × 1.0 / (20 × (1.0 + 0.03)), medians of the jitter
    assert "arXiv 2605.12843" in claims[2].source and claims[2].setting
    small = bmm_search.claim_b3(strategies(budget=8, grid_points=49), times(budget=8, grid_points=49))
    assert "here: 8 BO iterations against a 49-configuration grid" in small.claim


def test_b3_b4_contradicted_inconclusive_not_tested():
    # BO more accurate but the grid's trials much cheaper: the time part is contradicted
    c = bmm_search.claim_b3(strategies(), times(grid_s=0.2))
    assert verdict(c) == "contradicted" and "least favourable part: wall time" in c.decision.why
    # no fresh timing: the time part is not tested, so the claim is undecided (its accuracy part held)
    assert verdict(bmm_search.claim_b3(strategies(), None)) == "not tested"
    # the grid less than 5× BO's trials: the time part cannot be a test
    c = bmm_search.claim_b3(strategies(budget=8, grid_points=30), times(budget=8, grid_points=30))
    assert verdict(c) == "not tested" and "fewer than 5× BO's 8 trials" in c.evidence
    # BO a little better than the grid, within the noise: at least as good (paper) but not beating it (strict)
    close = strategies(bo=0.63, grid=0.62, bo_offset=0.01)
    assert [verdict(bmm_search.claim_b3(close, times(), r)) for r in ("paper", "strict")] == ["held", "inconclusive"]
    # BO clearly worse: contradicted in both readings
    worse = strategies(bo=0.55, grid=0.70)
    assert {verdict(bmm_search.claim_b3(worse, times(), r)) for r in ("paper", "strict")} == {"contradicted"}
    # the shared λ better than BO: B4a contradicted; no random search: B4b not tested
    result = strategies(shared=0.75)
    assert verdict(bmm_search.claim_b4(result, "shared")) == "contradicted"
    result.runs = [r for r in result.runs if r[0] != "random"]
    assert verdict(bmm_search.claim_b4(result, "random")) == "not tested"
    # random search as good as BO, other examples: inconclusive
    even = strategies(random=0.71)
    even.runs = [r for r in even.runs if r[0] != "random"] + [
        ("random", s, search_run(fake(0.70 - 0.002 * s, offset=0.05), 30.0, 20)) for s in range(3)]
    assert verdict(bmm_search.claim_b4(even, "random")) == "inconclusive"
    only_bo = strategies()
    only_bo.runs = [r for r in only_bo.runs if r[0] == "bayes"]
    assert [verdict(c) for c in bmm_search.search_claims(only_bo, None)] == ["not tested"] * 4


def test_time_ratio_resamples_the_timed_trials():
    point, samples = compare.time_ratio(times())
    assert point == pytest.approx(225 / (20 * 1.03), rel=0.02) and samples.min() < point < samples.max()


def test_strategy_tables():
    rows = [{"strategy": s, "seed": k, "trials": 8, "val": v, "test": v, "seconds": 30.0, "merge_s": 0.01,
             "eval_s": 1.0, "optimiser_s": 0.1, "anchor_val": 0.4, "convergence": [0.4] * 8,
             "name": compare.strategy_name(s, False)}
            for s, k, v in (("bayes", 0, 0.62), ("bayes", 1, 0.60), ("grid", 0, 0.58))]
    summary = {s["strategy"]: s for s in compare.strategy_summary(rows)}
    assert summary["bayes"]["test"] == pytest.approx(0.61) and summary["grid"]["runs"] == 1
    assert summary["bayes"]["test over seeds (%)"].startswith("61.00 ± 1.41")
    assert compare.timing_table(rows)[0]["eval / merge"] == pytest.approx(100)
    assert bmm_search.plot_convergence(rows, 8).axes
    # labels true to the run: "× scale" only when the scale was searched
    assert "scale" not in summary["grid"]["name"] and "scale" in compare.strategy_name("grid", True)
    assert "grid (shared λ)" in bmm_search.convergence_alt(rows)
    rows_t = bmm_search.timing_rows(times(), True)
    assert [r["trials"] for r in rows_t] == [20, 225] and rows_t[0]["timed trials"] == 5


def test_workers_above_one_imports_the_distributed_module(monkeypatch):
    """Notebook 23 with workers > 1 asks nbmerge.tune.distributed for Ray (it used to import a missing module)."""
    import importlib

    distributed = importlib.import_module("nbmerge.tune.distributed")
    called = []
    monkeypatch.setattr(distributed, "import_ray", lambda: called.append(True))
    config = search_config(workers=2)
    assert config.workers == 2 and called == [True]


@pytest.mark.ray
def test_notebook_23_runs_its_searches_on_two_ray_workers(micro_cache):
    """Notebook 23's study with workers = 2, on a local Ray cluster: the random search hands out the same points in
    batches, so it ends where the in-process search does (its own log: the batch is part of its identity)."""
    pytest.importorskip("ray")
    settings = dict(suite="micro", cache=str(micro_cache), strategies=["random"], budget=3, n_initial=1, repeats=1,
                    grid_repeats=1, grid_size=2, val_examples=20, gram_examples=16, wudi_steps=5, timing_trials=0,
                    variant="free", bench_solves=False)
    on_ray = bmm_search.run(search_config(workers=2, **settings), log=lambda *_: None)
    in_process = bmm_search.run(search_config(workers=1, **settings), log=lambda *_: None)
    [(_, ray_run)] = on_ray.of("random")
    [(_, local_run)] = in_process.of("random")
    assert len(ray_run.search.trials) == len(local_run.search.trials) == 3
    assert ray_run.search.best_params == local_run.search.best_params
    assert ray_run.val_accuracy == local_run.val_accuracy


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


def test_search_notebook_steps_on_micro(micro, micro_cache):
    common = dict(budget=3, n_initial=2, gram_examples=32, val_examples=50, smoke=True, cache=str(micro_cache))
    # the benchmark's searches on task arithmetic (data-assisted) are the search notebook's BO runs
    bmm_benchmark.benchmark(bench_config(suite="micro", suites=["micro"], anchors=["task_arithmetic"],
                                         variants=["data"], search_seeds=2, **common), log=lambda *_: None)
    config = search_config(suite="micro", repeats=2, grid_size=4, bench_solves=True, timing_trials=5, **common)
    result = bmm_search.run(config, log=lambda *_: None)
    rows = compare.strategy_rows(result)
    assert [(r["strategy"], r["seed"], r["trials"], r["replayed"]) for r in rows] == [
        ("bayes", 0, 3, 3), ("shared", 0, 3, 0), ("random", 0, 3, 0), ("grid", 0, 16, 0),
        ("bayes", 1, 3, 3), ("shared", 1, 3, 0), ("random", 1, 3, 0)]
    for r in rows:
        assert len(r["convergence"]) == r["trials"] and r["convergence"][-1] == r["val"]
        assert r["seconds"] > 0 and r["eval_s"] > 0 and "scale" in r["best_params"]
    assert rows[3]["name"] == "grid (shared λ × scale)"
    shared = rows[1]["best_params"]
    assert len({shared[g] for g in ("attn_in", "attn_out", "mlp_in", "mlp_out")}) == 1  # one λ for every group
    assert rows[0]["best_params"] != rows[4]["best_params"]  # another seed, another search
    times = bmm_search.timing(result, config)
    assert [len(t["seconds"]) for t in times.values()] == [5, 5] and times["grid"]["trials"] == 16
    claims = bmm_search.search_claims(result, times)
    assert [c.id for c in claims] == ["B3", "B3s", "B4a", "B4b"]
    assert "16-configuration grid" in claims[0].claim and all(c.verdict in OUTCOMES for c in claims)
    json.dumps({"runs": rows, "summary": compare.strategy_summary(rows), "timing": compare.timing_table(rows),
                "fresh_timing": times})
    again = bmm_search.run(config, log=lambda *_: None)
    assert again.evaluations == 0 and [t.test_accuracy for _, _, t in again.runs] == [r["test"] for r in rows]
    solves = bmm_search.solve_benchmark(micro, config)
    assert [s["model"] for s in solves] == ["zoo"]
    assert solves[0]["width"] == micro.arch.width and solves[0]["max_abs_difference"] < 1e-8
