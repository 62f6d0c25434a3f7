"""Trials on Ray: the executor ``nbmerge.tune.search`` uses for ``workers > 1`` (optional extra ``nbmerge[distributed]``).

:class:`RayExecutor` starts one Ray actor per worker on a Ray cluster (``ray.init()``: a local one by default,
``address=`` for an existing one), each pinned to one GPU when the cluster has GPUs (``num_gpus=1``) and to one
CPU otherwise. Each actor builds the objective once, when it starts, and then runs trial after trial with it:
for BMM that means the zoo (or pool) is opened, and the solver factorised, once per worker rather than once per
trial. An objective that is too large or too local to ship (BMM's closes over a solver, an evaluator and a trial
cache) is passed as a *recipe*: a small picklable object whose ``build_objective()`` rebuilds it on the worker
(``nbmerge.tune.bmm.BMMTrialRecipe``). A plain function is shipped as it is (Ray pickles it by value).

The executor only evaluates. The driver (``nbmerge.tune.search``) proposes, writes the log, retries a failed trial
once and records a second failure; here a worker's crash or a trial's exception becomes an ``Outcome`` with an
``error``, and a dead actor is replaced by a fresh one (which builds its objective again). On a cluster of several
machines every worker must see the same zoo cache (a shared file system, or the same cache built on each node).
"""

from __future__ import annotations

import math
import os
import re
import socket
import time
from collections import deque
from typing import Any, Optional

from ..errors import NbmergeError
from .executors import Outcome, build_objective

INSTALL = "pip install 'nbmerge[distributed]' (or pip install 'ray>=2.40')"
_ERROR_CHARS = 600  # an error's text in the log is cut to this many characters


def import_ray():
    """The ``ray`` module, or an ``NbmergeError`` that says what to install."""
    try:
        import ray
    except ImportError:
        raise NbmergeError(f"workers > 1 runs the trials on Ray, which is not installed: {INSTALL}; or run with "
                           "workers=1 (--workers 1)") from None
    return ray


class _TrialWorker:
    """One Ray actor: builds the objective once, then evaluates trials with it, one at a time."""

    def __init__(self, objective):
        self.objective = build_objective(objective)

    def ready(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}"

    def run(self, params: dict) -> tuple[Any, float, str]:
        began = time.perf_counter()
        out = self.objective(dict(params))
        return out, time.perf_counter() - began, f"{socket.gethostname()}:{os.getpid()}"


