"""Building the embedded zoo (``nbmerge.pools.build``) on the `micro` suite. The cases where a build heals a damaged
store (a corrupt manifest or journal, concurrent builds, leftover temporaries, resumed sessions' timings) are in
test_reliability.py, under "the zoo store"."""

import pytest
import torch

import nbmerge
import nbmerge.pools.build as build
from nbmerge.errors import NbmergeError
from nbmerge.pools.build import build_zoo
from nbmerge.pools.zoo import load_zoo, suite_dir


def test_interrupted_build_resumes_without_redoing_finished_steps(tmp_path, monkeypatch):
    real_finetune, calls = build.finetune, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the user stops the build during the second expert
        return real_finetune(*args, **kwargs)

    monkeypatch.setattr(build, "finetune", flaky)
    with pytest.raises(KeyboardInterrupt):
        build_zoo("micro", cache=tmp_path, quiet=True)
    assert not (suite_dir("micro", tmp_path) / "manifest.json").exists()
    with pytest.raises(nbmerge.NbmergeError, match="not built"):
        load_zoo("micro", tmp_path)
    store = next((tmp_path / "zoo").glob("store-*"))
    assert (store / "experts" / "digits.safetensors").exists()
    assert not list(store.rglob("*.tmp"))
    calls.clear()
    monkeypatch.setattr(build, "finetune", lambda *a, **k: calls.append(1) or real_finetune(*a, **k))
    pretrained = (store / "base.safetensors").stat().st_mtime_ns
    build_zoo("micro", cache=tmp_path, quiet=True)
    assert len(calls) == 2  # only the two unfinished experts were trained
    assert (store / "base.safetensors").stat().st_mtime_ns == pretrained
    assert load_zoo("micro", tmp_path).tasks == ["digits", "hebrew", "devanagari"]


def test_variant_experts_reproduce_the_zoo_and_differ_when_asked(micro_cache):
    from nbmerge.engine.io import load_state_dict
    from nbmerge.pools.build import variant_experts
    from nbmerge.pools.zoo import load_zoo

    zoo = load_zoo("micro", micro_cache)
    # bit-exact only under the thread count the zoo was built with (reduction order); another file may change it
    threads = torch.get_num_threads()
    torch.set_num_threads(zoo.manifest["environment"]["threads"])
    try:
        same = variant_experts(zoo)  # factors 1: the zoo's own recipe and seeds
    finally:
        torch.set_num_threads(threads)
    for path, original in zip(same, zoo.expert_paths):
        a, b = load_state_dict(path), load_state_dict(original)
        assert all(torch.equal(a[k], b[k]) for k in a)
    scaled = variant_experts(zoo, lr_factors=(0.1, 3.0), step_factors=(0.5,))
    assert scaled[0] != scaled[1] and load_state_dict(scaled[0]).keys() == load_state_dict(same[0]).keys()
    with pytest.raises(NbmergeError, match="factors must be"):
        variant_experts(zoo, lr_factors=(0.0,))
