"""ACE-Merging: analytic identities of the kernel, the walk, the CLI, bad input and the peer harness's pure parts."""

import math

import pytest
import torch

import nbmerge
from bench.peers import ace_official as peer
from nbmerge.cli import main
from nbmerge.evaluate.diagnostics import ace_diagnostics
from nbmerge.errors import MethodError, NumericalError
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.methods.ace import PAPER_EPS, ace_matrix, ace_system, heterogeneity, refinement_rank
from nbmerge.methods.regmean import regmean_matrix
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model

BASIC = {"adaptive": "off", "prior": False, "refine": "off"}  # the paper's "basic closed form" (ablation row 1)


def randn(*shape, seed=0, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * scale


def centred(delta):
    return delta - delta.mean(dim=0, keepdim=True)


def task_vectors(shape=(12, 6), n=3, scales=None, seed=0):
    scales = scales or [1.0] * n
    return [randn(*shape, seed=seed + t, scale=0.1 * s) for t, s in enumerate(scales)]


def model_with_text_projection(dtype=torch.float32, n=3, scales=None):
    shapes = dict(openclip_vit_shapes(), text_projection=(8, 8))
    base = random_model(shapes, dtype=dtype)
    experts = random_experts(base, n)
    if scales:
        experts = [{k: base[k] + s * (e[k] - base[k]) for k in base} for s, e in zip(scales, experts)]
    return base, experts


# -- (a) reduction to RegMean -----------------------------------------------------------------------------

def test_basic_closed_form_is_regmean_with_centred_grams():
    deltas = task_vectors()
    eps = 0.05
    out = ace_matrix(deltas, eps=eps, **BASIC)
    regs = [centred(d).T @ centred(d) + eps * torch.eye(6, dtype=torch.float64) for d in deltas]
    numerator = sum(centred(d) @ r for d, r in zip(deltas, regs))
    expected = numerator @ torch.linalg.inv(sum(regs))
    torch.testing.assert_close(out, expected, atol=1e-12, rtol=1e-10)
    # the same thing through nbmerge's RegMean kernel (no off-diagonal shrinkage)
    torch.testing.assert_close(out, regmean_matrix([centred(d) for d in deltas], grams=regs, offdiag_scale=1.0),
                               atol=1e-12, rtol=1e-10)


def test_forced_normalisation_is_regmean_with_trace_weighted_grams():
    deltas = task_vectors(scales=[1.0, 3.0, 0.2])
    eps = 0.05
    out = ace_matrix(deltas, eps=eps, adaptive="on", prior=False, refine="off")
    regs = []
    for d in deltas:
        gram = centred(d).T @ centred(d)
        regs.append((gram + eps * torch.eye(6, dtype=torch.float64)) / (gram.trace() + 1e-12))
    expected = sum(centred(d) @ r for d, r in zip(deltas, regs)) @ torch.linalg.inv(sum(regs))
    torch.testing.assert_close(out, expected, atol=1e-12, rtol=1e-10)


def test_prior_adds_the_non_symmetric_rank_one_row_broadcast():
    deltas = task_vectors()
    eps = 0.05
    system = ace_system(deltas, eps=eps, adaptive="off", refine="off")
    grams = sum(centred(d).T @ centred(d) for d in deltas)
    c = grams.mean(dim=0)  # column means of Σ_t Σ̃_t (un-regularised)
    lhs = grams + 3 * eps * torch.eye(6, dtype=torch.float64) + torch.ones(6, 1, dtype=torch.float64) * c
    torch.testing.assert_close(system.lhs, lhs, atol=1e-14, rtol=1e-12)
    out = ace_matrix(deltas, eps=eps, adaptive="off", refine="off")
    torch.testing.assert_close(out, system.rhs @ torch.linalg.inv(lhs), atol=1e-12, rtol=1e-10)
    # with the flag: the prior is built from trace-normalised Σ̃_t and divided by τ̄ = mean ‖ΔW_t‖² (uncentred)
    system = ace_system(deltas, eps=eps, adaptive="on", refine="off")
    normed = sum(centred(d).T @ centred(d) / ((centred(d) ** 2).sum() + 1e-12) for d in deltas)
    tau_bar = torch.stack([(d ** 2).sum() for d in deltas]).mean()
    without = ace_system(deltas, eps=eps, adaptive="on", prior=False, refine="off").lhs
    torch.testing.assert_close(system.lhs - without, torch.ones(6, 1, dtype=torch.float64)
                               * (normed.mean(dim=0) / (tau_bar + 1e-12)), atol=1e-12, rtol=1e-10)


# -- (b) one task -----------------------------------------------------------------------------------------

def test_single_task_without_prior_is_the_centred_task_vector():
    delta = randn(10, 7, scale=0.1)
    system = ace_system([delta])
    assert math.isnan(system.gamma) and not system.flag and not system.refined  # γ undefined for T = 1
    for eps in (1e-2, 1e-5):
        torch.testing.assert_close(ace_matrix([delta], eps=eps, prior=False), centred(delta), atol=1e-12, rtol=1e-10)


def test_single_task_with_prior_is_the_sherman_morrison_form():
    # The official code with T = 1: W̃ Σ_reg (Σ_reg + 1cᵀ)⁻¹ = W̃ − (W̃1)(cᵀΣ_reg⁻¹) / (1 + cᵀΣ_reg⁻¹1).
    delta = randn(10, 7, scale=0.1)
    eps = 1e-2
    w = centred(delta)
    reg = w.T @ w + eps * torch.eye(7, dtype=torch.float64)
    c = (w.T @ w).mean(dim=0)
    ones = torch.ones(7, dtype=torch.float64)
    c_inv = torch.linalg.solve(reg, c)  # Σ_reg symmetric: cᵀΣ_reg⁻¹ = (Σ_reg⁻¹c)ᵀ
    expected = w - torch.outer(w @ ones, c_inv) / (1 + c_inv @ ones)
    torch.testing.assert_close(ace_matrix([delta], eps=eps), expected, atol=1e-12, rtol=1e-10)


def test_single_task_small_eps_limit_is_the_centred_vector_times_a_fixed_projector():
    # ε → 0 with W̃ of full column rank: cᵀΣ⁻¹ = 1ᵀ/d_in, so the result is W̃(I − 11ᵀ/(2 d_in)).
    delta = randn(40, 8, scale=0.1)
    out = ace_matrix([delta], eps=1e-10)
    expected = centred(delta) @ (torch.eye(8, dtype=torch.float64) - torch.ones(8, 8, dtype=torch.float64) / 16)
    torch.testing.assert_close(out, expected, atol=1e-8, rtol=1e-7)


# -- (c) heterogeneity and the flag -----------------------------------------------------------------------

def test_gamma_matches_a_hand_computation_and_the_flag_fires_on_spread_norms():
    unit = randn(10, 7)
    unit = unit / unit.norm()
    deltas = [s * unit for s in (1.0, 10.0, 100.0)]  # ‖ΔW‖² = 1, 1e2, 1e4
    logs = [math.log(n + 1e-12) for n in (1.0, 1e2, 1e4)]
    mean = sum(logs) / 3
    var = sum((x - mean) ** 2 for x in logs) / 2  # unbiased, as torch.var
    assert ace_system(deltas, lhs_only=True).gamma == pytest.approx(var / (mean ** 2 + 1e-12), rel=1e-12)
    assert ace_system(deltas, lhs_only=True).gamma == pytest.approx(1.0, rel=1e-9)
    assert ace_system(deltas, lhs_only=True).flag
    homogeneous = [s * 0.1 * unit for s in (1.0, 1.1, 0.9)]  # ‖ΔW‖² ≈ 1e-2: log-norms far from 0
    system = ace_system(homogeneous, lhs_only=True)
    assert system.gamma < 0.01 and not system.flag and not system.normalised and not system.refined
    assert ace_system(deltas, tau_threshold=1.5, lhs_only=True).flag is False


def test_gamma_is_not_scale_free_as_published():
    # The reference's γ divides by the squared mean log-norm: similar norms near ‖ΔW‖_F = 1 still fire.
    norms = torch.tensor([0.9, 1.0, 1.1])
    assert heterogeneity(norms) > 0.3
    assert heterogeneity(norms * 1e-3) < 0.3


def test_flag_auto_switches_normalisation_and_refinement_and_overrides_work():
    spread = task_vectors(scales=[1.0, 10.0, 100.0])
    system = ace_system(spread, lhs_only=True)
    assert system.flag and system.normalised and system.refined
    system = ace_system(spread, adaptive="off", refine="off", lhs_only=True)
    assert system.flag and not system.normalised and not system.refined
    same = task_vectors(scales=[1.0, 1.0, 1.0])
    system = ace_system(same, adaptive="on", refine="on", lhs_only=True)
    assert not system.flag and system.normalised and system.refined


# -- (d) spectral refinement ------------------------------------------------------------------------------

def test_refinement_adds_exactly_sigma_iso_times_the_top_k_directions():
    deltas = task_vectors(shape=(20, 12), n=4, scales=[1.0, 5.0, 30.0, 0.3])
    eps = 1e-2
    assert ace_system(deltas, lhs_only=True).flag
    refined = ace_matrix(deltas, eps=eps)
    plain = ace_matrix(deltas, eps=eps, refine="off")
    # independent Δ_res: Σ_t ΔW_t (Σ̃_t − Σ̄_reg), uncentred ΔW_t, Σ̄_reg with the ε_t I terms
    normed, regs = [], []
    for d in deltas:
        gram = centred(d).T @ centred(d)
        trace = gram.trace() + 1e-12
        normed.append(gram / trace)
        regs.append(gram / trace + eps / trace * torch.eye(12, dtype=torch.float64))
    mean_reg = sum(regs) / 4
    residual = sum(d @ (s - mean_reg) for d, s in zip(deltas, normed))
    u, s, vh = torch.linalg.svd(plain + residual)
    k = int(12 * 0.3)
    assert refinement_rank((20, 12), 0.3) == k == 3
    torch.testing.assert_close(refined - plain, s[:k].mean() * u[:, :k] @ vh[:k], atol=1e-12, rtol=1e-9)
    added = torch.linalg.svdvals(refined - plain)
    assert (added[:k] - s[:k].mean()).abs().max() < 1e-10 * s[0]  # rank k, every singular value σ_iso
    assert added[k:].max() < 1e-10 * s[0]


def test_refinement_rank_zero_is_skipped_not_nan():
    deltas = task_vectors(shape=(8, 3), scales=[1.0, 10.0, 100.0])  # r = 3: int(3·0.3) = 0
    out = ace_matrix(deltas, refine="on")
    torch.testing.assert_close(out, ace_matrix(deltas, refine="off"))


# -- (e) end to end ---------------------------------------------------------------------------------------

def test_model_merge_uses_the_kernel_on_matrices_and_the_mean_elsewhere():
    base, experts = model_with_text_projection()
    out = nbmerge.merge("ace", base, experts, {"eps": PAPER_EPS["vit"], "scale": 0.5})
    assert set(out) == set(base)
    for key, value in base.items():
        deltas = [e[key] - value for e in experts]
        if value.dim() == 2 and key != "text_projection":
            tau = ace_matrix(deltas, eps=1e-5)
        else:  # non-matrix tensors and the reference's text_projection exclusion
            tau = sum(deltas) / 3
        torch.testing.assert_close(out[key], value + 0.5 * tau, atol=1e-7, rtol=0, msg=key)
        assert out[key].dtype == value.dtype


def test_float64_model_matches_float32_model_to_float32_accuracy():
    base, experts = model_with_text_projection(dtype=torch.float64, scales=[1.0, 10.0, 0.1])
    exact = nbmerge.merge("ace", base, experts)
    single = nbmerge.merge("ace", {k: v.float() for k, v in base.items()},
                           [{k: v.float() for k, v in e.items()} for e in experts])
    for key in base:
        update = (exact[key] - base[key]).abs().max()
        assert (single[key].double() - exact[key]).abs().max() <= 1e-4 * update + 1e-8, key


def test_diagnostics_report_gamma_flag_condition_and_rank():
    base, experts = model_with_text_projection(scales=[1.0, 10.0, 100.0])
    diag = ace_diagnostics(base, experts)
    matrices = {k for k, v in base.items() if v.dim() == 2 and k != "text_projection"}
    assert set(diag) == matrices
    key = "visual.transformer.resblocks.0.mlp.c_fc.weight"
    entry = diag[key]
    deltas = [e[key] - base[key] for e in experts]
    system = ace_system(deltas, lhs_only=True)
    assert entry["gamma"] == pytest.approx(system.gamma) and entry["flag"] == system.flag is True
    assert entry["k"] == int(16 * 0.3) and entry["refined"] and entry["shape"] == (64, 16)
    assert entry["condition"] == pytest.approx(torch.linalg.cond(system.lhs).item(), rel=1e-8)
    homogeneous = ace_diagnostics(*model_with_text_projection(), condition=False)
    assert not any(d["flag"] for d in homogeneous.values()) and "condition" not in homogeneous[key]
    assert all(d["k"] == 0 for d in homogeneous.values())
    split = ace_diagnostics(base, experts, nbmerge.WalkOptions(qkv="split"), condition=False)
    assert "visual.transformer.resblocks.0.attn.in_proj_weight[2]" in split


def test_cli_merge_writes_the_library_result(tmp_path, capsys):
    base, experts = model_with_text_projection()
    save_state_dict(base, tmp_path / "base.safetensors")
    paths = []
    for i, expert in enumerate(experts):
        save_state_dict(expert, tmp_path / f"e{i}.safetensors")
        paths.append(str(tmp_path / f"e{i}.safetensors"))
    out = tmp_path / "out" / "merged.safetensors"
    assert main(["merge", "--method", "ace", "--base", str(tmp_path / "base.safetensors"), "--experts", *paths,
                 "--out", str(out), "--device", "cpu", "--param", "eps=1e-5", "--param", "refine=on",
                 "--param", "prior=false"]) == 0
    assert "merged 3 experts with ace" in capsys.readouterr().out
    written = load_state_dict(out)
    expected = nbmerge.merge("ace", base, experts, {"eps": 1e-5, "refine": "on", "prior": False})
    assert set(written) == set(expected)
    for key in expected:
        assert torch.equal(written[key], expected[key]), key


# -- (f) bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [{"eps": 0.0}, {"eps": -1e-3}, {"eps": float("nan")}, {"k_frac": 0.0},
                                    {"k_frac": 1.5}, {"adaptive": "sometimes"}, {"refine": "yes"},
                                    {"tau_threshold": float("inf")}])
