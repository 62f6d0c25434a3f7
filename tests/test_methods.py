"""Analytic tests: each method on inputs whose answer is known in closed form."""

import pytest
import torch

import nbmerge
from nbmerge.methods.iso_c import iso_c_matrix
from nbmerge.methods.iso_cts import iso_cts_matrix
from nbmerge.methods.regmean import regmean_matrix, shrink_off_diagonal
from nbmerge.methods.ties import ties_kernel, topk_threshold
from nbmerge.methods.tsv import tsv_matrix
from nbmerge.methods.wudi import wudi_matrix
from nbmerge.methods.wudi_closed_form import wudi_closed_form_matrix
from nbmerge.engine.walker import WalkOptions

ATOL = 1e-10


def close(a, b, atol=ATOL):
    assert set(a) == set(b)
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=atol, rtol=0, msg=k)


def test_task_arithmetic_single_expert_scale_one_is_the_expert(tiny64):
    base, experts = tiny64
    close(nbmerge.merge("task_arithmetic", base, experts[:1], {"scale": 1.0}), experts[0])


def test_task_arithmetic_is_base_plus_scaled_sum(tiny64):
    base, experts = tiny64
    out = nbmerge.merge("task_arithmetic", base, experts, {"scale": 0.4})
    close(out, {k: base[k] + 0.4 * sum(e[k] - base[k] for e in experts) for k in base})


def test_average_is_mean_of_experts(tiny64):
    base, experts = tiny64
    close(nbmerge.merge("average", base, experts), {k: sum(e[k] for e in experts) / 3 for k in base})


def test_ties_hand_example():
    # three tasks, five entries; thresholds chosen by hand
    deltas = [torch.tensor([1.0, -2.0, 0.1, 3.0, 0.0]),
              torch.tensor([2.0, 1.0, -0.2, -1.0, 0.0]),
              torch.tensor([-0.5, -1.0, 0.3, -1.5, 0.0])]
    thresholds = torch.tensor([0.5, 0.5, 0.5])
    # trimmed: t1 [1,-2,0,3,0] t2 [2,1,0,-1,0] t3 [-.5,-1,0,-1.5,0]; sums [2.5,-2,0,.5,0]
    # signs [+,-,majority,+,majority]
    out = ties_kernel(deltas, thresholds=thresholds, majority=1.0, merge="mean")
    torch.testing.assert_close(out, torch.tensor([1.5, -1.5, 0.0, 3.0, 0.0]))
    out = ties_kernel(deltas, thresholds=thresholds, majority=1.0, merge="sum")
    torch.testing.assert_close(out, torch.tensor([3.0, -3.0, 0.0, 3.0, 0.0]))
    out = ties_kernel(deltas, thresholds=thresholds, majority=1.0, merge="max")
    torch.testing.assert_close(out, torch.tensor([2.0, -2.0, 0.0, 3.0, 0.0]))


def test_topk_threshold_keeps_the_requested_fraction():
    values = torch.randn(1000, generator=torch.Generator().manual_seed(0)).abs()
    kept = (values >= topk_threshold(values, 0.2)).sum().item()
    # the reference keeps |τ| ≥ the (d − int(d·density))-th smallest value: one more than d·density
    assert kept == 201
    assert topk_threshold(values, 1.0) == 0


def test_ties_topk_is_global_over_the_model():
    # one tensor with small updates, one with large: a global top-20% trims the small one entirely
    base = {"small": torch.zeros(100), "large": torch.zeros(100)}
    expert = {"small": torch.full((100,), 0.01), "large": torch.linspace(1, 2, 100)}
    out = nbmerge.merge("ties", base, [expert], {"density": 0.2, "scale": 1.0})
    assert torch.count_nonzero(out["small"]) == 0
    assert torch.count_nonzero(out["large"]) == 41  # 20% of 200 entries (+1, as the reference), all here


