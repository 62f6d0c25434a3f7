"""nbmerge.tune.search (seeded, resumable BO/random/grid/shared search) and BMM's outer loop on the `micro` zoo."""

import itertools
import json
import warnings

import numpy as np
import pytest

from nbmerge.errors import MethodError, NbmergeError
from nbmerge.tune.search import Space, grid_points, read_log, search

OPTIMUM = {"a": -1.0, "b": 1.2}


def quadratic(params):
    return -((params["a"] - OPTIMUM["a"]) ** 2 + 3 * (params["b"] - OPTIMUM["b"]) ** 2)


def box():
    return Space({"a": (-4, 2), "b": (0.5, 1.5)})


def _same_trials(left, right):
    assert [t.params for t in left.trials] == [t.params for t in right.trials]
    assert [t.value for t in left.trials] == [t.value for t in right.trials]


class Interrupt(RuntimeError):
    pass


def interrupted_after(k, objective):
    calls = []

    def wrapped(params):
        if len(calls) == k:
            raise Interrupt(f"stopped after {k} trials")
        calls.append(params)
        return objective(params)

    return wrapped


def counting(objective):
    calls = []

    def wrapped(params):
        calls.append(params)
        return objective(params)

    return wrapped, calls


# -- the box ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bounds, words", [
    ({}, "non-empty"),
    ({"a": (1, 1)}, "low < high"),
    ({"a": (2, 1)}, "low < high"),
    ({"a": (0, float("inf"))}, "finite"),
    ({"a": (0, float("nan"))}, "finite"),
    ({"a": ("x", 1)}, "two numbers"),
    ({"a": (0, 1, 2)}, "two numbers"),
    ({"a": (False, True)}, "numbers"),
    ({"": (0, 1)}, "non-empty strings"),
])
def test_bounds_are_validated(bounds, words):
    with pytest.raises(NbmergeError, match=words):
        Space(bounds)


def test_tied_names_are_validated():
    with pytest.raises(NbmergeError, match="not a parameter"):
        Space({"a": (0, 1)}, tied=["z"])
    with pytest.raises(NbmergeError, match="share their bounds"):
        Space({"a": (0, 1), "b": (0, 2)}, tied=["a", "b"])
    with pytest.raises(NbmergeError, match="new non-empty name"):
        Space({"a": (0, 1), "b": (0, 1), "s": (0, 1)}, tied=["a", "b"], tied_name="s")
    space = Space({"a": (0, 1), "s": (2, 3), "b": (0, 1)}, tied=["a", "b"], tied_name="rho")
    assert space.reduced().names == ["rho", "s"]
    assert space.expand({"rho": 0.5, "s": 2.5}) == {"a": 0.5, "s": 2.5, "b": 0.5}
    assert space.reduce({"a": 0.5, "s": 2.5, "b": 0.5}) == {"rho": 0.5, "s": 2.5}
    with pytest.raises(NbmergeError, match="differ"):
        space.reduce({"a": 0.5, "s": 2.5, "b": 0.6})


def test_search_arguments_are_validated(tmp_path):
    for kwargs, words in [({"strategy": "tpe"}, "strategy"), ({"budget": 0}, "budget"), ({"seed": -1}, "seed"),
                          ({"n_initial": 30}, "n_initial"), ({"initial_design": "x"}, "initial_design"),
                          ({"strategy": "shared"}, "tied"), ({"strategy": "grid", "budget": 7}, "grid has")]:
        with pytest.raises(NbmergeError, match=words):
            search(quadratic, box(), progress=False, **kwargs)
    with pytest.raises(NbmergeError, match="finite number"):
        search(lambda p: float("nan"), box(), strategy="random", budget=2, progress=False)
    with pytest.raises(NbmergeError, match="without 'value'"):
        search(lambda p: {"accuracy": 1.0}, box(), strategy="random", budget=2, progress=False)


# -- finding optima -----------------------------------------------------------------------------------------------

