"""The tour (notebooks/00_tour.ipynb): its verdicts come from paired intervals under one tuning protocol, its merges
go through the shared trial cache, and its parameters cell matches its config."""

from pathlib import Path

import numpy as np
import pytest

from nbmerge import protocol
from nbmerge.errors import NbmergeError
from nbmerge.experiments import tour, tour_claims, tour_figures
from nbmerge.params import notebook_config
from nbmerge.pools.zoo import load_models, open_zoo

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOK = NOTEBOOKS / "00_tour.ipynb"


def _config(**overrides) -> tour.TourConfig:
    """The tour's config at its notebook's defaults, on the micro zoo unless overridden."""
    return notebook_config(tour.TourConfig, NOTEBOOK, **{"suite": "micro", **overrides})

TASKS = ("a", "b")
N = 300          # test examples per task
CLASSES = 4


def _predictions(correct: dict[str, np.ndarray]) -> protocol.Predictions:
    """Predictions that are right exactly where ``correct`` says (wrong answers: the next class)."""
    logits, labels = {}, {}
    for task, right in correct.items():
        y = np.arange(len(right)) % CLASSES
        predicted = np.where(right, y, (y + 1) % CLASSES)
        logits[task] = np.eye(CLASSES, dtype=np.float32)[predicted]
        labels[task] = y
    return protocol.Predictions(logits, labels)


def _first(share: float) -> dict[str, np.ndarray]:
    """Right on the first ``share`` of each task's examples."""
    return {t: np.arange(N) < int(share * N) for t in TASKS}


def _tuned(method: str, alpha: float, val: float) -> protocol.Tuned:
    curve = [{"alpha": a, "val_accuracy": val if a == alpha else val - 0.1} for a in protocol.SCALE_GRID]
    return protocol.Tuned(protocol.method_recipe(method), alpha, curve)


def _comparison(models: dict) -> tour.Comparison:
    """``models``: name → (share right on test, chosen α, validation accuracy at α)."""
    comparison = tour.Comparison("toy", list(TASKS), {t: 0.9 for t in TASKS}, {t: 0.3 for t in TASKS}, 0.3)
    for name, (share, alpha, val) in models.items():
        comparison.add(name, _tuned(name, alpha, val), _predictions(_first(share)))
    comparison.decide()
    return comparison


def test_claims_are_decided_by_paired_intervals_not_point_estimates():
    comparison = _comparison({"task_arithmetic": (0.6, 0.3, 0.6), "ties": (0.7, 1.0, 0.7),
                              "tsv": (0.6, 1.4, 0.6),        # the same predictions as task arithmetic: collapsed
                              "iso_cts": (0.5, 4.0, 0.5)})
    claims = {c.id: c for c in tour_claims.tour_claims(comparison)}
    assert [c for c in claims] == ["T1", "T2", "T3", "T4", "T5", "T6", "T7"]
    assert claims["T1"].verdict == "held" and "+11.1" in claims["T1"].ours      # (0.7 − 0.6) / 0.9
    assert "ties 1, task_arithmetic 0.3" in claims["T1"].evidence               # each model's own α
    assert claims["T2"].verdict == "not tested" and "collapsed" in claims["T2"].evidence
    assert claims["T3"].verdict == "did not hold"
    assert claims["T4"].verdict == "not tested" and "regmean was not run" in claims["T4"].evidence
    assert claims["T6"].verdict == claims["T7"].verdict == "not tested"
    for c in claims.values():
        assert "arXiv" in c.source and ".md" not in c.source and c.suite == "toy" and c.paper


def test_a_small_gain_within_the_noise_does_not_hold():
    # per task, 3 examples gained and 2 lost out of 300: a positive difference whose interval covers 0
    better = {t: v.copy() for t, v in _first(0.6).items()}
    for v in better.values():
        v[-3:] = True
        v[:2] = False
    comparison = _comparison({"task_arithmetic": (0.6, 0.3, 0.6)})
    comparison.add("ties", _tuned("ties", 1.0, 0.7), _predictions(better))
    comparison.decide()
    decision = comparison.versus["ties"]
    assert decision["interval"]["diff"] > 0 and decision["interval"]["low"] < 0 and decision["held"] is False
    assert tour_claims.tour_claims(comparison)[0].verdict == "did not hold"


def test_bmm_claims_compare_with_the_anchor():
    section = _comparison({"task_arithmetic": (0.6, 0.3, 0.6), "BMM data-assisted": (0.75, 1.0, 0.7),
                           "BMM data-free": (0.55, 1.0, 0.5)})
    main = _comparison({"task_arithmetic": (0.6, 0.3, 0.6)})
    claims = {c.id: c for c in tour_claims.tour_claims(main, section)}
    assert claims["T6"].verdict == "held" and claims["T7"].verdict == "did not hold"
    assert "BMM, arXiv 2605.12843" in claims["T6"].source


def test_headline_picks_the_merge_by_validation_not_test():
    comparison = _comparison({"task_arithmetic": (0.8, 0.3, 0.5), "ties": (0.6, 1.0, 0.7)})
    assert comparison.normalized("task_arithmetic") > comparison.normalized("ties")
    head = tour.headline(comparison)
    assert "ties" in head["name"] and head["value"] == pytest.approx(0.6 / 0.9)


