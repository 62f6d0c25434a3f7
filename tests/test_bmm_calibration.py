"""BMM claims B6/B6s (notebook 21_bmm_calibration, nbmerge.experiments.bmm_calibration): the conjunction of a claim's
parts, one seed's decision and the four outcomes over seeds on synthetic predictions (held, contradicted,
inconclusive, not tested); the configs notebooks 21 and 22 declare in their parameters cells; and notebook 21's steps
end to end on the `micro` zoo (a second run recomputes nothing)."""

from dataclasses import MISSING, fields

import numpy as np
import pytest

from tests.fakes import DATAFREE_NB, NOTEBOOKS, _calibrated_and_overconfident, _datafree, _labs, _preds

from nbmerge.evaluate import calibration
from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_calibration, bmm_datafree, bmm_figures
from nbmerge.params import build_config, notebook_config
from nbmerge.tune import bmm_posterior, study

CALIBRATION_NB = NOTEBOOKS / "21_bmm_calibration.ipynb"


# ---------------------------------------------------------------------------------------- verdicts

def test_conjunction_of_parts():
    from nbmerge.evaluate import verdicts

    held = verdicts.decide(1.0, interval=[0.5, 1.5], threshold=0.0)
    unsure = verdicts.decide(0.2, interval=[-0.5, 0.9], threshold=0.0)
    against = verdicts.decide(-1.0, interval=[-1.5, -0.5], threshold=0.0)
    untested = verdicts.not_tested("no eligible τ")
    combine = bmm_calibration.conjunction
    assert combine({"a": held, "b": held}).outcome == "held"
    assert combine({"a": held, "b": unsure}).outcome == "inconclusive"
    both = combine({"a": unsure, "b": against}, "strict")
    assert both.outcome == "contradicted" and both.interval == [-1.5, -0.5] and both.reading == "strict"
    assert combine({"a": held, "b": untested}).outcome == "not tested"
    assert combine({"a": against, "b": untested}).outcome == "contradicted"


def _seed_run(seed, point, sampled, why=None, eligible=True):
    decision = bmm_calibration.calibration_decision(point, sampled, point, sampled, {"a": 0.8}, eligible=eligible)
    if why:
        decision["why"] = why
    temperatures = {"a": 1.0}
    return bmm_calibration.PosteriorRun(seed, {}, {}, [{}, {}], {"temperature": 10.0,
                                                                  "eligible_count": 2 if eligible else 0},
                                        point, point, sampled, sampled, temperatures, temperatures, decision)


def test_calibration_decision_describes_a_seed():
    calibrated, overconfident = _calibrated_and_overconfident()
    one = bmm_calibration.calibration_decision(overconfident, calibrated, overconfident, calibrated, {"a": 0.8})
    assert one["why"] is None and one["ece_raw"]["high"] < 0 and one["accuracy"]["diff"] == 0 and "held" not in one
    same = bmm_calibration.calibration_decision(calibrated, calibrated, calibrated, calibrated, {"a": 0.8})
    assert "posterior temperature is too small" in same["why"]
    unfit = bmm_calibration.calibration_decision(overconfident, calibrated, overconfident, calibrated, {"a": 0.8},
                                                 eligible=False)
    assert "no eligible setting" in unfit["why"]


def _calibration_study(runs):
    return bmm_calibration.CalibrationStudy("s", ["a"], {"a": 0.8}, "task_arithmetic", 1.0, {0: 0.5}, runs)