def test_bayes_finds_the_optimum_of_a_quadratic_within_20_trials():
    result = search(quadratic, box(), seed=0, progress=False)
    assert len(result.trials) == 20 and result.strategy == "bayes"
    assert result.best_value > -1e-3
    assert result.best_params["a"] == pytest.approx(-1.0, abs=0.05)
    assert result.best_params["b"] == pytest.approx(1.2, abs=0.03)
    assert result.convergence == list(np.maximum.accumulate([t.value for t in result.trials]))
    assert result.convergence[-1] == result.best_value
    # the first five points are the space-filling design, spread over the box
    first = np.array([[t.params["a"], t.params["b"]] for t in result.trials[:5]])
    assert np.ptp(first[:, 0]) > 3 and np.ptp(first[:, 1]) > 0.5


def test_random_search_finds_the_optimum_with_enough_trials():
    result = search(quadratic, box(), strategy="random", budget=400, seed=0, progress=False)
    assert result.best_value > -0.02
    values = np.array([[t.params["a"], t.params["b"]] for t in result.trials])
    assert values[:, 0].min() >= -4 and values[:, 0].max() <= 2 and values[:, 1].min() >= 0.5


def test_grid_enumerates_exactly_the_product():
    result = search(quadratic, box(), strategy="grid", grid_sizes={"a": 3, "b": 4}, progress=False)
    expected = [{"a": a, "b": b} for a, b in itertools.product(np.linspace(-4, 2, 3), np.linspace(0.5, 1.5, 4))]
    assert [t.params for t in result.trials] == expected
    assert grid_points(box(), 1) == [{"a": -1.0, "b": 1.0}]
    with pytest.raises(NbmergeError, match="positive integer"):
        grid_points(box(), {"a": 0, "b": 2})
    with pytest.raises(NbmergeError, match="missing"):
        grid_points(box(), {"a": 3})


def tied_box():
    return Space({"x": (-4, 2), "y": (-4, 2), "s": (0.5, 1.5)}, tied=["x", "y"], tied_name="rho")


def tied_quadratic(params):
    return -((params["x"] + 1) ** 2 + (params["y"] + 1) ** 2 + (params["s"] - 1.2) ** 2)


def test_grid_on_a_tied_space_is_the_225_point_baseline():
    result = search(tied_quadratic, tied_box(), strategy="grid", progress=False)
    assert len(result.trials) == 225
    assert all(t.params["x"] == t.params["y"] for t in result.trials)
    pairs = {(t.params["x"], t.params["s"]) for t in result.trials}
    assert pairs == set(itertools.product(np.linspace(-4, 2, 15), np.linspace(0.5, 1.5, 15)))


def test_shared_searches_one_value_for_every_tied_name():
    result = search(tied_quadratic, tied_box(), strategy="shared", seed=0, progress=False)
    assert len(result.trials) == 20 and all(t.params["x"] == t.params["y"] for t in result.trials)
    assert set(result.trials[0].params) == {"x", "y", "s"}
    assert result.best_params["x"] == pytest.approx(-1.0, abs=0.05)
    assert result.best_params["s"] == pytest.approx(1.2, abs=0.05)


# -- determinism, the log, resuming ---------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["bayes", "random"])
def test_same_seed_same_trials(strategy):
    kwargs = {"strategy": strategy, "budget": 8, "progress": False}
    first = search(quadratic, box(), seed=3, **kwargs)
    _same_trials(first, search(quadratic, box(), seed=3, **kwargs))
    other = search(quadratic, box(), seed=4, **kwargs)
    assert [t.params for t in other.trials] != [t.params for t in first.trials]


