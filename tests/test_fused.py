"""The compiled one-pass path for task arithmetic and averaging (nbmerge.engine.fused): the bits of the torch path
(whole tensor and sliced) for bf16 and float32, any number of experts, any scale, any split over threads; a NaN,
an infinity or an overflow goes back to the torch path and its error; output memory reused only once released."""

import pytest
import torch

from nbmerge.engine import fused, walker
from nbmerge.engine.io import SafetensorsSource, save_state_dict
from nbmerge.engine.merging import merge, merge_to_file
from nbmerge.errors import NumericalError

#: sizes around the block and the threshold: a tensor on the compiled path ends inside a block
SHAPES = {"big.weight": (fused.MIN_ENTRIES // 64 + 3, 64), "odd.weight": (fused.BLOCK * 9 + 17,),
          "small.bias": (300,)}


def models(dtype, experts=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    base = {k: (torch.randn(s, generator=g) * 0.02).to(dtype) for k, s in SHAPES.items()}
    base["odd.weight"][::11] = -0.0  # θ₀ + (±0): the sign of zero kept as the torch path keeps it
    tuned = []
    for _ in range(experts):
        expert = {k: (v.float() + torch.randn(v.shape, generator=g) * 0.003).to(dtype) for k, v in base.items()}
        expert["odd.weight"][::13] = base["odd.weight"][::13]
        tuned.append(expert)
    return base, tuned


def torch_path(monkeypatch):
    monkeypatch.setattr(fused, "MIN_ENTRIES", 1 << 40)


def same_bits(a, b):
    assert list(a) == list(b)
    for key in a:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        assert torch.equal(a[key].reshape(-1).view(torch.uint8), b[key].reshape(-1).view(torch.uint8)), key


def test_the_compiled_path_is_taken():
    base, experts = models(torch.bfloat16)
    raws = [base["big.weight"], experts[0]["big.weight"]]
    assert fused.available()
    assert fused.takes(raws, torch.bfloat16, torch.float32)
    assert not fused.takes(raws, torch.bfloat16, torch.float64)  # --compute-dtype float64: the torch path
    assert not fused.takes([base["small.bias"], experts[0]["small.bias"]], torch.bfloat16, torch.float32)
    assert not fused.takes([raws[0].float(), raws[1]], torch.float32, torch.float32)  # mixed dtypes
    assert not fused.takes([raws[0].half(), raws[1].half()], torch.float16, torch.float32)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("experts", [1, 2, 3, 5])
@pytest.mark.parametrize("method,params", [("task_arithmetic", {"scale": 0.3}), ("task_arithmetic", {"scale": -1.7}),
                                           ("average", {}), ("average", {"scale": 0.6})])
def test_compiled_bits_equal_the_torch_paths(monkeypatch, dtype, experts, method, params):
    base, tuned = models(dtype, experts)
    ours = merge(method, base, tuned, params)
    with monkeypatch.context() as m:
        torch_path(m)
        same_bits(ours, merge(method, base, tuned, params))  # sliced torch path
        m.setattr(walker, "_is_elementwise", lambda *a: False)
        same_bits(ours, merge(method, base, tuned, params))  # whole tensors


@pytest.mark.parametrize("threads", [2, 3])
def test_split_over_threads_gives_the_same_bits(monkeypatch, threads):
    base, tuned = models(torch.bfloat16, 3)
    raws = [base["odd.weight"], *[e["odd.weight"] for e in tuned]]
    one = fused.sum_merge(raws, 0.4, mean=False, threads=1)
    monkeypatch.setattr(fused, "MIN_ENTRIES_PER_THREAD", fused.BLOCK)
    assert torch.equal(one.view(torch.int16), fused.sum_merge(raws, 0.4, mean=False, threads=threads).view(torch.int16))


def test_from_files_with_reused_outputs_equals_in_memory(tmp_path, monkeypatch):
    base, tuned = models(torch.bfloat16, 3)
    save_state_dict(base, tmp_path / "base.safetensors")
    paths = []
    for t, expert in enumerate(tuned):
        save_state_dict(expert, tmp_path / f"e{t}.safetensors")
        paths.append(tmp_path / f"e{t}.safetensors")
    monkeypatch.setattr(fused._Outputs, "LIMIT", 3 * 4 * 2 ** 15)  # a few arenas: reuse and eviction both happen
    merge_to_file("task_arithmetic", tmp_path / "base.safetensors", paths, tmp_path / "out.safetensors", {"scale": 0.3})
    out = SafetensorsSource(tmp_path / "out.safetensors")
    same_bits({k: out.get(k) for k in base}, merge("task_arithmetic", base, tuned, {"scale": 0.3}))
    assert not fused._OUTPUTS._held  # the arenas are let go with the merge


def test_outputs_still_held_are_not_handed_out_again():
    shape = torch.Size([4096])
    with fused.reusing_outputs():
        first = fused._OUTPUTS.take(shape, torch.bfloat16)
        second = fused._OUTPUTS.take(shape, torch.bfloat16)
        assert first.data_ptr() != second.data_ptr()
        address = second.data_ptr()
        del second
        assert fused._OUTPUTS.take(shape, torch.bfloat16).data_ptr() == address  # released: reused
    outside = fused._OUTPUTS.take(shape, torch.bfloat16)  # an in-memory merge: fresh memory, nothing held
    assert not fused._OUTPUTS._held and outside.data_ptr() != first.data_ptr()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_non_finite_inputs_and_overflow_get_the_torch_paths_errors(dtype):
    base, tuned = models(dtype, 2)
    tuned[1]["big.weight"][3, 5] = float("nan")
    with pytest.raises(NumericalError, match="expert 2.*big.weight.*NaN or Inf|big.weight.*NaN or Inf"):
        merge("task_arithmetic", base, tuned, {"scale": 0.3})
    base, tuned = models(dtype, 2)
    with pytest.raises(NumericalError, match="overflow"):
        merge("task_arithmetic", base, tuned, {"scale": 1e42})


def test_without_numba_the_torch_path_runs(monkeypatch):
    base, tuned = models(torch.bfloat16, 3)
    ours = merge("task_arithmetic", base, tuned, {"scale": 0.3})
    monkeypatch.setattr(fused, "_KERNELS", {})
    assert not fused.available()
    same_bits(ours, merge("task_arithmetic", base, tuned, {"scale": 0.3}))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("params", [{}, {"density": 0.5, "merge": "sum"}, {"density": 0.01}])
def test_ties_thresholds_counted_compiled_equal_the_torch_passes(monkeypatch, dtype, params):
    from nbmerge.methods import ties

    base, tuned = models(dtype, 3)
    tuned[0]["big.weight"][0, :5] = base["big.weight"][0, :5]  # zero task-vector entries (|τ| = +0 or −0)
    seen = []
    original = ties._compiled_thresholds
    monkeypatch.setattr(ties, "_compiled_thresholds", lambda *a: seen.append(original(*a)) or seen[-1])
    ours = merge("ties", base, tuned, params)
    assert seen and seen[0] is not None  # the compiled counts ran
    monkeypatch.setattr(ties, "_compiled_thresholds", lambda *a: None)
    same_bits(ours, merge("ties", base, tuned, params))
