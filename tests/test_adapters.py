"""LoRA adapters as experts: an adapter folder merges as the dense model θ₀ + s·B·A it defines, for every method."""

import json

import pytest
import torch

import nbmerge
from nbmerge.engine.adapters import AdapterExpert, dense_expert
from nbmerge.errors import CheckpointError
from nbmerge.engine.io import DictSource, SafetensorsSource, as_source, load_state_dict, save_state_dict
from nbmerge.engine.linalg import LowRank
from nbmerge.lm_testing import GPT2_TARGETS, LLAMA_TARGETS, tiny_lm, write_lora
from nbmerge.methods import all_methods
from nbmerge.engine.walker import WalkOptions, is_linear_weight

#: small settings for the slow-by-default methods (the comparison holds at any setting)
QUICK = {"wudi": {"iters": 20}, "dare": {"p": 0.3, "seed": 3}}


@pytest.fixture(scope="module")
def llama64(tmp_path_factory):
    """A float64 tiny Llama folder, three adapters over it (plain, rsLoRA with an embedding, rank/alpha patterns)
    and the dense experts they define."""
    root = tmp_path_factory.mktemp("llama64")
    base = tiny_lm(root / "base", "llama", dtype=torch.float64, tokenizer=False)
    state = load_state_dict(base)
    adapters, dense = [], []
    settings = [dict(r=4, alpha=8.0), dict(r=2, alpha=4.0, use_rslora=True, embeddings=["model.embed_tokens"]),
                dict(r=3, alpha=6.0, alpha_pattern={"v_proj": 12.0})]
    for i, extra in enumerate(settings):
        folder, expert = write_lora(root / f"adapter{i}", state, LLAMA_TARGETS, seed=i, **extra)
        if "alpha_pattern" in extra:  # v_proj's α is 12, not 6: its ΔW = (12/3)·B·A, computed as the reader does
            # (bit for bit: ISO-C's polar factor of a low-rank sum turns rounding noise into O(1) changes)
            factors = load_state_dict(folder / "adapter_model.safetensors")
            for key in [k for k in expert if ".v_proj." in k]:
                module = "base_model.model." + key[: -len(".weight")]
                b, a = factors[module + ".lora_B.weight"], factors[module + ".lora_A.weight"]
                expert[key] = state[key] + 4.0 * (b @ a)
        adapters.append(folder)
        dense.append(expert)
    return base, state, adapters, dense


def _statistics(state, seed=0, n=3):
    """Random PSD Grams of every linear weight and positive diagonal Fishers of every tensor, one set per expert."""
    generator = torch.Generator().manual_seed(seed)
    grams, fishers = [], []
    for _ in range(n):
        gram = {}
        for key, value in state.items():
            if is_linear_weight(key, value.shape):
                x = torch.randn(2 * value.shape[1], value.shape[1], generator=generator, dtype=torch.float64)
                gram[key] = x.T @ x
        grams.append(gram)
        fishers.append({k: torch.rand(v.shape, generator=generator, dtype=torch.float64) + 0.1
                        for k, v in state.items()})
    return grams, fishers


def same(a, b, atol=1e-10):
    assert set(a) == set(b)
    for key in a:
        torch.testing.assert_close(a[key], b[key], atol=atol, rtol=0, msg=key)


def test_the_adapter_expert_is_the_dense_model_it_defines(llama64):
    base, state, adapters, dense = llama64
    for folder, expected in zip(adapters, dense):
        same(dense_expert(folder, SafetensorsSource(base)), expected, atol=1e-12)