def _describe(exc: BaseException) -> str:
    """A one-line account of why a trial failed: the objective's own exception when Ray wraps one."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    text = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", f"{type(exc).__name__}: {exc}").split())  # no colour codes
    return text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS - 1] + "…"


class RayExecutor:
    """``workers`` Ray actors evaluating trials (see the module docstring); an executor for ``nbmerge.tune.search``.

    ``address``: a running cluster's address (``"auto"``, ``"ray://host:10001"``...); None starts a local cluster
    in this process (and shuts it down on ``close()``). ``gpus_per_worker``: GPUs each actor is pinned to (default
    1 when the cluster has GPUs, else 0; a fraction shares one GPU). ``cpus_per_worker``: CPUs each actor holds.
    """

    def __init__(self, objective, workers: int, address: Optional[str] = None,
                 gpus_per_worker: Optional[float] = None, cpus_per_worker: float = 1.0):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise NbmergeError(f"RayExecutor: workers must be a positive integer, got {workers!r}")
        self.ray = import_ray()  # now: a missing Ray is said before anything runs
        self.objective, self.workers, self.address = objective, workers, address
        self.gpus_per_worker, self.cpus_per_worker = gpus_per_worker, float(cpus_per_worker)
        self.started = False      # whether this executor started Ray (and shuts it down on close)
        self.idle: Optional[deque] = None  # the actors, once started: on the first trial, so that a search
        self.queue: deque = deque()        # replayed from a complete log (or refused) never starts a cluster
        self.running: dict = {}   # object ref -> (key, params, actor)
        self.hosts: set = set()   # where trials ran (host:pid), for reports
        self.startup_seconds: Optional[float] = None

    def start(self) -> None:
        """Join (or start) the cluster and create the actors; called by the first ``submit``."""
        if self.idle is not None:
            return
        began = time.perf_counter()
        ray, workers = self.ray, self.workers
        if not ray.is_initialized():
            # Quiet, and no dashboard: the driver prints its own progress. A local cluster gets at least one CPU
            # per worker even on a smaller machine (Ray would otherwise leave the extra actors pending forever).
            kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            if self.address is None:
                kwargs["num_cpus"] = max(os.cpu_count() or 1, int(math.ceil(workers * self.cpus_per_worker)))
            ray.init(address=self.address, **kwargs)
            self.started = True
        try:
            gpus = float(ray.cluster_resources().get("GPU", 0))
            per = self.gpus_per_worker
            if per is None:
                per = 1.0 if gpus >= 1 else 0.0
            if per and workers * per > gpus + 1e-9:
                raise NbmergeError(f"{workers} workers with {per:g} GPU each need {workers * per:g} GPUs; the Ray "
                                   f"cluster has {gpus:g} (use fewer workers, or share a GPU with "
                                   "gpus_per_worker=0.5)")
            self.gpus_per_worker = float(per)
            self.actor_class = ray.remote(num_cpus=self.cpus_per_worker, num_gpus=per, max_restarts=0,
                                          max_task_retries=0)(_TrialWorker)
            self.payload = ray.put(self.objective)  # shipped once, built by each actor
            self.idle = deque(self._actor() for _ in range(workers))
        except BaseException:
            self._shutdown()
            raise
        self.startup_seconds = time.perf_counter() - began

    def warm_up(self) -> float:
        """Start the cluster and wait until every worker has built its objective; the seconds it took. Optional
        (the first trials do it otherwise); a worker that cannot build raises here, before any trial runs."""
        began = time.perf_counter()
        self.start()
        try:
            self.hosts.update(self.ray.get([actor.ready.remote() for actor in self.idle]))
        except Exception as exc:  # noqa: BLE001 - Ray's errors carry the worker's own exception
            raise NbmergeError(f"a Ray worker could not build the objective: {_describe(exc)}") from None
        return time.perf_counter() - began

    def _actor(self):
        return self.actor_class.remote(self.payload)

    def submit(self, key, params: dict) -> None:
        self.start()
        self.queue.append((key, dict(params)))
        self._dispatch()

    def _dispatch(self) -> None:
        while self.idle and self.queue:
            actor = self.idle.popleft()
            key, params = self.queue.popleft()
            self.running[actor.run.remote(params)] = (key, params, actor)

    def next(self) -> tuple[Any, Outcome]:
        if not self.running:
            raise NbmergeError("RayExecutor.next: no trial is running")
        ready, _ = self.ray.wait(list(self.running), num_returns=1)
        ref = ready[0]
        key, params, actor = self.running.pop(ref)
        from ray.exceptions import RayActorError, RayTaskError

        try:
            out, seconds, where = self.ray.get(ref)
            self.hosts.add(where)
            outcome = Outcome(out, seconds)
            self.idle.append(actor)
        except RayTaskError as exc:  # the objective raised: the worker itself is fine
            outcome = Outcome(error=_describe(exc))
            self.idle.append(actor)
        except RayActorError as exc:  # the worker died (killed, out of memory, failed to build): replace it
            outcome = Outcome(error=_describe(exc))
            self.ray.kill(actor, no_restart=True)
            self.idle.append(self._actor())
        self._dispatch()
        return key, outcome

    def close(self) -> None:
        for actor in list(self.idle or ()) + [actor for _, _, actor in self.running.values()]:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - an actor already gone is fine
                pass
        self.idle = None
        self.running.clear()
        self.queue.clear()
        self._shutdown()

    def _shutdown(self) -> None:
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
        self.started = False
