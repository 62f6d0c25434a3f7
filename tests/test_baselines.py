"""The baselines of the BMM/ACE papers' tables and of mergekit users: each against a float64 reference written from
the method's definition on the whole model (the peers' own numbers are in reports/peer_*.md), its identities, and
its parameter checks."""

import math

import numpy as np
import pytest
import torch

from nbmerge.errors import MethodError
from nbmerge.engine.merging import merge


def _float_keys(base):
    return [k for k, v in base.items() if v.is_floating_point()]


def _taus(base, experts):
    return [{k: e[k].double() - base[k].double() for k in _float_keys(base)} for e in experts]


def _close(merged, expected, base, rtol=1e-5):
    for key in expected:
        update = (expected[key] - base[key].double()).abs().max().item()
        diff = (merged[key].double() - expected[key]).abs().max().item()
        assert diff <= rtol * max(update, 1e-12) + 1e-7, (key, diff, update)


# -- CART -----------------------------------------------------------------------------------------------------------

def _is_linear(key, value):
    """The reference's SVD keys (attention and MLP weights) are, on the open_clip layout, the linear-layer weights."""
    return value.dim() == 2 and key.endswith("weight") and "embed" not in key


def cart_reference(base, experts, rank_ratio, prior, scale=1.0, linear=None):
    taus = _taus(base, experts)
    out = {}
    for key in _float_keys(base):
        mean = sum(t[key] for t in taus) / len(taus)
        merged = mean.clone()
        if (linear or _is_linear)(key, base[key]) and rank_ratio > 0:
            m, n = mean.shape
            k = min(m, n) if rank_ratio == 1 else max(1, int(rank_ratio * min(m, n)))
            for t in taus:
                u, s, vh = torch.linalg.svd(t[key] - mean, full_matrices=False)
                merged += prior * (u[:, :k] * s[:k]) @ vh[:k]
        out[key] = base[key].double() + scale * merged
    return out


@pytest.mark.parametrize("rank_ratio, prior", [(0.12, 2.0), (0.5, 1.5), (0.25, 0.7)])
def test_cart_matches_its_definition(tiny, rank_ratio, prior):
    base, experts = tiny
    merged = merge("cart", base, experts, {"rank_ratio": rank_ratio, "prior": prior})
    assert {k for k in base if _is_linear(k, base[k])} >= {"visual.transformer.resblocks.0.mlp.c_fc.weight"}
    _close(merged, cart_reference(base, experts, rank_ratio, prior), base)


def test_cart_identities(tiny):
    """ρ = 1 or ρ = 0 is weight averaging (the centred residuals sum to zero); one task gives its expert."""
    base, experts = tiny
    average = merge("task_arithmetic", base, experts, {"scale": 1 / len(experts)})
    for rank_ratio in (0.0, 1.0):
        _close(merge("cart", base, experts, {"rank_ratio": rank_ratio, "prior": 3.0}),
               {k: v.double() for k, v in average.items() if v.is_floating_point()}, base)
    one = merge("cart", base, experts[:1], {"rank_ratio": 0.3})
    _close(one, {k: v.double() for k, v in experts[0].items() if v.is_floating_point()}, base)
    with pytest.raises(MethodError, match="rank_ratio"):
        merge("cart", base, experts, {"rank_ratio": 1.5})


# -- Consensus TA / TIES --------------------------------------------------------------------------------------------

def consensus_reference(base, experts, lam, k, ties=False, scale=0.3):
    keys = _float_keys(base)
    taus = np.stack([np.concatenate([t[key].reshape(-1).numpy() for key in keys]) for t in _taus(base, experts)])
    if ties:
        d = taus.shape[1]
        trimmed = taus.copy()
        for row in trimmed:
            threshold = np.partition(np.abs(row), d - int(0.2 * d) - 1)[d - int(0.2 * d) - 1]
            row[np.abs(row) < threshold] = 0
        sign = np.sign(trimmed.sum(0))
        sign[sign == 0] = np.sign(np.sign(trimmed.sum(0)).sum())
        multi = (trimmed * (np.sign(trimmed) == sign)).sum(0)
    else:
        multi = taus.sum(0)
    masks = np.abs(taus) > lam * np.abs(multi[None] - taus)
    merged = multi * (masks.sum(0) >= k)
    out, start = {}, 0
    for key in keys:
        n = base[key].numel()
        out[key] = base[key].double() + scale * torch.from_numpy(merged[start:start + n]).reshape(base[key].shape)
        start += n
    return out