@pytest.mark.parametrize("method", [m.name for m in all_methods() if not m.lora_only])  # KnOTS: test_knots.py
def test_merging_adapters_equals_merging_their_dense_experts(llama64, method, tmp_path):
    base, state, adapters, dense = llama64
    spec = nbmerge.get_method(method)
    grams, fishers = _statistics(state)
    stats = {name: {"grams": grams, "fishers": fishers}[name] for name in spec.needs}
    params = QUICK.get(method, {})
    if method == "adamerging":   # its coefficients, as `nbmerge adamerging` would learn them: one per task and tensor
        from nbmerge.methods.adamerging import Coefficients

        keys = [k for k, v in state.items() if v.is_floating_point()]
        lambdas = torch.rand(len(adapters), len(keys), generator=torch.Generator().manual_seed(0))
        path = Coefficients([f"t{i}" for i in range(len(adapters))], keys, lambdas).save(tmp_path / "c.safetensors")
        params = {"coefficients": str(path)}
    count = spec.max_experts or len(adapters)   # SLERP merges one expert into the base
    adapters, dense = adapters[:count], dense[:count]
    stats = {name: value[:count] for name, value in stats.items()}
    from_dense = nbmerge.merge(method, base, dense, params, **stats)
    from_adapters = nbmerge.merge(method, base, [str(a) for a in adapters], params, **stats)
    if spec.task_aware:  # one model per task: each must match, and the last one is checked for change below
        assert len(from_adapters) == len(from_dense) == len(adapters)
        for a, b in zip(from_adapters, from_dense):
            same(a, b)
        from_adapters = from_adapters[-1]
    else:
        same(from_adapters, from_dense)
    changed = [k for k in state if not torch.equal(from_adapters[k], state[k])]
    assert any(".q_proj." in k for k in changed)  # the adapters did change the model


def test_mixed_dense_and_adapter_experts(llama64, tmp_path):
    base, state, adapters, dense = llama64
    save_state_dict(dense[0], tmp_path / "dense0.safetensors")
    mixed = nbmerge.merge("ties", base, [tmp_path / "dense0.safetensors", adapters[1], adapters[2]])
    same(mixed, nbmerge.merge("ties", base, dense))


def test_weighted_adapter_experts(llama64, tmp_path):
    base, state, adapters, dense = llama64
    nbmerge.merge_to_file("task_arithmetic", base, adapters[:2], tmp_path / "a.safetensors", weights=[0.5, 2.0])
    nbmerge.merge_to_file("task_arithmetic", base, dense[:2], tmp_path / "d.safetensors", weights=[0.5, 2.0])
    same(load_state_dict(tmp_path / "a.safetensors"), load_state_dict(tmp_path / "d.safetensors"))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpt2")
    base = tiny_lm(root / "base", "gpt2", dtype=torch.float64, tokenizer=False)
    return base, load_state_dict(base)


def test_gpt2_conv1d_adapters_fan_in_fan_out(gpt2, tmp_path):
    base, state = gpt2
    assert state["transformer.h.0.mlp.c_proj.weight"].shape == (128, 32)  # Conv1D: (in, out)
    folders, dense = zip(*(write_lora(tmp_path / f"a{i}", state, GPT2_TARGETS, seed=i, fan_in_fan_out=True)
                           for i in range(2)))
    for method in ("ties", "tsv"):
        same(nbmerge.merge(method, base, list(folders)), nbmerge.merge(method, base, list(dense)))


def test_trained_biases_and_modules_to_save_replace_the_base_values(gpt2, tmp_path):
    base, state = gpt2
    new_bias = torch.full_like(state["transformer.h.0.attn.c_attn.bias"], 0.25)
    new_head = state["transformer.wte.weight"] * 2  # GPT-2's head is tied to wte: the saved copy replaces wte
    folder, expected = write_lora(tmp_path / "a", state, GPT2_TARGETS, fan_in_fan_out=True, bias="all",
                                  modules_to_save=["wte"], replace={"transformer.h.0.attn.c_attn.bias": new_bias,
                                                                    "transformer.wte.weight": new_head})
    expert = dense_expert(folder, SafetensorsSource(base))
    torch.testing.assert_close(expert["transformer.h.0.attn.c_attn.bias"], new_bias, atol=0, rtol=0)
    same(expert, expected)
    same(nbmerge.merge("task_arithmetic", base, [folder], {"scale": 1.0}), expected)


