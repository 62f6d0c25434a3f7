"""Reliability catalogue: nothing lost, nothing silently wrong.

One test per case a careful user probed: each bad input gives a one-line error with a non-zero exit (or a correct
result with a one-line warning), no input is modified, and no partial or stale output is left behind. The sections:
merge outputs, numbers and dtypes, Grams, search logs, commands; then the zoo store and the report runner.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import torch

import nbmerge.pools.build as build
from nbmerge.cli import main
from nbmerge.errors import CacheError, NbmergeError, ParameterError
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.engine.merging import merge
from nbmerge.pools.build import build_zoo
from nbmerge.pools.store import link_file
from nbmerge.pools.zoo import info, load_zoo, suite_dir
from nbmerge.report import pipeline
from nbmerge.tune.search import Space, read_log, search

FC = "visual.transformer.resblocks.0.mlp.c_fc.weight"


@pytest.fixture
def files(tmp_path, tiny):
    """base + 3 experts on disk; outputs go to out/."""
    base, experts = tiny
    inputs = tmp_path / "in"
    save_state_dict(base, inputs / "base.safetensors")
    paths = []
    for i, expert in enumerate(experts):
        save_state_dict(expert, inputs / f"e{i}.safetensors")
        paths.append(str(inputs / f"e{i}.safetensors"))
    return {"base": base, "experts": experts, "base_path": str(inputs / "base.safetensors"), "expert_paths": paths,
            "in": inputs, "out_dir": tmp_path / "out", "out": str(tmp_path / "out" / "merged.safetensors")}


def run_merge(f, *extra, experts=None, base=None, out=None):
    return main(["merge", "--base", base or f["base_path"], "--experts", *(experts or f["expert_paths"]),
                 "--out", out or f["out"], "--device", "cpu", *extra])


def one_line_error(capsys, *needles) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("nbmerge: error:") and "\n" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def nothing_in(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


def digests(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# -- merge outputs -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_scale_is_refused_before_writing(files, capsys, value):
    """`merge --param scale=inf|-inf|nan` used to exit 0 with a checkpoint that was all Inf/NaN."""
    assert run_merge(files, "--method", "task_arithmetic", "--param", f"scale={value}") == 2
    one_line_error(capsys, "scale", "finite")
    assert nothing_in(files["out_dir"])


def test_overflowing_merge_is_refused_before_writing(files, tmp_path, capsys):
    """`scale=1e39` (finite in float64, Inf in float32) and an fp16 base at `scale=1e6` used to exit 0 with Inf
    values: the merged tensor is checked after the cast to the base's dtype."""
    assert run_merge(files, "--method", "task_arithmetic", "--param", "scale=1e39") == 2
    one_line_error(capsys, "not finite", "float32", "nothing was written")
    half = tmp_path / "half"
    save_state_dict({k: v.half() for k, v in files["base"].items()}, half / "base.safetensors")
    experts = []
    for i, expert in enumerate(files["experts"]):
        save_state_dict({k: v.half() for k, v in expert.items()}, half / f"e{i}.safetensors")
        experts.append(str(half / f"e{i}.safetensors"))
    assert run_merge(files, "--method", "task_arithmetic", "--param", "scale=1e6", base=str(half / "base.safetensors"),
                     experts=experts) == 2
    one_line_error(capsys, "float16")
    assert nothing_in(files["out_dir"])


def _huge(files, tmp_path, magnitude=3e38) -> list[str]:
    """Two identical experts whose task vectors are ±``magnitude`` (representable in float32; their sum is not)."""
    gen = torch.Generator().manual_seed(0)
    signs = {k: torch.randint(0, 2, v.shape, generator=gen).float() * 2 - 1 for k, v in files["base"].items()}
    expert = {k: v + magnitude * signs[k] for k, v in files["base"].items()}
    paths = []
    for i in range(2):
        save_state_dict(expert, tmp_path / "huge" / f"h{i}.safetensors")
        paths.append(str(tmp_path / "huge" / f"h{i}.safetensors"))
    return paths


def test_task_vectors_near_the_float32_limit_merge_exactly_or_name_the_overflow(files, tmp_path, capsys):
    """Task vectors of 3e38: wudi_closed_form (float64 inside) used to return 0; it must return the exact
    minimiser, here τ itself. WUDI's Adam starts from Σ_t τ_t = 6e38, which float32 cannot hold: refused, naming
    the overflow (it used to blame an ill-conditioned solve) and the float64 route, which then refuses the float32
    output honestly."""
    huge = _huge(files, tmp_path)
    assert run_merge(files, "--method", "wudi_closed_form", experts=huge) == 0
    merged, expert = load_state_dict(files["out"]), load_state_dict(huge[0])
    assert torch.equal(merged[FC], expert[FC])  # a linear weight: the minimiser is the common task vector
    assert all(torch.isfinite(v).all() for v in merged.values())
    capsys.readouterr()
    out = str(tmp_path / "wudi" / "m.safetensors")
    assert run_merge(files, "--method", "wudi", "--param", "iters=2", experts=huge, out=out) == 2
    err = one_line_error(capsys, "3e+38", "overflow", "--compute-dtype float64")
    assert "regulariser" not in err
    assert run_merge(files, "--method", "wudi", "--param", "iters=2", "--compute-dtype", "float64", experts=huge,
                     out=out) == 2
    one_line_error(capsys, "not finite in float32", "nothing was written")
    assert nothing_in(tmp_path / "wudi")


@pytest.mark.parametrize("method", ["iso_c", "iso_cts", "tsv", "ties", "regmean", "wudi_closed_form", "bmm"])
def test_zero_size_tensors_are_carried_over(files, tmp_path, capsys, method):
    """A zero-size weight (0×16) used to crash iso_c/iso_cts with an IndexError from an empty spectrum: there is
    nothing to merge, so it is written as it is and every other tensor merges as without it."""
    empty = "visual.transformer.resblocks.0.mlp.empty.weight"
    folder = tmp_path / "z"
    save_state_dict({**files["base"], empty: torch.zeros(0, 16)}, folder / "base.safetensors")
    experts = []
    for i, expert in enumerate(files["experts"]):
        save_state_dict({**expert, empty: torch.zeros(0, 16)}, folder / f"e{i}.safetensors")
        experts.append(str(folder / f"e{i}.safetensors"))
    extra = []
    if method == "regmean":
        grams = []
        for i in range(3):
            grams.append(str(folder / f"g{i}.safetensors"))
            x = torch.randn(64, 16, generator=torch.Generator().manual_seed(i))
            save_state_dict({FC: x.T @ x, empty: x.T @ x}, grams[-1])
        extra = ["--grams", *grams]
    assert run_merge(files, "--method", method, *extra, base=str(folder / "base.safetensors"), experts=experts) == 0
    merged = load_state_dict(files["out"])
    assert merged[empty].shape == (0, 16)
    assert torch.equal(merged[FC], load_state_dict(files["out"])[FC]) and torch.isfinite(merged[FC]).all()


