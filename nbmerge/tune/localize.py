"""Localize-and-Stitch's localization (He et al., TMLR 2025, arXiv 2408.13656): per task, a sparse mask of its task
vector learned on a few labeled examples, so that θ₀ + m_t ⊙ τ_t keeps the expert's accuracy.

As the official code (yifei-he/Localize-and-Stitch, ``Localizer``) does it, per task t:

* the mask's logits S start at +b where |τ_t| lies strictly above its k-th largest value over every parameter
  tensor of the encoder (k = ⌊sparsity·N⌋, at least 1 here), −b elsewhere (b = ``sigmoid_bias``, 5);
* each epoch, the model θ = θ₀ + σ(S) ⊙ τ_t is fixed, and over the shuffled k-shot examples (``batch`` at a
  time) the gradient of the cross-entropy of task t's head is accumulated as g = Σ over batches of lr·(∇_θ ⊙ τ_t)
  (the official ``train_graft`` divides by a batch count that stops at 1, so it sums), then
  S ← S − g·σ'(S) + l1·sign(S)·σ'(S) (the official update, whose ``l1_strength`` term has this sign);
* after ``epochs`` epochs the mask is m_t = round(σ(S)) (S > 0).

Defaults: the official vision script's (sparsity 1e-5, b 5, lr 1e7, l1 1, 10 epochs, 64 examples per class,
batch 128). Ours: the examples are a zoo's *validation* examples (the official code draws them from the training
split of the benchmark; in the notebooks' protocol validation is what may choose), chosen per class by a seeded
permutation, and the batches' order is drawn statelessly per (seed, task, epoch). The learned masks are a file
(:class:`nbmerge.methods.localize_stitch.Masks`) that the registered ``localize_stitch`` stitches.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import torch

from ..errors import NbmergeError
from ..methods.localize_stitch import Masks


@dataclass(frozen=True)
class LocalizeSettings:
    sparsity: float = 1e-5       # the initial mask: the top ⌊sparsity·N⌋ entries of |τ_t|
    sigmoid_bias: float = 5.0
    lr: float = 1e7
    l1: float = 1.0
    epochs: int = 10
    shots: int = 64              # labeled examples per class
    batch: int = 128
    seed: int = 0

    def __post_init__(self):
        for name in ("epochs", "shots", "batch", "seed"):
            value = getattr(self, name)
            low = 0 if name in ("epochs", "seed") else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise NbmergeError(f"localize: {name} must be an integer ≥ {low}, got {value!r}")
        for name in ("sparsity", "sigmoid_bias", "lr", "l1"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise NbmergeError(f"localize: {name} must be a finite number, got {value!r}")
        if not 0.0 < self.sparsity <= 1.0:
            raise NbmergeError(f"localize: sparsity must lie in (0, 1], got {self.sparsity!r}")


def k_shot(labels: np.ndarray, shots: int, seed: int, task: int) -> np.ndarray:
    """Indices of up to ``shots`` examples of every class, in a seeded order (sorted)."""
    order = np.random.default_rng([seed, task, 47]).permutation(len(labels))
    chosen = np.concatenate([order[labels[order] == c][:shots] for c in np.unique(labels)])
    return np.sort(chosen)


def epoch_order(n: int, seed: int, task: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([seed, task, epoch, 53]).permutation(n)


def learn_mask(arch, head, inputs: torch.Tensor, labels: torch.Tensor, base: Mapping[str, torch.Tensor],
               expert: Mapping[str, torch.Tensor], settings: LocalizeSettings, task: int = 0,
               device: str = "cpu") -> dict[str, torch.Tensor]:
    """Task ``task``'s mask (key → bool tensor) over every parameter tensor of the encoder."""
    from ..models.base import load_encoder_weights

    encoder = arch.build().to(device).eval()
    load_encoder_weights(encoder, dict(base), arch.prefix)
    for p in encoder.parameters():
        p.requires_grad_(False)
    names = [name for name, _ in encoder.named_parameters()]
    keys = [arch.prefix + name for name in names]
    theta0 = [base[k].to(device=device, dtype=torch.float32) for k in keys]
    taus = [expert[k].to(device=device, dtype=torch.float32) - t0 for k, t0 in zip(keys, theta0)]
    magnitudes = torch.cat([tau.abs().reshape(-1) for tau in taus])
    # at least one entry: the official default (1e-5) is meant for models of millions of parameters, and a
    # model of fewer than 100,000 would otherwise start from an empty mask (the official code then fails)
    k = max(1, int(settings.sparsity * magnitudes.numel()))
    threshold = torch.topk(magnitudes, k).values.min()
    del magnitudes
    logits = [torch.where(tau.abs() > threshold, settings.sigmoid_bias, -settings.sigmoid_bias) for tau in taus]
    inputs, labels = inputs.to(device), labels.to(device)
    for epoch in range(settings.epochs):
        theta = [(t0 + torch.sigmoid(s) * tau).requires_grad_(True) for t0, s, tau in zip(theta0, logits, taus)]
        params = dict(zip(names, theta))
        order = torch.from_numpy(epoch_order(len(labels), settings.seed, task, epoch)).to(device)
        total = [torch.zeros_like(t) for t in theta]
        for start in range(0, len(order), settings.batch):
            chosen = order[start:start + settings.batch]
            out = torch.func.functional_call(encoder, params, (inputs[chosen],), strict=False)
            if not getattr(encoder, "raw_features", False):
                out = torch.nn.functional.normalize(out, dim=-1)
            loss = torch.nn.functional.cross_entropy(head.logits(out), labels[chosen])
            grads = torch.autograd.grad(loss, theta)
            for acc, grad, tau in zip(total, grads, taus):
                acc.add_((grad * tau).mul_(settings.lr))   # lr·(∇ ⊙ τ), in the official order
        with torch.no_grad():
            # summed over the epoch's batches, as the official code does (it divides by a count that stops at 1)
            for s, g in zip(logits, total):
                derivative = torch.sigmoid(s) * (1 - torch.sigmoid(s))
                s -= g * derivative - settings.l1 * torch.where(s > 0, derivative, -derivative)
    return {k: (torch.sigmoid(s) > 0.5).cpu() for k, s in zip(keys, logits)}