@pytest.mark.parametrize("lam, k, ties", [(0.6, 2, False), (0.2, 2, False), (0.4, 1, False), (0.6, 2, True)])
def test_consensus_matches_its_definition(tiny64, lam, k, ties):
    base, experts = tiny64
    params = {"lam": lam, "k": k, "base_merge": "ties" if ties else "ta"}
    _close(merge("consensus", base, experts, params), consensus_reference(base, experts, lam, k, ties), base,
           rtol=1e-9)


def test_consensus_extremes(tiny):
    """k = 0 keeps every weight (task arithmetic on the sum); k > T keeps none (the base)."""
    base, experts = tiny
    ta = merge("task_arithmetic", base, experts, {"scale": 0.3})
    assert all(torch.equal(merge("consensus", base, experts, {"k": 0})[k], ta[k]) for k in ta)
    none = merge("consensus", base, experts, {"k": len(experts) + 1})
    assert all(torch.equal(none[k], base[k]) for k in base)
    for bad in ({"k": -1}, {"lam": -0.1}, {"base_merge": "mean"}):
        with pytest.raises(MethodError):
            merge("consensus", base, experts, bad)


# -- PCB --------------------------------------------------------------------------------------------------------------

def pcb_reference(base, experts, ratio=0.05, scale=1.2):
    """The official vision steps on the whole flattened model, in float64, with sorts (no streaming)."""
    keys = _float_keys(base)
    taus = np.stack([np.concatenate([t[key].reshape(-1).numpy() for key in keys]) for t in _taus(base, experts)])
    n, d = taus.shape

    def clamp_rows(x, a, b):
        ordered = np.sort(x, axis=1)
        lo = ordered[:, int(d * a)][:, None]
        hi = np.maximum(ordered[:, int(d * (1 - b) - 1)][:, None], lo)
        return np.clip(x, lo, hi)

    def norm_rows(x):
        lo, hi = x.min(1, keepdims=True), x.max(1, keepdims=True)
        return (x - lo) / np.maximum(hi - lo, 1e-12)

    clipped = clamp_rows(np.abs(taus), 0.01, 0.01)
    normalised = norm_rows(clipped)
    intra = np.exp(n * normalised ** 2)
    inter = np.tanh(taus * (np.sign(taus) * normalised).sum(0, keepdims=True))
    weights = norm_rows(clamp_rows(intra * inter, 1 - ratio, 0))
    merged = (scale * np.sign(taus) * clipped * weights).sum(0) / np.maximum(weights.sum(0), 1e-12)
    out, start = {}, 0
    for key in keys:
        size = base[key].numel()
        out[key] = base[key].double() + torch.from_numpy(merged[start:start + size]).reshape(base[key].shape)
        start += size
    return out


@pytest.mark.parametrize("ratio", [0.05, 0.2, 1.0])
def test_pcb_matches_the_reference_steps(tiny, ratio):
    base, experts = tiny
    _close(merge("pcb", base, experts, {"ratio": ratio}), pcb_reference(base, experts, ratio), base, rtol=2e-5)


def test_pcb_is_finite_with_many_tasks_and_a_zero_task_vector(tiny):
    """exp(N·x²) overflows float32 from N = 89 in the reference; an all-zero task vector divides 0 by 0 there."""
    base, experts = tiny
    many = [experts[i % len(experts)] for i in range(95)]
    merged = merge("pcb", base, many + [dict(base)])
    assert all(torch.isfinite(v).all() for v in merged.values())
    with pytest.raises(MethodError, match="ratio"):
        merge("pcb", base, experts, {"ratio": 0})


# -- Model Stock ----------------------------------------------------------------------------------------------------

def model_stock_reference(base, experts, filter_wise=False):
    out = {}
    taus = _taus(base, experts)
    k = len(experts)
    for key in _float_keys(base):
        ds = [t[key] for t in taus]
        rows = [d.reshape(1, -1) if d.dim() <= 1 else d for d in ds] if filter_wise else [d.reshape(-1) for d in ds]
        cos = sum(((rows[i] * rows[j]).sum(-1) / (rows[i].norm(dim=-1) * rows[j].norm(dim=-1)).clamp(min=1e-6))
                  .clamp(-1, 1) for i in range(k) for j in range(i + 1, k)) / (k * (k - 1) / 2)
        t = torch.where((1 + (k - 1) * cos).abs() < 1e-6, torch.zeros_like(cos), k * cos / (1 + (k - 1) * cos))
        mean = sum(ds) / k
        if filter_wise and mean.dim() > 1:
            t = t.unsqueeze(-1)
        else:
            t = t.reshape(())
        out[key] = base[key].double() + t * mean
    return out