def test_an_output_folder_named_in_bytes_that_are_not_utf8_is_written(files, tmp_path):
    """`--out` a folder whose name is not UTF-8 (a Linux file name is bytes) used to crash writing the model card,
    after the weights: the card escapes the name, and the folder loads. A sound expert file with such a name (once
    reported as "corrupt or truncated") is read like any other."""
    out = os.fsencode(str(tmp_path)) + b"/merged\xff"
    renamed = os.fsencode(files["expert_paths"][0])[:-len(b".safetensors")] + b"\xfe.safetensors"
    os.rename(os.fsencode(files["expert_paths"][0]), renamed)
    experts = [os.fsdecode(renamed), *files["expert_paths"][1:]]
    result = subprocess.run([sys.executable, "-m", "nbmerge", "merge", "--method", "task_arithmetic", "--base",
                             files["base_path"], "--experts", *experts, "--out", os.fsdecode(out) + "/",
                             "--device", "cpu"], capture_output=True, text=True, errors="surrogateescape",
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    folder = Path(os.fsdecode(out))
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "model.safetensors"]
    assert "merged\\udcff" in (folder / "README.md").read_text(encoding="utf-8")
    expected = merge("task_arithmetic", files["base"], files["experts"])
    assert all(torch.equal(load_state_dict(folder)[k], v) for k, v in expected.items())


def test_a_full_disk_is_one_line_and_leaves_nothing(files, capsys, monkeypatch):
    """safetensors reports a full disk as its own error type ("I/O error: No space left on device (os error 28)"):
    it was a traceback. Simulated: the writer fills part of the file, then the OS refuses."""
    import nbmerge.engine.io as io

    def full(tensors, path, metadata=None):
        Path(path).write_bytes(b"\0" * 100)
        raise RuntimeError("Error while serializing: I/O error: No space left on device (os error 28)")

    def full_while_streaming(fd, data, offset):  # the writer that writes during the merge (io.PlannedWriter)
        os.pwrite(fd, b"\0" * 100, offset)
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(io, "st_save_file", full)
    monkeypatch.setattr(io, "_write_all", full_while_streaming)
    for out in (files["out"], str(files["out_dir"] / "folder") + "/"):
        assert run_merge(files, "--method", "ties", out=out) == 1
        errors = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("nbmerge: warning:")]
        assert len(errors) == 1 and errors[0].startswith("nbmerge: error: No space left on device (the disk is "
                                                         "full)") and "nothing partial was written" in errors[0]
        assert nothing_in(files["out_dir"])


