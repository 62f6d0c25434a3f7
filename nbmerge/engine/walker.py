"""One walker that applies per-tensor merge kernels over a whole model.

A kernel such as ``tsv_matrix(deltas, *, rank_fraction=None) -> Tensor`` takes the T task vectors of one
tensor and returns the merged task vector; it knows nothing of models or key names. The walker:

* checks that base and experts agree (keys, shapes, finite values) before anything is computed;
* decides, per tensor, the *matrix path* (the method's SVD/Gram kernel) or the *fallback* (docs/methods.md, walker):
  ``matrix_rule="ndim2"`` reproduces the reference codes (every 2-D tensor, positional embeddings and
  projections included); ``"linear_only"`` keeps only linear-layer weights (2-D, name ending in ``weight``,
  not an embedding);
* handles q/k/v: ``qkv="as_is"`` merges tensors as stored, ``"split"`` applies the matrix kernel to each of
  the three row blocks of a fused ``in_proj_weight``, ``"fused"`` stacks separate ``q_proj/k_proj/v_proj``
  weights into one 3d x d matrix (the two layouts give different SVD/Gram results: record which was used);
* reads one tensor of each expert at a time (lazy safetensors), computes in fp32 (fp64 if an input is fp64)
  on ``device``, and writes back in the base's dtype: θ = θ₀ + scale·τ_merged;
* takes per-module hyperparameters keyed by state-dict names verbatim (``module_params``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import os
import re
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from ..errors import CheckpointError, MethodError, NbmergeWarning, NumericalError
from .io import Source, StateDict, TensorSource, as_source
from . import staging
from .linalg import LowRank
from .walk_options import FALLBACKS, MATRIX_RULES, QKV_MODES, WalkOptions  # noqa: F401 (re-exported)

_QKV_SEPARATE = re.compile(r"^(?P<prefix>.*)\.(?P<which>[qkv])_proj\.weight$")


def is_linear_weight(key: str, shape: Sequence[int]) -> bool:
    """nn.Linear-style weight: 2-D, named ``*weight``, not an embedding table."""
    return len(shape) == 2 and key.endswith("weight") and "embed" not in key.lower()


@dataclass(frozen=True)
class Rule:
    """How one method merges: its matrix kernel, its fallback and an optional global pre-pass.

    Each hook states what it takes by its keyword-only parameters, and is called with exactly those: the method's
    parameters of the same names and, for the kernels, what the walk provides (:data:`WALK_VALUES`) and what
    ``prepare`` returned. The names are read once, when the rule is built (:attr:`takes`); a hook with ``**kwargs``
    is refused there, so no hook receives a name it does not declare.
    """

    matrix: Optional[Callable[..., torch.Tensor]]
    fallback: str | Callable[..., torch.Tensor] = "mean"
    matrix_rule: str = "ndim2"
    prepare: Optional[Callable[..., dict]] = None
    transform: Optional[Callable[..., list[torch.Tensor]]] = None
    #: matrix-path keys are those with statistics (RegMean: keys present in the Grams files)
    matrix_from_stats: Optional[str] = None
    #: the fallback is elementwise: each merged entry depends only on the same entry of the task vectors (and the
    #: prepared context), so the walker may run it slice by slice (:meth:`ModelView.chunks`). String fallbacks are.
    elementwise: bool = False
    #: ``stream(key=, tasks=, **params)`` → a function applied to every slice of a tensor's task vectors, in order,
    #: that computes what ``transform`` computes on the whole tensor (DARE's drop, its masks drawn slice by slice)
    chunk_transform: Optional[Callable[..., Callable[[list[torch.Tensor]], list[torch.Tensor]]]] = None
    #: ``fused(view, *, key, scale, ...)`` → one whole tensor θ₀ + scale·fallback(τ) computed by a compiled pass from
    #: the stored inputs (:mod:`nbmerge.engine.fused`), with the fallback's bits, or None to take the fallback's path
    fused: Optional[Callable[..., Optional[torch.Tensor]]] = None
    #: per hook (``matrix``, ``fallback``, ``prepare``, ``transform``, ``chunk_transform``, ``fused``), the keyword
    #: names it takes; filled when the rule is built
    takes: Mapping[str, frozenset] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        hooks = {"matrix": self.matrix, "prepare": self.prepare, "transform": self.transform,
                 "chunk_transform": self.chunk_transform, "fused": self.fused,
                 "fallback": _FALLBACK_KERNELS[self.fallback] if isinstance(self.fallback, str) else self.fallback}
        object.__setattr__(self, "takes", {name: hook_keywords(fn, name) for name, fn in hooks.items() if fn})


#: what the walk hands a kernel that names it: the tensor's key and base value, its statistics (Grams, Fisher
#: diagonals), the experts' low-rank factors; a transform gets ``key`` and ``tasks``, a chunk transform also
#: ``numel``; ``memo`` is one dict per merge, shared by the chunk transform, ``prepare`` and ``fused`` when they name
#: it (what they keep between passes: DARE's masks)
WALK_VALUES = frozenset({"key", "base", "grams", "fishers", "factors", "tasks", "numel", "memo"})


def hook_keywords(fn: Callable, hook: str = "hook") -> frozenset:
    """The keyword names ``fn`` takes (its parameters after the first positional one, the task vectors or the model
    view; a chunk transform takes keywords only). A rule's hooks name what they take: ``**kwargs`` is refused."""
    parameters = list(inspect.signature(fn).parameters.values())
    for p in parameters:
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            raise MethodError(f"{hook} {getattr(fn, '__name__', fn)!r} takes {p}: a rule's hooks name every "
                              "keyword they take")
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    first = positional[:1] if hook != "chunk_transform" else []
    return frozenset(p.name for p in parameters if p not in first)

# -- fallback kernels -------------------------------------------------------------------------------------

