"""The elementwise path (nbmerge.engine.walker: ModelView.chunks, _merge_sliced): task arithmetic, averaging, TIES, DARE
and every fallback tensor merged slice by slice from the checkpoints' own pages give the bits of the whole-tensor
path, whatever the slice size; DARE's masks drawn slice by slice (and replayed from bits) are dare_drop's; TIES's
faster masks keep the reference's products, signed zeros included; zero-copy views of safetensors files."""

import os
import warnings

import pytest
import torch

from nbmerge.engine import walker
from nbmerge.cli import main
from nbmerge.errors import CheckpointError, NumericalError
from nbmerge.engine.io import SafetensorsSource, save_state_dict
from nbmerge.engine.merging import merge
from nbmerge.methods.dare import dare_drop, dare_stream
from nbmerge.methods.ties import _ties_entries
from nbmerge.engine.walker import WalkOptions
from tests.test_walker import save_all

SHAPES = {"emb.weight": (300, 16), "a.weight": (37, 29), "a.bias": (37,), "b.weight": (5, 3), "e.weight": (0, 4),
          "scalar": (), "steps": (3,)}
JOBS = [("task_arithmetic", {"scale": 0.3}), ("average", {}), ("ties", {}), ("ties", {"merge": "sum", "density": 0.5}),
        ("ties", {"merge": "max"}), ("dare", {}), ("dare", {"merge": "ties", "p": 0.3, "seed": 3}),
        ("dare", {"merge": "ties", "density": 1.0}), ("dare", {"rescale": False}), ("tsv", {}), ("wudi", {})]


