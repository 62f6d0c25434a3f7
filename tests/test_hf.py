"""Hugging Face folders out: `--out DIR/` writes what from_pretrained loads, atomically; progress on stderr."""

import json
import os

import pytest
import torch

import nbmerge
from nbmerge.engine import hf
from nbmerge.cli import _size, main
from nbmerge.errors import CheckpointError, NbmergeWarning
from nbmerge.engine.io import ShardedWriter, load_state_dict
from nbmerge.lm_testing import LLAMA_TARGETS, lm_experts, tiny_lm, write_lora


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """A tiny Llama folder with tokenizer and generation config, two dense experts and one adapter."""
    root = tmp_path_factory.mktemp("lm")
    base = tiny_lm(root / "base", "llama")
    experts = lm_experts(base, root, 2)
    adapter, _ = write_lora(root / "adapter", load_state_dict(base), LLAMA_TARGETS)
    return {"base": base, "experts": [*experts, adapter]}


def merge_cli(lm, out, *extra, method="ties"):
    return main(["merge", "--method", method, "--base", str(lm["base"]), "--experts", *map(str, lm["experts"]),
                 "--out", str(out), "--device", "cpu", *extra])


def same(a, b):
    assert set(a) == set(b)
    for key in a:
        torch.testing.assert_close(a[key], b[key], atol=0, rtol=0, msg=key)


def test_folder_output_loads_with_from_pretrained(lm, tmp_path, capsys):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "merged"
    assert merge_cli(lm, f"{out}/") == 0
    assert f"-> {out}" in capsys.readouterr().out
    assert sorted(os.listdir(out)) == ["README.md", "config.json", "generation_config.json", "model.safetensors",
                                       "tokenizer.json", "tokenizer_config.json"]
    expected = nbmerge.merge("ties", lm["base"], lm["experts"])
    same(load_state_dict(out), expected)
    model = AutoModelForCausalLM.from_pretrained(out)
    same({k: v for k, v in model.state_dict().items()}, expected)
    assert AutoTokenizer.from_pretrained(out)("w1 w2")["input_ids"] == [4, 5]
    assert model.generation_config.max_new_tokens == 4
    for name in ("config.json", "tokenizer.json"):
        assert (out / name).read_bytes() == (lm["base"] / name).read_bytes()
    card = (out / "README.md").read_text()
    assert "method `ties`" in card and "`density`: `0.2`" in card and nbmerge.__version__ in card
    assert all(f"`{e}`" in card for e in lm["experts"]) and "(LoRA adapter)" in card
    assert [p.name for p in tmp_path.iterdir()] == ["merged"]  # no temporary folder left beside it


