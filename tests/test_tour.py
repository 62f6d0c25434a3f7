"""The tour (notebooks/00_tour.ipynb): its claims are decided (held, contradicted, inconclusive, not tested) from
intervals over seeds and test examples under one tuning protocol, its merges go through the shared trial cache, and
its parameters cell matches its config."""

from pathlib import Path

import numpy as np
import pytest

from nbmerge.evaluate import protocol
from nbmerge.tune import alpha_tuning
from nbmerge.errors import NbmergeError
from nbmerge.experiments import tour, tour_claims, tour_figures
from nbmerge.params import notebook_config
from nbmerge.pools.build import open_zoo
from nbmerge.pools.zoo import load_models

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


def _tuned(method: str, alpha: float, val: float) -> alpha_tuning.Tuned:
    curve = [{"alpha": a, "val_accuracy": val if a == alpha else val - 0.1} for a in alpha_tuning.SCALE_GRID]
    return alpha_tuning.Tuned(alpha_tuning.method_recipe(method), alpha, curve)


def _comparison(models: dict, seeds: int = 1) -> tour.Comparison:
    """``models``: name → (share right on test, chosen α, validation accuracy at α), the same at every seed; or
    name → a list of such per seed."""
    comparison = tour.Comparison("toy", list(TASKS), {t: 0.9 for t in TASKS}, {t: 0.3 for t in TASKS}, 0.3,
                                 seeds=tuple(range(seeds)))
    for name, spec in models.items():
        per_seed = spec if isinstance(spec, list) else [spec] * seeds
        comparison.add(name, [(_tuned(name, alpha, val), _predictions(_first(share)))
                              for share, alpha, val in per_seed])
    comparison.decide()
    return comparison


def _shifted(gained: int, lost: int, share: float = 0.6) -> dict[str, np.ndarray]:
    """Right where ``_first(share)`` is, except ``lost`` of those examples, plus ``gained`` others."""
    out = {}
    for t, v in _first(share).items():
        v = v.copy()
        v[:lost] = False
        v[int(share * N):int(share * N) + gained] = True
        out[t] = v
    return out


def test_claims_take_the_four_outcomes():
    comparison = _comparison({"task_arithmetic": (0.6, 0.3, 0.6), "ties": (0.7, 1.0, 0.7),
                              "tsv": (0.6, 1.4, 0.6),        # the same predictions as task arithmetic: collapsed
                              "iso_cts": (0.5, 4.0, 0.5)})
    claims = {c.id: c for c in tour_claims.tour_claims(comparison)}
    assert [c for c in claims] == ["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9"]
    assert claims["T1"].verdict == "held" and "+11.1" in claims["T1"].ours      # (0.7 − 0.6) / 0.9
    assert "ties 1; task_arithmetic 0.3" in claims["T1"].evidence               # each model's own α
    assert claims["T2"].verdict == "not tested" and "collapsed" in claims["T2"].evidence
    assert claims["T3"].verdict == "contradicted"                               # the interval is below 0
    assert claims["T4"].verdict == "not tested" and "regmean was not run" in claims["T4"].evidence
    assert claims["T6"].verdict == claims["T7"].verdict == "not tested"
    assert claims["T8"].verdict == "not tested" and "regmean_plusplus was not run" in claims["T8"].evidence
    assert claims["T9"].verdict == "not tested" and "adamerging was not run" in claims["T9"].evidence
    for c in claims.values():
        assert "arXiv" in c.source and ".md" not in c.source and c.suite == "toy" and c.paper and c.setting
        assert c.verdict in ("held", "contradicted", "inconclusive", "not tested")
        assert "did not hold" not in c.evidence and "did not hold" not in c.verdict
        assert c.decision is not None and c.decision.outcome == c.verdict
    assert claims["T1"].decision.effect == pytest.approx(4.3) and claims["T1"].decision.threshold == 0.0


def test_regmean_plusplus_is_decided_against_regmean_not_task_arithmetic():
    comparison = _comparison({"task_arithmetic": (0.5, 0.3, 0.5), "regmean": (0.6, 1.0, 0.6),
                              "regmean_plusplus": (0.7, 1.0, 0.7)})
    t8 = {c.id: c for c in tour_claims.tour_claims(comparison)}["T8"]
    assert t8.verdict == "held" and "regmean_plusplus − regmean" in t8.evidence
    assert "+11.1" in t8.ours                                   # (0.7 − 0.6) / 0.9, not against task arithmetic
    assert t8.decision.effect == pytest.approx(2.0) and "84.4" in t8.paper


