"""AdaMerging: the learned coefficients against a written-out reference, resumption, the registered merge, the CLI."""

import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from nbmerge import merge
from nbmerge.cli import main
from nbmerge.errors import MethodError, NbmergeError
from nbmerge.engine.io import load_state_dict, save_state_dict
from nbmerge.models.base import Head
from nbmerge.methods.adamerging import Coefficients
from nbmerge.tune.adamerging import AdaMergingSettings, batch_indices, learn_coefficients, learn_on_zoo

TASKS = ["a", "b", "c"]


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.fc2 = torch.nn.Linear(8, 5)
        self.register_buffer("offset", torch.zeros(5))  # a buffer: never merged

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x))) + self.offset


@dataclass(frozen=True)
class MlpArch:
    prefix = "enc."

    def build(self):
        return Mlp()


def toy(seed=0):
    gen = torch.Generator().manual_seed(seed)
    shapes = {"enc.fc1.weight": (8, 6), "enc.fc1.bias": (8,), "enc.fc2.weight": (5, 8), "enc.fc2.bias": (5,)}
    base = {k: torch.randn(s, generator=gen) * 0.5 for k, s in shapes.items()}
    base["enc.offset"] = torch.zeros(5)
    experts = [{k: v + (0.4 * torch.randn(v.shape, generator=gen) if k != "enc.offset" else 0) for k, v in base.items()}
               for _ in TASKS]
    heads = {}
    for t in TASKS:
        w = torch.randn(4, 5, generator=gen)
        heads[t] = Head(w / w.norm(dim=1, keepdim=True), 5.0)
    inputs = {t: torch.randn(11, 6, generator=gen) for t in TASKS}
    return base, experts, heads, inputs


def reference(base, experts, heads, inputs, s: AdaMergingSettings, steps: int) -> torch.Tensor:
    """AdaMerging written out: the forward by hand, the entropy from its definition, Adam's update by its formulas
    (float64 throughout)."""
    keys = ["enc.fc1.weight", "enc.fc1.bias", "enc.fc2.weight", "enc.fc2.bias"]
    t0 = {k: base[k].double() for k in keys}
    tau = [{k: e[k].double() - t0[k] for k in keys} for e in experts]
    width = len(keys) if s.granularity == "layer" else 1
    lam = torch.full((len(TASKS), width), s.init, dtype=torch.float64)
    m, v = torch.zeros_like(lam), torch.zeros_like(lam)
    for step in range(steps):
        lam_used = lam.clone().requires_grad_(True)
        clamped = lam_used.clamp(0, 1) if s.clamp else lam_used
        theta = {k: t0[k] + sum(clamped[t, l if width > 1 else 0] * tau[t][k] for t in range(len(TASKS)))
                 for l, k in enumerate(keys)}
        loss = 0.0
        for t, task in enumerate(TASKS):
            x = inputs[task].double()[torch.from_numpy(batch_indices(len(inputs[task]), s.batch, s.seed, t, step))]
            h = torch.tanh(x @ theta["enc.fc1.weight"].T + theta["enc.fc1.bias"])
            f = h @ theta["enc.fc2.weight"].T + theta["enc.fc2.bias"]
            f = f / f.norm(dim=1, keepdim=True)
            logits = heads[task].logit_scale * f @ heads[task].weight.double().T
            p = torch.exp(logits - torch.logsumexp(logits, dim=1, keepdim=True))
            loss = loss + (-(p * torch.log(p)).sum(1)).mean()
        loss.backward()
        g = lam_used.grad
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        m_hat, v_hat = m / (1 - 0.9 ** (step + 1)), v / (1 - 0.999 ** (step + 1))
        lam = lam - s.lr * m_hat / (v_hat.sqrt() + 1e-8)
    return (lam.clamp(0, 1) if s.clamp else lam).expand(len(TASKS), len(keys))


@pytest.mark.parametrize("granularity,clamp,lr", [("layer", True, 1e-2), ("task", True, 1e-2),
                                                  ("layer", False, 0.2), ("layer", True, 0.2)])