def mean_kernel(deltas: list[torch.Tensor]) -> torch.Tensor:
    """Mean task vector (the fallback of TSV-M, ISO-C/ISO-CTS, ACE and RegMean)."""
    return sum_kernel(deltas) / len(deltas)


def sum_kernel(deltas: list[torch.Tensor]) -> torch.Tensor:
    return _sum_into([deltas[0].clone(), *deltas[1:]])


def _sum_into(deltas: list[torch.Tensor]) -> torch.Tensor:
    """Σ_t τ_t accumulated into ``deltas[0]``, left to right in expert order, like the reference codes' running
    sums (the sliced path sums its own buffers this way; ``sum_kernel`` a copy)."""
    total = deltas[0]
    for delta in deltas[1:]:
        total += delta
    return total


def base_kernel(deltas: list[torch.Tensor]) -> torch.Tensor:
    """Keep the pretrained value (official WUDI's fallback)."""
    return torch.zeros_like(deltas[0])


_FALLBACK_KERNELS = {"mean": mean_kernel, "sum": sum_kernel, "base": base_kernel}


# -- the walk ---------------------------------------------------------------------------------------------

@dataclass
class Unit:
    """One kernel call: a tensor, a row block of a fused tensor, or stacked separate q/k/v tensors."""

    keys: tuple[str, ...]
    matrix: bool
    split: int = 1  # >1: the matrix kernel runs on `split` row blocks of keys[0] separately


