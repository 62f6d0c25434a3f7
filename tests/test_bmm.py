"""BMM (arXiv 2605.12843), inner level: analytic limits, the fast λ-search solver, the posterior, the CLI."""

import math

import pytest
import torch

import nbmerge
from nbmerge.tune.timing import time_bmm_trials
from nbmerge.cli import main
from nbmerge.evaluate.diagnostics import gram_alignment
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.methods.bmm import bmm_matrix, residual_variance, run_anchor
from nbmerge.engine.modules import group_module_params, module_depth, module_groups, module_type
from nbmerge.solvers.bmm import BMMSolver
from nbmerge.testing import hf_clip_vision_shapes, openclip_vit_shapes, random_experts, random_model
from nbmerge.engine.walker import WalkOptions

ATOL = 1e-10
IN_PROJ = "visual.transformer.resblocks.0.attn.in_proj_weight"
C_FC = "visual.transformer.resblocks.1.mlp.c_fc.weight"


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # The matrices here are at most 64 x 64: a second OpenMP thread only adds hand-off cost, and on a shared,
    # oversubscribed machine its spin-waits make these products ~30x slower. Restored for the other test files.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def close(a, b, atol=ATOL, keys=None):
    assert set(a) == set(b)
    for k in keys or a:
        torch.testing.assert_close(a[k], b[k], atol=atol, rtol=0, msg=k)


def linear_keys(base):
    return [k for k, v in base.items() if v.dim() == 2 and k.endswith("weight") and "embed" not in k]


def make_inputs(base, tasks, seed=5, tokens=None):
    """Per task, real layer inputs X_t [n, d_in] for every linear weight (n = 3·d_in: full-rank Grams)."""
    gen = torch.Generator().manual_seed(seed)
    return [{k: torch.randn(tokens or 3 * base[k].shape[1], base[k].shape[1], generator=gen, dtype=torch.float64)
             for k in linear_keys(base)} for _ in range(tasks)]


def grams_of(inputs):
    return [{k: x.T @ x for k, x in task.items()} for task in inputs]


@pytest.fixture
def data64(tiny64):
    base, experts = tiny64
    return base, experts, grams_of(make_inputs(base, len(experts)))


# -- analytic limits -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("anchor,with_grams", [("task_arithmetic", True), ("ties", False)])
def test_strong_prior_gives_the_anchor(data64, anchor, with_grams):
    base, experts, grams = data64
    out = nbmerge.merge("bmm", base, experts, {"anchor": anchor, "log10_rho": 12.0},
                        grams=grams if with_grams else None)
    close(out, nbmerge.merge(anchor, base, experts), atol=1e-9)


@pytest.mark.parametrize("offdiag_scale", [1.0, 0.9])
def test_weak_prior_with_data_grams_is_regmean(data64, offdiag_scale):
    base, experts, grams = data64
    out = nbmerge.merge("bmm", base, experts, {"log10_rho": -13.0, "offdiag_scale": offdiag_scale}, grams=grams)
    regmean = nbmerge.merge("regmean", base, experts, {"offdiag_scale": offdiag_scale}, grams=grams)
    keys = linear_keys(base)
    close(out, regmean, atol=1e-9, keys=keys)
    anchor = nbmerge.merge("task_arithmetic", base, experts)
    close({k: out[k] for k in base if k not in keys}, {k: anchor[k] for k in base if k not in keys})


def test_single_task_with_exact_grams_returns_the_expert(tiny64):
    base, experts = tiny64
    inputs = make_inputs(base, 1)
    # the exact targets Y = W_1 X: least squares recovers W_1 as the prior fades ...
    out = nbmerge.merge("bmm", base, experts[:1], {"log10_rho": -13.0}, grams=grams_of(inputs))
    close(out, experts[0], atol=1e-9, keys=linear_keys(base))
    # ... and for any λ when the anchor is the expert itself (then every tensor is the expert's)
    out = nbmerge.merge("bmm", base, experts[:1], {"anchor_params": "scale=1", "log10_rho": 0.5},
                        grams=grams_of(inputs))
    close(out, experts[0], atol=1e-12)


