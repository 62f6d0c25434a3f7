"""Parameters as users write them: ``KEY=VALUE`` pairs, and the one rule for whether a value fits a declared one.

The rule serves the notebooks' configs (a field's annotation declares it), the report pipeline (a notebook's
parameters cell declares it, by its value) and the CLI: an int may stand for a float, lists and tuples are one
kind, a bool is never a number.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

from .errors import NbmergeError


def parse_pairs(items: Iterable[str], what: str, error: type[NbmergeError] = NbmergeError) -> dict[str, str]:
    """``["k=v", ...]`` → ``{"k": "v"}`` (values stay strings: the receiver coerces them); ``what`` names the
    option in the error (e.g. ``--param``)."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise error(f"{what} expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def fits(value: Any, declared: Any) -> bool:
    """Whether ``value`` may stand where ``declared`` (an example value of the declared kind) is expected."""
    if declared is None:
        return True
    if value is None:  # null stands for "not given" where a default is text, a number or a list; a switch is on or off
        return not isinstance(declared, bool)
    if isinstance(declared, bool) or isinstance(value, bool):
        return isinstance(declared, bool) and isinstance(value, bool)
    if isinstance(declared, float):
        return isinstance(value, (int, float))
    if isinstance(declared, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(declared))


def check_fits(where: str, value: Any, declared: Any, error: type[NbmergeError] = NbmergeError) -> None:
    if not fits(value, declared):
        raise error(f"{where}: expected {type(declared).__name__} (like {declared!r}), got {value!r}")


_EXAMPLES = {bool: False, int: 0, float: 0.0, str: "", tuple: (), list: []}


def example_of(annotation: Any) -> Any:
    """An example value of an annotation's kind (``int`` → 0, ``tuple[str, ...]`` → ()); None for anything else,
    which ``fits`` accepts."""
    origin = typing.get_origin(annotation) or annotation
    if origin is typing.Union:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        return example_of(kinds[0]) if len(kinds) == 1 else None
    return _EXAMPLES.get(origin)


def build_config(cls, namespace: dict[str, Any]):
    """A config dataclass from a namespace holding every field by name (a notebook's parameters: ``globals()``). The
    notebook's parameters cell is the only place its defaults are written, so a missing name is an error, not a
    silent default; the values are checked by the config itself, against each field's type and rules
    (``nbmerge.experiments.rules``)."""
    missing = [f.name for f in fields(cls) if f.init and f.name not in namespace]
    if missing:
        raise NbmergeError(f"{cls.__name__}: no value for {', '.join(missing)} (declare it in the notebook's "
                           "parameters cell)")
    return cls(**{f.name: namespace[f.name] for f in fields(cls) if f.init})


def notebook_parameters(path: Path) -> dict[str, Any]:
    """The defaults declared in the notebook's ``parameters`` cell (there must be exactly one)."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise NbmergeError(f"{path.name}: needs exactly one cell tagged `parameters`, found {len(cells)}")
    return literal_assignments(cells[0].source, f"{path.name}: the parameters cell")


def literal_assignments(source: str, where: str) -> dict[str, Any]:
    """``name = <literal>`` lines (annotations allowed) read without running anything: a notebook's parameters cell
    is checked by ``nbmerge report --dry-run`` inside nbmerge's own process, where code must never run."""
    import ast

    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as err:
        raise NbmergeError(f"{where} is not valid Python ({err.msg}, line {err.lineno})") from None
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is None:
            raise NbmergeError(f"{where} must hold literal assignments only (line {node.lineno} is not one)")
        try:
            values[target] = ast.literal_eval(value)
        except ValueError:
            raise NbmergeError(f"{where} must hold literal assignments only ({target!r} on line {node.lineno} is "
                               "computed)") from None
    return {k: v for k, v in values.items() if not k.startswith("_")}


def notebook_config(cls, notebook: str | Path, **overrides):
    """The config a notebook builds at its defaults (its parameters cell), with ``overrides`` as papermill's ``-p``
    would inject them: what a script or a test runs to get exactly the notebook's setting. An override the notebook
    does not declare is an error (a misspelt knob must not pass silently)."""
    path = Path(notebook)
    declared = notebook_parameters(path)
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise NbmergeError(f"{path.name} declares no parameter {', '.join(unknown)}")
    return build_config(cls, {**declared, **overrides})
