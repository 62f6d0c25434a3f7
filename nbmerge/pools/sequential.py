"""RegMean++'s statistics: input Grams recorded through the merged earlier blocks (Nguyen et al., arXiv 2508.03121).

RegMean records each expert's Grams on the expert itself: the input of block l comes from the expert's own blocks
0 … l−1. RegMean++ merges the encoder block by block, in order, and records the Grams of block l on expert t's
block l fed with what the *merged* blocks 0 … l−1 make of task t's inputs; block l is then merged by RegMean with
those Grams before block l+1 is recorded. Tensors outside the stack of blocks (embeddings, final norms) take the
mean, as in RegMean, so the first block's input comes from the averaged embeddings, as in FusionBench's
``RegMeanAlgorithmPlusPlus``.

Stage l runs the encoder's own forward (so every architecture's Gram recorder, its padding mask and its attention
special cases serve unchanged) with the merged state below block l, expert t's block l, and stops at the end of
block l. Summed over the stages that is about (L+1)/2 forwards per task, against one for RegMean's Grams.

Merging with the finished Grams by RegMean's rule gives exactly the block-by-block merge: block l's merge reads
only block l's Grams. ``scale`` (α) is the method's global coefficient on the finished merge, like every method's;
the Grams are those of the merge at α = 1, which is FusionBench's RegMean++ (it has no α).
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from ..errors import NbmergeError
from ..models.base import load_encoder_weights
from .zoo import Zoo, expert_grams, gram_sample, load_models


class _BlockDone(Exception):
    """Raised by the hook at the end of the recorded block: the rest of the forward is not needed."""


def encoder_blocks(encoder: torch.nn.Module) -> tuple[str, torch.nn.ModuleList]:
    """The encoder's stack of blocks: the ``ModuleList`` of two or more modules of one class that holds the most
    parameters (open_clip's ``transformer.resblocks``, BERT's ``encoder.layer``, GPT-2's ``h``, Llama's ``layers``)."""
    best: Optional[tuple[str, torch.nn.ModuleList, int]] = None
    for name, module in encoder.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) > 1 and len({type(m) for m in module}) == 1:
            size = sum(p.numel() for p in module.parameters())
            if size and (best is None or size > best[2]):
                best = (name, module, size)
    if best is None:
        raise NbmergeError(f"{type(encoder).__name__} has no stack of blocks (a ModuleList of repeated layers): "
                           "RegMean++ merges block by block")
    return best[0], best[1]


def _record(encoder: torch.nn.Module, arch, x, batch: int = 512) -> tuple[dict[str, torch.Tensor], int]:
    """The Grams of every linear the forward reaches on ``x`` (batches of ``batch``, as ``collect_grams`` runs them),
    stopping wherever a hook raises ``_BlockDone``; and the tokens counted."""
    with torch.inference_mode(), arch.gram_recorder(encoder) as recorder:
        for i in range(0, len(x), batch):
            try:
                encoder(arch.inputs(x[i:i + batch]))
            except _BlockDone:
                pass
    return recorder.grams, recorder.tokens


def grams_of_kind(zoo: Zoo, kind: str, n: int, seed: int = 0) -> list[dict]:
    """Each expert's Grams of ``kind`` (``alpha_tuning.gram_kind``) on ``n`` training examples of its task: ``"data"``,
    RegMean's (``expert_grams``); ``"sequential"``, RegMean++'s at its default shrinkage."""
    if kind == "sequential":
        return [r["grams"] for r in sequential_grams(zoo, n, seed)]
    if kind != "data":
        raise NbmergeError(f"gram kind must be 'data' or 'sequential', got {kind!r}")
    return expert_grams(zoo, n, seed)


def sequential_grams(zoo: Zoo, n: int, seed: int = 0, offdiag_scale: float = 0.95,
                     log: Optional[Callable[[str], None]] = None) -> list[dict]:
    """Per expert (the zoo's order of tasks), the RegMean++ Grams on the ``n`` training examples of its task that
    ``collect_grams`` records with ``seed`` (:func:`record_sequential`)."""
    if n <= 0:
        raise NbmergeError(f"n must be positive, got {n}")
    base, experts = load_models(zoo)
    samples = [zoo.arrays[task]["train_x"][gram_sample(zoo, task, n, seed)] for task in zoo.tasks]
    return record_sequential(zoo.arch, base, experts, samples, offdiag_scale, names=zoo.tasks, log=log)


def record_sequential(arch, base: dict, experts: list[dict], samples: list, offdiag_scale: float = 0.95, *,
                      names: Optional[list[str]] = None, log: Optional[Callable[[str], None]] = None) -> list[dict]:
    """Per expert, ``{"grams", "examples", "tokens"}``: the Grams of every linear weight inside ``arch``'s blocks,
    each block recorded on expert t's block fed by the merged earlier blocks with ``samples[t]`` (arrays
    ``arch.inputs`` takes), then merged by RegMean with ``offdiag_scale`` before the next block is recorded."""
    from ..engine.merging import merge

    if len(samples) != len(experts):
        raise NbmergeError(f"{len(samples)} samples for {len(experts)} experts: give one per expert")
    names = names or [f"expert {t + 1}" for t in range(len(experts))]
    encoder = arch.build().eval()
    name, blocks = encoder_blocks(encoder)
    stem = f"{arch.prefix}{name}."
    params = {"offdiag_scale": offdiag_scale}

    # Outside the blocks: the mean of the experts (RegMean's fallback). Inside: filled block by block.
    merged = dict(merge("regmean", base, experts, params, grams=[{} for _ in experts]))
    grams: list[dict] = [{} for _ in experts]
    tokens = [0 for _ in experts]
    for index, block in enumerate(blocks):
        prefix = f"{stem}{index}."
        keys = [k for k in base if k.startswith(prefix)]

        def done(module, args, output):
            raise _BlockDone

        handle = block.register_forward_hook(done)
        try:
            for t, expert in enumerate(experts):
                load_encoder_weights(encoder, {**merged, **{k: expert[k] for k in keys}}, arch.prefix)
                recorded, tokens[t] = _record(encoder, arch, samples[t])
                grams[t].update({k: g for k, g in recorded.items() if k.startswith(prefix)})
        finally:
            handle.remove()
        block_grams = [{k: g[k] for k in g if k.startswith(prefix)} for g in grams]
        if not any(block_grams):
            raise NbmergeError(f"block {index} ({prefix}…) recorded no Grams: the architecture's Gram recorder does "
                               "not reach its linear layers")
        merged.update(merge("regmean", {k: base[k] for k in keys}, [{k: e[k] for k in keys} for e in experts],
                            params, grams=block_grams))
        if log:
            log(f"RegMean++: block {index + 1}/{len(blocks)} recorded and merged")
    for t, g in enumerate(grams):
        bad = [k for k, v in g.items() if not bool(torch.isfinite(v).all())]
        if bad:
            raise NbmergeError(f"the RegMean++ Grams of {names[t]} are not finite at {bad[0]} (the merged blocks "
                               "overflow on its inputs)")
    return [{"grams": g, "examples": len(s), "tokens": c} for g, s, c in zip(grams, samples, tokens)]
