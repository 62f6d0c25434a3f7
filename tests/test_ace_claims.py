"""ACE notebook's claims (nbmerge.experiments.ace_claims): each comes out held, contradicted, inconclusive or not
tested for constructed predictions; the ablation merges only the models the gate makes distinct, on the notebook's
one α grid; the A3 timing record (interleaved rounds) and its bootstrap decision."""

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nbmerge.evaluate import diagnostics, protocol
from nbmerge.tune import alpha_tuning
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


def run(label, test, val=0.5, experts="zoo", alpha=1.0, more=()):
    """A Run at one seed, or at several when ``more`` gives the other seeds' test predictions."""
    tuned = alpha_tuning.Tuned({"method": label}, alpha, [{"alpha": alpha, "val_accuracy": val}])
    seeds = [(0, tuned, test)] + [(k + 1, tuned, t) for k, t in enumerate(more)]
    return ace.Run(label, label, {}, experts, tuned, test, test.summary(EXPERT), EXPERT, seeds)


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
    assert config.suite == "text8" and config.suites == ("text8",) and config.val_examples == 50
    assert config.eps == 1e-5 and config.scale_grid == alpha_tuning.SCALE_GRID
    assert config.seeds == (0, 1, 2) and config.ablation_seeds == 1 and config.timing_repeats >= 5
    assert not hasattr(config, "ablation_grid")   # one α grid for every model of the notebook
    with pytest.raises(NbmergeError, match="scale_grid"):
        config_of(scale_grid=[])
    with pytest.raises(NbmergeError, match="val_examples"):
        config_of(val_examples="100")
    with pytest.raises(NbmergeError, match="ablation_seeds"):
        config_of(ablation_seeds=4)
    with pytest.raises(NbmergeError, match="must not repeat"):
        config_of(seeds=[1, 1])
    with pytest.raises(TypeError):
        ace.AceConfig()  # no defaults: the notebook's parameters cell is the only place they are written
    assert ace.validation_seeds(config_of(val_examples=0)) == (0,)      # the whole split: one draw
    assert ace.run_seeds(ace.CODE_LABEL, config) == (0,) and ace.run_seeds("tsv", config) == (0, 1, 2)


def test_best_other_is_chosen_on_validation_not_test():
    runs = bench_of(0.8, {"tsv": 0.75, "ties": 0.6}, val={"tsv": 0.5, "ties": 0.7})
    assert ace_claims.validation_best_other(runs) == "ties"  # best on validation, although TSV is better on test


# ----------------------------------------------------------------------------------------------------- A1, A2

OUTCOMES = ("held", "contradicted", "inconclusive", "not tested")


def _check(c):
    """The claim's outcome is one of the four and follows from its own interval and threshold."""
    assert c.verdict in OUTCOMES and "did not hold" not in c.evidence and c.decision.outcome == c.verdict
    d = c.decision
    if d.outcome != "not tested":
        lo, hi = d.interval
        if isinstance(d.threshold, list):
            expected = ("held" if d.threshold[0] < lo and hi < d.threshold[1] else
                        "contradicted" if lo >= d.threshold[1] or hi <= d.threshold[0] else "inconclusive")
        else:
            expected = ("held" if lo > d.threshold else "contradicted" if hi <= d.threshold or (
                d.effect is not None and d.effect > d.threshold and hi < d.effect) else "inconclusive")
        assert d.outcome == expected, (c.id, d.outcome, d.interval, d.threshold, d.effect)
    return c.verdict


def test_a1_is_not_tested_with_its_reason():
    c = ace_claims.claim_a1()
    assert c.verdict == "not tested" and "GPT-2" in c.evidence and c.id == "A1" and "BRIEF" not in c.source


