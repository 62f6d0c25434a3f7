"""BMM claims 5 and 6 (nbmerge.experiments.bmm_calibration): sampling plumbing on fakes, metrics, verdict logic on
synthetic numbers, and both notebooks' logic end to end on the `micro` zoo with smoke settings."""

import math

import pytest
import torch
import torch.nn.functional as F

from nbmerge.errors import NbmergeError
from nbmerge.experiments import bmm_calibration as bc
from nbmerge.metrics import expected_calibration_error


# ------------------------------------------------------------------------------------- fakes for the sampling loop

class FakeSolver:
    """One "module" whose weights are the logits themselves: a draw adds σ·N(0, 1) noise from the generator."""

    def __init__(self, logits: torch.Tensor):
        self.logits = logits
        self.modules = {"w": None}

    def merged(self, lambdas, scale):
        return {"logits": self.logits.clone()}

    def sampled(self, lambdas, temperature, generator, scale):
        noise = torch.randn(self.logits.shape, generator=generator, dtype=self.logits.dtype)
        return {"logits": self.logits + math.sqrt(temperature["w"]) * noise}


class FakeEvaluator:
    task_names = ["a"]

    def __init__(self, labels: torch.Tensor):
        self.labels = labels
        self.state = None

    def load(self, state):
        self.state = state

    def logits(self, task, split):
        return self.state["logits"], self.labels


def _fake(n=200, classes=5, seed=0):
    generator = torch.Generator().manual_seed(seed)
    logits = 3 * torch.randn(n, classes, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, classes, (n,), generator=generator)
    return FakeSolver(logits), FakeEvaluator(labels)


def test_zero_temperature_samples_average_to_the_point_estimate():
    solver, evaluator = _fake()
    point = bc.point_predictive(solver, evaluator, {}, 1.0, "val")
    for temperature in (0.0, 1e-30):
        sampled = bc.sampled_predictive(solver, evaluator, {}, 1.0, "val", noise={"w": 1.0},
                                        temperature=temperature, samples=5, seed=3)
        assert torch.allclose(sampled.log_probs["a"], point.log_probs["a"], atol=1e-12, rtol=0)
        assert bc.scores(sampled)["mean"] == pytest.approx(bc.scores(point)["mean"], abs=1e-12)
    assert sampled.samples == 5 and len(sampled.sample_accuracy) == 5 and point.samples == 1


def test_samples_are_averaged_in_probability_space_and_seeded():
    solver, evaluator = _fake()
    sampled = bc.sampled_predictive(solver, evaluator, {}, 1.0, "val", noise={"w": 2.0}, temperature=0.5,
                                    samples=4, seed=7)
    generator = torch.Generator().manual_seed(7)
    draws = [(solver.logits + torch.randn(solver.logits.shape, generator=generator, dtype=torch.float64)).softmax(-1)
             for _ in range(4)]  # σ² = 0.5 · 2.0 = 1
    assert torch.allclose(sampled.probs("a"), torch.stack(draws).mean(0), atol=1e-12)
    again = bc.sampled_predictive(solver, evaluator, {}, 1.0, "val", noise={"w": 2.0}, temperature=0.5, samples=4,
                                  seed=7)
    assert torch.equal(again.log_probs["a"], sampled.log_probs["a"])
    other = bc.sampled_predictive(solver, evaluator, {}, 1.0, "val", noise={"w": 2.0}, temperature=0.5, samples=4,
                                  seed=8)
    assert not torch.equal(other.log_probs["a"], sampled.log_probs["a"])
    with pytest.raises(NbmergeError, match="temperature"):
        bc.sampled_predictive(solver, evaluator, {}, 1.0, "val", noise={"w": 1.0}, temperature=-1.0, samples=2)


def test_scores_match_the_metrics_module():
    solver, evaluator = _fake(n=500, classes=7, seed=1)
    point = bc.point_predictive(solver, evaluator, {}, 1.0, "test")
    row = bc.scores(point, bins=15)["tasks"]["a"]
    logits, labels = solver.logits, evaluator.labels
    assert row["accuracy"] == pytest.approx((logits.argmax(-1) == labels).double().mean().item())
    assert row["nll"] == pytest.approx(F.cross_entropy(logits, labels).item(), rel=1e-12)
    assert row["ece"] == pytest.approx(expected_calibration_error(logits.softmax(-1), labels, 15), rel=1e-12)
    # a confident miss does not underflow: log-space averaging keeps the NLL finite
    huge = FakeSolver(torch.tensor([[800.0, -800.0]], dtype=torch.float64))
    far = bc.sampled_predictive(huge, FakeEvaluator(torch.tensor([1])), {}, 1.0, "val", noise={"w": 1e-6},
                                temperature=1.0, samples=3)
    assert bc.scores(far)["mean"]["nll"] == pytest.approx(1600.0, rel=1e-3)