def learn_masks(arch, heads: Mapping[str, object], labeled: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
                base: Mapping[str, torch.Tensor], experts: Sequence[Mapping[str, torch.Tensor]],
                settings: LocalizeSettings = LocalizeSettings(), *, device: str = "cpu",
                progress: Optional[Callable[[str], None]] = None) -> Masks:
    """Every task's mask, learned on ``labeled[task] = (inputs, labels)`` (its k-shot examples are chosen here)."""
    tasks = list(heads)
    if len(experts) != len(tasks):
        raise NbmergeError(f"localize: {len(tasks)} task heads but {len(experts)} experts")
    per_task = []
    for t, task in enumerate(tasks):
        if progress is not None:
            progress(task)
        inputs, labels = labeled[task]
        chosen = torch.from_numpy(k_shot(labels.cpu().numpy(), settings.shots, settings.seed, t))
        per_task.append(learn_mask(arch, heads[task], inputs[chosen.to(inputs.device)],
                                   labels[chosen.to(labels.device)], base, experts[t], settings, t, device))
    masks = {key: torch.stack([m[key] for m in per_task]) for key in per_task[0]}
    return Masks(tasks, masks, asdict(settings))


def learn_on_zoo(zoo, settings: LocalizeSettings = LocalizeSettings(), *, device: str = "cpu",
                 progress=None) -> Masks:
    """A zoo's masks, learned on k-shot examples of its validation split (test never read)."""
    from ..engine.io import load_state_dict

    base = load_state_dict(zoo.base_path)
    experts = [load_state_dict(path) for path in zoo.expert_paths]
    heads = {task: head.to(device) for task, head in zoo.heads().items()}
    labeled = {task: (zoo.arch.inputs(zoo.arrays[task]["val_x"]).contiguous(),
                      torch.from_numpy(np.asarray(zoo.arrays[task]["val_y"])).long()) for task in zoo.tasks}
    return learn_masks(zoo.arch, heads, labeled, base, experts, settings, device=device, progress=progress)


def tune_and_test(cache, base: Mapping[str, torch.Tensor], experts: Sequence[Mapping[str, torch.Tensor]],
                  settings_of: Callable[[int], LocalizeSettings], seeds: Sequence[int],
                  validation: Callable[[int], object], device: str = "cpu") -> list[tuple]:
    """Localize-and-Stitch with learned masks under the notebooks' protocol, as ``[(alpha_tuning.Tuned, test
    Predictions)]`` per seed: within ``validation(seed)``, each task's mask is learned with ``settings_of(seed)`` on
    that seed's labeled validation subset (the examples α is chosen on: one subset is one draw), the masks are
    stitched by the registered ``localize_stitch`` from their file, and α is chosen on the grid and tested once, like
    every method. Test examples never reach the training; a warm cache trains nothing."""
    import tempfile
    from pathlib import Path

    from . import alpha_tuning
    from ..engine.merging import merge
    from ..engine.walker import WalkOptions

    evaluator = cache.evaluator
    tasks = list(evaluator.task_names)

    def recipe_and_merge(seed: int) -> tuple:   # called within the seed's validation subset
        settings = settings_of(seed)
        subset = evaluator.subset_spec("val") or "whole split"
        labeled = {t: evaluator.labeled(t, "val") for t in tasks}

        def merged_at_one():
            masks = learn_masks(evaluator.arch, {t: evaluator.heads[t] for t in tasks}, labeled, base, experts,
                                settings, device=device)
            with tempfile.TemporaryDirectory(prefix="nbmerge-masks-") as folder:
                path = masks.save(Path(folder) / "masks.safetensors")
                return merge("localize_stitch", base, experts, {"masks": str(path), "scale": 1.0},
                             walk=WalkOptions(device=device))
        return (alpha_tuning.method_recipe("localize_stitch", {"masks": "learned", **asdict(settings),
                                                           "examples": f"val {subset} (labeled)"}), merged_at_one)

    return alpha_tuning.tune_at_seeds(cache, base, seeds, validation, recipe_and_merge)
