"""Searches that scale out: batch proposals, executors, retries, failed trials, resuming with another number of
workers, the log's lock and the trial cache under concurrent workers. The core logic runs on a fake in-process
executor (no Ray); the tests marked ``ray`` start a local Ray cluster and are skipped without it."""

import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from nbmerge.errors import NbmergeError, NbmergeWarning
from nbmerge.tune.search import InProcess, Outcome, Space, _Lock, read_log, search

GOLDEN = Path(__file__).parent / "data" / "search_sequential_golden.json"


def objective(p):
    return -((p["x"] + 1) ** 2 + (p["y"] + 1) ** 2 + (p["s"] - 1.2) ** 2) + 0.1 * math.sin(3 * p["x"])


def tied():
    return Space({"x": (-4, 2), "y": (-4, 2), "s": (0.5, 1.5)}, tied=["x", "y"], tied_name="rho")


class Crash(RuntimeError):
    """The driver dying mid-search."""


class FakeExecutor:
    """``workers`` trials at once, in this process: each ``next()`` finishes the most recently submitted trial
    first (so results arrive out of proposal order). ``fail``: {(trial, attempt): error} the worker reports;
    ``crash_after``: the driver dies after that many finished trials."""

    def __init__(self, objective, workers, fail=None, crash_after=None):
        self.objective, self.workers = objective, workers
        self.fail, self.crash_after = dict(fail or {}), crash_after
        self.pending, self.attempts, self.finished, self.submitted = [], {}, 0, []

    def submit(self, key, params):
        self.attempts[key] = self.attempts.get(key, 0) + 1
        self.pending.append((key, params))
        self.submitted.append(key)

    def next(self):
        if self.crash_after is not None and self.finished >= self.crash_after:
            raise Crash(f"driver killed after {self.finished} trials")
        key, params = self.pending.pop()  # the latest first: out of order
        self.finished += 1
        error = self.fail.get((key, self.attempts[key]))
        if error is not None:
            return key, Outcome(error=error)
        return key, Outcome(self.objective(dict(params)), 0.001)

    def close(self):
        pass


def trials_of(result):
    return [(t.params, None if t.failed else t.value, t.error) for t in result.trials]


# -- workers=1 is today's search, bit for bit -------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["bayes", "shared", "random", "grid"])
def test_workers_1_reproduces_the_sequential_search(strategy, tmp_path):
    """The golden file was written by the search before batches existed (same objective, space and seed)."""
    golden = json.loads(GOLDEN.read_text())[strategy]
    log = tmp_path / "log.jsonl"
    for kwargs in ({}, {"workers": 1}, {"executor": InProcess(objective)}):
        result = search(objective, tied(), strategy=strategy, seed=2, progress=False, settings={"case": "golden"},
                        log_path=log if not kwargs else None, **golden["kwargs"], **kwargs)
        assert result.settings == golden["settings"] and result.settings_hash == golden["hash"]
        design = golden["kwargs"].get("n_initial", len(golden["params"])) if strategy in ("bayes", "shared") \
            else len(golden["params"])
        got = [t.params for t in result.trials]
        assert got[:design] == golden["params"][:design]  # seeded draws: exact on any machine
        # GP proposals: up to the BLAS and the scikit-learn/SciPy release (1.7e-6 apart with scikit-learn 1.9.1,
        # SciPy 1.17.1 and NumPy 2.4.6 against the golden file's)
        for mine, theirs in zip(got[design:], golden["params"][design:]):
            assert mine == pytest.approx(theirs, rel=1e-5, abs=1e-8)
        assert [t.value for t in result.trials] == pytest.approx(golden["values"], rel=1e-5)
    header, _ = read_log(log)
    assert "batch" not in header["settings"]
    lines = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert all(set(line) == {"trial", "params", "value", "seconds", "search_seconds", "metrics", "check"}
               for line in lines)


