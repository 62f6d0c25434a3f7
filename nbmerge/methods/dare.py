"""DARE (Yu et al., ICML 2024): drop and rescale task-vector entries, then TA or TIES."""

from __future__ import annotations

import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache, partial
from typing import Optional

import numpy as np
import torch

from ..errors import MethodError, NbmergeWarning
from ..engine.registry import register
from ..engine.walker import Rule, sum_kernel, walk_merge
from .ties import check_ties_params, fused_merge, prepare_context, ties_kernel

DEFAULT_DENSITY = 0.2  # TIES's density when merge=ties


def dare_drop(deltas: list[torch.Tensor], *, key: str, p: float = 0.5, rescale: bool = True, seed: int = 0,
              tasks: list[int] | None = None, inplace: bool = False) -> list[torch.Tensor]:
    """τ̃_t = m_t ⊙ τ_t / (1 − p), m_t ~ Bernoulli(1 − p).

    Each (key, task) mask comes from its own CPU generator seeded from (seed, key, task), so the masks do not
    depend on the order tensors are visited, on how often they are read (TIES reads them three times) or on
    the device. ``inplace``: overwrite the given tensors (the walker's own task vectors) instead of copying them,
    which leaves one mask-sized temporary per tensor.
    """
    tasks = list(range(len(deltas))) if tasks is None else tasks
    out = []
    for t, delta in zip(tasks, deltas):
        generator = _mask_generator(p, seed, t, key)
        keep = torch.rand(delta.shape, generator=generator).ge_(p).to(device=delta.device, dtype=delta.dtype)
        dropped = delta.mul_(keep) if inplace else delta * keep
        del keep
        out.append(dropped.div_(1.0 - p) if rescale else dropped)
    return out


def _mask_generator(p: float, seed: int, task: int, key: str) -> torch.Generator:
    """The CPU generator of one (key, task) drop mask, after checking the drop rate."""
    if not 0.0 <= p < 1.0:
        raise MethodError(f"dare: drop rate p must be in [0, 1), got {p}")
    return torch.Generator().manual_seed(zlib.crc32(f"{seed}/{task}/{key}".encode()))


