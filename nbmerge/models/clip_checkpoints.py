"""Read the CLIP checkpoints that merging papers distribute, without running their pickles.

task_vectors, TALL-masks and TSV release ``torch.save``d *objects*: whole ``src.modeling.ImageEncoder`` modules
(``model`` an open_clip CLIP, plus torchvision transforms) and ``ClassificationHead`` modules. Plain ``torch.load``
would import their code and call whatever the pickle names. Here every global a pickle names resolves to a short
allowlist (tensor rebuild helpers, dtypes, ``OrderedDict``…), to an inert stub that only records its arguments and
state, or, for a known-dangerous global (``os.system``, ``builtins.eval``…), to a refusal. The stub tree is then
walked through ``_parameters``/``_buffers``/``_modules`` into the flat state dict ``nn.Module.state_dict()`` gives.

FusionBench's Hugging Face CLIP vision folders convert to and from open_clip's layout, the package's canonical
one (the image tower under ``visual.``): separate q/k/v ↔ fused ``in_proj``, and ``visual.proj`` is
``visual_projection.weight`` transposed.
"""

from __future__ import annotations

import codecs
import collections
import json
import os
import pickle
import re
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

import torch

from ..errors import CheckpointError
from ..engine.io import StateDict, load_state_dict
from .base import PREFIX

PathLike = Union[str, os.PathLike]

# ----------------------------------------------------------------------------------------------------------
# Restricted unpickling


class _Stub:
    """Inert stand-in for a global the loader does not trust: it records what unpickling passes it, runs nothing."""

    qualname = "?"

    def __new__(cls, *args: Any, **kwargs: Any) -> "_Stub":
        stub = object.__new__(cls)
        stub.args, stub.kwargs, stub.state, stub.items, stub.list_items = args, kwargs, None, {}, []
        return stub

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # pickle's REDUCE "calls" a stubbed function or class: __new__ has recorded the arguments

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __setitem__(self, key: Any, value: Any) -> None:
        self.items[key] = value

    def append(self, value: Any) -> None:
        self.list_items.append(value)

    def extend(self, values: Iterable[Any]) -> None:
        self.list_items.extend(values)

    def __repr__(self) -> str:
        return f"<stub of {self.qualname}>"


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    # Hooks are callables from the file: dropped, as nothing here runs backward anyway.
    return torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                                           collections.OrderedDict(), metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    return torch._utils._rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
                                           collections.OrderedDict(), dtype, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    # torch's *_with_state variant setattr()s ``state`` onto the parameter; only the data matters here.
    return torch._utils._rebuild_parameter(data, requires_grad, collections.OrderedDict())


def _rebuild_from_type_v2(func, new_type, args, state):
    # Tensor subclasses and tensors carrying attributes: keep the plain tensor, never instantiate ``new_type``.
    return func(*args)


def _reconstructor(cls, base, state):
    # copyreg's protocol-0/1 object constructor, restricted to stubs.
    if not (isinstance(cls, type) and issubclass(cls, _Stub)):
        raise CheckpointError(f"the pickle rebuilds {cls!r} through copyreg._reconstructor; refusing")
    return cls.__new__(cls)


def _small_bytearray(*args: Any) -> bytearray:
    # bytearray(n) allocates n bytes: a 100-byte pickle asking for 50 GiB is refused, not allocated
    if args and isinstance(args[0], int):
        raise CheckpointError(f"the pickle asks for an empty bytearray of {args[0]:,} bytes; no model checkpoint "
                              "does that: refusing to load a file that may be malicious")
    return bytearray(*args)


_ALLOWED: dict[tuple[str, str], Any] = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch", "Size"): torch.Size,
    ("torch", "device"): torch.device,
    ("torch", "UntypedStorage"): torch.UntypedStorage,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("copyreg", "_reconstructor"): _reconstructor,
    ("_codecs", "encode"): codecs.encode,  # how protocol 2 spells a bytes literal
    **{(module, name): value for module in ("builtins", "__builtin__")
       for name, value in (("set", set), ("frozenset", frozenset), ("bytearray", _small_bytearray),
                           ("complex", complex), ("slice", slice))},
}
# dtypes (``torch.float32``), layouts and memory formats: read from vars() so torch's lazy __getattr__ never runs.
_TORCH_CONSTANTS = {name: value for name, value in vars(torch).items()
                    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format))}