# -- batch proposals ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["bayes", "shared"])
def test_bayes_asks_k_points_at_a_time_by_constant_liar(strategy, tmp_path):
    kwargs = {"strategy": strategy, "budget": 9, "n_initial": 3, "seed": 1, "progress": False}
    log = tmp_path / "log.jsonl"
    fake = FakeExecutor(objective, workers=3)
    batched = search(objective, tied(), log_path=log, executor=fake, **kwargs)
    assert batched.settings["batch"] == 3 and "constant liar" in batched.settings["batch_strategy"]
    assert read_log(log)[0]["settings"]["batch"] == 3
    # three trials submitted together per batch, finished out of order, logged in proposal order
    assert fake.submitted == list(range(9))
    assert [t.index for t in read_log(log)[1]] == list(range(9))
    # the same proposals as a batch of 3 evaluated one at a time in process
    _same(batched, search(objective, tied(), batch=3, **kwargs))
    sequential = search(objective, tied(), **kwargs)
    assert "batch" not in sequential.settings
    # the space-filling design does not depend on the batch; the GP's proposals do (the lies)
    assert [t.params for t in batched.trials[:3]] == [t.params for t in sequential.trials[:3]]
    assert [t.params for t in batched.trials[3:]] != [t.params for t in sequential.trials[3:]]
    assert batched.best_value > -0.5  # still optimises: the optimum is 0 minus the sine's ripple


@pytest.mark.parametrize("strategy", ["random", "grid"])
def test_random_and_grid_hand_out_k_points_without_changing_them(strategy, tmp_path):
    kwargs = {"strategy": strategy, "seed": 5, "progress": False,
              **({"grid_sizes": 3} if strategy == "grid" else {"budget": 7})}
    one = search(objective, tied(), log_path=tmp_path / "one.jsonl", **kwargs)
    fake = FakeExecutor(objective, workers=4)
    four = search(objective, tied(), log_path=tmp_path / "four.jsonl", executor=fake, **kwargs)
    _same(one, four)
    assert one.settings == four.settings and one.settings_hash == four.settings_hash
    assert max(fake.attempts.values()) == 1


def _same(left, right):
    assert trials_of(left) == trials_of(right)


def test_batch_and_workers_are_validated():
    for kwargs, words in [({"batch": 0}, "batch"), ({"workers": 0}, "workers"), ({"workers": True}, "workers")]:
        with pytest.raises(NbmergeError, match=words):
            search(objective, tied(), strategy="random", budget=2, progress=False, **kwargs)


def test_workers_without_ray_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(NbmergeError, match=r"nbmerge\[distributed\]"):
        search(objective, tied(), strategy="random", budget=2, workers=2, progress=False)


# -- retries and failed trials -------------------------------------------------------------------------------------

def test_a_failed_trial_is_retried_once_then_logged_as_failed(tmp_path):
    kwargs = {"strategy": "bayes", "budget": 8, "n_initial": 3, "seed": 0, "progress": False}
    log = tmp_path / "log.jsonl"
    # trial 1 fails once (retried, succeeds), trial 4 fails twice (logged failed), the search goes on
    fake = FakeExecutor(objective, workers=2, fail={(1, 1): "worker died", (4, 1): "OOM", (4, 2): "OOM again"})
    with pytest.warns(NbmergeWarning, match="trial 4 failed"):
        result = search(objective, tied(), log_path=log, executor=fake, **kwargs)
    assert fake.attempts[1] == 2 and fake.attempts[4] == 2 and fake.attempts[0] == 1
    assert len(result.trials) == 8 and [t.index for t in result.failed] == [4]
    failed = result.trials[4]
    assert math.isnan(failed.value) and "OOM again" in failed.error and "failed 2 times" in failed.error
    assert result.best.index != 4 and math.isfinite(result.best_value)
    assert not math.isnan(result.convergence[4]) and result.convergence[4] == result.convergence[3]
    line = json.loads(log.read_text().splitlines()[5])
    assert line["trial"] == 4 and line["value"] is None and "OOM again" in line["error"]
    assert json.dumps(result.to_dict())  # the summary stays JSON
    # the failed trial is part of the log: a rerun replays it (not evaluated again) and tells the optimiser the same
    rerun = FakeExecutor(objective, workers=2)
    again = search(objective, tied(), log_path=log, executor=rerun, **kwargs)
    assert rerun.submitted == [] and again.replayed == 8 and again.replay_mismatches == 0
    _same(again, result)
    # ... and a run that crashes inside the same batch after the failure resumes to the same search
    crashed = tmp_path / "crashed.jsonl"
    with pytest.raises(Crash):
        search(objective, tied(), log_path=crashed, **kwargs,
               executor=FakeExecutor(objective, 2, fail={(1, 1): "x", (4, 1): "OOM", (4, 2): "OOM again"},
                                     crash_after=6))
    assert len(read_log(crashed)[1]) == 4  # trial 5 finished, but waits for trial 4: the crash loses both
    with pytest.warns(NbmergeWarning, match="trial 4 failed"):
        resumed = search(objective, tied(), log_path=crashed, **kwargs,
                         executor=FakeExecutor(objective, 2, fail={(4, 1): "OOM", (4, 2): "OOM again"}))
    _same(resumed, result)


