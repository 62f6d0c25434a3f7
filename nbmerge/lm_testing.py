"""Tiny language models and LoRA adapters with real layouts, for tests and examples (offline, seconds).

``tiny_lm`` saves a 2-layer random-weight Llama or GPT-2 with ``save_pretrained`` (plus a small word-level tokenizer
and a generation config), so a test sees what a Hugging Face folder holds. ``write_lora`` writes an adapter folder
in PEFT's format (``adapter_config.json`` + ``adapter_model.safetensors``) without PEFT, and returns the dense
expert the adapter defines, computed here from the factors it wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional, Union

import torch

from .io import StateDict, load_state_dict, save_state_dict

#: the modules a Llama adapter targets in the tests, and a GPT-2 one (Conv1D layers, stored (in, out))
LLAMA_TARGETS = ("q_proj", "v_proj", "down_proj")
GPT2_TARGETS = ("c_attn", "c_proj")


def tiny_config(arch: str = "llama", hidden: int = 32, layers: int = 2, vocab: int = 48):
    """A small transformers config: ``llama`` (separate q/k/v, untied head) or ``gpt2`` (Conv1D, tied head)."""
    from transformers import GPT2Config, LlamaConfig

    if arch == "llama":
        return LlamaConfig(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                           num_attention_heads=2, num_key_value_heads=2, vocab_size=vocab,
                           max_position_embeddings=64, tie_word_embeddings=False)
    if arch == "gpt2":
        return GPT2Config(n_embd=hidden, n_layer=layers, n_head=2, vocab_size=vocab, n_positions=64, bos_token_id=1,
                          eos_token_id=2)
    raise ValueError(f"arch must be 'llama' or 'gpt2', got {arch!r}")


def tiny_tokenizer(vocab: int = 48):
    """A word-level fast tokenizer over ``vocab`` made-up words (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(vocab - 3)]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def tiny_lm(folder: Union[str, os.PathLike], arch: str = "llama", seed: int = 0, dtype: torch.dtype = torch.float32,
            tokenizer: bool = True, **config) -> Path:
    """Save a random-weight causal LM (and its tokenizer) to ``folder`` the way ``save_pretrained`` does."""
    from transformers import AutoModelForCausalLM, GenerationConfig

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(tiny_config(arch, **config)).to(dtype)
    model.generation_config = GenerationConfig(max_new_tokens=4, do_sample=False)
    folder = Path(folder)
    model.save_pretrained(folder)
    if tokenizer:
        tiny_tokenizer(model.config.vocab_size).save_pretrained(folder)
    return folder


def lm_experts(base: Union[str, os.PathLike], folder: Union[str, os.PathLike], n: int, seed: int = 1,
               scale: float = 0.01) -> list[Path]:
    """``n`` dense fine-tuned variants of a saved model: θ₀ + random noise, as single safetensors files."""
    state = load_state_dict(Path(base))
    out = []
    for t in range(n):
        generator = torch.Generator().manual_seed(seed * 1000 + t)
        expert = {k: (v.double() + scale * torch.randn(v.shape, generator=generator, dtype=torch.float64)).to(v.dtype)
                  if v.is_floating_point() else v for k, v in state.items()}
        path = Path(folder) / f"expert{t}" / "model.safetensors"
        save_state_dict(expert, path)
        out.append(path.parent)
    return out


def _module_weights(base: Mapping[str, torch.Tensor], targets: Sequence[str]) -> list[str]:
    return [k for k in base if k.endswith(".weight") and base[k].dim() == 2
            and k[: -len(".weight")].rsplit(".", 1)[-1] in targets]


def write_lora(folder: Union[str, os.PathLike], base: Mapping[str, torch.Tensor], targets: Sequence[str],
               r: int = 4, alpha: float = 8.0, seed: int = 0, scale: float = 0.05, use_rslora: bool = False,
               fan_in_fan_out: bool = False, replace: Optional[Mapping[str, torch.Tensor]] = None,
               embeddings: Sequence[str] = (), dtype: Optional[torch.dtype] = None,
               **config) -> tuple[Path, StateDict]:
    """Write a PEFT LoRA adapter over ``base`` (a state dict) and return ``(folder, dense expert)``.

    ``targets``: module names (the last part of the name, e.g. ``q_proj``) whose 2-D weights get factors;
    ``fan_in_fan_out``: the weights are stored (in, out) (GPT-2's Conv1D); ``embeddings``: full names of embedding
    modules given ``lora_embedding_A/B``; ``replace``: base keys and the new values the adapter stores (trained biases,
    ``modules_to_save``); ``config``: further ``adapter_config.json`` entries. The dense expert is θ₀ + s·B·A
    computed in float64 and returned in float64 where the base is float64, else float32.
    """
    generator = torch.Generator().manual_seed(seed)
    scaling = alpha / r**0.5 if use_rslora else alpha / r
    tensors, dense = {}, {k: v for k, v in base.items()}
    keys = _module_weights(base, targets)
    for key in [*keys, *(f"{m}.weight" for m in embeddings)]:
        module = key[: -len(".weight")]
        embedding = key not in keys
        rows, cols = base[key].shape
        out_dim, in_dim = (cols, rows) if (fan_in_fan_out or embedding) else (rows, cols)
        a = (torch.randn(r, in_dim, generator=generator, dtype=torch.float64) * scale).to(dtype or base[key].dtype)
        b = (torch.randn(out_dim, r, generator=generator, dtype=torch.float64) * scale).to(dtype or base[key].dtype)
        names = ("lora_embedding_A", "lora_embedding_B") if embedding else ("lora_A.weight", "lora_B.weight")
        tensors[f"base_model.model.{module}.{names[0]}"] = a
        tensors[f"base_model.model.{module}.{names[1]}"] = b
        delta = scaling * (b.double() @ a.double())
        delta = delta.T if (fan_in_fan_out or embedding) else delta
        work = torch.float64 if base[key].dtype == torch.float64 else torch.float32
        dense[key] = base[key].to(work) + delta.to(work)
    for key, value in (replace or {}).items():
        tensors[f"base_model.model.{key}"] = value
        dense[key] = value
    folder = Path(folder)
    save_state_dict(tensors, folder / "adapter_model.safetensors")
    settings = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": r, "lora_alpha": alpha,
                "target_modules": sorted(set(targets) | {m.rsplit(".", 1)[-1] for m in embeddings}),
                "lora_dropout": 0.0, "bias": "none", "use_rslora": use_rslora, "fan_in_fan_out": fan_in_fan_out,
                "use_dora": False, "modules_to_save": None, "base_model_name_or_path": None, **config}
    (folder / "adapter_config.json").write_text(json.dumps(settings, indent=1))
    return folder, dense