# Classes a model pickle may name besides the allowlist above become inert stubs (they record their arguments and
# state; nothing is imported or called), but only from the libraries whose modules such pickles hold: torch's
# nn.Module classes, open_clip / OpenAI CLIP / timm / transformers models, and the task_vectors / FusionBench
# wrappers (``src.modeling.ImageEncoder``), builtins (but the refused ones below: a model's attribute may hold one,
# e.g. print); numpy only for its array and scalar constructors; functools.partial.
# Anything else is refused.
_STUB_ROOTS = frozenset({"torch", "torchvision", "open_clip", "clip", "timm", "transformers", "src", "modeling",
                         "fusion_bench", "task_vectors", "collections", "__main__", "builtins", "__builtin__"})
_STUB_NUMPY = frozenset({"numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.dtypes"})
_STUB_NAMES = frozenset({("functools", "partial")})  # open_clip's norm_layer=partial(LayerNorm, ...)
# Whatever a checkpoint pickle names from these is an attack, not a model: refuse with a clear error.
_REFUSED_ROOTS = frozenset({
    "os", "posix", "nt", "sys", "subprocess", "shutil", "importlib", "runpy", "socket", "pty", "ctypes", "pickle",
    "_pickle", "marshal", "code", "codeop", "io", "_io", "pathlib", "tempfile", "multiprocessing", "threading",
    "signal", "webbrowser", "urllib", "http", "asyncio", "shelve", "dill", "cloudpickle", "types", "inspect", "gc",
    "ast", "ftplib", "smtplib", "telnetlib",
})
_REFUSED_BUILTINS = frozenset({
    "eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "delattr", "globals", "locals", "vars",
    "input", "breakpoint", "help", "exit", "quit", "memoryview",
})


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves globals to the allowlist or to per-name stub classes; never imports anything."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stubs: dict[tuple[str, str], type] = {}

    def find_class(self, module: str, name: str) -> Any:
        key = (module, name)
        if key in _ALLOWED:
            return _ALLOWED[key]
        if module == "torch" and name in _TORCH_CONSTANTS:
            return _TORCH_CONSTANTS[name]
        if module.split(".")[0] in _REFUSED_ROOTS or (module in ("builtins", "__builtin__")
                                                         and name in _REFUSED_BUILTINS):
            raise CheckpointError(f"the pickle calls {module}.{name}, which no model checkpoint needs; "
                                  "refusing to load a file that may be malicious")
        if module.split(".")[0] not in _STUB_ROOTS and module not in _STUB_NUMPY and key not in _STUB_NAMES:
            raise CheckpointError(f"the pickle names {module}.{name}, which is not part of a model library nbmerge "
                                  "reads (torch, open_clip, CLIP, timm, transformers, task_vectors/FusionBench "
                                  "wrappers); refusing to load a file that may be malicious")
        if key not in self._stubs:
            self._stubs[key] = type(str(name), (_Stub,), {"qualname": f"{module}.{name}", "__module__": __name__})
        return self._stubs[key]


def _restricted_load(file: Any, **kwargs: Any) -> Any:
    return _RestrictedUnpickler(file, **kwargs).load()


# torch.load(pickle_module=…) wants a module: its Unpickler for data.pkl, its load for legacy-format headers.
_PICKLE_MODULE = types.ModuleType("nbmerge_restricted_pickle")
_PICKLE_MODULE.Unpickler = _RestrictedUnpickler  # type: ignore[attr-defined]
_PICKLE_MODULE.load = _restricted_load  # type: ignore[attr-defined]


