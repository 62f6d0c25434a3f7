"""Building the embedded zoo (``nbmerge.pools.build``) on the `micro` suite. The cases where a build heals a damaged
store (a corrupt manifest or journal, concurrent builds, leftover temporaries, resumed sessions' timings) are in
test_reliability.py, under "the zoo store"."""

import pytest

import nbmerge
import nbmerge.pools.build as build
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
