"""Checkpoint I/O: round trips, sharding, atomic writes and clear errors on bad files."""

import json
import os
import random
import re

import pytest
import torch

import nbmerge
from nbmerge.engine.io import SafetensorsSource, ShardedWriter, load_state_dict, save_state_dict, write_tensors

SHARD_NAME = re.compile(r"^merged-(\d{5})-of-(\d{5})\.safetensors$")


def mixed_state_dict():
    gen = torch.Generator().manual_seed(0)
    return {
        "w32": torch.randn(8, 6, generator=gen),
        "w64": torch.randn(5, dtype=torch.float64, generator=gen),
        "w16": torch.randn(4, 4, generator=gen).to(torch.float16),
        "wbf16": torch.randn(3, 7, generator=gen).to(torch.bfloat16),
        "count": torch.tensor([2**40 + 1, -3], dtype=torch.int64),
        "mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(1.5),
    }


def assert_same(a, b):
    assert set(a) == set(b)
    for key in a:
        assert a[key].dtype == b[key].dtype, key
        assert a[key].shape == b[key].shape, key
        assert torch.equal(a[key], b[key]), key


def listing(folder):
    return sorted(os.listdir(folder)) if folder.exists() else []


def sized_tensors(n=10, numel=64):
    """n float32 tensors of ``numel`` entries (256 bytes each with the default)."""
    gen = torch.Generator().manual_seed(1)
    return {f"layer.{i}.weight": torch.randn(numel, generator=gen) for i in range(n)}


# -- round trip -------------------------------------------------------------------------------------------

def test_save_load_round_trip_keeps_dtypes_and_values(tmp_path):
    sd = mixed_state_dict()
    path = tmp_path / "model.safetensors"
    save_state_dict(sd, path, metadata={"note": "x"})
    loaded = load_state_dict(path)
    assert_same(loaded, sd)
    assert loaded["count"][0].item() == 2**40 + 1
    source = SafetensorsSource(path)
    assert source.dtype("wbf16") == torch.bfloat16 and source.dtype("count") == torch.int64
    assert source.shape("w32") == (8, 6)
    assert listing(tmp_path) == ["model.safetensors"]  # no temporary left behind


def test_save_makes_non_contiguous_tensors_contiguous(tmp_path):
    t = torch.arange(12.0).reshape(3, 4).T  # non-contiguous view
    save_state_dict({"t": t}, tmp_path / "m.safetensors")
    assert torch.equal(load_state_dict(tmp_path / "m.safetensors")["t"], t)


# -- sharding ---------------------------------------------------------------------------------------------

def test_sharded_writer_writes_numbered_shards_and_index(tmp_path):
    sd = sized_tensors()
    out = tmp_path / "out" / "merged.safetensors"
    written = write_tensors(iter(sd.items()), out, max_shard_bytes=600)  # two 256-byte tensors per shard
    folder = out.parent
    names = listing(folder)
    shards = [n for n in names if SHARD_NAME.match(n)]
    assert len(shards) == 5
    assert {int(SHARD_NAME.match(n)[2]) for n in shards} == {5}
    assert sorted(int(SHARD_NAME.match(n)[1]) for n in shards) == [1, 2, 3, 4, 5]
    assert sorted(names) == sorted(shards + ["merged.safetensors.index.json"])
    assert not out.exists()
    assert sorted(p.name for p in written) == sorted(names)
    index = json.loads((folder / "merged.safetensors.index.json").read_text())
    assert set(index["weight_map"]) == set(sd)
    assert set(index["weight_map"].values()) == set(shards)
    for shard in shards:
        assert len(load_state_dict(folder / shard)) == 2
    assert_same(load_state_dict(folder / "merged.safetensors.index.json"), sd)
    assert_same(load_state_dict(folder), sd)
    assert SafetensorsSource(folder).keys() == list(sd)  # key order survives sharding


def test_tensor_bigger_than_the_limit_gets_its_own_shard(tmp_path):
    sd = {"small.a": torch.ones(4), "big": torch.ones(1000), "small.b": torch.ones(4)}
    out = tmp_path / "m.safetensors"
    write_tensors(iter(sd.items()), out, max_shard_bytes=100)
    index = json.loads((tmp_path / "m.safetensors.index.json").read_text())["weight_map"]
    assert len(set(index.values())) == 3
    assert_same(load_state_dict(tmp_path), sd)


