"""BMM claims B5a/B5b (notebook 22_bmm_datafree, nbmerge.experiments.bmm_datafree): one seed's comparison of the Gram
sources, the equivalence decision and the theorem claim on synthetic predictions and alignment rows (held,
contradicted, inconclusive, not tested), the search box's edges, and the notebook's steps end to end on the `micro` zoo
with the config its parameters cell declares (a second run recomputes nothing)."""

import math
import time
from types import SimpleNamespace

import numpy as np
import pytest

from tests.fakes import _datafree, _labs, _preds

from nbmerge.tune import alpha_tuning
from nbmerge.evaluate.diagnostics import alignment_summary, gram_alignment_vs_chance, ratio_interval
from nbmerge.experiments import bmm_datafree, bmm_figures
from nbmerge.tune import study


# ---------------------------------------------------------------------------------------- verdicts

def _task_preds(correct_mask, labels, classes=4, confidence=3.0):
    """Logits that predict the label where ``correct_mask`` and the next class elsewhere."""
    predicted = np.where(correct_mask, labels, (labels + 1) % classes)
    logits = np.zeros((len(labels), classes))
    logits[np.arange(len(labels)), predicted] = confidence
    return logits


def _models(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    base = rng.random(n) < 0.70
    return rng, labels, base


def test_compare_sources_describes_one_seed_and_names_vacuous_units():
    rng, labels, anchor_mask = _models()
    expert = {"a": 0.9}

    def model(mask):
        return _preds({"a": _task_preds(mask, labels)}, {"a": labels})

    anchor = model(anchor_mask)
    improved = anchor_mask | (rng.random(len(labels)) < 0.3)
    unit = bmm_datafree.compare_sources(model(improved), model(improved), anchor, expert)
    assert unit["why"] is None and unit["free_vs_anchor"]["low"] > 0 and unit["gap"]["diff"] == 0
    assert "held" not in unit
    collapsed = bmm_datafree.compare_sources(anchor, anchor, anchor, expert)
    assert "collapsed onto the anchor" in collapsed["why"]
    chance = model(rng.random(len(labels)) < 0.25)
    assert "chance" in bmm_datafree.compare_sources(chance, chance, anchor, expert)["why"]


def _source_study(pairs, anchor_preds, margin=2.0, edges=False):
    """A SourceStudy of synthetic (data, free) test predictions, one pair per seed, on one anchor."""
    study = bmm_datafree.SourceStudy("s", ["a"], {"a": 0.9}, margin)
    anchor = SimpleNamespace(name="task_arithmetic", alpha=0.5, test=anchor_preds, tuned=SimpleNamespace(curve=[]))
    bounds = {"attn_in": (-4.0, 2.0), "scale": (0.5, 1.5)}
    for seed, (data, free) in enumerate(pairs):
        for gram, preds in (("data", data), ("free", free)):
            best = {"attn_in": -4.0 if edges and gram == "data" else -1.0, "scale": 1.5 if edges else 1.0}
            search = SimpleNamespace(best_params=best, replayed=0, space=SimpleNamespace(bounds=bounds))
            tuning = SimpleNamespace(val_accuracy=0.7, test_predictions=preds, test_accuracy=preds.mean_accuracy(),
                                     search=search)
            study.add(anchor, gram, seed, tuning, seconds=0.0)
        study.decide("task_arithmetic", seed)
    return study


def test_equivalence_decision_over_seeds_and_examples():
    rng, labels, anchor_mask = _models(n=3000)

    def model(mask):
        return _preds({"a": _task_preds(mask, labels)}, {"a": labels})

    anchor = model(anchor_mask)
    pairs, far, noisy = [], [], []
    for _ in range(3):
        improved = anchor_mask | (rng.random(len(labels)) < 0.3)
        other = improved.copy()
        flip = np.concatenate([rng.choice(np.flatnonzero(improved), 20, replace=False),
                               rng.choice(np.flatnonzero(~improved), 20, replace=False)])
        other[flip] = ~other[flip]                       # ±0 points, 1.3% of examples differ
        pairs.append((model(improved), model(other)))
        far.append((model(improved), anchor))            # data-free ~8 points behind
        shaky = improved.copy()
        pick = rng.choice(len(labels), 900, replace=False)
        shaky[pick] = rng.random(900) < 0.79            # as good on average, 10% of examples differ
        noisy.append((model(improved), model(shaky)))
    held, _ = bmm_datafree.equivalence_decision(_source_study(pairs, anchor))
    assert held.outcome == "held" and held.threshold == [-2.0, 2.0] and held.effect == bmm_datafree.PAPER_GAP
    contradicted, _ = bmm_datafree.equivalence_decision(_source_study(far, anchor))
    assert contradicted.outcome == "contradicted" and contradicted.interval[1] < -2.0
    unsure, _ = bmm_datafree.equivalence_decision(_source_study(noisy, anchor, margin=0.5))
    assert unsure.outcome == "inconclusive" and unsure.mde is not None
    vacuous, left_out = bmm_datafree.equivalence_decision(_source_study([(anchor, anchor)] * 2, anchor))
    assert vacuous.outcome == "not tested" and len(left_out) == 2 and "collapsed" in vacuous.why
    # a seed left out is named, the others still decide
    mixed, left_out = bmm_datafree.equivalence_decision(_source_study([(anchor, anchor)] + pairs[1:], anchor))
    assert mixed.outcome == "held" and left_out[0].startswith("task_arithmetic seed 0")
    # claims: B5a with the interval and the box edge said beside it, B5b from the alignment rows
    study = _source_study(pairs, anchor, edges=True)
    b5a, b5b = bmm_datafree.datafree_claims(study, [_aligned() for _ in range(10)], seed=0)
    assert (b5a.id, b5b.id) == ("B5a", "B5b") and b5a.verdict == "held" and b5a.decision.reading == "paper"
    assert "box" in b5a.evidence and "scale = 1.5 (upper bound 1.5)" in b5a.evidence
    assert "attn_in = -4 (lower bound -4)" in b5a.evidence
    assert "did not hold" not in b5a.evidence + b5b.evidence
    rows = bmm_datafree.source_rows(study)
    assert len(rows) == 3 * 3 and rows[1]["box edge"].startswith("attn_in = -4")
    assert bmm_figures.plot_sources(study).axes
    assert bmm_datafree.datafree_claims(None, [])[0].verdict == "not tested"


def test_box_edges_read_the_best_trial_against_the_bounds():
    search = SimpleNamespace(best_params={"a": -4.0, "b": 0.3, "scale": 1.4995},
                             space=SimpleNamespace(bounds={"a": (-4.0, 2.0), "b": (-4.0, 2.0), "scale": (0.5, 1.5)}))
    edges = bmm_datafree.box_edges(search)
    assert [(e["param"], e["side"]) for e in edges] == [("a", "lower"), ("scale", "upper")]
    assert bmm_datafree.box_edges(SimpleNamespace(best_params={"b": 0.0}, space=search.space)) == []


def _aligned(cosine=0.5, overlap=0.4, chance_cosine=0.1, chance=0.1):
    return {"module_type": "mlp_in", "depth": 0, "cosine": cosine, "chance_cosine": chance_cosine,
            "overlap": overlap, "chance": chance, "cosine_ratio": cosine / chance_cosine,
            "overlap_ratio": overlap / chance}


def test_theorem_claim_uses_an_interval_over_modules():
    rows = [_aligned(0.3 + 0.01 * i, 0.2 + 0.01 * i) for i in range(20)]
    c = bmm_datafree.theorem_claim(rows, "s")
    assert c.verdict == "held" and c.id == "B5b" and "Theorem 1" in c.claim and c.decision.threshold == 1.0
    below = [_aligned(0.05 + 0.001 * i, 0.3) for i in range(20)]          # cosine under its baseline everywhere
    assert bmm_datafree.theorem_claim(below, "s").verdict == "contradicted"
    mixed = [_aligned(0.05, 0.05) if i % 2 else _aligned() for i in range(20)]   # medians straddle 1
    assert bmm_datafree.theorem_claim(mixed, "s").verdict == "inconclusive"
    assert bmm_datafree.theorem_claim([], "s").verdict == "not tested"
    interval = ratio_interval(rows, "overlap_ratio")
    assert interval["low"] <= interval["median"] <= interval["high"] and interval["above"] == 20


# ------------------------------------------------------------------------------------------- on the micro zoo

def _alignment(config, cache, zoo):
    """Notebook 22, section 1: the per-module alignment, kept beside the trial cache."""
    def measure():
        from nbmerge.pools.zoo import expert_grams, load_models

        base, experts = load_models(zoo)
        grams = expert_grams(zoo, config.gram_examples, config.seed)
        return gram_alignment_vs_chance(base, experts, grams, config.k_fraction, config.device)

    return study.stored(cache.root, "bmm-alignment", bmm_datafree.alignment_key(config), measure, cache.log)


def _micro_source_study(config, labs):
    """Notebook 22, section 2: per anchor and seed (its own validation subset), BMM with both Gram sources."""
    first = labs[config.seeds[0]]
    sources = bmm_datafree.SourceStudy(first.suite, list(first.zoo.tasks), first.expert, config.margin,
                                       seed=config.seed)
    for anchor in config.anchors:
        for seed, lab in labs.items():
            tuned = study.tune_anchor(lab, anchor, gram_examples=config.gram_examples, gram_seed=config.seed,
                                      device=config.device)
            for variant in ("data", "free"):
                start = time.perf_counter()
                tuning = study.run_search(lab, tuned, variant, strategy=config.strategy, seed=seed,
                                          budget=config.budget, n_initial=config.n_initial, with_scale=True,
                                          gram_examples=config.gram_examples, gram_seed=config.seed,
                                          device=config.device)
                sources.add(tuned, variant, seed, tuning, seconds=time.perf_counter() - start)
            sources.decide(anchor, seed)
    return sources


def test_datafree_notebook_logic_on_micro(micro_cache):
    config = _datafree(suite="micro", seeds=[0, 1], smoke=True, budget=2, n_initial=1, val_examples=20,
                       gram_examples=16, cache=str(micro_cache))
    labs = _labs(config)
    assert labs[0].cache.evaluator.subset_spec("val") != labs[1].cache.evaluator.subset_spec("val")
    zoo = labs[0].zoo
    rows = _alignment(config, labs[0].cache, zoo)
    assert len(rows) == 16 and {r["module_type"] for r in rows} == {"attn_in", "attn_out", "mlp_in", "mlp_out"}
    assert all(0 <= r["overlap"] <= 1 + 1e-9 and r["chance_cosine"] > 0 for r in rows)
    assert alignment_summary(rows)[-1]["module_type"] == "all"
    study = _micro_source_study(config, labs)
    assert len(study.runs) == 4 and [d["seed"] for d in study.decisions["task_arithmetic"]] == [0, 1]
    assert all(info["alpha"] in alpha_tuning.SCALE_GRID for info in study.anchors["task_arithmetic"].values())
    assert all(isinstance(r.summary["edges"], list) for r in study.runs)
    # the logs live under the trial cache, never in the working folder
    assert len(list((labs[0].cache.root / "bmm-logs").glob("task_arithmetic-*-seed*.jsonl"))) >= 4
    table = bmm_datafree.source_rows(study)
    assert len(table) == 2 * 3 and table[0]["Grams"].startswith("anchor alone")
    claims = bmm_datafree.datafree_claims(study, rows, seed=config.seed)
    assert [c.id for c in claims] == ["B5a", "B5b"] and all("BRIEF" not in c.source for c in claims)
    assert claims[0].suite == "micro" and claims[0].verdict in ("held", "contradicted", "inconclusive", "not tested")
    assert math.isfinite(bmm_datafree.datafree_headline(study)["value"]) or claims[0].verdict == "not tested"
    assert bmm_datafree.study_metrics(study)["verdict"]["outcome"] == claims[0].verdict
    for fig in (bmm_figures.plot_alignment(rows), bmm_figures.plot_sources(study)):
        assert fig.axes
    # a second run recomputes nothing: the alignment is stored, the logs replay, every prediction is a cache hit
    again = _labs(config)
    stored = _alignment(config, again[0].cache, zoo)
    assert [r["key"] for r in stored] == [r["key"] for r in rows]
    assert [r["overlap"] for r in stored] == pytest.approx([r["overlap"] for r in rows])
    second = _micro_source_study(config, again)
    assert all(lab.cache.misses == 0 for lab in again.values()) and all(r.summary["replayed"] == 2
                                                                         for r in second.runs)
    assert second.decisions == study.decisions
