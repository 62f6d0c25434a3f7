"""Seeded, resumable search over a small box of named real parameters: BMM's outer loop (docs/methods.md, BMM).

It knows nothing about models. ``objective(params) -> value`` takes ``{name: float}`` and returns a number, or a
dict with a ``"value"`` and any other JSON-able metrics (logged with the trial); the value is **maximised**.

Strategies (``search(strategy=...)``):

* ``bayes``: scikit-optimize's ask/tell ``Optimizer`` with a GP surrogate (constant × Matérn-5/2 kernel, Gaussian
  noise, normalised targets: skopt's "GP") and Expected Improvement; the first ``n_initial`` points (5) come from a
  space-filling design (scrambled Sobol by default), the rest from the model. Budget 20 (the paper's).
* ``random``: uniform random points in the box, same budget.
* ``grid``: the exhaustive grid, ``grid_sizes`` evenly spaced values per dimension (end points included) in
  row-major order. On a space with ``tied`` names the grid runs over the *tied* space: BMM's 225-configuration
  baseline is 15 shared log10 ρ × 15 assembly scales, not 15⁵ points over four groups and the scale.
* ``shared``: ``bayes`` (same budget and design) over the tied space, one value for every tied name (1-D, or 2-D
  with an untied scale). BO rather than a grid so that the ablation "shared λ instead of per-group λ" changes
  only the space, not the optimiser or the budget.

The log (``log_path``) is JSON lines, each written with flush + fsync. Line 1 records the settings (strategy,
space, seed, budget, design, the caller's ``settings``) and their hash; then one line per trial: ``trial``,
``params`` (what the objective got), ``value``, ``seconds`` (objective), ``search_seconds`` (ask + tell), ``metrics``.

Resuming: rerun with the same log and settings (a ``bayes``, ``shared`` or ``random`` search may be given a larger
budget: it continues from the logged trials exactly as a run with that budget would have). The logged trials are replayed through the same ask/tell sequence
(each re-proposed point is checked against the logged one; the logged point and value are what the optimiser is
told), and the search continues at the first missing trial, so the result equals an uninterrupted run. A complete
log returns its result without evaluating anything. Different settings raise ``NbmergeError`` before anything is
written. A last line cut short by a crash (no final newline) is dropped without a warning, and the file is
rewritten atomically without it; a malformed *complete* line is corruption and raises. A file that does not start
like a search log is never overwritten. Each trial line carries ``check``, a checksum of the line chained to the one
before, so a line edited by hand (even into valid JSON) is refused as corruption (format-1 logs, written before
checksums, are read without this check). A search holds an exclusive lock on its log (``.<log>.lock`` beside it)
while it runs: a second search on the same log is refused with an error naming the holder.

Workers (``search(workers=k)``, or ``executor=``): the trials of a batch run at once on an executor (in process by
default, one at a time; ``nbmerge.tune.distributed.RayExecutor`` on a Ray cluster). ``bayes``/``shared`` ask ``batch``
points at a time (skopt's constant liar, :data:`BATCH_STRATEGY`; ``batch`` and the strategy join the log's
settings when above 1, so ``workers=1`` writes the same log as before batches existed), ``random``/``grid`` hand
out the same points whatever the batch. Batch j is always trials [j·batch, (j+1)·batch). The driver alone writes
the log, in proposal order, each trial as soon as every earlier one is done; a trial whose worker fails is
submitted once more, then logged as failed (``"value": null`` and its ``"error"``): the optimiser is told the worst
successful value so far for it, and a search whose every trial so far failed stops. A resumed ``bayes``/``shared``
search keeps the batch its log records, whatever ``workers`` now is, and ends where an uninterrupted run with
that batch would have. A trial's ``search_seconds`` is then its share of its batch's ask and of the tell before.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import platform
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ..errors import NbmergeError, NbmergeWarning
from ..engine.io import atomic_write_text, jsonable
from ..progress import progress_bar
from .executors import InProcess, Outcome, build_objective  # noqa: F401  (part of this module's API)

STRATEGIES = ("bayes", "random", "grid", "shared")
DEFAULT_BUDGET = 20       # the paper's BO budget
DEFAULT_INITIAL = 5       # space-filling points before the GP proposes (5 Sobol + 15 EI; ours: docs/methods.md, BMM)
DEFAULT_GRID = 15         # values per dimension: 15 × 15 = 225, the size of the paper's exhaustive baseline
INITIAL_DESIGNS = ("sobol", "lhs", "halton", "hammersly", "random")
LOG_FORMAT = 2                 # 2: every trial line carries a checksum chained to the line before (1: none)
_READABLE_FORMATS = (1, 2)
_MAGIC = "nbmerge_search_log"  # the first key of line 1: a file that does not start with it is not ours
_REPLAY_TOLERANCE = 1e-9       # relative: a re-proposed point further than this from the logged one is a mismatch
# How bayes/shared propose a batch of k points (workers > 1): skopt's constant liar, each pending point told the
# worst value seen so far (skopt minimises, so its "cl_min" is our worst). Recorded in the log's settings.
BATCH_STRATEGY = "cl_min"
ATTEMPTS = 2                   # a trial whose worker fails is tried once more, then logged as failed


# -- the box -----------------------------------------------------------------------------------------------------

class Space:
    """Named real intervals ``{name: (low, high)}``, in the given order, low < high, both finite.

    ``tied``: names (with identical bounds) that the ``shared`` and ``grid`` strategies search as one coordinate,
    called ``tied_name`` in the reduced space; the objective still receives every name, each with that value.
    """

    def __init__(self, bounds: Mapping[str, Sequence[float]], tied: Sequence[str] = (), tied_name: str = "shared"):
        if not isinstance(bounds, Mapping) or not bounds:
            raise NbmergeError(f"Space: bounds must be a non-empty mapping name → (low, high), got {bounds!r}")
        self.bounds: dict[str, tuple[float, float]] = {}
        for name, interval in bounds.items():
            if not isinstance(name, str) or not name:
                raise NbmergeError(f"Space: parameter names must be non-empty strings, got {name!r}")
            try:
                low, high = (float(v) for v in interval)
            except (TypeError, ValueError):
                raise NbmergeError(f"Space: bounds of {name!r} must be two numbers (low, high), "
                                   f"got {interval!r}") from None
            if isinstance(interval[0], bool) or isinstance(interval[1], bool):
                raise NbmergeError(f"Space: bounds of {name!r} must be numbers, got {interval!r}")
            if not (math.isfinite(low) and math.isfinite(high)):
                raise NbmergeError(f"Space: bounds of {name!r} must be finite, got ({low}, {high})")
            if not low < high:
                raise NbmergeError(f"Space: {name!r} needs low < high, got ({low}, {high}); "
                                   "fix a parameter by leaving it out of the space")
            self.bounds[name] = (low, high)
        self.tied = tuple(tied)
        self.tied_name = tied_name
        unknown = [n for n in self.tied if n not in self.bounds]
        if unknown:
            raise NbmergeError(f"Space: tied name {unknown[0]!r} is not a parameter ({', '.join(self.bounds)})")
        if len(set(self.tied)) != len(self.tied):
            raise NbmergeError(f"Space: tied names repeat: {list(self.tied)}")
        if self.tied:
            if len({self.bounds[n] for n in self.tied}) != 1:
                raise NbmergeError("Space: tied parameters must share their bounds, got "
                                   + ", ".join(f"{n} {self.bounds[n]}" for n in self.tied))
            if not isinstance(tied_name, str) or not tied_name or tied_name in set(self.bounds) - set(self.tied):
                raise NbmergeError(f"Space: tied_name {tied_name!r} must be a new non-empty name")

    @property
    def names(self) -> list[str]:
        return list(self.bounds)

    def __len__(self) -> int:
        return len(self.bounds)

    def __repr__(self) -> str:
        tied = f", tied={list(self.tied)}" if self.tied else ""
        return f"Space({self.bounds}{tied})"

    def to_dict(self) -> dict:
        return {"bounds": {n: list(b) for n, b in self.bounds.items()}, "tied": list(self.tied),
                "tied_name": self.tied_name if self.tied else None}

    def reduced(self) -> "Space":
        """The tied space: the tied names replaced, where the first of them stood, by ``tied_name``."""
        if not self.tied:
            return self
        bounds = {}
        for name, interval in self.bounds.items():
            if name in self.tied:
                bounds.setdefault(self.tied_name, interval)
            else:
                bounds[name] = interval
        return Space(bounds)

    def expand(self, params: Mapping[str, float]) -> dict[str, float]:
        """Full parameters from reduced ones (the tied value copied to every tied name); full ones pass through."""
        if not self.tied or self.tied_name not in params:
            return {n: float(params[n]) for n in self.names}
        return {n: float(params[self.tied_name] if n in self.tied else params[n]) for n in self.names}

    def reduce(self, params: Mapping[str, float]) -> dict[str, float]:
        """Reduced parameters from full ones; the tied names must hold one value."""
        if not self.tied:
            return {n: float(params[n]) for n in self.names}
        values = {float(params[n]) for n in self.tied}
        if len(values) != 1:
            raise NbmergeError(f"tied parameters {list(self.tied)} differ: {[params[n] for n in self.tied]}")
        return {n: (values.pop() if n == self.tied_name else float(params[n])) for n in self.reduced().names}

    def check(self, params: Mapping[str, Any], what: str = "params") -> None:
        if set(params) != set(self.bounds):
            raise NbmergeError(f"{what}: expected parameters {self.names}, got {sorted(params)}")
        for name, (low, high) in self.bounds.items():
            value = params[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise NbmergeError(f"{what}: {name} must be a finite number, got {value!r}")
            slack = 1e-12 * (high - low)
            if not low - slack <= value <= high + slack:
                raise NbmergeError(f"{what}: {name} = {value} is outside [{low}, {high}]")


def grid_points(space: Space, sizes: Union[int, Mapping[str, int]] = DEFAULT_GRID) -> list[dict[str, float]]:
    """Every point of the grid with ``sizes`` values per dimension (an int for all, or per name), row-major."""
    per_name = {n: sizes for n in space.names} if not isinstance(sizes, Mapping) else dict(sizes)
    missing = [n for n in space.names if n not in per_name]
    extra = sorted(set(per_name) - set(space.names))
    if missing or extra:
        raise NbmergeError(f"grid_sizes must name exactly {space.names}; missing {missing}, unknown {extra}")
    axes = []
    for name, (low, high) in space.bounds.items():
        size = per_name[name]
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise NbmergeError(f"grid_sizes[{name!r}] must be a positive integer, got {size!r}")
        # One value is the centre; otherwise both end points are included (the baseline covers the whole box).
        axes.append([(low + high) / 2] if size == 1 else [float(v) for v in np.linspace(low, high, size)])
    return [dict(zip(space.names, values)) for values in itertools.product(*axes)]


# -- proposers: one ask/tell protocol for every strategy ------------------------------------------------------------

class _Bayes:
    def __init__(self, space: Space, seed: int, n_initial: int, design: str, xi: float):
        from skopt import Optimizer
        from skopt.space import Real

        with warnings.catch_warnings():
            # skopt's Sobol design warns whenever n is not a power of 2 (5 is not): its balance is not needed here.
            warnings.simplefilter("ignore", UserWarning)
            self.optimizer = Optimizer([Real(low, high, name=name) for name, (low, high) in space.bounds.items()],
                                       base_estimator="GP", acq_func="EI", acq_optimizer="lbfgs",
                                       acq_func_kwargs={"xi": xi}, n_initial_points=n_initial,
                                       initial_point_generator=design, random_state=seed)

    def ask(self) -> list[float]:
        with warnings.catch_warnings():
            # When EI proposes a point already evaluated, skopt substitutes a seeded random one and says so.
            warnings.simplefilter("ignore", UserWarning)
            return [float(v) for v in self.optimizer.ask()]

    def tell(self, point: list[float], value: float, last: bool) -> None:
        # skopt minimises. The GP is not refitted after the last trial: it would propose nothing.
        self.optimizer.tell(list(point), -value, fit=not last)

    def ask_batch(self, n: int) -> list[list[float]]:
        """``n`` points at once by skopt's constant liar (:data:`BATCH_STRATEGY`): each point is told to a copy of
        the optimiser with the lie "as bad as the worst value so far" before the next is asked. ``n = 1`` is
        exactly :meth:`ask` (a batched ask draws a seed for the copy, so it would change the sequence)."""
        if n == 1:
            return [self.ask()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return [[float(v) for v in p] for p in self.optimizer.ask(n_points=n, strategy=BATCH_STRATEGY)]

    def tell_batch(self, points: list[list[float]], values: list[float], last: bool) -> None:
        if len(points) == 1:
            self.tell(points[0], values[0], last)
        else:
            self.optimizer.tell([list(p) for p in points], [-v for v in values], fit=not last)


class _Random:
    def __init__(self, space: Space, seed: int):
        self.rng = np.random.default_rng(seed)
        self.low = np.array([b[0] for b in space.bounds.values()])
        self.high = np.array([b[1] for b in space.bounds.values()])

    def ask(self) -> list[float]:
        return [float(v) for v in self.rng.uniform(self.low, self.high)]

    def tell(self, point, value, last) -> None:
        pass

    def ask_batch(self, n: int) -> list[list[float]]:
        return [self.ask() for _ in range(n)]  # the same stream of points, whatever the batch size

    def tell_batch(self, points, values, last) -> None:
        pass


class _Grid:
    def __init__(self, space: Space, sizes):
        self.points = [list(p.values()) for p in grid_points(space, sizes)]
        self.next = 0

    def ask(self) -> list[float]:
        return list(self.points[self.next])

    def tell(self, point, value, last) -> None:
        self.next += 1

    def ask_batch(self, n: int) -> list[list[float]]:
        return [list(p) for p in self.points[self.next:self.next + n]]

    def tell_batch(self, points, values, last) -> None:
        self.next += len(points)


# -- results ---------------------------------------------------------------------------------------------------

@dataclass
class Trial:
    index: int
    params: dict[str, float]          # what the objective received (every name of the space)
    value: float                      # maximised
    seconds: float                    # time in the objective
    search_seconds: float = 0.0       # optimiser time: its share of its batch's ask and of the tell before
    metrics: dict = field(default_factory=dict)
    replayed: bool = False            # read from the log in this call rather than evaluated
    error: Optional[str] = None       # why the trial failed (its worker crashed twice); value is then NaN

    @property
    def failed(self) -> bool:
        return self.error is not None

    def to_dict(self) -> dict:
        record = {"trial": self.index, "params": self.params, "value": None if self.failed else self.value,
                  "seconds": self.seconds, "search_seconds": self.search_seconds, "metrics": self.metrics}
        if self.failed:  # only then: a log without failures is byte-for-byte what it always was
            record["error"] = self.error
        return record


@dataclass
class SearchResult:
    strategy: str
    space: Space
    settings: dict                     # everything the log's identity covers
    settings_hash: str
    trials: list[Trial]
    seconds: float                     # wall time of this call (replay included)
    log_path: Optional[Path] = None
    replay_mismatches: int = 0         # re-proposed points that differed from the log's (another machine/BLAS)

    @property
    def best(self) -> Trial:
        # The first trial reaching the maximum: ties (accuracy is discrete) resolve to the earliest, deterministically.
        done = [t for t in self.trials if not t.failed]
        if not done:
            raise NbmergeError("the search has no successful trials")
        return max(done, key=lambda t: (t.value, -t.index))

    @property
    def best_params(self) -> dict[str, float]:
        return dict(self.best.params)

    @property
    def best_value(self) -> float:
        return self.best.value

    @property
    def convergence(self) -> list[float]:
        """Best value so far after each trial (failed trials are NaN and skipped; NaN before any success)."""
        return [float(v) for v in np.fmax.accumulate([t.value for t in self.trials])]

    @property
    def failed(self) -> list[Trial]:
        return [t for t in self.trials if t.failed]

    @property
    def trial_seconds(self) -> float:
        """Objective plus optimiser time summed over every trial, whichever call evaluated it."""
        return float(sum(t.seconds + t.search_seconds for t in self.trials))

    @property
    def replayed(self) -> int:
        return sum(t.replayed for t in self.trials)

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "settings_hash": self.settings_hash, "settings": self.settings,
                "best_trial": self.best.index, "best_params": self.best_params, "best_value": self.best_value,
                "convergence": jsonable(self.convergence, "convergence"), "seconds": self.seconds,
                "trial_seconds": self.trial_seconds, "failed_trials": [t.index for t in self.failed],
                "replayed": self.replayed, "replay_mismatches": self.replay_mismatches,
                "log_path": str(self.log_path) if self.log_path else None,
                "trials": [t.to_dict() for t in self.trials]}


# -- the log -----------------------------------------------------------------------------------------------------

def _settings_hash(settings: dict) -> str:
    from ..codehash import digest

    return digest(settings, 16)


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _differences(ours: dict, theirs: dict) -> str:
    mine, logged = _flatten(ours), _flatten(theirs)
    rows = [f"{key}: {mine.get(key, '<absent>')!r} here, {logged.get(key, '<absent>')!r} in the log"
            for key in sorted(set(mine) | set(logged)) if mine.get(key, "<absent>") != logged.get(key, "<absent>")]
    return "; ".join(rows[:6]) + (f"; and {len(rows) - 6} more" if len(rows) > 6 else "")


def _versions() -> dict:
    import skopt

    return {"python": platform.python_version(), "numpy": np.__version__, "skopt": skopt.__version__}


def _chain(previous: str, record: dict) -> str:
    """The checksum of a trial line: sha256 of the previous line's checksum and the record (without ``check``)."""
    body = json.dumps({k: v for k, v in record.items() if k != "check"}, sort_keys=True)
    return hashlib.sha256((previous + body).encode()).hexdigest()[:16]


