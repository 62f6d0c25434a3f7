"""ACE notebook's verdicts (nbmerge.experiments.ace): each claim comes out held, did not hold or not tested for
constructed predictions; the ablation merges only the models the gate makes distinct; the A3 timing record."""

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nbmerge import diagnostics, protocol
from nbmerge.errors import NbmergeError
from nbmerge.experiments import ace, ace_claims
from nbmerge.methods.ace import CODE_EPS
from nbmerge.params import notebook_config

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def config_of(**overrides) -> ace.AceConfig:
    """The ACE notebook's config at its defaults (its parameters cell), on the micro zoo unless overridden."""
    return notebook_config(ace.AceConfig, NOTEBOOKS / "10_ace.ipynb", **{"suite": "micro", "suites": ["micro"],
                                                                           **overrides})

TASKS = ("a", "b")
N = 400
EXPERT = {t: 1.0 for t in TASKS}


def preds(accuracy, seed=0, tasks=TASKS, n=N, classes=4, labels=None):
    """Predictions whose correct examples are a seeded random subset of the given share (per task), on the
    examples ``labels`` when given (to compare models on the same test set)."""
    rng = np.random.default_rng(seed)
    logits, out = {}, {}
    for task in tasks:
        y = labels[task] if labels is not None else rng.integers(0, classes, n)
        correct = rng.random(len(y)) < accuracy
        guess = np.where(correct, y, (y + 1 + rng.integers(0, classes - 1, len(y))) % classes)
        logits[task] = np.eye(classes, dtype=np.float32)[guess]
        out[task] = y
    return protocol.Predictions(logits, out)


def same_labels(p, accuracy, seed):
    """Other predictions on the same examples as ``p``."""
    return preds(accuracy, seed, tuple(p.tasks), labels=p.labels)


def run(label, test, val=0.5, experts="zoo", alpha=1.0):
    tuned = protocol.Tuned({"method": label}, alpha, [{"alpha": alpha, "val_accuracy": val}])
    return ace.Run(label, label, {}, experts, tuned, test, test.summary(EXPERT), EXPERT)


def bench_of(ace_acc, others, seed=0, val=None, tasks=TASKS):
    """One suite: ACE at ``ace_acc`` and each (label → accuracy) baseline, on shared labels."""
    top = preds(ace_acc, seed, tasks)
    runs = {"ace": run("ace", top, val=0.9)}
    for k, (label, acc) in enumerate(others.items()):
        runs[label] = run(label, same_labels(top, acc, seed + 10 + k), val=(val or {}).get(label, acc))
    return runs

# ----------------------------------------------------------------------------------------------------- recipes

def test_ace_recipes_are_canonical_so_other_notebooks_share_them():
    assert diagnostics.ace_params(1e-5) == {"eps": 1e-5}
    assert diagnostics.ace_params(CODE_EPS) == {}
    assert diagnostics.ace_params(1e-5, adaptive="auto", prior=True) == {"eps": 1e-5}
    assert diagnostics.ace_params(1e-5, **diagnostics.FORCED_ON) == {"eps": 1e-5, "adaptive": "on", "refine": "on"}
    config = config_of()
    runs = {label: (m, p) for label, m, p in ace.headline_runs(config)}
    assert runs["wudi"] == ("wudi", {"iters": 300}) and runs["tsv"] == ("tsv", {})
    assert set(runs) == {"ace", "ace (ε=1e-2, code)", *config.baselines}


def test_config_is_built_from_the_notebook_and_checked():
    config = notebook_config(ace.AceConfig, NOTEBOOKS / "10_ace.ipynb")
    assert config.suite == "text8" and config.suites == ("text8",) and config.val_examples == 100
    assert config.eps == 1e-5 and config.scale_grid == protocol.SCALE_GRID
    with pytest.raises(NbmergeError, match="scale_grid"):
        config_of(scale_grid=[])
    with pytest.raises(NbmergeError, match="val_examples"):
        config_of(val_examples="100")
    with pytest.raises(TypeError):
        ace.AceConfig()  # no defaults: the notebook's parameters cell is the only place they are written


def test_best_other_is_chosen_on_validation_not_test():
    runs = bench_of(0.8, {"tsv": 0.75, "ties": 0.6}, val={"tsv": 0.5, "ties": 0.7})
    assert ace_claims.validation_best_other(runs) == "ties"  # best on validation, although TSV is better on test


# ----------------------------------------------------------------------------------------------------- A1, A2

def test_a1_is_not_tested_with_its_reason():
    c = ace_claims.claim_a1()
    assert c.verdict == "not tested" and "GPT-2" in c.evidence and c.id == "A1" and "BRIEF" not in c.source