def _load_object(path: Path) -> Any:
    """``torch.load`` with torch's own allowlist, then with ours (stubs for unknown classes); never unsafe."""
    if not path.is_file():
        raise CheckpointError(f"{path}: no such file")
    try:
        with warnings.catch_warnings():  # e.g. "protocol 4 …": the fallback below reads what this one cannot
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # pickled modules land here: torch's allowlist refuses their classes
        pass
    try:
        return torch.load(path, map_location="cpu", weights_only=False, pickle_module=_PICKLE_MODULE)
    except CheckpointError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    except Exception as exc:
        raise CheckpointError(f"{path}: not a readable torch checkpoint ({type(exc).__name__}: {exc}); "
                              "it may be corrupt or truncated") from exc


def _module_attrs(obj: Any) -> Optional[dict]:
    """The recorded ``__dict__`` of a stubbed ``nn.Module``, or None when ``obj`` is not one."""
    if not isinstance(obj, _Stub):
        return None
    state = obj.state
    if isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], dict):
        state = state[0]  # (dict state, slot state)
    if isinstance(state, dict) and isinstance(state.get("_parameters"), dict) \
            and isinstance(state.get("_modules"), dict):
        return state
    return None


def _put(out: StateDict, key: str, value: Any, name: str) -> None:
    if not isinstance(value, torch.Tensor):
        raise CheckpointError(f"{name}: {key!r} is a {getattr(value, 'qualname', type(value).__name__)}, "
                              "not a tensor")
    out[key] = value.detach()


def _flatten_module(node: _Stub, prefix: str, out: StateDict, name: str, ancestors: frozenset) -> None:
    if id(node) in ancestors:
        raise CheckpointError(f"{name}: module {prefix.rstrip('.')!r} contains itself")
    attrs = _module_attrs(node)
    assert attrs is not None
    for key, value in attrs["_parameters"].items():
        if value is not None:
            _put(out, prefix + key, value, name)
    non_persistent = attrs.get("_non_persistent_buffers_set") or ()
    for key, value in (attrs.get("_buffers") or {}).items():
        if value is not None and key not in non_persistent:
            _put(out, prefix + key, value, name)
    for key, child in attrs["_modules"].items():
        if child is None:
            continue
        if _module_attrs(child) is None:
            raise CheckpointError(f"{name}: submodule {prefix + key!r} is a "
                                  f"{getattr(child, 'qualname', type(child).__name__)}, not an nn.Module")
        _flatten_module(child, f"{prefix}{key}.", out, name, ancestors | {id(node)})


def _to_state_dict(obj: Any, name: str) -> StateDict:
    if _module_attrs(obj) is not None:
        out: StateDict = {}
        _flatten_module(obj, "", out, name, frozenset())
        return out
    if isinstance(obj, Mapping):
        out = {}
        for key, value in obj.items():
            if not isinstance(key, str):
                raise CheckpointError(f"{name}: key {key!r} is not a string; expected a state dict")
            _put(out, key, value, name)
        return out
    raise CheckpointError(f"{name}: holds a {getattr(obj, 'qualname', type(obj).__name__)}, "
                          "not an nn.Module or a state dict")


def load_torch_checkpoint(path: PathLike) -> StateDict:
    """Flat state dict of a ``torch.save``d state dict or whole ``nn.Module``, exactly as ``state_dict()`` names it.

    Pickled code never runs: unknown classes become inert stubs, and a file that names ``os.system``, ``eval`` and
    the like raises ``CheckpointError``, as do missing, truncated and corrupt files.
    """
    path = Path(path)
    return _to_state_dict(_load_object(path), str(path))


# ----------------------------------------------------------------------------------------------------------
# Image towers and classification heads


