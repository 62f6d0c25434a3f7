"""Who evaluates a search's trials: the interface, and the default in-process executor (the Ray one is
``nbmerge.tune.distributed``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class Outcome:
    """What an executor reports for one trial: the objective's return value and its seconds, or why it failed."""

    out: Any = None
    seconds: float = 0.0
    error: Optional[str] = None


def build_objective(objective):
    """The objective itself, or, for an objective *recipe* (an object with ``build_objective()``: a picklable
    description from which a remote worker rebuilds an objective too large to ship), the objective it builds."""
    build = getattr(objective, "build_objective", None)
    return build() if callable(build) else objective


class InProcess:
    """The default executor: one trial at a time in this process, in submission order.

    An executor has ``workers`` (trials it runs at once), ``submit(key, params)``, ``next() -> (key, Outcome)``
    (blocks until some submitted trial finishes, in any order; a failure is an ``Outcome`` with ``error``, not an
    exception) and ``close()``. This one lets an exception of the objective propagate: the search stops as a
    crash of the whole run would (rerun with the log to resume), which is what a search without workers always did.
    """

    workers = 1

    def __init__(self, objective):
        self.objective = build_objective(objective)
        self.queue: list = []

    def submit(self, key, params: dict) -> None:
        self.queue.append((key, params))

    def next(self) -> tuple[Any, Outcome]:
        key, params = self.queue.pop(0)
        began = time.perf_counter()
        out = self.objective(dict(params))
        return key, Outcome(out, time.perf_counter() - began)

    def close(self) -> None:
        self.queue.clear()
