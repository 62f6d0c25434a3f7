"""Threads follow the idle cores (nbmerge/threads.py): a busy neighbour costs one core, not the run's speed."""

import subprocess
import sys
import time

import pytest
import torch

from nbmerge import threads
from nbmerge.errors import NbmergeError


def fake_stat(monkeypatch, idle_fraction: float, online: int = 2):
    """/proc/stat that advances by 100 jiffies per CPU between two reads, ``idle_fraction`` of them idle."""
    reads = iter([(0, 0), (int(100 * online * idle_fraction), 100 * online)])
    monkeypatch.setattr(threads, "_cpu_times", lambda: next(reads))
    monkeypatch.setattr(threads.os, "cpu_count", lambda: online)
    monkeypatch.setattr(threads, "cores", lambda: online)
    monkeypatch.setattr(threads.time, "sleep", lambda s: None)


@pytest.mark.parametrize("idle, expected", [(1.0, 2), (0.5, 1), (0.3, 1), (0.0, 1), (0.8, 2)])
def test_the_thread_count_is_the_idle_cores(monkeypatch, idle, expected):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("NBMERGE_THREADS", "auto")
    fake_stat(monkeypatch, idle)
    assert threads.chosen_threads() == expected


def test_the_users_choice_wins(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert threads.chosen_threads() is None
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setenv("NBMERGE_THREADS", "5")
    assert threads.chosen_threads() == 5
    monkeypatch.setenv("NBMERGE_THREADS", "many")
    with pytest.raises(NbmergeError, match="NBMERGE_THREADS"):
        threads.chosen_threads()


def test_adapt_sets_torch_and_says_why(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("NBMERGE_THREADS", "auto")
    fake_stat(monkeypatch, 0.5)
    before = torch.get_num_threads()
    lines = []
    try:
        assert threads.adapt_threads(log=lines.append) == 1
        assert torch.get_num_threads() == 1
        assert lines and "1 of 2 cores are busy" in lines[0]
    finally:
        torch.set_num_threads(before)


@pytest.mark.skipif(not hasattr(threads.os, "sched_getaffinity"), reason="needs Linux's /proc")
def test_a_real_busy_process_is_seen():
    """One busy loop pinned beside us takes one core's worth of idle time away (on this machine's real counters)."""
    before = threads.idle_cores(0.3)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        during = threads.idle_cores(0.5)
    finally:
        busy.kill()
        busy.wait()
    assert before is not None and during is not None
    assert during < before - 0.5, (before, during)


def test_only_an_unfixed_count_follows_the_machine(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("NBMERGE_THREADS", "auto")
    assert threads.adaptive()
    monkeypatch.setenv("NBMERGE_THREADS", "2")   # the tests' own setting (conftest): report kernels keep it
    assert not threads.adaptive()
    monkeypatch.setenv("NBMERGE_THREADS", "auto")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert not threads.adaptive()


def test_others_busy_subtracts_this_process_and_needs_a_second(monkeypatch):
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    # 2 cores, 300 jiffies each pass (600 in all); 360 busy, 200 of them ours: others kept 160/300 ≈ 0.53 cores busy
    assert threads.others_busy(((0, 0), 0), ((240, 600), 200)) == pytest.approx(160 / 300)
    assert threads.others_busy(((0, 0), 0), ((0, 600), 600)) == 0.0          # all the load is ours
    assert threads.others_busy(((0, 0), 0), ((10, 100), 0)) is None          # half a second: too short to say
    assert threads.others_busy(((0, 0), None), ((240, 600), 200)) is None    # no /proc: unknown


def test_cell_threads_follow_the_neighbours_of_the_previous_cell(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    readings = iter([((0, 0), 0),            # at registration
                     ((0, 600), 300),        # a neighbour kept one core busy while we used the other
                     ((300, 1200), 600),     # then the neighbour left: half the machine idle, all the rest ours
                     ((300, 1210), 610)])    # a cell of a twentieth of a second: no change
    monkeypatch.setattr(threads, "snapshot", lambda: next(readings))
    before = torch.get_num_threads()
    lines = []
    try:
        governor = threads.CellThreads(log=lines.append)
        assert governor() == 1 and torch.get_num_threads() == 1
        assert governor() == 2 and torch.get_num_threads() == 2
        assert governor() is None and torch.get_num_threads() == 2
        assert "other processes kept 1.0 of 2 cores busy" in lines[0]
    finally:
        torch.set_num_threads(before)


def test_the_report_kernel_option_registers_the_cell_callback():
    """The option the report hands its kernels runs in a real kernel and registers the callback."""
    from jupyter_client.manager import start_new_kernel

    from nbmerge.report.pipeline import CELL_THREADS

    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=[CELL_THREADS])
    printed = []

    def keep(msg):
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])

    try:
        client.execute_interactive("import nbmerge.threads as t; print(sum(isinstance(c, t.CellThreads) for c in "
                                   "get_ipython().events.callbacks['pre_run_cell']))", timeout=60, output_hook=keep)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert "".join(printed).strip() == "1"


def test_a_long_loop_keeps_up_with_a_neighbour_that_comes_later(monkeypatch):
    """keep_up, called at every training step, re-chooses at most every few seconds (one clock read otherwise),
    from what other processes used since the last choice; it leaves a count the user fixed alone."""
    monkeypatch.setattr(threads, "cores", lambda: 2)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    monkeypatch.delenv("NBMERGE_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    clock = iter([0.0, 1.0, 6.0, 6.5, 12.0, 20.0])
    monkeypatch.setattr(threads.time, "monotonic", lambda: next(clock))
    readings = iter([((0, 0), 0),              # the first call starts the counters
                     ((0, 1200), 1200),        # six seconds, all of both cores ours: nobody else
                     ((0, 2400), 1800)])       # then a neighbour took one core
    monkeypatch.setattr(threads, "snapshot", lambda: next(readings))
    monkeypatch.setattr(threads, "_KEEP_UP", threads._KeepUp())
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert threads.keep_up() is None                     # t=0: starts the counters
        assert threads.keep_up() is None                     # t=1: too soon, nothing read
        assert threads.keep_up() == 2                        # t=6: the machine was ours
        assert threads.keep_up() is None                     # t=6.5: too soon
        assert threads.keep_up() == 1 and torch.get_num_threads() == 1  # t=12: one core taken
        monkeypatch.setenv("NBMERGE_THREADS", "2")
        assert threads.keep_up() is None and torch.get_num_threads() == 1  # fixed by the user: untouched
    finally:
        torch.set_num_threads(before)
