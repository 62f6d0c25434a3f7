"""The registry of merge methods: name, paper, what statistics it needs, and its parameters with defaults.

This module only holds the table: the method modules register themselves into it, and ``nbmerge.methods`` (which
imports all of them) is where the rest of the package looks methods up.

A method is one public function ``fn(base, experts, *, <params>, walk=None, stream=False)``; its
keyword-only parameters (other than the run options ``walk``/``stream`` and the statistics ``grams``/
``fishers``) are its recipe parameters, and each must carry a one-line meaning in ``help``.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..errors import MethodError, did_you_mean

RUN_OPTIONS = {"walk", "stream"}
STATISTICS = ("grams", "fishers")


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    help: str

    @property
    def kind(self) -> type:
        return type(self.default)


@dataclass(frozen=True)
class Method:
    name: str
    fn: Callable
    paper: str
    summary: str
    needs: tuple[str, ...]
    params: dict[str, Param] = field(default_factory=dict)
    #: statistics the method uses when given and can do without (BMM: grams, else a data-free proxy)
    optional: tuple[str, ...] = ()
    #: one model per task (nbmerge.engine.taskaware.TaskModels), not a single merged model: needs the task at inference
    task_aware: bool = False
    #: the most experts the method merges (SLERP: one, into the base); None: any number
    max_experts: Optional[int] = None
    #: merges LoRA adapter experts only (KnOTS aligns their low-rank updates); dense experts are refused
    lora_only: bool = False
    #: what a separate step learns the method's parameters from (AdaMerging: "unlabeled inputs"); "" if nothing
    learned: str = ""

    @property
    def data_free(self) -> bool:
        return not self.needs and not self.learned

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """Reject unknown names (listing the valid ones) and coerce values to the default's type."""
        out = {}
        for name, value in params.items():
            if name not in self.params:
                valid = ", ".join(sorted(self.params)) or "(none)"
                raise MethodError(f"method {self.name!r} has no parameter {name!r}"
                                  f"{did_you_mean(name, self.params)}; valid parameters: {valid}")
            out[name] = coerce(value, self.params[name].default, f"{self.name}.{name}")
        return out

    def run(self, base, experts, params=None, *, grams=None, fishers=None, walk=None, stream: bool = False):
        """Check ``params`` and the statistics against the method's declaration, then call it."""
        kwargs = self.check_params(dict(params or {}))
        for name, value in {"grams": grams, "fishers": fishers}.items():
            if name in self.needs:
                if value is None:
                    raise MethodError(f"method {self.name!r} needs {name}: give one {name[:-1]} file per expert "
                                      f"(--{name} on the command line, `{name}:` in a recipe, {name}=[...] in Python)")
                kwargs[name] = value
            elif name in self.optional:
                if value is not None:
                    kwargs[name] = value
            elif value is not None:
                raise MethodError(f"method {self.name!r} does not use {name}")
        return self.fn(base, experts, **kwargs, walk=walk, stream=stream)


_REGISTRY: dict[str, Method] = {}


def coerce(value: Any, default: Any, where: str) -> Any:
    """Parse CLI strings and check types against the default value's type."""
    if default is None:
        return value
    given = value
    try:
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
                return True
            if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
                return False
        elif isinstance(default, int):
            if isinstance(value, str):
                value = float(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
                return int(value)
        elif isinstance(default, float):
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                number = float(value)
                if not math.isfinite(number):
                    raise MethodError(f"{where}: expected a finite number, got {value!r}")
                return number
        elif isinstance(default, tuple):   # a list of numbers: [0.3, 0.7] (Python, YAML) or "0.3,0.7" (CLI)
            if isinstance(value, str):
                value = [v for v in value.split(",") if v.strip()] if value.strip() else []
            if isinstance(value, (list, tuple)) and not any(isinstance(v, bool) for v in value):
                numbers = tuple(float(v) for v in value)
                if not all(math.isfinite(v) for v in numbers):
                    raise MethodError(f"{where}: expected finite numbers, got {value!r}")
                return numbers
        elif isinstance(default, str):
            if isinstance(value, str):
                return value
    except MethodError:
        raise
    except (TypeError, ValueError):
        pass
    kind = "a list of numbers (e.g. 0.3,0.7)" if isinstance(default, tuple) else type(default).__name__
    raise MethodError(f"{where}: expected {kind}, got {given!r}")


def register(name: str, *, paper: str, help: dict[str, str], needs: tuple[str, ...] = (),
             optional: tuple[str, ...] = (), task_aware: bool = False, max_experts: Optional[int] = None,
             lora_only: bool = False, learned: str = ""):
    """Register a merge function under ``name`` with its paper link and parameter meanings."""

    def wrap(fn: Callable) -> Callable:
        signature = inspect.signature(fn)
        params = {}
        for pname, p in signature.parameters.items():
            if p.kind is not inspect.Parameter.KEYWORD_ONLY or pname in RUN_OPTIONS or pname in STATISTICS:
                continue
            if pname not in help:
                raise TypeError(f"method {name}: parameter {pname!r} has no help text")
            params[pname] = Param(pname, p.default, help[pname])
        unknown = set(help) - set(params)
        if unknown:
            raise TypeError(f"method {name}: help for unknown parameters {sorted(unknown)}")
        for stat in (*needs, *optional):
            if stat not in signature.parameters:
                raise TypeError(f"method {name}: uses {stat!r} but does not take it")
        summary = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else name
        if name in _REGISTRY:
            raise TypeError(f"method {name!r} registered twice")
        _REGISTRY[name] = Method(name, fn, paper, summary, tuple(needs), params, tuple(optional), task_aware,
                                 max_experts, lora_only, learned)
        fn.method = _REGISTRY[name]
        return fn

    return wrap


def get_method(name: str) -> Method:
    """The registered method ``name`` (import ``nbmerge.methods`` first: importing it registers every method)."""
    if name not in _REGISTRY:
        raise MethodError(f"unknown method {name!r}{did_you_mean(name, _REGISTRY)}; valid methods: "
                          f"{', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def all_methods() -> list[Method]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
