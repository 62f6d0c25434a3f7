"""Checks of the notebooks' parameter values, made before any notebook runs.

``resolve_parameters`` already checks that a layer only sets parameters a notebook declares, with the declared type.
This module checks the *values*: a suite that exists, registered merge methods, known strategies, variants, Gram
sources and families, counts and budgets in range, a usable device. A wrong value otherwise fails only inside the
notebook, after minutes of work (``-p methods '[ties, nosuch]'`` at cell 13).

The checks are a table, parameter name → check, applied to every notebook's merged parameters (its own defaults
under every layer), so a new notebook gets them by naming its knobs as the others do; ``NOTEBOOK_RULES`` holds the
few constraints that belong to one notebook. A check returns ``None`` or the problem as a short sentence that
ends with the allowed values.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from ..errors import ParameterError, did_you_mean


@dataclass(frozen=True)
class Context:
    """What a check may look at besides the value: the notebook and its merged parameters."""

    notebook: str
    params: dict[str, Any]


Check = Callable[[Any, Context], Optional[str]]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _listing(values) -> str:
    return ", ".join(str(v) for v in values)


# ---------------------------------------------------------------------------------------------- check builders

def count(minimum: int) -> Check:
    """An integer ≥ ``minimum``."""
    def check(value, _ctx):
        if not _is_int(value) or value < minimum:
            return f"must be an integer >= {minimum}, got {value!r}"
        return None
    return check


def optional_count(minimum: int, at_most: Optional[str] = None) -> Check:
    """``None`` or an integer ≥ ``minimum`` (and ≤ the parameter ``at_most`` when that is set)."""
    def check(value, ctx):
        if value is None:
            return None
        limit = ctx.params.get(at_most) if at_most else None
        if not (_is_int(limit) and limit >= minimum):  # a bad bound is reported as its own problem
            limit = None
        if not _is_int(value) or value < minimum or (_is_int(limit) and value > limit):
            bound = f" and <= {at_most} ({limit})" if _is_int(limit) else ""
            return f"must be None or an integer >= {minimum}{bound}, got {value!r}"
        return None
    return check


def number(low: float, high: float = math.inf, low_open: bool = False, high_open: bool = False) -> Check:
    """A finite number in the interval (``low_open``/``high_open``: the bound itself excluded)."""
    left, right = ("(" if low_open else "["), (")" if high_open or high == math.inf else "]")

    def check(value, _ctx):
        ok = _is_real(value) and (value > low if low_open else value >= low) \
            and (value < high if high_open else value <= high)
        if not ok:
            return f"must be a finite number in {left}{low:g}, {high:g}{right}, got {value!r}"
        return None
    return check


def one_of(what: str, choices: Callable[[], list[str]]) -> Check:
    """One of ``choices()`` (computed on use: the registry and the zoo are imported only when needed)."""
    def check(value, _ctx):
        allowed = choices()
        if value not in allowed:
            return f"unknown {what} {value!r}{did_you_mean(value, allowed)}; allowed: {_listing(allowed)}"
        return None
    return check


def list_of(item: Check, non_empty: bool = True, distinct: bool = False,
            sizes: Optional[tuple[int, ...]] = None) -> Check:
    """A list whose every element passes ``item``."""
    def check(value, ctx):
        if not isinstance(value, (list, tuple)):
            return f"must be a list, got {value!r}"
        if non_empty and not value:
            return "must not be empty"
        if sizes is not None and len(value) not in sizes:
            return f"must have {' or '.join(map(str, sizes))} entries, got {len(value)}"
        if distinct and len(set(map(repr, value))) != len(value):
            return f"must not repeat an entry, got {list(value)}"
        for element in value:
            problem = item(element, ctx)
            if problem:
                return problem
        return None
    return check


def all_of(*checks: Check) -> Check:
    def check(value, ctx):
        for one in checks:
            problem = one(value, ctx)
            if problem:
                return problem
        return None
    return check


# ------------------------------------------------------------------------------------------------------- names

def _embedded_suites() -> dict[str, tuple[str, ...]]:
    from ..pools.zoo import suites

    return suites()


def _cache(ctx: Context) -> Path:
    from ..pools.zoo import cache_root

    return cache_root(ctx.params.get("cache") or None)


def _imported_pools(ctx: Context) -> list[str]:
    pools = _cache(ctx) / "pools"
    from ..pools.zoo import is_pool

    return sorted(p.parent.name for p in pools.glob("*/manifest.json") if is_pool(p.parent.name)) \
        if pools.is_dir() else []


def _pool_problem(suite: str, ctx: Context) -> Optional[str]:
    """A ``clip-...`` pool is valid when imported in the notebook's cache, or when the notebook is given
    ``checkpoints`` and ``data_root`` to import it from (``prepare_suites``) and the name says which tasks."""
    from ..pools.zoo import suite_dir

    if (suite_dir(suite, ctx.params.get("cache") or None) / "manifest.json").is_file():
        return None
    if ctx.params.get("checkpoints") and ctx.params.get("data_root"):
        from ..errors import NbmergeError
        from ..pools.imports import pool_tasks

        try:
            pool_tasks(suite)
        except NbmergeError as err:
            return f"cannot import pool {suite!r}: {err}"
        return None
    return (f"pool {suite!r} is not imported in {_cache(ctx) / 'pools'} and the notebook has no checkpoints and "
            f"data_root to import it from; allowed: {_listing(_embedded_suites())}{_pools_text(ctx)}")


def _pools_text(ctx: Context) -> str:
    imported = _imported_pools(ctx)
    return f", or an imported pool: {_listing(imported)}" if imported else " (no pool is imported there)"


def suite_name(value, ctx: Context) -> Optional[str]:
    if not isinstance(value, str):
        return f"must be a suite name, got {value!r}"
    known = _embedded_suites()
    if value in known:
        return None
    from ..pools.zoo import is_pool

    if is_pool(value):
        return _pool_problem(value, ctx)
    imported = _imported_pools(ctx)
    return (f"unknown suite {value!r}{did_you_mean(value, known)}; allowed: {_listing(known)}"
            + (f", or an imported pool: {_listing(imported)}" if imported else "")
            + " (or a clip-/glue-/lm-<model>-<n> pool given checkpoints and data_root)")


def _suite_tasks(suite: Any, ctx: Context) -> Optional[list[str]]:
    """The tasks of ``suite`` when they are known before it is opened (an embedded suite, an imported pool)."""
    if not isinstance(suite, str):
        return None
    known = _embedded_suites()
    if suite in known:
        return list(known[suite])
    from ..pools.zoo import is_pool, suite_dir

    manifest = suite_dir(suite, ctx.params.get("cache") or None) / "manifest.json"
    if is_pool(suite) and manifest.is_file():
        import json

        try:
            return list(json.loads(manifest.read_text())["tasks"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None


def task_of_suite(value, ctx: Context) -> Optional[str]:
    tasks = _suite_tasks(ctx.params.get("suite"), ctx)
    if tasks is not None and value not in tasks:
        return f"unknown task {value!r} of suite {ctx.params.get('suite')!r}; allowed: {_listing(tasks)}"
    return None


# Statistics a notebook can give a merge method: data Grams (collected from the zoo's training split). No notebook
# computes Fisher information, so a method that needs it cannot run in one.
NOTEBOOK_STATISTICS = {"grams"}


def _methods(data_free: bool = False, anchor: bool = False) -> list[str]:
    from ..methods import all_methods

    return [m.name for m in all_methods()
            if set(m.needs) <= NOTEBOOK_STATISTICS and not (data_free and not m.data_free)
            and not (anchor and (m.name == "bmm" or m.learned))]   # a learned method is no anchor: nothing learns it


def method(data_free: bool = False, anchor: bool = False) -> Check:
    what = ("data-free " if data_free else "") + ("anchor" if anchor else "method")
    return one_of(what, lambda: _methods(data_free, anchor))


def _method_or_variant(value, ctx) -> Optional[str]:
    """A registered method, or in the tour one of its trained variants (``experiments.tour.VARIANTS``)."""
    extra = TOUR_VARIANTS() if ctx.notebook == "00_tour" else []
    return one_of("method", lambda: _methods() + extra)(value, ctx)


def device_name(value, _ctx) -> Optional[str]:
    from ..device import resolve_device

    try:
        resolve_device(value)
    except ValueError as err:
        return f"{err}"
    return None


def existing_path_or_empty(value, _ctx) -> Optional[str]:
    if value and not Path(str(value)).expanduser().exists():
        return f"{value!r} does not exist (empty: not used)"
    return None


def writable_folder_or_empty(value, _ctx) -> Optional[str]:
    """A folder nbmerge can create or write into (its closest existing ancestor is a writable folder)."""
    if not value:
        return None
    path = Path(str(value)).expanduser()
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        return f"{value!r} cannot be created or written ({probe} is {'not a folder' if not probe.is_dir() else 'not writable'})"
    return None


def ray_address(value, _ctx) -> Optional[str]:
    """Empty (a local cluster), ``auto``, or HOST:PORT whose host resolves."""
    if value in ("", "auto", "local"):
        return None
    import socket

    host, sep, port = str(value).removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"{value!r} is not HOST:PORT (empty: start a local Ray cluster; auto: the running one)"
    try:
        socket.getaddrinfo(host, int(port))
    except OSError:
        return f"{value!r}: the host {host!r} does not resolve"
    return None


# The allowed values of a few parameters are the constants of the modules that use them, imported when a check runs
# (plain imports, so the import graph and tests/test_layout.py see them).

def STRATEGIES() -> list[str]:
    from ..tune.search import STRATEGIES as strategies

    return list(strategies)


def VARIANTS() -> list[str]:
    from ..tune.study import VARIANTS as variants

    return list(variants)


def GRAM_SOURCES() -> list[str]:
    from ..experiments.tour import GRAM_SOURCES as sources

    return list(sources)


def FAMILIES() -> list[str]:
    from ..experiments.pareto import FAMILIES as families

    return list(families)


def TOUR_VARIANTS() -> list[str]:
    from ..experiments.tour import VARIANTS as variants

    return list(variants)

positive = number(0.0, low_open=True)
seed_value = count(0)

# parameter name → check, for every notebook that declares the parameter
RULES: dict[str, Check] = {
    # what is merged, where and how
    "suite": suite_name,
    "suites": list_of(suite_name, distinct=True),
    "methods": list_of(_method_or_variant, distinct=True),
    "baselines": list_of(method(), non_empty=False, distinct=True),
    "anchor": method(anchor=True),
    "anchors": list_of(method(anchor=True), distinct=True),
    "bmm_anchor": method(anchor=True),
    "strategy": one_of("strategy", STRATEGIES),
    "strategies": list_of(one_of("strategy", STRATEGIES), distinct=True),
    "variant": one_of("variant", VARIANTS),
    "variants": list_of(one_of("variant", VARIANTS), distinct=True),
    "bmm_grams": list_of(one_of("Gram source", GRAM_SOURCES), non_empty=False, distinct=True),
    "families": list_of(one_of("family", FAMILIES), distinct=True),
    "tasks": list_of(task_of_suite, distinct=True, sizes=(2, 3)),
    "pareto_tasks": list_of(task_of_suite, non_empty=False, distinct=True, sizes=(0, 2)),
    "device": device_name,
    "checkpoints": existing_path_or_empty,
    "cache": writable_folder_or_empty,
    "ray_address": ray_address,
    "data_root": existing_path_or_empty,
    # seeds
    "seed": seed_value,
    "gram_seed": seed_value,
    "seeds": list_of(seed_value, distinct=True),
    # counts and budgets (0 where the notebook reads 0 as "all" or "the zoo's own")
    **{name: count(1) for name in (
        "budget", "search_seeds", "repeats", "grid_size", "gram_examples", "wudi_steps", "samples",
        "components", "pareto_components", "pareto_divisions", "em_iterations", "sg_examples", "bootstrap",
        "multitask_divisions_2", "multitask_divisions_3", "front_divisions_2", "front_divisions_3",
        "timing_repeats", "bench_trials", "workers", "grid_repeats", "timing_trials", "ablation_seeds",
        "adamerging_steps")},
    **{name: count(0) for name in (
        "val_examples", "depth_bins", "ivon_steps", "pareto_ivon_steps", "multitask_steps", "timing_divisions_2",
        "timing_divisions_3")},
    "n_initial": optional_count(1, at_most="budget"),
    # real-valued knobs
    **{name: positive for name in ("eps", "timing_cap_s", "a5_margin", "margin", "ivon_lr", "ivon_ess",
                                   "ivon_hess_init")},
    **{name: number(0.0) for name in ("prior_weight_decay", "em_tolerance")},
    **{name: number(0.0, 1.0, low_open=True) for name in ("top_fraction", "k_fraction")},
    "ivon_beta2": number(0.0, 1.0, high_open=True),
    **{name: list_of(positive) for name in ("scale_grid", "ablation_grid", "temperatures", "hetero_lr_factors",
                                            "hetero_step_factors")},
}


def _in_suites(value, ctx: Context) -> Optional[str]:
    suites = ctx.params.get("suites") or []
    if value not in suites:
        return f"must be one of the notebook's suites ({_listing(suites)}), got {value!r}"
    return None


def _tour_anchor(value, ctx: Context) -> Optional[str]:
    if ctx.params.get("bmm_grams"):  # data-free BMM on an anchor that needs data would use data
        return method(data_free=True, anchor=True)(value, ctx)
    return None


# notebook → {parameter → check}: constraints of one notebook, checked after the table's
NOTEBOOK_RULES: dict[str, dict[str, Check]] = {
    "20_bmm_benchmark": {"suite": _in_suites},
    "22_bmm_datafree": {"anchors": list_of(method(data_free=True, anchor=True))},
    "21_bmm_calibration": {"samples": count(2)},
    "00_tour": {"bmm_anchor": _tour_anchor},
}


def problems(notebook: str, params: dict[str, Any]) -> dict[str, str]:
    """Parameter → problem, for the merged parameters ``params`` of ``notebook``."""
    ctx = Context(notebook, params)
    found = {}
    for key, value in params.items():
        for rules in (RULES, NOTEBOOK_RULES.get(notebook, {})):
            check = rules.get(key)
            problem = check(value, ctx) if check else None
            if problem:
                found[key] = problem
                break
    return found


def check_values(merged: dict[str, dict[str, Any]], origins: Optional[dict[str, dict[str, str]]] = None) -> None:
    """Raise ``ParameterError`` (one line) naming every bad parameter, its notebooks and the allowed values.

    ``merged``: notebook → its parameters (its own defaults under every layer); ``origins``: notebook → parameter →
    where the value was set (``-p``, ``default.yaml`` ...), to say which to fix."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for notebook, params in merged.items():
        for key, problem in problems(notebook, params).items():
            where = (origins or {}).get(notebook, {}).get(key, "the notebook's parameters cell")
            grouped.setdefault((key, f"{params[key]!r}", f"{problem} (set by {where})"), []).append(notebook)
    if grouped:
        parts = [f"parameter {key!r} = {value} in notebook{'s' if len(names) > 1 else ''} {', '.join(names)}: "
                 f"{problem}" for (key, value, problem), names in grouped.items()]
        raise ParameterError("; ".join(parts))
