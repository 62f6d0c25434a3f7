"""BMM claims B3-B4 (notebook 23_bmm_search; nbmerge.experiments.bmm_search and nbmerge.tune.compare): verdicts on
synthetic searches and timings, the time ratio's bootstrap, the strategy tables, the searches on Ray workers, and the
notebook's steps end to end on the micro zoo with smoke settings (a second run with warm caches evaluates nothing)."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from tests.fakes import EXPERT, OUTCOMES, anchor_run, bench_config, fake, search_config, verdict

from nbmerge.experiments import bmm_benchmark, bmm_search
from nbmerge.tune import compare
from nbmerge.tune.compare import StrategyResult


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


# -- end to end on the micro zoo ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    return load_zoo("micro", micro_cache)


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