def test_rows_have_no_missing_cells_and_the_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comparison = _comparison({"task_arithmetic": (0.6, 0.3, 0.6), "ties": (0.7, 1.0, 0.7)})
    rows = tour.comparison_rows(comparison)
    assert [r["method"] for r in rows] == ["base (zero-shot)", "experts (own task)", "task_arithmetic", "ties"]
    columns = ["method", "α", "val", "test", "normalized", "vs reference", "what it does"]
    assert all(r[c] is not None for r in rows for c in columns)   # a None would print as "None"
    assert rows[2]["vs reference"] == "reference" and rows[3]["vs reference"].startswith("+11.1")
    assert rows[3]["α"] == "1" and rows[3]["val"] == pytest.approx(0.7)
    for fig in (tour_figures.plot_alpha_curves(comparison), tour_figures.plot_comparison(comparison)):
        assert fig.axes
        plt.close(fig)


def test_preview_summary_points_to_the_pareto_report_when_off():
    assert "30_pareto.ipynb" in tour.preview_summary(None)
    flat = {"tasks": ["a", "b"], "hypervolume": {"simple": 0.0, "ivon_hess": 0.0}}
    assert "no trade-off" in tour.preview_summary(flat)
    assert "no trade-off" not in tour.preview_summary({**flat, "hypervolume": {"simple": 0.01}})


def test_analyses_are_computed_once_per_zoo_and_key(tmp_path):
    from pathlib import Path
    from types import SimpleNamespace

    zoo = SimpleNamespace(root=Path("toy-123"), manifest={"checksums": {"base": "abc"}})
    config = _config(cache=str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}
    assert tour.cached(zoo, config, "x", compute, k=1) == {"value": 1}
    assert tour.cached(zoo, config, "x", compute, k=1) == {"value": 1} and len(calls) == 1
    assert tour.cached(zoo, config, "x", compute, k=2) == {"value": 2}      # another key
    other = SimpleNamespace(root=Path("toy-123"), manifest={"checksums": {"base": "changed"}})
    assert tour.cached(other, config, "x", compute, k=1) == {"value": 3}    # other checkpoints
    assert list((tmp_path / "analyses").iterdir())


def test_config_checks_and_is_built_from_the_notebook():
    with pytest.raises(NbmergeError, match="parameter 'seed'"):
        _config(seed="0")
    with pytest.raises(NbmergeError, match="bmm_grams"):
        _config(bmm_grams=["hessian"])
    with pytest.raises(NbmergeError, match="data-free"):
        _config(bmm_anchor="regmean")
    with pytest.raises(NbmergeError, match="two"):
        _config(pareto_tasks=["a"])
    with pytest.raises(NbmergeError, match="declares no parameter"):
        _config(no_such_knob=1)
    with pytest.raises(TypeError):
        tour.TourConfig()  # no defaults: the notebook's parameters cell is the only place they are written
    assert _config(methods=["ties"]).methods == ("ties",)
    config = notebook_config(tour.TourConfig, NOTEBOOK)
    assert config.suite == "text8" and config.methods[0] == "task_arithmetic"   # the notebook's own defaults


def test_the_tour_on_micro_goes_through_the_trial_cache(micro_cache, monkeypatch):
    """Every merge is tuned on the same grid on the validation subset; a second run evaluates nothing and collects
    no Grams, and gives the same numbers."""
    config = _config(cache=str(micro_cache), methods=["task_arithmetic", "ties", "regmean"], val_examples=40,
                     gram_examples=16, bmm_grams=["task_vector"])
    zoo = open_zoo(config.suite, config.cache)
    base, experts = load_models(zoo)
    collected, merged = [], []
    real_merge = tour.merge

    def counting_merge(method, *args, **kwargs):
        merged.append(method)
        return real_merge(method, *args, **kwargs)
    monkeypatch.setattr(tour, "merge", counting_merge)

    def run():
        cache = tour.trials(zoo, config)
        source = tour.gram_source(zoo, config)

        def grams():
            collected.append(1)
            return source()
        comparison = tour.compare_methods(zoo, config, base, experts, cache, grams)
        bmm = tour.bmm_section(zoo, config, base, experts, comparison, cache, grams)
        return comparison, bmm, cache

    first, first_bmm, _ = run()
    assert len(merged) == len(set(merged))  # each method merged at most once (its test reuses the α = 1 merge)
    collected.clear()
    merged.clear()
    second, second_bmm, cache = run()
    assert cache.misses == 0 and not collected and not merged
    for name, tuned in first.tuned.items():
        assert [r["alpha"] for r in tuned.curve] == list(protocol.SCALE_GRID)
        assert tuned.curve == second.tuned[name].curve and tuned.alpha == second.tuned[name].alpha
        assert first.normalized(name) == second.normalized(name)
    assert first.tuned["regmean"].recipe["grams"] == protocol.gram_name(16, 0)
    bmm_recipe = first_bmm.tuned["BMM data-free"].recipe
    assert bmm_recipe["params"]["anchor_params"] == {"scale": first.tuned["task_arithmetic"].alpha}
    assert set(first.versus) == {"ties", "regmean"} and set(first_bmm.versus) == {"BMM data-free"}
    assert [c.verdict for c in tour_claims.tour_claims(second, second_bmm)][5] == "not tested"  # T6: no data BMM run