def test_a_search_whose_every_trial_fails_stops_with_the_error(tmp_path):
    fail = {(k, a): "ImportError: no module named foo" for k in range(4) for a in (1, 2)}
    log = tmp_path / "log.jsonl"
    with pytest.raises(NbmergeError, match="every trial so far failed.*no module named foo"), \
            pytest.warns(NbmergeWarning):
        search(objective, tied(), strategy="bayes", budget=6, n_initial=3, log_path=log, progress=False,
               executor=FakeExecutor(objective, 2, fail=fail))
    assert len(read_log(log)[1]) == 2 and all(t.failed for t in read_log(log)[1])  # nothing lost


def test_in_process_errors_still_stop_the_search(tmp_path):
    def broken(params):
        raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError):
        search(broken, tied(), strategy="random", budget=3, progress=False, log_path=tmp_path / "log.jsonl")


# -- resuming with another number of workers ----------------------------------------------------------------------

@pytest.mark.parametrize("crash_after", [3, 6])
def test_an_interrupted_batched_search_resumes_with_any_workers_to_the_same_result(tmp_path, crash_after):
    kwargs = {"strategy": "bayes", "budget": 7, "n_initial": 3, "seed": 3, "progress": False}
    clean = search(objective, tied(), batch=2, **kwargs)
    for resume_with in ({"executor": FakeExecutor(objective, 3)}, {"workers": 1}, {}):
        log = tmp_path / f"log-{len(resume_with)}-{id(resume_with)}.jsonl"
        with pytest.raises(Crash):
            search(objective, tied(), log_path=log, executor=FakeExecutor(objective, 2, crash_after=crash_after),
                   **kwargs)
        logged = len(read_log(log)[1])
        assert logged <= crash_after  # out-of-order results wait for the earlier ones: never a gap
        resumed = search(objective, tied(), log_path=log, **kwargs, **resume_with)
        assert resumed.settings["batch"] == 2  # the log's batch, whatever the workers now
        assert resumed.replayed == logged and resumed.replay_mismatches == 0
        _same(resumed, clean)
        assert resumed.best_params == clean.best_params
    with pytest.raises(NbmergeError, match="different settings.*batch"):
        search(objective, tied(), log_path=log, batch=3, **kwargs)


def test_a_batched_search_extends_to_a_larger_budget(tmp_path):
    kwargs = {"strategy": "shared", "n_initial": 3, "seed": 4, "progress": False, "batch": 2}
    log = tmp_path / "log.jsonl"
    search(objective, tied(), budget=5, log_path=log, **kwargs)
    extended = search(objective, tied(), budget=8, log_path=log, **kwargs)
    assert extended.replayed == 5 and extended.replay_mismatches == 0
    _same(extended, search(objective, tied(), budget=8, **kwargs))


