"""The notebooks' parameter rules (nbmerge.experiments.rules): written once, on each config's fields, and applied
both when a notebook builds its config and when ``nbmerge report`` checks a run's parameters before any kernel."""

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from nbmerge.errors import NbmergeError, ParameterError
from nbmerge.experiments import rules
from nbmerge.params import notebook_config, notebook_parameters
from nbmerge.report import validate

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def test_every_shipped_notebook_has_a_config_whose_every_field_declares_its_rules():
    configs = validate.notebook_configs()
    assert sorted(configs) == sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb"))
    for name, cls in configs.items():
        declared = notebook_parameters(NOTEBOOKS / f"{name}.ipynb")
        for f in fields(cls):
            assert "rules" in f.metadata, (name, f.name)   # knob(...): a switch has none, but says so
            assert f.name in declared, (name, f.name)
        # the notebook's own parameters outside its config are those it hands to prepare_suites (or its own switch)
        assert set(declared) - {f.name for f in fields(cls)} <= set(rules.SUITE_INPUTS) | {"smoke"}, name
        assert validate.problems(name, declared) == {}, name   # the defaults are valid


def test_no_config_checks_values_outside_its_rules():
    """A config's __post_init__ only checks (rules.check) and normalises: a rule is never written a second time
    there (no raise), and the report's validation keeps no table of its own."""
    for path in [*(ROOT / "nbmerge" / "experiments").glob("*.py"), ROOT / "nbmerge/experiments/pareto/config.py"]:
        tree = ast.parse(path.read_text())
        configs = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name.endswith("Config")]
        for node in (n for c in configs for n in c.body):
            if isinstance(node, ast.FunctionDef) and node.name == "__post_init__":
                assert not any(isinstance(n, ast.Raise) for n in ast.walk(node)), path
                assert "rules.check(self)" in ast.unparse(node), path
    text = (ROOT / "nbmerge" / "report" / "validate.py").read_text()
    assert "RULES" not in text and "importlib" not in text and "count(" not in text


@pytest.mark.parametrize("notebook, change, words", [
    ("20_bmm_benchmark", {"suite": "text14"}, "one of the notebook's suites"),
    ("20_bmm_benchmark", {"anchors": ["no_such_method"]}, "unknown anchor 'no_such_method'"),
    ("20_bmm_benchmark", {"budget": 3, "n_initial": 4}, "<= budget (3)"),
    ("20_bmm_benchmark", {"search_seeds": 0}, ">= 1"),
    ("21_bmm_calibration", {"samples": 1}, ">= 2"),
    ("21_bmm_calibration", {"temperatures": [0.0, 1.0]}, "(0, inf)"),
    ("21_bmm_calibration", {"anchor": "bmm"}, "bmm itself"),
    ("22_bmm_datafree", {"anchors": ["regmean"]}, "needs data Grams"),
    ("22_bmm_datafree", {"k_fraction": 0.0}, "(0, 1]"),
    ("23_bmm_search", {"grid_repeats": 9}, "<= repeats"),
    ("23_bmm_search", {"timing_trials": -1}, ">= 0"),
    ("23_bmm_search", {"strategies": ["bayes", "annealing"]}, "unknown strategy 'annealing'"),
    ("10_ace", {"ablation_seeds": 5}, "number of seeds (3)"),
    ("10_ace", {"seeds": [0, 0]}, "must not repeat"),
    ("00_tour", {"bmm_anchor": "regmean"}, "needs data Grams"),
    ("00_tour", {"methods": ["ties", "localize_stitch_learned", "nosuch"]}, "unknown method 'nosuch'"),
    ("00_tour", {"pareto_tasks": ["nosuch", "other"]}, "unknown task 'nosuch'"),
    ("30_pareto", {"families": ["simple", "gamma"]}, "unknown family 'gamma'"),
    ("30_pareto", {"ivon_beta2": 1.0}, "[0, 1)"),
])
def test_a_rule_refuses_the_same_value_in_the_notebook_and_before_the_run(notebook, change, words):
    """One rule, two places: building the notebook's config (as its cell does, and JupyterLab's Run All) and the
    report's check of the run's parameters give the same refusal."""
    config = validate.notebook_configs()[notebook]
    with pytest.raises(ParameterError, match=r"parameter '\w+' = .*" + words.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        notebook_config(config, NOTEBOOKS / f"{notebook}.ipynb", **change)
    params = {**notebook_parameters(NOTEBOOKS / f"{notebook}.ipynb"), **change}
    found = validate.problems(notebook, params)
    assert any(words in problem for problem in found.values()), found


def test_a_wrong_type_is_named_by_the_config_too():
    config = validate.notebook_configs()["21_bmm_calibration"]
    with pytest.raises(ParameterError, match="parameter 'seed' = '0': expected int"):
        notebook_config(config, NOTEBOOKS / "21_bmm_calibration.ipynb", seed="0")


def test_a_notebook_nbmerge_does_not_ship_gets_the_rules_every_config_agrees_on():
    shared = validate.shared_rules()
    assert shared["budget"] is rules.BUDGET and shared["suite"] is rules.SUITE
    assert "anchors" not in shared   # 20 and 22 constrain anchors differently: neither is imposed by name
    found = validate.problems("my_study", {"budget": 0, "anchors": ["regmean"], "checkpoints": "/no/such/path"})
    assert set(found) == {"budget", "checkpoints"}, found


def test_rule_builders():
    at_most = rules.count(1, at_most="budget", optional=True)
    assert at_most(None, {}) is None and at_most(3, {"budget": 3}) is None
    assert "<= budget (3)" in at_most(4, {"budget": 3})
    assert at_most(4, {"budget": "x"}) is None                  # a bad bound is its own problem
    assert "integer" in rules.count(0)(True, {})               # a bool is no count
    assert rules.number(0.0, 1.0, low_open=True)(1.0, {}) is None
    assert "finite" in rules.number(0.0)(float("nan"), {})
    assert "2 or 3 entries" in rules.list_of(rules.SEED, sizes=(2, 3))([1], {})
    with pytest.raises(NbmergeError, match="no value for"):
        from nbmerge.params import build_config

        build_config(validate.notebook_configs()["30_pareto"], {"suite": "text8"})


def test_a_pool_the_run_imports_is_valid_before_it_is_imported(tmp_path):
    """The notebook imports a pool from its checkpoints before it builds its config, so the check before the run
    accepts a pool that is not imported yet when the run gives checkpoints and data_root (and refuses it without)."""
    params = {**notebook_parameters(NOTEBOOKS / "00_tour.ipynb"), "suite": "clip-vit-b32-8",
              "cache": str(tmp_path / "cache"), "checkpoints": str(tmp_path), "data_root": str(tmp_path)}
    assert validate.problems("00_tour", params) == {}
    assert "not imported" in validate.problems("00_tour", {**params, "checkpoints": ""})["suite"]
