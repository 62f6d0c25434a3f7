"""The rules of the notebooks' parameters, each written once, on the config field it constrains.

A notebook's config (``TourConfig``, ``AceConfig`` ...) declares each knob with its type and, where its values are
constrained, its rule: ``budget: int = knob(BUDGET)``. The same rules run in two places, from the one declaration:

* when the config is built (``nbmerge.params.build_config`` in the notebook, or a test), by :func:`check` in the
  config's ``__post_init__``: a wrong value fails before any work, in JupyterLab too;
* before any kernel starts, when ``nbmerge report`` checks a run's parameters (``nbmerge.report.validate``): each
  notebook's parameters (its defaults under every layer) are checked by its config's rules, so a bad value fails in
  one line naming every problem, rather than inside the notebook minutes later.

A rule is a function ``(value, params) → None | problem``: ``params`` holds the notebook's other parameters (for
rules such as "at most ``budget``"); a problem is a short sentence that ends with the allowed values. Rules shared by
several notebooks are the constants below; a rule of one notebook is written beside its config.
"""

from __future__ import annotations

import math
import os
import typing
from dataclasses import field, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from ..errors import ParameterError, did_you_mean
from ..params import example_of, fits

Check = Callable[[Any, Mapping[str, Any]], Optional[str]]


def knob(*checks: Check):
    """A config field constrained by ``checks`` (applied in order; the first problem is reported)."""
    return field(metadata={"rules": checks})


def rules_of(cls) -> dict[str, tuple[Check, ...]]:
    """Field name → its rules, for a config dataclass."""
    return {f.name: tuple(f.metadata.get("rules", ())) for f in fields(cls) if f.init}


def problems(cls, params: Mapping[str, Any]) -> dict[str, str]:
    """Field → problem, for the values ``params`` would give the config ``cls`` (its type, then its rules). Fields
    ``params`` lacks are not checked (``build_config`` says which are missing)."""
    hints = typing.get_type_hints(cls)
    found = {}
    for name, checks in rules_of(cls).items():
        if name not in params:
            continue
        value, declared = params[name], example_of(hints[name])
        if not fits(value, declared):
            found[name] = f"expected {type(declared).__name__} (like {declared!r}), got {value!r}"
            continue
        for one in checks:
            problem = one(value, params)
            if problem:
                found[name] = problem
                break
    return found


def check(config) -> None:
    """Raise ``ParameterError`` naming every field of ``config`` that breaks its type or its rules."""
    params = {f.name: getattr(config, f.name) for f in fields(config)}
    found = problems(type(config), params)
    if found:
        raise ParameterError("; ".join(f"parameter {name!r} = {params[name]!r}: {problem}"
                                       for name, problem in found.items()))


def normalise(config, floats: tuple[str, ...] = ()) -> None:
    """After :func:`check`: every list-valued field of ``config`` as a tuple (of floats for the fields ``floats``
    names), and its ``device`` resolved (``auto`` → ``cuda`` or ``cpu``)."""
    from ..device import resolve_device

    hints = typing.get_type_hints(type(config))
    for f in fields(config):
        if f.name == "device":
            object.__setattr__(config, "device", resolve_device(config.device))
        elif isinstance(example_of(hints[f.name]), tuple):
            value = getattr(config, f.name)
            object.__setattr__(config, f.name, tuple(float(v) for v in value) if f.name in floats else tuple(value))


# ---------------------------------------------------------------------------------------------- rule builders

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def listing(values) -> str:
    return ", ".join(str(v) for v in values)


def count(minimum: int, at_most: Optional[str] = None, optional: bool = False) -> Check:
    """An integer ≥ ``minimum`` (≤ the parameter ``at_most`` when that is a valid integer; ``None`` allowed when
    ``optional``)."""
    def rule(value, params):
        if optional and value is None:
            return None
        limit = params.get(at_most) if at_most else None
        if not (_is_int(limit) and limit >= minimum):  # a bad bound is reported as its own problem
            limit = None
        if not _is_int(value) or value < minimum or (limit is not None and value > limit):
            bound = f" and <= {at_most} ({limit})" if limit is not None else ""
            return f"must be {'None or ' if optional else ''}an integer >= {minimum}{bound}, got {value!r}"
        return None
    return rule


def number(low: float, high: float = math.inf, low_open: bool = False, high_open: bool = False) -> Check:
    """A finite number in the interval (``low_open``/``high_open``: the bound itself excluded)."""
    left, right = ("(" if low_open else "["), (")" if high_open or high == math.inf else "]")

    def rule(value, _params):
        ok = _is_real(value) and (value > low if low_open else value >= low) \
            and (value < high if high_open else value <= high)
        if not ok:
            return f"must be a finite number in {left}{low:g}, {high:g}{right}, got {value!r}"
        return None
    return rule