def test_reliability_bins_reproduce_the_ece():
    solver, evaluator = _fake(n=400, classes=4, seed=2)
    point = bc.point_predictive(solver, evaluator, {}, 1.0, "test")
    data = bc.reliability(point, bins=15)
    assert sum(data["count"]) == 400 and len(data["edges"]) == 16 and data["examples"] == 400
    assert data["ece"] == pytest.approx(expected_calibration_error(point.probs("a"), evaluator.labels, 15), abs=1e-12)
    # the perfectly calibrated synthetic predictor: correct with probability equal to its confidence
    generator = torch.Generator().manual_seed(0)
    n = 200_000
    confidence = 0.5 + 0.5 * torch.rand(n, generator=generator, dtype=torch.float64)
    correct = torch.rand(n, generator=generator, dtype=torch.float64) < confidence
    probs = torch.stack([confidence, 1 - confidence], -1)
    labels = torch.where(correct, 0, 1)
    calibrated = bc.Predictive({"a": probs.log()}, {"a": labels}, 1)
    assert bc.reliability(calibrated)["ece"] < 0.01
    assert bc.scores(calibrated)["mean"]["ece"] < 0.01
    two = bc.Predictive({"a": probs[:10].log(), "b": probs[10:30].log()}, {"a": labels[:10], "b": labels[10:30]}, 1)
    assert sum(bc.reliability(two)["count"]) == 30  # pooled over tasks


# ---------------------------------------------------------------------------------------- selection and verdicts

def _sweep():
    return [{"temperature": 1.0, "accuracy": 0.800, "nll": 0.90, "ece": 0.10},
            {"temperature": 10.0, "accuracy": 0.798, "nll": 0.80, "ece": 0.08},
            {"temperature": 100.0, "accuracy": 0.760, "nll": 0.70, "ece": 0.03}]


def test_temperature_selection_keeps_accuracy_first():
    point = {"accuracy": 0.801}
    chosen = bc.select_temperature(_sweep(), point, "nll", tolerance_points=0.5)
    assert chosen["temperature"] == 10.0 and chosen["eligible"] == 2
    assert bc.select_temperature(_sweep(), point, "ece", tolerance_points=10)["temperature"] == 100.0
    # nothing keeps the accuracy: the criterion's best over all
    assert bc.select_temperature(_sweep(), {"accuracy": 0.9}, "nll")["eligible"] == 0
    assert bc.select_temperature(_sweep(), {"accuracy": 0.9}, "nll")["temperature"] == 100.0
    with pytest.raises(NbmergeError, match="select_by"):
        bc.select_temperature(_sweep(), point, "accuracy")


def test_calibration_verdicts():
    point = {"accuracy": 0.80, "nll": 0.9, "ece": 0.10}
    held = bc.calibration_claims(point, {"accuracy": 0.797, "nll": 0.8, "ece": 0.05}, tolerance_points=0.5)
    assert held[0].verdict == "held" and "-0.30 pts" in held[0].evidence
    worse_ece = bc.calibration_claims(point, {"accuracy": 0.81, "nll": 0.8, "ece": 0.10})
    assert worse_ece[0].verdict == "did not hold" and "not lower" in worse_ece[0].evidence
    lost = bc.calibration_claims(point, {"accuracy": 0.79, "nll": 0.8, "ece": 0.02}, tolerance_points=0.5)
    assert lost[0].verdict == "did not hold"
    assert bc.calibration_claims(point, None)[0].verdict == "not tested"
    assert bc.calibration_headline(point, {"ece": 0.04})["value"] == pytest.approx(-0.06)


def _gap(gap_points, suite="s", anchor="ta"):
    return {"suite": suite, "anchor": anchor, "data_normalized": 0.80, "free_normalized": 0.80 - gap_points / 100,
            "gap_points": gap_points}


def _aligned(cosine=0.5, overlap=0.4):
    return {"module_type": "mlp_in", "depth": 0, "cosine": cosine, "chance_cosine": 0.1, "overlap": overlap,
            "chance": 0.1}


