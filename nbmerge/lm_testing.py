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

from .engine.io import StateDict, load_state_dict, save_state_dict

#: the modules a Llama adapter targets in the tests, and a GPT-2 one (Conv1D layers, stored (in, out))
LLAMA_TARGETS = ("q_proj", "v_proj", "down_proj")
GPT2_TARGETS = ("c_attn", "c_proj")
#: every linear layer of a block (what ``lora_from_dense`` approximates): Llama, GPT-2, RoBERTa
GPT2_ALL = ("c_attn", "c_proj", "c_fc")
ROBERTA_ALL = ("query", "key", "value", "dense")
LLAMA_ALL = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


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


def lora_from_dense(folder: Union[str, os.PathLike], base: Mapping[str, torch.Tensor],
                    dense: Mapping[str, torch.Tensor], targets: Sequence[str], r: int = 16, alpha: float = 32.0,
                    replace: Sequence[str] = (), fan_in_fan_out: bool = False, **config) -> tuple[Path, StateDict]:
    """A LoRA adapter whose factors are the best rank-``r`` approximation (truncated SVD) of a trained dense
    expert's ΔW on ``targets``, and whose ``replace`` keys (a head, in ``modules_to_save``) take the expert's values;
    returns ``(folder, the dense expert the adapter defines)``. What an adapter fine-tuned on the same data would
    roughly hold, without PEFT or its training loop. ``fan_in_fan_out``: the weights are stored (in, out) (GPT-2)."""
    scaling = alpha / r
    tensors, defined = {}, {k: v.float() for k, v in base.items()}
    for key in _module_weights(base, targets):
        if key not in dense:  # a base weight the expert does not have (RoBERTa's pooler under a classifier)
            continue
        module = key[: -len(".weight")]
        delta = (dense[key].double() - base[key].double()) / scaling
        u, s, vh = torch.linalg.svd(delta.T if fan_in_fan_out else delta, full_matrices=False)
        root = s[:r].sqrt()
        b, a = (u[:, :r] * root).float().contiguous(), (root[:, None] * vh[:r]).float().contiguous()
        tensors[f"base_model.model.{module}.lora_A.weight"] = a
        tensors[f"base_model.model.{module}.lora_B.weight"] = b
        low_rank = (b.double() @ a.double()).float()
        defined[key] = base[key].float() + scaling * (low_rank.T if fan_in_fan_out else low_rank)
    for key in replace:
        tensors[f"base_model.model.{key}"] = dense[key].contiguous()
        defined[key] = dense[key].float()
    folder = Path(folder)
    save_state_dict(tensors, folder / "adapter_model.safetensors")
    settings = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": r, "lora_alpha": alpha,
                "target_modules": sorted(set(targets)), "lora_dropout": 0.0, "bias": "none", "use_rslora": False,
                "fan_in_fan_out": fan_in_fan_out, "use_dora": False, "modules_to_save": None,
                "base_model_name_or_path": None, **config}
    (folder / "adapter_config.json").write_text(json.dumps(settings, indent=1))
    return folder, defined


# -- tiny language-model pools (glue-... and lm-...) with fake data ------------------------------------------------

WORDS = 40  # the fake texts use words w0..w39 of ``tiny_tokenizer``


def tiny_classifier_config(arch: str, hidden: int = 32, layers: int = 2, vocab: int = 48, labels: int = 2):
    """``gpt2`` or ``roberta`` (or ``llama``) config for a small sequence classifier."""
    from transformers import RobertaConfig

    if arch == "roberta":
        config = RobertaConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                               intermediate_size=2 * hidden, max_position_embeddings=80, pad_token_id=0,
                               bos_token_id=1, eos_token_id=2, type_vocab_size=1)
    else:
        config = tiny_config(arch, hidden=hidden, layers=layers, vocab=vocab)
        config.pad_token_id = 0
    config.num_labels = labels
    return config


