"""Language-model pools (issue 16, part 3): GLUE sequence classifiers and causal LMs imported into the zoo layout
from tiny random-weight Hugging Face folders and fake GLUE/text files, checked against transformers' own models,
across data layouts and dense/adapter experts, with clear errors for bad input."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from nbmerge.errors import CheckpointError, NbmergeError

transformers = pytest.importorskip("transformers")

from nbmerge.lm_testing import (  # noqa: E402
    write_causal_pool, write_fake_glue, write_fake_texts, write_glue_pool, write_lora, LLAMA_TARGETS,
)
from nbmerge.models.base import features  # noqa: E402
from nbmerge.pools.lm import import_lm_pool, parse_name, suite_tasks  # noqa: E402
from nbmerge.pools.zoo import load_zoo  # noqa: E402
from nbmerge.tasks.glue import glue_splits  # noqa: E402

TASKS = ["cola", "mrpc", "mnli"]  # header-less TSV, pair with its own header, three classes and dev_matched
SMALL = {"eval_examples": 12, "train_examples": 8, "log": lambda *_: None}


def _import(tmp_path, suite, checkpoints, data, **kw):
    return import_lm_pool(suite, checkpoints, data, cache=tmp_path / "cache", **{**SMALL, **kw})


@pytest.mark.parametrize("arch", ["gpt2", "roberta"])
def test_a_glue_pool_gives_the_logits_of_the_hf_classifier(tmp_path, arch):
    data = write_fake_glue(tmp_path / "data", TASKS)
    checkpoints = write_glue_pool(tmp_path / "ck", TASKS, arch)
    _import(tmp_path, f"glue-{arch}-3", checkpoints, data, tasks=TASKS)
    zoo = load_zoo(f"glue-{arch}-3", tmp_path / "cache")
    evaluator = zoo.evaluator()
    for task in TASKS:
        evaluator.load({k: v for k, v in __import__("nbmerge").load_state_dict(zoo.expert_path(task)).items()})
        x = torch.from_numpy(zoo.arrays[task]["test_x"]).long()
        ours = zoo.heads()[task].logits(features(evaluator.encoder, x))
        model = transformers.AutoModelForSequenceClassification.from_pretrained(checkpoints / f"{arch}_{task}").eval()
        with torch.no_grad():
            theirs = torch.cat([model(input_ids=row[0:1, :int(row[1].sum())],
                                      attention_mask=row[1:2, :int(row[1].sum())]).logits for row in x])
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)


def test_a_causal_pool_predicts_the_next_token_as_the_hf_lm_does(tmp_path):
    data = write_fake_texts(tmp_path / "texts", ["a", "b"], words=400)
    checkpoints = write_causal_pool(tmp_path / "ck", ["a", "b"])
    _import(tmp_path, "lm-llama-2", checkpoints, data, max_length=8)
    zoo = load_zoo("lm-llama-2", tmp_path / "cache")
    assert zoo.tasks == ["a", "b"]
    evaluator = zoo.evaluator()
    evaluator.load(__import__("nbmerge").load_state_dict(zoo.expert_path("b")))
    x = torch.from_numpy(zoo.arrays["b"]["test_x"]).long()
    model = transformers.AutoModelForCausalLM.from_pretrained(checkpoints / "b").eval()
    with torch.no_grad():
        theirs = model(input_ids=x[:, 0]).logits[:, -1]
    torch.testing.assert_close(features(evaluator.encoder, x), theirs, rtol=1e-4, atol=1e-5)
    # the label is the token after the window, in the text's own order
    words = (data / "b.txt").read_text().split()
    first = [int(w[1:]) + 3 for w in words]  # tiny_tokenizer: w<i> has id i + 3
    window = zoo.arrays["b"]["test_x"][0, 0].tolist()
    start = next(i for i in range(len(first)) if first[i:i + 8] == window)
    assert zoo.arrays["b"]["test_y"][0] == first[start + 8]


def test_lora_experts_give_the_pool_their_dense_experts_give(tmp_path):
    data = write_fake_texts(tmp_path / "texts", ["a", "b"], words=300)
    dense_dir, lora_dir = tmp_path / "dense", tmp_path / "lora"
    write_causal_pool(lora_dir, ["a", "b"], adapters=True)
    base = __import__("nbmerge").load_state_dict(lora_dir / "base")
    dense_dir.mkdir()
    (dense_dir / "base").symlink_to(lora_dir / "base")
    for t, task in enumerate(["a", "b"]):
        _, dense = write_lora(tmp_path / "scratch" / task, base, LLAMA_TARGETS, seed=t + 1, scale=0.05)
        __import__("nbmerge").save_state_dict(dense, dense_dir / task / "model.safetensors")
    (tmp_path / "c1").mkdir()
    _import(tmp_path / "c1", "lm-llama-2", lora_dir, data, max_length=8)
    _import(tmp_path / "c2", "lm-llama-2", dense_dir, data, max_length=8)
    one, two = load_zoo("lm-llama-2", tmp_path / "c1" / "cache"), load_zoo("lm-llama-2", tmp_path / "c2" / "cache")
    for task in ["a", "b"]:
        a = __import__("nbmerge").load_state_dict(one.expert_path(task))
        b = __import__("nbmerge").load_state_dict(two.expert_path(task))
        assert a.keys() == b.keys()
        for key in a:
            torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6)


def test_glue_layouts_read_the_same_examples(tmp_path):
    pytest.importorskip("pyarrow")
    tsv = write_fake_glue(tmp_path / "tsv", TASKS, fmt="tsv")
    parquet = write_fake_glue(tmp_path / "parquet", TASKS, fmt="parquet")
    for task in TASKS:
        a, b = glue_splits(task, tsv), glue_splits(task, parquet)
        for split in ("train", "validation"):
            assert a[split].texts == b[split].texts
            np.testing.assert_array_equal(a[split].labels, b[split].labels)


def test_a_missing_or_malformed_glue_file_is_named(tmp_path):
    data = write_fake_glue(tmp_path / "data", ["mrpc"])
    with pytest.raises(NbmergeError, match=r"GLUE task 'rte': no data under .*RTE/train.tsv"):
        glue_splits("rte", data)
    dev = data / "MRPC" / "dev.tsv"
    lines = dev.read_text().splitlines()
    dev.write_text("\n".join(lines[:3] + ["only-one-column"]) + "\n")
    with pytest.raises(NbmergeError, match=r"dev.tsv, line 4: 1 columns"):
        glue_splits("mrpc", data)
    dev.write_text("\n".join(lines[:2] + [lines[2].rsplit("\t", 1)[0] + "\tmaybe"]) + "\n")
    with pytest.raises(NbmergeError, match=r"label 'maybe' is not one of"):
        glue_splits("mrpc", data)


def test_pool_names_tasks_and_checkpoints_are_checked(tmp_path):
    assert parse_name("glue-gpt2-7") == ("glue", "gpt2", "7")
    assert suite_tasks("glue-gpt2-7")[:2] == ["cola", "mnli"]
    with pytest.raises(NbmergeError, match="not glue-<model>-<n> or lm-<model>-<n>"):
        parse_name("glue-gpt2")
    with pytest.raises(NbmergeError, match="names 2 tasks; got 3"):
        suite_tasks("glue-gpt2-2", TASKS)
    with pytest.raises(NbmergeError, match="unknown GLUE task 'stsb'"):
        suite_tasks("glue-gpt2-1", ["stsb"])
    checkpoints = write_glue_pool(tmp_path / "ck", ["cola"], "gpt2")
    data = write_fake_glue(tmp_path / "data", ["cola", "sst2"])
    with pytest.raises(CheckpointError, match=r"task 'sst2': no expert folder .* named sst2, \*_sst2 or \*-sst2"):
        _import(tmp_path, "glue-gpt2-2", checkpoints, data, tasks=["cola", "sst2"])
    # an expert of another width: the key and both shapes are named
    other = write_glue_pool(tmp_path / "other", ["sst2"], "gpt2")
    (checkpoints / "gpt2_sst2").symlink_to(other / "gpt2_sst2")
    config = json.loads((other / "base" / "config.json").read_text())
    assert config["n_embd"] == 32
    from safetensors.torch import load_file, save_file

    weights = checkpoints / "gpt2_sst2" / "model.safetensors"
    state = load_file(weights)
    state["transformer.wpe.weight"] = torch.zeros(3, 32)
    save_file(state, weights)
    with pytest.raises(CheckpointError, match=r"transformer.wpe.weight has shape \[3, 32\], the base's config gives"):
        _import(tmp_path, "glue-gpt2-2", checkpoints, data, tasks=["cola", "sst2"])


def test_a_pool_is_imported_once_and_the_cli_imports_it(tmp_path, capsys):
    from nbmerge.cli import main

    data = write_fake_texts(tmp_path / "texts", ["a", "b"], words=300)
    checkpoints = write_causal_pool(tmp_path / "ck", ["a", "b"])
    args = ["pool", "import", "lm-llama-2", "--checkpoints", str(checkpoints), "--data-root", str(data),
            "--eval-examples", "8", "--max-length", "8", "--device", "cpu", "--cache", str(tmp_path / "cache")]
    assert main(args) == 0
    manifest = tmp_path / "cache" / "pools" / "lm-llama-2" / "manifest.json"
    stamp = manifest.stat().st_mtime_ns
    assert main(args) == 0 and manifest.stat().st_mtime_ns == stamp  # same sources and settings: reused
    assert main(args[:-2] + ["--text-model", "x", "--cache", str(tmp_path / "cache")]) == 2
    assert "--text-model is for clip- pools, not lm- pools" in capsys.readouterr().err
    assert main(["pool", "import", "resnet-3", "--checkpoints", str(checkpoints), "--data-root", str(data)]) == 2
    assert "'resnet-3' is not a pool name: pools are named clip-<model>-<n>" in capsys.readouterr().err
    assert Path(json.loads(manifest.read_text())["source"]["base"]) == checkpoints / "base"


def test_perplexity_scores_every_token_once_with_a_window_of_context(tmp_path):
    from nbmerge.evaluate.lm_evaluation import perplexity
    from nbmerge.lm_testing import tiny_lm, tiny_tokenizer

    folder = tiny_lm(tmp_path / "lm")
    text = write_fake_texts(tmp_path / "texts", ["a"], words=40) / "a.txt"
    ids = torch.tensor(tiny_tokenizer()(text.read_text())["input_ids"])[None]
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    with torch.no_grad():
        nll = torch.nn.functional.cross_entropy(model(input_ids=ids).logits[0, :-1], ids[0, 1:]).item()
    whole = perplexity(folder, text, max_length=64, stride=64)
    assert whole["tokens"] == 39 and whole["windows"] == 1
    assert whole["nll"] == pytest.approx(nll, rel=1e-5)
    strided = perplexity(folder, text, max_length=16, stride=8)
    assert strided["tokens"] == 39 and strided["windows"] > 1 and strided["nll"] != pytest.approx(nll, rel=1e-6)
    with pytest.raises(NbmergeError, match="stride must be in 1..max_length"):
        perplexity(folder, text, max_length=8, stride=9)
    bad_text = tmp_path / "latin1.txt"
    bad_text.write_bytes("caf\xe9 au lait".encode("latin-1"))
    with pytest.raises(NbmergeError, match="not UTF-8"):
        perplexity(folder, bad_text)
    with pytest.raises(NbmergeError, match="above the model's"):
        perplexity(folder, text, max_length=10**6, stride=8)
    pickled = tmp_path / "bin_only"
    pickled.mkdir()
    for item in folder.iterdir():
        if item.suffix != ".safetensors":
            (pickled / item.name).write_bytes(item.read_bytes())
    (pickled / "pytorch_model.bin").write_bytes(b"not read")
    with pytest.raises(NbmergeError, match="only pytorch_model.bin"):
        perplexity(pickled, text)
    # a model with a NaN weight: refused, naming it (it used to print a perplexity of nan and exit 0)
    from nbmerge.engine.io import load_state_dict, save_state_dict

    weights = next(folder.glob("*.safetensors"))
    state = load_state_dict(weights)
    first = sorted(k for k, v in state.items() if v.is_floating_point())[0]
    state[first].view(-1)[0] = float("nan")
    save_state_dict(state, weights)
    with pytest.raises(NbmergeError, match="hold NaN or Inf"):
        perplexity(folder, text, max_length=64, stride=64)


def test_lm_eval_without_the_harness_says_what_to_install(tmp_path, monkeypatch, capsys):
    import sys

    from nbmerge.cli import main

    monkeypatch.setitem(sys.modules, "lm_eval", None)
    assert main(["lm-eval", "--model", str(tmp_path), "--tasks", "hellaswag", "--device", "cpu"]) == 2
    assert "pip install 'nbmerge[lm-eval]'" in capsys.readouterr().err


def test_the_glue_manifests_say_what_the_readers_read():
    from nbmerge.tasks.glue import GLUE, GLUE7, GLUE8

    root = Path(__file__).resolve().parents[1] / "data_manifests" / "glue"
    assert json.loads((root / "suites.json").read_text())["glue-<model>-7"] == list(GLUE7)
    assert json.loads((root / "suites.json").read_text())["glue-<model>-8"] == list(GLUE8)
    for name, task in GLUE.items():
        manifest = json.loads((root / f"{name}.json").read_text())
        assert manifest["labels"] == list(task.labels)
        tsv, parquet = manifest["layouts"]["tsv"], manifest["layouts"]["parquet"]
        assert (tsv["folder"], tsv["validation"], tsv["text_columns"], tsv["label_column"]) == \
            (task.folder, task.dev, list(task.tsv_text), task.tsv_label)
        assert parquet["text_columns"] == list(task.hub_text)
        assert parquet["validation"] == f"{task.validation}-*.parquet"


@pytest.mark.parametrize("arch", ["gpt2", "roberta"])
def test_trained_glue_experts_as_adapters_beat_the_base(tmp_path, arch):
    data = write_fake_glue(tmp_path / "data", ["sst2", "rte"])
    checkpoints = write_glue_pool(tmp_path / "ck", ["sst2", "rte"], arch, adapters=True, data_root=data)
    assert (checkpoints / f"{arch}_sst2" / "adapter_config.json").is_file()
    _import(tmp_path, f"glue-{arch}-2", checkpoints, data)
    manifest = load_zoo(f"glue-{arch}-2", tmp_path / "cache").manifest
    assert manifest["tasks"] == ["rte", "sst2"]
    expert, base = manifest["expert_accuracy"]["test"], manifest["base_accuracy"]["test"]
    assert all(expert[t] >= base[t] for t in expert) and sum(expert.values()) > sum(base.values())


@pytest.mark.parametrize("arch", ["gpt2", "roberta"])
def test_merging_glue_experts_writes_a_classifier_per_task_that_matches_the_pool(tmp_path, arch):
    import nbmerge
    from nbmerge.cli import main

    tasks = ["cola", "mnli"]  # 2 and 3 classes: heads of different shapes, never averaged
    data = write_fake_glue(tmp_path / "data", tasks)
    checkpoints = write_glue_pool(tmp_path / "ck", tasks, arch)
    experts = [str(checkpoints / f"{arch}_{t}") for t in tasks]
    assert main(["merge", "--method", "task_arithmetic", "--base", str(checkpoints / "base"), "--experts", *experts,
                 "--param", "scale=0.4", "--out", str(tmp_path / "merged") + "/", "--quiet"]) == 0
    assert sorted(p.name for p in (tmp_path / "merged").iterdir()) == ["README.md", f"{arch}_cola", f"{arch}_mnli"]
    _import(tmp_path, f"glue-{arch}-2", checkpoints, data, tasks=tasks)
    zoo = load_zoo(f"glue-{arch}-2", tmp_path / "cache")
    pooled = nbmerge.merge("task_arithmetic", str(zoo.base_path), [str(p) for p in zoo.expert_paths], {"scale": 0.4})
    evaluator = zoo.evaluator()
    evaluator.load(pooled)
    for task in tasks:
        model = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path / "merged" / f"{arch}_{task}")
        assert model.config.num_labels == len(zoo.manifest["classes"][task])
        x = torch.from_numpy(zoo.arrays[task]["test_x"]).long()
        with torch.no_grad():
            theirs = torch.cat([model.eval()(input_ids=row[0:1, :int(row[1].sum())],
                                             attention_mask=row[1:2, :int(row[1].sum())]).logits for row in x])
        torch.testing.assert_close(zoo.heads()[task].logits(features(evaluator.encoder, x)), theirs,
                                   rtol=1e-4, atol=1e-5)


CAUSAL = {"eval_examples": 8, "max_length": 8}


def test_an_interrupted_import_resumes_after_the_last_finished_expert(tmp_path, monkeypatch):
    import nbmerge.pools.lm as lm_pools

    data = write_fake_texts(tmp_path / "texts", ["a", "b", "c"], words=300)
    checkpoints = write_causal_pool(tmp_path / "ck", ["a", "b", "c"])
    real, read = lm_pools._read_model, []

    def interrupted(folder, base_state=None):
        if Path(folder).name.endswith("c"):
            raise KeyboardInterrupt  # the third expert: killed mid-import
        read.append(Path(folder).name)
        return real(folder, base_state)
    monkeypatch.setattr(lm_pools, "_read_model", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _import(tmp_path, "lm-llama-3", checkpoints, data, tasks=["a", "b", "c"], **CAUSAL)
    assert read == ["base", "a", "b"]
    pool = tmp_path / "cache" / "pools" / "lm-llama-3"
    assert not (pool / "manifest.json").exists()

    def counting(folder, base_state=None):
        read.append(Path(folder).name)
        return real(folder, base_state)
    monkeypatch.setattr(lm_pools, "_read_model", counting)
    read.clear()
    _import(tmp_path, "lm-llama-3", checkpoints, data, tasks=["a", "b", "c"], **CAUSAL)
    assert read == ["base", "c"]  # the base is read again to convert c; a and b are reused
    resumed = json.loads((pool / "manifest.json").read_text())

    # a changed expert is converted again, alone; the others and the base are reused
    expert = next(p for p in (checkpoints).iterdir() if p.name.endswith("b")) / "model.safetensors"
    state = __import__("nbmerge").load_state_dict(expert)
    state = {k: v + 0.01 if v.is_floating_point() else v for k, v in state.items()}
    __import__("nbmerge").save_state_dict(state, expert)
    read.clear()
    _import(tmp_path, "lm-llama-3", checkpoints, data, tasks=["a", "b", "c"], **CAUSAL)
    assert read == ["base", "b"]
    changed = json.loads((pool / "manifest.json").read_text())
    assert changed["checksums"]["experts/b.safetensors"] != resumed["checksums"]["experts/b.safetensors"]
    assert changed["checksums"]["experts/a.safetensors"] == resumed["checksums"]["experts/a.safetensors"]
