"""The study layer (nbmerge.tune.study): one way to open a suite and keep a small result; the notebooks and
experiments go through it. Also which Gram source and anchor parameters a BMM variant gets."""

import re
from pathlib import Path

import pytest

from nbmerge.errors import NbmergeError
from nbmerge.tune import study
from nbmerge.tune.study import anchor_params, gram_source

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


def test_no_notebook_or_experiment_keeps_its_own_lab_or_json_cache():
    """The twin study kits are gone: one Lab, one open_lab, one small-record cache; nothing imports the removed
    modules."""
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


def test_gram_source_keeps_data_for_an_anchor_that_needs_it():
    assert gram_source("task_arithmetic", "data")[0] == "data"
    assert gram_source("task_arithmetic", "free")[0] == "task_vector"
    assert gram_source("regmean", "free") == ("hybrid", 0.0)
    assert anchor_params("wudi", 300) == {"iters": 300} and anchor_params("ties", 300) == {}
    with pytest.raises(NbmergeError, match="variant"):
        gram_source("ties", "both")