def test_big_limit_or_no_limit_gives_a_single_file(tmp_path):
    sd = mixed_state_dict()
    for limit in (None, 10**9):
        folder = tmp_path / f"limit{limit}"
        written = write_tensors(iter(sd.items()), folder / "merged.safetensors", max_shard_bytes=limit)
        assert written == [folder / "merged.safetensors"]
        assert listing(folder) == ["merged.safetensors"]
        assert_same(load_state_dict(folder / "merged.safetensors"), sd)
        assert_same(load_state_dict(folder), sd)


def test_sharded_writer_metadata_goes_to_every_shard_and_index(tmp_path):
    writer = ShardedWriter(tmp_path / "m.safetensors", max_shard_bytes=300, metadata={"nbmerge_method": "x"})
    for key, value in sized_tensors(4).items():
        writer.add(key, value)
    writer.close()
    index = json.loads((tmp_path / "m.safetensors.index.json").read_text())
    assert index["metadata"] == {"nbmerge_method": "x"}
    from safetensors import safe_open
    with safe_open(str(tmp_path / "m-00001-of-00004.safetensors"), "pt") as handle:
        assert handle.metadata() == {"nbmerge_method": "x"}


# -- atomicity --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [None, 600])
def test_failing_iterator_leaves_nothing(tmp_path, limit):
    sd = sized_tensors()

    def items():
        for i, (key, value) in enumerate(sd.items()):
            if i == 7:  # after several shards were flushed to temporary files
                raise RuntimeError("boom")
            yield key, value

    folder = tmp_path / "out"
    with pytest.raises(RuntimeError, match="boom"):
        write_tensors(items(), folder / "merged.safetensors", max_shard_bytes=limit)
    assert listing(folder) == []


def test_abort_removes_flushed_shards(tmp_path):
    writer = ShardedWriter(tmp_path / "m.safetensors", max_shard_bytes=300)
    for key, value in sized_tensors(5).items():
        writer.add(key, value)
    assert any(name.endswith(".tmp") for name in listing(tmp_path))  # shards were flushed
    writer.abort()
    assert listing(tmp_path) == []


def test_write_error_inside_a_shard_flush_leaves_no_temporary(tmp_path, monkeypatch):
    real_fsync, calls = os.fsync, []

    def failing_fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space"):
        write_tensors(iter(sized_tensors().items()), tmp_path / "m.safetensors", max_shard_bytes=600)
    monkeypatch.undo()
    assert listing(tmp_path) == []


def test_error_while_renaming_shards_leaves_no_partial_checkpoint(tmp_path, monkeypatch):
    real_replace, calls = os.replace, []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_tensors(iter(sized_tensors(6).items()), tmp_path / "m.safetensors", max_shard_bytes=600)
    monkeypatch.undo()
    assert listing(tmp_path) == []


# -- bad files --------------------------------------------------------------------------------------------

@pytest.fixture
def valid_file(tmp_path):
    path = tmp_path / "valid.safetensors"
    save_state_dict({"a": torch.randn(64, 64), "b": torch.randn(10)}, path)
    return path


def test_corrupt_file_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "corrupt.safetensors"
    rng = random.Random(0)
    path.write_bytes(bytes(rng.getrandbits(8) for _ in range(4096)))
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(path))):
        SafetensorsSource(path)


def test_corrupt_header_json_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "badjson.safetensors"
    header = b"{not json at all"
    path.write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(path))):
        load_state_dict(path)


def test_truncated_file_is_a_checkpoint_error_at_open(tmp_path, valid_file):
    data = valid_file.read_bytes()
    path = tmp_path / "truncated.safetensors"
    path.write_bytes(data[: len(data) // 2])
    # detected when the file is opened (the header no longer matches the file size), before any read
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(path))):
        SafetensorsSource(path)


def test_file_cut_inside_its_header_is_a_checkpoint_error(tmp_path, valid_file):
    path = tmp_path / "cut.safetensors"
    path.write_bytes(valid_file.read_bytes()[:20])
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(path))):
        load_state_dict(path)


def test_empty_file_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "empty.safetensors"
    path.write_bytes(b"")
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(path))):
        SafetensorsSource(path)


def test_missing_file_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "nowhere.safetensors"
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(path))):
        load_state_dict(path)


def test_empty_folder_is_a_checkpoint_error(tmp_path):
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(tmp_path))):
        SafetensorsSource(tmp_path)