def test_a_gain_below_the_papers_effect_is_contradicted_and_a_noisy_one_is_inconclusive():
    # per task, 3 examples gained and 2 lost out of 300: an interval around +0.4 that covers 0 but lies wholly
    # below the paper's +4.3 (TIES over task arithmetic): the claim as the paper states it is excluded
    comparison = _comparison({"task_arithmetic": (0.6, 0.3, 0.6)})
    comparison.add("ties", [(_tuned("ties", 1.0, 0.7), _predictions(_shifted(3, 2)))])
    comparison.decide()
    decision = comparison.versus["ties"]
    assert decision.estimate > 0 and decision.interval[0] < 0 and decision.outcome == "inconclusive"  # no effect
    t1 = tour_claims.tour_claims(comparison)[0]
    assert t1.verdict == "contradicted" and t1.decision.interval[1] < 4.3 and "paper's effect +4.3" in t1.evidence
    # many examples change either way, a net +2.2: both 0 and +4.3 inside the interval → inconclusive, and the
    # evidence says what this run could have detected
    noisy = _comparison({"task_arithmetic": (0.6, 0.3, 0.6)})
    noisy.add("ties", [(_tuned("ties", 1.0, 0.7), _predictions(_shifted(40, 34)))])
    t1 = tour_claims.tour_claims(noisy)[0]
    lo, hi = t1.decision.interval
    assert t1.verdict == "inconclusive" and lo < 0 < 4.3 < hi, t1.evidence
    assert "detects effects" in t1.evidence and "test examples would decide it" in t1.evidence


def test_seeds_enter_one_interval():
    """Three seeds, each its own α choice and test predictions: one decision over all of them (pairs per seed)."""
    spec = {"task_arithmetic": [(0.6, 0.3, 0.6), (0.6, 0.5, 0.6), (0.6, 0.3, 0.6)],
            "ties": [(0.7, 1.0, 0.7), (0.65, 1.4, 0.7), (0.7, 1.0, 0.7)]}
    comparison = _comparison(spec, seeds=3)
    assert comparison.alphas("task_arithmetic") == [0.3, 0.5, 0.3]
    assert len(comparison.pairs("ties", "task_arithmetic")) == 3
    t1 = tour_claims.tour_claims(comparison)[0]
    assert t1.verdict == "held" and "3 seeds" in t1.evidence and "ties 1, 1.4, 1" in t1.evidence
    # the estimate is the mean over seeds: (11.1 + 5.6 + 11.1) / 3
    assert t1.decision.estimate == pytest.approx(100 * (0.1 + 0.05 + 0.1) / 3 / 0.9)
    assert comparison.normalized("ties") == pytest.approx((0.7 + 0.65 + 0.7) / 3 / 0.9)


def test_bmm_claims_compare_with_the_anchor():
    section = _comparison({"task_arithmetic": (0.6, 0.3, 0.6), "BMM data-assisted": (0.75, 1.0, 0.7),
                           "BMM data-free": (0.55, 1.0, 0.5)})
    main = _comparison({"task_arithmetic": (0.6, 0.3, 0.6)})
    claims = {c.id: c for c in tour_claims.tour_claims(main, section)}
    assert claims["T6"].verdict == "held" and claims["T7"].verdict == "contradicted"
    assert claims["T6"].decision.effect is None           # the abstract states no gap over the anchor
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


def test_every_figure_of_the_notebook_goes_through_figure_with_alt_text():
    import json

    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    source = "\n".join(cells)
    assert source.count("tour_figures.plot_") == source.count("figure(tour_figures.plot_") == 5


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


def test_a_damaged_or_stale_analysis_is_recomputed_not_used(tmp_path, monkeypatch):
    from pathlib import Path
    from types import SimpleNamespace

    from nbmerge import codehash

    zoo = SimpleNamespace(root=Path("toy-123"), manifest={"checksums": {"base": "abc"}})
    config = _config(cache=str(tmp_path))
    said, calls = [], []

    def compute():
        calls.append(1)
        return {"distance": 0.0976, "n": len(calls)}
    assert tour.cached(zoo, config, "geometry", compute, log=said.append)["n"] == 1
    [entry] = (tmp_path / "analyses").rglob("tour-geometry/*.json")
    entry.write_text(entry.read_text().replace("0.0976", "0.0376"))        # one digit changed
    assert tour.cached(zoo, config, "geometry", compute, log=said.append) == {"distance": 0.0976, "n": 2}
    assert "checksum" in said[-1]
    assert tour.cached(zoo, config, "geometry", compute, log=said.append)["n"] == 2   # the rewritten entry is used
    monkeypatch.setattr(codehash, "code_fingerprint", lambda: "other-code")
    assert tour.cached(zoo, config, "geometry", compute, log=said.append)["n"] == 3   # other code: recomputed
    assert "another key" in said[-1]


def test_config_checks_and_is_built_from_the_notebook():
    with pytest.raises(NbmergeError, match="parameter 'seed'"):
        _config(seed="0")
    with pytest.raises(NbmergeError, match="bmm_grams"):
        _config(bmm_grams=["hessian"])
    with pytest.raises(NbmergeError, match="data-free"):
        _config(bmm_anchor="regmean")
    with pytest.raises(NbmergeError, match="parameter 'pareto_tasks' = \\['a'\\]: must have 0 or 2 entries"):
        _config(pareto_tasks=["a"])
    with pytest.raises(NbmergeError, match="must not repeat"):
        _config(seeds=[0, 0])
    assert tour.validation_seeds(_config(val_examples=0, seeds=[0, 1, 2])) == (0,)   # the whole split: one draw
    with pytest.raises(NbmergeError, match="declares no parameter"):
        _config(no_such_knob=1)
    with pytest.raises(TypeError):
        tour.TourConfig()  # no defaults: the notebook's parameters cell is the only place they are written
    assert _config(methods=["ties"]).methods == ("ties",)
    config = notebook_config(tour.TourConfig, NOTEBOOK)
    assert config.suite == "text8" and config.methods[0] == "task_arithmetic"   # the notebook's own defaults