def test_kernel_is_the_closed_form(tiny64):
    base, experts = tiny64
    deltas = [e[C_FC] - base[C_FC] for e in experts]
    anchor = 0.3 * sum(deltas)
    gen = torch.Generator().manual_seed(3)
    grams = [(lambda x: x.T @ x)(torch.randn(40, 16, generator=gen, dtype=torch.float64)) for _ in deltas]
    eye = torch.eye(16, dtype=torch.float64)
    a = sum(grams)
    lam = 10 ** -0.5 * a.trace() / 16
    expected = (sum(d @ g for d, g in zip(deltas, grams)) + lam * anchor) @ torch.linalg.inv(a + lam * eye)
    got = bmm_matrix(deltas, anchor_delta=anchor, grams=grams, gram="data", log10_rho=-0.5)
    torch.testing.assert_close(got, expected, atol=1e-12, rtol=0)
    proxy = [d.T @ d for d in deltas]
    a = sum(proxy)
    lam = 10 ** -0.5 * a.trace() / 16
    expected = (sum(d @ g for d, g in zip(deltas, proxy)) + lam * anchor) @ torch.linalg.inv(a + lam * eye)
    torch.testing.assert_close(bmm_matrix(deltas, anchor_delta=anchor, log10_rho=-0.5), expected, atol=1e-12, rtol=0)
    # c in G ≈ c·τᵀτ cancels under the normalised λ
    scaled = bmm_matrix(deltas, anchor_delta=anchor, grams=[7.0 * g for g in proxy], gram="data", log10_rho=-0.5)
    torch.testing.assert_close(scaled, expected, atol=1e-12, rtol=0)


# -- Gram sources ----------------------------------------------------------------------------------------------

def test_task_vector_grams_need_no_data(tiny64):
    base, experts = tiny64
    out = nbmerge.merge("bmm", base, experts, {"gram": "task_vector", "log10_rho": -1.0})
    auto = nbmerge.merge("bmm", base, experts, {"log10_rho": -1.0})  # auto without grams = task_vector
    close(out, auto, atol=0)
    anchor = nbmerge.merge("task_arithmetic", base, experts)
    assert (out[C_FC] - anchor[C_FC]).abs().max() > 1e-4  # the regression moved the linear weights
    for key in ("visual.proj", "visual.positional_embedding", "visual.conv1.weight", "visual.ln_post.bias"):
        assert torch.equal(out[key], anchor[key]), key  # not linear modules: the anchor's values
    wudi_like = nbmerge.merge("bmm", base, experts, {"tv_norm": "frobenius", "log10_rho": -1.0})
    assert (wudi_like[C_FC] - out[C_FC]).abs().max() > 1e-6


def test_hybrid_end_points_are_the_pure_sources(data64):
    base, experts, grams = data64
    data = nbmerge.merge("bmm", base, experts, {"gram": "data"}, grams=grams)
    proxy = nbmerge.merge("bmm", base, experts, {"gram": "task_vector"})
    close(nbmerge.merge("bmm", base, experts, {"gram": "hybrid", "beta": 1.0}, grams=grams), data, atol=1e-12)
    close(nbmerge.merge("bmm", base, experts, {"gram": "hybrid", "beta": 0.0}, grams=grams), proxy, atol=1e-12)
    middle = nbmerge.merge("bmm", base, experts, {"gram": "hybrid", "beta": 0.5}, grams=grams)
    assert (middle[C_FC] - data[C_FC]).abs().max() > 1e-6 and (middle[C_FC] - proxy[C_FC]).abs().max() > 1e-6


def test_hf_layout_data_free_regresses_only_block_linears():
    base = random_model(hf_clip_vision_shapes(), dtype=torch.float64)
    experts = random_experts(base, 2)
    out = nbmerge.merge("bmm", base, experts, {"log10_rho": -2.0})
    anchor = nbmerge.merge("task_arithmetic", base, experts)
    assert torch.equal(out["visual_projection.weight"], anchor["visual_projection.weight"])
    assert torch.equal(out["vision_model.embeddings.position_embedding.weight"],
                       anchor["vision_model.embeddings.position_embedding.weight"])
    q = "vision_model.encoder.layers.1.self_attn.q_proj.weight"
    assert (out[q] - anchor[q]).abs().max() > 1e-5


# -- module groups ---------------------------------------------------------------------------------------------

