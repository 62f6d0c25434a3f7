"""Variational merging for Pareto fronts (nbmerge.solvers.pareto, nbmerge.pools.posteriors, nbmerge.experiments.pareto):
analytic identities, the EM's monotone objective, exact hypervolumes, bad input, and tiny end-to-end runs on
the `micro` zoo."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from nbmerge import merge
from nbmerge.errors import MethodError, NbmergeError
from nbmerge.params import notebook_config, notebook_parameters
from nbmerge.solvers import pareto

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "30_pareto.ipynb"


def _problem(tasks=3, components=4, params=40, seed=0, spread=0.3):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(params, generator=g, dtype=torch.float64)
    means = base + spread * torch.randn(tasks, components, params, generator=g, dtype=torch.float64)
    precisions = 0.1 + 5 * torch.rand(tasks, components, params, generator=g, dtype=torch.float64)
    return base, means, precisions


# ------------------------------------------------------------------------------------------------- α grids

def test_simplex_grid_sizes_and_rows():
    assert pareto.simplex_grid(2, 100).shape == (101, 2)
    assert pareto.simplex_grid(3, 10).shape == (66, 3)
    grid = pareto.simplex_grid(3, 20)
    assert grid.shape == (231, 3) and torch.allclose(grid.sum(1), torch.ones(231, dtype=torch.float64))
    assert pareto.simplex_grid(2, 4)[:, 0].tolist() == [0, 0.25, 0.5, 0.75, 1]
    pareto.check_alphas(grid, 3)  # every row is accepted


# ------------------------------------------------------------------------------------------------- merges

def test_isotropic_merge_is_the_task_arithmetic_formula(tiny64):
    base, experts = tiny64
    keys = list(base)
    flat_base = pareto.flatten_state(base, keys)
    flat_experts = torch.stack([pareto.flatten_state(e, keys) for e in experts])
    uniform = torch.full((1, 3), 1 / 3, dtype=torch.float64)
    for lam in (0.3, 1.0):
        # θ₀ + s Σ α_t τ_t at uniform α equals task arithmetic with coefficient s/T
        ours = pareto.isotropic_merge(flat_base, flat_experts, uniform, scale=lam * 3)[0]
        reference = pareto.flatten_state(merge("task_arithmetic", base, experts, {"scale": lam}), keys)
        assert torch.allclose(ours, reference, atol=1e-12)
    alphas = torch.tensor([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]], dtype=torch.float64)
    expected = flat_base + alphas @ (flat_experts - flat_base)
    assert torch.allclose(pareto.isotropic_merge(flat_base, flat_experts, alphas), expected, atol=1e-12)
    assert torch.equal(pareto.isotropic_merge(flat_base, flat_experts, [[0, 1, 0]])[0], flat_experts[1])


def test_gaussian_with_equal_precisions_is_isotropic():
    base, means, precisions = _problem()
    alphas = pareto.simplex_grid(3, 5)
    shared = precisions[0, 0].expand(3, -1)
    gaussian = pareto.gaussian_merge(base, means[:, 0], shared, alphas)
    assert torch.allclose(gaussian, pareto.isotropic_merge(base, means[:, 0], alphas), atol=1e-12)
    # precisions that differ by a task-independent factor per parameter change nothing either
    assert torch.allclose(pareto.gaussian_merge(base, means[:, 0], 7 * shared, alphas), gaussian, atol=1e-12)


def test_gaussian_merge_minimises_the_quadratic_surrogate():
    base, means, precisions = _problem()
    alphas = torch.tensor([[0.1, 0.6, 0.3]], dtype=torch.float64)
    theta = pareto.gaussian_merge(base, means[:, 0], precisions[:, 0], alphas)[0]
    # ∇ Σ_t α_t ½ Σ S_t (θ − m_t)² = Σ_t α_t S_t (θ − m_t) = 0
    gradient = (alphas[0, :, None] * precisions[:, 0] * (theta - means[:, 0])).sum(0)
    assert gradient.abs().max() < 1e-12
    # and θ at a vertex is that task's mean
    assert torch.allclose(pareto.gaussian_merge(base, means[:, 0], precisions[:, 0], [[0, 0, 1]])[0], means[2, 0])


def test_one_component_mixture_is_the_gaussian_merge():
    base, means, precisions = _problem(components=1)
    alphas = pareto.simplex_grid(3, 4)
    mog, info = pareto.mog_merge(base, means, precisions, alphas, return_info=True)
    assert torch.allclose(mog, pareto.gaussian_merge(base, means[:, 0], precisions[:, 0], alphas), atol=1e-12)
    assert torch.equal(info["responsibilities"], torch.ones(len(alphas), 3, 1, dtype=torch.float64))


@pytest.mark.parametrize("temperature", [1.0, 50.0])
def test_em_objective_never_increases(temperature):
    base, means, precisions = _problem(params=30, spread=0.5)
    alphas = pareto.simplex_grid(3, 6)
    theta, info = pareto.mog_merge(base, means, precisions, alphas, iterations=200, tol=0.0,
                                   temperature=temperature, return_info=True)
    history = info["objective"]
    assert info["iterations"] >= 2 and history.shape[1] == len(alphas)
    assert (history[1:] - history[:-1] <= 1e-9 * history.abs().amax()).all()
    assert (history[-1] < history[0] - 1e-6).any()  # EM moved away from its initialisation somewhere
    direct = pareto.mog_objective(theta, base, means, precisions, alphas, temperature=temperature)
    assert torch.allclose(direct, history[-1], rtol=1e-12)


def test_em_converges_to_a_stationary_point_of_the_objective():
    base, means, precisions = _problem(params=10, spread=0.2)
    alphas = torch.tensor([[0.3, 0.3, 0.4]], dtype=torch.float64)
    theta = pareto.mog_merge(base, means, precisions, alphas, iterations=5000, tol=0.0, temperature=20.0)
    theta = theta.clone().requires_grad_(True)
    pareto.mog_objective(theta, base, means, precisions, alphas, temperature=20.0).sum().backward()
    assert theta.grad.abs().max() < 1e-8


def _separated(params=3000, seed=0):
    """Two tasks, two components each that differ in mean and in precision: in high dimension the plain mixture's
    log-densities differ by thousands of nats."""
    g = torch.Generator().manual_seed(seed)
    base = torch.zeros(params, dtype=torch.float64)
    means = 0.3 * torch.randn(2, 2, params, generator=g, dtype=torch.float64)
    precisions = 1 + 4 * torch.rand(2, 2, params, generator=g, dtype=torch.float64)
    precisions[:, 1] *= 1.3
    return base, means, precisions


def test_plain_mixture_is_one_hot_and_a_temperature_makes_it_informative():
    base, means, precisions = _separated()
    alphas = torch.tensor([[0.5, 0.5], [0.3, 0.7]], dtype=torch.float64)
    spread = pareto.log_density_spread(base, means, precisions, alphas[:1])
    assert spread.shape == (1, 2) and (spread > 100).all()  # thousands of nats: plain EM is a hard assignment
    _, plain = pareto.mog_merge(base, means, precisions, alphas, return_info=True)
    assert ((plain["responsibilities"] > 1 - 1e-12) | (plain["responsibilities"] < 1e-12)).all()
    assert plain["iterations"] <= 2  # one M-step, then the responsibilities repeat
    tau = float(spread.max())
    theta, soft = pareto.mog_merge(base, means, precisions, alphas, temperature=tau, iterations=50,
                                   responsibility_tol=1e-6, return_info=True)
    r = soft["responsibilities"]
    assert r.shape == (2, 2, 2) and torch.allclose(r.sum(2), torch.ones(2, 2, dtype=torch.float64))
    assert (r.amax(2) < 0.99).all() and (r.amin(2) > 0.01).all()  # neither one-hot nor ...
    assert (r - 0.5).abs().max() > 1e-3                          # ... the uniform (SoupIVON) weights
    assert soft["iterations"] > 1 and (soft["row_iterations"] > 1).all()
    # the merge differs from both ends of the temperature family
    soup = pareto.gaussian_merge(base, *pareto.collapse(means, precisions), alphas)
    hard = pareto.mog_merge(base, means, precisions, alphas)
    assert (theta - soup).abs().max() > 1e-6 and (theta - hard).abs().max() > 1e-6
    # τ → ∞: uniform responsibilities, whose M-step is SoupIVON-Hess
    assert torch.allclose(pareto.mog_merge(base, means, precisions, alphas, temperature=1e12), soup, atol=1e-9)


def test_log_density_spread_matches_the_component_densities():
    base, means, precisions = _problem(tasks=2, components=3, params=50)
    alphas = torch.tensor([[0.4, 0.6]], dtype=torch.float64)
    soup = pareto.gaussian_merge(base, *pareto.collapse(means, precisions), alphas)
    logn = pareto.component_log_densities(soup, base, means, precisions)
    direct = torch.stack([torch.stack([
        torch.distributions.Normal(means[t, k], precisions[t, k].rsqrt()).log_prob(soup[0]).sum()
        for k in range(3)]) for t in range(2)])
    assert torch.allclose(logn[0], direct, rtol=1e-6)  # log-determinants from float32 logs
    assert torch.allclose(pareto.log_density_spread(base, means, precisions, alphas)[0],
                          direct.amax(1) - direct.amin(1), rtol=1e-4)


def test_em_in_batches_equals_one_batch():
    base, means, precisions = _problem(params=60, spread=0.4)
    alphas = pareto.simplex_grid(3, 4)
    whole, info = pareto.mog_merge(base, means, precisions, alphas, temperature=20.0, return_info=True)
    parts, part_info = pareto.mog_merge(base, means, precisions, alphas, temperature=20.0, batch=4, return_info=True)
    assert torch.allclose(whole, parts, atol=1e-12, rtol=0)
    assert torch.allclose(info["responsibilities"], part_info["responsibilities"], atol=1e-12)
    assert torch.equal(info["row_iterations"], part_info["row_iterations"])
    rows = [rows for rows, _, _ in pareto.iter_mog_merge(base, means, precisions, alphas, batch=4)]
    assert [r.stop - r.start for r in rows] == [4, 4, 4, 3]
    with pytest.raises(MethodError, match="batch must be a positive integer"):
        pareto.mog_merge(base, means, precisions, alphas, batch=0)


def test_mixture_weights_and_collapse():
    base, means, precisions = _problem(components=3)
    same = means[:, :1].expand(-1, 3, -1)
    mean, precision = pareto.collapse(same, precisions)
    assert torch.allclose(mean, means[:, 0]) and torch.allclose(precision, precisions.mean(1))
    # a component with (almost) all the weight is the whole mixture
    weights = torch.tensor([[1 - 2e-12, 1e-12, 1e-12]] * 3, dtype=torch.float64)
    mean, precision = pareto.collapse(means, precisions, weights)
    assert torch.allclose(mean, means[:, 0], atol=1e-9)


@pytest.mark.parametrize("family", ["isotropic", "gaussian", "mog"])
def test_batched_over_alpha_equals_the_loop(family):
    base, means, precisions = _problem(params=200, spread=0.4)
    alphas = pareto.simplex_grid(3, 13)  # 105 α in one batch
    run = {"isotropic": lambda a: pareto.isotropic_merge(base, means[:, 0], a),
           "gaussian": lambda a: pareto.gaussian_merge(base, means[:, 0], precisions[:, 0], a),
           "mog": lambda a: pareto.mog_merge(base, means, precisions, a, temperature=30.0)}[family]
    batched = run(alphas)
    assert batched.shape == (105, 200)
    looped = torch.cat([run(a[None]) for a in alphas])
    assert torch.allclose(batched, looped, atol=1e-12, rtol=0)


def test_kernels_keep_the_base_dtype_and_device():
    base, means, precisions = _problem()
    base32, means32, precisions32 = base.float(), means.float(), precisions.float()
    alphas = pareto.simplex_grid(3, 2)
    for result in (pareto.isotropic_merge(base32, means32[:, 0], alphas),
                   pareto.gaussian_merge(base32, means32[:, 0], precisions32[:, 0], alphas),
                   pareto.mog_merge(base32, means32, precisions32, alphas)):
        assert result.dtype == torch.float32 and result.device == base32.device
    assert torch.allclose(pareto.mog_merge(base32, means32, precisions32, alphas).double(),
                          pareto.mog_merge(base, means, precisions, alphas), atol=1e-5)


def test_flatten_and_unflatten_round_trip(tiny):
    base, _ = tiny
    flat = pareto.flatten_state(base)
    back = pareto.unflatten_state(flat, base)
    assert list(back) == list(base) and all(torch.equal(back[k], base[k]) for k in base)
    with pytest.raises(NbmergeError, match="template holds"):
        pareto.unflatten_state(flat[:-1], base)


# ---------------------------------------------------------------------------------------------- front quality

def _inclusion_exclusion(points, reference):
    """Exact volume of the union of boxes [reference, p] by inclusion–exclusion (an independent oracle)."""
    points = [p for p in np.asarray(points, float) if (p > reference).all()]
    total = 0.0
    for size in range(1, len(points) + 1):
        for subset in itertools.combinations(points, size):
            total += (-1) ** (size + 1) * np.prod(np.min(subset, axis=0) - reference)
    return total


def test_hypervolume_on_known_sets():
    assert pareto.hypervolume([[1, 3], [2, 2], [3, 1]], [0, 0]) == pytest.approx(6.0)
    assert pareto.hypervolume([[1, 3], [2, 2], [3, 1], [1, 1]], [0, 0]) == pytest.approx(6.0)  # dominated: nothing
    assert pareto.hypervolume([[0.5, 0.5]], [0.5, 0]) == 0.0  # not beyond the reference
    assert pareto.hypervolume([[2, 2]], [1, 1]) == pytest.approx(1.0)
    assert pareto.hypervolume([[1, 2, 3]], [0, 0, 0]) == pytest.approx(6.0)
    assert pareto.hypervolume([[2, 1, 1], [1, 2, 1]], [0, 0, 0]) == pytest.approx(3.0)
    # three unit-thick slabs along each axis of a 2-cube, overlapping in the unit cube: 3·2 − 3·1 + 1 = 4
    assert pareto.hypervolume([[2, 1, 1], [1, 2, 1], [1, 1, 2]], [0, 0, 0]) == pytest.approx(4.0)
    assert pareto.hypervolume(np.empty((0, 3)), [0, 0, 0]) == 0.0


@pytest.mark.parametrize("dims", [2, 3])
def test_hypervolume_matches_inclusion_exclusion(dims):
    rng = np.random.default_rng(dims)
    for _ in range(20):
        points = rng.uniform(0, 1, size=(rng.integers(1, 8), dims))
        reference = rng.uniform(0, 0.3, size=dims)
        assert pareto.hypervolume(points, reference) == pytest.approx(_inclusion_exclusion(points, reference),
                                                                      abs=1e-12)


def test_pareto_mask_and_gap():
    points = np.array([[1, 3], [2, 2], [1, 1], [3, 1], [2, 2]])
    assert pareto.pareto_mask(points).tolist() == [True, True, False, True, True]
    assert pareto.alpha_matched_gap([[0.5, 0.7], [0.2, 0.2]], [[0.6, 0.7], [0.2, 0.0]]) == pytest.approx(0.075)


# -------------------------------------------------------------------------------------------------- bad input

def test_bad_alphas_are_named():
    base, means, precisions = _problem(tasks=2, components=1)
    ok = means[:, 0], precisions[:, 0]
    with pytest.raises(NbmergeError, match="3 task weights per row but there are 2 tasks"):
        pareto.gaussian_merge(base, *ok, [[0.2, 0.3, 0.5]])
    with pytest.raises(NbmergeError, match="non-negative.*row 1 has -0.5 for task 0"):
        pareto.isotropic_merge(base, ok[0], [[0.5, 0.5], [-0.5, 1.5]])
    with pytest.raises(NbmergeError, match="simplex.*row 0 .* sums to 1.2"):
        pareto.mog_merge(base, means, precisions, [[0.6, 0.6]])
    with pytest.raises(NbmergeError, match="not finite"):
        pareto.check_alphas([[float("nan"), 1.0]], 2)
    with pytest.raises(NbmergeError, match=r"\[A, T\] array"):
        pareto.check_alphas(torch.ones(2, 2, 2), 2)
    with pytest.raises(NbmergeError, match="must be numbers"):
        pareto.check_alphas([["a", "b"]], 2)


def test_bad_precisions_are_named():
    base, means, precisions = _problem(tasks=2, components=2)
    alphas = [[0.5, 0.5]]
    zero = precisions.clone()
    zero[1, 0, 3] = 0
    with pytest.raises(NbmergeError, match="positive.*task 1 component 0 has 1 entries ≤ 0"):
        pareto.mog_merge(base, means, zero, alphas)
    negative = precisions[:, 0].clone()
    negative[0, :2] = -1
    with pytest.raises(NbmergeError, match="task 0 has 2 entries ≤ 0 \\(min -1\\)"):
        pareto.gaussian_merge(base, means[:, 0], negative, alphas)
    with pytest.raises(NbmergeError, match="NaN or Inf"):
        pareto.gaussian_merge(base, means[:, 0], torch.full_like(negative, float("inf")), alphas)
    with pytest.raises(NbmergeError, match="precisions have shape"):
        pareto.gaussian_merge(base, means[:, 0], precisions[:, 0, :-1], alphas)
    with pytest.raises(NbmergeError, match="mixture weights must be positive"):
        pareto.mog_merge(base, means, precisions, alphas, weights=[[1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(MethodError, match="temperature must be a positive"):
        pareto.mog_merge(base, means, precisions, alphas, temperature=0)


def test_components_of_different_shapes_are_named():
    base, means, precisions = _problem(tasks=2, components=2, params=10)
    with pytest.raises(NbmergeError, match="components of different shapes.*means\\[0\\]\\[1\\] \\[9\\]"):
        pareto.mog_merge(base, [[means[0, 0], means[0, 1, :9]], [means[1, 0], means[1, 1]]], precisions, [[1, 0]])
    with pytest.raises(NbmergeError, match="components of different shapes.*same number of components"):
        pareto.mog_merge(base, [means[0], means[1, :1]], precisions, [[1, 0]])
    with pytest.raises(NbmergeError, match="means have 9 parameters per component but base has 10"):
        pareto.gaussian_merge(base, means[:, 0, :9], precisions[:, 0, :9], [[1, 0]])
    with pytest.raises(NbmergeError, match=r"means must be \[T, K, P\]"):
        pareto.mog_merge(base, means[:, 0], precisions[:, 0], [[1, 0]])
    with pytest.raises(NbmergeError, match="exact here only in 2-D and 3-D"):
        pareto.hypervolume([[1, 1, 1, 1]], [0, 0, 0, 0])
    with pytest.raises(NbmergeError, match="same α rows"):
        pareto.alpha_matched_gap([[0.1, 0.2]], [[0.1, 0.2, 0.3]])


def _config(**overrides):
    from nbmerge.experiments.pareto import ParetoConfig

    return notebook_config(ParetoConfig, NOTEBOOK, **overrides)


def test_config_rejects_bad_parameters():
    with pytest.raises(NbmergeError, match="unknown family 'wizard'"):
        _config(families=["simple", "wizard"])
    with pytest.raises(NbmergeError, match="must have 2 or 3 entries"):
        _config(tasks=["a"])
    with pytest.raises(NbmergeError, match="parameter 'components'"):
        _config(components="3")
    with pytest.raises(NbmergeError, match="parameter 'front_divisions_2' = 0: must be an integer >= 1"):
        _config(front_divisions_2=0)
    with pytest.raises(NbmergeError, match="parameter 'temperatures'.*finite number in \\(0, inf\\)"):
        _config(temperatures=[1.0, 0.0])
    with pytest.raises(NbmergeError, match="declares no parameter wizardry"):
        _config(wizardry=1)


def test_the_notebook_parameters_cell_is_the_only_place_of_defaults():
    from dataclasses import MISSING, fields

    from nbmerge.experiments.pareto import PREVIEW, ParetoConfig

    assert all(f.default is MISSING and f.default_factory is MISSING for f in fields(ParetoConfig))
    declared = notebook_parameters(NOTEBOOK)
    assert {f.name for f in fields(ParetoConfig)} <= set(declared)
    # the tour's preview trains the same IVON posteriors as the notebook's defaults (shared cache entries)
    posterior = ("ivon_lr", "ivon_ess", "ivon_hess_init", "ivon_beta2", "prior_weight_decay")
    assert {k: PREVIEW[k] for k in posterior} == {k: declared[k] for k in posterior}
    nb = NOTEBOOK.read_text()
    assert "build_config(pareto.ParetoConfig, globals())" in nb and " as experiment" not in nb


# ------------------------------------------------------------------------------------- verdicts on fixed predictions

def _predictions(correct_by_task, classes=4, seed=0):
    """Predictions whose argmax is right exactly where ``correct_by_task[task]`` is True."""
    from nbmerge.evaluate.protocol import Predictions

    rng = np.random.default_rng(seed)
    logits, labels = {}, {}
    for task, correct in correct_by_task.items():
        correct = np.asarray(correct, bool)
        y = rng.integers(0, classes, len(correct))
        guess = np.where(correct, y, (y + 1) % classes)
        z = np.zeros((len(correct), classes), np.float32)
        z[np.arange(len(correct)), guess] = 1
        logits[task], labels[task] = z, y
    return Predictions(logits, labels)


def _front(accuracies, n=400, seed=0, reverse=False):
    """A front (row → Predictions) whose row i has exactly these per-task accuracies, on fixed labels (right on
    the first examples, or on the last ones with ``reverse``)."""
    out = {}
    for i, acc in enumerate(accuracies):
        right = {t: np.arange(n) < round(a * n) for t, a in zip("xy", acc)}
        out[i] = _predictions({t: r[::-1] if reverse else r for t, r in right.items()}, seed=seed)
    return out


def _outcome(d):
    return d["decision"].outcome


def test_front_comparison_four_outcomes():
    from nbmerge.experiments.pareto import compare_fronts

    tasks = ["x", "y"]
    base = _predictions({t: np.arange(400) < 200 for t in tasks})            # 50% / 50%
    good = _front([[0.9, 0.4], [0.8, 0.8], [0.4, 0.9]])
    worse = _front([[0.9, 0.4], [0.6, 0.6], [0.4, 0.9]])
    below = _front([[0.9, 0.4], [0.45, 0.45], [0.4, 0.9]])                    # nothing beats the base on both
    below2 = _front([[0.85, 0.3], [0.48, 0.3], [0.3, 0.85]])
    fronts = {"good": good, "worse": worse, "below": below, "below2": below2, "same": dict(good)}
    held = compare_fronts(fronts, base, "good", "worse", tasks, n_boot=300)
    assert _outcome(held) == "held" and held["interval"][0] > 0
    assert held["diff"] == pytest.approx(1e4 * (0.09 - 0.01))                # pts²
    assert "held" in held["evidence"] and "pts²" in held["evidence"]
    assert _outcome(compare_fronts(fronts, base, "worse", "good", tasks, n_boot=300)) == "contradicted"
    zero = compare_fronts(fronts, base, "below", "below2", tasks, n_boot=300)
    assert _outcome(zero) == "not tested" and "every hypervolume is 0" in zero["why"]
    same = compare_fronts(fronts, base, "good", "same", tasks, n_boot=300)
    assert _outcome(same) == "not tested" and "same models" in same["why"]
    # a front barely above another (right on other examples: not the same models): the run cannot tell
    close = _front([[0.9, 0.4], [0.6025, 0.6], [0.4, 0.9]], reverse=True)
    tie = compare_fronts({"close": close, "worse": worse}, base, "close", "worse", tasks, n_boot=300)
    assert _outcome(tie) == "inconclusive" and tie["interval"][0] <= 0 < tie["diff"] < tie["interval"][1]
    assert tie["decision"].mde > 0 and "80% power" in tie["evidence"]
    # over K runs: the estimate is against the runs' mean, the interval resamples runs and examples
    runs = compare_fronts({"good": good, "worse": worse, "close": close}, base, "good", ["worse", "close"],
                          tasks, n_boot=300)
    assert runs["b"] == ["worse", "close"] and _outcome(runs) == "held"
    assert runs["diff"] == pytest.approx(1e4 * (0.09 - (0.01 + 0.0025 * 0.1 + 0.01) / 2), abs=2)
    # a mixture collapsed onto one run is not tested, whatever the numbers say
    collapsed = compare_fronts(fronts, base, "good", "worse", tasks, n_boot=300, collapsed="collapsed: one run")
    assert _outcome(collapsed) == "not tested" and collapsed["why"] == "collapsed: one run"


def test_gap_closed_four_outcomes():
    from nbmerge.experiments.pareto import gap_closed

    def model(acc, n=500):
        return _predictions({t: np.arange(n) < round(a * n) for t, a in zip("xy", acc)})

    simple, multitask = model([0.6, 0.6]), model([0.9, 0.9])
    most = gap_closed(simple, model([0.85, 0.85]), multitask, ["x", "y"], n_boot=300)
    assert _outcome(most) == "held" and most["share"] == pytest.approx(100 * 25 / 30) and most["interval"][0] > 50
    some = gap_closed(simple, model([0.7, 0.7]), multitask, ["x", "y"], n_boot=300)
    assert _outcome(some) == "contradicted" and some["share"] == pytest.approx(100 / 3)
    # the paper's effect (76%) contradicts an interval wholly below it even when it reaches 50%
    half = gap_closed(simple, model([0.75, 0.75]), multitask, ["x", "y"], n_boot=300, effect=76.3)
    assert half["interval"][0] <= 50 < half["interval"][1] < 76.3 and _outcome(half) == "contradicted"
    unsure = gap_closed(simple, model([0.75, 0.75]), multitask, ["x", "y"], n_boot=300)
    assert _outcome(unsure) == "inconclusive" and unsure["decision"].mde > 0  # estimate 50%: on the threshold
    none = gap_closed(simple, model([0.7, 0.7]), model([0.602, 0.6]), ["x", "y"], n_boot=300)
    assert _outcome(none) == "not tested" and "no gap to close" in none["why"]
    chance = gap_closed(model([0.25, 0.25]), model([0.7, 0.7]), multitask, ["x", "y"], n_boot=300)
    assert _outcome(chance) == "not tested" and "chance" in chance["why"]
    # over K simple runs: the gap from their mean
    runs = gap_closed([model([0.55, 0.55]), model([0.65, 0.65])], model([0.85, 0.85]), multitask, ["x", "y"],
                      n_boot=300)
    assert runs["share"] == pytest.approx(100 * 25 / 30) and runs["accuracy"][0] == pytest.approx(0.6)
    collapsed = gap_closed(simple, model([0.85, 0.85]), multitask, ["x", "y"], n_boot=300, collapsed="one run")
    assert _outcome(collapsed) == "not tested" and collapsed["why"] == "one run"


def test_a_collapsed_mixture_is_detected_and_not_tested():
    from nbmerge.experiments.pareto import collapsed

    def records(r):
        return [{"responsibilities": row} for row in r]

    hard = records([[[1.0, 0.0, 0.0], [0.999, 0.001, 0.0]], [[1.0, 0.0, 0.0], [0.995, 0.005, 0.0]]])
    found = collapsed(hard)
    assert found["same_run"] == 0 and found["runs"] == {0: [0], 1: [0]} and "IVON-Hess run 0" in found["text"]
    mixed_runs = collapsed(records([[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]]))
    assert mixed_runs["same_run"] is None and mixed_runs["runs"] == {0: [1], 1: [0]}
    assert collapsed(records([[[0.6, 0.4, 0.0], [1.0, 0.0, 0.0]]])) is None     # a task mixes its runs
    assert collapsed(records([[[1.0], [1.0]]])) is None                          # K = 1: nothing to collapse
    assert collapsed(None) is None


def test_p3_is_decided_on_medians_of_interleaved_timings():
    from nbmerge.experiments.pareto import ParetoConfig, p3_claim
    from nbmerge.evaluate.verdicts import OUTCOMES

    config = _config(**{**SMOKE, "tasks": ("digits", "hebrew")})

    def result(merge, step, steps=100):
        return {"tasks": ["digits", "hebrew"], "temperature": {"chosen": {}},
                "multitask": {"train_seconds": [float("nan"), 120.0, float("nan")]},
                "cost": {"merge_seconds": merge, "step_seconds": step, "steps": steps, "em_iterations": 4,
                         "merge_flops": 1e9, "step_flops": 5e10, "threads": 2}}

    fast = p3_claim([result([0.1, 0.11, 0.09, 0.1, 0.12], [1.0, 1.1, 0.9, 1.2, 1.0])], {}, config)
    assert fast.verdict == "held" and fast.decision.estimate == pytest.approx(1000) and fast.decision.threshold == 100
    assert "medians of 5 interleaved timings" in fast.evidence and "GFLOP" in fast.evidence
    slow = p3_claim([result([5.0, 5.2, 4.9, 5.1, 5.0], [1.0, 1.1, 0.9, 1.2, 1.0])], {}, config)
    assert slow.verdict == "contradicted" and slow.decision.estimate == pytest.approx(20)
    assert "costs 505 s" in slow.evidence and "as much as 5.0 multitask runs" in slow.evidence
    none = p3_claim([{**result([1.0] * 5, [1.0] * 5), "cost": None}], {}, config)
    assert none.verdict == "not tested" and "no multitask run" in none.evidence
    assert {fast.verdict, slow.verdict, none.verdict} <= set(OUTCOMES)
    assert isinstance(config, ParetoConfig)


# ------------------------------------------------------------------------------------------- micro zoo, end to end

@pytest.fixture
def micro(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    return load_zoo("micro", micro_cache)


def _forbid(monkeypatch, module, *names):
    def fail(*args, **kwargs):
        raise AssertionError("a cached artifact was recomputed")

    for name in names:
        monkeypatch.setattr(module, name, fail)


def test_posteriors_are_cached_journal_checked_and_deterministic(micro, monkeypatch):
    from nbmerge.engine.io import load_state_dict
    from nbmerge.pools import posteriors

    settings = posteriors.IvonSettings(steps=3)
    files = posteriors.ivon_posteriors(micro, ["digits", "hebrew"], 2, settings, seed=11)
    before = {k: v.clone() for k, v in load_state_dict(files["hebrew"][1]).items()}  # not a view of the file
    sg = posteriors.squared_gradient_posteriors(micro, ["digits"], posteriors.SquaredGradientSettings(examples=4))
    keys = list(posteriors.load_posterior(files["digits"][0])["mean"])
    stacked = posteriors.stack_posteriors([files["digits"], files["hebrew"]], keys)
    assert stacked["means"].shape == (2, 2, sum(v.numel() for v in posteriors.load_posterior(sg["digits"])["mean"].values()))
    assert (stacked["precisions"] > 0).all() and stacked["prior_precision"] == pytest.approx(1e6 * 1e-4)
    assert not torch.equal(stacked["means"][0, 0], stacked["means"][0, 1])  # the K runs differ by seed

    with monkeypatch.context() as patch:  # a second call reuses every file
        _forbid(patch, posteriors, "train_ivon", "squared_gradient_precision")
        assert posteriors.ivon_posteriors(micro, ["digits", "hebrew"], 2, settings, seed=11) == files
        assert posteriors.squared_gradient_posteriors(micro, ["digits"],
                                                      posteriors.SquaredGradientSettings(examples=4)) == sg

    victim = files["hebrew"][1]
    victim.write_bytes(victim.read_bytes()[:-8])  # truncated: the journal's checksum no longer matches
    again = posteriors.ivon_posteriors(micro, ["digits", "hebrew"], 2, settings, seed=11)
    assert again == files
    after = load_state_dict(victim)  # retrained, bit for bit (only the recorded wall time differs)
    assert all(torch.equal(before[k], after[k]) for k in before)
    with pytest.raises(NbmergeError, match="components must be a positive integer"):
        posteriors.ivon_posteriors(micro, ["digits"], 0, settings)
    with pytest.raises(NbmergeError, match="not in this suite"):
        posteriors.ivon_posteriors(micro, ["fashion"], 1, settings)
    with pytest.raises(NbmergeError, match="same number of components"):
        posteriors.stack_posteriors([files["digits"], files["hebrew"][:1]], keys)


def test_multitask_vertex_is_single_task_fine_tuning(micro):
    from nbmerge.engine.io import load_state_dict
    from nbmerge.models.base import encoder_state_dict
    from nbmerge.pools import posteriors
    from nbmerge.pools.train import finetune
    from nbmerge.pools.zoo import encoder_from_state, seed_of_task

    # with the zoo's own settings a vertex is the zoo's expert (no training)
    assert posteriors.multitask_run(micro, {"digits": 0.0, "hebrew": 1.0}) == micro.expert_path("hebrew")
    short = posteriors.MultitaskSettings(steps=3)
    path = posteriors.multitask_run(micro, {"digits": 1.0, "hebrew": 0.0}, short)
    expert = finetune(encoder_from_state(load_state_dict(micro.base_path), micro.arch), micro.heads()["digits"],
                      micro.arrays["digits"]["train_x"], micro.arrays["digits"]["train_y"],
                      micro.recipe, seed_of_task("digits"), steps=3)
    trained, expected = load_state_dict(path), encoder_state_dict(expert, micro.arch.prefix)
    assert all(torch.equal(trained[k], expected[k]) for k in expected)
    mixed = posteriors.multitask_run(micro, {"hebrew": 0.5, "digits": 0.5}, short)
    assert mixed.name == "digits=0.500000+hebrew=0.500000.safetensors"
    assert float(posteriors.read_metadata(mixed)["seconds"]) > 0
    with pytest.raises(NbmergeError, match="simplex"):
        posteriors.multitask_run(micro, {"digits": 0.7, "hebrew": 0.7}, short)


SMOKE = dict(suite="micro", tasks=("digits", "hebrew", "devanagari"), smoke=True, components=2, ivon_steps=3,
             multitask_steps=3, sg_examples=8, em_iterations=5, temperatures=(0.5, 2.0), multitask_divisions_2=2,
             multitask_divisions_3=1, multitask_centroid=True, front_divisions_2=2, front_divisions_3=1,
             timing_divisions_2=0, timing_divisions_3=2, timing_repeats=5, val_examples=40, bootstrap=200,
             families=("simple", "ivon_hess", "soup_ivon_hess", "multi_ivon_hess", "adamw_simple", "adamw_sg_hess"))


def test_notebook_logic_end_to_end_on_micro(micro_cache, tmp_path, monkeypatch):
    """What notebooks/30_pareto.ipynb runs, with smoke-sized budgets, twice: the second run trains, merges and
    evaluates nothing (trial cache and records) and gives the same numbers and verdicts."""
    import matplotlib

    matplotlib.use("Agg")
    from nbmerge.evaluate import protocol
    from nbmerge.experiments import pareto as experiment
    from nbmerge.experiments.pareto import fronts, runs
    from nbmerge.experiments.common import finish
    from nbmerge.engine.io import jsonable
    from nbmerge.pools import posteriors
    from nbmerge.tune.study import open_lab

    config = _config(**SMOKE, cache=str(micro_cache))

    def run():
        lab = open_lab(config.suite, cache=config.cache, device=config.device, val_examples=config.val_examples,
                       seed=config.seed)
        zoo = lab.zoo
        surrogates = experiment.prepare(zoo, config, log=lambda *_: None)
        results = [experiment.run_subset(zoo, index, surrogates, config, lab.cache, log=lambda *_: None)
                   for index in ([0, 1], [0, 1, 2])]
        costs = experiment.cost_rows(results, surrogates)
        return surrogates, results, costs, experiment.pareto_claims(results, costs, surrogates, config)

    surrogates, results, costs, claims = run()
    two, three = results
    assert len(two["alphas"]) == 3 and len(three["multitask"]["alphas"]) == 4 and two["timing"]["alphas"] == 3
    assert three["timing"]["alphas"] == 6  # timed separately (divisions 2); the 2-task front by its own merges
    names = experiment.front_names(config)
    assert names[:4] == ["simple@0", "simple@1", "ivon_hess@0", "ivon_hess@1"] and "multi_ivon_hess_plain" in names
    for result in results:
        assert set(result["fronts"]) == set(names)
        for front in result["fronts"].values():
            acc = np.array(front["accuracy"])
            assert acc.shape == (len(result["alphas"]), len(result["tasks"])) and ((0 <= acc) & (acc <= 1)).all()
        rows = {q["front"]: q for q in result["quality"]}
        assert rows["multitask"]["gap"] == 0 and all(q["gap"] >= 0 for q in rows.values())
        assert all(q["hypervolume_low"] <= q["hypervolume"] + 1e-12 for q in rows.values())
        # every α chosen on validation among the multitask α, for every front and for multitask
        assert all(q["val_alpha"] in [[round(a, 3) for a in alpha] for alpha in result["multitask_alphas"]]
                   for q in rows.values())
        temperature = result["temperature"]
        assert temperature["scale"] > 0 and len(temperature["candidates"]) == 2
        assert temperature["chosen"]["factor"] in (0.5, 2.0)
        best = max(temperature["candidates"], key=lambda c: c["val_accuracy"])
        assert temperature["chosen"]["factor"] == best["factor"]
        for records in result["em"].values():  # a responsibility per α, task and run, summing to 1
            r = np.array([rec["responsibilities"] for rec in records])
            assert r.shape == (len(result["alphas"]), len(result["tasks"]), 2) and np.allclose(r.sum(-1), 1)
        assert len(experiment.responsibility_rows(result)) == 2 * len(result["alphas"]) * len(result["tasks"])
    from nbmerge.evaluate.verdicts import OUTCOMES

    assert [c.id for c in claims] == ["P1a", "P1b", "P2", "P3"]
    assert all(c.verdict in OUTCOMES and c.evidence and c.suite == "micro" and c.decision is not None
               for c in claims)
    for result in results:  # the IVON multitask reference, at every multitask α
        assert len(result["multitask_ivon"]["accuracy"]) == len(result["multitask_alphas"])
        assert "multitask_ivon" in {q["front"] for q in result["quality"]}
        cost = result["cost"]
        assert len(cost["merge_seconds"]) == len(cost["step_seconds"]) == 5 and cost["steps"] == 3
        assert cost["merge_flops"] > 0 and cost["step_flops"] > 0
    assert not any("BRIEF" in c.source or "METHODS" in c.source for c in claims)
    metrics = experiment.metrics(results, costs, surrogates)
    json.dumps(jsonable(metrics))
    record = finish("30_pareto", headline=experiment.headline(results), claims=claims, config=experiment.as_dict(config),
                    metrics=metrics, out=tmp_path / "metrics.json")
    assert json.loads((tmp_path / "metrics.json").read_text())["headline"]["value"] == record["headline"]["value"]
    experiment.plot_front_2d(two)
    experiment.plot_front_3d(three)
    experiment.plot_responsibilities(two)
    assert len(experiment.alt_front_2d(two)) > 40 and len(experiment.alt_responsibilities(two)) > 40

    _forbid(monkeypatch, posteriors, "train_ivon", "squared_gradient_precision", "multitask_finetune")
    _forbid(monkeypatch, runs, "train_ivon_multitask", "_multitask_stepper")
    _forbid(monkeypatch, protocol, "evaluate_predictions")
    for module in (fronts, runs):
        _forbid(monkeypatch, module, "merge_family")
    _forbid(monkeypatch, pareto, "iter_mog_merge", "log_density_spread")
    _, again, costs_again, claims_again = run()
    for first, second in zip(results, again):
        assert {f: v["accuracy"] for f, v in first["fronts"].items()} == \
            {f: v["accuracy"] for f, v in second["fronts"].items()}
        assert first["multitask"]["accuracy"] == second["multitask"]["accuracy"]
        assert first["timing"]["seconds"] == second["timing"]["seconds"] and first["em"] == second["em"]
        assert first["cost"] == second["cost"]
        assert first["multitask_ivon"]["accuracy"] == second["multitask_ivon"]["accuracy"]
    assert [(c.verdict, c.ours) for c in claims] == [(c.verdict, c.ours) for c in claims_again]


def test_tour_preview_shows_the_three_families(micro):
    import matplotlib

    matplotlib.use("Agg")
    from nbmerge.experiments.pareto import NESTED, tour_preview

    preview = tour_preview(micro, divisions=4, components=2, ivon_steps=3, eval_examples=40)
    assert preview["tasks"] == ["digits", "hebrew"] and list(preview["fronts"]) == list(NESTED)
    assert all(np.array(f["accuracy"]).shape == (5, 2) for f in preview["fronts"].values())
    assert preview["figure"] is not None and set(preview["hypervolume"]) == set(NESTED)
    with pytest.raises(NbmergeError, match="2-task front"):
        tour_preview(micro, tasks=["digits"], plot=False)


def test_alpha_batches_fit_the_memory_budget():
    from nbmerge.experiments.pareto.fronts import _BYTES_PER_ALPHA_PER_PARAMETER, alpha_chunks

    alphas = torch.linspace(0, 1, 10)[:, None]
    surrogates = {"base": torch.zeros(1000)}
    per_alpha = 1000 * _BYTES_PER_ALPHA_PER_PARAMETER
    chunks = alpha_chunks(alphas, surrogates, budget=3 * per_alpha)
    assert [len(c) for c in chunks] == [3, 3, 3, 1] and torch.equal(torch.cat(chunks), alphas)
    assert len(alpha_chunks(alphas, surrogates, budget=1)) == 10  # at least one α per batch
    assert len(alpha_chunks(alphas, surrogates)) == 1  # a small model: every α in one batch, as before


def test_pareto_records_are_sealed_and_a_damaged_one_is_computed_again(tmp_path, capsys):
    from types import SimpleNamespace

    from nbmerge.experiments.pareto.fronts import RecordStore

    key = {"front": "ivon_hess", "temperature": 1.0}
    RecordStore(SimpleNamespace(root=tmp_path)).put(key, {"seconds": 12.5})
    assert RecordStore(SimpleNamespace(root=tmp_path)).get(key) == {"seconds": 12.5}
    [record] = (tmp_path / "pareto").glob("*.json")
    record.write_text(record.read_text().replace("12.5", "1.5"))
    assert RecordStore(SimpleNamespace(root=tmp_path)).get(key) is None and "checksum" in capsys.readouterr().out
    assert RecordStore(SimpleNamespace(root=None)).get(key) is None   # memory only without a cache root