def test_index_pointing_to_a_missing_shard(tmp_path):
    write_tensors(iter(sized_tensors().items()), tmp_path / "merged.safetensors", max_shard_bytes=600)
    missing = tmp_path / "merged-00003-of-00005.safetensors"
    missing.unlink()
    index = tmp_path / "merged.safetensors.index.json"
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(missing))) as info:
        SafetensorsSource(index)
    assert str(index) in str(info.value)
    with pytest.raises(nbmerge.CheckpointError, match="missing"):
        SafetensorsSource(tmp_path)  # the folder resolves to its index


def test_invalid_index_json(tmp_path):
    index = tmp_path / "m.safetensors.index.json"
    index.write_text('{"metadata": {}}')  # no weight_map
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(index))):
        SafetensorsSource(index)
    index.write_text("not json")
    with pytest.raises(nbmerge.CheckpointError, match=re.escape(str(index))):
        SafetensorsSource(index)


def test_key_in_two_shards_is_an_error(tmp_path):
    save_state_dict({"a": torch.ones(2)}, tmp_path / "one.safetensors")
    save_state_dict({"a": torch.zeros(2)}, tmp_path / "two.safetensors")
    with pytest.raises(nbmerge.CheckpointError, match="'a'"):
        SafetensorsSource(tmp_path)


def test_non_tensor_value_in_a_state_dict(tmp_path):
    base = {"w": torch.ones(2, 2)}
    with pytest.raises(nbmerge.CheckpointError, match="'w'"):
        nbmerge.merge("average", base, [{"w": [[1.0, 1.0], [1.0, 1.0]]}])


# -- reads by pread, writes without a serialised copy ---------------------------------------------------------------

def test_reads_equal_safetensors_own(tmp_path):
    from safetensors import safe_open

    g = torch.Generator().manual_seed(0)
    tensors = {"f32": torch.randn(3, 5, generator=g), "bf16": torch.randn(7, 2, generator=g).bfloat16(),
               "f16": torch.randn(4, generator=g).half(), "f64": torch.randn(2, 2, generator=g).double(),
               "i64": torch.arange(6).reshape(2, 3), "i8": torch.tensor([-3, 4], dtype=torch.int8),
               "bool": torch.tensor([True, False, True]), "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 4)}
    path = tmp_path / "all.safetensors"
    save_state_dict(tensors, path)
    source = SafetensorsSource(path)
    with safe_open(str(path), "pt") as handle:
        for key, value in tensors.items():
            got = source.get(key)
            assert got.dtype == value.dtype and got.shape == value.shape and torch.equal(got, value), key
            assert torch.equal(got, handle.get_tensor(key))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads RssFile from /proc")
def test_reads_leave_no_mapped_pages_behind(tmp_path):
    def rss_file():
        with open("/proc/self/status") as handle:
            return next(int(line.split()[1]) * 1024 for line in handle if line.startswith("RssFile:"))

    path = tmp_path / "big.safetensors"
    save_state_dict({f"w{i}": torch.ones(1 << 20) for i in range(16)}, path)  # 64 MiB
    source = SafetensorsSource(path)
    before = rss_file()
    for key in source.keys():
        source.get(key)
    assert rss_file() - before < 16 << 20  # a memory-mapped read would keep ~64 MiB of the file resident


def test_a_file_truncated_after_opening_is_a_checkpoint_error(tmp_path, valid_file):
    source = SafetensorsSource(valid_file)
    data = valid_file.read_bytes()
    valid_file.write_bytes(data[: len(data) - 100])
    with pytest.raises(nbmerge.CheckpointError, match="truncated"):
        source.get("a")


def test_written_shards_are_byte_identical_to_safetensors_save(tmp_path):
    from safetensors.torch import save

    tensors = {"b": torch.randn(8, 3), "a": torch.arange(4), "c": torch.randn(5).bfloat16()}
    metadata = {"nbmerge": "{}"}
    write_tensors(iter(tensors.items()), tmp_path / "m.safetensors", metadata=metadata)
    assert (tmp_path / "m.safetensors").read_bytes() == save(tensors, metadata=metadata)


# -- the planned writer past the page cache (O_DIRECT) ---------------------------------------------------------

def bf16_model(sizes=(5000, 3, 40000, 0, 70001, 4096)):
    """bf16 tensors whose byte counts straddle 4 KiB pages and the small staging buffer of the tests below."""
    gen = torch.Generator().manual_seed(2)
    return {f"layers.{i}.weight": torch.randn(n, generator=gen).bfloat16() for i, n in enumerate(sizes)}


def planned(tensors, path, limit=None):
    plan = [(key, t.dtype, tuple(t.shape)) for key, t in tensors.items()]
    return write_tensors(iter(tensors.items()), path, max_shard_bytes=limit, metadata={"nbmerge": "{}"}, plan=plan)


def direct_writes_work(folder) -> bool:
    if not hasattr(os, "O_DIRECT"):
        return False
    probe = folder / ".probe"
    probe.write_bytes(b"")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_DIRECT))
        return True
    except OSError:
        return False
    finally:
        probe.unlink()