def test_module_groups_open_clip():
    keys = list(openclip_vit_shapes(layers=4))
    groups = module_groups(keys)
    assert groups == {f"visual.transformer.resblocks.{i}.{name}": kind for i in range(4)
                      for name, kind in (("attn.in_proj_weight", "attn_in"), ("attn.out_proj.weight", "attn_out"),
                                         ("mlp.c_fc.weight", "mlp_in"), ("mlp.c_proj.weight", "mlp_out"))}
    halves = module_groups(keys, depth_bins=2)
    assert halves["visual.transformer.resblocks.1.mlp.c_fc.weight"] == "mlp_in:0"
    assert halves["visual.transformer.resblocks.2.mlp.c_fc.weight"] == "mlp_in:1"
    assert len(set(halves.values())) == 8
    assert module_depth("visual.transformer.resblocks.3.attn.in_proj_weight") == 3
    assert module_depth("layers.5.mlp.fc1.weight") == 5 and module_depth("visual.proj") is None
    # the text tower of a full CLIP is its own stack of blocks
    assert module_groups(["transformer.resblocks.0.mlp.c_proj.weight", "transformer.resblocks.1.mlp.c_proj.weight"],
                         depth_bins=2) == {"transformer.resblocks.0.mlp.c_proj.weight": "mlp_out:0",
                                         "transformer.resblocks.1.mlp.c_proj.weight": "mlp_out:1"}


def test_module_groups_hf_and_llm_names():
    keys = list(hf_clip_vision_shapes(layers=2))
    groups = module_groups(keys)
    p = "vision_model.encoder.layers.0."
    assert {groups[p + f"self_attn.{x}_proj.weight"] for x in "qkv"} == {"attn_in"}
    assert groups[p + "self_attn.out_proj.weight"] == "attn_out"
    assert groups[p + "mlp.fc1.weight"] == "mlp_in" and groups[p + "mlp.fc2.weight"] == "mlp_out"
    assert len(groups) == 12 and "visual_projection.weight" not in groups
    assert module_groups(keys, depth_bins=2)["vision_model.encoder.layers.1.mlp.fc2.weight"] == "mlp_out:1"
    llama = {"model.layers.0.self_attn.o_proj.weight": "attn_out", "model.layers.0.mlp.gate_proj.weight": "mlp_in",
             "model.layers.0.mlp.down_proj.weight": "mlp_out", "bert.encoder.layer.0.attention.output.dense.weight":
             "attn_out", "bert.encoder.layer.0.output.dense.weight": "mlp_out",
             # GPT-2, as the language-model pools store it: (out, in), like every nn.Linear
             "transformer.h.0.attn.c_attn.weight": "attn_in", "transformer.h.0.attn.c_proj.weight": "attn_out",
             "transformer.h.0.mlp.c_fc.weight": "mlp_in", "transformer.h.0.mlp.c_proj.weight": "mlp_out"}
    assert {k: module_type(k) for k in llama} == llama
    for other in ("lm_head.weight", "visual.proj", "model.layers.0.mlp.down_proj.bias", "transformer.wte.weight"):
        assert module_type(other) is None


# -- the fast solver -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("with_grams", [True, False])
def test_fast_path_equals_naive_solve_and_the_method(data64, with_grams):
    base, experts, grams = data64
    grams = grams if with_grams else None
    anchor = run_anchor(base, experts, "ties", grams=grams)
    solver = BMMSolver(base, experts, anchor, grams, depth_bins=2, keep_normal_equations=True, offdiag_scale=0.95)
    assert len(solver.modules) == 8 and len(solver.group_names()) == 8
    for rho in (-4.0, -1.0, 0.0, 2.0):
        for key in solver.modules:
            torch.testing.assert_close(solver.merged_delta(key, rho), solver.solve_naive(key, rho), atol=ATOL, rtol=0)
    values = {group: -3.0 + i for i, group in enumerate(solver.group_names())}
    fast = solver.merged(values, scale=0.8)
    walk = WalkOptions(module_params=group_module_params(solver.groups, values))
    method = nbmerge.merge("bmm", base, experts, {"anchor": "ties", "scale": 0.8, "offdiag_scale": 0.95},
                           grams=grams, walk=walk)
    close(fast, method, atol=ATOL)
    again = solver.merged({"*": 0.0, IN_PROJ: 1.0}, out=fast)  # in place, key beats '*'
    assert again is fast
    close(again, nbmerge.merge("bmm", base, experts, {"anchor": "ties", "log10_rho": 0.0, "offdiag_scale": 0.95},
                               grams=grams, walk=WalkOptions(module_params={IN_PROJ: {"log10_rho": 1.0}})), atol=ATOL)


