"""Localize-and-Stitch: the dataless and the learned masks against written-out references, the stitch, the mask
file, the CLI."""

from pathlib import Path

import numpy as np
import pytest
import torch

from nbmerge import merge
from nbmerge.cli import main
from nbmerge.errors import MethodError, NbmergeError
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.methods.localize_stitch import Masks, stitch
from nbmerge.tune.localize import LocalizeSettings, epoch_order, k_shot, learn_mask, learn_masks

from test_adamerging import TASKS, MlpArch, toy

KEYS = ["enc.fc1.weight", "enc.fc1.bias", "enc.fc2.weight", "enc.fc2.bias"]


def reference_stitch(base, experts, masks):
    """θ₀ + Σ_t (m_t / Σ_s m_s) τ_t, entry by entry, in float64."""
    out = {}
    for key in base:
        if key not in masks:
            out[key] = base[key].double()
            continue
        t0 = base[key].double()
        count = sum(m.double() for m in masks[key])
        share = torch.where(count > 0, 1.0 / count.clamp_min(1), torch.zeros_like(count))
        out[key] = t0 + sum(m.double() * share * (e[key].double() - t0) for m, e in zip(masks[key], experts))
    return out


def test_dataless_masks_keep_the_largest_task_vector_entries_over_the_whole_model():
    base, experts, _, _ = toy()
    sparsity = 0.3
    merged = merge("localize_stitch", base, experts, {"sparsity": sparsity})
    floats = [k for k in base if base[k].is_floating_point()]
    masks = {k: [] for k in floats}
    for expert in experts:
        flat = torch.cat([(expert[k] - base[k]).abs().reshape(-1) for k in floats])
        threshold = torch.topk(flat, int(sparsity * flat.numel())).values.min()   # the official test: strictly above
        for k in floats:
            masks[k].append((expert[k] - base[k]).abs() > threshold)
    expected = reference_stitch(base, experts, masks)
    for key in base:
        torch.testing.assert_close(merged[key].double(), expected[key], rtol=0, atol=1e-6)
    shared = sum((torch.stack(masks[k]).sum(0) > 1).sum().item() for k in floats)
    assert shared > 0   # some entries are in two masks: the stitch's averaging was exercised
    with pytest.raises(MethodError, match="sparsity"):
        merge("localize_stitch", base, experts, {"sparsity": 0.0})


def reference_mask(base, expert, head, x, y, s: LocalizeSettings, task: int) -> dict:
    """The official Localizer's steps written out: the MLP's forward by hand, autograd for ∇_θ, the update (the
    gradients summed over an epoch's batches: ``train_graft`` divides by a batch count that never passes 1)."""
    t0 = {k: base[k].double() for k in KEYS}
    tau = {k: expert[k].double() - t0[k] for k in KEYS}
    flat = torch.cat([tau[k].abs().reshape(-1) for k in KEYS])
    threshold = torch.topk(flat, int(s.sparsity * flat.numel())).values.min()
    logit = {k: torch.where(tau[k].abs() > threshold, s.sigmoid_bias, -s.sigmoid_bias).double() for k in KEYS}
    for epoch in range(s.epochs):
        theta = {k: (t0[k] + torch.sigmoid(logit[k]) * tau[k]).requires_grad_(True) for k in KEYS}
        order = torch.from_numpy(epoch_order(len(y), s.seed, task, epoch))
        acc = {k: torch.zeros_like(t0[k]) for k in KEYS}
        for start in range(0, len(y), s.batch):
            idx = order[start:start + s.batch]
            h = torch.tanh(x[idx].double() @ theta["enc.fc1.weight"].T + theta["enc.fc1.bias"])
            f = h @ theta["enc.fc2.weight"].T + theta["enc.fc2.bias"]
            f = f / f.norm(dim=1, keepdim=True)
            logits = head.logit_scale * f @ head.weight.double().T
            loss = -(logits.log_softmax(1)[torch.arange(len(idx)), y[idx]]).mean()
            grads = torch.autograd.grad(loss, [theta[k] for k in KEYS])
            for k, g in zip(KEYS, grads):
                acc[k] += s.lr * g * tau[k]
        for k in KEYS:
            g = acc[k]   # summed over the batches: the official count of batches stops at 1
            d = torch.sigmoid(logit[k]) * (1 - torch.sigmoid(logit[k]))
            logit[k] = logit[k] - (g * d - s.l1 * torch.where(logit[k] > 0, d, -d))
    return {k: logit[k] > 0 for k in KEYS}