class ModelView:
    """Read access to base, experts and statistics of one merge, one tensor at a time."""

    def __init__(self, base: Source, experts: Sequence[Source], walk: WalkOptions,
                 stats: Mapping[str, Optional[Sequence[Source]]]):
        if isinstance(experts, (str, bytes)) or not isinstance(experts, Sequence):
            raise CheckpointError("experts must be a list of checkpoints")
        if len(experts) == 0:
            raise CheckpointError("the expert list is empty: give at least one expert checkpoint")
        self.walk = walk
        #: optional ``transform(deltas, key=, tasks=)`` applied to every task vector read (DARE's drop)
        self.transform: Optional[Callable[..., list[torch.Tensor]]] = None
        #: the same transform slice by slice (``Rule.chunk_transform`` with the merge's parameters bound)
        self.chunk_transform: Optional[Callable[..., Callable]] = None
        self.base = as_source(base, "base")
        self.experts = [as_source(e, f"expert {i}", base=self.base) for i, e in enumerate(experts)]
        self.T = len(self.experts)
        self.device = walk.device
        #: on a GPU, the inputs' tensors copied there through pinned buffers and kept while they fit (None: the CPU)
        self.inputs = staging.DeviceInputs(self.device) if staging.staged(self.device) else None
        excluded = _compile(walk.exclude, "exclude")
        self.excluded = {k for k in self.base.keys() if any(p.search(k) for p in excluded)}
        self.keys = [k for k in self.base.keys() if k not in self.excluded]
        if excluded and not self.keys:  # the "merge" would be the base, unchanged
            raise MethodError(f"exclude {list(walk.exclude)} matches every tensor of the base: nothing would be "
                              "merged (the output would be the base); exclude only the keys to keep at the base")
        self._check_experts()
        self.stats = {name: self._check_stats(name, files) for name, files in stats.items() if files is not None}
        for key in walk.module_params:
            if key not in self.base.keys():
                raise MethodError(f"module_params names {key!r}, which is not a key of the base model")

    # checks ---------------------------------------------------------------------------------------------
    def _check_experts(self) -> None:
        base_keys = set(self.base.keys())
        lower: dict[str, tuple] = {}  # expert → its first tensor stored at lower precision than the base's
        for expert in self.experts:
            keys = set(expert.keys())
            missing = [k for k in self.keys if k not in keys]
            if missing:
                raise CheckpointError(f"{expert.name}: missing key {missing[0]!r} of the base model"
                                      f" ({len(missing)} missing; --exclude REGEX, or WalkOptions(exclude=...) from Python, keeps such keys at the base)")
            extra = sorted(keys - base_keys)
            if extra:
                raise CheckpointError(f"{expert.name}: key {extra[0]!r} is not in the base model"
                                      f" ({len(extra)} extra keys)")
            for key in self.keys:
                if expert.shape(key) != self.base.shape(key):
                    raise CheckpointError(f"shape mismatch for {key!r}: base {list(self.base.shape(key))}, "
                                          f"{expert.name} {list(expert.shape(key))}")
                base_dtype, expert_dtype = self.base.dtype(key), expert.dtype(key)
                if base_dtype.is_floating_point != expert_dtype.is_floating_point or \
                        (not base_dtype.is_floating_point and base_dtype != expert_dtype):
                    raise CheckpointError(f"{expert.name}: {key!r} is stored as {_dtype_name(expert_dtype)}, the "
                                          f"base's as {_dtype_name(base_dtype)} (a quantised or foreign checkpoint?"
                                          " nbmerge merges floating-point tensors of matching models)")
                if base_dtype.is_floating_point and torch.finfo(expert_dtype).eps > torch.finfo(base_dtype).eps \
                        and expert.name not in lower:
                    lower[expert.name] = (key, expert_dtype, base_dtype)
        for name, (key, expert_dtype, base_dtype) in lower.items():
            warnings.warn(f"{name} is stored at lower precision than the base ({key!r}: {_dtype_name(expert_dtype)} "
                          f"against {_dtype_name(base_dtype)}): its task vector carries "
                          f"{_dtype_name(expert_dtype)}'s rounding of the weights, which can be as large as a small "
                          "fine-tuning update", NbmergeWarning, stacklevel=4)
        files = [_files_of(e) for e in self.experts]
        for i, first in enumerate(files):
            for j in range(i + 1, len(files)):
                if first and first == files[j]:
                    warnings.warn(f"{self.experts[i].name} and {self.experts[j].name} are the same checkpoint: "
                                  "that expert counts twice in the merge", NbmergeWarning, stacklevel=4)

    def _check_stats(self, name: str, files: Sequence[Source]) -> list[TensorSource]:
        if len(files) != self.T:
            raise CheckpointError(f"{len(files)} {name} files for {self.T} experts: give one per expert, "
                                  "in expert order")
        sources = [as_source(f, f"{name} {i}") for i, f in enumerate(files)]
        first = set(sources[0].keys())
        for source in sources:
            if set(source.keys()) != first:
                diff = sorted(set(source.keys()) ^ first)
                raise CheckpointError(f"{source.name}: its keys differ from {sources[0].name}'s (e.g. {diff[0]!r})")
            for key in source.keys():
                if key not in self.base.keys():
                    raise CheckpointError(f"{source.name}: {key!r} is not a key of the base model")
                want = self._stat_shape(name, key)
                if source.shape(key) != want:
                    raise CheckpointError(f"{source.name}: {name[:-1]} for {key!r} has shape "
                                          f"{list(source.shape(key))}, expected {list(want)}")
        return sources

    def _stat_shape(self, name: str, key: str) -> tuple[int, ...]:
        shape = self.base.shape(key)
        if name == "grams":
            if len(shape) != 2:
                raise CheckpointError(f"a Gram is given for {key!r}, which is not a matrix (shape {list(shape)})")
            return (shape[1], shape[1])
        return shape

    # reads ----------------------------------------------------------------------------------------------
    def is_float(self, key: str) -> bool:
        return self.base.dtype(key).is_floating_point

    def compute_dtype(self, key: str) -> torch.dtype:
        if self.walk.compute_dtype == "float64":
            return torch.float64
        if self.base.dtype(key) == torch.float64 or any(e.dtype(key) == torch.float64 for e in self.experts):
            return torch.float64
        return torch.float32

    def read(self, source: TensorSource, key: str, dtype: torch.dtype) -> torch.Tensor:
        """One tensor of ``source`` (the base, an expert, a statistic file) in ``dtype`` on the compute device, checked
        finite (``WalkOptions.check_finite``): how a method reads a whole tensor the walk does not hand it."""
        return self._load_owned(source, key, dtype)[0]

    def _load_owned(self, source: TensorSource, key: str, dtype: torch.dtype) -> tuple[torch.Tensor, bool]:
        """The tensor in ``dtype`` on the compute device, and whether it is a new tensor (a conversion or a copy
        made here) that the caller may overwrite, rather than the source's own (an in-memory state dict's)."""
        if self.inputs is not None:  # through the pinned buffers; a kept copy is converted, or handed out not owned
            stored = None if self.inputs.has(source, key) else source.get(key)
            raw = self.inputs.get(source, key, stored, keep=False).view(source.shape(key))
        else:
            raw = source.get(key)
        tensor = raw.to(device=self.device, dtype=dtype)
        if self.walk.check_finite and not all_finite(tensor):
            raise NumericalError(f"{source.name}: tensor {key!r} contains NaN or Inf")
        return tensor, tensor is not raw

    def base_tensor(self, key: str) -> torch.Tensor:
        return self.read(self.base, key, self.compute_dtype(key))

    def _delta(self, expert: TensorSource, key: str, base: torch.Tensor) -> torch.Tensor:
        tensor, owned = self._load_owned(expert, key, base.dtype)
        # In place where the tensor is ours: one model-sized allocation less per expert (the same values).
        return tensor.sub_(base) if owned and tensor.shape == base.shape else tensor - base

    def deltas(self, key: str, base: Optional[torch.Tensor] = None) -> list[torch.Tensor]:
        """Task vectors τ_t = θ_t − θ₀ of one tensor, in the compute dtype on the compute device."""
        base = self.base_tensor(key) if base is None else base
        deltas = [self._delta(e, key, base) for e in self.experts]
        return self.transform(deltas, key=key) if self.transform else deltas

    def chunks(self, key: str, size: Optional[int] = None, *, check: bool = True
               ) -> Iterator[tuple[slice, torch.Tensor, list[torch.Tensor]]]:
        """``(entries, θ₀, [τ_t])`` for consecutive slices of the flattened tensor ``key``: θ₀ and the task vectors
        of those entries in the compute dtype on the compute device, the (transformed) values ``deltas(key)`` holds
        there. The inputs are read where they are stored (a checkpoint's pages, no copy: ``view``) and converted
        slice by slice into buffers of ``size`` entries that are reused, so each input byte is read from memory
        once and every further pass over a slice runs in the CPU's cache. The buffers are overwritten by the next
        slice: use a slice before asking for the next. Each input's pages are released after its last slice.
        ``check=False``: no finiteness check (a method's preparatory passes, when its merge pass reads every input
        again and checks it)."""
        dtype = self.compute_dtype(key)
        n = math.prod(self.base.shape(key))
        size = size or chunk_entries(self.device)
        sources = [self.base, *self.experts]
        raws = self._device_inputs(key, sources) if self.inputs is not None else \
            [_stored(source, key).reshape(-1) for source in sources]
        if self.inputs is None:
            _populate(sources, key)
        width = min(size, max(n, 1))
        buffers = [torch.empty(width, dtype=dtype, device=self.device) for _ in sources]
        stream = self.chunk_transform(key=key, tasks=list(range(self.T)), numel=n) if self.chunk_transform else None
        check = check and self.walk.check_finite
        # On a GPU the check is one flag on the device, read once after the last slice (a read per slice would wait
        # for the device each time); the merge built from the slices is only handed out after that.
        bad = torch.zeros((), dtype=torch.bool, device=self.device) if check and self.inputs is not None else None
        try:
            for start in range(0, n, size):
                stop = min(n, start + size)
                parts = [buf[:stop - start] for buf in buffers]
                for raw, part in zip(raws, parts):
                    part.copy_(raw[start:stop])
                base, deltas = parts[0], parts[1:]
                for delta in deltas:
                    delta.sub_(base)
                # A NaN or an infinity in θ₀ or θ_t makes τ_t non-finite there: checking the task vectors checks
                # every input (one pass fewer); the inputs are looked at only to name the one at fault.
                if bad is not None:
                    for delta in deltas:
                        bad |= ~torch.isfinite(delta).all()
                elif check and not all(all_finite(delta) for delta in deltas):
                    self._name_non_finite(key, sources, [raw[start:stop] for raw in raws], dtype)
                yield slice(start, stop), base, (stream(deltas) if stream else deltas)
            if bad is not None and bool(bad):
                self._name_non_finite(key, sources, raws, dtype)
        finally:
            del raws
            if self.inputs is None:
                _release(sources, key)

    @staticmethod
    def _name_non_finite(key: str, sources, raws: list[torch.Tensor], dtype: torch.dtype) -> None:
        """Raise for the first input whose ``raws`` (its entries as stored) hold a NaN or an infinity, if any."""
        for source, raw in zip(sources, raws):
            if not all_finite(raw.to(dtype)):
                raise NumericalError(f"{source.name}: tensor {key!r} contains NaN or Inf")

    def _device_inputs(self, key: str, sources) -> list[torch.Tensor]:
        """Each source's ``key`` on the device (:class:`nbmerge.engine.staging.DeviceInputs`): the kept copies, the
        others copied from the checkpoints' pages now (mapped in one call each, released afterwards)."""
        missing = [source for source in sources if not self.inputs.has(source, key)]
        raws = {id(source): _stored(source, key) for source in missing}
        _populate(missing, key)
        try:
            return [self.inputs.get(source, key, raws.get(id(source))) for source in sources]
        finally:
            del raws
            _release(missing, key)

    @contextlib.contextmanager
    def stored(self, key: str, *, raw: bool = False) -> Iterator[Optional[list[torch.Tensor]]]:
        """θ₀ and each expert's ``key`` as stored (a checkpoint's pages, no copy; mapped in one call each) when the
        compiled passes (:mod:`nbmerge.engine.fused`) can read them: on the CPU, one dtype (bf16 or float32),
        computed in float32, the task vectors untransformed (``raw``: the caller applies the transform itself, as
        DARE's compiled passes apply its drop); else None. The pages are released afterwards."""
        transformed = self.transform is not None or self.chunk_transform is not None
        if str(self.device) != "cpu" or self.inputs is not None or (transformed and not raw):
            yield None
            return
        from . import fused  # numba's import (0.2 s) only where a merge needs it

        sources = [self.base, *self.experts]
        raws = [_stored(source, key) for source in sources]
        if not fused.same_dtype(raws, self.compute_dtype(key)):
            yield None
            return
        _populate(sources, key)
        try:
            yield raws
        finally:
            del raws
            _release(sources, key)

    def prefetch(self, key: str) -> None:
        """Start reading ``key`` of every input ahead (where a source can), to overlap with the current merge."""
        for source in (self.base, *self.experts):
            prefetch = getattr(source, "prefetch", None)
            if prefetch is not None:
                prefetch(key)

    def task_delta(self, key: str, t: int) -> torch.Tensor:
        base = self.base_tensor(key)
        delta = self._delta(self.experts[t], key, base)
        return self.transform([delta], key=key, tasks=[t])[0] if self.transform else delta

    def low_rank(self, key: str) -> Optional[list[Optional[LowRank]]]:
        """Per expert, τ_t of ``key`` as exact low-rank factors (a LoRA adapter read over this view's base), in the
        compute dtype on the compute device, or None for an expert whose τ_t is dense. None when no expert has
        factors, or a transform (DARE's drop) changes the task vectors."""
        if self.transform is not None or not self.walk.low_rank:
            return None
        dtype = None
        out: list[Optional[LowRank]] = []
        for expert in self.experts:
            factors = expert.low_rank(key) if hasattr(expert, "low_rank") and expert.base is self.base else None
            if factors is not None:
                dtype = dtype or self.compute_dtype(key)
                factors = factors.to(device=self.device, dtype=dtype)
            out.append(factors)
        return out if any(f is not None for f in out) else None

    def stat(self, name: str, key: str) -> Optional[list[torch.Tensor]]:
        sources = self.stats.get(name)
        if sources is None or key not in sources[0].keys():
            return None
        dtype = self.compute_dtype(key)
        tensors = [self.read(s, key, dtype) for s in sources]
        if name == "grams":
            for source, gram in zip(sources, tensors):
                _check_gram_once(source, key, gram)
        return tensors

    def float_keys(self) -> list[str]:
        return [k for k in self.keys if self.is_float(k)]