def test_solver_from_method_float32_and_errors(tiny):
    base, experts = tiny
    solver = BMMSolver.from_method(base, experts, "task_arithmetic", {"scale": 0.5}, dtype=torch.float32)
    out = solver.merged(-1.0)
    assert {k: v.dtype for k, v in out.items()} == {k: v.dtype for k, v in base.items()}
    expected = nbmerge.merge("bmm", base, experts, {"anchor_params": {"scale": 0.5}})
    close(out, expected, atol=1e-5)
    with pytest.raises(nbmerge.MethodError, match="neither a linear-module key nor a group"):
        solver.merged({"attn_in": 0.0, "nope": 1.0})
    with pytest.raises(nbmerge.MethodError, match="no log10_rho"):
        solver.merged({"attn_in": 0.0})
    with pytest.raises(nbmerge.MethodError, match="finite"):
        solver.merged({"*": float("inf")})
    with pytest.raises(nbmerge.MethodError, match="scale"):
        solver.merged(0.0, scale=float("nan"))


# -- the posterior ---------------------------------------------------------------------------------------------

def test_posterior_samples_have_the_bayesian_covariance():
    gen = torch.Generator().manual_seed(0)
    key = "blocks.0.mlp.fc1.weight"
    base = {key: torch.randn(3, 5, generator=gen, dtype=torch.float64)}
    experts = [{key: base[key] + 0.1 * torch.randn(3, 5, generator=gen, dtype=torch.float64)} for _ in range(2)]
    x = [torch.randn(7, 5, generator=gen, dtype=torch.float64) for _ in range(2)]
    grams = [{key: xi.T @ xi} for xi in x]
    solver = BMMSolver.from_method(base, experts, grams=grams)
    lam, sigma2 = solver.prior_lambda(key, -0.5), 0.3
    draws = solver.sample(key, -0.5, 40000, sigma2, torch.Generator().manual_seed(1))
    mean = base[key] + solver.merged_delta(key, -0.5)
    rows = (draws - mean).reshape(-1, 5)  # every row of every draw: i.i.d. N(0, σ²(A + λI)⁻¹)
    empirical = rows.T @ rows / rows.shape[0]
    expected = sigma2 * torch.linalg.inv(sum(g[key] for g in grams) + lam * torch.eye(5, dtype=torch.float64))
    assert (empirical - expected).abs().max() < 0.03 * expected.abs().max()
    torch.testing.assert_close(draws.mean(0), mean, atol=0.02 * math.sqrt(expected.diagonal().max()) * 5, rtol=0)
    first = solver.sample(key, -0.5, 3, sigma2, torch.Generator().manual_seed(1))
    torch.testing.assert_close(solver.sample(key, -0.5, 3, sigma2, torch.Generator().manual_seed(1)), first,
                               atol=0, rtol=0)  # seeded: the same draws, bit for bit
    whole = solver.sampled(-0.5, {key: 0.0}, torch.Generator().manual_seed(2))
    torch.testing.assert_close(whole[key], mean, atol=1e-12, rtol=0)


def test_residual_variance_matches_the_explicit_residual(tiny64):
    base, experts = tiny64
    inputs = make_inputs(base, 3, tokens=30)
    grams = grams_of(inputs)
    solver = BMMSolver.from_method(base, experts, grams=grams)
    estimates = solver.noise_variance(-1.0, tokens=90)
    for key in (IN_PROJ, C_FC):
        merged = base[key] + solver.merged_delta(key, -1.0)
        # ‖Y − U*X‖² with X as columns: here X_t is [tokens, d_in], so Y_t = X_t W_tᵀ
        squared = sum(((x[key] @ e[key].T) - (x[key] @ merged.T)).square().sum() for x, e in zip(inputs, experts))
        explicit = float(squared) / (90 * base[key].shape[0])
        assert estimates[key] == pytest.approx(explicit, rel=1e-9)
        deltas = [e[key] - base[key] for e in experts]
        direct = residual_variance(deltas, [g[key] for g in grams], merged - base[key], tokens=90)
        assert direct == pytest.approx(explicit, rel=1e-9)


# -- Theorem 1 helper ------------------------------------------------------------------------------------------