def _train(model: torch.nn.Module, batches, steps: int = 40, lr: float = 3e-3) -> None:
    """A few Adam steps on ``batches()`` (a callable giving the keyword arguments of a forward with labels)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        model(**batches()).loss.backward()
        optimizer.step()
    model.eval()


def write_glue_pool(root: Union[str, os.PathLike], tasks: Sequence[str], arch: str = "gpt2", adapters: bool = False,
                    seed: int = 0, scale: float = 0.05, data_root: Optional[Union[str, os.PathLike]] = None) -> Path:
    """``root/base`` (the bare backbone with its tokenizer, as ``save_pretrained`` writes it) and one fine-tuned
    sequence classifier per task in ``root/<arch>_<task>`` (θ₀ + noise, a random head; then trained for a few
    steps on the task's train split when ``data_root`` holds fake GLUE data), or, with ``adapters``, a PEFT LoRA
    adapter (SEQ_CLS, the head in ``modules_to_save``; random factors, or with ``data_root`` the trained
    classifier's rank-16 approximation)."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    from .models.lm import backbone_prefix
    from .tasks.glue import glue_task

    root = Path(root)
    torch.manual_seed(seed)
    config = tiny_classifier_config(arch)
    AutoModel.from_config(config).save_pretrained(root / "base")
    tiny_tokenizer(config.vocab_size).save_pretrained(root / "base")
    prefix = backbone_prefix(config) + "."
    base = {prefix + k: v for k, v in load_state_dict(root / "base").items()}
    targets = GPT2_TARGETS if arch == "gpt2" else ("query", "value", "q_proj", "v_proj")
    for t, task in enumerate(tasks):
        config.num_labels = len(glue_task(task).labels)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed * 100 + t + 1)
            model = AutoModelForSequenceClassification.from_config(config)
        head = {k: v for k, v in model.state_dict().items() if not k.startswith(prefix)}
        folder = root / f"{arch}_{task}"
        saved = sorted({k.split(".")[0] for k in head})
        if adapters and data_root is None:
            write_lora(folder, base, targets, seed=seed * 100 + t + 1, scale=scale, fan_in_fan_out=arch == "gpt2",
                       replace=head, task_type="SEQ_CLS", modules_to_save=saved)
            continue
        generator = torch.Generator().manual_seed(seed * 100 + t + 1)
        noise = 0.0 if adapters else scale  # an adapter keeps a low-rank part of ΔW: no full-rank noise to lose
        state = {k: v + noise * torch.randn(v.shape, generator=generator) if v.is_floating_point() else v
                 for k, v in base.items()}
        model.load_state_dict({**state, **head}, strict=False)
        if data_root is not None:
            _train(model, _glue_batches(task, Path(data_root), root / "base", generator))
        if adapters:  # the trained classifier as a rank-16 adapter on the blocks' linear layers, its head saved
            trained = model.state_dict()
            lora_from_dense(folder, base, trained, GPT2_ALL if arch == "gpt2" else ROBERTA_ALL,
                            replace=list(head), fan_in_fan_out=arch == "gpt2", task_type="SEQ_CLS",
                            modules_to_save=saved)
        else:
            model.save_pretrained(folder)
    return root


def _glue_batches(task: str, data_root: Path, base: Path, generator: torch.Generator):
    from .tasks.glue import glue_splits, load_tokenizer, tokenize

    train = glue_splits(task, data_root)["train"]
    x = torch.from_numpy(tokenize(load_tokenizer(str(base)), train.texts, 32)).long()
    y = torch.from_numpy(train.labels)

    def batch():
        index = torch.randint(len(y), (16,), generator=generator)
        return {"input_ids": x[index, 0], "attention_mask": x[index, 1], "labels": y[index]}

    return batch


def _fake_sentence(generator, label: int, length: int) -> str:
    words = generator.integers(0, WORDS, size=length)
    words[0] = label  # a learnable cue: the first word carries the label
    return " ".join(f"w{w}" for w in words)


def write_fake_glue(root: Union[str, os.PathLike], tasks: Sequence[str], n: int = 24, fmt: str = "tsv",
                    seed: int = 0) -> Path:
    """Fake GLUE data in the distribution's TSV layout (``fmt="tsv"``) or the hub's parquet layout."""
    import numpy as np

    from .tasks.glue import glue_task

    root = Path(root)
    for t, name in enumerate(tasks):
        task = glue_task(name)
        generator = np.random.default_rng([seed, t])
        for split, count in (("train", 3 * n), ("validation", n)):
            labels = generator.integers(0, len(task.labels), size=count)
            texts = [[_fake_sentence(generator, int(y), int(generator.integers(3, 9))) for _ in task.hub_text]
                     for y in labels]
            if fmt == "parquet":
                import pyarrow as pa
                import pyarrow.parquet as pq

                columns = {c: [row[i] for row in texts] for i, c in enumerate(task.hub_text)}
                stem = task.validation if split == "validation" else "train"
                (root / name).mkdir(parents=True, exist_ok=True)
                pq.write_table(pa.table({**columns, "label": labels.tolist()}),
                               root / name / f"{stem}-00000-of-00001.parquet")
                continue
            folder = root / task.folder
            folder.mkdir(parents=True, exist_ok=True)
            width = max([c for c in task.tsv_text if isinstance(c, int)] + [task.tsv_label], default=0) \
                if not task.tsv_header else 0
            lines = [] if not task.tsv_header else ["\t".join(list(task.tsv_text) + [task.tsv_label])]
            for row, y in zip(texts, labels):
                if task.tsv_header:
                    lines.append("\t".join(row + [task.labels[y] if name in ("mnli", "qnli", "rte") else str(y)]))
                else:  # CoLA: source, label, original label, sentence
                    cells = ["src"] * (width + 1)
                    cells[task.tsv_label], cells[task.tsv_text[0]] = str(y), row[0]
                    lines.append("\t".join(cells))
            (folder / ("train.tsv" if split == "train" else task.dev)).write_text("\n".join(lines) + "\n")
    return root


def write_causal_pool(root: Union[str, os.PathLike], tasks: Sequence[str], adapters: bool = False, seed: int = 0,
                      scale: float = 0.05, data_root: Optional[Union[str, os.PathLike]] = None) -> Path:
    """``root/base`` (a tiny Llama with its tokenizer) and one expert per task in ``root/<task>``: a dense
    ``save_pretrained`` folder (trained for a few steps on ``data_root/<task>.txt`` when given), or a LoRA adapter
    (random factors; with ``data_root``, the trained expert's rank-16 approximation, ``lora_from_dense``)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    root = Path(root)
    tiny_lm(root / "base", "llama", seed=seed)
    base = load_state_dict(root / "base")
    config = AutoConfig.from_pretrained(root / "base")
    for t, task in enumerate(tasks):
        if adapters and data_root is None:
            write_lora(root / task, base, LLAMA_TARGETS, seed=seed * 100 + t + 1, scale=scale)
            continue
        generator = torch.Generator().manual_seed(seed * 100 + t + 1)
        model = AutoModelForCausalLM.from_config(config)
        noise = 0.0 if adapters else scale
        model.load_state_dict({k: v + noise * torch.randn(v.shape, generator=generator) for k, v in base.items()})
        if data_root is not None:
            ids = tiny_tokenizer(config.vocab_size)(Path(data_root, f"{task}.txt").read_text())["input_ids"]
            windows = torch.tensor(ids[: len(ids) // 17 * 17]).reshape(-1, 17)

            def batch(windows=windows, generator=generator):
                chosen = windows[torch.randint(len(windows), (16,), generator=generator)]
                return {"input_ids": chosen, "labels": chosen}

            _train(model, batch)
        if adapters:  # the trained expert: a rank-16 adapter on the blocks' linear layers, the vocabulary tables saved
            saved = ["model.embed_tokens.weight", "lm_head.weight"]
            lora_from_dense(root / task, base, model.state_dict(), LLAMA_ALL, replace=saved,
                            modules_to_save=["embed_tokens", "lm_head"])
        else:
            model.save_pretrained(root / task)
    return root


def write_fake_texts(root: Union[str, os.PathLike], tasks: Sequence[str], words: int = 3000, seed: int = 0) -> Path:
    """``root/<task>.txt``: words of ``tiny_tokenizer`` with a task-specific bigram habit (learnable)."""
    import numpy as np

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for t, task in enumerate(tasks):
        generator = np.random.default_rng([seed, t])
        ids = generator.integers(0, WORDS, size=words)
        ids[1::2] = (ids[0::2][: len(ids[1::2])] + t + 1) % WORDS  # every other word follows from the one before
        (root / f"{task}.txt").write_text(" ".join(f"w{i}" for i in ids) + "\n")
    return root