def one_of(what: str, choices: Callable[[], Any]) -> Check:
    """One of ``choices()`` (computed on use: the registry and the zoo are imported only when needed)."""
    def rule(value, _params):
        allowed = list(choices())
        if value not in allowed:
            return f"unknown {what} {value!r}{did_you_mean(str(value), allowed)}; allowed: {listing(allowed)}"
        return None
    return rule


def list_of(item: Check, non_empty: bool = True, distinct: bool = False,
            sizes: Optional[tuple[int, ...]] = None) -> Check:
    """A list whose every element passes ``item``."""
    def rule(value, params):
        if not isinstance(value, (list, tuple)):
            return f"must be a list, got {value!r}"
        if non_empty and not value:
            return "must not be empty"
        if sizes is not None and len(value) not in sizes:
            return f"must have {' or '.join(map(str, sizes))} entries, got {len(value)}"
        if distinct and len(set(map(repr, value))) != len(value):
            return f"must not repeat an entry, got {list(value)}"
        for element in value:
            problem = item(element, params)
            if problem:
                return problem
        return None
    return rule


def at_most_entries_of(other: str) -> Check:
    """An integer no larger than the length of the list parameter ``other``."""
    def rule(value, params):
        entries = params.get(other)
        if isinstance(entries, (list, tuple)) and _is_int(value) and value > len(entries):
            return f"must be <= the number of {other} ({len(entries)}), got {value!r}"
        return None
    return rule


# ------------------------------------------------------------------------------------------------------- names

def _embedded_suites() -> dict[str, tuple[str, ...]]:
    from ..pools.zoo import suites

    return suites()


def _cache(params: Mapping[str, Any]) -> Path:
    from ..pools.store import cache_root

    return cache_root(params.get("cache") or None)


def _imported_pools(params: Mapping[str, Any]) -> list[str]:
    from ..pools.kinds import is_pool

    pools = _cache(params) / "pools"
    return sorted(p.parent.name for p in pools.glob("*/manifest.json") if is_pool(p.parent.name)) \
        if pools.is_dir() else []


def _pool_problem(suite: str, params: Mapping[str, Any]) -> Optional[str]:
    """A ``clip-...`` pool is valid when imported in the notebook's cache, or when the notebook is given
    ``checkpoints`` and ``data_root`` to import it from (``common.prepare_suites``) and the name says which tasks."""
    from ..errors import NbmergeError
    from ..pools.imports import pool_tasks
    from ..pools.zoo import suite_dir

    if (suite_dir(suite, params.get("cache") or None) / "manifest.json").is_file():
        return None
    if params.get("checkpoints") and params.get("data_root"):
        try:
            pool_tasks(suite)
        except NbmergeError as err:
            return f"cannot import pool {suite!r}: {err}"
        return None
    imported = _imported_pools(params)
    return (f"pool {suite!r} is not imported in {_cache(params) / 'pools'} and the notebook has no checkpoints and "
            f"data_root to import it from; allowed: {listing(_embedded_suites())}"
            + (f", or an imported pool: {listing(imported)}" if imported else " (no pool is imported there)"))


def suite_name(value, params: Mapping[str, Any]) -> Optional[str]:
    """An embedded suite, or a pool imported in the notebook's cache (or importable from its checkpoints)."""
    from ..pools.kinds import POOL_PREFIXES, is_pool

    if not isinstance(value, str):
        return f"must be a suite name, got {value!r}"
    known = _embedded_suites()
    if value in known:
        return None
    if is_pool(value):
        return _pool_problem(value, params)
    imported = _imported_pools(params)
    return (f"unknown suite {value!r}{did_you_mean(value, known)}; allowed: {listing(known)}"
            + (f", or an imported pool: {listing(imported)}" if imported else "")
            + f" (or a {'/'.join(POOL_PREFIXES)}<model>-<n> pool given checkpoints and data_root)")