def test_learned_masks_equal_the_written_out_localizer():
    base, experts, heads, inputs = toy()
    labels = {t: torch.arange(len(inputs[t])) % 4 for t in TASKS}
    # a small bias and a large lr, so that masks flip within 4 epochs on the toy (the official 5 and 1e7 on a ViT)
    settings = LocalizeSettings(sparsity=0.2, sigmoid_bias=1.0, lr=2000.0, l1=0.05, epochs=4, shots=2, batch=3,
                                seed=1)
    learned = learn_masks(MlpArch(), heads, {t: (inputs[t], labels[t]) for t in TASKS}, base, experts, settings)
    changed = 0
    for t, task in enumerate(TASKS):
        chosen = torch.from_numpy(k_shot(labels[task].numpy(), 2, 1, t))
        assert len(chosen) == 8 and sorted(labels[task][chosen].tolist()) == [0, 0, 1, 1, 2, 2, 3, 3]
        expected = reference_mask(base, experts[t], heads[task], inputs[task][chosen], labels[task][chosen],
                                  settings, t)
        start = reference_mask(base, experts[t], heads[task], inputs[task][chosen], labels[task][chosen],
                               LocalizeSettings(sparsity=0.2, epochs=0), t)
        for key in KEYS:
            assert torch.equal(learned.masks[key][t], expected[key]), (task, key)
            changed += int((expected[key] != start[key]).sum())
    assert changed > 0   # the training moved the masks away from their top-|τ| start


def test_a_mask_file_round_trips_and_merges_as_the_stitch(tmp_path):
    base, experts, heads, inputs = toy()
    gen = torch.Generator().manual_seed(2)
    masks = Masks(TASKS, {k: torch.rand(3, *base[k].shape, generator=gen) > 0.6 for k in KEYS})
    path = masks.save(tmp_path / "m.safetensors")
    loaded = Masks.load(path)
    assert loaded.tasks == TASKS and all(torch.equal(loaded.masks[k], masks.masks[k]) for k in KEYS)
    with pytest.warns(UserWarning, match="1 floating tensors have no learned mask"):   # the buffer
        merged = merge("localize_stitch", base, experts, {"masks": str(path)})
    expected = reference_stitch(base, experts, {k: list(masks.masks[k]) for k in KEYS})
    for key in base:
        torch.testing.assert_close(merged[key].double(), expected[key], rtol=0, atol=1e-6)
    assert torch.equal(stitch([torch.ones(2), 3 * torch.ones(2)], [torch.tensor([True, False])] * 2),
                       torch.tensor([2.0, 0.0]))


def test_mask_files_that_do_not_fit_are_refused(tmp_path):
    base, experts, _, _ = toy()
    Masks(TASKS, {"enc.fc1.bias": torch.ones(3, 8, dtype=torch.bool)}).save(tmp_path / "m.safetensors")
    with pytest.raises(MethodError, match="3 tasks"):
        merge("localize_stitch", base, experts[:2], {"masks": str(tmp_path / "m.safetensors")})
    Masks(TASKS, {"other.bias": torch.ones(3, 8, dtype=torch.bool)}).save(tmp_path / "o.safetensors")
    with pytest.raises(MethodError, match="another model"):
        merge("localize_stitch", base, experts, {"masks": str(tmp_path / "o.safetensors")})
    Masks(TASKS, {"enc.fc1.bias": torch.ones(3, 5, dtype=torch.bool)}).save(tmp_path / "s.safetensors")
    with pytest.raises(MethodError, match="shape"):
        merge("localize_stitch", base, experts, {"masks": str(tmp_path / "s.safetensors")})
    save_state_dict({"x": torch.zeros(3)}, tmp_path / "plain.safetensors")
    with pytest.raises(NbmergeError, match="not a Localize-and-Stitch mask file"):
        merge("localize_stitch", base, experts, {"masks": str(tmp_path / "plain.safetensors")})
    for bad in ({"sparsity": 0.0}, {"epochs": -1}, {"shots": 0}, {"lr": float("nan")}):
        with pytest.raises(NbmergeError, match="localize"):
            LocalizeSettings(**bad)


