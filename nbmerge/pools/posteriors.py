"""Per-task posterior approximations and multitask fine-tuning runs for the Pareto experiments (arXiv 2412.08147).

Cached in the zoo's store beside the experts, with the same checksum journal (a file is finished only once the
journal holds its sha256, so an interrupted job resumes at the first unfinished run)::

    pareto/ivon-<hash>/<task>/run<k>.safetensors       one IVON run: mean and diagonal data precision per tensor
    pareto/sg-<hash>/<task>.safetensors                the zoo's expert with a squared-gradient data precision
    pareto/multitask-<hash>/<t1>=<α1>+<t2>=<α2>.safetensors   the encoder fine-tuned on Σ_t α_t ℓ_t

``<hash>`` names the settings (resolved against the zoo's recipe) and the training code's fingerprint
(``codehash.training_fingerprint``); scalars (prior precision, ess, the training wall time) are in each file's
safetensors metadata. Only the encoder is trained; the heads stay frozen, as the
zoo's experts are trained. Training runs on the CPU, like the zoo build, so cached files do not depend on the
device a notebook merges on.

Decisions [D] (the paper body could not be checked; our choices):
* IVON trains the offset Δ = θ − θ₀ rather than θ, so its weight decay δ is the Gaussian prior N(θ₀, 1/(λδ))
  around the base (L2-SP) that the merge derivation assumes; IVON itself decays toward zero. Posterior
  N(θ₀ + Δ̄, diag 1/(λ(h + δ))): data precision H = λh, prior precision S₀ = λδ.
* One effective sample size λ for every task. ℓ_t is then λ times task t's mean loss, the multitask objective
  Σ_t α_t ℓ_t is what the multitask runs minimise (per-task mean losses weighted by α), and λ cancels from the
  Gaussian merge. It does not cancel from the mixture's responsibilities, and it sets IVON's sampling noise:
  λ = N_t (3,000 here) gave noise that kept the tiny encoder at chance, λ = 10⁶ trains as well as AdamW.
* IVON's β₂: its default 0.99999 leaves h at ``hess_init`` after a few hundred steps; 0.99 averages the
  Hessian estimate over the last ~100 steps.
* Squared gradients ("SG"): per-example gradients of the cross-entropy at the zoo's (AdamW) expert, true labels
  (the empirical Fisher F = mean_i g_i²), H = λF with the same λ and δ as IVON.
* A multitask run draws each task's batches from the same seeded stream as the zoo's expert of that task, so at
  a vertex α = e_t (with the zoo's steps, lr and batch) it *is* that expert, and the zoo's file is reused.
"""

from __future__ import annotations

import copy
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import NbmergeError
from ..engine.io import SafetensorsSource, load_state_dict, save_state_dict
from ..models.base import Head, features
from ..models.vit import TinyViT
from ..threads import keep_up
from .train import ZooRecipe, shuffled_batches, lr_schedule

MEAN, PRECISION = "mean.", "data_precision."


@dataclass(frozen=True)
class IvonSettings:
    """IVON fine-tuning (pip ``ivon-opt`` 0.1.3); 0 in ``steps``/``batch`` means the zoo recipe's expert value."""

    steps: int = 0
    batch: int = 0
    lr: float = 0.2            # IVON's step size (SGD-like, rescaled per coordinate by (h₀ + δ)/(h + δ)); on
    #                            tiny8 it matches the AdamW experts (fashion 84.6 vs 84.2%, textures 77.8 vs 76.4%)
    ess: float = 1e6           # λ, shared by every task (see the module notes)
    hess_init: float = 0.01    # initial h: the first steps sample with std 1/sqrt(λ(h₀ + δ)) = 0.01
    beta2: float = 0.99        # Hessian EMA; IVON's 0.99999 would leave h ≈ hess_init in short runs
    weight_decay: float = 1e-4  # δ: prior precision per unit λ, around θ₀
    mc_samples: int = 1

    def resolve(self, recipe: ZooRecipe) -> "IvonSettings":
        _positive(self, ("lr", "ess", "hess_init", "mc_samples"), ("steps", "batch", "weight_decay"))
        if not 0 < self.beta2 < 1:
            raise NbmergeError(f"IVON beta2 must be in (0, 1), got {self.beta2!r}")
        return replace(self, steps=self.steps or recipe.expert_steps, batch=self.batch or recipe.expert_batch)