def test_an_adapter_saved_against_a_head_model_reads_a_headless_base(llama64, tmp_path):
    base, state, adapters, dense = llama64
    headless = {k[len("model."):]: v for k, v in state.items() if k.startswith("model.")}
    save_state_dict(headless, tmp_path / "headless.safetensors")
    expert = AdapterExpert(adapters[0], SafetensorsSource(tmp_path / "headless.safetensors"))
    torch.testing.assert_close(expert.get("layers.0.self_attn.q_proj.weight"),
                               dense[0]["model.layers.0.self_attn.q_proj.weight"], atol=1e-12, rtol=0)


def test_bfloat16_base_keeps_the_adapter_delta_in_float32(tmp_path):
    state = {"layer.q_proj.weight": torch.ones(8, 8, dtype=torch.bfloat16)}
    save_state_dict(state, tmp_path / "base.safetensors")
    folder, _ = write_lora(tmp_path / "a", state, ["q_proj"], scale=0.01, dtype=torch.float32)
    expert = AdapterExpert(folder, SafetensorsSource(tmp_path / "base.safetensors"))
    assert expert.dtype("layer.q_proj.weight") == torch.float32
    delta = expert.get("layer.q_proj.weight") - 1.0
    torch.testing.assert_close(delta, expert.delta("layer.q_proj.weight"))
    assert delta.abs().max() < 2**-8  # below bfloat16's resolution at 1: rounded away if it were stored as bf16


# -- errors ------------------------------------------------------------------------------------------------------

def _config(folder, **changes):
    path = folder / "adapter_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_an_adapter_for_another_base_names_the_module(llama64, gpt2, tmp_path):
    base, state, adapters, dense = llama64
    with pytest.raises(CheckpointError, match=r"targets 'model\.layers\.0\.mlp\.down_proj\.weight'.*another base"):
        nbmerge.merge("ties", gpt2[0], [adapters[0]])


def test_an_adapter_of_another_width_names_the_key_and_both_shapes(llama64, tmp_path):
    base, state, adapters, dense = llama64
    wide = tiny_lm(tmp_path / "wide", "llama", hidden=64, tokenizer=False)
    with pytest.raises(CheckpointError, match=r"shape mismatch for 'model\.layers\.0\.mlp\.down_proj\.weight': "
                                              r"base \[64, 128\], adapter B·A of .*lora_A.* \[32, 64\]"):
        nbmerge.merge("ties", wide, [adapters[0]])


@pytest.mark.parametrize("changes, words", [
    ({"peft_type": "PROMPT_TUNING"}, "PEFT type 'PROMPT_TUNING' is not supported"),
    ({"use_dora": True}, "DoRA"),
    ({"r": 0}, "r must be a positive number"),
    ({"r": 8}, "factors of rank 4, but adapter_config.json says r = 8"),          # used to merge with neither scaling
    ({"rank_pattern": {"q_proj": 2}}, "says r = 2 \\(rank_pattern\\)"),
    ({"alpha_pattern": {"q_proj": -16}}, r"alpha_pattern\['q_proj'\] must be a positive number"),
    ({"alpha_pattern": {"q_proj": "16"}}, "must be a positive number, got '16'"),
    ({"alpha_pattern": {"q_proj(": 16}}, "is not a regular expression"),
])
def test_unsupported_adapter_configurations(llama64, tmp_path, changes, words):
    base, state, adapters, dense = llama64
    folder, _ = write_lora(tmp_path / "a", state, LLAMA_TARGETS)
    _config(folder, **changes)
    with pytest.raises(CheckpointError, match=words):
        nbmerge.merge("ties", base, [folder])


