"""The trial cache can be trusted: a damaged or swapped entry is quarantined and recomputed (never used), and an
entry made by other code is never read (issue 30: a tampered entry flipped T3; a kernel fix never reached the
reports)."""

from __future__ import annotations

import fnmatch
import io
import os
import shutil
import warnings

import numpy as np
import pytest

from nbmerge import codehash
from nbmerge.errors import NbmergeWarning
from nbmerge.evaluate.trialcache import TrialCache
from tests.fakes import FakeEvaluator, FakeZoo


STRONG, WEAK = {"method": "strong"}, {"method": "weak"}
SHIFTS = {"strong": 2.0, "weak": 0.0}


def _cache(tmp_path, messages=None):
    return TrialCache(FakeZoo(tmp_path / "suite-x"), FakeEvaluator(200), tmp_path / "trials",
                      log=(messages.append if messages is not None else (lambda *_: None)))


def _evaluate(cache):
    """Both models on test, through the cache, and the verdict "strong beats weak"."""
    preds = {r["method"]: cache.predictions(r, "test", lambda m=r["method"]: {"shift": SHIFTS[m]})
             for r in (STRONG, WEAK)}
    from nbmerge.evaluate import verdicts

    return preds, verdicts.compare([(preds["strong"], preds["weak"])]).to_dict()


def _entry(cache, recipe):
    return cache.root / f"{cache.key(recipe, 'test')}.npz"