def dare_stream(*, key: str, tasks: list[int], numel: int, p: float = 0.5, rescale: bool = True, seed: int = 0,
                memo: dict | None = None):
    """The drop of :func:`dare_drop` slice by slice: each task's generator draws the masks of consecutive slices of
    the flattened tensor (``numel`` entries) in order, which are the draws of one mask of the whole tensor
    (row-major), so the task vectors come out as ``dare_drop`` makes them. Applied in place to the walker's slice
    buffers; slices start at multiples of 8 entries.

    ``memo`` (one dict per merge): a tensor's masks, once drawn in full, are kept as bits (one per entry and task)
    and replayed on later passes, whatever their slices (DARE-TIES reads the task vectors twice): drawing them
    costs more than the rest of a pass."""
    generators = [_mask_generator(p, seed, t, key) for t in tasks]
    name = (key, tuple(tasks))
    bits = None if memo is None else memo.get(name)
    replay = bits is not None
    if memo is not None and bits is None:
        bits = [np.zeros((numel + 7) // 8, dtype=np.uint8) for _ in tasks]
    position = 0
    draws: list = [None] * len(tasks)

    def drop(deltas: list[torch.Tensor]) -> list[torch.Tensor]:
        nonlocal position
        start, stop = position, position + deltas[0].numel()
        position = stop
        for t, (generator, delta) in enumerate(zip(generators, deltas)):
            if replay:
                ones = np.unpackbits(bits[t][start // 8:(stop + 7) // 8], count=stop - start)
                keep = torch.from_numpy(ones).view(delta.shape).to(device=delta.device, dtype=delta.dtype)
            else:  # uniform_ on a reused buffer: torch.rand's draws, without a new tensor per slice
                if draws[t] is None or draws[t].numel() < delta.numel():
                    draws[t] = torch.empty(delta.numel())
                keep = draws[t][:delta.numel()].view(delta.shape).uniform_(generator=generator).ge_(p)
                if bits is not None:
                    bits[t][start // 8:(stop + 7) // 8] = np.packbits(keep.reshape(-1).bool().numpy())
                keep = keep.to(device=delta.device, dtype=delta.dtype)
            delta.mul_(keep)
            if rescale:
                delta.div_(1.0 - p)
        if bits is not None and not replay and stop == numel:  # drawn in full: later passes replay them
            memo[name] = bits
        return deltas
    return drop


#: entries drawn per call when a tensor's masks are drawn in full (a multiple of 8: whole bytes of bits)
DRAW_ENTRIES = 1 << 20


def drop_bits(*, key: str, tasks: list[int], numel: int, p: float, seed: int,
              threads: Optional[int] = None) -> list[np.ndarray]:
    """Each task's keep mask of one tensor (``numel`` entries) as packed bits, numpy's order (entry j is bit
    7 − j % 8 of byte j // 8): the draws of :func:`dare_drop` (and of :func:`dare_stream`, in the same format).
    Each task has its own generator, so the tasks are drawn side by side on up to ``threads`` threads (default:
    torch's compute threads)."""
    from ..engine.fused import pack_at_least  # numba's import only where a merge needs it

    def draw(t: int) -> np.ndarray:
        generator = _mask_generator(p, seed, t, key)
        buffer = torch.empty(min(numel, DRAW_ENTRIES))
        packed = np.empty((numel + 7) // 8, dtype=np.uint8)
        for start in range(0, numel, DRAW_ENTRIES):
            stop = min(numel, start + DRAW_ENTRIES)
            drawn = buffer[:stop - start].uniform_(generator=generator)
            pack_at_least(drawn, p, packed[start // 8:(stop + 7) // 8])  # the bits of drawn.ge(p)
        return packed

    workers = max(1, min(len(tasks), threads or torch.get_num_threads()))
    if workers == 1 or numel < DRAW_ENTRIES:
        return [draw(t) for t in tasks]
    return list(_draw_pool(workers).map(draw, tasks))


@lru_cache(maxsize=4)
def _draw_pool(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nbmerge-dare")


class DropMasks:
    """DARE's drop for the compiled passes (``drops(key, numel)`` → :class:`nbmerge.engine.fused.Drops`): the masks
    of :func:`drop_bits`, kept in the merge's ``memo`` under the name :func:`dare_stream` uses, so the threshold,
    sign and merge passes (and any tensor on the torch path) replay the same draws. ``last``: the merge pass, which
    takes a tensor's masks out of the memo (nothing reads them afterwards)."""

    def __init__(self, tasks: int, *, p: float, rescale: bool, seed: int, memo: Optional[dict], last: bool = False):
        self.tasks, self.p, self.rescale, self.seed = list(range(tasks)), p, rescale, seed
        self.memo, self.last = memo, last

    def __call__(self, key: str, numel: int):
        from ..engine.fused import Drops

        name = (key, tuple(self.tasks))
        memo = {} if self.memo is None else self.memo
        bits = memo.pop(name, None) if self.last else memo.get(name)
        if bits is None:
            bits = drop_bits(key=key, tasks=self.tasks, numel=numel, p=self.p, seed=self.seed)
            if not self.last:
                memo[name] = bits
        return Drops(bits, self.p, self.rescale)


def dare_prepare(view, *, merge: str = "ta", density: float = 0.2, p: float = 0.5, rescale: bool = True,
                 seed: int = 0, memo: Optional[dict] = None):
    if merge not in ("ta", "ties"):
        raise MethodError(f"dare: merge must be 'ta' or 'ties', got {merge!r}")
    check_ties_params(density, "mean")
    if merge == "ta":
        if density != DEFAULT_DENSITY:
            warnings.warn(f"dare: density={density:g} has no effect with merge=ta (it is TIES's density, used with "
                          "merge=ties)", NbmergeWarning, stacklevel=2)
        return {}
    return prepare_context(view, density, DropMasks(view.T, p=p, rescale=rescale, seed=seed, memo=memo))


def dare_fused(view, *, key: str, scale: float, merge: str = "ta", p: float = 0.5, rescale: bool = True,
               seed: int = 0, thresholds=None, majority: float = 0.0, memo: Optional[dict] = None):
    """One tensor of DARE-TA or DARE-TIES in one compiled pass (:func:`nbmerge.methods.ties.fused_merge`), the masks
    applied from their bits; DARE-TA's are drawn here and not kept (one pass reads them)."""
    drops = DropMasks(view.T, p=p, rescale=rescale, seed=seed, memo=memo if merge == "ties" else None, last=True)
    return fused_merge(view, key, scale, thresholds=thresholds, majority=majority,
                       merge="ta" if merge == "ta" else "mean", drops=drops)


def dare_kernel(deltas, *, merge: str = "ta", thresholds=None, majority=None):
    if merge == "ta":
        return sum_kernel(deltas)
    return ties_kernel(deltas, thresholds=thresholds, majority=majority, merge="mean")


# The walker's task vectors are fresh tensors it owns: the drop runs in place on them.
RULE = Rule(matrix=None, fallback=dare_kernel, prepare=dare_prepare, transform=partial(dare_drop, inplace=True),
            elementwise=True, chunk_transform=dare_stream, fused=dare_fused)


# Defaults: FusionBench's DARE-TA (sparsity_ratio 0.5, rescale, α = 0.3; docs/methods.md, DARE).
@register("dare", paper="https://arxiv.org/abs/2311.03099",
          help={"p": "drop rate: probability that a task-vector entry is zeroed",
                "rescale": "divide kept entries by (1 − p)",
                "merge": "what follows the drop: ta (task arithmetic) | ties (TIES with dis-mean)",
                "density": "TIES density when merge=ties",
                "seed": "seed of the drop masks",
                "scale": "global coefficient α: θ = θ₀ + α·τ_merged"})
def dare(base, experts, *, p: float = 0.5, rescale: bool = True, merge: str = "ta", density: float = 0.2,
         seed: int = 0, scale: float = 0.3, walk=None, stream=False):
    """DARE: randomly drop task-vector entries and rescale the rest, then merge by TA or TIES."""
    return walk_merge(base, experts, RULE, params={"p": p, "rescale": rescale, "merge": merge, "density": density,
                                                   "seed": seed}, scale=scale, walk=walk, stream=stream)