def extract_image_tower(state: Mapping[str, torch.Tensor], name: str = "<state dict>") -> StateDict:
    """The image tower of a CLIP-family state dict in open_clip layout under ``visual.``.

    Wrapper prefixes (``model.`` of task_vectors' ``ImageEncoder``, ``module.``…) are stripped and the text tower
    and ``logit_scale`` dropped; a Hugging Face ``vision_model.*`` layout is converted; a bare
    ``VisionTransformer`` state (``conv1.weight``, ``class_embedding``…) gets the prefix.
    """
    if "embeddings.class_embedding" in state:  # transformers ≥ 5 CLIPVisionModel
        return hf_to_open_clip(state, name=name)
    towers: dict[str, StateDict] = {}
    hf_towers: dict[str, StateDict] = {}
    for key, value in state.items():
        parts = key.split(".")
        for i, part in enumerate(parts[:-1]):
            if part == "visual":
                towers.setdefault(".".join(parts[:i]), {})[PREFIX + ".".join(parts[i + 1:])] = value
                break
            if part in ("vision_model", "visual_projection"):
                hf_towers.setdefault(".".join(parts[:i]), {})[".".join(parts[i:])] = value
                break
    if towers and hf_towers:
        raise CheckpointError(f"{name}: holds both open_clip 'visual.' and Hugging Face 'vision_model.' keys")
    found = towers or hf_towers
    if len(found) > 1:
        raise CheckpointError(f"{name}: several image towers, under prefixes "
                              f"{', '.join(repr(p + '.') if p else repr('') for p in sorted(found))}")
    if towers:
        return next(iter(towers.values()))
    if hf_towers:
        return hf_to_open_clip(next(iter(hf_towers.values())), name=name)
    if "class_embedding" in state and "conv1.weight" in state:
        return {PREFIX + key: value for key, value in state.items()}
    raise CheckpointError(f"{name}: no image tower ('visual.' or 'vision_model.' keys) among "
                          f"{len(state)} keys, e.g. {list(state)[:3]}")


def image_encoder_state(path: PathLike) -> StateDict:
    """The open_clip image tower (``visual.*``) of a task_vectors-style ``ImageEncoder`` pickle, a torch or
    safetensors state dict, or a Hugging Face CLIP folder."""
    path = Path(path)
    if path.is_dir():
        return load_hf_clip_vision(path)[0]
    state = load_state_dict(path) if path.suffix == ".safetensors" else load_torch_checkpoint(path)
    return extract_image_tower(state, str(path))


class ClassificationHeadWeights(NamedTuple):
    weight: torch.Tensor  # [classes, dim] float32
    bias: Optional[torch.Tensor]  # [classes] float32; task_vectors' heads store zeros
    normalize: Optional[bool]  # ClassificationHead.normalize: features are L2-normalised before the linear map
    logit_scale: Optional[float]  # a separate multiplier if the file has one; task_vectors bakes it into weight


def load_head_file(path: PathLike) -> ClassificationHeadWeights:
    """A classification head from a pickled ``ClassificationHead`` (an ``nn.Linear`` with ``normalize``) or a
    torch/safetensors state dict with ``weight``, optional ``bias`` and ``logit_scale``."""
    path = Path(path)
    normalize: Optional[bool] = None
    if path.suffix == ".safetensors":
        state = load_state_dict(path)
    else:
        obj = _load_object(path)
        flag = (_module_attrs(obj) or {}).get("normalize")
        normalize = bool(flag) if isinstance(flag, (bool, int)) else None
        state = _to_state_dict(obj, str(path))
    unknown = sorted(set(state) - {"weight", "bias", "logit_scale", "normalize"})
    if unknown:
        raise CheckpointError(f"{path}: unexpected key {unknown[0]!r} in a classification head "
                              "(expected weight, bias, logit_scale)")
    if "weight" not in state or state["weight"].ndim != 2:
        raise CheckpointError(f"{path}: a classification head needs a 2-D 'weight' [classes, dim]; found "
                              f"{list(state['weight'].shape) if 'weight' in state else 'none'}")
    weight = state["weight"].float()
    bias = state.get("bias")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise CheckpointError(f"{path}: head bias has shape {list(bias.shape)}, weight {list(weight.shape)}")
    if "normalize" in state:
        normalize = bool(state["normalize"].item())
    logit_scale = float(state["logit_scale"].item()) if "logit_scale" in state else None
    return ClassificationHeadWeights(weight, None if bias is None else bias.float(), normalize, logit_scale)


# ----------------------------------------------------------------------------------------------------------
# Hugging Face CLIP vision ↔ open_clip