def test_quantised_factors_are_refused(llama64, tmp_path):
    """int8 LoRA factors used to be merged as if their integers were real values."""
    base, state, adapters, dense = llama64
    folder, _ = write_lora(tmp_path / "a", state, ["q_proj"])
    tensors = load_state_dict(folder / "adapter_model.safetensors")
    key = next(k for k in tensors if k.endswith("lora_A.weight"))
    tensors[key] = (tensors[key] * 100).to(torch.int8)
    save_state_dict(tensors, folder / "adapter_model.safetensors")
    with pytest.raises(CheckpointError, match="stored as I8 \\(quantised factors\\)"):
        nbmerge.merge("ties", base, [folder])


def test_a_pickled_adapter_is_refused(llama64, tmp_path):
    base, state, adapters, dense = llama64
    folder, _ = write_lora(tmp_path / "a", state, LLAMA_TARGETS)
    (folder / "adapter_model.safetensors").rename(folder / "adapter_model.bin")
    with pytest.raises(CheckpointError, match=r"no adapter_model\.safetensors \(found adapter_model\.bin"):
        nbmerge.merge("ties", base, [folder])


def test_a_lone_factor_and_foreign_lora_tensors_are_refused(llama64, tmp_path):
    base, state, adapters, dense = llama64
    folder, _ = write_lora(tmp_path / "a", state, ["q_proj"])
    tensors = load_state_dict(folder / "adapter_model.safetensors")
    key = next(k for k in tensors if k.endswith("lora_B.weight"))
    save_state_dict({k: v for k, v in tensors.items() if k != key}, folder / "adapter_model.safetensors")
    with pytest.raises(CheckpointError, match="has lora_A but not its pair"):
        nbmerge.merge("ties", base, [folder])
    save_state_dict({**tensors, key.replace("lora_B", "lora_magnitude_vector"): tensors[key][:, 0]},
                    folder / "adapter_model.safetensors")
    with pytest.raises(CheckpointError, match="lora_magnitude_vector.*not a LoRA factor"):
        nbmerge.merge("ties", base, [folder])


def test_an_adapter_alone_is_not_a_checkpoint(llama64):
    with pytest.raises(CheckpointError, match="is a LoRA adapter: it is read as an expert over a base model"):
        as_source(llama64[2][0])


def test_cli_accepts_adapter_folders(llama64, tmp_path, capsys):
    from nbmerge.cli import main

    base, state, adapters, dense = llama64
    out = tmp_path / "m.safetensors"
    assert main(["merge", "--method", "ties", "--base", str(base), "--experts", *map(str, adapters),
                 "--out", str(out), "--device", "cpu"]) == 0
    same(load_state_dict(out), nbmerge.merge("ties", base, dense))


#: what PEFT saves for each: Conv1D factors, lora_embedding_A/B, M.base_layer.bias, M.modules_to_save.bias beside
#: M.original_module.bias, an embedding's base_layer.weight, rank and alpha patterns, rsLoRA
PEFT_CASES = {
    "gpt2": ("gpt2", dict(target_modules=["c_attn", "c_proj", "wte"], fan_in_fan_out=True, bias="all",
                          modules_to_save=["ln_f"])),
    "llama": ("llama", dict(target_modules=["q_proj", "v_proj", "embed_tokens", "down_proj"],
                            rank_pattern={"v_proj": 2}, alpha_pattern={"down_proj": 3}, modules_to_save=["lm_head"])),
    "llama-rslora": ("llama", dict(target_modules=["q_proj", "k_proj", "o_proj", "up_proj"], use_rslora=True)),
}