def test_sota_combines_every_baseline():
    held = ace_claims.claim_sota({"s8": bench_of(0.9, {"tsv": 0.7, "ties": 0.6})})
    assert _check(held) == "held" and held.id == "A2a" and "arXiv 2603.02945" in held.source
    assert "tsv" in held.ours  # the least favourable comparison, with its interval
    lost = ace_claims.claim_sota({"s8": bench_of(0.7, {"tsv": 0.9, "ties": 0.6})})
    assert _check(lost) == "contradicted"
    # a noisy small edge: the interval holds both 0 and the paper's +1.6 over TSV-M → inconclusive, not refuted
    close = ace_claims.claim_sota({"s8": bench_of(0.71, {"tsv": 0.70})})
    assert _check(close) == "inconclusive" and "detects effects" in close.evidence
    assert close.decision.interval[0] < 0 < 1.6 < close.decision.interval[1]
    # one baseline held, another inconclusive: the claim is inconclusive, with the least favourable one's numbers
    mixed = ace_claims.claim_sota({"s8": bench_of(0.71, {"tsv": 0.70, "ties": 0.4})})
    assert _check(mixed) == "inconclusive" and "least favourable" in mixed.evidence and "tsv" in mixed.ours
    # a baseline identical to ACE: that comparison is not tested, so "beats every" is undecided
    runs = bench_of(0.9, {"tsv": 0.6})
    runs["ties"] = run("ties", runs["ace"].test)
    undecided = ace_claims.claim_sota({"s8": runs})
    assert _check(undecided) == "not tested" and "collapsed" in undecided.evidence
    assert "every other comparison held" in undecided.evidence
    # ... and a contradicted comparison still contradicts
    runs = bench_of(0.6, {"tsv": 0.9})
    runs["ties"] = run("ties", runs["ace"].test)
    assert _check(ace_claims.claim_sota({"s8": runs})) == "contradicted"
    # every comparison vacuous: not tested
    alone = bench_of(0.9, {})
    alone["ties"] = run("ties", alone["ace"].test)
    assert _check(ace_claims.claim_sota({"s8": alone})) == "not tested"
    # every suite must hold
    assert ace_claims.claim_sota({"s8": bench_of(0.9, {"tsv": 0.7}), "s14": bench_of(0.7, {"tsv": 0.9})}).verdict == \
        "contradicted"


def test_sota_takes_every_seed_into_one_interval():
    top = preds(0.8, 0)
    others = [same_labels(top, 0.8, k) for k in (1, 2)]
    tsv = [same_labels(top, 0.7, k) for k in (3, 4, 5)]
    runs = {"ace": run("ace", top, 0.9, more=others), "tsv": run("tsv", tsv[0], 0.7, more=tsv[1:])}
    c = ace_claims.claim_sota({"s8": runs})
    assert _check(c) == "held" and "3 seeds (0, 1, 2)" in c.evidence


def test_margin_growth_needs_two_task_counts():
    one = ace_claims.claim_growth({"s8": bench_of(0.9, {"tsv": 0.7})})
    assert _check(one) == "not tested" and "profile paper" in one.evidence and one.id == "A2b"
    three = ("a", "b", "c")
    grows = ace_claims.claim_growth({"s8": bench_of(0.80, {"tsv": 0.75}, seed=1),
                                     "s20": bench_of(0.60, {"tsv": 0.30}, seed=2, tasks=three)})
    assert _check(grows) == "held", grows.evidence
    assert "growth" in grows.ours
    flat = ace_claims.claim_growth({"s8": bench_of(0.8, {"tsv": 0.7}, seed=4),
                                    "s20": bench_of(0.8, {"tsv": 0.7}, seed=5, tasks=three)})
    assert _check(flat) == "inconclusive"
    shrinks = ace_claims.claim_growth({"s8": bench_of(0.9, {"tsv": 0.5}, seed=6),
                                       "s20": bench_of(0.6, {"tsv": 0.6}, seed=7, tasks=three)})
    assert _check(shrinks) == "contradicted"

# ----------------------------------------------------------------------------------------------------- A3

def _timing(ace_s, tsv_s, wudi_s, rounds=5, noise=0.02, seed=0):
    rng = np.random.default_rng(seed)
    samples = {k: list(v * (1 + noise * rng.standard_normal(rounds))) for k, v in (("ace", ace_s), ("tsv", tsv_s),
                                                                                  ("wudi", wudi_s))}
    return {"seconds": {k: {"samples": v, "median": float(np.median(v))} for k, v in samples.items()},
            "environment": {"threads": 2, "device": "cpu"}, "date": "today",
            "reads": {"bytes_read": 9 * 2 ** 20, "experts": 8, "parameters": 1e6, "matrices": 4}, "wudi_steps": 300}


