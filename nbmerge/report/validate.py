"""Checks of the notebooks' parameter values, made before any notebook runs.

``resolve_parameters`` already checks that a layer only sets parameters a notebook declares, with the declared type.
This step checks the *values* (a suite that exists, registered merge methods, counts and budgets in range, a usable
device ...), by each notebook's config: its parameters (its defaults under every layer) are checked by the rules
written on the config's fields (``nbmerge.experiments.rules``), so they
live in one place and a wrong value fails here, in one line, rather than inside the notebook after minutes of work
(``-p methods '[ties, nosuch]'`` at cell 13).

A notebook nbmerge does not ship (a user's own, or a renamed copy) has no config known here; its parameters are
checked by the rules nbmerge's configs give a parameter of the same name, where they all give it the same one.
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import ParameterError
from ..experiments import rules


def notebook_configs() -> dict[str, type]:
    """Notebook name → the config its parameters build."""
    from ..experiments.ace import AceConfig
    from ..experiments.bmm_benchmark import BenchmarkConfig
    from ..experiments.bmm_calibration import CalibrationConfig
    from ..experiments.bmm_datafree import DatafreeConfig
    from ..experiments.bmm_search import SearchConfig
    from ..experiments.pareto.config import ParetoConfig
    from ..experiments.tour import TourConfig

    return {"00_tour": TourConfig, "10_ace": AceConfig, "20_bmm_benchmark": BenchmarkConfig,
            "21_bmm_calibration": CalibrationConfig, "22_bmm_datafree": DatafreeConfig,
            "23_bmm_search": SearchConfig, "30_pareto": ParetoConfig}


def shared_rules() -> dict[str, rules.Check]:
    """Parameter name → its rule, where every config that declares the name gives it the same first rule."""
    seen: dict[str, set] = {}
    first: dict[str, rules.Check] = {}
    for cls in notebook_configs().values():
        for name, checks in rules.rules_of(cls).items():
            if checks:
                seen.setdefault(name, set()).add(checks[0])
                first.setdefault(name, checks[0])
    return {name: first[name] for name, kinds in seen.items() if len(kinds) == 1}


def problems(notebook: str, params: dict[str, Any]) -> dict[str, str]:
    """Parameter → problem, for the merged parameters ``params`` of ``notebook``."""
    config = notebook_configs().get(notebook)
    if config is not None:
        # the config's own check, with the notebook's other parameters in view (a pool is valid when the run gives
        # the checkpoints to import it from: the notebook imports it before it builds its config)
        found = rules.problems(config, params)
    else:
        by_name = shared_rules()
        found = {}
        for key, value in params.items():
            problem = by_name[key](value, params) if key in by_name else None
            if problem:
                found[key] = problem
    for key, check in rules.SUITE_INPUTS.items():
        problem = check(params[key], params) if key in params and key not in found else None
        if problem:
            found[key] = problem
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
