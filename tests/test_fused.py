"""The compiled one-pass paths (nbmerge.engine.fused) for task arithmetic, averaging, TIES and DARE: the bits of the
torch path (whole tensor and sliced) for bf16 and float32, any number of experts, any scale, every TIES merge and
majority sign, DARE's masks drawn as the torch path draws them, any split over threads; a NaN, an infinity or an
overflow goes back to the torch path and its error; output memory reused only once released."""

import contextlib

import numpy as np
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


def saved_models(folder):
    """``models(bf16, 3)`` and the experts' files, the base at ``folder/base.safetensors``."""
    base, tuned = models(torch.bfloat16, 3)
    save_state_dict(base, folder / "base.safetensors")
    paths = [folder / f"e{t}.safetensors" for t in range(len(tuned))]
    for expert, path in zip(tuned, paths):
        save_state_dict(expert, path)
    return base, tuned, paths


def test_from_files_with_reused_outputs_equals_in_memory(tmp_path, monkeypatch):
    base, tuned, paths = saved_models(tmp_path)
    monkeypatch.setattr(fused._Outputs, "LIMIT", 3 * 4 * 2 ** 15)  # a few arenas: reuse and eviction both happen
    merge_to_file("task_arithmetic", tmp_path / "base.safetensors", paths, tmp_path / "out.safetensors", {"scale": 0.3})
    out = SafetensorsSource(tmp_path / "out.safetensors")
    same_bits({k: out.get(k) for k in base}, merge("task_arithmetic", base, tuned, {"scale": 0.3}))
    assert not fused._OUTPUTS._held  # the arenas are let go with the merge


@pytest.mark.parametrize("to", ["file", "folder"])
def test_a_merge_written_to_a_file_or_a_folder_reuses_its_outputs(tmp_path, monkeypatch, to):
    """A folder output (`nbmerge merge --out dir/`, what the mergekit benchmark runs) took fresh memory for every
    tensor, because only the single-file path turned reuse on."""
    from nbmerge.engine.merging import merge_to_folder

    base, tuned, paths = saved_models(tmp_path)
    depths = []
    real = fused._Outputs.take
    monkeypatch.setattr(fused._Outputs, "take", lambda self, *a: depths.append(self.depth) or real(self, *a))
    write = merge_to_file if to == "file" else merge_to_folder
    with pytest.warns(UserWarning) if to == "folder" else contextlib.nullcontext():  # no config.json beside it
        write("task_arithmetic", tmp_path / "base.safetensors", paths, tmp_path / f"out-{to}", {"scale": 0.3})
    assert depths and all(depths)


def test_a_merge_written_past_the_page_cache_has_the_same_bytes(tmp_path, monkeypatch):
    """The command line's writer (io.PlannedWriter) in its O_DIRECT mode, as a model-sized output takes it, with a
    staging buffer smaller than a tensor: the merged file is the page-cache writer's, byte for byte."""
    import nbmerge.engine.io as io

    base, tuned, paths = saved_models(tmp_path)
    merge_to_file("task_arithmetic", tmp_path / "base.safetensors", paths, tmp_path / "plain.safetensors",
                  {"scale": 0.3})
    stages = []
    monkeypatch.setattr(io.PlannedWriter, "DIRECT_MIN_BYTES", 0)
    monkeypatch.setattr(io.PlannedWriter, "STAGE_BYTES", 2 * io.DIRECT_ALIGN)
    real = io._DirectStage.open
    monkeypatch.setattr(io._DirectStage, "open", lambda *a: stages.append(real(*a)) or stages[-1])
    merge_to_file("task_arithmetic", tmp_path / "base.safetensors", paths, tmp_path / "direct.safetensors",
                  {"scale": 0.3})
    assert len(stages) == 1
    assert (tmp_path / "direct.safetensors").read_bytes() == (tmp_path / "plain.safetensors").read_bytes()


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


def all_torch(monkeypatch):
    """Every TIES/DARE pass on the torch path: thresholds, majority sign and merge."""
    from nbmerge.methods import ties

    torch_path(monkeypatch)
    monkeypatch.setattr(ties, "_compiled_thresholds", lambda *a: None)
    monkeypatch.setattr(ties, "_compiled_signs", lambda *a: None)