@dataclass(frozen=True)
class SquaredGradientSettings:
    """Diagonal empirical Fisher at the zoo's expert, from ``examples`` per-example gradients."""

    examples: int = 256
    ess: float = 1e6
    weight_decay: float = 1e-4

    def resolve(self, recipe: ZooRecipe) -> "SquaredGradientSettings":
        _positive(self, ("examples", "ess", "weight_decay"), ())
        return self


@dataclass(frozen=True)
class MultitaskSettings:
    """AdamW on Σ_t α_t ℓ_t from the base; 0 means the zoo recipe's expert value (steps, lr, per-task batch)."""

    steps: int = 0
    lr: float = 0.0
    batch: int = 0

    def resolve(self, recipe: ZooRecipe) -> "MultitaskSettings":
        _positive(self, (), ("steps", "lr", "batch"))
        return replace(self, steps=self.steps or recipe.expert_steps, lr=self.lr or recipe.expert_lr,
                       batch=self.batch or recipe.expert_batch)


def _positive(settings, strictly: Sequence[str], non_negative: Sequence[str]) -> None:
    for name in strictly:
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not math.isfinite(value):
            raise NbmergeError(f"{type(settings).__name__}.{name} must be a positive number, got {value!r}")
    for name in non_negative:
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or not math.isfinite(value):
            raise NbmergeError(f"{type(settings).__name__}.{name} must be ≥ 0, got {value!r}")


def _digest(kind: str, settings, recipe: ZooRecipe, extra: Optional[dict] = None) -> str:
    """The folder name's hash: the settings, the zoo's seed and the training code (``codehash.training_fingerprint``:
    a change to the training loops or the models trains again instead of reading runs the old code made)."""
    from ..codehash import digest, training_fingerprint

    payload = {"kind": kind, "settings": asdict(settings), "seed": recipe.seed, **(extra or {}),
               "code": training_fingerprint()}
    return digest(payload, 12)


# ---------------------------------------------------------------------------------------------------- helpers

def _store(zoo):
    from .store import Store

    # heal=False: a corrupt journal is an error naming it (discarding it here would drop the zoo's own entries)
    return Store(zoo.store_root, log=lambda *_: None, heal=False)


def _put(store, rel: str, tensors: dict[str, torch.Tensor], metadata: dict) -> Path:
    """Write atomically with metadata, then record in the journal (a file the journal lacks is unfinished)."""
    save_state_dict(tensors, store.path(rel), metadata={k: str(v) for k, v in metadata.items()})
    # Other processes (zoo builds, other notebooks) record into the same journal: merge their entries first, so
    # that rewriting the journal does not drop them (it narrows the race; the journal has no lock).
    if store.journal_path.exists():
        try:
            store.journal = {**json.loads(store.journal_path.read_text()), **store.journal}
        except ValueError:
            pass
    store._record(rel)  # noqa: SLF001 - Store.put_tensors has no metadata argument
    return store.verify(rel)


def read_metadata(path: Path) -> dict[str, str]:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as handle:
        return dict(handle.metadata() or {})


def _check_tasks(zoo, tasks: Sequence[str]) -> list[str]:
    tasks = list(tasks)
    unknown = [t for t in tasks if t not in zoo.tasks]
    if unknown or not tasks:
        raise NbmergeError(f"tasks {unknown or tasks} are not in this suite ({', '.join(zoo.tasks)})")
    if len(set(tasks)) != len(tasks):
        raise NbmergeError(f"tasks repeat: {tasks}")
    return tasks