def test_the_cli_learns_on_validation_and_the_merge_reads_the_file(micro_cache, tmp_path, capsys):
    from nbmerge.pools.zoo import load_zoo

    out = tmp_path / "masks.safetensors"
    assert main(["localize", "--suite", "micro", "--cache", str(micro_cache), "--epochs", "1", "--shots", "4",
                 "--sparsity", "0.01", "--out", str(out), "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "merge with: nbmerge merge --method localize_stitch" in text and "localizing" in text
    zoo = load_zoo("micro", micro_cache)
    masks = Masks.load(out)
    assert masks.tasks == zoo.tasks and all(0 < p < 0.5 for p in masks.proportion())
    merged = tmp_path / "merged.safetensors"
    assert main(["merge", "--method", "localize_stitch", "--param", f"masks={out}", "--base", str(zoo.base_path),
                 "--experts", *map(str, zoo.expert_paths), "--out", str(merged), "--device", "cpu"]) == 0
    base = load_state_dict(zoo.base_path)
    experts = [load_state_dict(p) for p in zoo.expert_paths]
    expected = reference_stitch(base, experts, {k: list(m) for k, m in masks.masks.items()})
    got = load_state_dict(merged)
    assert all(np.allclose(got[k].double().numpy(), expected[k].numpy(), atol=1e-6) for k in got)


def test_in_the_tour_masks_are_learned_per_seed_on_its_labeled_subset_and_cached(micro_cache, monkeypatch):
    """The tour's learned variant: per validation seed, masks learned on exactly the labeled examples α is chosen
    on (never test), stitched by the registered method, α on the grid; a second run trains nothing."""
    from nbmerge.experiments import tour
    from nbmerge.pools.build import open_zoo
    from nbmerge.pools.zoo import load_models
    from nbmerge.params import notebook_parameters
    from nbmerge.report.validate import problems
    from nbmerge.tune import localize
    from test_tour import _config

    config = _config(cache=str(micro_cache), methods=["task_arithmetic", "localize_stitch_learned"],
                     val_examples=20, seeds=[0, 1], bmm_grams=[])
    zoo = open_zoo(config.suite, config.cache)
    base, experts = load_models(zoo)
    seen = []
    real = localize.learn_masks

    def recording(arch, heads, labeled, *args, **kwargs):
        seen.append({t: (x.clone(), y.clone()) for t, (x, y) in labeled.items()})
        return real(arch, heads, labeled, *args, **kwargs)
    monkeypatch.setattr(localize, "learn_masks", recording)
    cache = tour.open_lab(config).cache
    runs = tour.tune_and_test(cache, "localize_stitch_learned", base, experts, None, config)
    assert len(seen) == 2 and len(runs) == 2
    for seed, labeled in enumerate(seen):
        view = cache.evaluator.with_val_subset(20, seed)
        for task, (x, y) in labeled.items():
            want_x, want_y = view.labeled(task)
            assert torch.equal(x, want_x) and torch.equal(y, want_y) and len(y) == 20
    recipes = [tuned.recipe for tuned, _ in runs]
    assert all(r["method"] == "localize_stitch" and r["params"]["masks"] == "learned" for r in recipes)
    assert recipes[0]["params"]["examples"] != recipes[1]["params"]["examples"]   # one draw per seed
    assert [r["params"]["seed"] for r in recipes] == [0, 1]
    assert all(tuned.alpha in [r["alpha"] for r in tuned.curve] for tuned, _ in runs)
    seen.clear()
    again = tour.tune_and_test(tour.open_lab(config).cache, "localize_stitch_learned", base, experts, None, config)
    assert not seen and [t.curve for t, _ in again] == [t.curve for t, _ in runs]
    rows = tour.comparison_rows(_comparison_of(config, zoo, runs))
    assert "learned on labeled validation" in rows[-1]["what it does"]
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    tour_params = notebook_parameters(notebooks / "00_tour.ipynb")
    assert problems("00_tour", {**tour_params, "methods": ["ties", "localize_stitch_learned"]}) == {}
    ace_params = notebook_parameters(notebooks / "10_ace.ipynb")   # a tour variant, not a method of its own
    assert "localize_stitch_learned" in problems("10_ace", {**ace_params,
                                                            "baselines": ["localize_stitch_learned"]})["baselines"]


def _comparison_of(config, zoo, runs):
    from nbmerge.experiments import tour

    tasks = list(zoo.tasks)
    comparison = tour.Comparison(config.suite, tasks, {t: 1.0 for t in tasks}, {t: 0.5 for t in tasks}, 0.5,
                                 seeds=tuple(config.seeds))
    comparison.add("localize_stitch_learned", runs)
    return comparison
