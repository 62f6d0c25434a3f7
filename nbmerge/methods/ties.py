"""TIES-Merging (Yadav et al., NeurIPS 2023): trim, elect sign, disjoint merge."""

from __future__ import annotations

import math
import threading
from typing import Callable, Iterable, Optional

import numpy as np
import torch

from ..errors import MethodError
from ..engine.registry import register
from ..engine.walker import ModelView, Rule, chunk_entries, walk_merge

MERGES = ("mean", "sum", "max")

#: DARE's drop for the compiled passes: ``drops(key, numel)`` → that tensor's :class:`nbmerge.engine.fused.Drops`
DropsOf = Callable[[str, int], object]


def check_ties_params(density: float, merge: str) -> None:
    if not 0.0 < density <= 1.0:
        raise MethodError(f"ties: density must be in (0, 1], got {density}")
    if merge not in MERGES:
        raise MethodError(f"ties: merge must be one of {MERGES}, got {merge!r}")


def topk_threshold(abs_values: torch.Tensor, density: float, *, overwrite: bool = False) -> torch.Tensor:
    """Magnitude threshold that keeps the top ``density`` fraction of a flattened task vector.

    As the reference code: the (d − int(d·density))-th smallest |τ|, and entries with |τ| ≥ it are kept.
    ``overwrite``: the values may be reordered in place (on a CPU this saves a copy of them).
    """
    d = abs_values.numel()
    k = d - int(d * density)
    if k < 1:
        return torch.zeros((), dtype=abs_values.dtype, device=abs_values.device)
    if abs_values.device.type == "cpu":
        # NumPy's introselect finds the same order statistic several times faster than torch.kthvalue on a CPU.
        values = abs_values.reshape(-1).numpy()
        if overwrite:
            values.partition(k - 1)
            return torch.tensor(values[k - 1], dtype=abs_values.dtype)
        return torch.tensor(np.partition(values, k - 1)[k - 1], dtype=abs_values.dtype)
    return abs_values.reshape(-1).kthvalue(k).values


#: radix selection: the float32 bit pattern of |τ| is cut into a high and a low half of this many bits each
_RADIX_BITS = 16


def sortable_bits(values: torch.Tensor) -> torch.Tensor:
    """float32 values → int64 keys in [0, 2³²) that order as the floats do (negative floats: their bits inverted,
    non-negative ones: the sign bit set), so order statistics of the values are order statistics of the keys."""
    bits = values.reshape(-1).float().view(torch.int32).long() & 0xFFFFFFFF
    return torch.where(bits >= _SIGN, 0xFFFFFFFF - bits, bits + _SIGN)


def _float_of_keys(keys: torch.Tensor) -> torch.Tensor:
    bits = torch.where(keys >= _SIGN, keys - _SIGN, 0xFFFFFFFF - keys)
    return torch.where(bits >= _SIGN, bits - (1 << 32), bits).to(torch.int32).view(torch.float32)


_SIGN = 1 << 31