def _base_encoder(zoo):
    from .zoo import encoder_from_state

    return encoder_from_state(load_state_dict(zoo.base_path), zoo.arch)


def _run_seed(*parts: int) -> int:
    return int(np.random.default_rng(list(parts)).integers(2 ** 62))


def task_loss(arch, encoder_or_fn, head: Head, inputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(head.logits(features(encoder_or_fn, arch.inputs(inputs))), labels)


# ------------------------------------------------------------------------------------------------------- IVON

def ivon_offsets(base: torch.nn.Module, settings: IvonSettings):
    """What an IVON run on Δ = θ − θ₀ starts from: a frozen training copy of ``base``, its parameter names, θ₀, the
    zero offsets Δ that are trained, and IVON over them (``settings`` resolved)."""
    import ivon

    encoder = copy.deepcopy(base).train()
    names = [name for name, _ in encoder.named_parameters()]
    theta0 = {name: p.detach().clone() for name, p in encoder.named_parameters()}
    for p in encoder.parameters():
        p.requires_grad_(False)
    offsets = [torch.zeros_like(theta0[name], requires_grad=True) for name in names]
    optimizer = ivon.IVON(offsets, lr=settings.lr, ess=settings.ess, hess_init=settings.hess_init,
                          beta2=settings.beta2, weight_decay=settings.weight_decay, mc_samples=settings.mc_samples)
    return encoder, names, theta0, offsets, optimizer


def train_ivon(base: torch.nn.Module, head: Head, train_x: np.ndarray, train_y: np.ndarray, settings: IvonSettings,
               warmup: int, batch_seed: Sequence[int], noise_seed: int,
               progress: Optional[Callable[[int, int, float], None]] = None, arch=TinyViT()
               ) -> tuple[dict, dict]:
    """One IVON run on Δ = θ − θ₀ (``settings`` resolved). Returns (posterior mean, data precision λh), both as
    ``visual.``-prefixed state dicts."""
    from torch.func import functional_call

    encoder, names, theta0, offsets, optimizer = ivon_offsets(base, settings)

    def model(images):
        return functional_call(encoder, {n: theta0[n] + d for n, d in zip(names, offsets)}, (images,))

    x, y = torch.from_numpy(train_x), torch.from_numpy(train_y).long()
    generator = np.random.default_rng(list(batch_seed))
    # IVON samples its weight noise from the global RNG: fork it so the run is seeded and leaves no trace.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(noise_seed)
        for step, idx in enumerate(shuffled_batches(len(x), settings.batch, settings.steps, generator)):
            for group in optimizer.param_groups:
                group["lr"] = settings.lr * lr_schedule(step, settings.steps, warmup)
            for _ in range(settings.mc_samples):
                with optimizer.sampled_params(train=True):
                    optimizer.zero_grad(set_to_none=True)
                    loss = task_loss(arch, model, head, x[idx], y[idx])
                    loss.backward()
            optimizer.step()
            keep_up()
            if progress:
                progress(step + 1, settings.steps, loss.item())
    hess = optimizer.param_groups[0]["hess"].detach()
    mean, precision, offset = {}, {}, 0
    for name, delta in zip(names, offsets):
        size = delta.numel()
        mean[arch.prefix + name] = (theta0[name] + delta.detach()).contiguous()
        precision[arch.prefix + name] = (settings.ess * hess[offset:offset + size]).reshape(delta.shape).contiguous()
        offset += size
    return mean, precision


def ivon_posteriors(zoo, tasks: Sequence[str], components: int, settings: IvonSettings = IvonSettings(),
                    seed: int = 0, quiet: bool = True, log: Callable = lambda *_: None) -> dict[str, list[Path]]:
    """``components`` IVON runs per task (MultiIVON; run k is seeded by (seed, task, k)), trained on demand and
    cached; returns the files per task. Run 0 alone is IVON-Hess's posterior."""
    from ..progress import progress_bar
    from .zoo import seed_of_task

    tasks = _check_tasks(zoo, tasks)
    if not isinstance(components, int) or isinstance(components, bool) or components < 1:
        raise NbmergeError(f"components must be a positive integer, got {components!r}")
    recipe = zoo.recipe
    settings = settings.resolve(recipe)
    # the run seed names the folder too (seed 0 adds nothing to it)
    folder = f"pareto/ivon-{_digest('ivon', settings, recipe, {'run_seed': seed} if seed else None)}"
    store, heads, base, out = _store(zoo), zoo.heads(), None, {}
    for task in tasks:
        out[task] = []
        for run in range(components):
            rel = f"{folder}/{task}/run{run}.safetensors"
            if not store.has(rel):
                base = _base_encoder(zoo) if base is None else base
                bar = progress_bar(settings.steps, f"IVON {task} run {run + 1}/{components}", quiet)
                start = time.perf_counter()
                mean, precision = train_ivon(
                    base, heads[task], zoo.arrays[task]["train_x"], zoo.arrays[task]["train_y"], settings,
                    recipe.warmup_steps, batch_seed=(seed, seed_of_task(task), 7, run),
                    noise_seed=_run_seed(seed, seed_of_task(task), 8, run), progress=lambda *a: bar.update(1),
                    arch=zoo.arch)
                bar.close()
                seconds = time.perf_counter() - start
                tensors = {**{MEAN + k: v for k, v in mean.items()}, **{PRECISION + k: v for k, v in precision.items()}}
                _put(store, rel, tensors, {"prior_precision": settings.ess * settings.weight_decay,
                                           "ess": settings.ess, "seconds": seconds, "kind": "ivon"})
                log(f"IVON {task} run {run}: {seconds:.1f} s")
            out[task].append(store.verify(rel))
    return out


# ------------------------------------------------------------------------------------------ squared gradients

def squared_gradient_precision(encoder: torch.nn.Module, head: Head, images: np.ndarray, labels: np.ndarray,
                               arch=TinyViT()) -> dict[str, torch.Tensor]:
    """mean_i g_i² over the examples, g_i the gradient of example i's cross-entropy (``visual.``-prefixed)."""
    encoder = copy.deepcopy(encoder).eval()
    total = {name: torch.zeros_like(p) for name, p in encoder.named_parameters()}
    x, y = torch.from_numpy(images), torch.from_numpy(labels).long()
    for i in range(len(x)):  # one example per backward pass: per-example gradients, no functorch fallbacks
        encoder.zero_grad(set_to_none=True)
        task_loss(arch, encoder, head, x[i:i + 1], y[i:i + 1]).backward()
        for name, p in encoder.named_parameters():
            total[name] += p.grad.square()
    return {arch.prefix + name: (value / len(x)).contiguous() for name, value in total.items()}


def squared_gradient_posteriors(zoo, tasks: Sequence[str], settings: SquaredGradientSettings = SquaredGradientSettings(),
                                seed: int = 0, log: Callable = lambda *_: None) -> dict[str, Path]:
    """Per task: the zoo's expert as the mean, λ·F (F the diagonal empirical Fisher on ``examples`` training
    examples drawn with ``seed``) as the data precision; computed on demand and cached."""
    from .zoo import encoder_from_state, seed_of_task

    tasks = _check_tasks(zoo, tasks)
    recipe = zoo.recipe
    settings = settings.resolve(recipe)
    folder = f"pareto/sg-{_digest('sg', settings, recipe, {'sample_seed': seed})}"
    store, heads, out = _store(zoo), zoo.heads(), {}
    for task in tasks:
        rel = f"{folder}/{task}.safetensors"
        if not store.has(rel):
            start = time.perf_counter()
            expert = load_state_dict(zoo.expert_path(task))
            x, y = zoo.arrays[task]["train_x"], zoo.arrays[task]["train_y"]
            order = np.random.default_rng([seed, seed_of_task(task), 9]).permutation(len(x))
            chosen = np.sort(order[:settings.examples])
            encoder = encoder_from_state(expert, zoo.arch)
            fisher = squared_gradient_precision(encoder, heads[task], x[chosen], y[chosen], arch=zoo.arch)
            tensors = {**{MEAN + k: v for k, v in expert.items()},
                       **{PRECISION + k: settings.ess * fisher[k] for k in expert}}
            seconds = time.perf_counter() - start
            _put(store, rel, tensors, {"prior_precision": settings.ess * settings.weight_decay, "ess": settings.ess,
                                       "seconds": seconds, "kind": "squared_gradients", "examples": len(chosen)})
            log(f"squared gradients {task}: {seconds:.1f} s")
        out[task] = store.verify(rel)
    return out


# ------------------------------------------------------------------------------------------ loading posteriors

def load_posterior(path: Path) -> dict:
    """One posterior file: ``mean`` and ``data_precision`` state dicts, ``prior_precision``, ``seconds``."""
    tensors = load_state_dict(path)
    meta = read_metadata(path)
    mean = {k[len(MEAN):]: v for k, v in tensors.items() if k.startswith(MEAN)}
    precision = {k[len(PRECISION):]: v for k, v in tensors.items() if k.startswith(PRECISION)}
    if set(mean) != set(precision) or "prior_precision" not in meta:
        raise NbmergeError(f"{path}: not a posterior file (needs mean.*, data_precision.* and a prior precision)")
    return {"mean": mean, "data_precision": precision, "prior_precision": float(meta["prior_precision"]),
            "seconds": float(meta.get("seconds", "nan"))}


def stack_posteriors(files: Sequence[Sequence[Path]], keys: Sequence[str]) -> dict:
    """[T, K, P] means and posterior precisions S = S₀ + H (float32, flattened in ``keys`` order) from
    ``files[t][k]``; every file must hold the same keys and prior precision, and S must be positive."""
    from ..solvers.pareto import flatten_state

    counts = {len(row) for row in files}
    if len(counts) != 1:
        raise NbmergeError(f"every task needs the same number of components, got {[len(r) for r in files]}")
    means, precisions, priors, seconds = [], [], set(), []
    for row in files:
        row_means, row_precisions = [], []
        for path in row:
            posterior = load_posterior(path)
            priors.add(posterior["prior_precision"])
            seconds.append(posterior["seconds"])
            row_means.append(flatten_state(posterior["mean"], keys).float())
            # IVON keeps h + δ > 0, not h ≥ 0: a data precision may dip below zero by at most the prior's.
            s = posterior["prior_precision"] + flatten_state(posterior["data_precision"], keys).double()
            if not (s > 0).all():
                raise NbmergeError(f"{path}: posterior precision (prior + data) is not positive in "
                                   f"{int((s <= 0).sum())} entries")
            row_precisions.append(s.float())
        means.append(torch.stack(row_means))
        precisions.append(torch.stack(row_precisions))
    if len(priors) != 1:
        raise NbmergeError(f"posteriors disagree on the prior precision ({sorted(priors)}): they cannot be merged")
    return {"means": torch.stack(means), "precisions": torch.stack(precisions), "prior_precision": priors.pop(),
            "seconds": seconds}


# -------------------------------------------------------------------------------------------------- multitask

def multitask_finetune(base: torch.nn.Module, heads: Mapping[str, Head], data: Mapping[str, tuple],
                       weights: Mapping[str, float], recipe: ZooRecipe, settings: MultitaskSettings,
                       progress: Optional[Callable[[int, int, float], None]] = None) -> torch.nn.Module:
    """AdamW on Σ_t α_t · (mean cross-entropy of a batch of task t), heads frozen. Each task's batches come from
    the stream its zoo expert used (seed [recipe.seed, task, 4]); tasks with α_t = 0 are skipped. Dropout (the text
    zoo's encoder has it) draws from torch's generator, seeded here from the zoo's seed and the active tasks (at a
    vertex, the seed its expert was trained with) and forked, so that a run does not depend on what ran before it
    in the process."""
    from .zoo import seed_of_task

    active = sorted(t for t, a in weights.items() if a > 0)
    encoder = copy.deepcopy(base).train()
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=settings.lr, weight_decay=recipe.expert_weight_decay)
    tensors = {t: (torch.from_numpy(data[t][0]), torch.from_numpy(data[t][1]).long()) for t in active}
    streams = {t: shuffled_batches(len(tensors[t][0]), settings.batch, settings.steps,
                                   np.random.default_rng([recipe.seed, seed_of_task(t), 4])) for t in active}
    seed = np.random.default_rng([recipe.seed, *sorted(seed_of_task(t) for t in active), 6]).integers(2 ** 62)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        _multitask_steps(encoder, optimizer, heads, tensors, streams, weights, recipe, settings, progress)
    return encoder.eval()