#: entries per slice of the elementwise path (:meth:`ModelView.chunks`): on a CPU, T + 2 float32 buffers of 1 MiB
#: stay in the cache (measured fastest among 2^15 … 2^20 on this project's machines); on a GPU, large enough that a
#: slice's kernels are not launch-bound
CPU_CHUNK = 1 << 16
GPU_CHUNK = 1 << 24


def chunk_entries(device: str) -> int:
    return CPU_CHUNK if str(device) == "cpu" else GPU_CHUNK


def _stored(source, key: str) -> torch.Tensor:
    """A source's tensor as stored: a view of a checkpoint's pages where the source offers one, else ``get``."""
    view = getattr(source, "view", None)
    return view(key) if view is not None else source.get(key)


def all_finite(tensor: torch.Tensor) -> bool:
    """Whether every entry is finite. A NaN or an infinity makes the sum NaN or infinite, so a finite sum (one
    pass, nothing allocated) settles it; only a non-finite sum (a bad entry, or finite entries whose sum
    overflows) falls back to the element-wise check."""
    if not tensor.is_floating_point() and not tensor.is_complex():
        return True
    if bool(torch.isfinite(tensor.sum())):
        return True
    return bool(torch.isfinite(tensor).all())


def _compile(patterns: Sequence[str], option: str) -> list[re.Pattern]:
    out = []
    for pattern in patterns:
        try:
            out.append(re.compile(pattern))
        except re.error as exc:
            raise MethodError(f"{option}: {pattern!r} is not a valid regular expression ({exc})") from None
    return out


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _files_of(source: TensorSource) -> frozenset:
    """The real paths of a file-backed source's files (empty for in-memory sources)."""
    return frozenset(os.path.realpath(f) for f in getattr(source, "files", ()))