def test_sharded_folder_output(lm, tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "merged"
    assert merge_cli(lm, f"{out}/", "--max-shard-size", "20KB", method="task_arithmetic") == 0
    shards = sorted(p.name for p in out.glob("model-*.safetensors"))
    assert len(shards) >= 3 and shards[0] == f"model-00001-of-{len(shards):05d}.safetensors"
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"].values()) == set(shards) and not (out / "model.safetensors").exists()
    expected = nbmerge.merge("task_arithmetic", lm["base"], lm["experts"])
    same(dict(AutoModelForCausalLM.from_pretrained(out).state_dict()), expected)


def test_gpt2_folder_with_a_tied_head(tmp_path):
    from transformers import AutoModelForCausalLM

    base = tiny_lm(tmp_path / "base", "gpt2", tokenizer=False)
    experts = lm_experts(base, tmp_path, 2)
    out = nbmerge.merge_to_folder("tsv", base, experts, tmp_path / "out")
    model = AutoModelForCausalLM.from_pretrained(out)
    merged = load_state_dict(out)
    state = model.state_dict()
    same({k: state[k] for k in merged}, merged)
    assert torch.equal(state["lm_head.weight"], merged["transformer.wte.weight"])


def test_recipe_out_with_a_trailing_slash_and_a_dtype(lm, tmp_path):
    from transformers import AutoModelForCausalLM

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(f"method: task_arithmetic\nbase: {lm['base']}\nexperts: [{lm['experts'][0]}, "
                      f"{{path: {lm['experts'][2]}, weight: 0.5}}]\nparams: {{scale: 1.0}}\ndtype: bfloat16\n"
                      "out: merged/\n")
    assert main(["merge", "--config", str(recipe), "--quiet"]) == 0
    out = tmp_path / "merged"
    assert json.loads((out / "config.json").read_text())["dtype"] == "bfloat16"
    card = (out / "README.md").read_text()
    assert "(task vector weight 0.5)" in card and "bfloat16" in card
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.dtype == torch.bfloat16
    same(dict(model.state_dict()), load_state_dict(out))


def test_file_output_is_unchanged(lm, tmp_path):
    assert merge_cli(lm, tmp_path / "m.safetensors") == 0
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors"]
    assert merge_cli(lm, tmp_path / "merged") == 0  # no suffix, no slash: one file, as before
    assert (tmp_path / "merged").is_file()


def test_an_existing_folder_without_a_slash_is_explained(lm, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    assert merge_cli(lm, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "trailing slash" in err and not any((tmp_path / "out").iterdir())


def test_an_earlier_output_is_replaced_a_foreign_folder_refused(lm, tmp_path, capsys):
    out = tmp_path / "merged"
    assert merge_cli(lm, f"{out}/", "--max-shard-size", "20K") == 0
    assert merge_cli(lm, f"{out}/", method="average") == 0  # an earlier nbmerge output: replaced as a whole
    assert not list(out.glob("model-*")) and "method `average`" in (out / "README.md").read_text()
    same(load_state_dict(out), nbmerge.merge("average", lm["base"], lm["experts"]))
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert merge_cli(lm, f"{foreign}/") == 2
    assert "not an earlier nbmerge output" in capsys.readouterr().err
    assert os.listdir(foreign) == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert merge_cli(lm, f"{empty}/") == 0 and (empty / "model.safetensors").exists()


def test_an_input_inside_the_output_folder_is_refused(lm, tmp_path, capsys):
    assert merge_cli(lm, f"{lm['base']}/") == 2
    assert "would replace the input" in capsys.readouterr().err
    assert not (lm["base"] / "README.md").exists()


@pytest.mark.parametrize("where", ["shards", "base files"])
def test_an_interrupted_merge_leaves_no_folder(lm, tmp_path, monkeypatch, capsys, where):
    calls = []

    def fail(*args, **kwargs):
        calls.append(1)
        if where == "base files" or len(calls) == 2:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    if where == "shards":  # the writer's second write: a shard's header or a tensor's bytes
        import nbmerge.engine.io as io

        original = io._write_all
        monkeypatch.setattr(io, "_write_all", fail)
    else:
        original = None
        monkeypatch.setattr(hf, "_copy_base_files", fail)
    assert merge_cli(lm, f"{tmp_path / 'merged'}/", "--max-shard-size", "20K") == 130
    assert calls and os.listdir(tmp_path) == []  # neither the folder nor its temporary sibling


def test_an_interrupted_replacement_keeps_the_earlier_output(lm, tmp_path, monkeypatch):
    out = tmp_path / "merged"
    assert merge_cli(lm, f"{out}/") == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    renames, rename = [], os.rename

    def interrupted(source, target):  # the earlier output is moved aside, then the new one fails to take its place
        renames.append((source, target))
        if len(renames) == 2:
            raise KeyboardInterrupt
        rename(source, target)

    monkeypatch.setattr(hf.os, "rename", interrupted)
    assert merge_cli(lm, f"{out}/", method="average") == 130
    assert len(renames) == 3  # aside, (failed) into place, back
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and os.listdir(tmp_path) == ["merged"]


def test_merge_to_folder_from_memory_warns_that_there_is_no_config(tmp_path):
    base = {"layer.weight": torch.zeros(4, 4)}
    experts = [{"layer.weight": torch.ones(4, 4)}]
    with pytest.warns(NbmergeWarning, match="not a Hugging Face folder"):
        out = nbmerge.merge_to_folder("average", base, experts, tmp_path / "out")
    assert sorted(os.listdir(out)) == ["README.md", "model.safetensors"]
    assert "<state dict>" in (out / "README.md").read_text()


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(CheckpointError, match="is a file"):
        hf.check_output_folder(tmp_path / "out", [])


def test_sizes():
    assert _size("500MB") == 500 * 2**20 and _size("2GiB") == 2 * 2**30 and _size("5G") == 5 * 2**30
    assert _size("8K") == 8192 and _size("1024") == 1024


# -- progress ----------------------------------------------------------------------------------------------------

def test_progress_bar_on_request_and_quiet_otherwise(lm, tmp_path, capsys, monkeypatch):
    import tqdm

    original = tqdm.tqdm.__init__
    monkeypatch.setattr(tqdm.tqdm, "__init__", lambda self, *a, **k: original(self, *a, **{**k, "delay": 0}))
    nbmerge.merge_to_file("ties", lm["base"], lm["experts"], tmp_path / "a.safetensors", progress=True)
    assert "merging (ties)" in capsys.readouterr().err
    nbmerge.merge_to_file("ties", lm["base"], lm["experts"], tmp_path / "b.safetensors")  # stderr is no terminal
    assert merge_cli(lm, tmp_path / "c.safetensors", "--quiet") == 0
    assert "merging" not in capsys.readouterr().err
    assert load_state_dict(tmp_path / "a.safetensors").keys() == load_state_dict(tmp_path / "b.safetensors").keys()