@pytest.mark.parametrize("filter_wise", [False, True])
def test_model_stock_matches_its_definition(tiny, filter_wise):
    base, experts = tiny
    _close(merge("model_stock", base, experts, {"filter_wise": filter_wise}),
           model_stock_reference(base, experts, filter_wise), base)


def test_model_stock_identities(tiny):
    """Identical task vectors: t = 1 (the average); one expert: refused, as the method needs an angle."""
    base, experts = tiny
    same = merge("model_stock", base, [experts[0], experts[0]])
    assert all(torch.allclose(same[k], experts[0][k], atol=1e-6) for k in base if base[k].is_floating_point())
    with pytest.raises(MethodError, match="at least 2"):
        merge("model_stock", base, experts[:1])


# -- Breadcrumbs ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("density, gamma, kept", [(0.5, 0.1, range(9, 19)), (0.95, 0.1, range(1, 20)),
                                                  (0.5, 0.01, range(11, 21)), (1.0, 0.3, range(1, 21))])
def test_breadcrumbs_keeps_the_ranks_below_the_outliers(density, gamma, kept):
    """|τ| = 1..20: keep ⌊density·n⌋ entries just below the ⌊gamma·n⌋ largest (mergekit's worked cases)."""
    from nbmerge.methods.breadcrumbs import breadcrumbs_mask

    values = torch.arange(1, 21, dtype=torch.float32)[torch.randperm(20, generator=torch.Generator().manual_seed(0))]
    values = values * torch.tensor([1.0, -1.0]).repeat(10)
    mask = breadcrumbs_mask(values, density, gamma)
    assert sorted(values[mask].abs().int().tolist()) == list(kept)


def test_breadcrumbs_merges_as_defined(tiny):
    from nbmerge.methods.breadcrumbs import breadcrumbs_mask

    base, experts = tiny
    taus = _taus(base, experts)
    for merge_rule in ("sum", "ties"):
        expected = {}
        for key in _float_keys(base):
            kept = [t[key] * breadcrumbs_mask(t[key].float(), 0.8, 0.05) for t in taus]
            if merge_rule == "sum":
                total = sum(kept)
            else:
                sign = torch.where(sum(kept) >= 0, 1.0, -1.0).double()
                total = sum(k * (torch.sign(k) == sign) for k in kept)
            expected[key] = base[key].double() + 0.3 * total
        merged = merge("breadcrumbs", base, experts, {"density": 0.8, "gamma": 0.05, "merge": merge_rule})
        _close(merged, expected, base)


def test_new_methods_are_registered_with_their_papers():
    from nbmerge.methods import all_methods

    names = {m.name: m for m in all_methods()}
    for name in ("cart", "consensus", "pcb", "model_stock", "breadcrumbs", "emr", "tsv_c"):
        assert name in names and names[name].paper.startswith("https://arxiv.org/abs/"), name
    assert math.isclose(names["pcb"].params["scale"].default, 1.2)


# -- task-aware: EMR-Merging, TSV-C ---------------------------------------------------------------------------------

def emr_reference(base, experts):
    """FusionBench's steps (sign from the sum, > 0 positive; masks; max agreeing magnitude; rescalers from per-tensor
    means), in float64."""
    keys, taus = _float_keys(base), _taus(base, experts)
    unified, masks = {}, [{} for _ in taus]
    for key in keys:
        total = sum(t[key] for t in taus)
        sign = torch.where(total > 0, 1.0, -1.0).double()
        stacked = torch.stack([t[key] for t in taus])
        agree = stacked * sign > 0
        unified[key] = sign * (stacked.abs() * agree).max(0).values
        for t in range(len(taus)):
            masks[t][key] = agree[t]
    models = []
    for t, tau in enumerate(taus):
        num = sum(tau[k].abs().mean() for k in keys)
        den = sum((unified[k] * masks[t][k]).abs().mean() for k in keys)
        models.append({k: base[k].double() + (unified[k] * masks[t][k]) * (num / den) for k in keys})
    return models