@pytest.mark.parametrize("case", sorted(PEFT_CASES))
def test_a_real_peft_adapter_equals_peft_merge_and_unload(tmp_path, case):
    """With PEFT installed: an adapter PEFT saved reads as the model PEFT's merge_and_unload gives."""
    peft = pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    arch, settings = PEFT_CASES[case]
    base = tiny_lm(tmp_path / "base", arch, dtype=torch.float64, tokenizer=False)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float64)
    adapted = peft.get_peft_model(model, peft.LoraConfig(r=4, lora_alpha=16, init_lora_weights=False, **settings))
    with torch.no_grad():  # trained biases and modules_to_save copies differ from the base
        for name, parameter in adapted.named_parameters():
            if parameter.requires_grad and ("bias" in name or "modules_to_save" in name):
                parameter.add_(0.1)
    adapted.save_pretrained(tmp_path / "adapter")
    expected = dict(adapted.merge_and_unload().state_dict())
    expert = dense_expert(tmp_path / "adapter", SafetensorsSource(base))
    same(expert, {k: expected[k] for k in expert}, atol=1e-12)
    assert sum(not torch.equal(v, load_state_dict(base)[k]) for k, v in expert.items()) >= 8


def test_peft_names_for_saved_base_values(llama64, gpt2, tmp_path):
    """Without PEFT: the names PEFT 0.21 gives biases of LoRA layers (M.base_layer.bias), modules_to_save copies
    (M.modules_to_save.bias, beside the base's M.original_module.bias) and an embedding's saved base weight."""
    base, state = gpt2
    folder, expected = write_lora(tmp_path / "a", state, ["c_attn"], fan_in_fan_out=True, bias="all",
                                  modules_to_save=["ln_f"])
    tensors = load_state_dict(folder / "adapter_model.safetensors")
    p = "base_model.model.transformer."
    tensors[p + "h.0.attn.c_attn.base_layer.bias"] = state["transformer.h.0.attn.c_attn.bias"] + 0.5
    tensors[p + "ln_f.modules_to_save.bias"] = state["transformer.ln_f.bias"] + 0.25
    tensors[p + "ln_f.original_module.bias"] = state["transformer.ln_f.bias"]
    tensors[p + "ln_f.weight"] = state["transformer.ln_f.weight"] * 2
    save_state_dict(tensors, folder / "adapter_model.safetensors")
    expert = dense_expert(folder, SafetensorsSource(base))
    c_attn = "transformer.h.0.attn.c_attn."
    torch.testing.assert_close(expert[c_attn + "bias"], tensors[p + "h.0.attn.c_attn.base_layer.bias"])
    torch.testing.assert_close(expert["transformer.ln_f.bias"], state["transformer.ln_f.bias"] + 0.25)
    torch.testing.assert_close(expert["transformer.ln_f.weight"], state["transformer.ln_f.weight"] * 2)
    torch.testing.assert_close(expert[c_attn + "weight"], expected[c_attn + "weight"])
    lbase, lstate, adapters, dense = llama64  # adapter 1 has an embedding LoRA: a saved base weight gets ΔW on top
    tensors = load_state_dict(adapters[1] / "adapter_model.safetensors")
    embed = "model.embed_tokens.weight"
    tensors["base_model.model.model.embed_tokens.base_layer.weight"] = lstate[embed]
    folder = tmp_path / "b"
    folder.mkdir()
    save_state_dict(tensors, folder / "adapter_model.safetensors")
    (folder / "adapter_config.json").write_bytes((adapters[1] / "adapter_config.json").read_bytes())
    torch.testing.assert_close(dense_expert(folder, SafetensorsSource(lbase))[embed], dense[1][embed], atol=1e-12,
                               rtol=0)


# -- the low-rank route: Gram-based methods read an adapter's factors instead of its dense ΔW --------------------

def test_low_rank_products_equal_the_dense_ones():
    generator = torch.Generator().manual_seed(0)
    left = torch.randn(12, 3, generator=generator, dtype=torch.float64)
    right = torch.randn(3, 7, generator=generator, dtype=torch.float64)
    factors, dense = LowRank(left, right), left @ right
    matrix = torch.randn(7, 5, generator=generator, dtype=torch.float64)
    torch.testing.assert_close(factors.gram(), dense.T @ dense)
    torch.testing.assert_close(factors.square_norm(), dense.square().sum())
    torch.testing.assert_close(factors.times(matrix), dense @ matrix)
    torch.testing.assert_close(factors.centred().dense(), dense - dense.mean(dim=0, keepdim=True))
    blocks = factors.row_blocks(3)
    torch.testing.assert_close(torch.cat([b.dense() for b in blocks]), dense)
    with pytest.raises(ValueError, match="do not multiply"):
        LowRank(left, right.T)


