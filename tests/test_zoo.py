"""The embedded zoo end to end on the `micro` suite (built once per test session into a temporary cache)."""

import json
import math

import numpy as np
import pytest
import torch

import nbmerge
from nbmerge.cli import main
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.evaluate.metrics import expected_calibration_error
from nbmerge.models.grams import GramRecorder, attention_heads_output
from nbmerge.models.vit import TinyViT
from nbmerge.pools.build import build_zoo
from nbmerge.pools.zoo import info, load_zoo, suite_dir


@pytest.fixture
def cache(micro_cache):
    return micro_cache


def test_micro_zoo_layout_and_info(cache, capsys):
    root = suite_dir("micro", cache)
    assert (root / "base.safetensors").exists() and (root / "manifest.json").exists()
    zoo = load_zoo("micro", cache)
    assert all(p.exists() for p in zoo.expert_paths)
    assert main(["zoo", "path", "micro", "--cache", str(cache)]) == 0
    assert capsys.readouterr().out.strip() == str(root)
    assert main(["zoo", "info", "micro", "--cache", str(cache), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["suite"] == "micro" and len(data["tasks"]) == 3
    for task in data["tasks"]:
        assert 0 <= task["base_accuracy"] <= 1 and 0 <= task["expert_accuracy"] <= 1
        assert task["classes"] >= 2
    # experts are fine-tuned on their own task: on average they beat the frozen-head base
    assert np.mean([t["expert_accuracy"] for t in data["tasks"]]) > np.mean([t["base_accuracy"] for t in data["tasks"]])
    assert 0 < data["simple_average_normalized_accuracy"] <= 1.5
    manifest = json.loads((root / "manifest.json").read_text())
    diag = manifest["diagnostics"]
    assert len(diag["task_vector_cosines"]) == 3 and np.isfinite(diag["interference_ratio"])
    assert manifest["eval_throughput_images_per_s"] > 0


def test_merge_eval_and_stats_on_zoo_checkpoints(cache, tmp_path, capsys):
    zoo = load_zoo("micro", cache)
    merged = tmp_path / "ties.safetensors"
    assert main(["merge", "--method", "ties", "--base", str(zoo.base_path), "--experts",
                 *map(str, zoo.expert_paths), "--out", str(merged)]) == 0
    capsys.readouterr()
    assert main(["eval", "--suite", "micro", "--model", str(merged), "--json", "--cache", str(cache)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["tasks"]) == set(zoo.tasks)
    for row in result["tasks"].values():
        assert {"accuracy", "normalized_accuracy", "nll", "ece"} <= set(row)
    # evaluating an expert reproduces the expert accuracy recorded at build time
    expert_eval = zoo.evaluator().evaluate(load_state_dict(zoo.expert_paths[0]), "test")
    task = zoo.tasks[0]
    assert expert_eval["tasks"][task]["accuracy"] == pytest.approx(zoo.manifest["expert_accuracy"]["test"][task])

    stats_dir = tmp_path / "grams"
    assert main(["stats", "--suite", "micro", "--model", str(zoo.base_path), "--n", "32", "--out", str(stats_dir),
                 "--cache", str(cache)]) == 0
    gram_files = [stats_dir / f"{t}.safetensors" for t in zoo.tasks]
    grams = load_state_dict(gram_files[0])
    base = load_state_dict(zoo.base_path)
    assert len(grams) == 4 * zoo.arch.layers
    for key, gram in grams.items():
        assert gram.shape == (base[key].shape[1],) * 2
        torch.testing.assert_close(gram, gram.T)
    out = tmp_path / "regmean.safetensors"
    assert main(["merge", "--method", "regmean", "--base", str(zoo.base_path), "--experts",
                 *map(str, zoo.expert_paths), "--grams", *map(str, gram_files), "--out", str(out)]) == 0


def test_eval_rejects_a_checkpoint_with_other_keys(cache, tmp_path, capsys):
    bad = tmp_path / "bad.safetensors"
    save_state_dict({"visual.something_else": torch.zeros(3)}, bad)
    assert main(["eval", "--suite", "micro", "--model", str(bad), "--cache", str(cache)]) == 2
    assert "does not match the zoo's encoder" in capsys.readouterr().err


def test_corrupt_cache_file_is_detected_and_rebuilt(cache):
    zoo = load_zoo("micro", cache)
    path = zoo.expert_paths[1]
    original = load_state_dict(path)
    data = path.read_bytes()
    path.unlink()  # the suite folder holds hard links into the store: replace, don't write through
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(nbmerge.CheckpointError, match="truncated or altered"):
        load_zoo("micro", cache)
    messages = []
    build_zoo("micro", cache=cache, quiet=True, log=messages.append)
    rebuilt = load_state_dict(load_zoo("micro", cache).expert_paths[1])
    assert any("rebuilding" in m for m in messages)
    for key in original:
        assert torch.equal(original[key], rebuilt[key])


def test_unknown_suite_and_unbuilt_suite_are_clear_errors(tmp_path, capsys):
    assert main(["zoo", "build", "nope", "--cache", str(tmp_path)]) == 2
    assert "valid suites" in capsys.readouterr().err
    with pytest.raises(nbmerge.NbmergeError, match="not built"):
        info("micro", cache=tmp_path)


def test_gram_recorder_matches_the_real_attention_forward():
    encoder = TinyViT().build().eval()
    x = torch.randn(3, 17, 64)
    block = encoder.transformer.resblocks[0]
    reference = block.attn(x, x, x, need_weights=False)[0]
    torch.testing.assert_close(block.attn.out_proj(attention_heads_output(block.attn, x)), reference)
    images = torch.randn(2, 3, 28, 28)
    with GramRecorder(encoder) as recorder:
        encoder(images)
    assert recorder.tokens == 2 * 17
    key = "visual.transformer.resblocks.0.attn.in_proj_weight"
    assert recorder.grams[key].shape == (64, 64)
    assert torch.linalg.eigvalsh(recorder.grams[key]).min() > -1e-8


def test_ece_of_calibrated_and_overconfident_predictors():
    gen = torch.Generator().manual_seed(0)
    n = 200_000
    confidence = torch.rand(n, generator=gen, dtype=torch.float64) * 0.5 + 0.5
    correct = torch.rand(n, generator=gen, dtype=torch.float64) < confidence
    labels = torch.where(correct, torch.zeros(n, dtype=torch.long), torch.ones(n, dtype=torch.long))
    probs = torch.stack([confidence, 1 - confidence], dim=1)
    assert expected_calibration_error(probs, labels) < 0.01
    overconfident = torch.stack([torch.full((n,), 0.99, dtype=torch.float64),
                                 torch.full((n,), 0.01, dtype=torch.float64)], dim=1)
    assert expected_calibration_error(overconfident, labels) == pytest.approx(0.99 - correct.double().mean().item(),
                                                                             abs=1e-9)


def test_evaluation_only_knobs_do_not_invalidate_trained_artifacts():
    from dataclasses import replace

    from nbmerge.pools.zoo import TINY_RECIPE, recipe_hash, store_hash

    other_grid = replace(TINY_RECIPE, ta_grid=(0.05, 0.1))
    assert store_hash(other_grid) == store_hash(TINY_RECIPE)
    assert recipe_hash(other_grid) != recipe_hash(TINY_RECIPE)
    assert store_hash(replace(TINY_RECIPE, expert_steps=1)) != store_hash(TINY_RECIPE)


def test_normalized_mean_leaves_out_a_task_whose_expert_scores_zero():
    from nbmerge.evaluate.metrics import normalized_mean

    accs, experts = {"a": 0.5, "b": 0.2, "c": 0.3}, {"a": 1.0, "b": 0.4, "c": 0.0}
    assert normalized_mean(accs, experts, ["a", "b"]) == pytest.approx(0.5)
    assert normalized_mean(accs, experts, ["a", "b", "c"]) == pytest.approx(0.5)  # c has no normalized accuracy
    assert math.isnan(normalized_mean(accs, experts, ["c"]))


def test_opening_a_built_zoo_verifies_each_checkpoint_once(cache, monkeypatch):
    """open_zoo builds a missing zoo first; on a built one the check that finds it complete is the opening itself
    (every checksum verified once, not once to find it built and again to open it)."""
    from nbmerge.pools import build, zoo as zoo_module

    hashed = []
    real = zoo_module.sha256_file
    monkeypatch.setattr(zoo_module, "sha256_file", lambda path: hashed.append(path) or real(path))
    opened = build.open_zoo("micro", cache, log=lambda *_: None)
    checksums = opened.manifest["checksums"]
    assert sorted(map(str, hashed)) == sorted(str(suite_dir("micro", cache) / rel) for rel in checksums)
    assert opened.root == suite_dir("micro", cache)
