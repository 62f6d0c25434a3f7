"""As many compute threads as the machine has idle cores, so a busy neighbour does not multiply our wall time.

PyTorch's CPU kernels run one OpenMP thread per core. When another process keeps a core busy, the thread that
shares its core runs at half speed and every parallel region waits for it; the spin-waiting of the others takes
more from the neighbour. Measured on a 2-core machine with one busy Python loop beside a slice of the main job
(reports/contention.md): one thread per core made it 2.6× slower (training 2.2×, evaluation 2.8×, merges 2.9×);
as many threads as idle cores kept it at 1.5× of the idle run, about what one core instead of two costs, and cost
nothing on an idle machine. OpenMP's passive waiting doubled the merges' time on an idle machine
(reports/contention_policies.md). On the tour's own work (AdaMerging's steps and TIES/TSV merges on the text8
experts, reports/contention_adamerging.md), two threads beside a busy process did worse than one, whether they
waited passively or spun briefly (a ``GOMP_SPINCOUNT`` of 1,000 or 10,000), and torch's default spin did not finish
in five times the idle time: as many threads as idle cores stays the policy.

:func:`adapt_threads` samples the CPU counters for a quarter of a second and sets torch's thread count to the
number of cores that were idle (at least one). It is called where work starts: each ``nbmerge`` command, each zoo
build, and each notebook of a report (the kernel inherits ``OMP_NUM_THREADS``). A user's choice wins:
``OMP_NUM_THREADS`` or ``NBMERGE_THREADS`` set in the environment are left as they are (``NBMERGE_THREADS=auto``
is the default).

A notebook runs for up to forty minutes, and a quarter of a second at its start is a poor sample of that: a test
that happened to be starting pinned a whole notebook to one thread on an otherwise idle machine. So a report's
kernels also re-choose before every cell (:class:`CellThreads`): from the counters, with no sleep, how many cores
*other* processes kept busy while the previous cell ran (the machine's busy time minus this process's own). One
cell or one command can still run for many minutes, so the long loops (training steps, AdaMerging's steps) call
:func:`keep_up`, which re-chooses the same way every few seconds: beside a neighbour that came 20 s in, in a session
of its own, two threads kept from the start took over 3.6× the idle time (reports/contention_seeds_later.md).
"""

from __future__ import annotations

import os
import time
from typing import Callable, Optional

WINDOW_S = 0.25


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cpu_times() -> Optional[tuple[int, int]]:
    """(idle, total) jiffies of all CPUs from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return idle, sum(values[:8])  # guest time is already counted in user


def idle_cores(window: float = WINDOW_S) -> Optional[float]:
    """How many cores were idle, on average, over ``window`` seconds (None where /proc/stat is unavailable)."""
    first = _cpu_times()
    if first is None:
        return None
    time.sleep(window)
    second = _cpu_times()
    total = second[1] - first[1]
    if total <= 0:
        return None
    online = os.cpu_count() or 1
    return online * (second[0] - first[0]) / total


def adaptive() -> bool:
    """Whether the thread count follows the machine (neither ``OMP_NUM_THREADS`` nor a number in
    ``NBMERGE_THREADS`` fixes it)."""
    return not os.environ.get("OMP_NUM_THREADS") and \
        os.environ.get("NBMERGE_THREADS", "auto").strip().lower() in ("", "auto")


def chosen_threads(window: float = WINDOW_S) -> Optional[int]:
    """The thread count :func:`adapt_threads` would set, or None when the user fixed it (or nothing is known)."""
    if os.environ.get("OMP_NUM_THREADS"):
        return None
    fixed = os.environ.get("NBMERGE_THREADS", "auto").strip().lower()
    if fixed not in ("", "auto"):
        try:
            return max(1, int(fixed))
        except ValueError:
            from .errors import NbmergeError

            raise NbmergeError(f"NBMERGE_THREADS must be a whole number or 'auto', got {fixed!r}") from None
    idle = idle_cores(window)
    if idle is None:
        return None
    return max(1, min(cores(), int(idle + 0.5)))


def adapt_threads(log: Optional[Callable[[str], None]] = None, window: float = WINDOW_S) -> Optional[int]:
    """Set torch's intra-op threads to the idle cores (see the module); returns the count set, or None."""
    threads = chosen_threads(window)
    if threads is None:
        return None
    import torch

    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)
        if log is not None and threads < cores():
            log(f"{cores() - threads} of {cores()} cores are busy with other work: computing with {threads} "
                f"thread(s) (NBMERGE_THREADS or OMP_NUM_THREADS fix the count)")
    return threads