def test_sota_holds_only_when_ace_beats_every_baseline():
    held = ace_claims.claim_sota({"s8": bench_of(0.9, {"tsv": 0.7, "ties": 0.6})})
    assert held.verdict == "held" and held.id == "A2" and "arXiv 2603.02945" in held.source
    assert "tsv" in held.ours  # the closest competitor, with its interval
    lost = ace_claims.claim_sota({"s8": bench_of(0.7, {"tsv": 0.9, "ties": 0.6})})
    assert lost.verdict == "did not hold"
    # a noisy small edge: the interval crosses 0 → not "beats"
    close = ace_claims.claim_sota({"s8": bench_of(0.71, {"tsv": 0.70})})
    assert close.verdict == "did not hold"
    # a baseline identical to ACE: collapsed, so the claim cannot be decided
    runs = bench_of(0.9, {"tsv": 0.6})
    runs["ties"] = run("ties", runs["ace"].test)
    assert ace_claims.claim_sota({"s8": runs}).verdict == "not tested"
    # every suite must hold
    assert ace_claims.claim_sota({"s8": bench_of(0.9, {"tsv": 0.7}), "s14": bench_of(0.7, {"tsv": 0.9})}).verdict == \
        "did not hold"


def test_margin_growth_needs_two_task_counts_and_an_interval_above_zero():
    one = ace_claims.claim_growth({"s8": bench_of(0.9, {"tsv": 0.7})})
    assert one.verdict == "not tested" and "profile paper" in one.evidence
    three = ("a", "b", "c")
    grows = ace_claims.claim_growth({"s8": bench_of(0.80, {"tsv": 0.75}, seed=1),
                              "s20": bench_of(0.60, {"tsv": 0.30}, seed=2, tasks=three)})
    assert grows.verdict == "held", grows.evidence
    assert "growth" in grows.ours
    flat = ace_claims.claim_growth({"s8": bench_of(0.8, {"tsv": 0.7}, seed=4),
                             "s20": bench_of(0.8, {"tsv": 0.7}, seed=5, tasks=three)})
    assert flat.verdict == "did not hold"

# ----------------------------------------------------------------------------------------------------- A3

def _timing(ace_s, tsv_s, wudi_s):
    return {"seconds": {k: {"samples": [v], "median": v} for k, v in (("ace", ace_s), ("tsv", tsv_s),
                                                                      ("wudi", wudi_s))},
            "environment": {"threads": 2, "device": "cpu"}, "date": "today"}


def test_cost_thresholds():
    assert ace_claims.claim_cost(_timing(2.0, 1.0, 50.0), "s8").verdict == "held"
    assert ace_claims.claim_cost(_timing(4.0, 1.0, 50.0), "s8").verdict == "did not hold"    # > 3× TSV-M
    assert ace_claims.claim_cost(_timing(2.0, 1.0, 8.0), "s8").verdict == "did not hold"     # not 5× below WUDI
    assert ace_claims.claim_cost(None, "s8").verdict == "not tested"


def test_merge_timing_is_measured_once_then_read_back(tmp_path, tiny, monkeypatch):
    base, experts = tiny
    cache = SimpleNamespace(root=tmp_path)
    lab = ace.Lab(SimpleNamespace(manifest={"suite": "tiny"}), cache, base, experts)
    config = config_of(wudi_iters=2, timing_repeats=2, timing_cap_s=60.0)
    lab.merge_seconds[ace._recipe_key(protocol.method_recipe("tsv", {}))] = [123.0]   # a sample from tuning
    first = ace.merge_timing(lab, config, log=lambda *_: None)
    assert set(first["seconds"]) == {"ace", "tsv", "wudi"} and not first["cached"]
    assert first["seconds"]["tsv"]["samples"][0] == 123.0 and len(first["seconds"]["tsv"]["samples"]) == 1  # capped
    assert all(len(v["samples"]) == 2 for k, v in first["seconds"].items() if k != "tsv")

    def no_merge(*args, **kwargs):
        raise AssertionError("a warm rerun must not merge again")

    monkeypatch.setattr(sys.modules["nbmerge.merging"], "merge", no_merge)
    again = ace.merge_timing(lab, config, log=lambda *_: None)
    assert again["cached"] and again["seconds"] == first["seconds"]


# ----------------------------------------------------------------------------------------------------- A4, A5

def ladder(experts, accuracies, gate_fraction, extras=None, seed=0, labels=None):
    """A ladder result as :func:`ace.ablation` returns it; ``accuracies`` per step (None: same as previous)."""
    top = preds(0.5, seed)
    runs, steps, previous = {}, [], None
    for index, ((label, switches, gated), acc) in enumerate(zip(diagnostics.LADDER, accuracies)):
        same = acc is None
        runs[label] = previous if same else run(label, same_labels(top, acc, seed + index), experts=experts)
        steps.append({"step": label, "same_as": diagnostics.LADDER[index - 1][0] if same else ""})
        previous = runs[label]
    for k, (label, acc) in enumerate((extras or {}).items()):
        runs[label] = run(label, same_labels(top, acc, seed + 50 + k), experts=experts)
    gate = {"fired_fraction": gate_fraction, "max_gamma": 0.1 if gate_fraction == 0 else 0.9, "matrices": 10}
    return {"experts": experts, "gate": gate, "steps": steps, "runs": runs}


