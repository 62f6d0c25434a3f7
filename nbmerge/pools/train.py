"""Training steps of the zoo: pretraining the base, fitting frozen heads, fine-tuning experts. All seeded."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F

from ..models.base import Head, ModelFamily, features
from ..models.vit import TinyViT, to_input
from ..threads import keep_up


@dataclass(frozen=True)
class ZooRecipe:
    """Every knob of a zoo build, defined once. Its hash names the cache folder."""

    arch: ModelFamily = field(default_factory=TinyViT)
    seed: int = 0
    # pretraining on the disjoint pool: a linear classifier over the pool's classes on top of the embedding
    pool_per_class: int = 60
    pool_classes: int = 0  # 0: every pool class; otherwise the first n (micro uses a small pool)
    pretrain_epochs: int = 18
    pretrain_batch: int = 256
    pretrain_lr: float = 2e-3
    pretrain_weight_decay: float = 0.05
    # frozen heads: prototypes from a few shots per class (few shots leave headroom: docs/zoo.md)
    head_shots: int = 5
    logit_scale: float = 30.0
    # experts: encoder fine-tuned with the head frozen
    expert_steps: int = 600
    expert_batch: int = 64
    expert_lr: float = 5e-4
    expert_weight_decay: float = 0.0
    warmup_steps: int = 20
    # cap on validation and test examples per task (0: all); the splits are shuffled, so a prefix is a sample
    eval_examples: int = 0
    # task arithmetic's coefficient grid for the zoo's recorded TA accuracy (λ* picked on validation)
    ta_grid: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))

    def to_dict(self) -> dict:
        return asdict(self)


def lr_schedule(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def shuffled_batches(n: int, batch: int, steps: int, generator: np.random.Generator):
    """Indices for ``steps`` mini-batches: shuffled epochs, drawn from a seeded NumPy generator."""
    order = np.empty(0, dtype=np.int64)
    for _ in range(steps):
        if len(order) < batch:
            order = np.concatenate([order, generator.permutation(n)])
        yield torch.from_numpy(order[:batch])
        order = order[batch:]


def pretrain(pool_x: np.ndarray, pool_y: np.ndarray, recipe: ZooRecipe,
             progress: Optional[Callable[[int, int, float], None]] = None) -> torch.nn.Module:
    """Pretrain the encoder on the pool (classes disjoint from every task)."""
    encoder = recipe.arch.build(seed=recipe.seed)
    classes = int(pool_y.max()) + 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed + 1)
        classifier = torch.nn.Linear(recipe.arch.output_dim, classes)
    params = list(encoder.parameters()) + list(classifier.parameters())
    optimizer = torch.optim.AdamW(params, lr=recipe.pretrain_lr, weight_decay=recipe.pretrain_weight_decay)
    x, y = torch.from_numpy(pool_x), torch.from_numpy(pool_y).long()
    steps = recipe.pretrain_epochs * math.ceil(len(x) / recipe.pretrain_batch)
    generator = np.random.default_rng(recipe.seed + 2)
    encoder.train()
    for step, idx in enumerate(shuffled_batches(len(x), recipe.pretrain_batch, steps, generator)):
        for group in optimizer.param_groups:
            group["lr"] = recipe.pretrain_lr * lr_schedule(step, steps, recipe.warmup_steps * 5)
        loss = F.cross_entropy(classifier(encoder(to_input(x[idx]))), y[idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        keep_up()
        if progress:
            progress(step + 1, steps, loss.item())
    encoder.eval()
    return encoder


@torch.inference_mode()
def embed(encoder: torch.nn.Module, images: np.ndarray, batch: int = 1024, arch=None) -> torch.Tensor:
    prepare = arch.inputs if arch is not None else (lambda x: to_input(torch.from_numpy(x)))
    return torch.cat([features(encoder, prepare(images[i:i + batch])) for i in range(0, len(images), batch)])


def fit_head(encoder: torch.nn.Module, train_x: np.ndarray, train_y: np.ndarray, recipe: ZooRecipe,
             task_seed: int) -> Head:
    """Cosine prototypes: the normalised mean of ``head_shots`` normalised base features per class."""
    generator = np.random.default_rng([recipe.seed, task_seed, 3])
    classes = int(train_y.max()) + 1
    chosen = np.concatenate([generator.permutation(np.flatnonzero(train_y == c))[:recipe.head_shots]
                             for c in range(classes)])
    feats, labels = embed(encoder, train_x[chosen], arch=recipe.arch), torch.from_numpy(train_y[chosen]).long()
    prototypes = torch.stack([feats[labels == c].mean(0) for c in range(classes)])
    return Head(F.normalize(prototypes, dim=-1), recipe.logit_scale)


def zero_shot_head(encoder: torch.nn.Module, descriptions, recipe: ZooRecipe) -> Head:
    """The text zoo's frozen head: normalised embeddings of the class descriptions (as CLIP's text heads)."""
    from ..models.minilm import tokenize

    tokens = tokenize(list(descriptions), recipe.arch.max_length)
    return Head(embed(encoder.eval(), tokens, arch=recipe.arch).clone(), recipe.logit_scale)


def finetune(base: torch.nn.Module, head: Head, train_x: np.ndarray, train_y: np.ndarray, recipe: ZooRecipe,
             task_seed: int, steps: Optional[int] = None, lr: Optional[float] = None,
             progress: Optional[Callable[[int, int, float], None]] = None) -> torch.nn.Module:
    """Fine-tune a copy of the encoder on one task with its head frozen (as CLIP experts are trained)."""
    steps = recipe.expert_steps if steps is None else steps
    lr = recipe.expert_lr if lr is None else lr
    encoder = copy.deepcopy(base)
    encoder.train()
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=lr, weight_decay=recipe.expert_weight_decay)
    x, y = torch.from_numpy(train_x), torch.from_numpy(train_y).long()
    generator = np.random.default_rng([recipe.seed, task_seed, 4])
    # dropout (the text zoo's BERT has it) draws from the global RNG: fork it so that an expert is seeded
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(np.random.default_rng([recipe.seed, task_seed, 6]).integers(2 ** 62)))
        _finetune_steps(encoder, optimizer, head, x, y, recipe, steps, lr, generator, progress)
    encoder.eval()
    return encoder


def _finetune_steps(encoder, optimizer, head, x, y, recipe, steps, lr, generator, progress) -> None:
    for step, idx in enumerate(shuffled_batches(len(x), recipe.expert_batch, steps, generator)):
        for group in optimizer.param_groups:
            group["lr"] = lr * lr_schedule(step, steps, recipe.warmup_steps)
        loss = F.cross_entropy(head.logits(features(encoder, recipe.arch.inputs(x[idx]))), y[idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        keep_up()
        if progress:
            progress(step + 1, steps, loss.item())