def test_ties_density_one_single_expert_is_the_expert(tiny64):
    base, experts = tiny64
    close(nbmerge.merge("ties", base, experts[:1], {"density": 1.0, "scale": 1.0}), experts[0])


def test_dare_without_drop_equals_task_arithmetic(tiny64):
    base, experts = tiny64
    dare = nbmerge.merge("dare", base, experts, {"p": 0.0, "scale": 0.3})
    close(dare, nbmerge.merge("task_arithmetic", base, experts, {"scale": 0.3}))


def test_dare_drops_and_rescales_deterministically(tiny64):
    base, experts = tiny64
    key = "visual.transformer.resblocks.0.mlp.c_fc.weight"
    one = nbmerge.merge("dare", base, experts[:1], {"p": 0.7, "scale": 1.0, "seed": 3})
    again = nbmerge.merge("dare", base, experts[:1], {"p": 0.7, "scale": 1.0, "seed": 3})
    other = nbmerge.merge("dare", base, experts[:1], {"p": 0.7, "scale": 1.0, "seed": 4})
    close(one, again, atol=0)
    assert not torch.equal(one[key], other[key])
    delta, full = one[key] - base[key], experts[0][key] - base[key]
    kept = delta != 0
    assert 0.2 < kept.double().mean() < 0.4
    torch.testing.assert_close(delta[kept], full[kept] / 0.3)


def test_dare_ties_runs_and_differs_from_dare_ta(tiny):
    base, experts = tiny
    a = nbmerge.merge("dare", base, experts, {"merge": "ties", "scale": 1.0})
    b = nbmerge.merge("dare", base, experts, {"merge": "ta", "scale": 1.0})
    assert any(not torch.equal(a[k], b[k]) for k in a)


def test_tsv_single_task_is_the_full_rank_task_vector():
    delta = torch.randn(12, 7, dtype=torch.float64)
    torch.testing.assert_close(tsv_matrix([delta]), delta)


def test_tsv_single_task_model_returns_expert(tiny64):
    base, experts = tiny64
    close(nbmerge.merge("tsv", base, experts[:1]), experts[0], atol=1e-9)


def test_tsv_orthogonal_tasks_add_exactly():
    # two rank-4 task vectors on orthogonal row and column subspaces of R^8: the top r/T = 4 directions of
    # each cover it exactly and the stacked bases are already orthonormal, so TSV-M is their sum
    q_left, _ = torch.linalg.qr(torch.randn(8, 8, dtype=torch.float64))
    q_right, _ = torch.linalg.qr(torch.randn(8, 8, dtype=torch.float64))
    s1 = torch.diag(torch.tensor([4.0, 3.0, 2.0, 1.0], dtype=torch.float64))
    s2 = torch.diag(torch.tensor([5.0, 1.5, 1.0, 0.5], dtype=torch.float64))
    d1 = q_left[:, :4] @ s1 @ q_right[:, :4].T
    d2 = q_left[:, 4:] @ s2 @ q_right[:, 4:].T
    torch.testing.assert_close(tsv_matrix([d1, d2]), d1 + d2)


def test_iso_c_flattens_the_spectrum_of_the_sum():
    deltas = [torch.randn(10, 6, dtype=torch.float64) for _ in range(3)]
    out = iso_c_matrix(deltas)
    s_sum = torch.linalg.svdvals(sum(deltas))
    torch.testing.assert_close(torch.linalg.svdvals(out), torch.full((6,), s_sum.mean().item(),
                                                                     dtype=torch.float64))
    # same singular subspaces as the sum
    u, _, vh = torch.linalg.svd(sum(deltas), full_matrices=False)
    torch.testing.assert_close(out, s_sum.mean() * u @ vh)


def test_iso_c_single_task_is_isotropic_version_of_it():
    delta = torch.randn(5, 9, dtype=torch.float64)
    u, s, vh = torch.linalg.svd(delta, full_matrices=False)
    torch.testing.assert_close(iso_c_matrix([delta]), s.mean() * u @ vh)