def test_calibration_claims_decide_over_seeds_and_examples():
    seeds = [_calibrated_and_overconfident(seed=0)]
    labels = seeds[0][0].labels
    rng = np.random.default_rng(3)
    pairs = []
    for seed in range(3):   # the same test examples at every seed, a different "model" each time
        z = seeds[0][0].logits["a"] + 0.1 * rng.standard_normal(seeds[0][0].logits["a"].shape)
        pairs.append((_preds({"a": 4 * z}, labels), _preds({"a": z}, labels)))   # (overconfident, calibrated)
    # sampling = the calibrated model, the point estimate overconfident: both rows held
    study = _calibration_study([_seed_run(s, point, sampled) for s, (point, sampled) in enumerate(pairs)])
    b6, b6s = bmm_calibration.calibration_claims(study)
    assert (b6.id, b6s.id) == ("B6", "B6s") and b6.verdict == b6s.verdict == "held"
    assert (b6.decision.reading, b6s.decision.reading) == ("paper", "strict") and b6.decision.p is not None
    assert "ECE reduction at T = 1" in b6.evidence and "3 search seeds" in b6.evidence
    # the other way round: sampling makes it worse, contradicted
    worse = _calibration_study([_seed_run(s, sampled, point) for s, (point, sampled) in enumerate(pairs)])
    assert [c.verdict for c in bmm_calibration.calibration_claims(worse)] == ["contradicted", "contradicted"]
    # a lower ECE bought with accuracy: contradicted by the accuracy part
    point, sampled = pairs[0]
    broken = _preds({"a": np.where((np.arange(len(labels["a"])) % 4 == 0)[:, None], 0.0, sampled.logits["a"] / 3)},
                    labels)
    lost = bmm_calibration.calibration_verdicts(_calibration_study([_seed_run(0, point, broken)]))
    assert lost["parts"]["accuracy"].outcome == "contradicted" and lost["B6"].outcome == "contradicted"
    # a barely different ensemble on few examples: inconclusive
    small = {"a": labels["a"][:300]}
    z = pairs[0][1].logits["a"][:300]
    nudged = _calibration_study([_seed_run(0, _preds({"a": z}, small), _preds({"a": 1.03 * z}, small))])
    assert bmm_calibration.calibration_verdicts(nudged)["parts"]["ece_raw"].outcome == "inconclusive"
    # no eligible τ at any seed: not tested, never "did not hold"
    none = _calibration_study([_seed_run(s, point, sampled, eligible=False) for s, (point, sampled) in
                               enumerate(pairs)])
    b6, b6s = bmm_calibration.calibration_claims(none)
    assert b6.verdict == b6s.verdict == "not tested" and "no eligible setting" in b6.evidence
    # one seed left out: named, the others decide
    part = _calibration_study([_seed_run(0, *pairs[0], eligible=False)]
                              + [_seed_run(s, point, sampled) for s, (point, sampled) in enumerate(pairs) if s])
    found = bmm_calibration.calibration_verdicts(part)
    assert found["seeds"] == [1, 2] and found["left_out"][0].startswith("seed 0") and found["B6"].outcome == "held"
    assert bmm_figures.plot_calibration_verdicts(found).axes
    assert all(c.verdict == "not tested" for c in bmm_calibration.calibration_claims(None))
    for c in bmm_calibration.calibration_claims(study) + bmm_calibration.calibration_claims(none):
        assert "did not hold" not in c.evidence


def _calibration(**overrides):
    return notebook_config(bmm_calibration.CalibrationConfig, CALIBRATION_NB, **overrides)