def test_datafree_verdicts():
    rows = [_aligned(), _aligned(0.3, 0.2)]
    verdicts = [c.verdict for c in bc.datafree_claims([_gap(0.4), _gap(-2.0, anchor="tsv")], rows, 1.0)]
    assert verdicts == ["held", "held"]
    verdicts = [c.verdict for c in bc.datafree_claims([_gap(0.4), _gap(1.3, anchor="tsv")], [*rows, _aligned(0.05)])]
    assert verdicts == ["did not hold", "did not hold"]
    verdicts = [c.verdict for c in bc.datafree_claims([], [])]
    assert verdicts == ["not tested", "not tested"]
    assert bc.datafree_headline([_gap(0.4), _gap(1.3)])["value"] == pytest.approx(1.3)
    summary = bc.alignment_summary([*rows, _aligned(0.05)])
    assert summary[-1]["module_type"] == "all" and summary[-1]["above_both"] == pytest.approx(2 / 3)


def test_alignment_chance_cosine_is_the_random_rotation_mean():
    key = "visual.transformer.resblocks.0.mlp.c_fc.weight"
    generator = torch.Generator().manual_seed(0)
    base = {key: torch.zeros(6, 5, dtype=torch.float64)}
    experts = [{key: torch.randn(6, 5, generator=generator, dtype=torch.float64)} for _ in range(2)]
    x = torch.randn(5, 40, generator=generator, dtype=torch.float64)
    grams = [{key: x @ x.T}, {key: 0.5 * x[:, :10] @ x[:, :10].T}]
    (row,) = bc.alignment(base, experts, grams, k_fraction=0.4)
    a = sum(g[key] for g in grams)
    b = sum(e[key].T @ e[key] for e in experts)
    cosines = []
    for _ in range(3000):
        q, _ = torch.linalg.qr(torch.randn(5, 5, generator=generator, dtype=torch.float64))
        rotated = q @ b @ q.T
        cosines.append(float((a * rotated).sum() / (a.norm() * rotated.norm())))
    assert row["chance_cosine"] == pytest.approx(sum(cosines) / len(cosines), rel=0.02)
    assert row["cosine"] == pytest.approx(float((a * b).sum() / (a.norm() * b.norm())))
    assert row["chance"] == pytest.approx(2 / 5) and row["overlap_ratio"] == pytest.approx(row["overlap"] / 0.4)


def test_configs_are_validated():
    assert bc.DatafreeConfig(anchors=["ties"], suites=["micro"]).anchors == ("ties",)
    assert bc.CalibrationConfig(temperatures=[1, 10]).temperatures == (1.0, 10.0)
    with pytest.raises(NbmergeError, match="parameter 'seed'"):
        bc.CalibrationConfig(seed="0")
    with pytest.raises(NbmergeError, match="samples"):
        bc.CalibrationConfig(samples=1)
    with pytest.raises(NbmergeError, match="temperatures"):
        bc.CalibrationConfig(temperatures=[0.0, 1.0])
    with pytest.raises(NbmergeError, match="temperatures"):
        bc.CalibrationConfig(temperatures=[])
    with pytest.raises(NbmergeError, match="select_by"):
        bc.CalibrationConfig(select_by="brier")
    with pytest.raises(NbmergeError, match="k_fraction"):
        bc.DatafreeConfig(k_fraction=0.0)
    with pytest.raises(NbmergeError, match="budget"):
        bc.DatafreeConfig(budget=0)
    assert bc.log_path("", "micro", "ties", "data", 0, 3) is None
    assert bc.log_path("logs", "micro", "ties", "data", 0, 3).name == "bmm-micro-ties-data-seed0-budget3.jsonl"


# ------------------------------------------------------------------------------------------- on the micro zoo

@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.zoo.build import load_zoo

    return load_zoo("micro", micro_cache)


def test_gram_tokens_count_what_collect_grams_saw(micro):
    from nbmerge.experiments.tour import load_models
    from nbmerge.zoo.build import collect_grams

    base, _ = load_models(micro)
    seen = collect_grams(micro, base, 10, tasks=micro.tasks[:1])[micro.tasks[0]]["tokens"]
    assert seen == 10 * bc.tokens_per_image(micro.arch)
    assert bc.gram_tokens(micro, 10) == len(micro.tasks) * seen


def test_real_posterior_at_zero_temperature_is_the_point_estimate(micro):
    from nbmerge.experiments.tour import expert_grams, load_models
    from nbmerge.methods.bmm import BMMSolver, run_anchor

    base, experts = load_models(micro)
    grams = expert_grams(micro, 16, 0)
    solver = BMMSolver(base, experts, run_anchor(base, experts, "task_arithmetic", {"scale": 0.3}), grams,
                       gram="data")
    evaluator = micro.evaluator()
    lambdas = {group: -1.0 for group in solver.group_names()}
    point = bc.point_predictive(solver, evaluator, lambdas, 1.0, "val")
    noise = solver.noise_variance(lambdas, tokens=bc.gram_tokens(micro, 16))
    assert all(v > 0 for v in noise.values())
    cold = bc.sampled_predictive(solver, evaluator, lambdas, 1.0, "val", noise=noise, temperature=0.0, samples=2)
    for task in micro.tasks:
        assert torch.allclose(cold.log_probs[task], point.log_probs[task], atol=1e-5)
    # the point estimate scores exactly as the zoo's evaluator reports it
    reported = evaluator.evaluate(solver.merged(lambdas), "val")
    ours = bc.scores(point)
    for task in micro.tasks:
        for metric in ("accuracy", "nll", "ece"):
            assert ours["tasks"][task][metric] == pytest.approx(reported["tasks"][task][metric], rel=1e-6)