def test_a_folder_that_refuses_writes_is_one_line(files, capsys, monkeypatch):
    """A read-only or immutable output folder (`chattr +i`; as root, permissions alone do not refuse) gave a
    PermissionError traceback. Simulated at the OS call every output goes through."""
    import tempfile

    def refused(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted", str(files["out_dir"] / ".merged.tmp"))

    files["out_dir"].mkdir()
    monkeypatch.setattr(tempfile, "mkstemp", refused)
    assert run_merge(files, "--method", "task_arithmetic") == 1
    one_line_error(capsys, "Operation not permitted", "immutable", str(files["out_dir"]))
    assert nothing_in(files["out_dir"])


def test_single_file_merge_replaces_an_earlier_sharded_output(files, capsys):
    """A single-file merge to an `--out` that earlier held a sharded merge used to leave the old index and shards
    beside it, and loading the folder gave the previous merge."""
    assert run_merge(files, "--method", "ties", "--max-shard-size", "2K") == 0
    out_dir = files["out_dir"]
    assert any(p.name.endswith(".index.json") for p in out_dir.iterdir())
    assert run_merge(files, "--method", "task_arithmetic") == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["merged.safetensors"]
    expected = merge("task_arithmetic", files["base"], files["experts"])
    loaded = load_state_dict(out_dir)
    assert all(torch.equal(loaded[k], expected[k]) for k in expected)
    # and the other way round: a sharded merge removes the earlier single file
    assert run_merge(files, "--method", "ties", "--max-shard-size", "2K") == 0
    assert "merged.safetensors" not in {p.name for p in out_dir.iterdir()}
    ties = merge("ties", files["base"], files["experts"])
    loaded = load_state_dict(out_dir)
    assert all(torch.equal(loaded[k], ties[k]) for k in ties)
    capsys.readouterr()


@pytest.mark.parametrize("which", ["expert", "base", "base folder"])
def test_out_equal_to_an_input_is_refused(files, tmp_path, capsys, which):
    """`--out` naming an expert or the base used to exit 0 and overwrite that input; writing into a folder that is
    read as a checkpoint would change that input too."""
    before = digests(files["in"])
    if which == "expert":
        assert run_merge(files, "--method", "ties", out=files["expert_paths"][1]) == 2
        one_line_error(capsys, "would overwrite the input")
    elif which == "base":
        assert run_merge(files, "--method", "ties", out=files["base_path"]) == 2
        one_line_error(capsys, "would overwrite the input")
    else:
        folder = tmp_path / "base_dir"
        save_state_dict(files["base"], folder / "model.safetensors")
        assert run_merge(files, "--method", "ties", base=str(folder), out=str(folder / "merged.safetensors")) == 2
        one_line_error(capsys, "read as a checkpoint folder")
        assert [p.name for p in folder.iterdir()] == ["model.safetensors"]
    assert digests(files["in"]) == before


@pytest.mark.parametrize("how", ["out in the recipe", "--out the recipe"])
def test_a_recipe_is_never_its_own_output(files, tmp_path, capsys, how):
    """`out: r.yaml` inside r.yaml, or `--config r.yaml --out r.yaml`, used to replace the recipe with weights."""
    recipe = tmp_path / "r.yaml"
    experts = ", ".join(files["expert_paths"])
    text = f"method: ties\nbase: {files['base_path']}\nexperts: [{experts}]\n"
    if how == "out in the recipe":
        recipe.write_text(text + f"out: {recipe}\n")
        assert main(["merge", "--config", str(recipe)]) == 2
    else:
        recipe.write_text(text)
        assert main(["merge", "--config", str(recipe), "--out", str(recipe)]) == 2
    one_line_error(capsys, "would overwrite", str(recipe))
    assert recipe.read_text().startswith("method: ties")


def test_the_folder_of_a_base_given_as_a_file_is_protected(files, tmp_path, capsys):
    """`--base llama/model.safetensors --out llama/config.json` used to overwrite the base's config (the folder was
    not recognised as an input); `--out llama/merged.safetensors` broke the folder (two shards of one model)."""
    folder = tmp_path / "llama"
    save_state_dict(files["base"], folder / "model.safetensors")
    (folder / "config.json").write_text('{"model_type": "llama"}')
    before = digests(folder)
    for out in (folder / "config.json", folder / "merged.safetensors", folder / "sub" / "m.safetensors"):
        assert run_merge(files, "--method", "ties", base=str(folder / "model.safetensors"), out=str(out)) == 2
        one_line_error(capsys, "read as a checkpoint folder", "the folder of the input")
    assert run_merge(files, "--method", "ties", base=str(folder / "model.safetensors"),
                     out=str(folder / "merged") + "/") == 2
    one_line_error(capsys, "read as a checkpoint folder")
    assert digests(folder) == before
    bare = tmp_path / "bare"   # weights by their Hugging Face name, no config: still one model's folder
    save_state_dict(files["base"], bare / "model.safetensors")
    assert run_merge(files, "--method", "ties", base=str(bare / "model.safetensors"),
                     out=str(bare / "merged.safetensors")) == 2
    one_line_error(capsys, "read as a checkpoint folder")
    assert [p.name for p in bare.iterdir()] == ["model.safetensors"]
    # files side by side in a folder that is not one checkpoint: writing beside them is fine (the README's examples)
    assert run_merge(files, "--method", "ties", out=str(files["in"] / "merged.safetensors")) == 0


def test_a_gram_file_is_never_the_output(files, tmp_path, capsys):
    grams = tmp_path / "g.safetensors"
    save_state_dict({FC: torch.eye(files["base"][FC].shape[1])}, grams)
    before = grams.read_bytes()
    assert run_merge(files, "--method", "regmean", "--grams", str(grams), str(grams), str(grams), out=str(grams)) == 2
    one_line_error(capsys, "would overwrite the input")
    assert grams.read_bytes() == before


def test_replacing_an_earlier_output_folder_keeps_the_users_files(files, tmp_path, capsys):
    """Replacing an earlier nbmerge output folder used to delete the notes and results a user had added to it."""
    out = tmp_path / "merged"
    assert run_merge(files, "--method", "ties", out=str(out) + "/") == 0
    (out / "notes.txt").write_text("mine")
    (out / "eval").mkdir()
    (out / "eval" / "results.json").write_text("{}")
    capsys.readouterr()
    assert run_merge(files, "--method", "task_arithmetic", out=str(out) + "/") == 2
    one_line_error(capsys, "files nbmerge did not write", "eval/results.json", "notes.txt")
    assert (out / "notes.txt").read_text() == "mine" and (out / "eval" / "results.json").exists()
    (out / "notes.txt").unlink()
    shutil.rmtree(out / "eval")
    assert run_merge(files, "--method", "task_arithmetic", out=str(out) + "/") == 0   # only ours: replaced


def test_out_an_existing_folder_is_an_error_not_a_traceback(files, capsys):
    """`--out` an existing directory used to end in an IsADirectoryError traceback."""
    files["out_dir"].mkdir()
    assert run_merge(files, "--method", "ties", out=str(files["out_dir"])) == 2
    one_line_error(capsys, "is a folder")
    assert nothing_in(files["out_dir"])


def test_an_exclude_that_matches_everything_is_an_error(files, capsys):
    """`--exclude '.*'` used to write the base unchanged, with exit 0 and no word."""
    assert run_merge(files, "--method", "ties", "--exclude", ".*") == 2
    one_line_error(capsys, "matches every tensor")
    assert nothing_in(files["out_dir"])


def test_an_infinite_shard_size_is_an_error(files, capsys):
    assert run_merge(files, "--method", "ties", "--max-shard-size", "infG") == 2
    one_line_error(capsys, "expected a size")
    assert nothing_in(files["out_dir"])


@pytest.mark.parametrize("seed", ["1180591620717411303424", "-1"])
def test_a_seed_out_of_range_is_refused_like_stats_does(files, capsys, seed):
    """`merge --seed 1180591620717411303424` ended in a traceback and `--seed -1` was accepted."""
    with pytest.raises(SystemExit) as exc:
        run_merge(files, "--method", "dare", "--seed", seed)
    assert exc.value.code == 2 and "a seed is an integer in 0 .. 2**63 - 1" in capsys.readouterr().err
    assert nothing_in(files["out_dir"])


def test_report_out_an_existing_file_is_an_error(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["report", "--dry-run", "--out", str(tmp_path / "file")]) == 2
    one_line_error(capsys, "is a file")


# -- numbers and dtypes ------------------------------------------------------------------------------------------

def test_experts_stored_at_lower_precision_than_the_base_are_warned_about(files, tmp_path, capsys):
    low = tmp_path / "low.safetensors"
    save_state_dict({k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in files["experts"][0].items()},
                    low)
    assert run_merge(files, "--method", "task_arithmetic", experts=[str(low), *files["expert_paths"][1:]]) == 0
    err = capsys.readouterr().err
    assert err.count("lower precision than the base") == 1 and "bfloat16 against float32" in err


def test_integer_tensors_that_differ_are_named_in_a_warning(files, tmp_path, capsys):
    """An expert's int/bool tensor that differs from the base's used to be dropped silently (the base's kept)."""
    base = dict(files["base"], **{"visual.counter": torch.tensor([1, 2, 3])})
    expert = dict(files["experts"][0], **{"visual.counter": torch.tensor([1, 2, 4])})
    save_state_dict(base, tmp_path / "b.safetensors")
    save_state_dict(expert, tmp_path / "e.safetensors")
    assert run_merge(files, "--method", "task_arithmetic", base=str(tmp_path / "b.safetensors"),
                     experts=[str(tmp_path / "e.safetensors")]) == 0
    err = capsys.readouterr().err
    assert "nbmerge: warning:" in err and "visual.counter" in err and "kept at the base's value" in err
    assert torch.equal(load_state_dict(files["out"])["visual.counter"], base["visual.counter"])


def test_float_tensor_stored_as_int8_in_an_expert_is_refused(files, tmp_path, capsys):
    """A float tensor stored as int8 in an expert (a quantised checkpoint) used to be cast silently."""
    expert = dict(files["experts"][0], **{FC: files["experts"][0][FC].mul(100).to(torch.int8)})
    save_state_dict(expert, tmp_path / "q.safetensors")
    assert run_merge(files, "--method", "ties", experts=[str(tmp_path / "q.safetensors"), files["expert_paths"][1]]) == 2
    one_line_error(capsys, FC, "int8", "float32")
    assert nothing_in(files["out_dir"])


def test_the_same_expert_twice_is_warned_about(files, capsys):
    """The same expert file given twice used to be accepted without a word (it counts twice)."""
    path = files["expert_paths"][0]
    assert run_merge(files, "--method", "task_arithmetic", experts=[path, path, files["expert_paths"][1]]) == 0
    err = capsys.readouterr().err
    assert "nbmerge: warning:" in err and "same checkpoint" in err


def test_dare_density_out_of_range_or_unused_is_not_silent(files, capsys):
    """`dare density=7 merge=ta` used to be accepted: density is checked, and named as unused with merge=ta."""
    assert run_merge(files, "--method", "dare", "--param", "density=7") == 2
    one_line_error(capsys, "density must be in (0, 1]")
    assert run_merge(files, "--method", "dare", "--param", "density=0.5") == 0
    assert "has no effect with merge=ta" in capsys.readouterr().err


def test_a_shard_index_that_leaves_out_keys_is_refused(files, capsys):
    """A shard index whose weight_map leaves out keys its shards hold used to be accepted."""
    sharded = files["in"] / "sharded"
    main(["merge", "--base", files["base_path"], "--experts", *files["expert_paths"], "--method", "task_arithmetic",
          "--out", str(sharded / "model.safetensors"), "--max-shard-size", "2K"])
    index = sharded / "model.safetensors.index.json"
    data = json.loads(index.read_text())
    shards = list(data["weight_map"].values())
    dropped = next(k for k, shard in sorted(data["weight_map"].items()) if shards.count(shard) > 1)
    del data["weight_map"][dropped]
    index.write_text(json.dumps(data))
    capsys.readouterr()
    assert run_merge(files, "--method", "ties", experts=[str(sharded), files["expert_paths"][1]]) == 2
    one_line_error(capsys, "weight_map leaves out", dropped)
    assert nothing_in(files["out_dir"])


# -- Grams -------------------------------------------------------------------------------------------------------

def _gram_files(f, damage=None):
    gen = torch.Generator().manual_seed(9)
    paths = []
    for t in range(len(f["experts"])):
        grams = {}
        for key, value in f["base"].items():
            if value.dim() == 2 and key.endswith("weight") and "embed" not in key:
                x = torch.randn(3 * value.shape[1], value.shape[1], generator=gen)
                grams[key] = x.T @ x
        if damage is not None and t == 1:
            grams[FC] = damage(grams[FC])
        path = f["in"] / f"gram{t}.safetensors"
        save_state_dict(grams, path)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("method", ["regmean", "bmm"])
@pytest.mark.parametrize("damage,words", [
    (lambda g: g + 10.0 * torch.triu(torch.ones_like(g), 1), "not symmetric"),
    (lambda g: -0.05 * g, "not positive semi-definite"),
])
def test_invalid_gram_files_are_refused(files, capsys, method, damage, words):
    """A non-symmetric or an indefinite Gram of one expert used to be accepted (only a non-PD *sum* was caught)."""
    grams = _gram_files(files, damage)
    assert run_merge(files, "--method", method, "--grams", *grams) == 2
    one_line_error(capsys, words, FC, "gram1.safetensors")
    assert nothing_in(files["out_dir"])
    assert run_merge(files, "--method", method, "--grams", *_gram_files(files)) == 0  # valid Grams still merge


# -- search logs -------------------------------------------------------------------------------------------------

SPACE = Space({"x": (-1.0, 1.0)})


def _objective(params):
    return -(params["x"] - 0.3) ** 2


def test_a_second_search_on_the_same_log_is_refused(tmp_path):
    """Two searches on one log used to both exit 0, every trial logged twice; the log is now locked while a search
    runs, and a second one is refused with an error naming the holder."""
    log = tmp_path / "log.jsonl"
    seen = {}

    def nested(params):
        if not seen:
            with pytest.raises(NbmergeError, match=r"in use by another search \(pid \d+"):
                search(_objective, SPACE, strategy="random", budget=3, log_path=log, progress=False)
            seen["refused"] = True
        return _objective(params)

    result = search(nested, SPACE, strategy="random", budget=3, log_path=log, progress=False)
    assert seen == {"refused": True} and len(result.trials) == 3
    assert len(read_log(log)[1]) == 3  # each trial once
    again = search(_objective, SPACE, strategy="random", budget=3, log_path=log, progress=False)  # lock released
    assert again.replayed == 3


def test_an_edited_log_line_is_refused(tmp_path):
    """A middle log line edited into valid JSON with another value used to be accepted and change the best trial."""
    log = tmp_path / "log.jsonl"
    search(_objective, SPACE, strategy="random", budget=4, log_path=log, progress=False)
    lines = log.read_text().splitlines()
    record = json.loads(lines[2])
    record["value"] = 99.0
    lines[2] = json.dumps(record)
    log.write_text("\n".join(lines) + "\n")
    before = log.read_bytes()
    with pytest.raises(NbmergeError, match="line 3: its checksum does not match"):
        search(_objective, SPACE, strategy="random", budget=4, log_path=log, progress=False)
    with pytest.raises(NbmergeError, match="checksum"):
        read_log(log)
    assert log.read_bytes() == before


# -- commands ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["tpu", "mps", "meta", "cuda", "cuda:7"])
def test_unsupported_devices_are_one_line_errors(files, micro_cache, capsys, device):
    """`--device tpu|mps|meta` and `cuda` without a GPU used to end in tracebacks (eval) or run on the CPU."""
    if device.startswith("cuda") and torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert run_merge(files, "--method", "ties", "--device", device) == 2
    one_line_error(capsys, device)
    assert main(["eval", "--suite", "micro", "--model", files["base_path"], "--device", device,
                 "--cache", str(micro_cache)]) == 2
    one_line_error(capsys, device)
    assert nothing_in(files["out_dir"])


def test_eval_and_stats_refuse_a_checkpoint_with_nan(micro_cache, tmp_path, capsys):
    """`eval` of a NaN checkpoint used to print `nll nan` with exit 0, and `stats` wrote NaN Grams."""
    zoo = load_zoo("micro", micro_cache)
    state = load_state_dict(zoo.root / "base.safetensors")
    key = next(k for k, v in state.items() if v.is_floating_point() and v.dim() == 2)
    state[key] = state[key].clone()
    state[key][0, 0] = float("nan")
    save_state_dict(state, tmp_path / "nan.safetensors")
    assert main(["eval", "--suite", "micro", "--model", str(tmp_path / "nan.safetensors"),
                 "--cache", str(micro_cache)]) == 2
    one_line_error(capsys, key, "NaN")
    assert main(["stats", "--suite", "micro", "--model", str(tmp_path / "nan.safetensors"), "--n", "8",
                 "--out", str(tmp_path / "grams"), "--cache", str(micro_cache)]) == 2
    one_line_error(capsys, key, "NaN")
    assert not (tmp_path / "grams").exists()


@pytest.mark.parametrize("argv,words", [
    (["--n", "100000000"], "give at most"),
    (["--seed", "-1"], "--seed must be >= 0"),
    (["--out", "FILE"], "is a file"),
])
def test_stats_out_of_range_values_are_errors(micro_cache, tmp_path, capsys, argv, words):
    """`stats --n 1e8` used to be clamped without a word; `--seed -1` and `--out <existing file>` were tracebacks."""
    existing = tmp_path / "existing.txt"
    existing.write_text("keep me")
    argv = [str(existing) if a == "FILE" else a for a in argv]
    out = ["--out", str(tmp_path / "grams")] if "--out" not in argv else []
    base = str(load_zoo("micro", micro_cache).root / "base.safetensors")
    assert main(["stats", "--suite", "micro", "--model", base, "--cache", str(micro_cache), *out, *argv]) == 2
    one_line_error(capsys, words)
    assert existing.read_text() == "keep me" and not (tmp_path / "grams").exists()


def test_an_invalid_exclude_regex_is_an_error(files, capsys):
    """An invalid `--exclude` regex used to end in a re.error traceback."""
    assert run_merge(files, "--method", "ties", "--exclude", "(") == 2
    one_line_error(capsys, "exclude", "not a valid regular expression")
    assert nothing_in(files["out_dir"])


def test_ctrl_c_during_a_merge_leaves_nothing_and_exits_130(files, capsys, monkeypatch):
    """Ctrl-C during a merge used to print a KeyboardInterrupt traceback; no partial output may remain."""
    import nbmerge.engine.io as io

    calls = []

    def interrupting(real_add):
        def interrupted(self, key, tensor):
            calls.append(key)
            if len(calls) == 5:
                raise KeyboardInterrupt
            return real_add(self, key, tensor)
        return interrupted

    for writer in (io.ShardedWriter, io.PlannedWriter):  # the plain writer and the one writing during the merge
        monkeypatch.setattr(writer, "add", interrupting(writer.add))
    assert run_merge(files, "--method", "ties", "--max-shard-size", "1K") == 130
    err = capsys.readouterr().err.strip()
    assert err.startswith("nbmerge: interrupted") and "Traceback" not in err
    assert nothing_in(files["out_dir"])


def test_bmm_search_out_an_existing_folder_is_refused_before_searching(micro_cache, tmp_path, capsys):
    """`bmm-search --out <existing folder>` used to search, then end in a traceback when writing."""
    folder = tmp_path / "folder"
    folder.mkdir()
    assert main(["bmm-search", "--suite", "micro", "--anchor", "task_arithmetic", "--budget", "1", "--quiet",
                 "--gram", "task_vector", "--out", str(folder), "--cache", str(micro_cache)]) == 2
    one_line_error(capsys, "is a folder")
    assert nothing_in(folder)


def test_bmm_search_log_a_folder_is_refused_before_searching(micro_cache, tmp_path, capsys, monkeypatch):
    """`bmm-search --log <a folder>` used to end in an IsADirectoryError after loading the zoo."""
    import nbmerge.pools.zoo as zoo

    folder = tmp_path / "logs"
    folder.mkdir()
    monkeypatch.setattr(zoo, "load_zoo", lambda *a, **k: pytest.fail("the zoo was loaded before --log was checked"))
    assert main(["bmm-search", "--suite", "micro", "--anchor", "task_arithmetic", "--budget", "1", "--quiet",
                 "--gram", "task_vector", "--log", str(folder), "--cache", str(micro_cache)]) == 2
    one_line_error(capsys, "is a folder", "search.jsonl")
    assert nothing_in(folder)


# -- the zoo store -----------------------------------------------------------------------------------------------

@pytest.fixture
def cache(micro_cache, tmp_path):
    """A private copy of the built `micro` cache (the session's own is shared with other tests)."""
    copy = tmp_path / "cache"
    shutil.copytree(micro_cache, copy)
    return copy


@pytest.fixture
def no_training(monkeypatch):
    """Fail if a build retrains anything: healing must reuse every artifact that verifies."""
    def refuse(*args, **kwargs):
        raise AssertionError("a verified artifact was retrained")

    for name in ("pretrain", "finetune", "fit_head", "zero_shot_head"):
        monkeypatch.setattr(build, name, refuse)


def _store(cache):
    return next((cache / "zoo").glob("store-*"))


def test_corrupt_manifest_is_a_one_line_error_and_zoo_build_rewrites_it(cache, capsys, no_training):
    """A truncated or garbage manifest.json gives `zoo info`, `eval` and `load_zoo` a one-line CacheError
    naming the file and `nbmerge zoo build micro` (no JSONDecodeError traceback); `zoo build` rewrites it from the
    checksummed artifacts without retraining anything."""
    manifest_path = suite_dir("micro", cache) / "manifest.json"
    original = json.loads(manifest_path.read_text())
    base = str(suite_dir("micro", cache) / "base.safetensors")
    for damage in (manifest_path.read_bytes()[:200], b"\x00\xffgarbage", b'["a list"]', b'{"tasks": 3}'):
        manifest_path.write_bytes(damage)
        with pytest.raises(CacheError, match="nbmerge zoo build micro") as caught:
            load_zoo("micro", cache)
        assert str(manifest_path) in str(caught.value) and "corrupt" in str(caught.value)
        assert main(["zoo", "info", "micro", "--cache", str(cache)]) == 2
        one_line_error(capsys, str(manifest_path), "nbmerge zoo build micro")
        assert main(["eval", "--suite", "micro", "--model", base, "--cache", str(cache)]) == 2
        one_line_error(capsys, str(manifest_path), "nbmerge zoo build micro")

    assert main(["zoo", "build", "micro", "--quiet", "--cache", str(cache)]) == 0
    healed = load_zoo("micro", cache).manifest
    assert healed["checksums"] == original["checksums"]
    assert healed["expert_accuracy"] == original["expert_accuracy"]
    assert main(["zoo", "info", "micro", "--cache", str(cache)]) == 0


def test_corrupt_journal_is_named_and_healed_from_the_artifacts_that_verify(cache, capsys, no_training):
    """A corrupt build journal is a CacheError naming journal.json (not a misleading "data/... is missing");
    `zoo build` discards it, keeps the base, heads and experts whose sha256 the suite manifest vouches for, rebuilds
    the rest (the data) and succeeds."""
    journal = _store(cache) / "journal.json"
    vouched = load_zoo("micro", cache).manifest["checksums"]
    journal.write_text(journal.read_text()[:40])
    with pytest.raises(CacheError, match="journal") as caught:
        load_zoo("micro", cache)
    message = str(caught.value)
    assert str(journal) in message and "corrupt" in message and "is missing" not in message
    assert main(["zoo", "info", "micro", "--cache", str(cache)]) == 2
    one_line_error(capsys, str(journal), "nbmerge zoo build micro")

    messages = []
    build_zoo("micro", cache=cache, quiet=True, log=messages.append)
    assert any(str(journal) in m and "discarding" in m for m in messages)
    healed = json.loads(journal.read_text())
    assert all(healed[rel] == digest for rel, digest in vouched.items())  # kept, not retrained
    assert {f"data/{task}.npz" for task in ("digits", "hebrew", "devanagari")} <= set(healed)  # rebuilt
    assert load_zoo("micro", cache).tasks == ["digits", "hebrew", "devanagari"]


def test_two_builds_of_one_suite_take_turns(tmp_path):
    """Two `zoo build`s of one suite at once used to both train every expert and lose a session-log row: the
    second now waits for the first (and then finds the zoo built)."""
    import threading

    order, said = [], []
    lock = tmp_path / ".micro.lock"
    first_in = threading.Event()
    release = threading.Event()

    def first():
        with build._build_lock(lock, "micro", said.append):
            order.append("first in")
            first_in.set()
            release.wait(10)
            order.append("first out")

    def second():
        first_in.wait(10)
        with build._build_lock(lock, "micro", said.append):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    first_in.wait(10)
    time.sleep(0.3)
    release.set()
    for thread in threads:
        thread.join(10)
    assert order == ["first in", "first out", "second in"]
    assert said == ["another build of micro is running on this cache; waiting for it to finish"]


def test_two_zoo_build_commands_at_once_train_each_expert_once(tmp_path):
    """The probe's case end to end: two `nbmerge zoo build micro` processes on one fresh cache. Each expert is
    fine-tuned once (by whichever process got the lock), both exit 0, and the session log has one completed row."""
    cache = tmp_path / "cache"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "nbmerge", "zoo", "build", "micro", "--quiet", "--cache", str(cache)]
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    second = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    outputs = [p.communicate(timeout=600)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    both = "".join(outputs)
    assert both.count("fine-tuning expert 1/3") == 1 and both.count("fine-tuning expert 3/3") == 1, outputs
    sessions = json.loads((suite_dir("micro", cache) / build.SESSIONS_FILE).read_text())
    rows = sessions["sessions"] if isinstance(sessions, dict) else sessions
    assert [row["outcome"] for row in rows] == ["completed"], rows
    load_zoo("micro", cache)


def test_link_and_builds_leave_no_temporaries(cache, tmp_path, monkeypatch):
    """Relinking a suite file that already is the store's file (every rebuild) left `.X.link.tmp` behind;
    now no temporary survives `_link`, a successful build, or a failed one (and stale ones are removed)."""
    source, target = tmp_path / "source.bin", tmp_path / "suite" / "x.safetensors"
    source.write_bytes(b"weights")
    link_file(source, target)
    link_file(source, target)  # the same file already: rename() of one link onto another is a no-op
    assert os.path.samefile(source, target) and sorted(os.listdir(target.parent)) == ["x.safetensors"]

    root = suite_dir("micro", cache)
    store = _store(cache)
    zoo = load_zoo("micro", cache)
    for rel in zoo.manifest["checksums"]:
        link_file(store / rel, root / rel)  # the suite folder as a build leaves it: hard links into the store
    (root / "experts" / ".digits.safetensors.link.tmp").write_bytes(b"left by an older version")
    (root / "manifest.json").unlink()
    build_zoo("micro", cache=cache, quiet=True, log=lambda *_: None)
    assert not list(cache.rglob("*.tmp"))

    def broken(*args, **kwargs):
        raise RuntimeError("evaluation failed")

    (root / "manifest.json").unlink()
    monkeypatch.setattr(build, "measure_zoo", broken)
    with pytest.raises(RuntimeError):
        build_zoo("micro", cache=cache, quiet=True, log=lambda *_: None)
    assert not list(cache.rglob("*.tmp"))


def test_moved_cache_works_and_the_old_path_is_not_recreated(cache, tmp_path, monkeypatch):
    """The manifest records its store relative to the suite folder, so a cache moved to another folder
    (NBMERGE_CACHE pointing at the new place) opens and is reused without a rebuild; a manifest of an older build
    with an absolute store path opens too, and the old path is not created again."""
    manifest = json.loads((suite_dir("micro", cache) / "manifest.json").read_text())
    assert not os.path.isabs(manifest["store"])
    moved = tmp_path / "moved"
    os.rename(cache, moved)
    monkeypatch.setenv("NBMERGE_CACHE", str(moved))
    zoo = load_zoo("micro")
    assert zoo.store_root == _store(moved) and zoo.root == suite_dir("micro", moved)
    messages = []
    assert build_zoo("micro", quiet=True, log=messages.append) == suite_dir("micro", moved) and not messages
    assert info("micro")["suite"] == "micro"

    manifest_path = suite_dir("micro", moved) / "manifest.json"
    legacy = {**json.loads(manifest_path.read_text()), "store": str(cache / "zoo" / _store(moved).name)}
    manifest_path.write_text(json.dumps(legacy))
    assert load_zoo("micro").store_root == _store(moved)
    assert not cache.exists()


def test_timings_accumulate_over_resumed_sessions(cache, monkeypatch):
    """A build interrupted after retraining an expert and then resumed records both sessions; the
    manifest's per-stage timings are their sums and list each session (what it built and how it ended)."""
    store, root = _store(cache), suite_dir("micro", cache)
    sessions_path = root / build.SESSIONS_FILE
    before = json.loads(sessions_path.read_text()) if sessions_path.exists() else []
    (store / "experts" / "hebrew.safetensors").unlink()
    (root / "manifest.json").unlink()
    real_measure = build.measure_zoo

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "measure_zoo", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_zoo("micro", cache=cache, quiet=True, log=lambda *_: None)
    first = json.loads(sessions_path.read_text())[-1]
    assert first["outcome"] == "interrupted (KeyboardInterrupt)"
    assert first["built"] == ["experts/hebrew.safetensors"] and first["experts_s"] > 0

    monkeypatch.setattr(build, "measure_zoo", real_measure)
    build_zoo("micro", cache=cache, quiet=True, log=lambda *_: None)
    timings = load_zoo("micro", cache).manifest["timings"]
    sessions = timings["sessions"]
    assert len(sessions) == len(before) + 2
    assert sessions[-2] == first
    assert sessions[-1]["outcome"] == "completed" and sessions[-1]["built"] == []
    for stage in build.STAGES:
        assert timings[stage] == pytest.approx(sum(s[stage] for s in sessions))
    assert timings["experts_s"] >= first["experts_s"] and timings["evaluation_s"] >= sessions[-1]["evaluation_s"] > 0


# -- the report runner -----------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


def write_notebook(path: Path, parameters: str, *code: str) -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell] + [nbformat.v4.new_code_cell(source) for source in code]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def _one_error_line(capsys) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_parameter_values_are_checked_before_any_notebook_runs(tmp_path, monkeypatch, capsys):
    """An unknown suite, method, anchor or strategy, or a count out of range, is refused before any
    notebook (or zoo build) starts, in one line naming the parameter, the notebook and the allowed values; a CLIP
    pool imported into the notebook's cache is a valid suite."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("NBMERGE_CACHE", str(tmp_path / "default-cache"))

    def must_not_run(*_args, **_kwargs):
        raise AssertionError("a notebook or a zoo build started although a parameter is invalid")

    monkeypatch.setattr(pipeline, "run_one", must_not_run)
    monkeypatch.setattr(pipeline, "build_suites", must_not_run)
    book = tmp_path / "notebooks"
    write_notebook(book / "study.ipynb",
                   'suite = "text8"\nsuites = ["text8"]\nmethods = ["task_arithmetic", "ties"]\n'
                   'anchor = "task_arithmetic"\nstrategy = "bayes"\nbudget = 3\nn_initial = 2\nval_examples = 0\n'
                   'device = "cpu"\nseed = 0\ncache = ""\ncheckpoints = ""\ndata_root = ""\nworkers = 1\n'
                   'ray_address = ""\nsmoke = False',
                   "raise SystemExit('never executed')")
    out = tmp_path / "reports"

    def refused(*pairs: str) -> str:
        args = ["report", "--notebooks", str(book), "--out", str(out)]
        for key, value in zip(pairs[::2], pairs[1::2]):
            args += ["-p", key, value]
        assert main(args) == 2
        line = _one_error_line(capsys)
        assert line.startswith("nbmerge: error: ") and "study" in line, line
        return line

    line = refused("suite", "nosuch")
    assert "'suite'" in line and "'nosuch'" in line and "text8" in line and "micro" in line and "set by -p" in line
    line = refused("methods", "[ties, nosuch]")
    assert "'methods'" in line and "unknown method 'nosuch'" in line and "task_arithmetic" in line
    line = refused("anchor", "nosuch")
    assert "'anchor'" in line and "tsv" in line
    line = refused("strategy", "sgd")
    assert "'strategy'" in line and "bayes" in line and "random" in line
    line = refused("budget", "-1")
    assert "'budget'" in line and ">= 1" in line and "-1" in line
    line = refused("n_initial", "5")  # more space-filling trials than the budget
    assert "'n_initial'" in line and "budget (3)" in line
    line = refused("val_examples", "-5")
    assert "'val_examples'" in line and ">= 0" in line
    # the validation gaps a probe found: workers 0 or negative, an address that cannot be reached, a cache folder
    # that cannot be written, a switch given null
    for value in ("0", "-4"):
        assert "'workers'" in refused("workers", value)
    assert "does not resolve" in refused("ray_address", "nowhere.invalid:1")
    assert "not HOST:PORT" in refused("ray_address", "nowhere")
    assert "cannot be created or written" in refused("cache", "/proc/1/nope")
    assert "'smoke'" in refused("smoke", "null")
    assert not (out / "runs").exists()  # no run folder either

    # a clip-... pool: refused until it is imported into the notebook's cache, then valid
    cache = tmp_path / "cache"
    line = refused("suite", "clip-vit-b32-8", "cache", str(cache))
    assert "not imported" in line and "no pool is imported there" in line
    manifest = cache / "pools" / "clip-vit-b32-8" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"suite": "clip-vit-b32-8", "tasks": ["MNIST", "SVHN"]}))
    notebooks = pipeline.discover(book)
    resolved = pipeline.resolve_parameters(notebooks, book / "parameters", False,
                                           {"suite": "clip-vit-b32-8", "suites": ["clip-vit-b32-8"],
                                            "cache": str(cache)})
    assert resolved["study"]["suite"] == "clip-vit-b32-8"
    with pytest.raises(ParameterError, match="imported pool: clip-vit-b32-8"):
        pipeline.resolve_parameters(notebooks, book / "parameters", False, {"suite": "clip-nosuch",
                                                                             "cache": str(cache)})
    # the project's own layers are all valid
    real = pipeline.discover(REPO / "notebooks")
    for smoke, profile in ((False, "default"), (True, "default"), (False, "paper")):
        pipeline.resolve_parameters(real, REPO / "notebooks" / "parameters", smoke, {}, profile)


def test_a_killed_runs_leftovers_are_cleaned_by_the_next_run(tmp_path, monkeypatch):
    """After `kill -9` of a report, its kernelspec and socket folders stayed in TMPDIR and its run stayed
    "running" forever: the next run removes the folders and marks the run interrupted."""
    import socket

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name in (f"nbmerge-kernel-{dead.pid}-abc", f"nbmerge-ipc-{dead.pid}-def", f"nbmerge-ipc-{os.getpid()}-live"):
        (tmp_path / "tmp" / name).mkdir()
    runs = tmp_path / "runs"
    (runs / "old").mkdir(parents=True)
    (runs / "old" / "run.json").write_text(json.dumps({"id": "old", "status": "running", "pid": dead.pid,
                                                       "host": socket.gethostname(), "reports": []}))
    said = []
    pipeline._close_orphaned_runs(runs, said.append)
    pipeline._sweep_temporaries(said.append)
    assert json.loads((runs / "old" / "run.json").read_text())["status"] == "interrupted"
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == [f"nbmerge-ipc-{os.getpid()}-live"]
    assert len(said) == 3


# ------------------------------------------------------------------------------------------ stopped by a signal

SLEEPY = ("import os, pathlib, time\n"
          "pathlib.Path(marker).write_text(str(os.getpid()))  # the kernel's pid: it is running\n"
          "time.sleep(600)")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return state not in ("Z", "X")


def _stop_a_running_report(tmp_path: Path, signum: int) -> dict:
    """Start `nbmerge report` in a subprocess on a notebook that sleeps, send ``signum`` once its kernel runs, and
    return what is left: exit code, stderr, run.json, the kernel's pid, the temporary folder."""
    book = tmp_path / "notebooks"
    write_notebook(book / "a_sleepy.ipynb", 'marker = ""', SLEEPY)
    write_notebook(book / "b_after.ipynb", 'after = ""', "import pathlib\npathlib.Path(after).write_text('ran')")
    marker, after = tmp_path / "kernel.pid", tmp_path / "after.txt"
    tmp, runtime = tmp_path / "tmp", tmp_path / "runtime"
    tmp.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TMPDIR": str(tmp),
           "JUPYTER_RUNTIME_DIR": str(runtime), "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    out = tmp_path / "reports"
    process = subprocess.Popen([sys.executable, "-m", "nbmerge", "report", "--notebooks", str(book), "--out",
                                str(out), "-p", "marker", str(marker), "-p", "after", str(after)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 240
        while not (marker.exists() and marker.read_text()):
            if process.poll() is not None or time.monotonic() > deadline:
                stdout, stderr = process.communicate(timeout=60) if process.poll() is not None else ("", "")
                pytest.fail(f"the sleeping notebook never started (exit {process.poll()}): {stdout}\n{stderr}")
            time.sleep(0.2)
        kernel = int(marker.read_text())
        assert any((tmp).glob("nbmerge-kernel-*")), "the run's temporary kernelspec folder should exist while it runs"
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    deadline = time.monotonic() + 20
    while _alive(kernel) and time.monotonic() < deadline:
        time.sleep(0.2)
    runs = list((out / "runs").glob("*/run.json"))
    assert len(runs) == 1, (stdout, stderr)
    return {"code": process.returncode, "stderr": stderr, "stdout": stdout, "run": json.loads(runs[0].read_text()),
            "kernel": kernel, "tmp": tmp, "runtime": runtime, "after": after, "out": out}


def _check_stopped(left: dict, name: str) -> None:
    assert left["code"] not in (0, None) and left["code"] > 0, left
    # one line from nbmerge (the kernel may print its own start-up warnings), no traceback, no log of the kill
    lines = [line for line in left["stderr"].splitlines() if line.startswith("nbmerge")]
    assert len(lines) == 1 and lines[0].startswith("nbmerge: error: ") and f"interrupted by {name}" in lines[0], \
        left["stderr"]
    assert "Traceback" not in left["stderr"] and "Kernel died" not in left["stderr"], left["stderr"]
    run = left["run"]
    assert run["status"] == "interrupted" and run["interrupted"]["signal"] == name, run
    assert [(r["name"], r["status"]) for r in run["reports"]] == [("a_sleepy", "interrupted")]
    assert not left["after"].exists()  # the run stopped: the next notebook never started
    assert not _alive(left["kernel"]), "the notebook's kernel outlived the run"
    assert not list(left["tmp"].glob("nbmerge-kernel-*")), "the temporary kernelspec folder was left behind"
    assert not list(left["runtime"].glob("kernel-*.json")), "the kernel's connection file was left behind"
    assert not (left["out"] / "index.html").exists()  # an interrupted run never writes the index


def test_sigint_marks_the_run_interrupted_and_exits_non_zero(tmp_path):
    """Ctrl-C (SIGINT) during a notebook stops the whole run: run.json says `interrupted` (not `running`
    forever), the kernel is gone, the next notebook does not start, and the process exits non-zero with a one-line
    message."""
    _check_stopped(_stop_a_running_report(tmp_path, signal.SIGINT), "SIGINT")


def test_sigterm_removes_the_temporary_kernel_folder_and_marks_the_run_interrupted(tmp_path):
    """SIGTERM during a notebook removes the `nbmerge-kernel-*` temporary folder and the kernel, and records
    the run as `interrupted`, exiting non-zero with a one-line message."""
    _check_stopped(_stop_a_running_report(tmp_path, signal.SIGTERM), "SIGTERM")