def test_learned_coefficients_equal_the_written_out_reference(granularity, clamp, lr):
    """lr 0.2 runs λ past [0, 1]: clamped, the gradient stops at the bound, as in the official code."""
    base, experts, heads, inputs = toy()
    settings = AdaMergingSettings(granularity=granularity, steps=7, lr=lr, clamp=clamp, batch=4, seed=3)
    learned = learn_coefficients(MlpArch(), heads, inputs, base, experts, settings, log=lambda *_: None)
    expected = reference(base, experts, heads, inputs, settings, 7)
    assert learned.keys == ["enc.fc1.weight", "enc.fc1.bias", "enc.fc2.weight", "enc.fc2.bias"]
    torch.testing.assert_close(learned.lambdas.double(), expected, rtol=0, atol=2e-6)
    assert len(learned.losses) == 7 and learned.losses[-1] < learned.losses[0]
    if lr == 0.2:   # the run did reach the bounds, so the clamp was exercised (or visibly not applied)
        assert (learned.lambdas.min() < 0 or learned.lambdas.max() > 1) != clamp


def test_batches_cover_each_epoch_once_and_depend_on_seed_and_task():
    n, batch = 11, 4
    epoch = np.concatenate([batch_indices(n, batch, 0, 1, s) for s in range(3)])
    assert sorted(epoch.tolist()) == list(range(n))   # 4 + 4 + 3: every input once per epoch
    assert not np.array_equal(batch_indices(n, batch, 0, 1, 3), batch_indices(n, batch, 0, 1, 0))
    assert not np.array_equal(batch_indices(n, batch, 1, 1, 0), batch_indices(n, batch, 0, 1, 0))
    assert not np.array_equal(batch_indices(n, batch, 0, 2, 0), batch_indices(n, batch, 0, 1, 0))


def test_an_interrupted_run_resumes_from_its_checkpoint_exactly(tmp_path):
    base, experts, heads, inputs = toy()
    settings = AdaMergingSettings(steps=9, lr=0.05, batch=4)
    whole = learn_coefficients(MlpArch(), heads, inputs, base, experts, settings, log=lambda *_: None)

    def stop_at_5(step, loss):
        if step == 5:
            raise KeyboardInterrupt

    checkpoint = tmp_path / "ck.safetensors"
    with pytest.raises(KeyboardInterrupt):
        learn_coefficients(MlpArch(), heads, inputs, base, experts, settings, checkpoint=checkpoint,
                           checkpoint_every=2, progress=stop_at_5, log=lambda *_: None)
    said = []
    resumed = learn_coefficients(MlpArch(), heads, inputs, base, experts, settings, checkpoint=checkpoint,
                                 checkpoint_every=2, log=said.append)
    assert said == [f"adamerging: resumed from {checkpoint} at step 4"]
    assert torch.equal(resumed.lambdas, whole.lambdas) and resumed.losses == whole.losses
    # another run's settings (or a damaged file) never resume from it
    said.clear()
    other = learn_coefficients(MlpArch(), heads, inputs, base, experts, AdaMergingSettings(steps=9, lr=0.01, batch=4),
                               checkpoint=checkpoint, log=said.append)
    assert "belongs to another run" in said[0] and not torch.equal(other.lambdas, whole.lambdas)
    checkpoint.write_bytes(checkpoint.read_bytes()[:40])
    said.clear()
    again = learn_coefficients(MlpArch(), heads, inputs, base, experts, settings, checkpoint=checkpoint,
                               log=said.append)
    assert "damaged" in said[0] and torch.equal(again.lambdas, whole.lambdas)