def test_emr_gives_one_model_per_task_as_defined(tiny):
    base, experts = tiny
    models = merge("emr", base, experts)
    from nbmerge.engine.taskaware import TaskModels

    assert isinstance(models, TaskModels) and len(models) == len(experts) and len(models.info["rescalers"]) == 3
    for got, expected in zip(models, emr_reference(base, experts)):
        _close(got, expected, base)
    assert get_method_task_aware("emr") and not get_method_task_aware("ties")


def get_method_task_aware(name):
    from nbmerge.methods import get_method

    return get_method(name).task_aware


def test_tsv_c_keeps_each_tasks_top_singular_directions(tiny):
    base, experts = tiny
    models = merge("tsv_c", base, experts, {"scale": 0.5})
    taus, T = _taus(base, experts), len(experts)
    for t, model in enumerate(models):
        expected = {}
        for key in _float_keys(base):
            tau = taus[t][key]
            if tau.dim() == 2:
                k = int(min(tau.shape) * (1.0 / T))
                u, s, vh = torch.linalg.svd(tau, full_matrices=False)
                tau = (u[:, :k] * s[:k]) @ vh[:k]
            expected[key] = base[key].double() + 0.5 * tau
        _close(model, expected, base)
    assert 0 < models.info["stored_fraction"] < 1


def test_a_task_aware_merge_is_evaluated_task_by_task(tiny):
    """The trial cache's evaluation loads task t's own model for task t's data, and α scales each model."""
    from nbmerge.evaluate.protocol import evaluate_predictions
    from nbmerge.tune.alpha_tuning import scaled
    from nbmerge.engine.taskaware import TaskModels

    base, experts = tiny
    models = merge("emr", base, experts)
    loaded = []

    class Recorder:
        task_names = ["a", "b", "c"]

        def load(self, state):
            loaded.append(state)

        def logits(self, task, split):
            return torch.zeros(2, 2), torch.zeros(2, dtype=torch.long)

    evaluate_predictions(Recorder(), models, "val")
    assert [id(s) for s in loaded] == [id(m) for m in models]
    half = scaled(base, models, 0.5)
    assert isinstance(half, TaskModels)
    key = "visual.transformer.resblocks.0.mlp.c_fc.weight"
    torch.testing.assert_close(half[1][key], base[key] + 0.5 * (models[1][key] - base[key]))


def test_task_aware_outputs_are_one_folder_per_task(files_tiny, capsys):
    from nbmerge.cli import main
    from nbmerge.engine.io import load_state_dict

    base_path, expert_paths, out_dir = files_tiny
    assert main(["merge", "--method", "emr", "--base", base_path, "--experts", *expert_paths, "--out",
                 str(out_dir / "one.safetensors"), "--device", "cpu"]) == 2
    assert "task-aware" in capsys.readouterr().err
    assert main(["merge", "--method", "emr", "--base", base_path, "--experts", *expert_paths, "--out",
                 str(out_dir / "emr") + "/", "--device", "cpu"]) == 0
    folders = sorted(p.name for p in (out_dir / "emr").iterdir())
    assert folders == ["00-e0", "01-e1", "02-e2"]
    models = merge("emr", base_path, expert_paths)
    for folder, model in zip(folders, models):
        written = load_state_dict(out_dir / "emr" / folder)
        assert all(torch.equal(written[k], model[k]) for k in model)


@pytest.fixture
def files_tiny(tmp_path, tiny):
    from nbmerge.engine.io import save_state_dict

    base, experts = tiny
    save_state_dict(base, tmp_path / "in" / "base.safetensors")
    paths = []
    for i, expert in enumerate(experts):
        save_state_dict(expert, tmp_path / "in" / f"e{i}.safetensors")
        paths.append(str(tmp_path / "in" / f"e{i}.safetensors"))
    return str(tmp_path / "in" / "base.safetensors"), paths, tmp_path / "out"


def test_tall_masks_give_each_task_the_weights_it_needs(tiny64):
    """Task t runs θ₀ + m_t ⊙ τ_MTL; the masks are the ones Consensus counts (k = 1 keeps a weight any mask has)."""
    base, experts = tiny64
    models = merge("tall", base, experts, {"lam": 0.4})
    taus, keys = _taus(base, experts), _float_keys(base)
    for t, model in enumerate(models):
        expected = {}
        for key in keys:
            multi = sum(tau[key] for tau in taus)
            mask = taus[t][key].abs() > 0.4 * (multi - taus[t][key]).abs()
            expected[key] = base[key].double() + multi * mask
        _close(model, expected, base, rtol=1e-9)
    assert get_method_task_aware("tall")