def test_bad_parameters_are_method_errors(params, tiny):
    base, experts = tiny
    with pytest.raises(MethodError, match=r"ace[:.]"):  # the method's own check, or the registry's (non-finite)
        nbmerge.merge("ace", base, experts, params)
    with pytest.raises(MethodError):
        ace_matrix(task_vectors(), **params)


def test_unknown_parameter_and_wrong_type_are_method_errors(tiny):
    base, experts = tiny
    with pytest.raises(MethodError, match="valid parameters"):
        nbmerge.merge("ace", base, experts, {"epsilon": 1e-3})
    with pytest.raises(MethodError, match="ace.prior"):
        nbmerge.merge("ace", base, experts, {"prior": "maybe"})


def test_nan_input_is_a_numerical_error(tiny):
    deltas = task_vectors()
    deltas[1][0, 0] = float("nan")
    with pytest.raises(NumericalError, match="task vector 1"):
        ace_matrix(deltas, key="w")
    base, experts = tiny
    experts = [dict(e) for e in experts]
    experts[0]["visual.proj"] = experts[0]["visual.proj"].clone()
    experts[0]["visual.proj"][0, 0] = float("nan")
    with pytest.raises(NumericalError, match="visual.proj"):
        nbmerge.merge("ace", base, experts)


# -- the peer harness (pure parts; the official code runs only in `python -m bench.peers.ace_official`) ----