def test_configs_come_from_the_notebooks_and_are_validated():
    for cls in (bmm_calibration.CalibrationConfig, bmm_datafree.DatafreeConfig):
        assert all(f.default is MISSING and f.default_factory is MISSING for f in fields(cls)), cls
    with pytest.raises(NbmergeError, match="no value for"):   # the notebook declares every value, none is implied
        build_config(bmm_calibration.CalibrationConfig, {"suite": "text8"})
    assert _datafree().suite == _calibration().suite == "text8"
    assert _datafree(anchors=["ties"], seeds=[0, 1, 2]).anchors == ("ties",)
    assert _calibration(temperatures=[1, 10]).temperatures == (1.0, 10.0)
    with pytest.raises(NbmergeError, match="parameter 'seed'"):
        _calibration(seed="0")
    with pytest.raises(NbmergeError, match="seeds"):
        _calibration(seeds=[0, 0])
    with pytest.raises(NbmergeError, match="samples"):
        _calibration(samples=1)
    with pytest.raises(NbmergeError, match="temperatures"):
        _calibration(temperatures=[0.0, 1.0])
    with pytest.raises(NbmergeError, match="k_fraction"):
        _datafree(k_fraction=0.0)
    with pytest.raises(NbmergeError, match="budget"):
        _datafree(budget=0)
    with pytest.raises(NbmergeError, match="n_initial"):
        _datafree(n_initial=21)
    with pytest.raises(NbmergeError, match="needs data Grams"):
        _datafree(anchors=["regmean"])
    with pytest.raises(NbmergeError, match="margin"):
        _datafree(margin=0.0)
    with pytest.raises(NbmergeError, match="declares no parameter"):
        _calibration(anchors=["ties"])


@pytest.mark.parametrize("path, config_class", [(CALIBRATION_NB, bmm_calibration.CalibrationConfig),
                                                (DATAFREE_NB, bmm_datafree.DatafreeConfig)],
                         ids=["21_bmm_calibration", "22_bmm_datafree"])
def test_the_parameters_cell_declares_the_config_and_every_layer_builds_one(path, config_class):
    import yaml

    from nbmerge.params import notebook_parameters
    from nbmerge.report.pipeline import resolve_parameters

    declared = notebook_parameters(path)
    # checkpoints / data_root are read by prepare_suites (importing a clip-... pool), not by the config
    assert set(declared) - {"checkpoints", "data_root"} == {f.name for f in fields(config_class)}
    for smoke in (False, True):
        resolved = resolve_parameters([path], NOTEBOOKS / "parameters", smoke, {})[path.stem]
        notebook_config(config_class, path, **resolved)
    assert resolved["suite"] == "micro"
    layers = {}
    for profile in ("default", "paper"):
        layers.update(yaml.safe_load((NOTEBOOKS / "parameters" / f"{profile}.yaml").read_text())[path.stem])
    notebook_config(config_class, path, **layers)
    source = path.read_text()
    assert f"from nbmerge.experiments import {path.stem[3:]}" in source and " as bc" not in source
    for outside in ("BRIEF.md", "METHODS.md", "ZOO_NOTES.md", "tiny ViT"):
        assert outside not in source


# ------------------------------------------------------------------------------------------- on the micro zoo

def _micro_calibration_study(config, labs):
    """Notebook 21's steps: per seed α, the search, σ̂², the validation sweep over τ, the chosen τ on test."""
    first = labs[config.seeds[0]]
    tuned = {seed: study.tune_anchor(lab, config.anchor, gram_examples=config.gram_examples,
                                     gram_seed=config.seed, device=config.device) for seed, lab in labs.items()}
    cal_study = bmm_calibration.CalibrationStudy(first.suite, list(first.zoo.tasks), first.expert, config.anchor,
                                                 config.margin, alphas={s: a.alpha for s, a in tuned.items()})
    tunings = {seed: study.run_search(lab, tuned[seed], "data", strategy=config.strategy, seed=seed,
                                      budget=config.budget, n_initial=config.n_initial, with_scale=True,
                                      gram_examples=config.gram_examples, gram_seed=config.seed,
                                      device=config.device)
               for seed, lab in labs.items()}
    noise = {seed: bmm_posterior.posterior_noise(labs[seed].cache, first.zoo, tuning)
             for seed, tuning in tunings.items()}
    val_draws, sweeps, chosen = {}, {}, {}
    for seed, tuning in tunings.items():
        val_draws[seed] = {tau: bmm_posterior.posterior_draws(labs[seed].cache, tuning, noise[seed], tau,
                                                              config.samples, seed, "val")
                           for tau in config.temperatures}
        sweeps[seed] = [bmm_posterior.sweep_row(tau, draws, tuning.val_predictions, config.margin)
                        for tau, draws in val_draws[seed].items()]
        chosen[seed] = bmm_posterior.select_temperature(sweeps[seed])
    for seed, tuning in tunings.items():
        tau = chosen[seed]["temperature"]
        sampled_val = bmm_posterior.ensemble(val_draws[seed][tau])
        sampled_test = bmm_posterior.ensemble(bmm_posterior.posterior_draws(labs[seed].cache, tuning, noise[seed],
                                                                            tau, config.samples, seed, "test"))
        point_temps = calibration.fit_temperature(tuning.val_predictions)
        sampled_temps = calibration.fit_temperature(sampled_val)
        decision = bmm_calibration.calibration_decision(
            tuning.test_predictions, sampled_test, calibration.rescaled(tuning.test_predictions, point_temps),
            calibration.rescaled(sampled_test, sampled_temps), cal_study.expert, config.margin, seed=seed,
            eligible=chosen[seed]["eligible_count"] > 0)
        cal_study.runs.append(bmm_calibration.PosteriorRun(
            seed, bmm_calibration.tuning_summary(tuning), noise[seed], sweeps[seed], chosen[seed],
            tuning.val_predictions, tuning.test_predictions, sampled_val, sampled_test, point_temps, sampled_temps,
            decision))
    return cal_study, sweeps, chosen, tunings


