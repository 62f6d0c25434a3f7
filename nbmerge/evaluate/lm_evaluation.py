"""Evaluating a merged causal language model saved as a Hugging Face folder (``nbmerge merge --out DIR/``).

``perplexity`` is built in: the model's perplexity on a local text file, over windows of ``max_length`` tokens
that overlap by ``max_length - stride`` (each token scored once, with up to ``max_length - stride`` tokens of
context before it), as the transformers documentation computes it. ``harness`` hands the folder to
lm-evaluation-harness (``pip install 'nbmerge[lm-eval]'``), whose tasks must be available offline.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Sequence, Union

import torch

from ..errors import NbmergeError

PathLike = Union[str, os.PathLike]


def _not_a_model_folder(folder: Path) -> str:
    """Why ``folder`` cannot be loaded, and what to do: a merge output written from a base given as a file has the
    weights and a model card but no config (the base's folder was not known)."""
    if (folder / "model.safetensors").is_file() or (folder / "model.safetensors.index.json").is_file():
        return (f"{folder} holds merged weights but no config.json: the merge's base was given as a .safetensors "
                "file, so its config was not copied. Merge again with --base <the base's folder> (the one holding "
                f"config.json and the tokenizer), or copy the base's config.json and tokenizer files into {folder}")
    return (f"{folder} is not a Hugging Face model folder (no config.json): merge with --base <a Hugging Face "
            "folder> --out DIR/ (a trailing slash) to write one")


def _load(model: PathLike, device: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(model)
    if not (folder / "config.json").is_file():
        raise NbmergeError(_not_a_model_folder(folder))
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise NbmergeError(f"no tokenizer in {folder} ({str(exc).splitlines()[0]})") from None
    if not any(folder.glob("*.safetensors")) and not (folder / "model.safetensors.index.json").is_file():
        found = sorted(p.name for p in folder.glob("*.bin"))
        raise NbmergeError(f"{folder} has no .safetensors weights" + (f" (only {', '.join(found)}: pickled weights, "
                           "which nbmerge does not load; convert them to safetensors)" if found else ""))
    lm = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).to(device).eval()
    bad = [name for name, value in lm.state_dict().items() if value.is_floating_point()
           and not bool(torch.isfinite(value).all())]
    if bad:  # a perplexity of such a model is NaN or meaningless: say which weights, exit non-zero
        raise NbmergeError(f"{folder}: {len(bad)} weight tensor(s) hold NaN or Inf (first: {bad[0]}); a merge that "
                           "overflowed? nbmerge refuses to write those, so check where this folder came from")
    return lm, tokenizer


@torch.inference_mode()
def perplexity(model: PathLike, text: PathLike, max_length: int = 512, stride: int = 256,
               device: str = "cpu") -> dict:
    """``{"perplexity", "nll", "tokens", "windows"}`` of ``model`` on the text file ``text``."""
    if not 0 < stride <= max_length:
        raise NbmergeError(f"stride must be in 1..max_length ({max_length}), got {stride}")
    path = Path(text)
    if not path.is_file():
        raise NbmergeError(f"text file {path} does not exist")
    try:
        text_value = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise NbmergeError(f"text file {path} is not UTF-8 (byte {exc.start}): convert it, e.g. with iconv") from None
    lm, tokenizer = _load(model, device)
    positions = getattr(lm.config, "max_position_embeddings", None) or getattr(lm.config, "n_positions", None)
    if positions and max_length > positions:
        raise NbmergeError(f"--max-length {max_length} is above the model's {positions} positions: give at most "
                           f"{positions}")
    ids = torch.tensor(tokenizer(text_value, add_special_tokens=False)["input_ids"])
    if len(ids) < 2:
        raise NbmergeError(f"{path}: fewer than two tokens")
    total, counted, windows, previous_end = 0.0, 0, 0, 0
    for begin in range(0, len(ids) - 1, stride):
        end = min(begin + max_length, len(ids))
        window = ids[begin:end].to(device)[None]
        logits = lm(input_ids=window).logits[0, :-1].float()
        targets = window[0, 1:]
        new = end - max(previous_end, begin + 1)  # the tokens no earlier window scored
        losses = torch.nn.functional.cross_entropy(logits, targets, reduction="none")[-new:]
        total, counted, windows, previous_end = total + float(losses.sum()), counted + new, windows + 1, end
        if end == len(ids):
            break
    nll = total / counted
    return {"perplexity": math.exp(nll), "nll": nll, "tokens": counted, "windows": windows}


def harness(model: PathLike, tasks: Sequence[str], device: str = "cpu", batch_size: int = 8,
            limit: int | None = None) -> dict:
    """lm-evaluation-harness's ``simple_evaluate`` on the folder (its results dict)."""
    try:
        import lm_eval
    except ModuleNotFoundError:
        raise NbmergeError("lm-evaluation-harness is not installed: pip install 'nbmerge[lm-eval]' (its tasks' "
                           "datasets must be in the local Hugging Face cache: nothing is downloaded)") from None
    folder = Path(model)
    if not (folder / "config.json").is_file():
        raise NbmergeError(_not_a_model_folder(folder))
    return lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={folder},dtype=float32",
                                   tasks=list(tasks), device=device, batch_size=batch_size, limit=limit)