def test_gram_alignment_rows(tiny64):
    base, experts = tiny64
    aligned = [{k: (e[k] - base[k]).T @ (e[k] - base[k]) for k in linear_keys(base)} for e in experts]
    rows = gram_alignment(base, experts, aligned, k_fraction=0.25)
    assert len(rows) == 8
    for row in rows:
        assert row["cosine"] == pytest.approx(1.0) and row["overlap"] == pytest.approx(1.0)
        assert row["module_type"] in ("attn_in", "attn_out", "mlp_in", "mlp_out") and row["depth"] in (0, 1)
        assert row["k"] == max(1, round(0.25 * row["d_in"])) and row["chance"] == row["k"] / row["d_in"]
    random_rows = gram_alignment(base, experts, grams_of(make_inputs(base, 3)), k=4)
    assert all(0 <= r["overlap"] < 1 and 0 < r["cosine"] < 1 for r in random_rows)


# -- bad input -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("params,words", [
    ({"anchor": "frobnicate"}, ["anchor", "frobnicate", "task_arithmetic"]),
    ({"anchor": "bmm"}, ["anchor cannot be bmm"]),
    ({"anchor": "ties", "anchor_params": "density=7"}, ["anchor 'ties'", "density"]),
    ({"anchor_params": "nonsense"}, ["k=v"]),
    ({"anchor": "regmean"}, ["anchor 'regmean'", "needs grams"]),
    ({"gram": "hybrid", "beta": 1.5}, ["beta", "[0, 1]"]),
    ({"gram": "data"}, ["needs data Grams"]),
    ({"log10_rho": float("nan")}, ["log10_rho", "finite"]),
    ({"log10_rho": float("inf")}, ["log10_rho", "finite"]),
    ({"log10_rho": 400.0}, ["overflows"]),
    ({"gram": "everything"}, ["gram must be one of"]),
    ({"tv_norm": "l2"}, ["tv_norm"]),
    ({"offdiag_scale": 2.0}, ["offdiag_scale"]),
])
def test_bad_parameters_are_method_errors(tiny64, params, words):
    base, experts = tiny64
    with pytest.raises(nbmerge.MethodError) as info:
        nbmerge.merge("bmm", base, experts, params)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_other_bad_input(data64, tiny64):
    base, experts, grams = data64
    with pytest.raises(nbmerge.MethodError, match="does not use the given grams"):
        nbmerge.merge("bmm", base, experts, {"gram": "task_vector"}, grams=grams)
    with pytest.raises(nbmerge.MethodError, match="qkv"):
        nbmerge.merge("bmm", base, experts, walk=WalkOptions(qkv="split"))
    with pytest.raises(nbmerge.MethodError, match="log10_rho"):  # a per-module override is checked too
        nbmerge.merge("bmm", base, experts, walk=WalkOptions(module_params={C_FC: {"log10_rho": float("nan")}}))
    bad = [dict(g) for g in grams]
    bad[0][C_FC] = -1e3 * torch.eye(16, dtype=torch.float64)  # not PSD: the solve must refuse, not return garbage
    with pytest.raises(nbmerge.NumericalError, match="not positive semi-definite"):  # each expert's Gram is checked
        nbmerge.merge("bmm", base, experts, grams=bad)
    solver = BMMSolver.from_method(base, experts)
    for temperature in (-1.0, float("nan")):
        with pytest.raises(nbmerge.MethodError, match="temperature"):
            solver.sample(C_FC, 0.0, 2, temperature, torch.Generator())
    with pytest.raises(nbmerge.MethodError, match="tokens"):
        solver.noise_variance(0.0, tokens=0)
    with pytest.raises(nbmerge.CheckpointError, match="anchor model has no tensor"):
        BMMSolver(base, experts, {k: v for k, v in base.items() if k != C_FC})


# -- CLI -------------------------------------------------------------------------------------------------------

