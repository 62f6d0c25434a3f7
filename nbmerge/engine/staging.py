"""A merge's inputs on a GPU: copied from the checkpoints' pages to the device through two reused pinned buffers, the
copy of one piece overlapping the host's read of the next, and kept on the device while they fit.

Why: a copy from ordinary (pageable) host memory makes the driver stage it through its own pinned buffer and blocks
the host meanwhile, and a method that passes over the model several times (TIES: two threshold counts, the sign
pass, the merge pass; DARE-TIES the same) would copy every input that many times. Here each input tensor crosses the
bus once while the device has room for it (``resident_budget``: half the memory free when the merge starts); past
that, tensors are copied again on each pass, the earliest ones staying (a pass reads the tensors in the same order
every time, so keeping the first that fit is what saves the most copies; a least-recently-used rule would keep none).

Every device but the CPU takes this path (``staged``). The tests stand the CPU in for a device (``staged`` and
``resident_budget`` replaced): the same pieces, buffers, cache and deferred checks, with synchronous copies and no
pinning, which need CUDA.
"""

from __future__ import annotations

from typing import Optional

import torch

#: bytes of each of the two pinned host buffers a tensor is copied through, piece by piece (two pieces in flight:
#: the device copies one while the host fills the other)
STAGE_BYTES = 1 << 26
#: the share of the device's free memory (when a merge starts) that its inputs may keep on the device
RESIDENT_SHARE = 0.5


def staged(device) -> bool:
    """Whether a merge on ``device`` reads its inputs through :class:`DeviceInputs` (every device but the CPU)."""
    return torch.device(device).type != "cpu"


def resident_budget(device) -> int:
    """Bytes of inputs a merge on ``device`` keeps there between passes."""
    device = torch.device(device)
    if device.type != "cuda":
        return 0
    free, _ = torch.cuda.mem_get_info(device)
    return int(free * RESIDENT_SHARE)


class DeviceInputs:
    """The stored tensors of one merge's inputs on ``device``, in their stored dtype, flattened."""

    def __init__(self, device, budget: Optional[int] = None):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda and self.device.index is None:  # tensors name their device's index: compare like with like
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.budget = resident_budget(self.device) if budget is None else budget
        self.kept: dict[tuple[int, str], torch.Tensor] = {}
        self.kept_bytes = 0
        #: host → device bytes copied so far (what the cache saves shows here)
        self.copied_bytes = 0
        self._stream = torch.cuda.Stream(self.device) if self.cuda else None
        self._buffers: list[Optional[torch.Tensor]] = [None, None]
        self._events: list[Optional[torch.cuda.Event]] = [None, None]
        self._turn = 0

    def has(self, owner, key: str) -> bool:
        return (id(owner), key) in self.kept

    def get(self, owner, key: str, stored: Optional[torch.Tensor] = None, *, keep: bool = True) -> torch.Tensor:
        """``owner``'s tensor ``key`` on the device (flat, stored dtype): the kept copy, or ``stored`` (the host
        tensor as the checkpoint stores it) copied now, and kept if ``keep`` and the budget allows. The caller must
        not write into the result (it may be the kept copy)."""
        slot = (id(owner), key)
        tensor = self.kept.get(slot)
        if tensor is not None:
            return tensor
        if stored is None:
            raise KeyError(key)
        tensor = self.copy(stored)
        size = tensor.numel() * tensor.element_size()
        if keep and self.kept_bytes + size <= self.budget:
            self.kept[slot] = tensor
            self.kept_bytes += size
        return tensor

    def copy(self, host: torch.Tensor) -> torch.Tensor:
        """``host`` (a CPU tensor) on the device, flattened: piece by piece through the two staging buffers. On a GPU the copies run
        on a stream of their own, which waits for the work queued before them (the memory they write may have just
        been freed by it) and which the queued work after them waits for: no host round trip."""
        flat = host.reshape(-1)
        if flat.device.type != "cpu":  # on the device already, or on another one (a direct copy)
            return flat.to(self.device)
        if flat.numel() and flat.stride(0) != 1:  # (a checkpoint's pages are read as they lie: no copy)
            flat = torch.empty(flat.shape, dtype=flat.dtype).copy_(flat)
        out = torch.empty(flat.numel(), dtype=flat.dtype, device=self.device)
        size = flat.numel() * flat.element_size()
        if size == 0:
            return out
        source, target = flat.view(torch.uint8), out.view(torch.uint8)
        current = torch.cuda.current_stream(self.device) if self.cuda else None
        if self.cuda:
            self._stream.wait_stream(current)
        for start in range(0, size, STAGE_BYTES):
            stop = min(size, start + STAGE_BYTES)
            turn, self._turn = self._turn, self._turn ^ 1
            if self._events[turn] is not None:  # the device has finished copying this buffer's last piece
                self._events[turn].synchronize()
            buffer = self._buffer(turn)[:stop - start]
            buffer.copy_(source[start:stop])  # the host's read of the checkpoint's pages
            if self.cuda:
                with torch.cuda.stream(self._stream):
                    target[start:stop].copy_(buffer, non_blocking=True)
                    event = torch.cuda.Event()
                    event.record(self._stream)
                self._events[turn] = event
            else:
                target[start:stop].copy_(buffer)
        if self.cuda:
            current.wait_stream(self._stream)
        self.copied_bytes += size
        return out

    def _buffer(self, turn: int) -> torch.Tensor:
        buffer = self._buffers[turn]
        if buffer is None:
            buffer = self._buffers[turn] = torch.empty(STAGE_BYTES, dtype=torch.uint8, pin_memory=self.cuda)
        return buffer
