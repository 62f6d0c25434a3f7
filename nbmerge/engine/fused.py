"""Elementwise merges in one pass per tensor: compiled loops straight from the stored bf16/float32 bytes.

The walker's elementwise path (:meth:`~nbmerge.engine.walker.ModelView.chunks`) converts each input slice to
float32 in a buffer, subtracts, sums, scales, adds θ₀, rounds and checks, each step a separate eager torch call:
about 13 passes over every slice for task arithmetic, some 30 for TIES. Here one compiled loop (numba) does all
of it per block of entries. Task arithmetic and averaging:

    τ = ((θ_1 − θ₀) + (θ_2 − θ₀)) + … + (θ_T − θ₀)    in float32, left to right in expert order
    τ = τ / T                                            (averaging only)
    θ = round(τ · scale + θ₀)                            two float32 roundings (no fused multiply-add), then one
                                                         rounding to the stored dtype (bf16: to nearest, ties even)

TIES and DARE (:func:`ties_merge`): per entry, τ_t = θ_t − θ₀, DARE's drop (× its 0/1 mask read from packed bits,
÷ (1 − p)), TIES's trim (× 0/1 of |τ_t| ≥ the task's threshold), the elected sign γ = sign(0 + τ̂_1 + … + τ̂_T)
(the model's majority where it is 0), the agreeing entries' mean (sum, or largest magnitude × γ), then θ as above;
:func:`ties_signs` and :func:`count_magnitudes` are the passes that find the majority and the thresholds.

These are the very float operations, in the same order, as the torch path, so the results are bit-identical
(tested against it, signed zeros included). What each byte costs: each pass reads each input entry from memory once
(the checkpoint's pages, no copy) and each merge writes each output entry once; TIES reads the inputs four times
(two threshold counts, the signs, the merge), DARE-TIES too, plus one bit per entry and task for its masks, DARE-TA
once. The float32 values live in registers and in block-sized buffers (2048 entries, × T for TIES) that stay in
the CPU's cache. The merge loops count the entries that are not finite; any (a NaN or an infinity in an input, or
an overflow) sends the tensor back to the torch path, which raises the error that names the cause.

Only CPU tensors whose inputs and output are all bf16 or all float32 take this path, and only when numba is
importable (it is a dependency; without it the torch path runs). The loops release the GIL: a large tensor is
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

#: bit k of each byte value, most significant first (numpy's packbits order), as float32 1.0/0.0: DARE's packed
#: keep masks unpacked 8 entries at a time
_UNPACKED = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float32)

#: what :func:`ties_merge` computes from the trimmed task vectors: their sum in expert order (DARE-TA), or the
#: TIES disjoint merge of the entries that agree with the elected sign: their mean, sum, or largest magnitude
MODE_SUM, MODE_MEAN, MODE_TIES_SUM, MODE_MAX = 0, 1, 2, 3
TIES_MODES = {"mean": MODE_MEAN, "sum": MODE_TIES_SUM, "max": MODE_MAX}


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
        bad = False
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
            if divide != 1:
                for i in range(m):
                    acc[i] = acc[i] / divide32
            o = out[s:s + m]
            for i in range(m):  # an OR of flags, not a count: the loop stays one of vector instructions
                bad |= _store(o, i, acc[i] * scale32 + _widen(b[i]))
        return bad

    @njit(inline="always")
    def _taus(expert, base, bits, drop, divisor, rescale, s, m, row):
        # row[i] = τ_t = θ_t − θ₀ of entry s + i in float32 (s a multiple of 8); DARE's drop as the torch path
        # computes it: × its 1.0/0.0 mask, then ÷ (1 − p). The mask's packed bits (numpy's order: entry j is bit
        # 7 − j % 8 of byte j // 8) are unpacked into the row first, 8 entries per byte from a table
        if drop:
            first = s >> 3
            for b in range((m + 7) >> 3):
                byte = bits[first + b]
                for k in range(8):
                    row[8 * b + k] = _UNPACKED[byte, k]
            for i in range(m):
                tau = (_widen(expert[s + i]) - _widen(base[s + i])) * row[i]
                if rescale:
                    tau = tau / divisor
                row[i] = tau
        else:
            for i in range(m):
                row[i] = _widen(expert[s + i]) - _widen(base[s + i])

    @njit(cache=True, nogil=True, boundscheck=False)
    def _count_high(base, experts, drops, drop, divisor, rescale, counts):
        # counts[t, h] += 1 for every entry whose |τ_t| has float32 bits with high half h
        row = np.empty(BLOCK, np.float32)
        n = base.shape[0]
        for t in range(len(experts)):
            e = experts[t]
            bits = drops[t]
            histogram = counts[t]
            for s in range(0, n, BLOCK):
                m = min(BLOCK, n - s)
                _taus(e, base, bits, drop, divisor, rescale, s, m, row)
                for i in range(m):
                    histogram[_as_u32(abs(row[i])) >> np.uint32(16)] += 1

    @njit(cache=True, nogil=True, boundscheck=False)
    def _count_low(base, experts, drops, drop, divisor, rescale, starts, counts):
        # counts[t, bits − start_t] += 1 for the entries inside task t's bin (their low halves); the rest, most
        # entries, are only compared (counting them in two end counts made every increment wait for the last)
        row = np.empty(BLOCK, np.float32)
        n = base.shape[0]
        for t in range(len(experts)):
            e = experts[t]
            bits = drops[t]
            histogram = counts[t]
            start = starts[t]
            for s in range(0, n, BLOCK):
                m = min(BLOCK, n - s)
                _taus(e, base, bits, drop, divisor, rescale, s, m, row)
                for i in range(m):
                    offset = np.int64(_as_u32(abs(row[i]))) - start
                    if offset >= 0 and offset < 65536:
                        histogram[offset] += 1

    @njit(inline="always")
    def _trimmed(base, experts, drops, drop, divisor, rescale, thresholds, trim, s, m, work):
        # work[t, i] = τ_t of entry s + i, dropped (DARE) and trimmed (TIES: × 1.0 where |τ_t| ≥ its threshold,
        # × 0.0 elsewhere, so a trimmed entry keeps the sign of its zero, as the torch path's product does);
        # returns how many are not finite
        bad = 0
        for t in range(len(experts)):
            row = work[t]
            _taus(experts[t], base, drops[t], drop, divisor, rescale, s, m, row)
            threshold = thresholds[t]
            for i in range(m):
                tau = row[i]
                if trim:
                    tau = tau * np.float32(1.0 if abs(tau) >= threshold else 0.0)
                bad += 0 if np.isfinite(tau) else 1
                row[i] = tau
        return bad

    @njit(inline="always")
    def _rows_sum(work, i, step, power):
        # Σ_t work[t, i] in the order of nbmerge.methods.ties.rows_sum (torch's CPU reduction over rows)
        rows = work.shape[0]
        if rows < step:
            total = np.float32(0.0)
            for t in range(rows):
                total = total + work[t, i]
            return total
        acc = np.zeros(4, np.float32)
        mask = step - 1
        t = 0
        while t + step <= rows:
            for _ in range(step):
                acc[0] = acc[0] + work[t, i]
                t += 1
            for level in range(1, 4):
                acc[level] = acc[level] + acc[level - 1]
                acc[level - 1] = np.float32(0.0)
                if t & (mask << (level * power)):
                    break
        while t < rows:
            acc[0] = acc[0] + work[t, i]
            t += 1
        for level in range(1, 4):
            acc[0] = acc[0] + acc[level]
        return acc[0]

    @njit(inline="always")
    def _block_sums(work, m, totals):
        # totals[i] = Σ_t work[t, i] for the first m entries, for fewer rows than a cascade step: from +0, left to
        # right, as _rows_sum adds them, with the entries side by side
        for i in range(m):
            totals[i] = np.float32(0.0)
        for t in range(work.shape[0]):
            row = work[t]
            for i in range(m):
                totals[i] = totals[i] + row[i]

    @njit(inline="always")
    def _ties_block(work, m, mode, major, block):
        # _ties_merge's τ for the first m entries of a block of fewer rows than a cascade step, into block[1]:
        # each entry's operations in _ties_merge's order, one loop per step over the block (vector instructions);
        # returns how many τ are not finite
        signs, picked, count, largest = block[0], block[1], block[2], block[3]
        rows = work.shape[0]
        if mode == MODE_SUM:  # in expert order from τ_1
            for i in range(m):
                picked[i] = work[0, i]
            for t in range(1, rows):
                row = work[t]
                for i in range(m):
                    picked[i] = picked[i] + row[i]
        else:
            _block_sums(work, m, signs)
            for i in range(m):
                signs[i] = _elected(signs[i], major)
                picked[i] = np.float32(0.0)
                count[i] = np.float32(0.0)
                largest[i] = np.float32(0.0)
            for t in range(rows):
                row = work[t]
                for i in range(m):
                    value = _agreeing(row[i], signs[i], major)
                    picked[i] = picked[i] + value
                    count[i] = count[i] + np.float32(1.0 if value != 0 else 0.0)
                    largest[i] = max(largest[i], abs(value))
            if mode == MODE_MEAN:
                for i in range(m):
                    picked[i] = picked[i] / max(count[i], np.float32(1.0))
            elif mode == MODE_MAX:
                for i in range(m):
                    picked[i] = largest[i] * signs[i]
        bad = 0
        for i in range(m):
            bad += 0 if np.isfinite(picked[i]) else 1
        return bad

    @njit(inline="always")
    def _sign(value):
        # torch.sign on a CPU: +1, −1, and +0 for ±0 (and for a NaN)
        return np.float32(1.0 if value > 0 else 0.0) - np.float32(1.0 if value < 0 else 0.0)

    @njit(inline="always")
    def _elected(total, major):
        # TIES's elected sign of an entry: the sign of its trimmed sum, the model's majority where that is 0
        sign = _sign(total)
        return sign + major if sign == 0 else sign

    @njit(inline="always")
    def _agreeing(value, sign, major):
        # the value where it agrees with the elected sign (× 1.0), else × 0.0 (so it keeps the sign of its zero);
        # with no majority (0), a zero elected sign selects the negative values
        if major != 0:
            agree = value * sign > 0
        elif sign > 0:
            agree = value > 0
        else:
            agree = value < 0
        return value * np.float32(1.0 if agree else 0.0)

    @njit(cache=True, nogil=True, boundscheck=False)
    def _ties_signs(base, experts, drops, drop, divisor, rescale, thresholds, trim, step, power, start, stop):
        # Σ over entries of sign(Σ_t τ̂_t): the sum of the elected signs, as (positive, negative) counts
        work = np.empty((len(experts), BLOCK), np.float32)
        totals = np.empty(BLOCK, np.float32)
        few = len(experts) < step
        positive = 0
        negative = 0
        for s in range(start, stop, BLOCK):
            m = min(BLOCK, stop - s)
            _trimmed(base, experts, drops, drop, divisor, rescale, thresholds, trim, s, m, work)
            if few:  # the block's sums side by side (vector instructions), then the counts
                _block_sums(work, m, totals)
                for i in range(m):
                    positive += 1 if totals[i] > 0 else 0
                    negative += 1 if totals[i] < 0 else 0
                continue
            for i in range(m):
                total = _rows_sum(work, i, step, power)
                if total > 0:
                    positive += 1
                elif total < 0:
                    negative += 1
        return positive, negative

    @njit(inline="always")
    def _ties_entries(work, m, mode, major, step, power, chosen, taus):
        # _ties_merge's τ for the first m entries of a block, entry by entry (any number of rows: torch's cascaded
        # row order), into taus; returns how many are not finite
        bad = 0
        for i in range(m):
            if mode == MODE_SUM:
                tau = work[0, i]
                for t in range(1, work.shape[0]):
                    tau = tau + work[t, i]
            else:
                sign = _elected(_rows_sum(work, i, step, power), major)
                count = np.float32(0.0)
                largest = np.float32(0.0)
                for t in range(work.shape[0]):
                    value = _agreeing(work[t, i], sign, major)
                    chosen[t, 0] = value
                    count = count + np.float32(1.0 if value != 0 else 0.0)
                    largest = max(largest, abs(value))
                picked = _rows_sum(chosen, 0, step, power)
                if mode == MODE_MEAN:
                    tau = picked / max(count, np.float32(1.0))
                elif mode == MODE_TIES_SUM:
                    tau = picked
                else:
                    tau = largest * sign
            bad += 0 if np.isfinite(tau) else 1
            taus[i] = tau
        return bad

    @njit(cache=True, nogil=True, boundscheck=False)
    def _ties_merge(base, experts, drops, drop, divisor, rescale, thresholds, trim, step, power, majority, mode,
                    scale, out, start, stop):
        # θ = round(τ·scale + θ₀) with τ the TIES merge of the trimmed (and dropped) τ_t: MODE_SUM adds them in
        # expert order (DARE-TA); otherwise γ = sign(Σ_t τ̂_t) (majority where it is 0), the entries that agree
        # with γ selected, and their mean (MODE_MEAN), sum (MODE_TIES_SUM) or largest magnitude times γ (MODE_MAX)
        work = np.empty((len(experts), BLOCK), np.float32)
        chosen = np.empty((len(experts), 1), np.float32)
        block = np.empty((4, BLOCK), np.float32)  # per entry of a block: sign, then sum, count, largest magnitude
        scale32 = np.float32(scale)
        major = np.float32(majority)
        few = len(experts) < step
        bad = 0
        for s in range(start, stop, BLOCK):
            m = min(BLOCK, stop - s)
            bad += _trimmed(base, experts, drops, drop, divisor, rescale, thresholds, trim, s, m, work)
            o = out[s:s + m]
            if few:  # the same operations per entry, done for the block's entries side by side
                bad += _ties_block(work, m, mode, major, block)
            else:
                bad += _ties_entries(work, m, mode, major, step, power, chosen, block[1])
            tau = block[1]
            for i in range(m):
                bad += _store(o, i, tau[i] * scale32 + _widen(base[s + i]))
        return bad

    @njit(cache=True, nogil=True, boundscheck=False)
    def _pack_at_least(values, threshold, out):
        # out = numpy.packbits(values >= threshold): entry j is bit 7 − j % 8 of byte j // 8, the last byte's
        # unused bits 0. Whole bytes without a branch (a test and a branch per entry ran 20× slower on an AMD EPYC
        # host: 5.2 against 0.24 ns per entry, 18 s of a 1.1 B-parameter DARE-TIES merge), then the last few entries.
        n = values.shape[0]
        full = n >> 3
        for b in range(full):
            j = b << 3
            out[b] = (((values[j] >= threshold) << 7) | ((values[j + 1] >= threshold) << 6)
                      | ((values[j + 2] >= threshold) << 5) | ((values[j + 3] >= threshold) << 4)
                      | ((values[j + 4] >= threshold) << 3) | ((values[j + 5] >= threshold) << 2)
                      | ((values[j + 6] >= threshold) << 1) | (values[j + 7] >= threshold))
        if full << 3 < n:
            byte = 0
            for j in range(full << 3, n):
                if values[j] >= threshold:
                    byte |= 1 << (7 - (j & 7))
            out[full] = byte

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
    divide = len(experts) if mean else 1
    bad = sum(_run(kernel, (base, tuple(experts), float(scale), divide, target), _ranges(base.shape[0], threads)))
    return None if bad else out


def pack_at_least(values: torch.Tensor, p: float, out: np.ndarray) -> None:
    """``out[:] = numpy.packbits(values >= p)`` for a float32 CPU tensor, p compared in float32 as torch's
    ``values.ge(p)`` compares it, in one pass (DARE's keep masks, drawn as uniforms, kept as bits)."""
    if available():
        _pack_at_least(values.reshape(-1).numpy(), np.float32(p), out)
    else:  # pragma: no cover - numba is a dependency
        out[:] = np.packbits(values.reshape(-1).ge(p).numpy())


def same_dtype(raws: list[torch.Tensor], compute_dtype: torch.dtype) -> bool:
    """Whether these stored inputs can be read by the compiled passes: CPU, contiguous, one dtype (bf16 or
    float32), computed in float32."""
    dtype = raws[0].dtype
    return (compute_dtype == torch.float32 and dtype in _DTYPES and available()
            and all(r.dtype == dtype and r.device.type == "cpu" and r.is_contiguous() for r in raws))


class Drops:
    """DARE's drop for the compiled passes: each task's keep mask of one tensor as packed bits (``bits``: one uint8
    array per task, numpy's bit order) and the rescaling, applied as the torch path applies it (× the 1.0/0.0
    mask, then ÷ (1 − p) in float32)."""

    def __init__(self, bits: list[np.ndarray], p: float, rescale: bool):
        self.bits, self.divisor, self.rescale = tuple(bits), np.float32(1.0 - p), bool(rescale)


_NO_BITS = np.zeros(0, dtype=np.uint8)


def _drop_args(drops: Optional[Drops], tasks: int) -> tuple:
    if drops is None:
        return (_NO_BITS,) * tasks, False, np.float32(1.0), False
    return drops.bits, True, drops.divisor, drops.rescale


def count_magnitudes(raws: list[torch.Tensor], counts: np.ndarray, starts: Optional[np.ndarray] = None,
                     drops: Optional[Drops] = None) -> None:
    """Add one tensor's counts of the float32 bits of |τ_t| = |θ_t − θ₀| (``raws``: θ₀ first; ``drops``: DARE's
    dropped τ_t) to ``counts`` (T × 2¹⁶): without ``starts``, per high half; with them, per low half of the
    entries inside the bin that starts at ``starts[t]`` (the others are not counted). The counts of TIES's radix
    selection, in one pass over the stored bytes."""
    base, *experts = [_numpy(r) for r in raws]
    drop = _drop_args(drops, len(experts))
    if starts is None:
        _count_high(base, tuple(experts), *drop, counts)
    else:
        _count_low(base, tuple(experts), *drop, starts, counts)


def _ranges(n: int, threads: Optional[int]) -> list[tuple[int, int]]:
    """``[0, n)`` cut into one contiguous range per compute thread (whole blocks; one range for a small tensor)."""
    parts = max(1, min(threads or torch.get_num_threads(), n // MIN_ENTRIES_PER_THREAD))
    bounds = [n * p // parts // BLOCK * BLOCK for p in range(parts)] + [n]
    return list(zip(bounds, bounds[1:]))


def _run(kernel, args: tuple, ranges: list[tuple[int, int]]) -> list:
    if len(ranges) == 1:
        return [kernel(*args, *ranges[0])]
    jobs = [_pool(len(ranges)).submit(kernel, *args, lo, hi) for lo, hi in ranges]
    return [job.result() for job in jobs]


def _cascade(rows: int) -> tuple[int, int]:
    """(rows per level step, its log2) of torch's CPU row reduction (see ``nbmerge.methods.ties.rows_sum``)."""
    power = max(4, (1 if rows <= 2 else (rows - 1).bit_length()) // 4)
    return 1 << power, power


def ties_signs(raws: list[torch.Tensor], thresholds: np.ndarray, drops: Optional[Drops] = None,
               threads: Optional[int] = None) -> int:
    """Σ over the tensor's entries of sign(Σ_t τ̂_t), τ̂_t the trimmed (``thresholds``: one float32 per task, all 0
    for no trim) and dropped task vectors: TIES's majority sign is the sign of this sum over the model."""
    base, *experts = [_numpy(r) for r in raws]
    args = (base, tuple(experts), *_drop_args(drops, len(experts)), thresholds, bool(thresholds.any()),
            *_cascade(len(experts)))
    counts = _run(_ties_signs, args, _ranges(base.shape[0], threads))
    return sum(p for p, _ in counts) - sum(n for _, n in counts)


def ties_merge(raws: list[torch.Tensor], scale: float, *, thresholds: np.ndarray, majority: float, mode: int,
               drops: Optional[Drops] = None, threads: Optional[int] = None) -> Optional[torch.Tensor]:
    """θ₀ + scale·τ for one tensor, τ the TIES merge (``mode``) of the trimmed and dropped task vectors, in one
    compiled pass over the stored ``raws`` (θ₀ first), in their dtype: per block of entries, each input entry read
    once and each output entry written once, the T trimmed values kept in a T × 2048 float32 block (in cache).
    None when any task vector or output entry is not finite (the caller's torch path says why)."""
    base, *experts = [_numpy(r) for r in raws]
    out = reused_output(raws[0].shape, raws[0].dtype)
    args = (base, tuple(experts), *_drop_args(drops, len(experts)), thresholds, bool(thresholds.any()),
            *_cascade(len(experts)), float(majority), int(mode), float(scale), _numpy(out))
    return None if sum(_run(_ties_merge, args, _ranges(base.shape[0], threads))) else out