@pytest.mark.parametrize("strategy, k", [("bayes", 2), ("bayes", 4), ("random", 3), ("grid", 5), ("shared", 4)])
def test_resume_after_an_interruption_equals_the_uninterrupted_run(tmp_path, strategy, k):
    space, objective = (tied_box(), tied_quadratic) if strategy in ("grid", "shared") else (box(), quadratic)
    kwargs = {"strategy": strategy, "seed": 1, "progress": False}
    if strategy == "grid":
        kwargs["grid_sizes"] = 3
    else:  # bayes/shared: 3 design points, then 3 GP proposals (k = 4 interrupts among them)
        kwargs.update(budget=6, **({"n_initial": 3} if strategy != "random" else {}))
    clean = search(objective, space, log_path=tmp_path / "clean.jsonl", **kwargs)
    log = tmp_path / "resumed.jsonl"
    with pytest.raises(Interrupt):
        search(interrupted_after(k, objective), space, log_path=log, **kwargs)
    assert len(log.read_text().splitlines()) == 1 + k
    resumed_objective, calls = counting(objective)
    resumed = search(resumed_objective, space, log_path=log, **kwargs)
    assert len(calls) == len(clean.trials) - k
    assert resumed.replayed == k and resumed.replay_mismatches == 0
    _same_trials(resumed, clean)
    assert resumed.best_params == clean.best_params and resumed.convergence == clean.convergence
    assert len(log.read_text().splitlines()) == 1 + len(clean.trials)
    # a complete log gives its result without evaluating anything
    again_objective, calls = counting(objective)
    again = search(again_objective, space, log_path=log, **kwargs)
    assert calls == [] and again.replayed == len(clean.trials)
    _same_trials(again, clean)