def test_iso_cts_with_all_common_space_is_iso_c():
    deltas = [torch.randn(10, 6, dtype=torch.float64) for _ in range(3)]
    torch.testing.assert_close(iso_cts_matrix(deltas, common_space_fraction=1.0), iso_c_matrix(deltas))


def test_iso_cts_is_isotropic_and_full_rank():
    deltas = [torch.randn(20, 12, dtype=torch.float64) for _ in range(4)]
    s = torch.linalg.svdvals(iso_cts_matrix(deltas))
    torch.testing.assert_close(s, torch.full_like(s, s.mean().item()))


def test_regmean_single_expert_returns_expert_and_identity_grams_average(tiny64):
    base, experts = tiny64
    gram_keys = [k for k in base if k.endswith("weight") and base[k].dim() == 2 and "embed" not in k]
    eye = {k: torch.eye(base[k].shape[1], dtype=torch.float64) * 3.0 for k in gram_keys}
    close(nbmerge.merge("regmean", base, experts[:1], grams=[eye]), experts[0], atol=1e-9)
    close(nbmerge.merge("regmean", base, experts, grams=[eye] * 3), nbmerge.merge("average", base, experts),
          atol=1e-9)


def test_regmean_solves_the_least_squares_problem():
    gen = torch.Generator().manual_seed(0)
    weights = [torch.randn(4, 6, generator=gen, dtype=torch.float64) for _ in range(3)]
    inputs = [torch.randn(30, 6, generator=gen, dtype=torch.float64) for _ in range(3)]
    grams = [x.T @ x for x in inputs]
    merged = regmean_matrix(weights, grams=grams, offdiag_scale=1.0)
    # gradient of Σ_t ‖X_t Wᵀ − X_t W_tᵀ‖² vanishes at the solution
    grad = sum((merged - w) @ g for w, g in zip(weights, grams))
    torch.testing.assert_close(grad, torch.zeros_like(grad), atol=1e-9, rtol=0)


def test_regmean_off_diagonal_shrinkage():
    gram = torch.tensor([[4.0, 2.0], [2.0, 9.0]])
    torch.testing.assert_close(shrink_off_diagonal(gram, 0.5), torch.tensor([[4.0, 1.0], [1.0, 9.0]]))


def test_regmean_singular_gram_sum_is_a_clear_error():
    delta = [torch.randn(3, 4, dtype=torch.float64)]
    rank_one = torch.ones(4, 4, dtype=torch.float64)
    with pytest.raises(nbmerge.NumericalError, match="singular"):
        regmean_matrix(delta, grams=[rank_one], offdiag_scale=1.0)


def test_fisher_equal_weights_average_and_dominant_fisher_wins(tiny64):
    base, experts = tiny64
    ones = [{k: torch.ones_like(v) for k, v in base.items()} for _ in experts]
    close(nbmerge.merge("fisher", base, experts, fishers=ones), nbmerge.merge("average", base, experts), atol=1e-9)
    big = [{k: torch.full_like(v, 1e9 if t == 1 else 1e-3) for k, v in base.items()} for t in range(3)]
    out = nbmerge.merge("fisher", base, experts, {"normalize": False}, fishers=big)
    close(out, experts[1], atol=1e-6)


def _wudi_autograd(deltas, iters, lr):
    """WUDI's published loop, written out with autograd (the reference formulation)."""
    tvs = torch.stack(deltas)
    merged = torch.nn.Parameter(tvs.sum(0))
    norms = tvs.reshape(len(deltas), -1).norm(dim=-1).square()
    opt = torch.optim.Adam([merged], lr=lr)
    for _ in range(iters):
        loss = (((merged.unsqueeze(0) - tvs) @ tvs.transpose(1, 2)).square() / norms[:, None, None]).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return merged.detach()