def _counting(monkeypatch):
    calls = {"gram": 0, "times": 0}
    for name in calls:
        original = getattr(LowRank, name)

        def counted(self, *args, _name=name, _original=original):
            calls[_name] += 1
            return _original(self, *args)
        monkeypatch.setattr(LowRank, name, counted)
    return calls


@pytest.mark.parametrize("method, params", [("bmm", {"gram": "task_vector"}),
                                            ("bmm", {"gram": "task_vector", "tv_norm": "frobenius"}),
                                            ("wudi", {"iters": 5}), ("wudi_closed_form", {}), ("ace", {})])
def test_gram_methods_build_adapter_grams_from_the_factors(llama64, monkeypatch, method, params):
    base, state, adapters, dense = llama64
    calls = _counting(monkeypatch)
    from_adapters = nbmerge.merge(method, base, [str(a) for a in adapters], params)
    assert calls["gram"] > 0 and calls["times"] > 0  # the route was taken ...
    same(from_adapters, nbmerge.merge(method, base, dense, params))  # ... and gives the dense experts' merge


def test_data_gram_bmm_multiplies_through_the_factors(llama64, monkeypatch):
    base, state, adapters, dense = llama64
    grams, _ = _statistics(state)
    calls = _counting(monkeypatch)
    from_adapters = nbmerge.merge("bmm", base, [str(a) for a in adapters], grams=grams)
    assert calls["times"] > 0 and calls["gram"] == 0  # data Grams: only the products τ_t·G_t use the factors
    same(from_adapters, nbmerge.merge("bmm", base, dense, grams=grams))


class _LowRankExpert(DictSource):
    """An in-memory expert θ₀ + L·R over ``base`` that offers its factors, as an adapter does."""

    def __init__(self, base, factors):
        self.base, self._factors = base, factors
        super().__init__({k: v + factors[k].dense() if k in factors else v for k, v in
                          ((k, base.get(k)) for k in base.keys())}, "low-rank expert")

    def low_rank(self, key):
        return self._factors.get(key)


def test_split_in_proj_blocks_get_row_blocks_of_the_factors(monkeypatch):
    generator = torch.Generator().manual_seed(1)
    d = 6
    state = {"blk.attn.in_proj_weight": torch.randn(3 * d, d, generator=generator, dtype=torch.float64),
             "blk.attn.out_proj.weight": torch.randn(d, d, generator=generator, dtype=torch.float64),
             "blk.attn.out_proj.bias": torch.randn(d, generator=generator, dtype=torch.float64)}
    base = DictSource(state, "base")
    experts = [_LowRankExpert(base, {k: LowRank(torch.randn(v.shape[0], 2, generator=generator, dtype=v.dtype) / 10,
                                                torch.randn(2, v.shape[1], generator=generator, dtype=v.dtype))
                                     for k, v in state.items() if v.ndim == 2}) for _ in range(3)]
    dense = [{k: e.get(k).clone() for k in e.keys()} for e in experts]
    walk = WalkOptions(qkv="split")
    calls = _counting(monkeypatch)
    merged = nbmerge.merge("ace", base, experts, walk=walk)
    assert calls["gram"] == 3 * 4  # 3 experts × (3 in_proj blocks + out_proj)
    same(merged, nbmerge.merge("ace", state, dense, walk=walk))


def test_low_rank_false_takes_the_dense_route(llama64, monkeypatch):
    base, state, adapters, dense = llama64
    calls = _counting(monkeypatch)
    merged = nbmerge.merge("ace", base, [str(a) for a in adapters], walk=WalkOptions(low_rank=False))
    assert calls == {"gram": 0, "times": 0}
    same(merged, nbmerge.merge("ace", base, dense))