# (open_clip name under ``visual.``, HF name under ``vision_model.``); HF really spells it "pre_layrnorm".
_TOP_RENAMES = (("class_embedding", "embeddings.class_embedding"),
                ("positional_embedding", "embeddings.position_embedding.weight"),
                ("conv1.weight", "embeddings.patch_embedding.weight"),
                ("ln_pre.weight", "pre_layrnorm.weight"), ("ln_pre.bias", "pre_layrnorm.bias"),
                ("ln_post.weight", "post_layernorm.weight"), ("ln_post.bias", "post_layernorm.bias"))
_BLOCK_RENAMES = (("ln_1", "layer_norm1"), ("attn.out_proj", "self_attn.out_proj"), ("ln_2", "layer_norm2"),
                  ("mlp.c_fc", "mlp.fc1"), ("mlp.c_proj", "mlp.fc2"))
_HF_PROJ = "visual_projection.weight"
_OC_BLOCK = re.compile(r"transformer\.resblocks\.(\d+)\.")
_HF_BLOCK = re.compile(r"vision_model\.encoder\.layers\.(\d+)\.")
# Non-vision keys a full checkpoint carries, dropped rather than reported as unexpected.
_HF_OTHER = ("text_model.", "text_projection.", "logit_scale", "vision_model.embeddings.position_ids",
             "embeddings.position_ids")
# transformers ≥ 5 saves a plain CLIPVisionModel without the ``vision_model.`` prefix that 4.x (FusionBench's
# checkpoints), CLIPVisionModelWithProjection and CLIPModel use.
_HF_TOWER = "vision_model."
_HF_BARE = ("embeddings.", "encoder.", "pre_layrnorm.", "post_layernorm.")
_OC_OTHER = ("transformer.", "token_embedding.", "positional_embedding", "ln_final.", "text_projection",
             "logit_scale", "logit_bias", "attn_mask", "text.")
# Symbolic shapes in open_clip layout: D width, M MLP width, E projection dim; "3D" is the fused q/k/v.
_SHAPES = {"class_embedding": "D", "positional_embedding": "N D", "proj": "D E", "conv1.weight": "D C P P",
           "ln_pre.weight": "D", "ln_pre.bias": "D", "ln_post.weight": "D", "ln_post.bias": "D",
           "ln_1.weight": "D", "ln_1.bias": "D", "ln_2.weight": "D", "ln_2.bias": "D",
           "attn.in_proj_weight": "3D D", "attn.in_proj_bias": "3D", "attn.out_proj.weight": "D D",
           "attn.out_proj.bias": "D", "mlp.c_fc.weight": "M D", "mlp.c_fc.bias": "M",
           "mlp.c_proj.weight": "D M", "mlp.c_proj.bias": "D"}


def _count_blocks(keys: Iterable[str], pattern: re.Pattern) -> int:
    indices = [int(m.group(1)) for key in keys if (m := pattern.match(key))]
    return max(indices) + 1 if indices else 0


def _renames(layers: int) -> dict[str, str]:
    """open_clip name (no prefix) → HF name, for every key that maps one to one."""
    table = {oc: "vision_model." + hf for oc, hf in _TOP_RENAMES}
    for i in range(layers):
        for oc, hf in _BLOCK_RENAMES:
            for kind in ("weight", "bias"):
                table[f"transformer.resblocks.{i}.{oc}.{kind}"] = f"vision_model.encoder.layers.{i}.{hf}.{kind}"
    return table


def _open_clip_keys(layers: int, with_projection: bool) -> list[str]:
    """The names, in ``VisionTransformer.state_dict()`` order."""
    block = ["ln_1.weight", "ln_1.bias", "attn.in_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight",
             "attn.out_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
             "mlp.c_proj.weight", "mlp.c_proj.bias"]
    keys = ["class_embedding", "positional_embedding"] + (["proj"] if with_projection else []) \
        + ["conv1.weight", "ln_pre.weight", "ln_pre.bias"]
    for i in range(layers):
        keys += [f"transformer.resblocks.{i}.{key}" for key in block]
    return keys + ["ln_post.weight", "ln_post.bias"]


