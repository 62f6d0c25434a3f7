"""The study layer (nbmerge.tune.study): one way to open a suite, check the BMM notebooks' shared settings and keep
a small result; the notebooks and experiments go through it."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from nbmerge.errors import NbmergeError
from nbmerge.tune import study

ROOT = Path(__file__).resolve().parents[1]


def test_a_lab_knows_its_suite_and_experts_and_shares_models_across_seeds(micro_cache):
    lab = study.open_lab("micro", cache=str(micro_cache), val_examples=10, seed=0)
    assert lab.suite == "micro" and lab.zoo.suite == "micro"
    assert lab.expert_accuracy == lab.zoo.manifest["expert_accuracy"]["test"] and lab.expert is lab.expert_accuracy
    assert lab.cache.evaluator.subset_spec("val") == [10, 0]
    other = lab.at_seed(1)
    assert other.cache.evaluator.subset_spec("val") == [10, 1] and lab.cache.evaluator.subset_spec("val") == [10, 0]
    assert other.base is lab.base and other.experts is lab.experts and other.memo is lab.memo
    assert lab.at_seed(0) is lab
    swapped = lab.with_experts(list(reversed(lab.experts)), "reversed")
    assert swapped.experts_name == "reversed" and lab.experts_name == "zoo" and swapped.base is lab.base
    assert swapped.cache is lab.cache and swapped.memo == {} and swapped.merge_seconds is lab.merge_seconds


def _settings(**changes):
    values = dict(budget=20, n_initial=None, gram_examples=256, wudi_steps=300, val_examples=50, depth_bins=0,
                  seeds=[0, 1, 2])
    values.update(changes)
    return SimpleNamespace(**values)


@pytest.mark.parametrize("change, name", [
    ({"budget": 0}, "budget"), ({"n_initial": 30}, "n_initial"), ({"n_initial": True}, "n_initial"),
    ({"gram_examples": 0}, "gram_examples"), ({"wudi_steps": 0}, "wudi_steps"), ({"val_examples": -1}, "val_examples"),
    ({"depth_bins": -1}, "depth_bins"), ({"seeds": [0, 0]}, "seeds"), ({"seeds": []}, "seeds"),
    ({"seeds": [0, "1"]}, "seeds")])
def test_search_settings_are_checked_once_for_every_bmm_notebook(change, name):
    study.check_search_settings(_settings())
    with pytest.raises(NbmergeError, match=f"parameter '{name}'"):
        study.check_search_settings(_settings(**change))


def test_a_config_without_a_field_is_not_asked_for_it():
    bare = SimpleNamespace(budget=8, gram_examples=16, val_examples=0)
    study.check_search_settings(bare)


def test_no_notebook_or_experiment_keeps_its_own_lab_or_json_cache():
    """The twin study kits are gone: one Lab, one open_lab, one check of the search settings, one small-record
    cache; nothing imports the removed modules."""
    sources = {p: p.read_text() for p in (ROOT / "nbmerge").rglob("*.py")}
    sources.update({p: p.read_text() for p in (ROOT / "notebooks").glob("*.ipynb")})
    for path, text in sources.items():
        assert "tune.trials" not in text and "tune.anchors" not in text, path
        if path.name != "study.py":
            assert not re.search(r"^class Lab\b", text, re.M), path
            assert not re.search(r"^def (check_search_settings|stored)\b", text, re.M), path
    assert not (ROOT / "nbmerge" / "tune" / "trials.py").exists()
    # every notebook and experiment opens its suite and trial cache through the study layer
    for path in [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "nbmerge" / "experiments").rglob("*.py")]:
        text = path.read_text()
        assert "open_zoo(" not in text and "trial_cache(" not in text and "load_models(" not in text, path
    assert not (ROOT / "nbmerge" / "tune" / "anchors.py").exists()