def test_log_lines_are_flushed_and_synced_one_per_trial(tmp_path, monkeypatch):
    import nbmerge.tune.search as module

    synced = []
    real = module.os.fsync
    monkeypatch.setattr(module.os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    log = tmp_path / "log.jsonl"
    result = search(lambda p: {"value": quadratic(p), "extra": np.float32(2.5), "bad": float("inf")}, box(),
                    strategy="random", budget=4, seed=0, log_path=log, progress=False)
    assert len(synced) >= 4  # one per trial line (the header goes through an atomic, fsynced rename)
    header, trials = read_log(log)
    assert header["settings"]["strategy"] == "random" and header["settings"]["budget"] == 4
    assert header["settings"]["seed"] == 0 and len(header["hash"]) == 16
    assert header["settings"]["space"]["bounds"] == {"a": [-4.0, 2.0], "b": [0.5, 1.5]}
    assert [t.params for t in trials] == [t.params for t in result.trials]
    lines = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert lines[0]["trial"] == 0 and lines[0]["metrics"] == {"extra": 2.5, "bad": None}
    assert {"trial", "params", "value", "seconds", "search_seconds", "metrics"} <= set(lines[0])
    assert result.trials[0].metrics == {"extra": 2.5, "bad": None}  # the live trial equals its replay


@pytest.mark.parametrize("change, words", [({"seed": 1}, "seed"),  # a larger budget extends (tested below)
                                           ({"strategy": "bayes"}, "strategy"),
                                           ({"settings": {"anchor": "ties"}}, "anchor"),
                                           ({"space": Space({"a": (-4, 2), "b": (0.5, 2.0)})}, "bounds.b")])
def test_changed_settings_raise_and_leave_the_log_untouched(tmp_path, change, words):
    log = tmp_path / "log.jsonl"
    kwargs = {"strategy": "random", "budget": 4, "seed": 0, "settings": {"anchor": "task_arithmetic"},
              "space": box(), "progress": False}
    search(quadratic, log_path=log, **kwargs)
    before = log.read_bytes()
    objective, calls = counting(quadratic)
    with pytest.raises(NbmergeError, match=f"different settings.*{words}"):
        search(objective, log_path=log, **{**kwargs, **change})
    assert log.read_bytes() == before and calls == []


def test_a_truncated_last_line_is_dropped_and_the_trial_rerun(tmp_path):
    kwargs = {"strategy": "bayes", "budget": 7, "n_initial": 3, "seed": 2, "progress": False}
    clean = search(quadratic, box(), **kwargs)
    log = tmp_path / "log.jsonl"
    with pytest.raises(Interrupt):
        search(interrupted_after(5, quadratic), box(), log_path=log, **kwargs)
    text = log.read_bytes()
    log.write_bytes(text[:-25])  # a crash in the middle of writing trial 4
    objective, calls = counting(quadratic)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = search(objective, box(), log_path=log, **kwargs)
    assert len(calls) == 3 and resumed.replayed == 4
    _same_trials(resumed, clean)
    lines = log.read_text().splitlines()
    assert len(lines) == 8 and all(json.loads(line) for line in lines)


def test_a_corrupt_log_or_a_foreign_file_is_refused_untouched(tmp_path):
    log = tmp_path / "log.jsonl"
    search(quadratic, box(), strategy="random", budget=4, log_path=log, progress=False)
    lines = log.read_text().splitlines(keepends=True)
    lines[2] = '{"trial": 1, "par\n'
    log.write_text("".join(lines))
    with pytest.raises(NbmergeError, match="line 3: not valid JSON"):
        search(quadratic, box(), strategy="random", budget=4, log_path=log, progress=False)
    foreign = tmp_path / "notes.txt"
    foreign.write_text("my notes\n")
    with pytest.raises(NbmergeError, match="not an nbmerge search log"):
        search(quadratic, box(), strategy="random", budget=2, log_path=foreign, progress=False)
    assert foreign.read_text() == "my notes\n"


# -- BMM's outer loop on the micro zoo --------------------------------------------------------------------------------

def test_group_space_ties_the_four_module_groups():
    from nbmerge.tune.bmm import RHO_BOUNDS, SCALE_BOUNDS, group_space

    keys = [f"visual.transformer.resblocks.{i}.{name}" for i in range(4)
            for name in ("attn.in_proj_weight", "attn.out_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight",
                         "ln_1.weight")] + ["visual.proj"]
    space = group_space(keys)
    assert space.names == ["attn_in", "attn_out", "mlp_in", "mlp_out", "scale"]
    assert space.bounds["attn_in"] == RHO_BOUNDS and space.bounds["scale"] == SCALE_BOUNDS
    assert space.reduced().names == ["log10_rho", "scale"]
    deep = group_space(keys, depth_bins=2, with_scale=False, rho_bounds=(-2, 1))
    assert deep.names == ["attn_in:0", "attn_in:1", "attn_out:0", "attn_out:1", "mlp_in:0", "mlp_in:1",
                          "mlp_out:0", "mlp_out:1"]
    assert deep.bounds["mlp_out:1"] == (-2.0, 1.0)
    with pytest.raises(MethodError, match="no.*known linear module|none of the keys"):
        group_space(["visual.proj"])


@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    return load_zoo("micro", micro_cache)


def test_objective_refuses_the_test_split(micro):
    from nbmerge.tune.bmm import bmm_objective

    with pytest.raises(NbmergeError, match="test split"):
        bmm_objective(None, micro.evaluator(), ["attn_in"], split="test")


@pytest.mark.parametrize("grams", ["task_vector", "data"])
def test_tune_bmm_end_to_end_is_honest(micro, tmp_path, grams):
    from nbmerge import merge
    from nbmerge.pools.zoo import expert_grams, load_models
    from nbmerge.engine.io import load_state_dict
    from nbmerge.engine.modules import group_module_params, module_groups
    from nbmerge.tune.bmm import merge_params, time_trial, tune_bmm
    from nbmerge.engine.walker import WalkOptions

    log, out = tmp_path / "bmm.jsonl", tmp_path / "bmm.safetensors"
    result = tune_bmm(micro, "task_arithmetic", anchor_params={"scale": 0.3}, grams=grams, budget=4, seed=0,
                      log_path=log, gram_examples=64, out=out, progress=False)
    assert len(result.search.trials) == 4 and result.search.strategy == "bayes"
    assert set(result.lambdas) == {"attn_in", "attn_out", "mlp_in", "mlp_out"}
    evaluator = micro.evaluator()
    groups = list(result.lambdas)
    # honesty: every logged value is the validation accuracy of the logged parameters, re-merged from scratch
    _, logged = read_log(log)
    for trial in logged:
        state = merge_params(result.build_solver(), trial.params, groups)
        assert evaluator.evaluate(state, "val")["mean"]["accuracy"] == trial.value
        assert trial.metrics["merge_seconds"] > 0 and trial.metrics["eval_seconds"] > 0
    assert result.val_accuracy == result.search.best_value
    # ... and the registered one-shot `bmm` (walker, Cholesky solve) agrees at the best point up to round-off
    base, experts = load_models(micro)
    best = result.search.best_params
    walk = WalkOptions(module_params=group_module_params(module_groups(base), best))
    kwargs = {"grams": expert_grams(micro, 64, 0)} if grams == "data" else {}
    one_shot = merge("bmm", base, experts, {"anchor": "task_arithmetic", "anchor_params": {"scale": 0.3},
                                            "gram": grams, "scale": best["scale"]}, walk=walk, **kwargs)
    one_shot_val = evaluator.evaluate(one_shot, "val")["mean"]["accuracy"]
    assert one_shot_val == pytest.approx(result.val_accuracy, abs=3 / 600)
    # the written checkpoint is an ordinary safetensors file that evaluates to the reported test accuracy
    reloaded = load_state_dict(out)
    assert evaluator.evaluate(reloaded, "test")["mean"]["accuracy"] == result.test_accuracy
    summary = result.summary()
    assert summary["gram"] == grams and summary["anchor_test_accuracy"] > 0 and summary["out"] == str(out)
    assert {"merge_s_median", "eval_s_median", "optimiser_s_median"} <= set(summary["timing"])
    json.dumps(summary)
    timed = time_trial(result.build_solver(), evaluator, best, groups, repeats=1)
    assert timed["merge_seconds"] > 0 and timed["eval_seconds"] > 0
    if grams == "task_vector":
        # the same log resumes (here: is complete) and a different anchor is refused
        again = tune_bmm(micro, "task_arithmetic", anchor_params={"scale": 0.3}, grams=grams, budget=4,
                         log_path=log, progress=False)
        assert again.search.replayed == 4 and again.search.best_params == best
        with pytest.raises(NbmergeError, match="different settings.*anchor_params.scale"):
            tune_bmm(micro, "task_arithmetic", anchor_params={"scale": 0.5}, grams=grams, budget=4,
                     log_path=log, progress=False)


def test_cli_bmm_search(micro_cache, tmp_path, capsys):
    from nbmerge.cli import main

    log, out = tmp_path / "cli.jsonl", tmp_path / "cli.safetensors"
    args = ["bmm-search", "--suite", "micro", "--cache", str(micro_cache), "--anchor", "task_arithmetic",
            "--anchor-param", "scale=0.3", "--gram", "task_vector", "--budget", "3", "--log", str(log)]
    assert main(args + ["--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["strategy"] == "bayes" and summary["budget"] == 3 and out.exists()
    assert set(summary["best_params"]) == {"attn_in", "attn_out", "mlp_in", "mlp_out", "scale"}
    assert 0 <= summary["val_accuracy"] <= 1 and 0 <= summary["test_accuracy"] <= 1
    assert main(args + ["--quiet"]) == 0  # resumes the complete log: nothing is evaluated again
    text = capsys.readouterr().out
    assert "3 from the log" in text and "val accuracy" in text and "test accuracy" in text
    assert main(["bmm-search", "--suite", "micro", "--cache", str(micro_cache), "--anchor", "task_arithmetic",
                 "--gram", "task_vector", "--strategy", "grid", "--grid-size", "2", "--no-scale", "--quiet"]) == 0
    assert "grid" in capsys.readouterr().out
    assert main(args[:-2] + ["--anchor-param", "scale"]) == 2
    assert "--anchor-param expects KEY=VALUE" in capsys.readouterr().err


@pytest.mark.parametrize("strategy", ["bayes", "random"])
def test_a_finished_search_extends_to_a_larger_budget(tmp_path, strategy):
    """A finished search rerun with a larger budget continues from its log and equals a run with that budget."""
    kwargs = {"strategy": strategy, "seed": 3, "progress": False,
              **({"n_initial": 3} if strategy == "bayes" else {})}
    log = tmp_path / "log.jsonl"
    search(quadratic, box(), budget=4, log_path=log, **kwargs)
    objective, calls = counting(quadratic)
    extended = search(objective, box(), budget=7, log_path=log, **kwargs)
    assert len(calls) == 3 and extended.replayed == 4
    _same_trials(extended, search(quadratic, box(), budget=7, **kwargs))
    with pytest.raises(NbmergeError, match="holds 7 trials, more than the budget 5"):
        search(quadratic, box(), budget=5, log_path=log, **kwargs)