def _rewrite(path, change):
    """Rewrite an entry's arrays through ``change(dict)`` (keeping whatever checksum it holds: now stale)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    change(arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def _swap_tasks(arrays):
    arrays["logits/a"], arrays["logits/b"] = arrays["logits/b"].copy(), arrays["logits/a"].copy()
    arrays["labels/a"], arrays["labels/b"] = arrays["labels/b"].copy(), arrays["labels/a"].copy()


def _weaken(arrays):
    for task in ("a", "b"):
        arrays[f"logits/{task}"] = arrays[f"logits/{task}"][:, ::-1].copy()  # the true class now loses


def _flip_bytes(path):
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 8] = bytes(b ^ 0xFF for b in data[middle:middle + 8])
    path.write_bytes(bytes(data))


def _drop_checksum(arrays):
    del arrays["__checksum__"]


@pytest.mark.parametrize("damage,why", [
    (_flip_bytes, "unreadable|checksum"),
    (lambda p: _rewrite(p, _weaken), "does not match its checksum"),
    (lambda p: _rewrite(p, _swap_tasks), "does not match its checksum"),
    (lambda p: _rewrite(p, _drop_checksum), "has no checksum"),
    (lambda p: p.write_bytes(p.read_bytes()[:40]), "unreadable"),
])
def test_a_damaged_entry_is_quarantined_recomputed_and_the_verdict_stays(tmp_path, damage, why):
    clean, verdict = _evaluate(_cache(tmp_path))
    assert verdict["outcome"] == "held"
    path = _entry(_cache(tmp_path), STRONG)
    damage(path)
    damaged = path.read_bytes()
    messages = []
    fresh = _cache(tmp_path, messages)
    with pytest.warns(NbmergeWarning, match=why):
        preds, again = _evaluate(fresh)
    assert fresh.misses == 1 and fresh.hits == 1          # the damaged entry recomputed, the other one read
    assert len(messages) == 1 and "not used" in messages[0] and "recomputing" in messages[0]
    assert again["outcome"] == "held" and again["interval"] == verdict["interval"]
    for task in ("a", "b"):
        np.testing.assert_array_equal(preds["strong"].logits[task], clean["strong"].logits[task])
    # nothing lost: the damaged file is kept aside, and the entry in place is a good one again
    (kept,) = (tmp_path / "trials" / "quarantine" / fresh.root.name).iterdir()
    assert kept.read_bytes() == damaged and fresh.quarantined == [kept]
    assert path.exists() and path.read_bytes() != damaged   # rewritten (its timing differs from the original)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        third = _cache(tmp_path)
        _evaluate(third)
    assert third.misses == 0 and third.hits == 2


def test_an_entry_swapped_with_another_is_not_used(tmp_path):
    """Two whole files exchanged (each with its own, valid, checksum): the meta names the key it was written for."""
    clean, verdict = _evaluate(_cache(tmp_path))
    cache = _cache(tmp_path)
    strong, weak = _entry(cache, STRONG), _entry(cache, WEAK)
    a, b = strong.read_bytes(), weak.read_bytes()
    strong.write_bytes(b)
    weak.write_bytes(a)
    messages = []
    fresh = _cache(tmp_path, messages)
    with pytest.warns(NbmergeWarning, match="written for another entry"):
        _, again = _evaluate(fresh)
    assert fresh.misses == 2 and len(messages) == 2
    assert again["outcome"] == "held" and again["interval"] == verdict["interval"]


def test_the_checksum_covers_the_meta(tmp_path):
    _evaluate(_cache(tmp_path))
    path = _entry(_cache(tmp_path), STRONG)

    def retime(arrays):
        arrays["__meta__"] = np.array(str(arrays["__meta__"]).replace('"seconds": ', '"seconds": 1'))
    _rewrite(path, retime)
    fresh = _cache(tmp_path)
    with pytest.warns(NbmergeWarning, match="does not match its checksum"):
        _evaluate(fresh)
    assert fresh.misses == 1


# ------------------------------------------------------------------------------------------- keyed by code

def test_changed_code_misses_and_the_same_code_hits(tmp_path, monkeypatch):
    real = codehash.code_fingerprint()
    first = _cache(tmp_path)
    _evaluate(first)
    assert first.misses == 2 and first.code == real and real[:12] in first.root.name
    monkeypatch.setattr(codehash, "code_fingerprint", lambda: "f" * 64)   # a kernel was changed
    changed = _cache(tmp_path)
    _evaluate(changed)
    assert changed.misses == 2 and changed.hits == 0 and changed.evaluator.calls == 4
    assert changed.root != first.root and changed.key(STRONG, "test") != first.key(STRONG, "test")
    monkeypatch.setattr(codehash, "code_fingerprint", lambda: real)       # back to the code that made them
    same = _cache(tmp_path)
    _evaluate(same)
    assert same.misses == 0 and same.hits == 2 and same.evaluator.calls == 0
    assert not (tmp_path / "trials" / "quarantine").exists()             # a miss by code is not damage


def test_the_entry_records_its_code_and_key(tmp_path):
    import json

    cache = _cache(tmp_path)
    _evaluate(cache)
    with np.load(_entry(cache, STRONG), allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        assert len(str(data["__checksum__"])) == 64
    assert meta["code"] == codehash.code_fingerprint() and meta["key"] == cache.key(STRONG, "test")
    assert meta["recipe"] == STRONG and meta["split"] == "test"


def _tiny_package(root):
    (root / "methods").mkdir(parents=True)
    (root / "report").mkdir()
    (root / "evaluate").mkdir()
    (root / "__init__.py").write_text("VERSION = 1\n")
    (root / "methods" / "kernel.py").write_text("def merge(a, b):\n    return a + b\n")
    (root / "report" / "html.py").write_text("TITLE = 'x'\n")
    (root / "evaluate" / "claims.py").write_text("HELD = True\n")
    return root


def test_the_fingerprint_is_stable_and_depends_on_content_and_relative_path_only(tmp_path):
    assert codehash.fingerprint_of() == codehash.fingerprint_of() == codehash.code_fingerprint()
    package = _tiny_package(tmp_path / "one")
    assert codehash.fingerprint_files(package) == ["__init__.py", "methods/kernel.py"]
    before = codehash.fingerprint_of(package)
    assert codehash.fingerprint_of(package) == before
    # not the location, not mtimes, not compiled files, not modules that only read results
    other = tmp_path / "elsewhere" / "two"
    shutil.copytree(package, other)
    assert codehash.fingerprint_of(other) == before
    os.utime(package / "methods" / "kernel.py", (1, 1))
    (package / "methods" / "__pycache__").mkdir()
    (package / "methods" / "__pycache__" / "kernel.cpython-311.pyc").write_bytes(b"\0garbage")
    (package / "report" / "html.py").write_text("TITLE = 'y'\n")
    (package / "evaluate" / "claims.py").write_text("HELD = False\n")
    assert codehash.fingerprint_of(package) == before
    # a kernel's content changes it; so does moving a file
    (package / "methods" / "kernel.py").write_text("def merge(a, b):\n    return a - b\n")
    assert codehash.fingerprint_of(package) != before
    (package / "methods" / "kernel.py").write_text("def merge(a, b):\n    return a + b\n")
    assert codehash.fingerprint_of(package) == before
    (package / "methods" / "kernel.py").rename(package / "methods" / "kernel2.py")
    assert codehash.fingerprint_of(package) != before


def test_the_package_fingerprint_covers_the_kernels_and_the_evaluator_but_not_the_report():
    files = codehash.fingerprint_files()
    for needed in ("evaluate/protocol.py", "evaluate/evaluation.py", "evaluate/trialcache.py", "engine/merging.py",
                   "engine/walker.py", "methods/ties.py", "tune/search.py", "tune/alpha_tuning.py",
                   "pools/posteriors.py", "experiments/pareto/fronts.py"):
        assert needed in files, needed
    for left in ("report/html.py", "evaluate/claims.py", "evaluate/verdicts.py", "experiments/tour_claims.py",
                 "experiments/pareto/figures.py"):
        assert left not in files, left


def test_posterior_folders_are_named_by_the_training_code(monkeypatch):
    """The Pareto posteriors and multitask runs (trained, cached in the zoo's store) are retrained after a change to
    the training code instead of read back; an edit elsewhere (a merge kernel) does not retrain them."""
    from types import SimpleNamespace

    from nbmerge.pools import posteriors

    training = {f for f in codehash.fingerprint_files() if any(fnmatch.fnmatchcase(f, p) for p in codehash.TRAINING)}
    assert {"pools/posteriors.py", "pools/train.py", "models/vit.py"} <= training
    assert "methods/ties.py" not in training
    recipe, settings = SimpleNamespace(seed=0), posteriors.IvonSettings()
    before = posteriors._digest("ivon", settings, recipe)
    assert posteriors._digest("ivon", settings, recipe) == before
    monkeypatch.setattr(codehash, "training_fingerprint", lambda: "0" * 64)
    assert posteriors._digest("ivon", settings, recipe) != before


def test_small_records_beside_the_cache_are_sealed(tmp_path):
    """``tune.study.stored`` (Grams' summaries, factorisations, analyses): an edited, unsealed or swapped record is
    not used; it is recomputed with a warning, and the next read is clean."""
    import json as _json
    import warnings as _warnings

    from nbmerge.codehash import seal, unseal
    from nbmerge.errors import NbmergeWarning
    from nbmerge.tune.study import stored

    calls = []

    def compute():
        calls.append(1)
        return {"best": 0.75, "rho": [1.0, -4.0]}

    assert stored(tmp_path, "analysis", {"k": 1}, compute) == {"best": 0.75, "rho": [1.0, -4.0]}
    assert stored(tmp_path, "analysis", {"k": 1}, compute) == {"best": 0.75, "rho": [1.0, -4.0]} and len(calls) == 1
    (path,) = (tmp_path / "analysis").glob("*.json")
    record = _json.loads(path.read_text())
    record["value"]["best"] = 0.99                          # edited under the old checksum
    path.write_text(_json.dumps(record))
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        assert stored(tmp_path, "analysis", {"k": 1}, compute)["best"] == 0.75 and len(calls) == 2
    assert any(issubclass(w.category, NbmergeWarning) and "checksum" in str(w.message) for w in caught)
    path.write_text(seal({"k": 2}, {"best": 0.5}))          # another key's record under this name
    assert unseal(path.read_text(), {"k": 1})[2] == "it was written for another key"
    path.write_text(_json.dumps({"key": {"k": 1}, "value": {"best": 0.5}}))   # no checksum
    assert not unseal(path.read_text(), {"k": 1})[0]


def test_cache_hits_skip_the_merge_and_survive_a_new_process(tmp_path):
    zoo = FakeZoo(tmp_path / "suite-x")
    evaluator = FakeEvaluator()
    cache = TrialCache(zoo, evaluator, tmp_path / "trials")
    made = []

    def make():
        made.append(1)
        return {"shift": 2.0}

    first = cache.predictions({"method": "m", "scale": 1.0}, "test", make)
    again = cache.predictions({"method": "m", "scale": 1.0}, "test", make)
    assert len(made) == 1 and cache.hits == 1 and again is first
    fresh = TrialCache(zoo, FakeEvaluator(), tmp_path / "trials")
    reread = fresh.predictions({"method": "m", "scale": 1.0}, "test", make)
    assert len(made) == 1 and fresh.evaluator.calls == 0
    for task in first.tasks:
        np.testing.assert_array_equal(reread.logits[task], first.logits[task])
    # another recipe, split or validation subset is another entry
    cache.predictions({"method": "m", "scale": 2.0}, "test", make)
    cache.predictions({"method": "m", "scale": 1.0}, "val", make)
    evaluator.subset = [100, 0]
    cache.predictions({"method": "m", "scale": 1.0}, "val", make)
    assert len(made) == 4


def test_a_corrupt_cache_entry_is_recomputed(tmp_path):
    zoo = FakeZoo(tmp_path / "suite-x")
    cache = TrialCache(zoo, FakeEvaluator(), tmp_path / "trials")
    cache.predictions({"r": 1}, "test", lambda: {"shift": 1.0})
    (entry,) = cache.root.glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:40])
    messages = []
    fresh = TrialCache(zoo, FakeEvaluator(), tmp_path / "trials", log=messages.append)
    preds = fresh.predictions({"r": 1}, "test", lambda: {"shift": 1.0})
    assert fresh.misses == 1 and messages and preds.mean_accuracy() > 0
