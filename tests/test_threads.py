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