def test_wudi_fast_gradient_matches_the_autograd_loop():
    gen = torch.Generator().manual_seed(0)
    deltas = [torch.randn(12, 8, generator=gen, dtype=torch.float64) * 0.01 for _ in range(3)]
    torch.testing.assert_close(wudi_matrix(deltas, iters=50, lr=1e-3), _wudi_autograd(deltas, 50, 1e-3))


def test_wudi_zero_iterations_is_the_sum_and_default_keeps_non_linear_at_base(tiny64):
    base, experts = tiny64
    out = nbmerge.merge("wudi", base, experts, {"iters": 0})
    key = "visual.transformer.resblocks.0.mlp.c_fc.weight"
    torch.testing.assert_close(out[key], base[key] + sum(e[key] - base[key] for e in experts))
    for key in ("visual.positional_embedding", "visual.proj", "visual.conv1.weight",
                "visual.transformer.resblocks.0.ln_1.weight"):
        torch.testing.assert_close(out[key], base[key], atol=0, rtol=0)
    fb = nbmerge.merge("wudi", base, experts, {"iters": 0}, walk=WalkOptions(matrix_rule="ndim2", fallback="mean"))
    torch.testing.assert_close(fb["visual.proj"], base["visual.proj"]
                               + sum(e["visual.proj"] - base["visual.proj"] for e in experts))


def test_wudi_closed_form_solves_the_normal_equations_and_beats_adam():
    gen = torch.Generator().manual_seed(1)
    deltas = [torch.randn(20, 8, generator=gen, dtype=torch.float64) for _ in range(3)]

    def loss(m):
        return sum((((m - t) @ t.T) ** 2).sum() / t.square().sum() for t in deltas)

    exact = wudi_closed_form_matrix(deltas)
    assert loss(exact) < loss(wudi_matrix(deltas, iters=300, lr=1e-5))
    single = wudi_closed_form_matrix(deltas[:1])
    torch.testing.assert_close(single, deltas[0])


def test_wudi_hand_written_adam_is_torch_adam_bit_for_bit():
    from nbmerge.methods.wudi import wudi_normal_equations

    gen = torch.Generator().manual_seed(2)
    deltas = [torch.randn(24, 16, generator=gen) * 0.01 for _ in range(3)]
    a, b = wudi_normal_equations(deltas)
    param = torch.nn.Parameter(sum(deltas))
    optimizer = torch.optim.Adam([param], lr=1e-5)
    for _ in range(30):
        param.grad = 2.0 * (param.detach() @ a - b)
        optimizer.step()
    assert torch.equal(param.detach(), wudi_matrix(deltas, iters=30))


def _tsv_by_lapack_svd(deltas):
    """TSV-M as the reference computes it: full SVDs and SVD-based polar factors."""
    k = int(min(deltas[0].shape) * (1.0 / len(deltas)))
    parts = [torch.linalg.svd(d, full_matrices=False) for d in deltas]
    left = torch.cat([u[:, :k] for u, _, _ in parts], 1)
    right = torch.cat([vh[:k] for _, _, vh in parts], 0)
    a, _, b = torch.linalg.svd(left, full_matrices=False)
    c, _, e = torch.linalg.svd(right, full_matrices=False)
    return (a @ b * torch.cat([s[:k] for _, s, _ in parts])) @ (c @ e)


@pytest.mark.parametrize("shape", [(96, 32), (32, 128)])
def test_gram_path_tsv_is_at_least_as_accurate_as_float32_lapack(shape):
    gen = torch.Generator().manual_seed(0)
    deltas = [(torch.randn(shape[0], 8, generator=gen) @ torch.randn(8, shape[1], generator=gen) / 3
               + 0.1 * torch.randn(shape, generator=gen)) * 0.01 for _ in range(4)]
    exact = _tsv_by_lapack_svd([d.double() for d in deltas])
    scale = exact.abs().max()
    ours = (tsv_matrix(deltas).double() - exact).abs().max() / scale
    lapack = (_tsv_by_lapack_svd(deltas).double() - exact).abs().max() / scale
    assert ours < 1e-5
    assert ours <= 2 * lapack