#: relative tolerances of the Gram checks: asymmetry against the largest entry, and the most negative eigenvalue
#: (seen as a failed Cholesky after this much diagonal jitter) against the largest diagonal entry
GRAM_SYMMETRY_TOL = 1e-4
GRAM_PSD_TOL = 1e-5
_CHECKED_FILES: set = set()
_CHECKED_TENSORS: dict[int, int] = {}  # id of a live in-memory Gram → its version when checked


def _forget(ident: int) -> None:
    _CHECKED_TENSORS.pop(ident, None)


def _check_gram_once(source: TensorSource, key: str, gram: torch.Tensor) -> None:
    """Check a Gram the first time it is read (searches read the same Grams at every trial): a file again when it
    changes (path, mtime, size), an in-memory tensor again when it is modified in place."""
    files = getattr(source, "files", ())
    if files:
        stats = [(os.path.realpath(f), os.stat(f)) for f in files]
        memo = tuple((path, st.st_mtime_ns, st.st_size) for path, st in stats), key
        if memo not in _CHECKED_FILES:
            check_gram(gram, f"{source.name}: Gram of {key!r}")
            _CHECKED_FILES.add(memo)
        return
    raw = source.get(key)
    version = -1 if raw.is_inference() else raw._version  # inference tensors keep no version counter
    if _CHECKED_TENSORS.get(id(raw)) != version:
        check_gram(gram, f"{source.name}: Gram of {key!r}")
        if id(raw) not in _CHECKED_TENSORS:
            weakref.finalize(raw, _forget, id(raw))  # an id is reused only after its tensor is freed
        _CHECKED_TENSORS[id(raw)] = version


#: tile side of the Gram check's pass: a tile and its mirror (2 × 256 KiB in float32) stay in the cache while the
#: mirror is read transposed, which an untiled ``gram - gram.T`` reads a cache line per entry
_GRAM_TILE = 256


def check_gram(gram: torch.Tensor, where: str) -> None:
    """A Gram XᵀX must be symmetric (within tolerance) and positive semi-definite: raise NumericalError if not.

    One tiled pass finds the largest asymmetry and writes the lower triangle of ½(G + Gᵀ) in float64; the
    semi-definiteness test is a Cholesky factorisation of it with ``GRAM_PSD_TOL`` of the largest diagonal entry
    added to the diagonal (LAPACK reads only the lower triangle)."""
    scale = gram.abs().max()
    if scale == 0:
        return
    n = gram.shape[0]
    sym = torch.zeros(n, n, dtype=torch.float64, device=gram.device)
    asym = torch.zeros((), dtype=gram.dtype, device=gram.device)
    for i in range(0, n, _GRAM_TILE):
        for j in range(0, i + 1, _GRAM_TILE):
            tile, mirror = gram[i:i + _GRAM_TILE, j:j + _GRAM_TILE], gram[j:j + _GRAM_TILE, i:i + _GRAM_TILE].T
            asym = torch.maximum(asym, (tile - mirror).abs().max())
            sym[i:i + _GRAM_TILE, j:j + _GRAM_TILE] = (tile + mirror).double().mul_(0.5)
    if asym > GRAM_SYMMETRY_TOL * scale:
        raise NumericalError(f"{where} is not symmetric (max |G − Gᵀ| = {float(asym):.3g}, largest entry "
                             f"{float(scale):.3g}): not an input Gram XᵀX")
    diagonal = sym.diagonal()
    unjittered = diagonal.clone()
    diagonal.add_(GRAM_PSD_TOL * float(diagonal.abs().max().clamp_min(float(scale) * 1e-12)))
    _, info = torch.linalg.cholesky_ex(sym)
    if int(info) != 0:
        diagonal.copy_(unjittered)
        low = float(torch.linalg.eigvalsh(sym).min())
        raise NumericalError(f"{where} is not positive semi-definite (smallest eigenvalue {low:.3g}): "
                             "not an input Gram XᵀX")


def plan_units(view: ModelView, rule: Rule, walk: WalkOptions) -> list[Unit]:
    matrix_rule = walk.matrix_rule or rule.matrix_rule
    matrix_exclude = _compile(walk.matrix_exclude, "matrix_exclude")

    def on_matrix_path(key: str) -> bool:
        if rule.matrix is None or not view.is_float(key):
            return False
        if rule.matrix_from_stats:
            stats = view.stats.get(rule.matrix_from_stats)
            return stats is not None and key in stats[0].keys()
        shape = view.base.shape(key)
        if len(shape) != 2 or any(p.search(key) for p in matrix_exclude):
            return False
        return matrix_rule == "ndim2" or is_linear_weight(key, shape)

    units, grouped = [], set()
    if walk.qkv == "fused":
        groups: dict[str, dict[str, str]] = {}
        for key in view.keys:
            m = _QKV_SEPARATE.match(key)
            if m and on_matrix_path(key):
                groups.setdefault(m["prefix"], {})[m["which"]] = key
        for prefix, parts in groups.items():
            if set(parts) == {"q", "k", "v"}:
                grouped.update(parts.values())
    for key in view.float_keys():  # integer/bool buffers are copied from the base, never merged
        if key in grouped:
            m = _QKV_SEPARATE.match(key)
            if m["which"] == "q":
                prefix = m["prefix"]
                units.append(Unit(tuple(f"{prefix}.{w}_proj.weight" for w in "qkv"), matrix=True))
            continue
        matrix = on_matrix_path(key)
        split = 1
        if matrix and walk.qkv == "split" and key.endswith("in_proj_weight"):
            rows, cols = view.base.shape(key)
            if rows != 3 * cols:
                raise CheckpointError(f"qkv='split': {key!r} has shape {[rows, cols]}, expected 3d x d")
            split = 3
        units.append(Unit((key,), matrix=matrix, split=split))
    return units