def test_peer_compare_is_relative_to_the_official_update_per_tensor():
    theirs = {"a": torch.tensor([1.0, -4.0]), "b": torch.tensor([0.5, 0.5]), "z": torch.zeros(2)}
    ours = {"a": torch.tensor([1.0, -4.004]), "b": torch.tensor([0.5, 0.5005]), "z": torch.zeros(2)}
    result = peer.compare_updates(ours, theirs)
    assert result["per_tensor"]["a"] == pytest.approx(1e-3, rel=1e-4)
    assert result["per_tensor"]["b"] == pytest.approx(1e-3, rel=1e-3)
    assert result["per_tensor"]["z"] == 0.0
    assert result["max_abs_diff"] == pytest.approx(4e-3, rel=1e-4)
    assert peer.compare_updates({"z": torch.ones(2)}, {"z": torch.zeros(2)})["max_rel_diff"] == float("inf")


def test_peer_settings_fire_the_flag_only_when_heterogeneous():
    for setting, fires in (("homogeneous", False), ("heterogeneous", True)):
        # width 64, the harness's smallest: γ depends on the absolute norms and is lower for smaller matrices
        base, experts = peer.make_inputs(64, 1, 8, 0, setting)
        diag = ace_diagnostics(base, experts, condition=False)
        assert "text_projection" in base and "text_projection" not in diag
        assert all(d["flag"] == fires for d in diag.values()), setting
    jobs = peer.plan_jobs([64, 256], 2, 8, 768, 1)
    assert len(jobs) == 2 * 2 * 2 * 2 + 2 and len({j["name"] for j in jobs}) == len(jobs)
    assert {j["eps"] for j in jobs} == {1e-2, 1e-5}