def _verify_chain(path: Path, header_line: bytes, header: dict, trials: list) -> str:
    """Check every trial line's checksum (format 2); return the last one (what the next line chains to)."""
    previous = hashlib.sha256(header_line).hexdigest()[:16]
    if header.get(_MAGIC) == 1:
        return previous
    for number, record in enumerate(trials, start=2):
        if not isinstance(record, dict) or record.get("check") != _chain(previous, record):
            raise NbmergeError(f"{path}, line {number}: its checksum does not match (the line was changed after it "
                               "was written); the log is corrupt. Move it away to start again")
        previous = record["check"]
    return previous


class _Lock:
    """An exclusive, non-blocking lock on ``.<log>.lock`` beside a log, held for the whole search."""

    def __init__(self, path: Path):
        import fcntl
        import socket

        self.file = path.with_name(f".{path.name}.lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.file, "a+", encoding="utf-8")
        try:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.handle.seek(0)
            holder = self.handle.read().strip() or "another process"
            self.handle.close()
            raise NbmergeError(f"{path} is in use by another search ({holder}); wait for it to finish or use "
                               "another log") from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        self.handle.flush()

    def release(self) -> None:
        if not self.handle.closed:
            self.handle.truncate(0)
            self.handle.close()  # closing releases the lock


def _compatible(header: dict, settings: dict, digest: str) -> bool:
    """Whether a log can be resumed with ``settings``: the same settings, except that a ``bayes``, ``shared`` or
    ``random`` search may be extended to a larger budget (its first trials do not depend on the budget; the grid's
    points do). A smaller budget than the log holds is refused by the caller."""
    if header.get("hash") == digest and header["settings"] == settings:
        return True
    logged = header["settings"]
    if not isinstance(logged, dict) or settings.get("strategy") == "grid":
        return False
    return {k: v for k, v in logged.items() if k != "budget"} == {k: v for k, v in settings.items() if k != "budget"}


def _read_log(path: Path, settings: dict, digest: str) -> tuple[list[dict], str, bool]:
    """The logged trials of a log written with these settings: [] for a new (or empty) log, which is created.

    Raises before writing anything if the log belongs to other settings or is not a search log. Also returns the
    checksum the next trial line chains to, and whether the log's format carries checksums.
    """
    raw = path.read_bytes() if path.exists() else b""
    prefix = b'{"' + _MAGIC.encode() + b'"'
    if raw and not (raw.startswith(prefix) or (b"\n" not in raw and prefix.startswith(raw))):
        raise NbmergeError(f"{path} exists and is not an nbmerge search log; refusing to overwrite it "
                           "(choose another log path)")
    lines = raw.split(b"\n")
    # Every write ends with a newline, so text after the last one is a line that a crash cut short.
    complete, partial = lines[:-1], lines[-1]
    if not complete:
        header = {_MAGIC: LOG_FORMAT, "hash": digest, "settings": settings, "versions": _versions(),
                  "created": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
        line = json.dumps(header)
        atomic_write_text(path, line + "\n")  # a new log, or one whose header never finished
        return [], hashlib.sha256(line.encode()).hexdigest()[:16], True
    records = []
    for number, line in enumerate(complete, start=1):
        try:
            records.append(json.loads(line))
        except ValueError:
            raise NbmergeError(f"{path}, line {number}: not valid JSON; the log is corrupt (a crash can only cut "
                               "the last line short). Move it away to start again") from None
    header, trials = records[0], records[1:]
    if not isinstance(header, dict) or header.get(_MAGIC) not in _READABLE_FORMATS or "settings" not in header:
        raise NbmergeError(f"{path}: line 1 is not a format-{LOG_FORMAT} search log header")
    if not _compatible(header, settings, digest):
        raise NbmergeError(f"{path} was written by a search with different settings "
                           f"({_differences(settings, header['settings'])}); use another log path, or the "
                           "settings it records. The log was left as it is")
    for number, record in enumerate(trials, start=2):
        expected = number - 2
        if not isinstance(record, dict) or record.get("trial") != expected or "params" not in record \
                or "value" not in record:
            raise NbmergeError(f"{path}, line {number}: expected the record of trial {expected}, got {record!r:.200}")
    last = _verify_chain(path, complete[0], header, trials)
    if partial:
        atomic_write_text(path, b"\n".join(complete).decode() + "\n")  # drop the cut-short line, atomically
    return trials, last, header[_MAGIC] >= 2


class _Log:
    """Append-only JSON lines, each flushed and fsynced before the next trial starts."""

    def __init__(self, path: Optional[Path], previous: str = "", checked: bool = True):
        self.handle = open(path, "a", encoding="utf-8") if path is not None else None
        self.previous, self.checked = previous, checked

    def write(self, record: dict) -> None:
        if self.handle is None:
            return
        if self.checked:
            record = {**record, "check": _chain(self.previous, record)}
            self.previous = record["check"]
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def _logged_batch(path: Optional[Path]) -> Optional[int]:
    """The batch size a log's header records (1 when it records none), or None when there is no readable header:
    a resumed bayes/shared search keeps the batch its log was written with, whatever ``workers`` now is."""
    if path is None or not path.is_file():
        return None
    try:
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
        return int(header["settings"].get("batch", 1)) if header.get(_MAGIC) in _READABLE_FORMATS else None
    except (ValueError, KeyError, TypeError, AttributeError, OSError):
        return None  # _read_log says what is wrong with it


# -- the search ----------------------------------------------------------------------------------------------------

def _check_int(name: str, value, low: int, high: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
            or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise NbmergeError(f"search: {name} must be an integer {bound}, got {value!r}")
    return int(value)


def _value_and_metrics(out: Any, index: int, params: dict) -> tuple[float, dict]:
    if isinstance(out, Mapping):
        if "value" not in out:
            raise NbmergeError(f"trial {index}: the objective returned a dict without 'value' (keys {sorted(out)})")
        value, metrics = out["value"], {k: v for k, v in out.items() if k != "value"}
    else:
        value, metrics = out, {}
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise NbmergeError(f"trial {index}: the objective must return a finite number, got {value!r} at {params}")
    return float(value), jsonable(metrics, f"trial {index} metrics")


def search(objective: Callable[[dict[str, float]], Any], space: Space, *, strategy: str = "bayes",
           budget: Optional[int] = None, seed: int = 0, log_path: Union[str, os.PathLike, None] = None,
           n_initial: Optional[int] = None, initial_design: str = "sobol", xi: float = 0.01,
           grid_sizes: Union[int, Mapping[str, int]] = DEFAULT_GRID, settings: Optional[Mapping] = None,
           progress: bool = True, desc: str = "search", workers: Optional[int] = None, batch: Optional[int] = None,
           executor=None) -> SearchResult:
    """Maximise ``objective`` over ``space``; see the module docstring for strategies, the log and resuming.

    ``budget``: trials (default 20; ``grid``: the grid's size, and a given budget must equal it). ``n_initial``:
    space-filling points before the GP (``bayes``/``shared``; default min(5, budget)). ``initial_design``: skopt's
    initial point generator. ``xi``: EI's exploration margin (skopt's default 0.01, on the normalised target).
    ``settings``: the caller's description of the objective (JSON-able); it joins the log's identity, so a log
    cannot be resumed against another objective. ``seed`` fixes every proposal: same seed, same points.

    ``workers``: trials evaluated at once (default 1, or ``executor.workers``); more than 1 without an ``executor``
    runs them on a local Ray cluster (``nbmerge.tune.distributed.RayExecutor``; ``objective`` may then be a recipe with
    ``build_objective()``, built once per worker). ``batch``: points proposed at a time (default: the batch a
    resumed log records, else ``workers``); for bayes/shared a batch above 1 changes the proposals (constant liar)
    and is recorded in the log's settings; random and grid points do not depend on it. ``executor``: who runs the
    trials (:class:`InProcess` by default); the caller keeps ownership of one it passes.
    """
    start = time.perf_counter()
    if not isinstance(space, Space):
        raise NbmergeError(f"search: space must be a Space, got {type(space).__name__}")
    if strategy not in STRATEGIES:
        raise NbmergeError(f"search: strategy must be one of {STRATEGIES}, got {strategy!r}")
    seed = _check_int("seed", seed, 0, 2**32 - 1)
    workers = _check_int("workers", getattr(executor, "workers", 1) if workers is None else workers, 1)
    if strategy == "shared" and not space.tied:
        raise NbmergeError("search: strategy 'shared' needs a space with tied names (Space(..., tied=[...]))")
    searched = space.reduced() if strategy in ("shared", "grid") else space
    if strategy == "grid":
        size = len(grid_points(searched, grid_sizes))
        if budget is not None and budget != size:
            raise NbmergeError(f"search: the grid has {size} points; leave budget out or set it to {size}")
        budget = size
    budget = _check_int("budget", DEFAULT_BUDGET if budget is None else budget, 1)
    path = Path(log_path) if log_path is not None else None
    if batch is None:
        batch = (_logged_batch(path) or workers) if strategy in ("bayes", "shared") else workers
    batch = _check_int("batch", batch, 1)
    if workers > batch:
        warnings.warn(f"search: {workers} workers but batches of {batch} point(s)"
                      + (" (the batch the log was written with)" if path is not None and path.exists() else "")
                      + f": only {batch} of them will be busy at a time", NbmergeWarning, stacklevel=2)
    identity: dict[str, Any] = {"strategy": strategy, "space": space.to_dict(), "seed": seed, "budget": budget}
    if strategy in ("bayes", "shared"):
        n_initial = min(DEFAULT_INITIAL, budget) if n_initial is None else n_initial
        n_initial = _check_int("n_initial", n_initial, 1, budget)
        if initial_design not in INITIAL_DESIGNS:
            raise NbmergeError(f"search: initial_design must be one of {INITIAL_DESIGNS}, got {initial_design!r}")
        if isinstance(xi, bool) or not isinstance(xi, (int, float)) or not xi >= 0:
            raise NbmergeError(f"search: xi must be a number >= 0, got {xi!r}")
        identity.update(surrogate="GP Matern-5/2 (skopt)", acquisition="EI", n_initial=n_initial,
                        initial_design=initial_design, xi=float(xi))
        if batch > 1:  # absent at 1: a sequential search's log is exactly what it was before batches existed
            identity.update(batch=batch, batch_strategy=f"constant liar (skopt {BATCH_STRATEGY})")
    elif strategy == "grid":
        identity["grid_sizes"] = grid_sizes if isinstance(grid_sizes, int) else dict(grid_sizes)
    identity["objective"] = jsonable(dict(settings or {}), "search settings")
    identity = json.loads(json.dumps(identity))  # exactly what a log read back will hold
    digest = _settings_hash(identity)

    if strategy in ("bayes", "shared"):
        proposer = _Bayes(searched, seed, n_initial, initial_design, float(xi))
    elif strategy == "random":
        proposer = _Random(searched, seed)
    else:
        proposer = _Grid(searched, grid_sizes)

    lock = _Lock(path) if path is not None else None
    owned = None
    try:
        if executor is None:
            if workers == 1:
                executor = owned = InProcess(objective)
            else:
                from .distributed import RayExecutor

                executor = owned = RayExecutor(objective, workers)
        return _run(executor, space, searched, proposer, strategy, budget, batch, identity, digest, path,
                    progress, desc, start)
    finally:
        if owned is not None:
            owned.close()
        if lock is not None:
            lock.release()


def _replayed(record: dict, space: Space, searched: Space, path: Optional[Path]) -> tuple[Trial, list[float]]:
    """A logged trial, and its point in the searched space (what the optimiser is told)."""
    index = record["trial"]
    space.check(record["params"], f"{path}, trial {index}")
    point = list(space.reduce(record["params"]).values()) if searched is not space \
        else [float(record["params"][n]) for n in space.names]
    value, error = record["value"], record.get("error")
    if error is not None:
        if value is not None:
            raise NbmergeError(f"{path}, trial {index}: a failed trial cannot have a value ({value!r})")
        value = float("nan")
    elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise NbmergeError(f"{path}, trial {index}: value {value!r} is not a finite number")
    trial = Trial(index, {n: float(record["params"][n]) for n in space.names}, float(value),
                  float(record.get("seconds", 0.0)), float(record.get("search_seconds", 0.0)),
                  record.get("metrics", {}), replayed=True, error=error)
    return trial, point


def _evaluate(executor, fresh: dict[int, dict], search_seconds: float):
    """Run a batch's new trials on ``executor``; yield each as a ``Trial`` in proposal order, as soon as every
    earlier one is done (so the log never waits for more than it must). A trial whose worker failed is submitted
    once more; failing again, it is yielded as failed, with its error, and the search goes on."""
    attempts = dict.fromkeys(fresh, 1)
    for index, params in fresh.items():
        executor.submit(index, params)
    order, done = sorted(fresh), {}
    while order:
        index, outcome = executor.next()
        if outcome.error is not None and attempts[index] < ATTEMPTS:
            attempts[index] += 1
            executor.submit(index, fresh[index])
            continue
        done[index] = outcome
        while order and order[0] in done:
            index = order.pop(0)
            outcome, params = done.pop(index), fresh[index]
            if outcome.error is not None:
                error = f"{outcome.error} (failed {ATTEMPTS} times)"
                warnings.warn(f"trial {index} failed: {error}; logged as failed, the search goes on",
                              NbmergeWarning, stacklevel=2)
                yield Trial(index, params, float("nan"), outcome.seconds, search_seconds, {}, error=error)
            else:
                value, metrics = _value_and_metrics(outcome.out, index, params)
                yield Trial(index, params, value, outcome.seconds, search_seconds, metrics)


def _told_values(batch: list[Trial], trials: list[Trial]) -> list[float]:
    """What the optimiser is told for a batch: each value, and for a failed trial the worst value among every
    successful trial so far (a region where trials fail is not worth revisiting). Depends only on the logged
    trials, in order, so a replay tells exactly the same."""
    if not any(t.failed for t in batch):
        return [t.value for t in batch]
    succeeded = [t.value for t in trials if not t.failed]
    if not succeeded:
        first = next(t for t in trials if t.failed)
        raise NbmergeError(f"every trial so far failed (trial {first.index}: {first.error}); the log keeps them. "
                           "Fix the cause and move the log away to start again")
    return [min(succeeded) if t.failed else t.value for t in batch]


def _run(executor, space: Space, searched: Space, proposer, strategy: str, budget: int, batch: int,
         identity: dict, digest: str, path: Optional[Path], progress: bool, desc: str, start: float) -> SearchResult:
    records, previous, checked = _read_log(path, identity, digest) if path is not None else ([], "", True)
    if len(records) > budget:
        raise NbmergeError(f"{path} holds {len(records)} trials, more than the budget {budget}")

    trials: list[Trial] = []
    mismatches = 0
    log = _Log(path, previous, checked)
    bar = progress_bar(budget, desc, quiet=not progress, initial=min(len(records), budget))
    telling = 0.0  # the previous batch's tell: the optimiser time of this batch's trials is that plus its ask
    try:
        # Batch j is always trials [j·batch, (j+1)·batch), asked whole even where the budget cuts it (the extra
        # points are dropped): a larger budget then extends a search exactly, and a resumed log replays the same
        # asks and tells as the run that wrote it.
        for first in range(0, budget, batch):
            asked = time.perf_counter()
            points = proposer.ask_batch(batch)[:budget - first]
            share = (telling + time.perf_counter() - asked) / len(points)
            fresh = {}
            for offset, point in enumerate(points):
                index = first + offset
                if index < len(records):
                    trial, logged = _replayed(records[index], space, searched, path)
                    if not all(math.isclose(a, b, rel_tol=_REPLAY_TOLERANCE, abs_tol=_REPLAY_TOLERANCE)
                               for a, b in zip(point, logged)):
                        mismatches += 1
                    points[offset] = logged  # the logged point and value are what the optimiser is told
                    trials.append(trial)
                else:
                    fresh[index] = space.expand(dict(zip(searched.names, point)))
            for trial in _evaluate(executor, fresh, share):
                log.write(trial.to_dict())
                trials.append(trial)
                bar.update(1)
                best = [t.value for t in trials if not t.failed]
                if best:
                    bar.set_postfix(best=f"{max(best):.4g}")
            told = time.perf_counter()
            proposer.tell_batch(points, _told_values(trials[first:], trials), last=first + len(points) == budget)
            telling = time.perf_counter() - told
    finally:
        bar.close()
        log.close()
    return SearchResult(strategy, space, identity, digest, trials, time.perf_counter() - start, path, mismatches)


def read_log(path: Union[str, os.PathLike]) -> tuple[dict, list[Trial]]:
    """(header, trials) of a search log, without an optimiser (for tables and figures); a cut-short last line is
    ignored and the file is not touched."""
    lines = Path(path).read_bytes().split(b"\n")[:-1]
    try:
        records = [json.loads(line) for line in lines]
    except ValueError:
        raise NbmergeError(f"{path}: a complete line is not valid JSON; the log is corrupt") from None
    if not records or not isinstance(records[0], dict) or records[0].get(_MAGIC) not in _READABLE_FORMATS:
        raise NbmergeError(f"{path}: not a format-{LOG_FORMAT} search log")
    _verify_chain(Path(path), lines[0], records[0], records[1:])
    trials = [Trial(r["trial"], r["params"], float("nan") if r.get("error") is not None else r["value"],
                    r.get("seconds", 0.0), r.get("search_seconds", 0.0), r.get("metrics", {}), replayed=True,
                    error=r.get("error")) for r in records[1:]]
    return records[0], trials