def test_top_singular_and_polar_fall_back_to_the_svd_on_rank_deficient_input():
    from nbmerge.engine.linalg import polar_factor, top_singular

    gen = torch.Generator().manual_seed(3)
    low_rank = torch.randn(20, 2, generator=gen, dtype=torch.float64) @ torch.randn(2, 10, generator=gen,
                                                                                  dtype=torch.float64)
    u, s, vh = top_singular(low_rank, 4)  # asks for more directions than the rank
    torch.testing.assert_close(u.T @ u, torch.eye(4, dtype=torch.float64))
    torch.testing.assert_close((u * s) @ vh, low_rank)
    factor = polar_factor(low_rank)
    left, _, right_t = torch.linalg.svd(low_rank, full_matrices=False)
    projector = left[:, :2] @ left[:, :2].T
    torch.testing.assert_close(projector @ factor, left[:, :2] @ right_t[:2])
    well = torch.randn(12, 5, generator=gen, dtype=torch.float64)
    polar, singular = polar_factor(well, return_singular_values=True)
    torch.testing.assert_close(polar.T @ polar, torch.eye(5, dtype=torch.float64))
    torch.testing.assert_close(singular, torch.linalg.svdvals(well))


def test_the_fallback_svd_is_float64_off_the_cpu_and_rounded_once(monkeypatch):
    from nbmerge.engine import linalg

    assert not linalg.wide_svd(torch.device("cpu")) and linalg.wide_svd(torch.device("cuda", 0))
    assert linalg.wide_svd("meta")
    gen = torch.Generator().manual_seed(5)
    low_rank = (torch.randn(40, 3, generator=gen, dtype=torch.float64)
                @ torch.randn(3, 24, generator=gen, dtype=torch.float64)).float()
    wide = low_rank.double()
    u64, s64, vh64 = torch.linalg.svd(wide, full_matrices=False)
    u32, s32, vh32 = torch.linalg.svd(low_rank, full_matrices=False)
    # on the CPU: LAPACK's float32 SVD, as before
    u, s, vh = linalg.top_singular(low_rank, 5)
    assert u.dtype == torch.float32
    assert torch.equal(u, u32[:, :5]) and torch.equal(s, s32[:5]) and torch.equal(vh, vh32[:5])
    assert torch.equal(linalg.polar_factor(low_rank), u32 @ vh32)
    # on a device where it is wide (stood in for by the CPU): the float64 SVD, each result rounded once
    monkeypatch.setattr(linalg, "wide_svd", lambda device: True)
    u, s, vh = linalg.top_singular(low_rank, 5)
    assert u.dtype == s.dtype == vh.dtype == torch.float32
    assert torch.equal(u, u64[:, :5].float()) and torch.equal(s, s64[:5].float()) and torch.equal(vh, vh64[:5].float())
    factor, singular = linalg.polar_factor(low_rank, return_singular_values=True)
    assert torch.equal(factor, (u64 @ vh64).float()) and torch.equal(singular, s64.float())


# -- TIES computed in slices (large tensors) gives the same values as in one piece ---------------------------------

@pytest.mark.parametrize("merge", ["mean", "sum", "max"])
def test_ties_kernel_in_slices_equals_one_piece(monkeypatch, merge):
    from nbmerge.methods import ties

    g = torch.Generator().manual_seed(1)
    deltas = [torch.randn(37, 29, generator=g).round(decimals=1) for _ in range(3)]  # zeros and exact ties
    thresholds = torch.tensor([0.3, 0.5, 0.0])
    whole = ties._ties_entries(deltas, thresholds, -1.0, merge)
    monkeypatch.setattr(ties, "SLICE_BYTES", 3 * 4 * 100)  # slices of 100 entries, the last one shorter
    sliced = ties_kernel(deltas, thresholds=thresholds, majority=-1.0, merge=merge)
    assert sliced.shape == whole.shape and sliced.dtype == whole.dtype
    assert torch.equal(sliced, whole)