# -- the lock: one driver per log ---------------------------------------------------------------------------------

def test_a_second_driver_on_the_same_log_is_refused(tmp_path):
    log = tmp_path / "log.jsonl"
    search(objective, tied(), strategy="random", budget=2, log_path=log, progress=False)
    before = log.read_bytes()
    holder = _Lock(log)  # another search holding the log (flock: per open file, so this process counts too)
    try:
        with pytest.raises(NbmergeError, match=r"in use by another search \(pid \d+ on .* since"):
            search(objective, tied(), strategy="random", budget=4, log_path=log, progress=False)
        assert log.read_bytes() == before
    finally:
        holder.release()
    assert (tmp_path / ".log.jsonl.lock").read_text() == ""  # released: no stale holder named
    assert len(search(objective, tied(), strategy="random", budget=4, log_path=log, progress=False).trials) == 4


def test_the_lock_holds_against_another_process_and_dies_with_it(tmp_path):
    log = tmp_path / "log.jsonl"
    code = ("import fcntl, sys, time; f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX); "
            "f.write('pid of the other driver'); f.flush(); print('held', flush=True); time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / ".log.jsonl.lock")],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(NbmergeError, match="pid of the other driver"):
            search(objective, tied(), strategy="random", budget=2, log_path=log, progress=False)
        assert not log.exists()  # refused before anything was written
    finally:
        other.kill()  # a killed driver's lock goes with it: the log can be resumed at once
        other.wait()
    assert len(search(objective, tied(), strategy="random", budget=2, log_path=log, progress=False).trials) == 2


# -- the trial cache under concurrent workers -----------------------------------------------------------------------

class _Zoo:
    root = Path("fake-suite")
    manifest = {"checksums": {"base": "0"}}


class _Evaluator:
    task_names = ["a", "b"]

    def subset_spec(self, split):
        return None

    def load(self, state):
        self.state = state

    def logits(self, task, split):
        import torch

        return torch.full((3, 2), float(self.state["w"])), torch.tensor([0, 1, 1])


def test_the_trial_cache_computes_a_key_once_under_concurrent_workers(tmp_path):
    from nbmerge.evaluate.trialcache import TrialCache

    calls = []

    def slow_state():
        calls.append(threading.get_ident())
        time.sleep(0.3)  # long enough for the other worker to arrive while this one computes
        return {"w": 1.5}

    caches = [TrialCache(_Zoo(), _Evaluator(), tmp_path) for _ in range(3)]  # one per worker, one shared folder
    results = [None] * 3

    def worker(k):
        results[k] = caches[k].predictions({"method": "m", "scale": 1.0}, "val", slow_state)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1  # computed once; the others waited for it and read it
    assert sum(c.misses for c in caches) == 1 and sum(c.hits for c in caches) == 2
    for preds in results:
        np.testing.assert_array_equal(preds.logits["a"], np.full((3, 2), 1.5, dtype=np.float32))
    entries = [p for p in (tmp_path / caches[0].root.name).iterdir() if p.suffix == ".npz"]
    assert len(entries) == 1 and not list((tmp_path / caches[0].root.name).glob(".*.tmp"))


# -- on Ray ------------------------------------------------------------------------------------------------------

def _crash_once(marker: str):
    """An objective whose worker process dies on the first call of the search (a crash, not an exception)."""
    def run(params):
        import os

        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return objective(params)

    return run


@pytest.mark.ray
def test_ray_runs_the_batches_and_replaces_a_crashed_worker(tmp_path):
    ray = pytest.importorskip("ray")
    from nbmerge.tune.distributed import RayExecutor

    # this test module is not importable on Ray's workers: ship its functions by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

    kwargs = {"strategy": "bayes", "budget": 6, "n_initial": 3, "seed": 0, "progress": False}
    log = tmp_path / "log.jsonl"
    executor = RayExecutor(_crash_once(str(tmp_path / "crashed")), workers=2, gpus_per_worker=0)
    try:
        result = search(None, tied(), log_path=log, executor=executor, **kwargs)
        hosts = set(executor.hosts)
    finally:
        executor.close()
    assert (tmp_path / "crashed").exists()  # some worker did die, and its trial was retried on a fresh one
    assert not result.failed and len(hosts) >= 2  # trials ran in more than one worker process
    _same(result, search(objective, tied(), batch=2, **kwargs))


# -- the CLI and the benchmark's arithmetic ---------------------------------------------------------------------------

def test_cli_workers_are_checked_before_anything_loads(tmp_path, capsys, monkeypatch):
    from nbmerge.cli import main

    args = ["bmm-search", "--suite", "micro", "--cache", str(tmp_path), "--anchor", "task_arithmetic",
            "--device", "cpu"]
    assert main(args + ["--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(args + ["--workers", "2"]) == 2  # the zoo under tmp_path does not exist: never reached
    err = capsys.readouterr().err
    assert "nbmerge[distributed]" in err and "not built" not in err


def test_the_scaling_simulation_is_exact_where_it_can_be():
    from bench.distributed import _CENTRE, WORKERS, simulate, synthetic

    assert synthetic(_CENTRE) == 1.0 and synthetic({**_CENTRE, "scale": 0.5}) < 1.0
    # equal trial times, no overhead, a free optimiser: k workers are exactly k times faster on a multiple of k
    rows = simulate([3.0], cv=0.0, overhead=0.0, optimiser={1: 0.0, 2: 0.0, 4: 0.0}, budgets=(64,), draws=3)
    assert [r["workers"] for r in rows] == list(WORKERS)
    assert [r["speedup"] for r in rows] == pytest.approx(list(WORKERS)) and rows[0]["wall_s"] == pytest.approx(192)
    # a batch waits for its slowest trial: with spread, efficiency falls below 1
    spread = simulate([3.0], cv=0.5, overhead=0.0, optimiser={1: 0.0, 2: 0.0, 4: 0.0}, budgets=(64,), draws=50)
    assert all(r["efficiency"] < 1 for r in spread if r["workers"] > 1)


def test_idle_workers_are_said(tmp_path):
    with pytest.warns(NbmergeWarning, match="2 workers but batches of 1 point.*only 1 of them"):
        search(objective, tied(), strategy="bayes", budget=3, n_initial=3, batch=1, progress=False,
               executor=FakeExecutor(objective, 2))


@pytest.mark.ray
def test_cli_bmm_search_on_two_ray_workers_resumes_with_one(micro_cache, tmp_path, capsys):
    """The embedded zoo's search on a local Ray cluster (each worker rebuilds tune_bmm's objective from its
    recipe); its log, resumed in process and extended, ends where an uninterrupted batch-2 search does."""
    pytest.importorskip("ray")
    from nbmerge.cli import main

    log = tmp_path / "w2.jsonl"
    args = ["bmm-search", "--suite", "micro", "--cache", str(micro_cache), "--anchor", "task_arithmetic",
            "--anchor-param", "scale=0.3", "--gram", "task_vector", "--device", "cpu", "--json"]
    assert main(args + ["--budget", "5", "--workers", "2", "--log", str(log)]) == 0
    first = json.loads(capsys.readouterr().out)
    header, trials = read_log(log)
    assert header["settings"]["batch"] == 2 and len(trials) == 5 and first["replayed_trials"] == 0
    assert main(args + ["--budget", "7", "--workers", "1", "--log", str(log)]) == 0  # resumes: batch 2 kept
    resumed = json.loads(capsys.readouterr().out)
    assert main(args + ["--budget", "7", "--batch", "2"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert resumed["replayed_trials"] == 5 and resumed["settings_hash"] == clean["settings_hash"]
    for key in ("best_params", "val_accuracy", "test_accuracy", "convergence"):
        assert resumed[key] == clean[key]