def _kth_bin(counts: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, the bin holding the k-th smallest value (1-based) and that value's rank within the bin."""
    cumulative = counts.cumsum(1)
    bins = (cumulative < k[:, None]).sum(1)
    before = torch.where(bins > 0, cumulative.gather(1, (bins - 1).clamp(min=0)[:, None])[:, 0],
                         torch.zeros_like(bins))
    return bins, k - before


def global_order_statistics(values: Callable[[], Iterable[tuple[int, torch.Tensor]]], rows: int,
                            k: torch.Tensor, device, *, nonnegative: bool = False,
                            overwrite: bool = False) -> torch.Tensor:
    """Per row, the k-th smallest (1-based, ``k[row]``) of all the values ``values()`` yields as ``(row, tensor)``
    pairs, without holding them: a two-pass radix selection on their order-preserving 32-bit keys
    (``sortable_bits``). The first pass counts the high 16 bits and finds the bin that holds the k-th value, the
    second counts the low 16 bits inside that bin. ``values`` is called once per pass.

    float32 values give the exact order statistic. float64 values round monotonically to float32, so the k-th one
    lies among those that round to the float32 answer: a third pass collects them and picks it exactly (the result
    is then float64). ``nonnegative``: every value is ≥ +0 (magnitudes), which lets float32 values skip the key
    transform (the same answer, several times faster); ``overwrite``: the values yielded may be overwritten (the
    keys are then computed in their memory)."""
    size = 1 << _RADIX_BITS
    counts = torch.zeros(rows, size, dtype=torch.int64, device=device)
    wide = False
    for row, part in values():
        wide = wide or part.dtype == torch.float64
        if nonnegative and part.dtype == torch.float32:
            bits = part.reshape(-1).view(torch.int32)
            high_bits = bits.bitwise_right_shift_(_RADIX_BITS) if overwrite else bits >> _RADIX_BITS
            counts[row, size // 2:] += torch.bincount(high_bits, minlength=size // 2)
        else:
            counts[row] += torch.bincount(sortable_bits(part) >> _RADIX_BITS, minlength=size)
    high, rank = _kth_bin(counts, k.to(device=device, dtype=torch.int64))
    counts.zero_()
    high_list = high.tolist()
    for row, part in values():
        if nonnegative and part.dtype == torch.float32:
            # Non-negative float32 values order as their bit patterns: the key is the pattern + 2³¹ (its high
            # half + 2¹⁵), so the bin test and the low half need no 64-bit keys.
            # The bits minus the bin's start lie in [0, 2¹⁶) inside the bin; clamped into [−1, 2¹⁶] and shifted by
            # one, everything below and above the bin lands in two extra counts (no selection of the bin's entries).
            bits, start = part.reshape(-1).view(torch.int32), (high_list[row] - size // 2) << _RADIX_BITS
            low_bits = bits.sub_(start) if overwrite else bits - start
            counts[row] += torch.bincount(low_bits.clamp_(-1, size).add_(1), minlength=size + 2)[1:size + 1]
            continue
        keys = sortable_bits(part)
        inside = keys[(keys >> _RADIX_BITS) == high_list[row]]
        counts[row] += torch.bincount(inside & (size - 1), minlength=size)
    low, rank = _kth_bin(counts, rank)
    found = _float_of_keys((high << _RADIX_BITS) | low)
    if not wide:
        return found
    candidates: list[list[torch.Tensor]] = [[] for _ in range(rows)]
    for row, part in values():
        flat = part.reshape(-1)
        candidates[row].append(flat[flat.float() == found[row]].double())
    return torch.stack([torch.sort(torch.cat(c)).values[int(r) - 1] for c, r in zip(candidates, rank)])


def global_thresholds(view: ModelView, keys: list[str], k: int, drops: Optional[DropsOf] = None) -> torch.Tensor:
    """Per task, the k-th smallest |τ_t| over the whole model, in float32: what ``topk_threshold`` returns on the
    flattened model, found without it (``global_order_statistics``): two streaming reads of the experts and
    2 × 65536 counts per task, instead of a model-sized float32 buffer (4.4 GB for a 1.1 B-parameter model) and a
    selection over it. ``drops``: DARE's drop, for the compiled passes (the torch passes read it from the view)."""
    fast = _compiled_thresholds(view, keys, k, drops)
    if fast is not None:
        return fast
    return global_order_statistics(lambda: magnitudes(view, keys), view.T, torch.full((view.T,), k), view.device,
                                   nonnegative=True, overwrite=True)


def _compiled_thresholds(view: ModelView, keys: list[str], k: int, drops: Optional[DropsOf] = None
                         ) -> Optional[torch.Tensor]:
    """``global_thresholds`` with each pass's counts taken by one compiled loop straight from the stored bytes
    (:func:`nbmerge.engine.fused.count_magnitudes`: no float32 copies, no |τ| buffers, no bincount), the same
    counts and so the same thresholds; None when an input cannot be read that way (the torch passes then run)."""
    size = 1 << _RADIX_BITS
    counts = np.zeros((view.T, size), dtype=np.int64)
    for key in keys:
        with view.stored(key, raw=drops is not None) as raws:
            if raws is None:
                return None
            from ..engine.fused import count_magnitudes

            count_magnitudes(raws, counts, drops=drops and drops(key, raws[0].numel()))
    # |τ| ≥ +0 has its sign bit clear: its key is its bits + 2³¹, so its high half lands in the upper half of bins
    high_counts = torch.zeros(view.T, size, dtype=torch.int64)
    high_counts[:, size // 2:] = torch.from_numpy(counts[:, :size // 2])
    high, rank = _kth_bin(high_counts, torch.full((view.T,), k, dtype=torch.int64))
    starts = ((high - size // 2) << _RADIX_BITS).numpy().astype(np.int64)
    low_counts = np.zeros((view.T, size), dtype=np.int64)
    for key in keys:
        with view.stored(key, raw=drops is not None) as raws:
            count_magnitudes(raws, low_counts, starts, drops=drops and drops(key, raws[0].numel()))
    low, _ = _kth_bin(torch.from_numpy(low_counts), rank)
    return _float_of_keys((high << _RADIX_BITS) | low).to(view.device)


def magnitudes(view: ModelView, keys: list[str]):
    """(task, |τ_t| of one slice) over the whole model: what the whole-model order statistics are taken of."""
    for key in keys:
        # Slices 16× the walker's: each yields a histogram of 65536 counts per task, and summing those costs
        # as much as counting entries when slices are small.
        # No finiteness check here: the merge pass checks every input. The slice's buffers are the walker's and
        # refilled for the next slice: |τ| in place.
        for _, _, deltas in view.chunks(key, size=16 * chunk_entries(view.device), check=False):
            for t, delta in enumerate(deltas):
                yield t, delta.abs_()


def ties_prepare(view: ModelView, *, density: float = 0.2, merge: str = "mean") -> dict:
    """The two global quantities of TIES: per-task thresholds over the whole model and the majority sign.

    The reference computes the top-k over the entire flattened model (not per layer); ``global_thresholds``
    finds the same order statistic tensor by tensor, so no model-sized buffer is held.
    """
    check_ties_params(density, merge)
    return prepare_context(view, density)


def prepare_context(view: ModelView, density: float, drops: Optional[DropsOf] = None) -> dict:
    """``ties_prepare``'s thresholds and majority sign; ``drops`` gives DARE's drop to the compiled passes."""
    keys = view.float_keys()
    total = sum(math.prod(view.base.shape(key)) for key in keys)
    k = total - int(total * density)
    if k < 1:  # density 1 keeps everything: no pass over the model needed
        thresholds = torch.zeros(view.T, dtype=torch.float32, device=view.device)
    else:
        thresholds = global_thresholds(view, keys, k, drops)
    # Zero elected signs take the sign of the *sum of elected signs* over the model (reference "majority").
    counted = 0  # sums of -1/0/1: exact in any order
    sign_total = torch.zeros((), dtype=torch.float64, device=thresholds.device)
    for key in keys:
        compiled = _compiled_signs(view, key, thresholds, drops)
        if compiled is not None:
            counted += compiled
            continue
        for _, _, deltas in view.chunks(key, check=False):
            sign_total += torch.sign(rows_sum(trim_stack(deltas, thresholds))).sum(dtype=torch.float64)
    return {"thresholds": thresholds, "majority": float(torch.sign(sign_total + counted))}


def _compiled_signs(view: ModelView, key: str, thresholds: torch.Tensor, drops: Optional[DropsOf]
                    ) -> Optional[int]:
    """One tensor's part of the majority sign's sum, counted by a compiled loop from the stored bytes
    (:func:`nbmerge.engine.fused.ties_signs`); None when its inputs cannot be read that way."""
    if thresholds.device.type != "cpu":
        return None
    with view.stored(key, raw=drops is not None) as raws:
        if raws is None:
            return None
        from ..engine import fused

        return fused.ties_signs(raws, _cuts(thresholds), drops and drops(key, raws[0].numel()))


def fused_merge(view: ModelView, key: str, scale: float, *, thresholds: Optional[torch.Tensor], majority: float,
                merge: str, drops: Optional[DropsOf] = None) -> Optional[torch.Tensor]:
    """One tensor of TIES (``merge``: mean, sum, max) or, with ``merge="ta"``, of DARE-TA, in one compiled pass
    over the stored bytes (:func:`nbmerge.engine.fused.ties_merge`): the bits of the torch path. None when the
    tensor takes the torch path (not on the CPU, another dtype, small, or an entry not finite)."""
    with view.stored(key, raw=drops is not None) as raws:
        if raws is None:
            return None
        from ..engine import fused

        if not fused.takes(raws, view.base.dtype(key), view.compute_dtype(key)):
            return None
        if merge == "ta":
            mode, cut = fused.MODE_SUM, np.zeros(view.T, dtype=np.float32)
        else:
            if thresholds.device.type != "cpu":
                return None
            mode, cut = fused.TIES_MODES[merge], _cuts(thresholds)
        return fused.ties_merge(raws, scale, thresholds=cut, majority=majority, mode=mode,
                                drops=drops and drops(key, raws[0].numel()))


def _cuts(thresholds: torch.Tensor) -> np.ndarray:
    """The thresholds as the float32 trim compares them with (``trim_stack``: in the values' dtype)."""
    return thresholds.to(torch.float32).numpy()


def ties_fused(view: ModelView, *, key: str, scale: float, thresholds: torch.Tensor, majority: float,
               merge: str = "mean") -> Optional[torch.Tensor]:
    return fused_merge(view, key, scale, thresholds=thresholds, majority=majority, merge=merge)


#: entries of each task's tensor per slice: every step of the TIES kernel is per entry (across the tasks), so a
#: large tensor is computed slice by slice, with temporaries of ~16 MiB instead of several times T × the tensor
SLICE_BYTES = 1 << 24


def task_slices(deltas: list[torch.Tensor]):
    """The task vectors of one tensor, flattened and cut into matching slices (the whole list when small)."""
    n = deltas[0].numel()
    step = max(1, SLICE_BYTES // (len(deltas) * deltas[0].element_size()))
    if n <= step:
        yield deltas
        return
    flat = [d.reshape(-1) for d in deltas]
    for start in range(0, n, step):
        yield [f[start:start + step] for f in flat]


def trim_stack(deltas: list[torch.Tensor], thresholds: torch.Tensor, work: torch.Tensor | None = None) -> torch.Tensor:
    """The task vectors stacked, each entry with |τ_t| below its task's threshold multiplied by 0 (keeping the sign
    of the zero, as the reference's multiplication by a mask does). ``work``: a buffer of the stack's shape that
    receives the mask (the comparison written as 1.0/0.0 in the values' dtype: no boolean tensor to convert)."""
    stacked = torch.stack(deltas, out=_buffer("stack", (len(deltas), *deltas[0].shape), deltas[0]))
    # density 1: |τ| ≥ 0 holds for every (finite) entry, and τ·1 = τ, bit for bit. On a GPU the mask is applied
    # anyway (the same bits): asking would wait for the device on every slice.
    if thresholds.device.type == "cpu" and not bool(thresholds.any()):
        return stacked
    shape = (-1,) + (1,) * (stacked.dim() - 1)
    work = torch.empty_like(stacked) if work is None else work
    torch.ge(torch.abs(stacked, out=work), thresholds.to(stacked.dtype).view(shape), out=work)
    return stacked.mul_(work)


_BUFFERS = threading.local()


def _buffer(name: str, shape: tuple, like: torch.Tensor) -> torch.Tensor:
    """A scratch tensor of ``shape`` kept per thread and reused from slice to slice (a fresh one per slice costs
    the allocator's page faults, more than the slice's arithmetic)."""
    buffers = getattr(_BUFFERS, "tensors", None)
    if buffers is None:
        buffers = _BUFFERS.tensors = {}
    key = (name, like.dtype, like.device)
    tensor = buffers.get(key)
    size = math.prod(shape)
    if tensor is None or tensor.numel() < size:
        tensor = buffers[key] = torch.empty(size, dtype=like.dtype, device=like.device)
    return tensor[:size].view(shape)


def ties_kernel(deltas: list[torch.Tensor], *, thresholds: torch.Tensor, majority: float,
                merge: str = "mean") -> torch.Tensor:
    """Trim each τ_t at its threshold, elect γ = sign(Σ_t τ̂_t), average (or sum/max) the agreeing entries."""
    parts = list(task_slices(deltas))
    if len(parts) == 1:
        return _ties_entries(deltas, thresholds, majority, merge)
    out = None
    start = 0
    for part in parts:
        merged = _ties_entries(part, thresholds, majority, merge)
        if out is None:
            out = torch.empty(deltas[0].numel(), dtype=merged.dtype, device=merged.device)
        out[start:start + merged.numel()] = merged
        start += merged.numel()
    return out.reshape(deltas[0].shape)


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def rows_sum(stacked: torch.Tensor) -> torch.Tensor:
    """Σ over the first dimension (the tasks), entry by entry in the order torch's CPU reduction gives the columns of
    a long row block: from +0, row after row, with partial sums carried up a 4-level cascade every 16 rows (and more
    for many tasks). ``stacked.sum(0)`` itself adds the last few columns of a block (and of each thread's range) in
    another order, so its bits depend on where a tensor is cut into slices and on the thread count; this is the same
    sum for every entry, whatever the slicing, the threads or the device (the compiled pass computes it too)."""
    rows = stacked.shape[0]
    power = max(4, _ceil_log2(rows) // 4)
    step, mask = 1 << power, (1 << power) - 1
    if rows < step:  # one level: 0 + x_1 + x_2 + … (the three empty levels add +0, which changes nothing here)
        total = stacked[0] + 0.0
        for row in range(1, rows):
            total += stacked[row]
        return total
    acc = [torch.zeros_like(stacked[0]) for _ in range(4)]
    i = 0
    while i + step <= rows:
        for _ in range(step):
            acc[0] += stacked[i]
            i += 1
        for level in range(1, 4):
            acc[level] += acc[level - 1]
            acc[level - 1].zero_()
            if i & (mask << (level * power)):
                break
    while i < rows:
        acc[0] += stacked[i]
        i += 1
    for level in range(1, 4):
        acc[0] += acc[level]
    return acc[0]


def _ties_entries(deltas: list[torch.Tensor], thresholds: torch.Tensor, majority: float, merge: str) -> torch.Tensor:
    # Masks are written as 1.0/0.0 into one reused buffer of the stack's dtype (a boolean mask would be converted
    # to it before every product): the same products, sums and quotient as with boolean masks, bit for bit.
    work = _buffer("work", (len(deltas), *deltas[0].shape), deltas[0])
    trimmed = trim_stack(deltas, thresholds, work)
    sign = torch.sign(rows_sum(trimmed))
    # sign[sign == 0] = majority, as arithmetic (±1 + 0·m = ±1, ±0 + 1·m = m): the same values, several times faster
    sign.add_(torch.eq(sign, 0, out=work[0]).mul_(majority))
    if majority != 0:  # every sign is ±1: τ̂_t agrees with it where τ̂_t·sign > 0
        torch.gt(torch.mul(trimmed, sign, out=work), 0, out=work)
    else:  # an undecided entry keeps sign 0, where only negative entries count as agreeing
        work.copy_(torch.where(sign > 0, trimmed > 0, trimmed < 0))
    selected = trimmed.mul_(work)
    if merge == "sum":
        return rows_sum(selected)
    if merge == "max":
        return selected.abs().max(0).values * sign
    counts = torch.ne(selected, 0, out=work).sum(0)  # whole numbers ≤ T: exact in the values' dtype
    return rows_sum(selected) / counts.clamp(min=1)


RULE = Rule(matrix=None, fallback=ties_kernel, prepare=ties_prepare, elementwise=True, fused=ties_fused)


# Defaults follow the TIES paper / TSV protocol (dis-mean, k = 20%, α = 1; docs/methods.md, TIES).
# FusionBench-compatible setting: merge="sum", scale=0.3.
@register("ties", paper="https://arxiv.org/abs/2306.01708",
          help={"density": "fraction of each task vector's entries kept, by magnitude over the whole model",
                "merge": "disjoint merge of the agreeing entries: mean | sum | max",
                "scale": "global coefficient α: θ = θ₀ + α·τ_merged"})
def ties(base, experts, *, density: float = 0.2, merge: str = "mean", scale: float = 1.0, walk=None,
         stream=False):
    """TIES-Merging: trim small entries, elect a sign per parameter, merge the entries that agree."""
    return walk_merge(base, experts, RULE, params={"density": density, "merge": merge}, scale=scale,
                      walk=walk, stream=stream)