def _pick(accepted: frozenset, params: Mapping[str, Any]) -> dict:
    return {k: v for k, v in params.items() if k in accepted}


def _call(kernel: Callable, deltas: list[torch.Tensor], accepted: frozenset, extras: dict, params: dict):
    kwargs = {k: v for k, v in params.items() if k in accepted}
    kwargs.update({k: v for k, v in extras.items() if k in accepted and v is not None})
    return kernel(deltas, **kwargs)


def _unit_params(unit: Unit, params: Mapping[str, Any], walk: WalkOptions) -> dict:
    """The method's parameters with the unit's per-module overrides (``WalkOptions.module_params``) applied."""
    out = dict(params)
    for k in unit.keys:
        out.update(walk.module_params.get(k, {}))
    return out


def _blocks(unit: Unit, deltas_per_key: list[list[torch.Tensor]]) -> list[list[torch.Tensor]]:
    """The per-task matrices a matrix kernel is called on for ``unit``: its keys' deltas stacked by rows (a fused
    q/k/v), then cut into ``unit.split`` equal row blocks (a split in_proj)."""
    deltas = [torch.cat(ds, dim=0) for ds in zip(*deltas_per_key)] if len(unit.keys) > 1 else deltas_per_key[0]
    if unit.split == 1:
        return [deltas]
    chunks = [d.chunk(unit.split, dim=0) for d in deltas]
    return [[c[i] for c in chunks] for i in range(unit.split)]


def _block_factors(view: ModelView, unit: Unit, count: int) -> Optional[list[Optional[list]]]:
    """Per block of ``unit``, the experts' low-rank factors (``ModelView.low_rank``) aligned with the block's
    deltas, for kernels that take ``factors``. Units that stack several keys get none (their τ is not one LoRA
    product); a split unit's blocks are row blocks of the factors' left side."""
    if len(unit.keys) > 1:
        return None
    per_expert = view.low_rank(unit.keys[0])
    if per_expert is None:
        return None
    if count == 1:
        return [per_expert]
    parts = [f.row_blocks(count) if f is not None else [None] * count for f in per_expert]
    return [[p[i] for p in parts] for i in range(count)]


def matrix_blocks(view: ModelView, rule: Rule, walk: WalkOptions, params: Mapping[str, Any]
                  ) -> Iterator[tuple[str, list[torch.Tensor], dict]]:
    """What ``walk_merge`` hands the matrix kernel, without merging: ``(name, per-task deltas, parameters)`` for
    every block on the matrix path (name ``key`` or ``key[i]`` for the i-th block of a split unit). Diagnostics
    that measure what a method sees (ACE's γ) walk a model with this."""
    for unit in plan_units(view, rule, walk):
        if not unit.matrix:
            continue
        blocks = _blocks(unit, [view.deltas(k) for k in unit.keys])
        names = [unit.keys[0]] if len(blocks) == 1 else [f"{unit.keys[0]}[{i}]" for i in range(len(blocks))]
        for name, block in zip(names, blocks):
            yield name, block, _unit_params(unit, params, walk)


def walk_merge(base: Source, experts: Sequence[Source], rule: Rule, *, params: Mapping[str, Any],
               scale: float = 1.0, walk: Optional[WalkOptions] = None, stream: bool = False,
               grams: Optional[Sequence[Source]] = None, fishers: Optional[Sequence[Source]] = None):
    """Merge ``experts`` into ``base`` with ``rule``; θ = θ₀ + scale·τ_merged for every merged tensor.

    Returns a state dict with the base's keys and dtypes, or, with ``stream=True``, an iterator of
    ``(key, tensor)`` pairs in the base's key order (the CLI writes big models shard by shard from it).
    All input checks run before the first tensor is produced.
    """
    walk = walk or WalkOptions()
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise MethodError(f"scale must be a finite number, got {scale!r}")
    view = ModelView(base, experts, walk, {"grams": grams, "fishers": fishers})
    units = plan_units(view, rule, walk)
    allowed = set(params) | {"scale"}
    for key, overrides in walk.module_params.items():
        unknown = set(overrides) - allowed
        if unknown:
            raise MethodError(f"module_params[{key!r}]: unknown parameter {sorted(unknown)[0]!r}; "
                              f"valid: {', '.join(sorted(allowed))}")
    # Elementwise methods (TA, TIES, Fisher, ...) give a kernel as their fallback: it applies to every
    # tensor and a WalkOptions.fallback cannot replace it.
    if isinstance(rule.fallback, str):
        fallback = _FALLBACK_KERNELS[walk.fallback or rule.fallback]
    else:
        fallback = rule.fallback
    if rule.transform:
        view.transform = functools.partial(rule.transform, **_pick(rule.takes["transform"], params))
    memo: dict = {}  # what the hooks keep between passes, for this merge only
    if rule.chunk_transform:
        view.chunk_transform = functools.partial(rule.chunk_transform,
                                                 **_pick(rule.takes["chunk_transform"], dict(params, memo=memo)))
    context = dict(rule.prepare(view, **_pick(rule.takes["prepare"], dict(params, memo=memo)))) if rule.prepare else {}
    iterator = _produce(view, rule, units, fallback, dict(params), scale, walk, context, memo)
    if stream:
        return MergeStream(iterator, [(k, view.base.dtype(k), view.base.shape(k)) for k in view.base.keys()])
    return dict(iterator)


class MergeStream:
    """The ``(key, tensor)`` pairs of a streamed merge with what they will be: ``plan``, each pair's key, dtype and
    shape in order (the base's), known before the first is computed (a writer lays out the file up front)."""

    def __init__(self, items, plan: list[tuple[str, torch.dtype, tuple[int, ...]]]):
        self.items, self.plan = items, plan

    def __iter__(self):
        return iter(self.items)

    def __next__(self):
        return next(self.items)