def test_cost_is_decided_by_a_bootstrap_over_interleaved_rounds():
    held = ace_claims.claim_cost(_timing(1.2, 1.0, 30.0), "s8")
    assert _check(held) == "held" and held.id == "A3" and "5 interleaved rounds" in held.evidence
    assert "MiB" in held.evidence                           # a byte count beside the times
    # ACE ten times TSV-M: not comparable, however cheap against WUDI
    assert _check(ace_claims.claim_cost(_timing(10.0, 1.0, 300.0), "s8")) == "contradicted"
    # ACE slower than WUDI
    assert _check(ace_claims.claim_cost(_timing(2.0, 1.5, 1.0), "s8")) == "contradicted"
    # ACE near 2× TSV-M with noisy rounds: the interval straddles the band's edge
    noisy = ace_claims.claim_cost(_timing(2.0, 1.0, 30.0, noise=0.3, seed=3), "s8")
    assert _check(noisy) == "inconclusive", noisy.evidence
    short = ace_claims.claim_cost(_timing(1.2, 1.0, 30.0, rounds=1), "s8")
    assert _check(short) == "not tested" and "≥ 5" in short.evidence
    assert ace_claims.claim_cost(None, "s8").verdict == "not tested"


def test_merge_timing_interleaves_rounds_then_is_read_back(tmp_path, tiny, monkeypatch):
    base, experts = tiny
    cache = SimpleNamespace(root=tmp_path, log=lambda *_: None)
    lab = ace.Lab(SimpleNamespace(suite="tiny"), cache, {}, models=(base, experts))
    config = config_of(wudi_steps=2, timing_repeats=3)
    order = []
    import nbmerge.engine.merging

    real = nbmerge.engine.merging.merge

    def spy(method, *args, **kwargs):
        order.append(method)
        return real(method, *args, **kwargs)

    monkeypatch.setattr(sys.modules["nbmerge.engine.merging"], "merge", spy)
    first = ace.merge_timing(lab, config, log=lambda *_: None)
    assert set(first["seconds"]) == {"ace", "tsv", "wudi"} and not first["cached"]
    assert all(len(v["samples"]) == 3 for v in first["seconds"].values()) and len(first["rounds"]) == 3
    assert order[:3] == ["ace", "tsv", "wudi"] and order[3:6] == ["tsv", "wudi", "ace"]   # rotated rounds
    assert first["reads"]["experts"] == len(experts) and first["reads"]["bytes_read"] > 0

    def no_merge(*args, **kwargs):
        raise AssertionError("a warm rerun must not merge again")

    monkeypatch.setattr(sys.modules["nbmerge.engine.merging"], "merge", no_merge)
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


def test_components_strict_reading_is_decided_where_active_only():
    zoo = ladder("zoo", [0.6, None, 0.8, None], 0.0, {"forced on": 0.8})
    alone = ace_claims.claim_components([zoo], "s8")
    # the gated components are active nowhere: the strict reading is undecided (the prior alone held)
    assert _check(alone) == "not tested" and "active in no setting" in alone.evidence and alone.id == "A4s"
    assert "gate fired on no matrix" in alone.evidence and alone.decision.reading == "strict"
    hetero = ladder("variants:x", [0.5, 0.65, 0.75, 0.9], 0.6)
    assert _check(ace_claims.claim_components([zoo, hetero], "s8")) == "held"
    worse = ladder("variants:x", [0.5, 0.65, 0.75, 0.6], 0.6)   # refinement hurts where it is active
    assert _check(ace_claims.claim_components([zoo, worse], "s8")) == "contradicted"
    prior_flat = ladder("zoo", [0.6, None, 0.6, None], 0.0)     # the prior changes nothing measurable
    assert _check(ace_claims.claim_components([prior_flat, hetero], "s8")) == "inconclusive"
    assert _check(ace_claims.claim_components([ladder("zoo", [0.6, None, None, None], 0.0)], "s8")) == "not tested"


def test_components_paper_reading_is_the_ladders_net_effect():
    # the prior loses a little on its own (as on RoBERTa-Large), the full ACE still beats the basic form
    hetero = ladder("variants:x", [0.5, 0.75, 0.72, 0.9], 0.6)
    zoo = ladder("zoo", [0.6, None, 0.8, None], 0.0)
    paper = ace_claims.claim_components_paper([zoo, hetero], "s8")
    assert _check(paper) == "held" and paper.id == "A4" and paper.decision.reading == "paper"
    strict = ace_claims.claim_components([zoo, hetero], "s8")
    assert strict.verdict in ("contradicted", "inconclusive")       # the prior's step does not add
    no_gain = ladder("variants:x", [0.8, 0.75, 0.72, 0.6], 0.6)
    assert _check(ace_claims.claim_components_paper([zoo, no_gain], "s8")) == "contradicted"