def test_components_are_decided_where_active_only():
    zoo = ladder("zoo", [0.6, None, 0.8, None], 0.0, {"forced on": 0.8})
    alone = ace_claims.claim_components([zoo], "s8")
    assert alone.verdict == "not tested" and "tested nowhere" in alone.evidence  # the gated ones cannot be tested
    assert "gate fired on no matrix" in alone.evidence
    hetero = ladder("variants:x", [0.5, 0.65, 0.75, 0.9], 0.6)
    assert ace_claims.claim_components([zoo, hetero], "s8").verdict == "held"
    worse = ladder("variants:x", [0.5, 0.65, 0.75, 0.6], 0.6)   # refinement hurts where it is active
    assert ace_claims.claim_components([zoo, worse], "s8").verdict == "did not hold"
    prior_flat = ladder("zoo", [0.6, None, 0.6, None], 0.0)     # the prior adds nothing on the zoo's experts
    assert ace_claims.claim_components([prior_flat, hetero], "s8").verdict == "did not hold"


def test_gating_behaviour():
    zoo = ladder("zoo", [0.6, None, 0.8, None], 0.0, {"forced on": 0.8})
    # forced on gains nothing measurable (same accuracy, other mistakes); the gate helps where it fires
    hetero = ladder("variants:x", [0.5, 0.6, 0.7, 0.9], 0.6, {"gated components off": 0.7})
    held = ace_claims.claim_gating(zoo, hetero, 10.0, "s8")
    assert held.verdict == "held", held.evidence
    assert held.id == "A5"
    # forcing the components on helps a lot where the gate is off: the gate left a gain on the table
    helped = ladder("zoo", [0.6, None, 0.6, None], 0.0, {"forced on": 0.9})
    assert ace_claims.claim_gating(helped, hetero, 5.0, "s8").verdict == "did not hold"
    # the gate fires, but the gated components do not beat ACE without them
    useless = ladder("variants:x", [0.5, 0.6, 0.7, 0.7], 0.6, {"gated components off": 0.9})
    assert ace_claims.claim_gating(zoo, useless, 5.0, "s8").verdict == "did not hold"
    # heterogeneous experts on which the gate never fires are no test of (b)
    silent = ladder("variants:x", [0.5, None, 0.7, None], 0.0, {"gated components off": 0.7})
    assert ace_claims.claim_gating(zoo, silent, 5.0, "s8").verdict == "not tested"
    # a margin too tight for the data: inconclusive
    assert ace_claims.claim_gating(zoo, hetero, 0.1, "s8").verdict == "not tested"


def test_ablation_merges_only_what_the_gate_makes_distinct(monkeypatch):
    calls = []

    def fake_run(lab, label, method, params, config, grid=None):
        assert grid == config.ablation_grid
        calls.append(params)
        return run(label, preds(0.5 + 0.01 * len(calls), seed=len(calls)))

    monkeypatch.setattr(ace, "run_method", fake_run)
    config = config_of(eps=1e-5)
    lab = SimpleNamespace(experts_name="zoo")
    off = ace.ablation(lab, config, {"fired_fraction": 0.0}, extras=("forced on", "gated components off"),
                       log=lambda *_: None)
    # basic (= + normalisation), full ACE (= + prior = + refinement = components off), forced on
    assert len(calls) == 3 and {"eps": 1e-5} in calls   # full ACE under the benchmark's recipe
    assert [s["same_as"] for s in off["steps"]] == ["", "basic closed form", "", "+ structural prior"]
    assert off["runs"]["gated components off"] is off["runs"]["+ spectral refinement"]
    calls.clear()
    on = ace.ablation(lab, config, {"fired_fraction": 0.4}, extras=("gated components off",), log=lambda *_: None)
    assert len(calls) == 5 and not any(s["same_as"] for s in on["steps"])


# ----------------------------------------------------------------------------------------------------- teaching

def test_the_validation_table_marks_the_chosen_alpha_and_the_bootstrap_figure_draws():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nbmerge.experiments import ace_figures

    tuned = protocol.Tuned({"method": "x"}, 1.0, [{"alpha": 0.5, "val_accuracy": 0.4},
                                                  {"alpha": 1.0, "val_accuracy": 0.6}])
    assert ace_figures.validation_rows({"x": SimpleNamespace(tuned=tuned)}) == [
        {"method": "x", "α = 0.5": "40.0%", "α = 1": "<b>60.0%</b>"}]
    a = preds(0.8)
    b = same_labels(a, 0.6, 1)
    draws = protocol.bootstrap_samples(a, b, EXPERT)
    interval = protocol.paired_difference(a, b, EXPERT)   # the same draws, so the same quantiles
    assert protocol.quantile_interval(draws, interval.diff) == pytest.approx(
        {"diff": interval.diff, "low": interval.low, "high": interval.high})
    fig = ace_figures.plot_bootstrap(draws, interval, "ACE − x")
    assert fig.axes
    plt.close(fig)
