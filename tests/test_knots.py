"""KnOTS on LoRA adapters: the official steps written out in float64, its identities, and what it refuses."""

from __future__ import annotations

import pytest
import torch

import nbmerge
from nbmerge.errors import MethodError
from nbmerge.engine.io import load_state_dict
from nbmerge.lm_testing import LLAMA_TARGETS, tiny_lm, write_lora


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """A float64 tiny Llama and three LoRA adapters of different ranks over it, with the dense experts."""
    root = tmp_path_factory.mktemp("knots")
    base = tiny_lm(root / "base", "llama", dtype=torch.float64, tokenizer=False)
    state = load_state_dict(base)
    adapters, dense = [], []
    for i, (r, alpha) in enumerate([(4, 8.0), (2, 2.0), (3, 12.0)]):
        folder, expert = write_lora(root / f"a{i}", state, LLAMA_TARGETS, r=r, alpha=alpha, seed=i)
        adapters.append(str(folder))
        dense.append(expert)
    return base, state, adapters, dense


def _reference(state, dense, density, scale):
    """The official KnOTS-TIES: per adapted weight, SVD of [ΔW_1 | … | ΔW_T] (s > 1e-5 kept), Z_t = diag(s)·V_t;
    per task the top ``density`` of |Z_t| over the whole model; one sign per entry from the sum of the trimmed values
    (zero: the model's majority sign); the mean of the agreeing entries; θ₀ + α·U·M."""
    keys = [k for k in state if any(k.endswith(f"{t}.weight") for t in LLAMA_TARGETS)]
    aligned = {}
    for key in keys:
        deltas = [e[key] - state[key] for e in dense]
        u, s, vh = torch.linalg.svd(torch.cat(deltas, dim=1), full_matrices=False)
        kept = s > 1e-5
        width = deltas[0].shape[1]
        z = s[kept, None] * vh[kept]
        aligned[key] = (u[:, kept], [z[:, t * width:(t + 1) * width] for t in range(len(dense))])
    T = len(dense)
    everything = [torch.cat([aligned[k][1][t].reshape(-1) for k in keys]).abs() for t in range(T)]
    D = everything[0].numel()
    k = D - int(D * density)
    thresholds = [torch.kthvalue(v, k).values if k >= 1 else torch.tensor(0.0, dtype=v.dtype) for v in everything]
    trimmed = {key: [z * (z.abs() >= thresholds[t]) for t, z in enumerate(aligned[key][1])] for key in keys}
    majority = torch.sign(sum(torch.sign(sum(trimmed[key])).sum() for key in keys))
    out = dict(state)
    for key in keys:
        total = sum(trimmed[key])
        sign = torch.sign(total)
        sign[sign == 0] = majority
        agree = [torch.where(sign > 0, z > 0, z < 0) for z in trimmed[key]]
        count = sum(a.to(total.dtype) for a in agree)
        merged = sum(z * a for z, a in zip(trimmed[key], agree)) / count.clamp(min=1)
        out[key] = state[key] + scale * aligned[key][0] @ merged
    return out


@pytest.mark.parametrize("density", [0.2, 0.7])
def test_knots_equals_the_official_steps_written_out(pool, density):
    base, state, adapters, dense = pool
    merged = nbmerge.merge("knots", base, adapters, {"density": density, "scale": 0.6})
    reference = _reference(state, dense, density, 0.6)
    for key in state:
        torch.testing.assert_close(merged[key], reference[key], rtol=1e-9, atol=1e-12, msg=key)
    # the alignment changes what is trimmed and elected: KnOTS-TIES is not TIES on the same adapters
    ties = nbmerge.merge("ties", base, adapters, {"density": density, "scale": 0.6})
    key = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.allclose(merged[key], ties[key], rtol=1e-6, atol=1e-9)


def test_one_adapter_at_full_density_is_that_adapter(pool):
    base, state, adapters, dense = pool
    merged = nbmerge.merge("knots", base, adapters[:1], {"density": 1.0, "scale": 1.0})
    for key in state:
        torch.testing.assert_close(merged[key], dense[0][key], rtol=0, atol=1e-12, msg=key)


def test_dense_experts_and_partly_adapted_weights_are_refused(pool, tmp_path):
    base, state, adapters, dense = pool
    with pytest.raises(MethodError, match="merges LoRA adapters"):
        nbmerge.merge("knots", base, dense)
    with_embedding, _ = write_lora(tmp_path / "e", state, LLAMA_TARGETS, seed=5, embeddings=["model.embed_tokens"])
    with pytest.raises(MethodError, match="adapted by some experts but not by"):
        nbmerge.merge("knots", base, [*adapters[:2], str(with_embedding)])
    bias = next(k for k in state if k.endswith("norm.weight"))
    replaced, _ = write_lora(tmp_path / "r", state, LLAMA_TARGETS, seed=6, replace={bias: state[bias] + 1.0})
    with pytest.raises(MethodError, match="LoRA updates only"):
        nbmerge.merge("knots", base, [*adapters[:2], str(replaced)])