def models(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    base = {k: (torch.randn(s, generator=g) * 0.02).to(dtype) for k, s in SHAPES.items() if k != "steps"}
    base["steps"] = torch.arange(3)
    base["a.bias"][::5] = -0.0  # signed zeros in θ₀: θ₀ + (±0) keeps or loses the sign
    experts = []
    for _ in range(3):
        expert = {k: v if not v.is_floating_point() else (v.float() + torch.randn(v.shape, generator=g) * 0.003)
                  .to(dtype) for k, v in base.items()}
        expert["a.bias"][::7] = base["a.bias"][::7]  # zero task-vector entries: ties in TIES's sign election
        experts.append(expert)
    return base, experts


def whole_tensor(monkeypatch):
    """The whole-tensor path: no slicing in the merge, one slice per tensor in the global passes."""
    monkeypatch.setattr(walker, "_is_elementwise", lambda *a: False)
    monkeypatch.setattr(walker, "CPU_CHUNK", 1 << 30)


def bits(t):
    return t.reshape(-1).view(torch.uint8) if t.numel() else t


def same_bits(a, b):
    assert list(a) == list(b)
    for key in a:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        assert torch.equal(bits(a[key]), bits(b[key])), key


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("method,params", JOBS)
def test_slices_give_the_whole_tensor_bits(monkeypatch, dtype, method, params):
    base, experts = models(dtype)
    with monkeypatch.context() as m:
        whole_tensor(m)
        reference = merge(method, base, experts, params)
    for size in (8, 64, 1 << 10):  # slices of several sizes, a remainder in most tensors
        monkeypatch.setattr(walker, "CPU_CHUNK", size)
        same_bits(reference, merge(method, base, experts, params))


def test_sliced_from_files_equals_in_memory(tmp_path, monkeypatch):
    """Checkpoint files are read through zero-copy views of their pages: the same bits as in-memory inputs."""
    base, experts = models(torch.bfloat16, seed=1)
    paths = save_all(tmp_path, base, experts)[1]
    monkeypatch.setattr(walker, "CPU_CHUNK", 64)
    for method, params in JOBS[:7]:
        from_files = merge(method, tmp_path / "base.safetensors", paths, params)
        same_bits(merge(method, base, experts, params), {k: from_files[k] for k in base})


def test_float64_compute_and_checks_on_the_sliced_path(monkeypatch):
    base, experts = models(torch.bfloat16)
    monkeypatch.setattr(walker, "CPU_CHUNK", 16)
    with monkeypatch.context() as m:
        whole_tensor(m)
        reference = merge("ties", base, experts, {}, walk=WalkOptions(compute_dtype="float64"))
    same_bits(reference, merge("ties", base, experts, {}, walk=WalkOptions(compute_dtype="float64")))
    bad = [dict(e) for e in experts]
    bad[1]["emb.weight"] = bad[1]["emb.weight"].clone()
    bad[1]["emb.weight"][250, 3] = float("nan")  # in a late slice
    with pytest.raises(NumericalError, match="contains NaN or Inf"):
        merge("task_arithmetic", base, bad, {})
    big = {k: v.float() for k, v in base.items() if v.is_floating_point()}
    with pytest.raises(NumericalError, match=r"\(4800 of 4800 values overflow at scale 2e\+38\)"):
        merge("task_arithmetic", {k: v * 0 for k, v in big.items()}, [{k: v * 0 + 1 for k, v in big.items()}] * 3,
              {"scale": 2e38})


def test_ties_masks_keep_the_reference_products():
    """The masks written as 1.0/0.0 give the boolean-mask formula's bits, signed zeros and sign ties included."""
    def reference(deltas, thresholds, majority, merge_):
        stacked = torch.stack(deltas)
        trimmed = stacked * (stacked.abs() >= thresholds.view(-1, 1))
        sign = torch.sign(trimmed.sum(0))
        sign[sign == 0] = majority
        selected = trimmed * torch.where(sign > 0, trimmed > 0, trimmed < 0)
        if merge_ == "sum":
            return selected.sum(0)
        if merge_ == "max":
            return selected.abs().max(0).values * sign
        return selected.sum(0) / (selected != 0).sum(0).to(selected.dtype).clamp(min=1)

    g = torch.Generator().manual_seed(0)
    deltas = [torch.randn(4099, generator=g) * 0.01 for _ in range(3)]
    for i, d in enumerate(deltas):
        d[::7 + i] = 0.0
        d[::11] = -0.0
    deltas[1][::13] = -deltas[0][::13]  # opposite entries: sums of exactly 0
    thresholds = torch.tensor([0.005, 0.01, 0.0])
    for merge_ in ("mean", "sum", "max"):
        for majority in (1.0, -1.0, 0.0):
            assert torch.equal(bits(_ties_entries(deltas, thresholds, majority, merge_)),
                               bits(reference(deltas, thresholds, majority, merge_))), (merge_, majority)


@pytest.mark.parametrize("shape", [(1000,), (37, 29), (5,)])
def test_dare_masks_drawn_slice_by_slice_are_dare_drops(shape):
    g = torch.Generator().manual_seed(2)
    deltas = [torch.randn(shape, generator=g) for _ in range(2)]
    expected = dare_drop([d.clone() for d in deltas], key="k", p=0.4, seed=7)
    memo = {}
    for sizes in ([8, 64, 8 * 1000], [16] * 200, [1 << 20]):  # the first pass records bits, the later ones replay
        drop = dare_stream(key="k", tasks=[0, 1], numel=deltas[0].numel(), p=0.4, seed=7, memo=memo)
        flat, start, out = [d.reshape(-1).clone() for d in deltas], 0, [[], []]
        for size in sizes:
            stop = min(start + size, flat[0].numel())
            if start == stop:
                break
            for t, part in enumerate(drop([f[start:stop].clone() for f in flat])):
                out[t].append(part)
            start = stop
        for t in range(2):
            assert torch.equal(torch.cat(out[t]).view(shape), expected[t])
        assert ("k", (0, 1)) in memo


def test_safetensors_views_are_the_stored_values(tmp_path):
    tensors = {"a": torch.randn(300, 7).to(torch.bfloat16), "b": torch.arange(5), "c": torch.zeros(0, 3)}
    save_state_dict(tensors, tmp_path / "m.safetensors")
    source = SafetensorsSource(tmp_path / "m.safetensors")
    for key, value in tensors.items():
        view = source.view(key)
        assert view.dtype == value.dtype and torch.equal(view, value)
        source.release(key)
        assert torch.equal(view, value)  # released pages are read again from the page cache
        source.prefetch(key)
    with open(tmp_path / "m.safetensors", "r+b") as handle:  # cut after the source was opened
        handle.truncate(os.path.getsize(tmp_path / "m.safetensors") - 100)
    fresh = SafetensorsSource.__new__(SafetensorsSource)
    fresh.__dict__.update(source.__dict__, _maps={})
    with pytest.raises(CheckpointError, match="truncated after it was opened"):
        fresh.view("a")


def test_merge_threads_option(tmp_path, monkeypatch, capsys):
    base, experts = models(torch.float32)
    save_state_dict(base, tmp_path / "base.safetensors")
    save_state_dict(experts[0], tmp_path / "e0.safetensors")
    monkeypatch.delenv("NBMERGE_THREADS", raising=False)
    before = torch.get_num_threads()
    with pytest.raises(SystemExit):
        main(["merge", "--method", "task_arithmetic", "--base", str(tmp_path / "base.safetensors"), "--experts",
              str(tmp_path / "e0.safetensors"), "--out", str(tmp_path / "o.safetensors"), "--threads", "0"])
    assert "threads must be between 1 and 4096" in capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["merge", "--method", "task_arithmetic", "--base", str(tmp_path / "base.safetensors"),
                     "--experts", str(tmp_path / "e0.safetensors"), "--out", str(tmp_path / "o.safetensors"),
                     "--threads", "1", "--quiet"]) == 0
    assert os.environ["NBMERGE_THREADS"] == "1" and torch.get_num_threads() == 1
    monkeypatch.delenv("NBMERGE_THREADS")
    torch.set_num_threads(before)
    assert os.path.exists(tmp_path / "o.safetensors")
