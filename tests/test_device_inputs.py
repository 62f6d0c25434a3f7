"""A merge's read path on a GPU (nbmerge.engine.staging; ModelView on any device but the CPU): inputs copied through two
pinned buffers piece by piece, kept on the device while they fit, the finiteness checks read once per tensor.

CI has no GPU: the CPU stands in for one (``staged`` and ``resident_budget`` replaced, tiny staging buffers and
slices), which runs the same pieces, cache and deferred checks with synchronous copies. The last test runs the real
thing where CUDA is present (bench/gpu_check.sh runs it on a lent device)."""

import pytest
import torch

from nbmerge.engine import staging, walker
from nbmerge.engine.merging import merge
from nbmerge.errors import NumericalError
from tests.test_sliced_merge import JOBS, models, same_bits
from tests.test_walker import save_all


def stand_in(monkeypatch, budget=0, stage_bytes=64, chunk=48):
    """The CPU as a device that takes the staged path; returns the list the merges' DeviceInputs land in."""
    made = []

    class Recorded(staging.DeviceInputs):
        def __init__(self, device, budget=None):
            super().__init__(device, budget)
            made.append(self)

    monkeypatch.setattr(staging, "staged", lambda device: True)
    monkeypatch.setattr(staging, "resident_budget", lambda device: budget)
    monkeypatch.setattr(staging, "STAGE_BYTES", stage_bytes)
    monkeypatch.setattr(staging, "DeviceInputs", Recorded)
    monkeypatch.setattr(walker, "CPU_CHUNK", chunk)
    return made


def test_only_devices_other_than_the_cpu_are_staged():
    assert not staging.staged("cpu") and not staging.staged(torch.device("cpu"))
    assert staging.staged(torch.device("cuda", 0)) and staging.staged("meta")
    assert staging.resident_budget("cpu") == 0


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("method,params", JOBS)
def test_the_staged_path_gives_the_cpu_bits(monkeypatch, tmp_path, dtype, method, params):
    base, experts = models(dtype, seed=2)
    files = save_all(tmp_path, base, experts)
    reference = merge(method, base, experts, params)
    made = stand_in(monkeypatch, budget=1 << 20)
    for inputs in ((base, experts), files):  # in memory, and memory-mapped files
        out = merge(method, *inputs, params)
        same_bits(reference, {k: out[k] for k in reference})
    assert made and all(m.copied_bytes > 0 for m in made)


def stored_bytes(state):
    return sum(v.numel() * v.element_size() for v in state.values() if v.is_floating_point())


@pytest.mark.parametrize("budget", ["all", "half", "none"])
def test_ties_copies_each_input_once_when_it_fits(monkeypatch, tmp_path, budget):
    """TIES passes over the task vectors four times (two threshold counts, the sign pass, the merge pass): with room
    on the device each input crosses once, without room four times, and with room for part of it in between."""
    base, experts = models(torch.bfloat16, seed=3)
    total = stored_bytes(base) + sum(stored_bytes(e) for e in experts)
    room = {"all": total, "half": total // 2, "none": 0}[budget]
    reference = merge("ties", base, experts, {})
    made = stand_in(monkeypatch, budget=room)
    same_bits(reference, merge("ties", base, experts, {}))
    (inputs,) = made
    assert inputs.kept_bytes <= room
    if budget == "all":
        assert inputs.copied_bytes == total and inputs.kept_bytes == total
    elif budget == "none":
        assert inputs.copied_bytes == 4 * total and inputs.kept_bytes == 0
    else:
        assert total < inputs.copied_bytes < 4 * total and inputs.kept_bytes > 0


def test_the_first_tensors_that_fit_stay_and_a_kept_one_is_not_copied_again():
    inputs = staging.DeviceInputs("cpu", budget=2 * 400)
    owner = object()
    tensors = {f"t{i}": torch.randn(100) for i in range(3)}  # 400 bytes each
    for key, tensor in tensors.items():
        assert torch.equal(inputs.get(owner, key, tensor), tensor)
    assert set(k for _, k in inputs.kept) == {"t0", "t1"} and inputs.copied_bytes == 1200
    assert inputs.get(owner, "t0") is inputs.kept[(id(owner), "t0")] and inputs.copied_bytes == 1200
    assert not inputs.has(owner, "t2") and not inputs.has(object(), "t0")
    inputs.get(owner, "t2", tensors["t2"], keep=True)
    assert inputs.copied_bytes == 1600 and not inputs.has(owner, "t2")
    with pytest.raises(KeyError):
        inputs.get(owner, "t2")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("numel", [0, 1, 7, 31, 32, 33, 1000])
def test_copies_in_pieces_keep_every_byte(monkeypatch, dtype, numel):
    monkeypatch.setattr(staging, "STAGE_BYTES", 64)
    host = (torch.randn(numel) * 1e3).to(dtype)
    inputs = staging.DeviceInputs("cpu", budget=0)
    for shaped in (host, host.reshape(1, -1), host[::2]):  # flat, not flat, not contiguous
        copied = inputs.copy(shaped)
        assert copied.shape == (shaped.numel(),) and copied.dtype == dtype
        assert torch.equal(copied, shaped.reshape(-1))


def test_checks_read_once_per_tensor_still_name_the_input_and_count_the_overflow(monkeypatch):
    base, experts = models(torch.bfloat16)
    stand_in(monkeypatch, chunk=16)
    bad = [dict(e) for e in experts]
    bad[1]["emb.weight"] = bad[1]["emb.weight"].clone()
    bad[1]["emb.weight"][250, 3] = float("nan")  # in a late slice
    for method in ("task_arithmetic", "ties"):
        with pytest.raises(NumericalError, match=r"expert 1.*'emb.weight' contains NaN or Inf"):
            merge(method, base, bad, {})
    big = {k: v.float() for k, v in base.items() if v.is_floating_point()}
    with pytest.raises(NumericalError, match=r"\(4800 of 4800 values overflow at scale 2e\+38\)"):
        merge("task_arithmetic", {k: v * 0 for k, v in big.items()}, [{k: v * 0 + 1 for k, v in big.items()}] * 3,
              {"scale": 2e38})
    huge = [{k: v * 0 + 3e38 for k, v in big.items()}] * 3  # finite inputs whose sum overflows
    with pytest.raises(NumericalError, match="task vectors reach"):
        merge("task_arithmetic", {k: v * 0 for k, v in big.items()}, huge, {})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (bench/gpu_check.sh on a lent one)")
@pytest.mark.parametrize("method,params", [("task_arithmetic", {"scale": 0.3}), ("average", {}), ("ties", {}),
                                           ("ties", {"merge": "sum", "density": 0.5})])
def test_cuda_merges_give_the_cpu_bits(tmp_path, method, params):
    from nbmerge.engine.walker import WalkOptions

    base, experts = models(torch.bfloat16, seed=4)
    files = save_all(tmp_path, base, experts)
    reference = merge(method, base, experts, params)
    out = merge(method, *files, params, walk=WalkOptions(device="cuda"))
    same_bits(reference, {k: out[k].cpu() for k in reference})
