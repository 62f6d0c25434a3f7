"""Task arithmetic and averaging in one pass per tensor: compiled loops straight from the stored bf16/float32 bytes.

The walker's elementwise path (:meth:`~nbmerge.engine.walker.ModelView.chunks`) converts each input slice to
float32 in a buffer, subtracts, sums, scales, adds θ₀, rounds and checks, each step a separate eager torch call:
about 13 passes over every slice. Here one compiled loop (numba) does all of it per block of entries:

    τ = ((θ_1 − θ₀) + (θ_2 − θ₀)) + … + (θ_T − θ₀)    in float32, left to right in expert order
    τ = τ / T                                            (averaging only)
    θ = round(τ · scale + θ₀)                            two float32 roundings (no fused multiply-add), then one
                                                         rounding to the stored dtype (bf16: to nearest, ties even)

the very float operations, in the same order, as the torch path, so the results are bit-identical (tested against
it). What each byte costs: each input entry is read from memory once (the checkpoint's pages, no copy), each
output entry written once; the float32 values live in registers and a block-sized accumulator that stays in the
CPU's first-level cache. The loop counts the output entries that are not finite; any (a NaN or an infinity in an
input, or an overflow) sends the tensor back to the torch path, which raises the error that names the cause.

Only CPU tensors whose inputs and output are all bf16 or all float32 take this path, and only when numba is
importable (it is a dependency; without it the torch path runs). The loop releases the GIL: a large tensor is
split into contiguous ranges over the compute threads, and the output writer keeps running beside it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np
import torch

#: entries per block: the float32 accumulator (8 KiB) stays in the first-level cache
BLOCK = 2048
#: below this many entries a tensor stays on the torch path (the call overhead would dominate)
MIN_ENTRIES = 1 << 14
#: a tensor is split over several threads only above this many entries per thread
MIN_ENTRIES_PER_THREAD = 1 << 20

_DTYPES = (torch.bfloat16, torch.float32)


try:
    from numba import njit, types
    from numba.extending import intrinsic, overload
except ImportError:  # pragma: no cover - numba is a dependency; a platform without it keeps the torch path
    njit = None

if njit is not None:
    @intrinsic
    def _as_f32(typingctx, bits):
        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], context.get_value_type(types.float32))
        return types.float32(types.uint32), codegen

    @intrinsic
    def _as_u32(typingctx, value):
        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], context.get_value_type(types.uint32))
        return types.uint32(types.float32), codegen

    @njit(inline="always")
    def _round_bf16(value):
        # round to nearest, ties to even (as torch's float32 -> bf16); a NaN stays a quiet NaN
        bits = _as_u32(value)
        if (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
            return np.uint16(0x7FC0)
        return np.uint16((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))

    def _widen(stored):  # pragma: no cover - compiled only (see the overload)
        raise NotImplementedError

    @overload(_widen, inline="always")
    def _widen_stored(stored):
        """A stored entry as float32: bf16 bits (read as uint16) widened exactly, float32 as it is."""
        if isinstance(stored, types.Integer):
            return lambda stored: _as_f32(np.uint32(stored) << np.uint32(16))
        return lambda stored: stored

    def _store(out, i, value):  # pragma: no cover - compiled only (see the overload)
        raise NotImplementedError

    @overload(_store, inline="always")
    def _store_stored(out, i, value):
        """Write a float32 value into the output in its stored form; True when the stored value is not finite."""
        if isinstance(out.dtype, types.Integer):  # bf16 bits
            def store_bf16(out, i, value):
                rounded = _round_bf16(value)
                out[i] = rounded
                return (rounded & np.uint16(0x7F80)) == np.uint16(0x7F80)
            return store_bf16

        def store_f32(out, i, value):
            out[i] = value
            return not np.isfinite(value)
        return store_f32

    @njit(cache=True, nogil=True, boundscheck=False)
    def _sum(base, experts, scale, divide, out, start, stop):
        acc = np.empty(BLOCK, np.float32)
        scale32, divide32 = np.float32(scale), np.float32(divide)
        bad = 0
        for s in range(start, stop, BLOCK):
            m = min(BLOCK, stop - s)
            b = base[s:s + m]
            e = experts[0][s:s + m]
            for i in range(m):
                acc[i] = _widen(e[i]) - _widen(b[i])
            for t in range(1, len(experts)):
                e = experts[t][s:s + m]
                for i in range(m):
                    acc[i] = acc[i] + (_widen(e[i]) - _widen(b[i]))
            o = out[s:s + m]
            for i in range(m):
                tau = acc[i]
                if divide != 1:
                    tau = tau / divide32
                bad += _store(o, i, tau * scale32 + _widen(b[i]))
        return bad

    @njit(cache=True, nogil=True, boundscheck=False)
    def _count_high(base, experts, counts):
        # counts[t, h] += 1 for every entry whose |τ_t| has float32 bits with high half h
        for t in range(len(experts)):
            e = experts[t]
            row = counts[t]
            for i in range(base.shape[0]):
                bits = _as_u32(abs(_widen(e[i]) - _widen(base[i])))
                row[bits >> np.uint32(16)] += 1

    @njit(cache=True, nogil=True, boundscheck=False)
    def _count_low(base, experts, starts, counts):
        # counts[t, 1 + clamp(bits − start_t, −1, 2¹⁶)] += 1: the low halves inside task t's bin, and everything
        # below and above the bin in the two end counts
        for t in range(len(experts)):
            e = experts[t]
            row = counts[t]
            start = starts[t]
            for i in range(base.shape[0]):
                offset = np.int64(_as_u32(abs(_widen(e[i]) - _widen(base[i])))) - start
                row[min(max(offset, -1), 65536) + 1] += 1

    _KERNELS = {torch.bfloat16: _sum, torch.float32: _sum}
else:  # pragma: no cover
    _KERNELS = {}


def available() -> bool:
    return bool(_KERNELS)


def takes(raws: list[torch.Tensor], out_dtype: torch.dtype, compute_dtype: torch.dtype) -> bool:
    """Whether these stored inputs (θ₀ first) and this output take the compiled sum: :func:`same_dtype`, the
    output in that dtype too, at least one expert, and a tensor large enough to be worth a call."""
    return (len(raws) >= 2 and raws[0].dtype == out_dtype and raws[0].numel() >= MIN_ENTRIES
            and same_dtype(raws, compute_dtype))


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    flat = tensor.reshape(-1)
    return flat.view(torch.int16).numpy().view(np.uint16) if flat.dtype == torch.bfloat16 else flat.numpy()


class _Outputs:
    """Output tensors whose memory is reused once the writer is done with them, while :func:`reusing_outputs` is
    on (a merge written to a file). A model-sized output in fresh memory costs a page fault per page, and on
    these virtual machines a first touch of memory is slow: 2.8 s of a 1.1 B-parameter bf16 merge's 5.5 s of
    compute went to it (measured), none once the memory is reused. Memory is reused by exact size (a model's
    tensors come in a few shapes), up to :attr:`LIMIT` bytes held; an output still referenced anywhere (queued
    for writing, or kept by the caller) is never handed out again."""

    LIMIT = 3 << 28

    def __init__(self):
        self._lock = threading.Lock()
        self._held: list[tuple[torch.Tensor, int]] = []  # (arena, its use count when nobody else holds it)
        self.depth = 0

    def take(self, shape: torch.Size, dtype: torch.dtype) -> torch.Tensor:
        nbytes = math.prod(shape) * dtype.itemsize
        if not self.depth or _uses is None:
            return torch.empty(shape, dtype=dtype)
        with self._lock:
            free = [(a, idle) for a, idle in self._held if a.numel() == nbytes and _uses(a) == idle]
            if free:
                arena = free[0][0]
            else:
                held = sum(a.numel() for a, _ in self._held)
                if held + nbytes > self.LIMIT:  # make room: drop arenas nobody uses
                    self._held = [(a, idle) for a, idle in self._held if _uses(a) != idle]
                    held = sum(a.numel() for a, _ in self._held)
                if held + nbytes > self.LIMIT:
                    return torch.empty(shape, dtype=dtype)
                arena = torch.empty(nbytes, dtype=torch.uint8)
                self._held.append((arena, _uses(arena)))
        return arena.view(dtype).view(shape)

    def clear(self) -> None:
        with self._lock:
            self._held = []


def _use_count():
    count = getattr(torch._C, "_storage_Use_Count", None)
    if count is None:  # pragma: no cover - an older torch: no reuse
        return None
    return lambda tensor: count(tensor.untyped_storage()._cdata)


_uses = _use_count()
_OUTPUTS = _Outputs()


def reused_output(shape: torch.Size, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised output tensor, in reused memory while :func:`reusing_outputs` is on."""
    return _OUTPUTS.take(shape, dtype)