def test_the_tour_on_micro_goes_through_the_trial_cache(micro_cache, monkeypatch):
    """Every merge is tuned on the same grid at each seed's validation subset; a method is merged once for all
    seeds; a second run evaluates nothing and collects no Grams, and gives the same numbers."""
    config = _config(cache=str(micro_cache), methods=["task_arithmetic", "ties", "regmean", "ace"], val_examples=40,
                     gram_examples=16, bmm_grams=["task_vector"], seeds=[0, 1])
    zoo = open_zoo(config.suite, config.cache)
    base, experts = load_models(zoo)
    collected, merged = [], []
    real_merge = tour.merge

    def counting_merge(method, *args, **kwargs):
        merged.append(method)
        return real_merge(method, *args, **kwargs)
    monkeypatch.setattr(tour, "merge", counting_merge)

    def run():
        cache = tour.open_lab(config).cache
        source = tour.gram_source(zoo, config)

        def grams(kind="data"):
            collected.append(1)
            return source(kind)
        comparison = tour.compare_methods(zoo, config, base, experts, cache, grams)
        bmm = tour.bmm_section(zoo, config, base, experts, comparison, cache, grams)
        return comparison, bmm, cache

    first, first_bmm, first_cache = run()
    # each method merged once for both seeds (tests reuse it); BMM once per distinct anchor α (its prior)
    assert [m for m in merged if m != "bmm"] == ["task_arithmetic", "ties", "regmean", "ace"]
    assert merged.count("bmm") == len(set(first.alphas("task_arithmetic")))
    assert first_cache.evaluator.subset_spec("val") == [40, 0]   # the first seed's subset is restored
    collected.clear()
    merged.clear()
    second, second_bmm, cache = run()
    assert cache.misses == 0 and not collected and not merged
    for name, runs in first.runs.items():
        assert len(runs) == 2
        for (tuned, _), (again, _) in zip(runs, second.runs[name]):
            assert [r["alpha"] for r in tuned.curve] == list(alpha_tuning.SCALE_GRID)
            assert tuned.curve == again.curve and tuned.alpha == again.alpha
        assert runs[0][0].curve != runs[1][0].curve   # two validation subsets, two curves
        assert first.normalized(name) == second.normalized(name)
    assert first.tuned["regmean"].recipe["grams"] == alpha_tuning.gram_name(16, 0)
    assert first.tuned["ace"].recipe["params"] == {"eps": 1e-5}   # "ace" is 10_ace's headline configuration
    for seed, (tuned, _) in enumerate(first_bmm.runs["BMM data-free"]):
        assert tuned.recipe["params"]["anchor_params"] == {"scale": first.alphas("task_arithmetic")[seed]}
    assert set(first.versus) == {"ties", "regmean", "ace"} and set(first_bmm.versus) == {"BMM data-free"}
    claims = tour_claims.tour_claims(second, second_bmm)
    assert claims[5].verdict == "not tested"  # T6: no data BMM run
    assert all(c.verdict in ("held", "contradicted", "inconclusive", "not tested") for c in claims)


def test_on_the_published_checkpoints_a_claim_shows_their_published_figures():
    """A CLIP pool of the TALL-masks checkpoints (open_clip layout, a published task list) gets the TSV repository's
    figures beside the claim that compares two methods it reports (T2: TSV-M vs task arithmetic), and a setting that
    names CLIP experts; the text zoo and other pools get neither."""
    from nbmerge.pools.published import published_figures
    from nbmerge.tasks.clip import load_suite_manifest

    models = {"task_arithmetic": (0.6, 0.3, 0.6), "ties": (0.7, 1.0, 0.7), "tsv": (0.7, 1.4, 0.7)}
    plain = {c.id: c for c in tour_claims.tour_claims(_comparison(models))}
    assert "published for these very checkpoints" not in plain["T2"].paper
    assert "MiniLM text experts (the analogue of the papers' ViT × 8)" in plain["T2"].setting

    manifest = {"source": {"format": "open_clip"}, "tasks": load_suite_manifest("clip-8")["tasks"]}
    comparison = _comparison(models)
    comparison.published = published_figures("clip-vit-b32-8", manifest)
    comparison.experts_label = "CLIP ViT image experts"
    claims = {c.id: c for c in tour_claims.tour_claims(comparison)}
    assert claims["T2"].paper.startswith(plain["T2"].paper)
    assert "published for these very checkpoints (vit-b32, 8 tasks" in claims["T2"].paper
    assert "85.9% vs" in claims["T2"].paper and "92.3% vs" in claims["T2"].paper   # TSV-M: absolute, normalized
    assert claims["T1"].paper == plain["T1"].paper           # TIES: not among the published methods
    assert "CLIP ViT image experts;" in claims["T2"].setting and "analogue" not in claims["T2"].setting