def _suite_tasks(suite: Any, params: Mapping[str, Any]) -> Optional[list[str]]:
    """The tasks of ``suite`` when they are known before it is opened (an embedded suite, an imported pool)."""
    import json

    from ..pools.kinds import is_pool
    from ..pools.zoo import suite_dir

    if not isinstance(suite, str):
        return None
    known = _embedded_suites()
    if suite in known:
        return list(known[suite])
    manifest = suite_dir(suite, params.get("cache") or None) / "manifest.json"
    if is_pool(suite) and manifest.is_file():
        try:
            return list(json.loads(manifest.read_text())["tasks"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None


def task_of_suite(value, params: Mapping[str, Any]) -> Optional[str]:
    tasks = _suite_tasks(params.get("suite"), params)
    if tasks is not None and value not in tasks:
        return f"unknown task {value!r} of suite {params.get('suite')!r}; allowed: {listing(tasks)}"
    return None


def in_suites(value, params: Mapping[str, Any]) -> Optional[str]:
    suites = params.get("suites") or []
    if value not in suites:
        return f"must be one of the notebook's suites ({listing(suites)}), got {value!r}"
    return None


# Statistics a notebook can give a merge method: data Grams (collected from the zoo's training split). No notebook
# computes Fisher information, so a method that needs it cannot run in one.
NOTEBOOK_STATISTICS = {"grams"}


def method_names(data_free: bool = False, anchor: bool = False) -> list[str]:
    """The registered methods a notebook can run (``data_free``: that need no data; ``anchor``: that can be BMM's
    prior mean, i.e. neither BMM itself nor a learned method, which nothing would learn)."""
    from ..methods import all_methods

    return [m.name for m in all_methods()
            if set(m.needs) <= NOTEBOOK_STATISTICS and not (data_free and not m.data_free)
            and not (anchor and (m.name == "bmm" or m.learned))]


def method(data_free: bool = False, anchor: bool = False) -> Check:
    """A registered method a notebook can run (see :func:`method_names`); a registered one it cannot is refused
    with the reason."""
    what = ("data-free " if data_free else "") + ("anchor" if anchor else "method")

    def rule(value, params):
        from ..methods import all_methods

        allowed = method_names(data_free, anchor)
        registered = {m.name: m for m in all_methods()}
        if value in allowed or value not in registered:
            return one_of(what, lambda: allowed)(value, params)
        spec = registered[value]
        if anchor and value == "bmm":
            why = "the anchor cannot be bmm itself"
        elif anchor and spec.learned:
            why = "a learned method cannot be an anchor (nothing would learn it there)"
        elif set(spec.needs) - NOTEBOOK_STATISTICS:
            why = f"it needs {', '.join(sorted(set(spec.needs) - NOTEBOOK_STATISTICS))}, which no notebook computes"
        else:
            why = "it needs data Grams, so the data-free BMM built on it would use data"
        return f"{what} {value!r} cannot be used here: {why}; allowed: {listing(allowed)}"
    return rule


def device_name(value, _params) -> Optional[str]:
    from ..device import resolve_device

    try:
        resolve_device(value)
    except ValueError as err:
        return f"{err}"
    return None


def existing_path_or_empty(value, _params) -> Optional[str]:
    if value and not Path(str(value)).expanduser().exists():
        return f"{value!r} does not exist (empty: not used)"
    return None


def writable_folder_or_empty(value, _params) -> Optional[str]:
    """A folder nbmerge can create or write into (its closest existing ancestor is a writable folder)."""
    if not value:
        return None
    path = Path(str(value)).expanduser()
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        why = "not a folder" if not probe.is_dir() else "not writable"
        return f"{value!r} cannot be created or written ({probe} is {why})"
    return None


def ray_address(value, _params) -> Optional[str]:
    """Empty (a local cluster), ``auto``, or HOST:PORT whose host resolves."""
    import socket

    if value in ("", "auto", "local"):
        return None
    host, sep, port = str(value).removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"{value!r} is not HOST:PORT (empty: start a local Ray cluster; auto: the running one)"
    try:
        socket.getaddrinfo(host, int(port))
    except OSError:
        return f"{value!r}: the host {host!r} does not resolve"
    return None


def workers_available(value, _params) -> Optional[str]:
    """More than one worker runs trials on Ray, which must be installed (``nbmerge[distributed]``)."""
    from ..errors import NbmergeError
    from ..tune.distributed import import_ray

    if _is_int(value) and value > 1:
        try:
            import_ray()
        except NbmergeError as err:
            return str(err)
    return None


def strategies() -> list[str]:
    from ..tune.search import STRATEGIES

    return list(STRATEGIES)


def variants() -> list[str]:
    from ..tune.study import VARIANTS

    return list(VARIANTS)


# ------------------------------------------------------------------------------------------- shared rules

POSITIVE = number(0.0, low_open=True)
SEED = count(0)
SEEDS = list_of(SEED, distinct=True)
SUITE = suite_name
SUITES = list_of(suite_name, distinct=True)
DEVICE = device_name
CACHE = writable_folder_or_empty
COUNT = count(1)                  # budgets, repetitions, sizes: at least one
COUNT_OR_ALL = count(0)           # 0 where the notebook reads it as "all" or "the zoo's own"
BUDGET = COUNT
N_INITIAL = count(1, at_most="budget", optional=True)   # space-filling trials before BO proposes (None: min(5, budget))
ANCHOR = method(anchor=True)
ANCHORS = list_of(ANCHOR, distinct=True)
DATA_FREE_ANCHOR = method(data_free=True, anchor=True)
STRATEGY = one_of("strategy", strategies)
VARIANT = one_of("variant", variants)
POSITIVES = list_of(POSITIVE)
UNIT_FRACTION = number(0.0, 1.0, low_open=True)
# what notebooks hand to ``common.prepare_suites`` rather than to their config: checked by the report pipeline
SUITE_INPUTS: dict[str, Check] = {"checkpoints": existing_path_or_empty, "data_root": existing_path_or_empty}
