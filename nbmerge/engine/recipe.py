"""Merge recipes: a merge written down as YAML, checked in, and rerun with ``nbmerge merge --config recipe.yaml``.

    method: ties                      # a registered method (`nbmerge methods`)
    base: models/base.safetensors     # paths are relative to the recipe's folder
    experts:
      - models/mnist.safetensors      # a path, or
      - path: models/svhn.safetensors
        weight: 0.5                   # scales this expert's task vector before merging: θ₀ + w·(θ − θ₀)
    params: {density: 0.2, scale: 1.0}
    grams: [g1.safetensors, g2.safetensors]   # optional, one per expert (fishers: likewise)
    walk: {qkv: split, exclude: ["head\\."], matrix_rule: ndim2, fallback: mean, matrix_exclude: [], device: auto}
    # walk may also name the linear modules of a layout nbmerge does not know (read by data-free BMM):
    #   module_kinds: {"blocks\\.\\d+\\.mix\\.weight$": mlp_in}   (kinds: attn_in, attn_out, mlp_in, mlp_out)
    dtype: bfloat16                   # optional: the output's floating-point dtype (default: the base's)
    seed: 0                           # optional: methods with a seed (DARE)
    out: merged.safetensors           # optional here; `--out` on the command line wins; `merged/`: a HF folder
    max_shard_size: 2G                # optional

Unknown keys and values of the wrong type are errors that name the key; nothing is read before the recipe is valid.
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import torch

from ..errors import NbmergeError
from ..methods import get_method
from .modules import check_module_kinds
from .walk_options import RECIPE_KEYS, flagged

TOP_KEYS = {"method", "base", "experts", "params", "grams", "fishers", "walk", "dtype", "seed", "out",
            "max_shard_size"}
EXPERT_KEYS = {"path", "weight"}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


class RecipeError(NbmergeError):
    """A merge recipe that is not valid: the message names the file and the key."""


@dataclass
class Recipe:
    method: str
    base: str
    experts: list[str]
    weights: list[float]
    params: dict[str, Any] = field(default_factory=dict)
    grams: Optional[list[str]] = None
    fishers: Optional[list[str]] = None
    walk: dict[str, Any] = field(default_factory=dict)
    dtype: Optional[str] = None
    seed: Optional[int] = None
    out: Optional[str] = None
    max_shard_size: Optional[str] = None


def _shown(value, limit: int = 120) -> str:
    """A value for an error message, cut to ``limit`` characters (a recipe value may be arbitrarily large)."""
    shorter = reprlib.Repr()  # (keyword arguments only from Python 3.12)
    shorter.maxstring, shorter.maxother, shorter.maxlist, shorter.maxdict, shorter.maxlevel = limit, limit, 6, 6, 3
    text = shorter.repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _expect(where: str, value, kinds, what: str):
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise RecipeError(f"{where}: expected {what}, got {_shown(value)}")
    if not isinstance(value, kinds):
        raise RecipeError(f"{where}: expected {what}, got {_shown(value)}")
    return value


def _paths(where: str, value, folder: Path) -> list[str]:
    _expect(where, value, list, "a list of paths")
    return [_path(f"{where}[{i}]", v, folder) for i, v in enumerate(value)]


def _path(where: str, value, folder: Path) -> str:
    _expect(where, value, str, "a path")
    path = Path(os.path.expanduser(value))
    return str(path if path.is_absolute() else folder / path)


def parse_recipe(data: Any, name: str = "recipe", folder: Union[str, os.PathLike] = ".") -> Recipe:
    """Check a loaded recipe mapping and return it as a :class:`Recipe` (paths resolved against ``folder``)."""
    folder = Path(folder)
    if not isinstance(data, Mapping):
        raise RecipeError(f"{name}: a recipe is a mapping of keys (method, base, experts, ...), got "
                          f"{type(data).__name__}")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise RecipeError(f"{name}: unknown key {_shown(unknown[0])}; valid keys: {', '.join(sorted(TOP_KEYS))}")
    for key in ("method", "base", "experts"):
        if key not in data:
            raise RecipeError(f"{name}: the key {key!r} is required")
    method = _expect(f"{name}: method", data["method"], str, "a method name")
    spec = get_method(method)  # an unknown method names the valid ones
    experts, weights = [], []
    raw_experts = _expect(f"{name}: experts", data["experts"], list, "a list of experts")
    if not raw_experts:
        raise RecipeError(f"{name}: experts is empty: give at least one expert")
    for i, item in enumerate(raw_experts):
        where = f"{name}: experts[{i}]"
        if isinstance(item, Mapping):
            bad = sorted(set(item) - EXPERT_KEYS)
            if bad:
                raise RecipeError(f"{where}: unknown key {_shown(bad[0])}; valid keys: path, weight")
            if "path" not in item:
                raise RecipeError(f"{where}: the key 'path' is required")
            experts.append(_path(f"{where}.path", item["path"], folder))
            weight = float(_expect(f"{where}.weight", item.get("weight", 1.0), (int, float), "a number"))
            if weight != weight or weight in (float("inf"), float("-inf")):
                raise RecipeError(f"{where}.weight: expected a finite number, got {_shown(weight)}")
            weights.append(weight)
        else:
            experts.append(_path(where, item, folder))
            weights.append(1.0)
    params = dict(_expect(f"{name}: params", data.get("params", {}) or {}, Mapping, "a mapping of parameters"))
    try:
        spec.check_params(params)
    except NbmergeError as exc:
        raise RecipeError(f"{name}: params: {exc}") from None
    walk = dict(_expect(f"{name}: walk", data.get("walk", {}) or {}, Mapping, "a mapping of walk options"))
    bad = sorted(set(walk) - RECIPE_KEYS)
    if bad:
        raise RecipeError(f"{name}: walk: unknown key {_shown(bad[0])}; valid keys: {', '.join(sorted(RECIPE_KEYS))}")
    for option in flagged():
        key = option.name
        if key == "module_kinds" or walk.get(key) is None:
            continue
        if option.metadata["repeat"]:
            walk[key] = [_expect(f"{name}: walk.{key}[{i}]", v, str, "a regular expression")
                         for i, v in enumerate(_expect(f"{name}: walk.{key}", walk[key], list, "a list"))]
        else:
            _expect(f"{name}: walk.{key}", walk[key], str, "a string")
    if walk.get("module_kinds") is not None:
        kinds = _expect(f"{name}: walk.module_kinds", walk["module_kinds"], Mapping,
                        "a mapping of key regexes to kinds (attn_in, attn_out, mlp_in, mlp_out)")
        try:
            walk["module_kinds"] = check_module_kinds({str(k): v for k, v in kinds.items()})
        except NbmergeError as exc:
            raise RecipeError(f"{name}: walk.{exc}") from None
    dtype = data.get("dtype")
    if dtype is not None and dtype not in DTYPES:
        raise RecipeError(f"{name}: dtype: expected one of {', '.join(DTYPES)}, got {_shown(dtype)}")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise RecipeError(f"{name}: seed: expected an integer >= 0, got {_shown(seed)}")
    stats = {}
    for key in ("grams", "fishers"):
        if data.get(key) is not None:
            stats[key] = _paths(f"{name}: {key}", data[key], folder)
            if len(stats[key]) != len(experts):
                raise RecipeError(f"{name}: {key}: {len(stats[key])} files for {len(experts)} experts (one per "
                                  "expert, in expert order)")
    out = _path(f"{name}: out", data["out"], folder) if data.get("out") is not None else None
    if out is not None and data["out"].endswith(("/", os.sep)):
        out += os.sep  # `out: merged/` asks for a Hugging Face folder: keep the trailing slash
    shard = data.get("max_shard_size")
    if shard is not None:
        shard = str(_expect(f"{name}: max_shard_size", shard, (str, int), "a size such as 2G"))
    return Recipe(method, _path(f"{name}: base", data["base"], folder), experts, weights, params,
                  stats.get("grams"), stats.get("fishers"), walk, dtype, seed, out, shard)


MAX_RECIPE_BYTES = 1 << 20


def load_recipe(path: Union[str, os.PathLike]) -> Recipe:
    """Read and check a YAML recipe file."""
    import yaml

    class NoAliases(yaml.SafeLoader):
        """YAML without anchors' aliases: a recipe never needs them, and nested ones expand exponentially (a few
        hundred bytes become gigabytes)."""

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise RecipeError(f"{path}: line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not "
                                  "allowed in a recipe: write the value out")
            return super().compose_node(parent, index)

    path = Path(path)
    if path.is_file() and path.stat().st_size > MAX_RECIPE_BYTES:
        raise RecipeError(f"{path}: {path.stat().st_size:,} bytes is not a recipe (at most {MAX_RECIPE_BYTES:,})")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=NoAliases)  # noqa: S506 - a SafeLoader
    except UnicodeDecodeError:
        raise RecipeError(f"{path}: not UTF-8 text (a recipe is a YAML file)") from None
    except OSError as exc:
        raise RecipeError(f"{path}: cannot read the recipe ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return parse_recipe(data, str(path), path.parent)