def test_datafree_notebook_logic_on_micro(micro_cache, tmp_path):
    config = bc.DatafreeConfig(suite="micro", suites=["micro"], smoke=True, anchors=["task_arithmetic"], budget=3,
                               gram_examples=32, log_dir=str(tmp_path / "logs"), cache=str(micro_cache))
    rows = bc.alignment_study(config)
    assert len(rows) == 16 and {r["module_type"] for r in rows} == {"attn_in", "attn_out", "mlp_in", "mlp_out"}
    assert all(0 <= r["overlap"] <= 1 + 1e-9 and r["chance_cosine"] > 0 for r in rows)
    gap = bc.gram_source_gap(config, log=lambda *_: None)
    assert len(gap) == 1 and gap[0]["budget"] == 3
    assert gap[0]["gap_points"] == pytest.approx(100 * (gap[0]["data_normalized"] - gap[0]["free_normalized"]))
    assert len(list((tmp_path / "logs").glob("bmm-micro-task_arithmetic-*-seed0-budget3.jsonl"))) == 2
    claims = bc.datafree_claims(gap, rows, config.tolerance, config.suite)
    assert [c.claim.split(":")[0] for c in claims][1] == "Theorem 1"
    assert all(c.verdict in ("held", "did not hold") for c in claims)
    assert math.isfinite(bc.datafree_headline(gap)["value"])
    for fig in (bc.plot_alignment(rows), bc.plot_gap(gap)):
        assert fig.axes


def test_calibration_notebook_logic_on_micro(micro_cache, tmp_path):
    config = bc.CalibrationConfig(suite="micro", smoke=True, budget=3, gram_examples=32, samples=3,
                                  temperatures=[10.0, 3000.0], log_dir=str(tmp_path / "logs"), cache=str(micro_cache))
    zoo = bc.open_zoo(config.suite, config.cache)
    tuning = bc.tune(zoo, config.anchor, "data", budget=config.budget, seed=config.seed,
                     gram_examples=config.gram_examples, log_dir=config.log_dir)
    study = bc.calibration_study(zoo, tuning, config, log=lambda *_: None)
    assert [r["temperature"] for r in study["sweep"]] == [10.0, 3000.0]
    assert study["chosen"]["temperature"] in (10.0, 3000.0)
    assert study["point"]["mean"]["accuracy"] == pytest.approx(tuning.test_accuracy)
    assert len(study["member_accuracy"]) == 3 and study["tokens"] == 3 * 32 * 17
    assert set(study["point"]["tasks"]) == set(zoo.tasks) == set(study["sampled"]["tasks"])
    rows = bc.comparison_rows(study["point"], study["sampled"])
    assert [r["task"] for r in rows] == [*zoo.tasks, "mean"]
    (verdict,) = bc.calibration_claims(study["point"]["mean"], study["sampled"]["mean"],
                                       tolerance_points=config.accuracy_tolerance)
    assert verdict.verdict in ("held", "did not hold")
    fig = bc.plot_reliability(study["reliability"]["point"], study["reliability"]["sampled"])
    assert fig.axes and bc.plot_temperature(study["sweep"], study["point_val"]["mean"], 10.0).axes


def test_tour_section_on_micro(micro, tmp_path):
    from nbmerge.experiments.tour import load_models

    base, experts = load_models(micro)
    section = bc.tour_section(micro, base, experts, gram_examples=16)
    assert [r["method"].split(" (")[0] for r in section["rows"]] == ["anchor: task_arithmetic", "BMM data-assisted",
                                                                    "BMM data-free"]
    assert all(0 <= r["mean"] <= 1 and set(micro.tasks) <= set(r) for r in section["rows"])
    assert section["alignment"]["overlap"] > section["alignment"]["chance_overlap"]
    assert "Theorem 1 on micro" in section["summary"]
    searched = bc.tour_section(micro, base, experts, gram_examples=16, budget=2, log_dir=str(tmp_path))
    assert "(2 trials)" in searched["rows"][1]["method"] and len(list(tmp_path.glob("*.jsonl"))) == 2