def test_cli_merges_without_grams_and_with_grams(tmp_path, tiny, capsys):
    base, experts = tiny
    save_state_dict(base, tmp_path / "base.safetensors")
    paths = []
    for i, expert in enumerate(experts):
        save_state_dict(expert, tmp_path / f"e{i}.safetensors")
        paths.append(str(tmp_path / f"e{i}.safetensors"))
    out = tmp_path / "out" / "bmm.safetensors"
    argv = ["merge", "--method", "bmm", "--base", str(tmp_path / "base.safetensors"), "--experts", *paths,
            "--out", str(out), "--device", "cpu", "--param", "anchor=ties", "--param", "anchor_params=density=0.5",
            "--param", "log10_rho=-2", "--param", "scale=0.9"]
    assert main(argv) == 0
    assert "merged 3 experts with bmm" in capsys.readouterr().out
    expected = nbmerge.merge("bmm", base, experts, {"anchor": "ties", "anchor_params": {"density": 0.5},
                                                    "log10_rho": -2.0, "scale": 0.9})
    close(load_state_dict(out), expected, atol=0)
    gram_paths = []
    for t, grams in enumerate(grams_of(make_inputs(base, 3))):
        save_state_dict({k: g.float() for k, g in grams.items()}, tmp_path / f"g{t}.safetensors")
        gram_paths.append(str(tmp_path / f"g{t}.safetensors"))
    assert main(argv + ["--grams", *gram_paths]) == 0
    with_data = load_state_dict(out)
    assert (with_data[C_FC] - expected[C_FC]).abs().max() > 1e-6
    assert main(["methods"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("bmm ")][0]
    assert "grams optional" in row and "2605.12843" in row


def test_bench_runs_on_a_tiny_shape():
    result = time_bmm_trials(width=16, layers=1, tasks=2, trials=1, log10_rhos=(-1.0,))
    assert result["method_ms_per_trial"] > 0
    assert result["fast_ms_per_trial"] > 0 and result["naive_ms_per_trial"] > 0
    assert result["max_abs_difference"] < 1e-9


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu(tiny64):
    base, experts = tiny64
    cpu = BMMSolver.from_method(base, experts).merged(-1.0)
    cuda = BMMSolver.from_method(base, experts, device="cuda").merged(-1.0)
    close({k: v.cpu() for k, v in cuda.items()}, cpu, atol=1e-10)


# ------------------------------------------------------------------------------- layouts: no silent partial merge

def _layout_experts(model, n=3, seed=0):
    """A random-weight model's state dict as the base, and ``n`` experts that move every tensor."""
    gen = torch.Generator().manual_seed(seed)
    base = {k: v.detach().clone().float() for k, v in model.state_dict().items()}
    experts = [{k: v + 0.05 * torch.randn(v.shape, generator=gen) for k, v in base.items()} for _ in range(n)]
    return base, experts


def _bmm_recorded(base, experts, walk=None):
    import warnings as _warnings

    from nbmerge.errors import NbmergeWarning

    anchor = nbmerge.merge("task_arithmetic", base, experts)
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        out = nbmerge.merge("bmm", base, experts, {"gram": "task_vector"}, walk=walk)
    said = [str(w.message) for w in caught if issubclass(w.category, NbmergeWarning)]
    moved = {k for k in base if base[k].ndim == 2 and not torch.allclose(out[k], anchor[k], atol=1e-6)}
    return moved, said


def test_data_free_bmm_regresses_every_linear_layer_of_torch_transformer_encoder():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    base, experts = _layout_experts(encoder)
    linear = {k for k, v in base.items() if v.ndim == 2}
    assert {k.split(".", 2)[2] for k in linear} == {"self_attn.in_proj_weight", "self_attn.out_proj.weight",
                                                     "linear1.weight", "linear2.weight"}
    moved, said = _bmm_recorded(base, experts)
    assert moved == linear and said == []


def test_data_free_bmm_on_top_level_fc_layers():
    model = torch.nn.Module()
    model.fc1, model.fc2 = torch.nn.Linear(6, 8), torch.nn.Linear(8, 4)
    base, experts = _layout_experts(model)
    assert module_type("fc1.weight") == "mlp_in" and module_type("fc2.weight") == "mlp_out"
    assert module_type("xfc1.weight") is None
    moved, said = _bmm_recorded(base, experts)
    assert moved == {"fc1.weight", "fc2.weight"} and said == []


def test_an_unknown_layout_is_named_in_a_warning_and_merges_fully_with_module_kinds():
    model = torch.nn.Module()
    model.blocks = torch.nn.ModuleList([torch.nn.Module() for _ in range(2)])
    for block in model.blocks:
        block.mix, block.proj = torch.nn.Linear(6, 6), torch.nn.Linear(6, 6)
        block.attn = torch.nn.Module()
        block.attn.qkv = torch.nn.Linear(6, 18)
    base, experts = _layout_experts(model)
    moved, said = _bmm_recorded(base, experts)
    assert moved == {"blocks.0.attn.qkv.weight", "blocks.1.attn.qkv.weight"}     # the names nbmerge knows
    assert len(said) == 1 and "4 weight matrices are not recognised" in said[0]
    assert "blocks.0.mix.weight" in said[0] and "module_kinds" in said[0]
    kinds = {r"\.mix\.weight$": "mlp_in", r"blocks\.\d+\.proj\.weight$": "mlp_out"}
    moved, said = _bmm_recorded(base, experts, WalkOptions(module_kinds=kinds))
    assert moved == {k for k, v in base.items() if v.ndim == 2} and said == []
    solver = BMMSolver.from_method(base, experts, gram="task_vector", module_kinds=kinds)
    assert set(solver.groups.values()) == {"attn_in", "mlp_in", "mlp_out"}
    with pytest.raises(nbmerge.errors.NbmergeError, match="kinds are attn_in"):
        WalkOptions(module_kinds={"mix": "mlp"})
    with pytest.raises(nbmerge.errors.NbmergeError, match="not a regular expression"):
        WalkOptions(module_kinds={"mix(": "mlp_in"})


def test_module_kinds_from_the_command_line_and_a_recipe(tmp_path, capsys):
    from nbmerge.engine.recipe import load_recipe

    model = torch.nn.Module()
    model.blocks = torch.nn.ModuleList([torch.nn.Module()])
    model.blocks[0].mix = torch.nn.Linear(5, 5)
    base, experts = _layout_experts(model, n=2)
    paths = []
    for name, state in (("base", base), ("a", experts[0]), ("b", experts[1])):
        paths.append(tmp_path / f"{name}.safetensors")
        save_state_dict(state, paths[-1])
    out = tmp_path / "out.safetensors"
    args = ["merge", "--method", "bmm", "--param", "gram=task_vector", "--base", str(paths[0]), "--experts",
            str(paths[1]), str(paths[2]), "--out", str(out), "--quiet"]
    assert main(args + ["--module-kind", r"mix\.weight$=mlp_in"]) == 0
    anchor = nbmerge.merge("task_arithmetic", base, experts)
    assert not torch.allclose(load_state_dict(out)["blocks.0.mix.weight"], anchor["blocks.0.mix.weight"])
    assert main(args + ["--module-kind", "mix"]) != 0
    assert "--module-kind expects REGEX=KIND" in capsys.readouterr().err
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"method: bmm\nbase: {paths[0]}\nexperts: [{paths[1]}, {paths[2]}]\n"
                      "walk: {module_kinds: {'mix\\.weight$': mlp_in}}\n")
    assert load_recipe(recipe).walk["module_kinds"] == {r"mix\.weight$": "mlp_in"}
    recipe.write_text(f"method: bmm\nbase: {paths[0]}\nexperts: [{paths[1]}, {paths[2]}]\n"
                      "walk: {module_kinds: {'mix': mlp}}\n")
    with pytest.raises(nbmerge.errors.NbmergeError, match="walk.module_kinds"):
        load_recipe(recipe)


# ------------------------------------------------------------------------------------------- on the micro zoo

@pytest.fixture(scope="module")
def micro(micro_cache):
    from nbmerge.pools.zoo import load_zoo

    return load_zoo("micro", micro_cache)


def test_hybrid_with_beta_zero_is_the_task_vector_gram(micro):
    import torch

    from nbmerge.pools.zoo import expert_grams, load_models
    from nbmerge.methods.bmm import run_anchor
    from nbmerge.solvers.bmm import BMMSolver

    base, experts = load_models(micro)
    grams = expert_grams(micro, 16, 0)
    anchor = run_anchor(base, experts, "regmean", grams=grams)
    free = BMMSolver(base, experts, anchor, gram="task_vector")
    hybrid = BMMSolver(base, experts, anchor, grams, gram="hybrid", beta=0.0)
    assert set(free.modules) == set(hybrid.modules) and free.group_names() == hybrid.group_names()
    lambdas = {"attn_in": -2.0, "attn_out": 0.0, "mlp_in": -1.0, "mlp_out": 1.0}
    a, b = free.merged(lambdas, 0.9), hybrid.merged(lambdas, 0.9)
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6)