def _hf_keys(layers: int, with_projection: bool) -> list[str]:
    """The names, in ``CLIPVisionModelWithProjection.state_dict()`` order."""
    top = ["vision_model.embeddings.class_embedding", "vision_model.embeddings.patch_embedding.weight",
           "vision_model.embeddings.position_embedding.weight", "vision_model.pre_layrnorm.weight",
           "vision_model.pre_layrnorm.bias"]
    block = [f"self_attn.{p}_proj.{kind}" for p in "kvq" for kind in ("weight", "bias")] \
        + [f"{hf}.{kind}" for hf in ("self_attn.out_proj", "layer_norm1", "mlp.fc1", "mlp.fc2", "layer_norm2")
           for kind in ("weight", "bias")]
    keys = top + [f"vision_model.encoder.layers.{i}.{key}" for i in range(layers) for key in block]
    return keys + ["vision_model.post_layernorm.weight", "vision_model.post_layernorm.bias"] \
        + ([_HF_PROJ] if with_projection else [])


def _check_keys(found: Iterable[str], expected: list[str], what: str) -> None:
    found, wanted = set(found), set(expected)
    missing = [key for key in expected if key not in found]
    unexpected = sorted(found - wanted)
    if missing or unexpected:
        detail = []
        if missing:
            detail.append(f"missing {missing[0]!r} ({len(missing)} missing)")
        if unexpected:
            detail.append(f"unexpected {unexpected[0]!r} ({len(unexpected)} unexpected; keys with no "
                          "counterpart in the other layout, e.g. layer scale or attentional pooling, are not "
                          "supported: drop them with exclude=)")
        raise CheckpointError(f"{what}: " + "; ".join(detail))


def _check_shapes(state: Mapping[str, torch.Tensor], describe: Callable[[str], str]) -> None:
    """Every tensor of an open_clip-layout tower (no prefix) agrees with one width D, MLP width M…"""
    dims: dict[str, int] = {}
    for key, value in state.items():
        spec = _SHAPES[_OC_BLOCK.sub("", key)].split()
        shape = tuple(value.shape)
        ok = len(shape) == len(spec)
        for symbol, size in zip(spec, shape):
            if symbol == "3D":
                ok = ok and "D" in dims and size == 3 * dims["D"]
            else:
                ok = ok and dims.setdefault(symbol, size) == size
        if not ok:
            known = ", ".join(f"{s}={v}" for s, v in dims.items())
            raise CheckpointError(f"{describe(key)}: shape {list(shape)} does not fit [{', '.join(spec)}] "
                                  f"with {known}")


def hf_to_open_clip(state: Mapping[str, torch.Tensor], *, prefix: str = PREFIX,
                    with_projection: Optional[bool] = None, exclude: Iterable[str] = (),
                    name: str = "<HF CLIP state>") -> StateDict:
    """A Hugging Face ``CLIPVisionModel``/``…WithProjection``/``CLIPModel`` state → open_clip image tower.

    q/k/v are concatenated into ``attn.in_proj_weight``/``in_proj_bias`` (open_clip's q, k, v row order) and
    ``visual_projection.weight`` [E, D] becomes ``proj`` [D, E]. A plain ``CLIPVisionModel`` has no projection, so
    the result has no ``visual.proj`` either (``with_projection=None``: follow the input; ``False``: drop it;
    ``True``: require it). The tower may sit under ``vision_model.`` or, as transformers ≥ 5 saves a plain
    ``CLIPVisionModel``, at the top level. The text tower and ``logit_scale`` are dropped; keys starting with an
    ``exclude`` prefix are ignored; any other unknown key, missing key or inconsistent shape raises
    ``CheckpointError``.
    """
    exclude = tuple(exclude)
    bare = not any(key.startswith(_HF_TOWER) for key in state)
    vision = {(_HF_TOWER + key if bare and key.startswith(_HF_BARE) else key): value for key, value in state.items()
              if not key.startswith(exclude) and not key.startswith(_HF_OTHER)}
    if with_projection is False:
        vision.pop(_HF_PROJ, None)
    has_projection = _HF_PROJ in vision
    if with_projection and not has_projection:
        raise CheckpointError(f"{name}: no {_HF_PROJ!r} (a plain CLIPVisionModel has no projection)")
    layers = _count_blocks(vision, _HF_BLOCK)
    _check_keys(vision, _hf_keys(layers, has_projection), name)
    renames = _renames(layers)
    out: StateDict = {}
    for key in _open_clip_keys(layers, has_projection):
        if key in renames:
            out[key] = vision[renames[key]]
        elif key == "proj":
            out[key] = vision[_HF_PROJ].T.contiguous()
        else:
            block, kind = key.rsplit(".attn.in_proj_", 1)
            source = [f"vision_model.encoder.layers.{block.rsplit('.', 1)[1]}.self_attn.{p}_proj.{kind}"
                      for p in "qkv"]
            parts = [vision[k] for k in source]
            if len({(tuple(t.shape), t.dtype) for t in parts}) != 1:
                raise CheckpointError(f"{name}: q/k/v disagree: " + ", ".join(
                    f"{k} {list(t.shape)} {t.dtype}" for k, t in zip(source, parts)))
            out[key] = torch.cat(parts, dim=0)
    hf_name = {**renames, "proj": _HF_PROJ}
    _check_shapes(out, lambda key: f"{name}: {hf_name.get(key, key)!r} (open_clip {prefix + key!r})")
    return {prefix + key: value for key, value in out.items()}


