"""The registered ``mog_em`` (one α of the mixture-of-Gaussians merge) against the batched solver and its exact
reductions, and its errors."""

from __future__ import annotations

import pytest
import torch

import nbmerge
from nbmerge.errors import MethodError, NbmergeError
from nbmerge.methods import get_method
from nbmerge.solvers import pareto
from nbmerge.testing import openclip_vit_shapes, random_experts, random_model


def _pool(tasks=2, components=2, seed=0):
    base = {k: v.double() for k, v in random_model(openclip_vit_shapes(width=8, layers=1), seed=seed).items()}
    experts = random_experts(base, tasks * components, seed=seed + 1, scale=0.05)
    g = torch.Generator().manual_seed(seed + 2)
    precisions = [{k: 0.5 + torch.rand(v.shape, generator=g, dtype=torch.float64) for k, v in base.items()}
                  for _ in experts]
    return base, experts, precisions


def _flat(state, keys):
    return torch.cat([state[k].double().reshape(-1) for k in keys])


def test_mog_em_is_registered_with_its_meanings():
    method = get_method("mog_em")
    assert method.needs == ("fishers",)
    assert {"alphas", "components", "iterations", "tol", "temperature", "scale"} == set(method.params)


@pytest.mark.parametrize("alphas", ["", "0.3,0.7", [0.3, 0.7], (), [0.3, "0.7"]])
def test_equals_the_batched_solver_for_one_alpha(alphas):
    base, experts, precisions = _pool()
    merged = nbmerge.merge("mog_em", base, experts, {"alphas": alphas, "components": 2}, fishers=precisions)
    keys = list(base)
    row = [0.5, 0.5] if not alphas else [0.3, 0.7]   # a list (Python, YAML) or the CLI's comma-separated text
    means = torch.stack([_flat(e, keys) for e in experts]).reshape(2, 2, -1)
    precs = torch.stack([_flat(p, keys) for p in precisions]).reshape(2, 2, -1)
    expected = pareto.mog_merge(_flat(base, keys), means, precs, [row])[0]
    assert torch.equal(_flat(merged, keys), expected)  # same float64 computation, bit for bit


def test_one_component_is_the_precision_weighted_average():
    base, experts, precisions = _pool(tasks=3, components=1)
    merged = nbmerge.merge("mog_em", base, experts, fishers=precisions)
    fisher = nbmerge.merge("fisher", base, experts, {"normalize": False, "min_weight": 0.0}, fishers=precisions)
    for key in base:
        torch.testing.assert_close(merged[key], fisher[key], rtol=1e-10, atol=1e-12)
    # and with task weights: θ₀ + Σ α_t S_t τ_t / Σ α_t S_t
    alphas = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    weighted = nbmerge.merge("mog_em", base, experts, {"alphas": "0.2,0.5,0.3"}, fishers=precisions)
    for key in base:
        num = sum(a * p[key] * (e[key] - base[key]) for a, p, e in zip(alphas, precisions, experts))
        den = sum(a * p[key] for a, p in zip(alphas, precisions))
        torch.testing.assert_close(weighted[key], base[key] + num / den, rtol=1e-10, atol=1e-12)


def test_keys_without_precisions_get_the_alpha_weighted_task_vector():
    base, experts, precisions = _pool(tasks=2, components=2)
    bias = next(k for k in base if k.endswith("bias"))
    partial = [{k: v for k, v in p.items() if k != bias} for p in precisions]
    merged = nbmerge.merge("mog_em", base, experts, {"alphas": "0.25,0.75", "components": 2}, fishers=partial)
    tau = [(experts[0][bias] + experts[1][bias]) / 2 - base[bias], (experts[2][bias] + experts[3][bias]) / 2 - base[bias]]
    torch.testing.assert_close(merged[bias], base[bias] + 0.25 * tau[0] + 0.75 * tau[1])


@pytest.mark.parametrize("params, match", [
    ({"alphas": "0.5,0.6"}, "simplex"),
    ({"alphas": "1"}, "task weights per row"),
    ({"alphas": "a,b"}, "list of numbers"), ({"alphas": [0.5, True]}, "list of numbers"),
    ({"components": 3}, "whole number of tasks"),
    ({"temperature": 0.0}, "temperature"),
])
def test_clear_errors(params, match):
    base, experts, precisions = _pool()
    with pytest.raises(NbmergeError, match=match):
        nbmerge.merge("mog_em", base, experts, {"components": 2, **params} if "components" not in params else params,
                      fishers=precisions)


def test_missing_or_bad_precisions_are_refused():
    base, experts, precisions = _pool()
    with pytest.raises(MethodError, match="needs fishers"):
        nbmerge.merge("mog_em", base, experts, {"components": 2})
    key = next(iter(base))
    precisions[1][key] = precisions[1][key].clone()
    precisions[1][key][0] = float("nan")
    with pytest.raises(NbmergeError, match="NaN|finite"):
        nbmerge.merge("mog_em", base, experts, {"components": 2}, fishers=precisions)


@pytest.mark.parametrize("params", [{"scale": 1e308}, {"temperature": 1e-320}])
def test_a_non_finite_mixture_merge_is_refused_like_every_other_method(params):
    """mog_em used to skip the finiteness check the walker makes: scale=1e308 or temperature=1e-320 wrote thousands
    of non-finite values with exit 0."""
    base, experts, precisions = _pool()
    base = {k: v.float() for k, v in base.items()}                      # stored as float32, as checkpoints are
    experts = [{k: v.float() for k, v in e.items()} for e in experts]
    with pytest.raises(NbmergeError, match="is not finite"):
        nbmerge.merge("mog_em", base, experts, {"components": 2, **params}, fishers=precisions)


def test_an_fp16_base_that_overflows_is_refused():
    base, experts, precisions = _pool()
    half = {k: v.half() for k, v in base.items()}
    with pytest.raises(NbmergeError, match="is not finite in float16"):
        nbmerge.merge("mog_em", half, [{k: v.half() for k, v in e.items()} for e in experts], {"components": 2,
                      "scale": 1e6}, fishers=precisions)