def _produce(view: ModelView, rule: Rule, units: list[Unit], fallback: Callable, params: dict,
             scale: float, walk: WalkOptions, context: dict, memo: dict) -> Iterator[tuple[str, torch.Tensor]]:
    matrix_accepts = rule.takes.get("matrix", frozenset())
    fallback_accepts = rule.takes["fallback"] if fallback is rule.fallback else frozenset()
    sliced = _is_elementwise(rule, fallback_accepts)
    unit_of = {k: unit for unit in units for k in unit.keys}
    pending: dict[str, torch.Tensor] = {}
    kept: list[tuple[str, list[str]]] = []  # non-float tensors where an expert differs from the base
    order = view.base.keys()
    for index, key in enumerate(order):
        if index + 1 < len(order) and order[index + 1] in unit_of:
            view.prefetch(order[index + 1])  # the kernel reads it ahead while this tensor is merged
        if key in pending:
            yield key, pending.pop(key)
            continue
        if key not in unit_of:  # excluded, or not floating point (integer buffers): kept as they are
            value = view.base.get(key)
            if key in view.keys:
                differs = [e.name for e in view.experts if not torch.equal(e.get(key), value)]
                if differs:
                    kept.append((key, differs))
            yield key, value
            continue
        unit = unit_of[key]
        unit_params = _unit_params(unit, params, walk)
        unit_scale = float(unit_params.pop("scale", scale))
        if not math.isfinite(unit_scale):
            raise MethodError(f"scale for {key!r} must be a finite number, got {unit_scale!r}")
        if sliced and not unit.matrix and len(unit.keys) == 1:
            fused = None
            if rule.fused is not None and fallback is rule.fallback and unit_params == params:
                # (a module's own parameters take the kernel's path: a transform reads the merge's parameters)
                fused = functools.partial(rule.fused, view, **_pick(rule.takes["fused"],
                                                                    dict(params, **context, memo=memo)))
            yield key, _merge_sliced(view, key, fallback, fallback_accepts, dict(context, key=key), unit_params,
                                     unit_scale, walk, fused)
            continue
        base_tensors = [view.base_tensor(k) for k in unit.keys]
        if all(b.numel() == 0 for b in base_tensors):  # nothing to merge (and no spectrum to decompose)
            for k, base_t in zip(unit.keys, base_tensors):
                if k == key:
                    yield k, base_t.to(view.base.dtype(k))
                else:
                    pending[k] = base_t.to(view.base.dtype(k))
            continue
        deltas_per_key = [view.deltas(k, base) for k, base in zip(unit.keys, base_tensors)]
        extras = dict(context, key=key, base=base_tensors[0],
                      grams=view.stat("grams", unit.keys[0]), fishers=view.stat("fishers", key))
        if unit.matrix:
            blocks = _blocks(unit, deltas_per_key)
            factors = _block_factors(view, unit, len(blocks)) if "factors" in matrix_accepts else None
            outs = [_call(rule.matrix, block, matrix_accepts, {**extras, "factors": fs}, unit_params)
                    for block, fs in zip(blocks, factors or [None] * len(blocks))]
            merged = torch.cat(outs, dim=0) if len(outs) > 1 else outs[0]
            del outs
            merged_parts = merged.split([b.shape[0] for b in base_tensors], dim=0)
        else:
            merged_parts = [_call(fallback, deltas_per_key[0], fallback_accepts, extras, unit_params)]
        for k, tau in zip(unit.keys, merged_parts):
            if not all_finite(tau):
                raise NumericalError(_not_finite_message(k, tau.dtype, deltas_per_key))
        # The task vectors are done with: drop them before θ₀ + scale·τ allocates (the largest tensor's peak is
        # then θ₀, the T task vectors and the kernel's result, not those plus the scaled sum).
        del deltas_per_key, extras
        blocks = None
        for k, base_t, tau in zip(unit.keys, base_tensors, merged_parts):
            scaled = unit_scale * tau  # a new tensor: θ₀ is added in place (the same sum, one allocation less)
            if scaled.dtype == base_t.dtype and scaled.shape == base_t.shape and scaled.device == base_t.device:
                merged = scaled.add_(base_t)
            else:
                merged = base_t + scaled
            out = merged.to(view.base.dtype(k))
            del scaled, merged
            if walk.check_finite and not all_finite(out):
                bad = int((~torch.isfinite(out)).sum())
                raise NumericalError(f"merged tensor {k!r} is not finite in {_dtype_name(out.dtype)} ({bad} of "
                                     f"{out.numel()} values overflow at scale {unit_scale:g}); nothing was written")
            if k == key:
                yield k, out
            else:
                pending[k] = out
    if kept:
        key, names = kept[0]
        warnings.warn(f"{len(kept)} non-floating-point tensor(s) differ between the base and the experts and "
                      f"were kept at the base's value (e.g. {key!r}, in {', '.join(names)}): integer and bool "
                      "tensors are not merged", NbmergeWarning, stacklevel=2)


#: what a kernel may take that is not per entry: a kernel that names one of these runs on whole tensors
_WHOLE_TENSOR_ARGS = {"base", "grams", "fishers", "factors"}


def _is_elementwise(rule: Rule, fallback_accepts: set[str]) -> bool:
    """Whether the fallback may run slice by slice (:func:`_merge_sliced`): an elementwise kernel, and any transform
    of the task vectors available slice by slice too."""
    if not (isinstance(rule.fallback, str) or rule.elementwise):
        return False
    if rule.transform is not None and rule.chunk_transform is None:
        return False
    return not (fallback_accepts & _WHOLE_TENSOR_ARGS)