def open_clip_to_hf(state: Mapping[str, torch.Tensor], *, prefix: str = PREFIX,
                    with_projection: Optional[bool] = None, hf_prefix: str = _HF_TOWER,
                    exclude: Iterable[str] = (), name: str = "<open_clip state>") -> StateDict:
    """An open_clip image tower (keys under ``prefix``) → Hugging Face ``CLIPVisionModelWithProjection`` names.

    ``in_proj`` is split into q/k/v; ``visual.proj`` [D, E] becomes ``visual_projection.weight`` [E, D]. For a
    plain ``CLIPVisionModel`` pass ``with_projection=False`` (it has no ``visual_projection.weight``) and, with
    transformers ≥ 5, ``hf_prefix=""`` (it names the tower ``embeddings.…``, 4.x ``vision_model.embeddings.…``).
    ``with_projection=None`` follows the input, ``True`` requires a projection. With a non-empty ``prefix`` the
    text tower of a full open_clip CLIP state is dropped; keys starting with an ``exclude`` prefix are ignored;
    any other key (layer scale, attentional pooling…), a missing key or an inconsistent shape raises
    ``CheckpointError``.
    """
    exclude = tuple(exclude)
    vision: StateDict = {}
    for key, value in state.items():
        if key.startswith(exclude):
            continue
        if not key.startswith(prefix):
            if key.startswith(_OC_OTHER):
                continue
            raise CheckpointError(f"{name}: key {key!r} is neither in the image tower {prefix!r} nor a known "
                                  "text-tower key; drop it with exclude=")
        vision[key[len(prefix):]] = value
    if with_projection is False:
        vision.pop("proj", None)
    has_projection = "proj" in vision
    if with_projection and not has_projection:
        raise CheckpointError(f"{name}: no {prefix + 'proj'!r} to turn into {_HF_PROJ!r}")
    layers = _count_blocks(vision, _OC_BLOCK)
    _check_keys(vision, _open_clip_keys(layers, has_projection), name)
    _check_shapes(vision, lambda key: f"{name}: {prefix + key!r}")
    renames = _renames(layers)
    out: StateDict = {}
    for key, value in vision.items():
        if key in renames:
            out[renames[key]] = value
        elif key == "proj":
            out[_HF_PROJ] = value.T.contiguous()
        else:
            block, kind = key.rsplit(".attn.in_proj_", 1)
            target = f"vision_model.encoder.layers.{block.rsplit('.', 1)[1]}.self_attn.{{}}_proj.{kind}"
            # clone: safetensors refuses tensors that share storage, and chunk() returns views
            for p, part in zip("qkv", value.chunk(3, dim=0)):
                out[target.format(p)] = part.clone()
    return {(hf_prefix + key[len(_HF_TOWER):] if key.startswith(_HF_TOWER) else key): out[key]
            for key in _hf_keys(layers, has_projection)}