def test_forcing_on_where_the_gate_is_off_is_a_within_claim():
    zoo = ladder("zoo", [0.6, None, 0.8, None], 0.0, {"forced on": 0.8})
    # the same accuracy (other mistakes), a wide margin: held; a tight one: inconclusive
    held = ace_claims.claim_forced(zoo, 10.0, "s8")
    assert _check(held) == "held" and held.id == "A5a" and held.decision.threshold == [-10.0, 10.0]
    assert _check(ace_claims.claim_forced(zoo, 0.5, "s8")) == "inconclusive"
    # forcing on helps a lot where the gate is off: the gate left a gain on the table
    helped = ladder("zoo", [0.6, None, 0.6, None], 0.0, {"forced on": 0.9})
    assert _check(ace_claims.claim_forced(helped, 5.0, "s8")) == "contradicted"
    # the gate fires on the zoo's experts: not the setting of the claim
    fires = ladder("zoo", [0.6, 0.7, 0.8, 0.8], 0.2, {"forced on": 0.8})
    assert _check(ace_claims.claim_forced(fires, 5.0, "s8")) == "not tested"


def test_the_gate_helps_where_it_fires():
    hetero = ladder("variants:x", [0.5, 0.6, 0.7, 0.9], 0.6, {"gated components off": 0.7})
    held = ace_claims.claim_gate_helps(hetero, "s8")
    assert _check(held) == "held" and held.id == "A5b"
    useless = ladder("variants:x", [0.5, 0.6, 0.7, 0.7], 0.6, {"gated components off": 0.9})
    assert _check(ace_claims.claim_gate_helps(useless, "s8")) == "contradicted"
    silent = ladder("variants:x", [0.5, None, 0.7, None], 0.0, {"gated components off": 0.7})
    assert _check(ace_claims.claim_gate_helps(silent, "s8")) == "not tested"
    assert _check(ace_claims.claim_gate_helps(None, "s8")) == "not tested"


def test_claim_ids_are_unique_and_complete():
    zoo = ladder("zoo", [0.6, None, 0.8, None], 0.0, {"forced on": 0.8})
    hetero = ladder("variants:x", [0.5, 0.6, 0.7, 0.9], 0.6, {"gated components off": 0.7})
    claims = ace_claims.ace_claims({"s8": bench_of(0.9, {"tsv": 0.7})}, zoo, hetero, _timing(1.2, 1.0, 30.0),
                                   config_of())
    assert [c.id for c in claims] == ["A1", "A2a", "A2b", "A3", "A4", "A4s", "A5a", "A5b"]
    assert all(_check(c) for c in claims)


def test_ablation_merges_only_what_the_gate_makes_distinct_on_the_one_grid(monkeypatch):
    calls = []

    def fake_run(lab, label, method, params, config, seeds=None):
        assert seeds == (0,)          # the first ablation_seeds; the grid is config.scale_grid inside run_method
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

    tuned = alpha_tuning.Tuned({"method": "x"}, 1.0, [{"alpha": 0.5, "val_accuracy": 0.4},
                                                  {"alpha": 1.0, "val_accuracy": 0.6}])
    assert ace_figures.validation_rows({"x": SimpleNamespace(tuned=tuned)}) == [
        {"method": "x", "α = 0.5": "40.0%", "α = 1": "<b>60.0%</b>"}]
    a = preds(0.8)
    b = same_labels(a, 0.6, 1)
    from nbmerge.evaluate import verdicts

    point, draws, _ = verdicts.hierarchical_samples([verdicts.task_differences(a, b, EXPERT)])
    decision = verdicts.decide(point, draws)                 # the draws' 2.5% and 97.5% quantiles
    assert decision.interval == pytest.approx(list(np.quantile(draws, [0.025, 0.975])))
    fig = ace_figures.plot_bootstrap(draws, decision, "ACE − x")
    assert fig.axes
    plt.close(fig)
    with pytest.raises(ValueError, match="one task count"):
        ace_figures.plot_task_count([{"method": "ace", "tasks": 8, "normalized": 0.9}])


def test_every_figure_of_the_notebook_goes_through_figure_with_alt_text():
    import json

    cells = ["".join(c["source"]) for c in json.loads((NOTEBOOKS / "10_ace.ipynb").read_text())["cells"]
             if c["cell_type"] == "code"]
    source = "\n".join(cells)
    assert source.count("ace_figures.plot_") == source.count("figure(ace_figures.plot_") == 3
    assert "no task-count plot" in source      # the one-suite run says why the trend plot is absent