def test_the_registered_merge_applies_the_learned_coefficients(tmp_path):
    base, experts, heads, inputs = toy()
    learned = learn_coefficients(MlpArch(), heads, inputs, base, experts, AdaMergingSettings(steps=3, lr=0.1, batch=4),
                                 log=lambda *_: None)
    path = learned.save(tmp_path / "coefficients.safetensors")
    with pytest.warns(UserWarning, match="1 floating tensors have no learned coefficient"):  # the buffer
        merged = merge("adamerging", base, experts, {"coefficients": str(path)})
    expected = learned.merged(base, experts)
    for key in base:
        torch.testing.assert_close(merged[key], expected[key], rtol=1e-6, atol=1e-6)
    assert torch.equal(merged["enc.offset"], base["enc.offset"])
    key = "enc.fc2.bias"
    by_hand = base[key] + sum(float(learned.of(key)[t]) * (e[key] - base[key]) for t, e in enumerate(experts))
    torch.testing.assert_close(merged["enc.fc2.bias"], by_hand)
    loaded = Coefficients.load(path)
    assert loaded.tasks == TASKS and torch.equal(loaded.lambdas, learned.lambdas) and loaded.settings["steps"] == 3


def test_the_registered_merge_refuses_what_does_not_fit(tmp_path):
    base, experts, heads, inputs = toy()
    with pytest.raises(MethodError, match="nbmerge adamerging"):
        merge("adamerging", base, experts)
    learned = Coefficients(TASKS, ["enc.fc1.weight"], torch.full((3, 1), 0.3))
    learned.save(tmp_path / "c.safetensors")
    with pytest.raises(MethodError, match="3 tasks"):
        merge("adamerging", base, experts[:2], {"coefficients": str(tmp_path / "c.safetensors")})
    Coefficients(TASKS, ["other.weight"], torch.full((3, 1), 0.3)).save(tmp_path / "o.safetensors")
    with pytest.raises(MethodError, match="another model"):
        merge("adamerging", base, experts, {"coefficients": str(tmp_path / "o.safetensors")})
    save_state_dict({"enc.fc1.weight": torch.zeros(3)}, tmp_path / "plain.safetensors")
    with pytest.raises(NbmergeError, match="not an AdaMerging coefficient file"):
        merge("adamerging", base, experts, {"coefficients": str(tmp_path / "plain.safetensors")})


def test_settings_are_checked():
    for bad in ({"granularity": "block"}, {"steps": -1}, {"batch": 0}, {"lr": 0.0}, {"init": math.inf},
                {"seed": 1.5}):
        with pytest.raises(NbmergeError, match="adamerging"):
            AdaMergingSettings(**bad)


class _Guarded(dict):
    """A task's arrays where reading labels or test inputs fails: AdaMerging reads validation inputs only."""

    def __getitem__(self, name):
        if name != "val_x":
            raise AssertionError(f"AdaMerging read {name}")
        return super().__getitem__(name)


def test_on_a_zoo_it_reads_validation_inputs_only_and_the_cli_round_trips(micro_cache, tmp_path, capsys):
    from nbmerge.pools.zoo import load_zoo

    zoo = load_zoo("micro", micro_cache)
    zoo.arrays = {t: _Guarded(a) for t, a in zoo.arrays.items()}
    learned = learn_on_zoo(zoo, AdaMergingSettings(steps=2), log=lambda *_: None)
    assert learned.tasks == zoo.tasks and learned.lambdas.shape[0] == len(zoo.tasks)
    out = tmp_path / "coefficients.safetensors"
    assert main(["adamerging", "--suite", "micro", "--cache", str(micro_cache), "--steps", "2", "--out", str(out),
                 "--device", "cpu"]) == 0
    assert "merge with: nbmerge merge --method adamerging" in capsys.readouterr().out
    assert torch.equal(Coefficients.load(out).lambdas, learned.lambdas)  # the same run, same seed
    merged = tmp_path / "merged.safetensors"
    assert main(["merge", "--method", "adamerging", "--param", f"coefficients={out}", "--base", str(zoo.base_path),
                 "--experts", *map(str, zoo.expert_paths), "--out", str(merged), "--device", "cpu"]) == 0
    expected = learned.merged(load_state_dict(zoo.base_path), [load_state_dict(p) for p in zoo.expert_paths])
    got = load_state_dict(merged)
    assert all(torch.allclose(got[k], expected[k], atol=1e-6) for k in expected)
    capsys.readouterr()
    assert main(["adamerging", "--suite", "micro", "--cache", str(micro_cache), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