def _merge_sliced(view: ModelView, key: str, kernel: Callable, accepted: set[str], extras: dict, params: dict,
                  scale: float, walk: WalkOptions, fused: Optional[Callable] = None) -> torch.Tensor:
    """One tensor of an elementwise merge, θ = θ₀ + scale·kernel(τ_1 … τ_T), slice by slice (:meth:`ModelView.chunks`).

    The same float operations in the same order per entry as the whole-tensor path (so the same bits): τ_t =
    θ_t − θ₀ in the compute dtype, the kernel, its finiteness check, scale·τ, + θ₀, one rounding to the stored
    dtype. What each input byte costs: one read from memory (the checkpoint's page, no copy); the output's bytes
    are written once; the conversions and the kernel's passes touch only the slice's buffers, in cache.
    ``fused``: the rule's compiled pass for this tensor (``fused(key=, scale=)``), tried first."""
    dtype = view.base.dtype(key)
    if kernel is sum_kernel or kernel is mean_kernel:
        fast = _fused_sum(view, key, scale, mean=kernel is mean_kernel)
        if fast is not None:
            return fast
    if fused is not None:
        fast = fused(key=key, scale=scale)
        if fast is not None:
            return fast
    if str(view.device) == "cpu":
        from .fused import reused_output  # memory the writer has released, in a merge written to a file

        out = reused_output(view.base.shape(key), dtype)
    else:
        out = torch.empty(view.base.shape(key), dtype=dtype, device=view.device)
    flat = out.view(-1)
    scaled = None
    overflow = 0
    # On a GPU the checks are counts on the device, read once after the last slice (no wait for it per slice).
    deferred = view.inputs is not None
    bad = torch.zeros((), dtype=torch.bool, device=view.device) if deferred else None
    # The named fallbacks make one or two passes per slice: slices 4× larger (fewer calls, measured 10% faster on
    # task arithmetic); TIES and DARE keep T-sized temporaries per slice, which must stay in cache.
    size = chunk_entries(view.device) * (4 if kernel in _FALLBACK_KERNELS.values() else 1)
    for entries, base, deltas in view.chunks(key, size):
        if kernel is sum_kernel or kernel is mean_kernel:  # the slice's buffers are ours: summed in place
            tau = _sum_into(deltas)
            if kernel is mean_kernel:
                tau.div_(len(deltas))
        else:
            tau = _call(kernel, deltas, accepted, extras, params)
        if deferred:
            bad |= ~torch.isfinite(tau).all()
        elif not all_finite(tau):
            raise NumericalError(_not_finite_message(key, tau.dtype, [view.deltas(key)]))
        if scaled is None:
            scaled = torch.empty(base.shape[0], dtype=tau.dtype, device=tau.device)
        part = torch.mul(tau, scale, out=scaled[:tau.shape[0]]).add_(base)
        target = flat[entries]
        target.copy_(part)
        if walk.check_finite and deferred:
            overflow = overflow + (~torch.isfinite(target)).sum()
        elif walk.check_finite and not all_finite(target):
            overflow += int((~torch.isfinite(target)).sum())
    if deferred and bool(bad):
        raise NumericalError(_not_finite_message(key, view.compute_dtype(key), [view.deltas(key)]))
    overflow = int(overflow)
    if overflow:
        raise NumericalError(f"merged tensor {key!r} is not finite in {_dtype_name(dtype)} ({overflow} of "
                             f"{out.numel()} values overflow at scale {scale:g}); nothing was written")
    return out


def _release(sources, key: str) -> None:
    """Drop ``key``'s mapped pages from this process in every source that reads through a memory map."""
    for source in sources:
        release = getattr(source, "release", None)
        if release is not None:
            release(key)


def _populate(sources, key: str) -> None:
    """Map the pages of ``key`` in every source that reads through a memory map, in one call each (cheaper than
    a page fault per 64 KiB in the pass that follows)."""
    for source in sources:
        populate = getattr(source, "populate", None)
        if populate is not None:
            populate(key)


def _fused_sum(view: ModelView, key: str, scale: float, *, mean: bool) -> Optional[torch.Tensor]:
    """Task arithmetic or averaging of ``key`` in one compiled pass (:mod:`nbmerge.engine.fused`), when its
    inputs and output are CPU tensors of one dtype (bf16 or float32) computed in float32; None otherwise, or when an
    entry came out non-finite (the torch path then raises the error that names its cause)."""
    with view.stored(key) as raws:
        if raws is None:
            return None
        from . import fused

        if not fused.takes(raws, view.base.dtype(key), view.compute_dtype(key)):
            return None
        return fused.sum_merge(raws, scale, mean=mean)


def _not_finite_message(key: str, dtype: torch.dtype, deltas_per_key) -> str:
    """Why a merged task vector came out non-finite: task vectors near the dtype's largest value overflow the
    method's sums and products; otherwise the usual cause is an ill-conditioned solve."""
    peak = max((float(d.abs().max()) for ds in deltas_per_key for d in ds if d.numel()), default=0.0)
    limit = torch.finfo(dtype).max
    if not math.isfinite(peak) or peak > math.sqrt(limit):
        return (f"merged task vector for {key!r} is not finite: the task vectors reach |τ| = {peak:.3g}, and the "
                f"method's {_dtype_name(dtype)} sums and products overflow (largest {limit:.3g}); nothing was "
                "written (rescale the checkpoints, or compute in float64 with --compute-dtype float64)")
    return (f"merged task vector for {key!r} is not finite (an ill-conditioned solve? try a larger regulariser); "
            "nothing was written")


def task_vectors(base: Source, experts: Sequence[Source], walk: Optional[WalkOptions] = None) -> list[StateDict]:
    """τ_t = θ_t − θ₀ for every floating tensor (whole models in memory: for notebooks and small models)."""
    view = ModelView(base, experts, walk or WalkOptions(), {})
    per_key = {key: view.deltas(key) for key in view.float_keys()}
    return [{key: ds[t] for key, ds in per_key.items()} for t in range(view.T)]