def test_calibration_notebook_logic_on_micro(micro_cache):
    config = _calibration(suite="micro", seeds=[0, 1], smoke=True, budget=2, n_initial=1, val_examples=20,
                          gram_examples=16, samples=2, temperatures=[1.0, 10.0, 3000.0], cache=str(micro_cache))
    labs = _labs(config)
    study, sweeps, chosen, tunings = _micro_calibration_study(config, labs)
    run = study.runs[0]
    assert [r["temperature"] for r in run.sweep] == [1.0, 10.0, 3000.0]
    assert run.chosen["temperature"] in (1.0, 10.0, 3000.0) and run.chosen["eligible_count"] >= 1
    assert len(run.sampled_test.extra["members"]) == 2 and set(run.point_temperatures) == set(labs[0].zoo.tasks)
    assert all(v > 0 for v in run.noise.values()) and "held" not in run.decision
    sweep = bmm_calibration.sweep_table(sweeps, chosen, tunings)
    assert len(sweep) == 6 and sum(r["chosen"] for r in sweep) == 2
    rows = bmm_calibration.seed_rows(study)
    assert rows[0]["seed"] == 0 and rows[0]["acc point"] == pytest.approx(run.tuning["test_accuracy"])
    assert [r["task"] for r in bmm_calibration.task_rows(run, study.expert)] == [*labs[0].zoo.tasks, "mean"]
    assert {r["module_type"] for r in bmm_calibration.noise_summary(run.noise)} <= {"attn_in", "attn_out", "mlp_in",
                                                                                     "mlp_out"}
    b6, b6s = bmm_calibration.calibration_claims(study)
    assert (b6.id, b6s.id) == ("B6", "B6s") and b6.suite == "micro"
    metrics = bmm_calibration.calibration_metrics(study)
    assert metrics["seeds"][0]["reliability"]["point"]["examples"] == sum(len(run.point_test.labels[t])
                                                                          for t in labs[0].zoo.tasks)
    assert metrics["verdicts"]["B6"]["outcome"] == b6.verdict
    found = bmm_calibration.calibration_verdicts(study)
    for fig in (bmm_figures.plot_temperature(run, config.margin), bmm_figures.plot_reliability(run),
                bmm_figures.plot_calibration_verdicts(found)):
        assert fig.axes
    # warm: nothing is evaluated again, the noise is read back, the solver is never built
    again = _labs(config)
    second, *_ = _micro_calibration_study(config, again)
    assert all(lab.cache.misses == 0 for lab in again.values()) and second.runs[0].decision == run.decision