def _multitask_steps(encoder, optimizer, heads, tensors, streams, weights, recipe, settings, progress) -> None:
    active = list(streams)
    for step in range(settings.steps):
        for group in optimizer.param_groups:
            group["lr"] = settings.lr * lr_schedule(step, settings.steps, recipe.warmup_steps)
        loss = 0
        for t in active:
            idx = next(streams[t])
            loss = loss + weights[t] * task_loss(recipe.arch, encoder, heads[t], tensors[t][0][idx], tensors[t][1][idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        keep_up()
        if progress:
            progress(step + 1, settings.steps, loss.item())


def _weights_key(weights: Mapping[str, float]) -> str:
    return "+".join(f"{t}={weights[t]:.6f}" for t in sorted(weights) if weights[t] > 0)


def multitask_run(zoo, weights: Mapping[str, float], settings: MultitaskSettings = MultitaskSettings(),
                  quiet: bool = True, log: Callable = lambda *_: None) -> Path:
    """The encoder fine-tuned on Σ_t α_t ℓ_t (``weights``: task → α_t, on the simplex), trained on demand and
    cached; the zoo's own expert at a vertex when the settings are the zoo's. Training wall time in metadata."""
    from ..models.base import encoder_state_dict
    from ..solvers.pareto import check_alphas
    from ..progress import progress_bar

    tasks = _check_tasks(zoo, list(weights))
    check_alphas([weights[t] for t in tasks], len(tasks))
    weights = {t: round(float(weights[t]), 6) for t in tasks}
    recipe = zoo.recipe
    settings = settings.resolve(recipe)
    active = [t for t in tasks if weights[t] > 0]
    zoo_settings = MultitaskSettings().resolve(recipe)
    if len(active) == 1 and settings == zoo_settings:
        return zoo.expert_path(active[0])
    store = _store(zoo)
    rel = f"pareto/multitask-{_digest('multitask', settings, recipe)}/{_weights_key(weights)}.safetensors"
    stale = store.has(rel) and set(SafetensorsSource(store.path(rel)).keys()) != \
        set(SafetensorsSource(zoo.base_path).keys())
    if stale:  # text zoos' multitask runs were saved under the vision names before the prefix fix
        log(f"{rel}: saved under other tensor names than the zoo's; training it again")
    if stale or not store.has(rel):
        bar = progress_bar(settings.steps, f"multitask {_weights_key(weights)}", quiet)
        start = time.perf_counter()
        data = {t: (zoo.arrays[t]["train_x"], zoo.arrays[t]["train_y"]) for t in active}
        encoder = multitask_finetune(_base_encoder(zoo), zoo.heads(), data, weights, recipe, settings,
                                     progress=lambda *a: bar.update(1))
        bar.close()
        seconds = time.perf_counter() - start
        _put(store, rel, encoder_state_dict(encoder, zoo.arch.prefix), {"seconds": seconds, "kind": "multitask",
                                                       "weights": json.dumps(weights, sort_keys=True)})
        log(f"multitask {_weights_key(weights)}: {seconds:.1f} s")
    return store.verify(rel)