@pytest.mark.parametrize("method,params", [("ties", {"density": 0.3}), ("dare", {"merge": "ties", "density": 0.5})])
def test_ties_merges_do_not_depend_on_the_slice_size(monkeypatch, tiny64, method, params):
    from nbmerge.methods import ties

    base, experts = tiny64
    whole = nbmerge.merge(method, base, experts, params)
    monkeypatch.setattr(ties, "SLICE_BYTES", 3 * 8 * 50)
    sliced = nbmerge.merge(method, base, experts, params)
    assert all(torch.equal(whole[k], sliced[k]) for k in base)


def test_topk_threshold_in_place_finds_the_same_value():
    values = torch.randn(10_001, generator=torch.Generator().manual_seed(2)).abs()
    for density in (0.01, 0.2, 0.9):
        assert topk_threshold(values.clone(), density, overwrite=True) == topk_threshold(values, density)


def test_ties_density_one_keeps_every_entry(tiny64):
    base, experts = tiny64
    out = nbmerge.merge("ties", base, experts, {"density": 1.0})
    zeros = torch.zeros(len(experts), dtype=torch.float64)
    expected = {k: base[k] + ties_kernel([e[k] - base[k] for e in experts], thresholds=zeros, majority=1.0)
                for k in base}
    close(out, expected)


@pytest.mark.parametrize("density", [0.2, 0.5, 0.9, 1e-6])
def test_global_thresholds_equal_the_flattened_models_order_statistic(density):
    """The radix selection of TIES' threshold gives topk_threshold's value on the flattened model, with tied
    magnitudes, zeros, signs and float64 task vectors."""
    from nbmerge.methods.ties import global_thresholds
    from nbmerge.engine.walker import ModelView, WalkOptions

    generator = torch.Generator().manual_seed(3)
    base = {"a": torch.zeros(40, 30, dtype=torch.float64), "b": torch.zeros(1000, dtype=torch.float64),
            "c": torch.zeros(7, dtype=torch.float64)}
    experts = []
    for t in range(3):
        expert = {k: torch.randn(v.shape, generator=generator, dtype=torch.float64) * 10.0 ** (t - 1)
                  for k, v in base.items()}
        expert["b"][:300] = 0.25  # many tied magnitudes, of either sign
        expert["b"][300:400] = -0.25
        expert["c"][:] = 0.0
        experts.append(expert)
    view = ModelView(base, experts, WalkOptions(), {})
    keys = view.float_keys()
    total = sum(v.numel() for v in base.values())
    k = total - int(total * density)
    got = global_thresholds(view, keys, k)
    for t, expert in enumerate(experts):
        # float64 task vectors get their exact float64 order statistic (not its float32 rounding, which can sit
        # on either side of the true value and move one entry across the threshold)
        flat = torch.cat([expert[key].reshape(-1).abs() for key in keys])
        assert got[t].dtype == torch.float64 and got[t] == topk_threshold(flat, density), t


def test_dare_drops_in_place_without_touching_the_callers_tensors():
    from nbmerge.methods.dare import dare_drop
    from nbmerge.testing import random_experts, random_model

    base = random_model({"a": (64, 32), "b": (100,)})
    experts = random_experts(base, 2)
    before = [{k: v.clone() for k, v in e.items()} for e in experts]
    for merge in ("ta", "ties"):
        nbmerge.merge("dare", base, experts, {"merge": merge, "p": 0.4})
    assert all(torch.equal(e[k], b[k]) for e, b in zip(experts, before) for k in e)
    deltas = [torch.ones(5, 5)]
    dropped = dare_drop(deltas, key="a", p=0.5)  # the public function copies unless told otherwise
    assert torch.equal(deltas[0], torch.ones(5, 5)) and not torch.equal(dropped[0], deltas[0])
    assert dare_drop(deltas, key="a", p=0.5, inplace=True)[0] is deltas[0]