def _own_ticks() -> Optional[int]:
    """This process's CPU time (user + system, all threads) in clock ticks, from /proc/self/stat."""
    try:
        with open("/proc/self/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of the whole line)


def others_busy(before: tuple, after: tuple) -> Optional[float]:
    """Cores other processes kept busy between two :func:`snapshot` readings (None when unknown or too short)."""
    if None in before or None in after:
        return None
    (idle0, total0), own0 = before
    (idle1, total1), own1 = after
    online = os.cpu_count() or 1
    per_core = (total1 - total0) / online  # jiffies (= clock ticks) that passed on each core
    if per_core < 100:  # under about a second: too short to say
        return None
    busy = (total1 - total0) - (idle1 - idle0)
    return max(0.0, (busy - (own1 - own0)) / per_core)


def snapshot() -> tuple:
    """The machine's (idle, total) jiffies and this process's own CPU ticks, now."""
    return _cpu_times(), _own_ticks()


class CellThreads:
    """An IPython ``pre_run_cell`` callback: before each cell, as many threads as the cores other processes left
    idle during the previous cell (at least one); nothing changes when the previous cell was under a second."""

    def __init__(self, log: Optional[Callable[[str], None]] = None):
        self.log = log
        self.last = snapshot()

    def __call__(self, *_) -> Optional[int]:
        now = snapshot()
        others = others_busy(self.last, now)
        self.last = now
        if others is None:
            return None
        import torch

        threads = max(1, min(cores(), int(cores() - others + 0.5)))
        if threads != torch.get_num_threads():
            torch.set_num_threads(threads)
            if self.log is not None:
                self.log(f"threads: {threads} (other processes kept {others:.1f} of {cores()} cores busy)")
        return threads


#: how often a long loop re-chooses its threads (:func:`keep_up`), in seconds
KEEP_UP_S = 5.0


class _KeepUp:
    """The state of :func:`keep_up`: the time of the last choice and the counters it was made from."""

    def __init__(self):
        self.at: Optional[float] = None
        self.threads: Optional[CellThreads] = None

    def __call__(self, every: float) -> Optional[int]:
        now = time.monotonic()
        if self.at is not None and now - self.at < every:
            return None  # the common case, every step: one clock read
        self.at = now
        if not adaptive():
            return None
        if self.threads is None:  # the first call only starts the counters
            self.threads = CellThreads()
            return None
        return self.threads()


_KEEP_UP = _KeepUp()


def keep_up(every: float = KEEP_UP_S) -> Optional[int]:
    """Called at every step of a long loop (training, AdaMerging, posteriors): at most every ``every`` seconds,
    re-choose torch's threads from how many cores other processes kept busy since the last choice, as
    :class:`CellThreads` does before a notebook cell. A command chooses once when it starts; without this, a
    neighbour that starts later leaves it two threads on the one core it is granted, and beside a neighbour in
    another session (the kernel's autogroup then shares CPU time between sessions) torch's spinning threads took
    over 4.7× their idle time (reports/contention_seeds_apart.md). Returns the count set, or None when nothing was
    chosen (too soon, the user fixed the count, or too short an interval to say)."""
    return _KEEP_UP(every)


def govern_cells() -> bool:
    """Register :class:`CellThreads` in the running IPython kernel. The report's kernels run this at start when the
    report chose their thread count (not when the user fixed it). Returns whether it was registered."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    shell.events.register("pre_run_cell", CellThreads())
    return True
