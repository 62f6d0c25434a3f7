"""LoRA adapters (PEFT folders) read as experts: the model an adapter defines, one tensor at a time.

A PEFT LoRA folder holds ``adapter_config.json`` and ``adapter_model.safetensors`` with, for every targeted module
``M``, the factors ``base_model.model.M.lora_A.weight`` (r × in) and ``base_model.model.M.lora_B.weight`` (out × r).
Its task vector on ``M.weight`` is ΔW = s·B·A with s = lora_alpha/r (lora_alpha/√r with ``use_rslora``; α and r per
module where ``alpha_pattern``/``rank_pattern`` say so), transposed for GPT-2's Conv1D layers (``fan_in_fan_out``),
and zero on every other tensor. Embedding adapters store
``lora_embedding_A`` (r × vocab) and ``lora_embedding_B`` (dim × r): ΔW = s·(B·A)ᵀ.

Any other tensor in the file (trained biases with ``bias: all`` or ``lora_only``, saved as ``M.base_layer.bias`` on a
LoRA layer; the ``modules_to_save`` copies, saved as ``M.modules_to_save.weight`` or, by older PEFT releases, as
``M.weight``) holds the module's new value and replaces the base's. :class:`AdapterExpert` is the expert model
θ₀ + ΔW seen as a tensor source: nothing dense is built beyond the one tensor asked for.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Union

import torch
from safetensors import SafetensorError, safe_open

from ..errors import CheckpointError
from .linalg import LowRank

CONFIG = "adapter_config.json"
WEIGHTS = "adapter_model.safetensors"
PREFIX = "base_model.model."
_FLOATS = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
_FACTOR = re.compile(r"^(?P<module>.+)\.(?P<kind>lora_A|lora_B)\.weight$|"
                     r"^(?P<emodule>.+)\.(?P<ekind>lora_embedding_A|lora_embedding_B)$")


def is_adapter(path: Union[str, os.PathLike]) -> bool:
    """A folder holding an ``adapter_config.json`` (a PEFT adapter)."""
    path = Path(path)
    return path.is_dir() and (path / CONFIG).is_file()


class LoraFactors:
    """The factors of one targeted module: ``A`` (r × in), ``B`` (out × r), the scaling and the layout."""

    def __init__(self, module: str, a_key: str, b_key: str, scaling: float, transpose: bool):
        self.module, self.a_key, self.b_key, self.scaling, self.transpose = module, a_key, b_key, scaling, transpose


def read_config(folder: Path) -> dict:
    """The adapter's configuration, refused unless it is a plain LoRA that nbmerge can apply."""
    try:
        config = json.loads((folder / CONFIG).read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{folder / CONFIG}: not a readable adapter configuration ({exc})") from None
    if not isinstance(config, dict):
        raise CheckpointError(f"{folder / CONFIG}: expected a JSON object, got {type(config).__name__}")
    kind = str(config.get("peft_type", "LORA")).upper()
    if kind != "LORA":
        raise CheckpointError(f"{folder}: PEFT type {config.get('peft_type')!r} is not supported: nbmerge reads LoRA "
                              "adapters (peft_type LORA) only")
    if config.get("use_dora"):
        raise CheckpointError(f"{folder}: a DoRA adapter (use_dora: true) is not supported: its weight is not "
                              "θ₀ + B·A (merge it into a dense model with PEFT's merge_and_unload first)")
    for key in ("r", "lora_alpha"):
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise CheckpointError(f"{folder / CONFIG}: {key} must be a positive number, got {value!r}")
    for key in ("alpha_pattern", "rank_pattern"):  # PEFT's per-module overrides: regex → positive number
        patterns = config.get(key) or {}
        if not isinstance(patterns, dict):
            raise CheckpointError(f"{folder / CONFIG}: {key} must map module patterns to numbers, got "
                                  f"{type(patterns).__name__}")
        for pattern, value in patterns.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CheckpointError(f"{folder / CONFIG}: {key}: {pattern!r} is not a regular expression "
                                      f"({exc})") from None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise CheckpointError(f"{folder / CONFIG}: {key}[{pattern!r}] must be a positive number, got "
                                      f"{value!r}")
    return config


def _pattern_value(patterns: dict, module: str, default):
    """PEFT's per-module override: the first pattern that matches the module name's tail."""
    for pattern, value in (patterns or {}).items():
        if re.fullmatch(rf"(.*\.)?(?:{pattern})", module):
            return value
    return default


def scaling_of(config: dict, module: str, rank: int) -> float:
    """s = α/r, or α/√r with ``use_rslora`` (α from ``alpha_pattern`` where it names the module)."""
    alpha = float(_pattern_value(config.get("alpha_pattern"), module, config["lora_alpha"]))
    return alpha / rank**0.5 if config.get("use_rslora") else alpha / rank


class AdapterExpert:
    """The expert θ₀ + ΔW that a LoRA adapter folder defines over ``base`` (a tensor source), read lazily.

    Keys, shapes and integer dtypes are the base's; a tensor the adapter changes is returned in float32 (float64
    over a float64 base) so that a small ΔW is not rounded away in a bfloat16 base's precision.
    """

    def __init__(self, folder: Union[str, os.PathLike], base):
        folder = Path(folder)
        self.name = str(folder)
        self.base = base
        self.config = read_config(folder)
        weights = folder / WEIGHTS
        if not weights.is_file():
            found = [p.name for p in folder.iterdir() if p.name.startswith("adapter_model")]
            hint = f" (found {', '.join(found)}: only safetensors adapters are read)" if found else ""
            raise CheckpointError(f"{folder}: no {WEIGHTS}{hint}")
        #: the files read (what an output must never overwrite)
        self.files = (weights,)
        try:
            self._handle = safe_open(str(weights), framework="pt", device="cpu")
        except (SafetensorError, OSError, ValueError) as exc:
            raise CheckpointError(f"{weights}: not a readable safetensors file ({exc})") from exc
        self.factors: dict[str, LoraFactors] = {}   # base key -> its LoRA factors
        self.replaced: dict[str, str] = {}           # base key -> adapter key of its new value
        self._read_keys()

    # -- reading the adapter's keys ---------------------------------------------------------------------------
    def _base_key(self, name: str, adapter_key: str) -> str:
        """The base key an adapter tensor name (without the PEFT prefix) refers to."""
        base_keys = set(self.base.keys())
        if name in base_keys:
            return name
        head, _, rest = name.partition(".")
        if rest in base_keys:  # a base saved without the task head's prefix (``model.``, ``transformer.``)
            return rest
        raise CheckpointError(f"{self.name}: {adapter_key!r} targets {name!r}, which the base model "
                              f"{self.base.name} does not have: an adapter for another base model?")

    def _read_keys(self) -> None:
        pairs: dict[str, dict[str, str]] = {}
        for key in self._handle.keys():
            name = key[len(PREFIX):] if key.startswith(PREFIX) else key
            match = _FACTOR.match(name)
            if match:
                module = match["module"] or match["emodule"]
                kind = (match["kind"] or match["ekind"]).replace("embedding_", "")
                pairs.setdefault(module, {})[kind] = key
                pairs[module]["embedding"] = "1" if match["ekind"] else ""
            elif ".lora_" in name:
                raise CheckpointError(f"{self.name}: adapter tensor {key!r} is not a LoRA factor nbmerge can apply "
                                      "(lora_A/lora_B, lora_embedding_A/lora_embedding_B)")
            elif ".original_module." not in name:  # (the base's own value of a modules_to_save module)
                # a trained bias (``M.base_layer.bias`` on a LoRA layer) or a modules_to_save copy: a new value
                target = self._base_key(re.sub(r"\.(base_layer|modules_to_save)\.", ".", name), key)
                self._check_shape(key, target, tuple(self._handle.get_slice(key).get_shape()))
                if target in self.replaced:
                    first = self.replaced[target]
                    if (".modules_to_save." in key) == (".modules_to_save." in first):
                        raise CheckpointError(f"{self.name}: {first!r} and {key!r} both give {target!r}")
                    if ".modules_to_save." in first:
                        continue  # the modules_to_save copy is the trained value
                self.replaced[target] = key
        for module, keys in pairs.items():
            if "lora_A" not in keys or "lora_B" not in keys:
                raise CheckpointError(f"{self.name}: module {module!r} has "
                                      f"{'lora_A' if 'lora_A' in keys else 'lora_B'} but not its pair")
            embedding = bool(keys["embedding"])
            target = self._base_key(module + ".weight", keys["lora_A"])
            a_shape = tuple(self._handle.get_slice(keys["lora_A"]).get_shape())
            b_shape = tuple(self._handle.get_slice(keys["lora_B"]).get_shape())
            if len(a_shape) != 2 or len(b_shape) != 2 or a_shape[0] != b_shape[1]:
                raise CheckpointError(f"{self.name}: {keys['lora_A']!r} {list(a_shape)} and {keys['lora_B']!r} "
                                      f"{list(b_shape)} are not LoRA factors of one rank (only Linear, Conv1D and "
                                      "Embedding layers are supported)")
            rank = a_shape[0]
            said = _pattern_value(self.config.get("rank_pattern"), module, self.config["r"])
            if rank == 0 or rank != said:  # the scaling α/r would be computed with the wrong r
                raise CheckpointError(f"{self.name}: module {module!r} has LoRA factors of rank {rank}, but "
                                      f"{CONFIG} says r = {said}" + (" (rank_pattern)" if said != self.config["r"]
                                                                      else "") + ": the adapter does not match "
                                      "its configuration")
            for factor in (keys["lora_A"], keys["lora_B"]):
                stored = self._handle.get_slice(factor).get_dtype()
                if stored not in _FLOATS:
                    raise CheckpointError(f"{self.name}: {factor!r} is stored as {stored} (quantised factors): "
                                          "nbmerge merges real-valued LoRA factors only; dequantise the adapter "
                                          "first")
            transpose = self._transposed(embedding, target, (b_shape[0], a_shape[1]))
            shape = (a_shape[1], b_shape[0]) if transpose else (b_shape[0], a_shape[1])
            self._check_shape(keys["lora_A"], target, shape, what="B·A")
            factors = LoraFactors(module, keys["lora_A"], keys["lora_B"], scaling_of(self.config, module, a_shape[0]),
                                  transpose)
            if target in self.factors:
                raise CheckpointError(f"{self.name}: {target!r} is changed twice by the adapter")
            self.factors[target] = factors

    def _transposed(self, embedding: bool, target: str, out_in: tuple) -> bool:
        """Whether ΔW is (B·A)ᵀ: always for an embedding; for a layer stored (in, out), as GPT-2's Conv1D (PEFT
        decides by the layer's type, which a state dict does not record: its shape tells, and ``fan_in_fan_out``
        where the weight is square)."""
        if embedding:
            return True
        want = tuple(self.base.shape(target))
        if want == out_in and want != out_in[::-1]:
            return False
        if want == out_in[::-1] and want != out_in:
            return True
        return bool(self.config.get("fan_in_fan_out"))

    def _check_shape(self, adapter_key: str, target: str, shape: tuple, what: str = "") -> None:
        want = tuple(self.base.shape(target))
        if shape != want:
            label = f"{what} of {adapter_key!r}" if what else repr(adapter_key)
            raise CheckpointError(f"{self.name}: shape mismatch for {target!r}: base {list(want)}, adapter {label} "
                                  f"{list(shape)}: an adapter for another base model?")

    # -- the tensor source ------------------------------------------------------------------------------------
    def keys(self) -> list[str]:
        return self.base.keys()

    def shape(self, key: str) -> tuple[int, ...]:
        return self.base.shape(key)

    def dtype(self, key: str) -> torch.dtype:
        stored = self._handle.get_slice(self.replaced[key]).get_dtype() if key in self.replaced else None
        if key in self.factors:
            return torch.float64 if self.base.dtype(key) == torch.float64 or stored == "F64" else torch.float32
        if key in self.replaced:  # from the header; other dtypes from the tensor itself
            return _FLOATS[stored] if stored in _FLOATS else self._read(self.replaced[key]).dtype
        return self.base.dtype(key)

    def _read(self, key: str) -> torch.Tensor:
        try:
            return self._handle.get_tensor(key)
        except (SafetensorError, OSError, RuntimeError) as exc:
            raise CheckpointError(f"{self.files[0]}: cannot read tensor {key!r} ({exc})") from exc

    def delta(self, key: str) -> torch.Tensor:
        """ΔW = s·B·A (transposed for Conv1D and embedding layers) for a targeted key, in float32 or float64."""
        factors = self.factors[key]
        dtype = self.dtype(key)
        delta = self._read(factors.b_key).to(dtype) @ self._read(factors.a_key).to(dtype)
        delta = delta.T if factors.transpose else delta
        return factors.scaling * delta

    def low_rank(self, key: str) -> "LowRank | None":
        """ΔW of ``key`` as factors ``L @ R`` (L = s·B, R = A; transposed for Conv1D and embedding layers) when
        θ_t − θ₀ is that product alone: None for a key the adapter leaves alone or also saves a base value for."""
        if key not in self.factors or key in self.replaced:
            return None
        factors = self.factors[key]
        dtype = self.dtype(key)
        b, a = self._read(factors.b_key).to(dtype), self._read(factors.a_key).to(dtype)
        if factors.transpose:  # (s·B·A)ᵀ = Aᵀ·(s·Bᵀ)
            return LowRank(a.T, factors.scaling * b.T)
        return LowRank(factors.scaling * b, a)

    def get(self, key: str) -> torch.Tensor:
        # a LoRA layer whose base weight the adapter also saved (PEFT does for embeddings): ΔW applies on top of it
        value = self._read(self.replaced[key]) if key in self.replaced else self.base.get(key)
        if key in self.factors:
            return value.to(self.dtype(key)) + self.delta(key)
        return value


def dense_expert(folder: Union[str, os.PathLike], base) -> dict[str, torch.Tensor]:
    """The whole expert model an adapter defines, in memory (for checks and small models)."""
    expert = AdapterExpert(folder, base)
    return {key: expert.get(key) for key in expert.keys()}
