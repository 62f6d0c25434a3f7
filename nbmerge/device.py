"""Devices: the names nbmerge accepts, and waiting for a GPU before a clock is read."""

from __future__ import annotations

import re

import torch

from .errors import MethodError


def resolve_device(device: str | torch.device) -> str:
    """``auto`` (a GPU when there is one), ``cpu``, ``cuda`` or ``cuda:N``; anything else is a clear error."""
    device = str(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return device
    if re.fullmatch(r"cuda(:\d+)?", device):
        if not torch.cuda.is_available():
            raise MethodError(f"device {device!r} requested but CUDA is not available (use cpu or auto)")
        index = int(device.split(":")[1]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise MethodError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
        return device
    raise MethodError(f"unsupported device {device!r}: use auto, cpu, cuda or cuda:N")


def synchronize(device: str | torch.device) -> None:
    """Wait for the GPU's queued work (CUDA calls return before it is done), so a timer measures the work; a no-op on
    the CPU."""
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