@contextlib.contextmanager
def reusing_outputs():
    """While on, the compiled path's outputs reuse memory the consumer has released (see :class:`_Outputs`); a
    merge streamed to a file turns it on, an in-memory merge leaves it off (its tensors are the caller's)."""
    _OUTPUTS.depth += 1
    try:
        yield
    finally:
        _OUTPUTS.depth -= 1
        if not _OUTPUTS.depth:
            _OUTPUTS.clear()


@functools.lru_cache(maxsize=4)
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="nbmerge-fused")


def sum_merge(raws: list[torch.Tensor], scale: float, *, mean: bool, threads: Optional[int] = None
              ) -> Optional[torch.Tensor]:
    """θ₀ + scale·Σ_t(θ_t − θ₀) (``mean``: the average instead of the sum) from the stored tensors ``raws`` (θ₀
    first), in their dtype; None when an output entry is not finite (the caller's torch path says why)."""
    kernel = _KERNELS[raws[0].dtype]
    base, *experts = [_numpy(r) for r in raws]
    out = reused_output(raws[0].shape, raws[0].dtype)
    target = _numpy(out)
    n = base.shape[0]
    divide = len(experts) if mean else 1
    parts = max(1, min(threads or torch.get_num_threads(), n // MIN_ENTRIES_PER_THREAD))
    if parts == 1:
        bad = kernel(base, tuple(experts), float(scale), divide, target, 0, n)
    else:
        bounds = [n * p // parts // BLOCK * BLOCK for p in range(parts)] + [n]
        jobs = [_pool(parts).submit(kernel, base, tuple(experts), float(scale), divide, target, lo, hi)
                for lo, hi in zip(bounds, bounds[1:])]
        bad = sum(job.result() for job in jobs)
    return None if bad else out


def same_dtype(raws: list[torch.Tensor], compute_dtype: torch.dtype) -> bool:
    """Whether these stored inputs can be read by the compiled passes: CPU, contiguous, one dtype (bf16 or
    float32), computed in float32."""
    dtype = raws[0].dtype
    return (compute_dtype == torch.float32 and dtype in _DTYPES and available()
            and all(r.dtype == dtype and r.device.type == "cpu" and r.is_contiguous() for r in raws))


def count_magnitudes(raws: list[torch.Tensor], counts: np.ndarray, starts: Optional[np.ndarray] = None) -> None:
    """Add one tensor's counts of the float32 bits of |τ_t| = |θ_t − θ₀| (``raws``: θ₀ first) to ``counts``:
    without ``starts``, per high half (``counts``: T × 2¹⁶); with them, per low half inside the bin that starts at
    ``starts[t]`` (``counts``: T × (2¹⁶ + 2), the first and last counting what lies below and above it). The
    counts of TIES's radix selection, in one pass over the stored bytes."""
    base, *experts = [_numpy(r) for r in raws]
    if starts is None:
        _count_high(base, tuple(experts), counts)
    else:
        _count_low(base, tuple(experts), starts, counts)