TIES_JOBS = [("ties", {}), ("ties", {"merge": "sum", "density": 0.5}), ("ties", {"merge": "max", "scale": 0.7}),
             ("ties", {"density": 1.0}), ("dare", {}), ("dare", {"merge": "ties", "p": 0.3, "seed": 3}),
             ("dare", {"merge": "ties", "density": 1.0}), ("dare", {"rescale": False, "scale": -1.3})]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("experts", [1, 3, 6])
@pytest.mark.parametrize("method,params", TIES_JOBS)
def test_compiled_ties_and_dare_give_the_torch_paths_bits(monkeypatch, dtype, experts, method, params):
    base, tuned = models(dtype, experts)
    tuned[0]["big.weight"][0, :9] = base["big.weight"][0, :9]  # zero task-vector entries: ties in the election
    ran = []
    original = fused.ties_merge
    monkeypatch.setattr(fused, "ties_merge", lambda *a, **k: ran.append(1) or original(*a, **k))
    ours = merge(method, base, tuned, params)
    assert ran  # the compiled pass merged the large tensors
    with monkeypatch.context() as m:
        all_torch(m)
        same_bits(ours, merge(method, base, tuned, params))  # sliced torch path
        m.setattr(walker, "_is_elementwise", lambda *a: False)
        same_bits(ours, merge(method, base, tuned, params))  # whole tensors


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("experts", [1, 2, 5, 9, 17])
@pytest.mark.parametrize("merge_", ["mean", "sum", "max"])
def test_the_compiled_ties_kernel_is_the_reference_kernel(dtype, experts, merge_):
    """Every majority sign (0 included, which a whole model rarely gives), trimmed or not, against the torch kernel
    on the same task vectors: θ₀ + scale·τ rounded to the stored dtype, bit for bit, signed zeros included."""
    from nbmerge.methods.ties import _ties_entries

    base, tuned = models(dtype, experts)
    raws = [base["odd.weight"], *[e["odd.weight"] for e in tuned]]
    deltas = [r.float() - raws[0].float() for r in raws[1:]]
    for cut in (torch.zeros(experts), torch.stack([d.abs().median() for d in deltas])):
        for majority in (1.0, -1.0, 0.0):
            expected = (_ties_entries([d.clone() for d in deltas], cut, majority, merge_) * 0.6
                        + raws[0].float()).to(dtype)
            ours = fused.ties_merge(raws, 0.6, thresholds=cut.numpy(), majority=majority,
                                    mode=fused.TIES_MODES[merge_])
            assert torch.equal(ours.view(-1).view(torch.uint8), expected.view(-1).view(torch.uint8)), (cut, majority)
            signs = torch.sign(torch.stack([d * (d.abs() >= c if c else 1) for d, c in zip(deltas, cut)]).sum(0))
            assert fused.ties_signs(raws, cut.numpy()) == int(signs.sum())


def test_compiled_masks_are_dare_drops_and_replayed():
    from nbmerge.methods.dare import DropMasks, dare_drop, dare_stream

    g = torch.Generator().manual_seed(1)
    deltas = [torch.randn(3 * fused.BLOCK + 5, generator=g) for _ in range(2)]
    memo = {}
    drops = DropMasks(2, p=0.4, rescale=True, seed=7, memo=memo)("k", deltas[0].numel())
    expected = dare_drop([d.clone() for d in deltas], key="k", p=0.4, seed=7, rescale=False)
    for bits, dropped in zip(drops.bits, expected):
        keep = torch.from_numpy(np.unpackbits(bits, count=deltas[0].numel()))
        assert torch.equal(keep.bool(), dropped != 0)
    stream = dare_stream(key="k", tasks=[0, 1], numel=deltas[0].numel(), p=0.4, seed=7, memo=memo)
    for got, want in zip(stream([d.clone() for d in deltas]), dare_drop([d.clone() for d in deltas], key="k", p=0.4,
                                                                         seed=7)):
        assert torch.equal(got, want)  # the torch path replays the compiled pass's masks
    last = DropMasks(2, p=0.4, rescale=True, seed=7, memo=memo, last=True)("k", deltas[0].numel())
    assert all(a is b for a, b in zip(last.bits, drops.bits)) and not memo  # the merge pass takes them out