# CLIPVisionConfig defaults, for config.json files that omit a value equal to its default.
_HF_VISION_DEFAULTS = {"hidden_size": 768, "intermediate_size": 3072, "projection_dim": 512,
                       "num_hidden_layers": 12, "num_attention_heads": 12, "num_channels": 3, "image_size": 224,
                       "patch_size": 32, "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5}


def _vision_config(config: Mapping[str, Any], name: str) -> dict:
    model_type = config.get("model_type")
    if model_type == "clip":
        vision = dict(config.get("vision_config") or {})
        if "projection_dim" not in vision and "projection_dim" in config:
            vision["projection_dim"] = config["projection_dim"]
    elif model_type == "clip_vision_model":
        vision = dict(config)
    else:
        raise CheckpointError(f"{name}: model_type {model_type!r} is not a CLIP model "
                              "(expected 'clip' or 'clip_vision_model')")
    return {**_HF_VISION_DEFAULTS, **vision}


def load_hf_clip_vision(folder: PathLike) -> tuple[StateDict, dict]:
    """A Hugging Face CLIP folder (``config.json`` + ``*.safetensors``) → (open_clip ``visual.*`` state, vision
    config with defaults filled in). Safetensors only: ``pytorch_model.bin`` pickles are not read."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: not a folder (expected config.json and *.safetensors)")
    config_path = folder / "config.json"
    try:
        config = json.loads(config_path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"{folder}: no config.json") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{config_path}: not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise CheckpointError(f"{config_path}: not a JSON object")
    vision_config = _vision_config(config, str(config_path))
    if not any(folder.glob("*.safetensors")) and any(folder.glob("*.bin")):
        raise CheckpointError(f"{folder}: holds only *.bin pickles; nbmerge reads safetensors only")
    state = hf_to_open_clip(load_state_dict(folder), name=str(folder))
    layers = _count_blocks(state, re.compile(re.escape(PREFIX) + _OC_BLOCK.pattern))
    width = state[PREFIX + "class_embedding"].shape[0]
    if (layers, width) != (vision_config["num_hidden_layers"], vision_config["hidden_size"]):
        raise CheckpointError(f"{folder}: weights have {layers} layers of width {width}; config.json says "
                              f"{vision_config['num_hidden_layers']} of {vision_config['hidden_size']}")
    return state, vision_config


def open_clip_vision_kwargs(vision_config: Mapping[str, Any]) -> dict:
    """Keyword arguments for ``open_clip.transformer.VisionTransformer`` matching an HF CLIP vision config.

    HF CLIP's ``quick_gelu`` needs ``act_layer=QuickGELU`` (open_clip's default is exact GELU). The tower always
    gets a projection of ``projection_dim``; for a plain ``CLIPVisionModel`` set ``encoder.proj = None`` after
    building it, as its state has no ``visual.proj``.
    """
    from functools import partial

    from open_clip.transformer import LayerNorm, QuickGELU

    cfg = {**_HF_VISION_DEFAULTS, **vision_config}
    activations = {"quick_gelu": QuickGELU, "gelu": torch.nn.GELU}
    if cfg["hidden_act"] not in activations:
        raise CheckpointError(f"hidden_act {cfg['hidden_act']!r} has no open_clip counterpart "
                              f"(supported: {', '.join(activations)})")
    if cfg["num_channels"] != 3:
        raise CheckpointError(f"num_channels={cfg['num_channels']}: open_clip's VisionTransformer takes RGB only")
    kwargs = dict(image_size=cfg["image_size"], patch_size=cfg["patch_size"], width=cfg["hidden_size"],
                  layers=cfg["num_hidden_layers"], heads=cfg["num_attention_heads"],
                  mlp_ratio=cfg["intermediate_size"] / cfg["hidden_size"], output_dim=cfg["projection_dim"],
                  act_layer=activations[cfg["hidden_act"]])
    if cfg["layer_norm_eps"] != 1e-5:  # open_clip's LayerNorm default
        kwargs["norm_layer"] = partial(LayerNorm, eps=cfg["layer_norm_eps"])
    return kwargs