@pytest.fixture
def small_stage(monkeypatch):
    """The planned writer's direct mode for any output size, with a 3-page staging buffer."""
    import nbmerge.engine.io as io

    monkeypatch.setattr(io.PlannedWriter, "DIRECT_MIN_BYTES", 0)
    monkeypatch.setattr(io.PlannedWriter, "STAGE_BYTES", 3 * io.DIRECT_ALIGN)
    opened = []
    real = io._DirectStage.open

    def spy(*args):
        stage = real(*args)
        opened.append(stage is not None)
        return stage
    monkeypatch.setattr(io._DirectStage, "open", spy)
    return opened


@pytest.mark.parametrize("limit", [None, 60000])
def test_an_output_written_past_the_page_cache_is_byte_identical(tmp_path, monkeypatch, small_stage, limit):
    """Direct mode gathers the bytes in file order into one aligned buffer, pads each shard's last buffer and cuts
    the file back: every shard and the index equal the page-cache writer's."""
    if not direct_writes_work(tmp_path):
        pytest.skip("this file system cannot open a file with O_DIRECT")
    tensors = bf16_model()
    ours = planned(tensors, tmp_path / "direct" / "m.safetensors", limit)
    assert small_stage == [True]
    import nbmerge.engine.io as io

    monkeypatch.setattr(io.PlannedWriter, "DIRECT_MIN_BYTES", 1 << 62)
    plain = planned(tensors, tmp_path / "plain" / "m.safetensors", limit)
    assert small_stage == [True]  # the plain run never tried
    assert [p.name for p in ours] == [p.name for p in plain]
    assert len(ours) == (1 if limit is None else 6)  # one file, or 5 shards and the index
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(ours, plain))
    assert_same(load_state_dict(ours[0].parent), tensors)


def test_without_direct_io_or_out_of_file_order_the_page_cache_writer_is_used(tmp_path, monkeypatch, small_stage):
    from safetensors.torch import save

    mixed = {"b": torch.randn(8, 3), "a": torch.arange(4), "c": torch.randn(5).bfloat16()}  # laid out a, b, c
    planned(mixed, tmp_path / "m.safetensors")
    assert small_stage == []  # out of file order: not even tried
    assert (tmp_path / "m.safetensors").read_bytes() == save(mixed, metadata={"nbmerge": "{}"})
    monkeypatch.delattr(os, "O_DIRECT", raising=False)
    tensors = bf16_model()
    planned(tensors, tmp_path / "n.safetensors")
    assert small_stage == [False]
    assert (tmp_path / "n.safetensors").read_bytes() == save(tensors, metadata={"nbmerge": "{}"})


def test_a_refused_direct_write_goes_through_the_page_cache(tmp_path, monkeypatch, small_stage):
    import errno

    import nbmerge.engine.io as io
    from safetensors.torch import save

    if not direct_writes_work(tmp_path):
        pytest.skip("this file system cannot open a file with O_DIRECT")
    calls = []
    real = io._write_all

    def refuses_once(fd, data, offset):
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        return real(fd, data, offset)
    monkeypatch.setattr(io, "_write_all", refuses_once)
    tensors = bf16_model()
    planned(tensors, tmp_path / "m.safetensors")
    assert small_stage == [True] and len(set(calls)) == 2 and calls[1] != calls[0]
    assert (tmp_path / "m.safetensors").read_bytes() == save(tensors, metadata={"nbmerge": "{}"})


def test_a_full_disk_during_a_direct_write_leaves_nothing(tmp_path, monkeypatch, small_stage):
    import nbmerge.engine.io as io

    if not direct_writes_work(tmp_path):
        pytest.skip("this file system cannot open a file with O_DIRECT")

    def full(fd, data, offset):
        raise OSError(28, os.strerror(28))
    monkeypatch.setattr(io, "_write_all", full)
    with pytest.raises(OSError, match="No space left"):
        planned(bf16_model(), tmp_path / "out" / "m.safetensors", 60000)
    assert small_stage == [True] and listing(tmp_path / "out") == []