@pytest.mark.parametrize("threads", [2, 3])
def test_compiled_ties_split_over_threads_gives_the_same_bits(monkeypatch, threads):
    base, tuned = models(torch.bfloat16, 3)
    raws = [base["odd.weight"], *[e["odd.weight"] for e in tuned]]
    cut = np.full(3, 1e-3, dtype=np.float32)
    one = fused.ties_merge(raws, 0.4, thresholds=cut, majority=1.0, mode=fused.MODE_MEAN, threads=1)
    signs = fused.ties_signs(raws, cut, threads=1)
    monkeypatch.setattr(fused, "MIN_ENTRIES_PER_THREAD", fused.BLOCK)
    split = fused.ties_merge(raws, 0.4, thresholds=cut, majority=1.0, mode=fused.MODE_MEAN, threads=threads)
    assert torch.equal(one.view(torch.int16), split.view(torch.int16))
    assert fused.ties_signs(raws, cut, threads=threads) == signs


@pytest.mark.parametrize("method,params", [("ties", {}), ("dare", {"merge": "ties"})])
def test_compiled_ties_leaves_non_finite_inputs_to_the_torch_paths_errors(method, params):
    base, tuned = models(torch.bfloat16, 2)
    tuned[1]["big.weight"][3, 5] = float("inf")
    with pytest.raises(NumericalError, match="big.weight.*NaN or Inf"):
        merge(method, base, tuned, params)


def test_masks_drawn_side_by_side_are_the_masks_drawn_one_by_one(monkeypatch):
    from nbmerge.methods import dare

    monkeypatch.setattr(dare, "DRAW_ENTRIES", 64)  # several draws per task, a remainder at the end
    one = dare.drop_bits(key="k", tasks=[0, 1, 2], numel=1000, p=0.3, seed=5, threads=1)
    for threads in (2, 3):
        many = dare.drop_bits(key="k", tasks=[0, 1, 2], numel=1000, p=0.3, seed=5, threads=threads)
        assert all(np.array_equal(a, b) for a, b in zip(one, many))
    keep = dare.dare_drop([torch.ones(1000) for _ in range(3)], key="k", p=0.3, seed=5, rescale=False)
    assert all(np.array_equal(np.unpackbits(b, count=1000), k.numpy().astype(np.uint8)) for b, k in zip(one, keep))


@pytest.mark.parametrize("rows", [1, 3, 5, 16, 17, 20, 33, 70])
def test_rows_sum_is_torchs_row_reduction_for_every_entry(rows):
    """TIES sums the tasks as torch's CPU reduction sums the columns of a long block (a cascade every 16 rows), and
    gives each entry that sum whatever the slicing; torch's own sum(0) adds a block's last columns another way."""
    from nbmerge.methods.ties import rows_sum

    g = torch.Generator().manual_seed(rows)
    stacked = torch.randn(rows, 4096, generator=g) * torch.logspace(-3, 3, rows)[:, None]
    whole = rows_sum(stacked)
    assert torch.equal(whole.view(torch.int32), stacked.sum(0).view(torch.int32))  # 4096 columns: no tail
    for cut in (slice(0, 7), slice(100, 133), slice(4089, 4096)):
        assert torch.equal(rows_sum(stacked[:, cut].contiguous()).view(torch.int32), whole[cut].view(torch.int32))


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_packed_keep_masks_are_torchs_comparison_in_float32(p):
    # torch compares a float32 tensor with a Python float in float32: float32(0.7) < 0.7 is kept at p = 0.7
    edge = float(np.float32(p))
    values = torch.tensor([edge, np.nextafter(np.float32(p), np.float32(0)), np.nextafter(np.float32(p), np.float32(1)),
                           0.0, 1.0 - 2 ** -24, p] + torch.rand(37, generator=torch.Generator().manual_seed(3)).tolist())
    for n in (1, 7, 8, 9, values.numel()):
        out = np.full((n + 7) // 8, 0xAA, dtype=np.uint8)
        fused.pack_at_least(values[:n], p, out)
        assert np.array_equal(out, np.packbits(values[:n].ge(p).numpy())), n