def test_peer_report_is_written_with_every_row(tmp_path):
    row = {"job": "w64-heterogeneous-float32-eps1e-05", "width": 64, "layers": 2, "tasks": 8,
           "setting": "heterogeneous", "dtype": "float32", "eps": 1e-5, "nbmerge_s": 1.0, "official_s": 2.0,
           "speedup": 2.0, "max_abs_diff": 1e-9, "max_rel_diff": 1e-6, "worst_key": "w", "per_tensor": {"w": 1e-6},
           "weights_max_abs_diff": 1e-9, "nbmerge_vs_float64": 1e-7, "official_vs_float64": 1e-6, "matrices": 10,
           "flagged": 10, "gamma_min": 0.4, "gamma_max": 1.2, "condition_max": 15.0}
    result = {"config": {"widths": [64], "layers": 2, "tasks": 8, "seed": 0, "threads": 2, "k_frac": 0.3,
                         "heterogeneous_spread": 1.0, "timing_width": 0, "timing_layers": 1},
              "official": {"repo": "unravel-xu/ACE-Merging", "path": "/x", "strategy_py_sha256": "a" * 64,
                           "ace_merging_sha256": "b" * 64},
              "versions": {"nbmerge": "0", "torch": "t", "peer_torch": "p", "python": "3", "machine": "x",
                           "cpu_threads": 2},
              "date": "today", "rows": [row]}
    peer.write_report(result, tmp_path)
    text = (tmp_path / "peer_ace.md").read_text()
    assert ("| w64-heterogeneous-float32-eps1e-05 | heterogeneous | float32 | 1e-05 | 10/10 | 0.4 – 1.2 | 1.5e+01 "
            "| 1.00e-06 | `w` | 1.00e-07 | 1.00e-06 | 1.00 | 2.00 | 2.00× |") in text
    assert "text_projection" in text
    assert "* float32: differences up to 1.0e-06 (w64-heterogeneous-float32-eps1e-05)" in text


def test_solve_falls_back_to_the_pseudo_inverse_on_an_exactly_singular_matrix():
    from nbmerge.methods.ace import solve_right_general

    singular = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    out = solve_right_general(torch.tensor([[2.0, 2.0]], dtype=torch.float64), singular)
    torch.testing.assert_close(out, torch.tensor([[1.0, 1.0]], dtype=torch.float64))  # the minimum-norm solution
