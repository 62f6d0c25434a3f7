"""AdaMerging (Yang et al., ICLR 2024, "AdaMerging: Adaptive Model Merging for Multi-Task Learning"): merging
coefficients learned by minimising the entropy of the merged model's predictions on unlabeled inputs.

Layer-wise (the paper's stronger variant), one coefficient λ_{t,l} per task t and parameter tensor l of the encoder:

    θ_l(λ) = θ₀_l + Σ_t λ_{t,l} · τ_{t,l}          (buffers stay at θ₀)

task-wise, one λ_t shared by every tensor. λ starts at ``init`` (0.3, the paper's prior) and takes ``steps`` Adam
steps (lr 1e-3, betas 0.9/0.999, no weight decay, as the official code) on

    L(λ) = Σ_t mean over a batch of task t's inputs of H(softmax(head_t(f(x; θ(λ)))))

with ``batch`` (16) inputs of every task per step, each task through its own head; labels are never read. The
official code clamps λ to [0, 1] where it is used (``clamp=True``); FusionBench's CLIP configuration does not.

Where nbmerge differs from the paper, and why:

* it adapts on a zoo's *validation* inputs (the paper adapts on the unlabeled test set; in the notebooks' protocol
  test data never chooses anything);
* batches are drawn statelessly, from a permutation of each task's inputs per (seed, task, epoch), so a run
  resumed from its checkpoint (λ, Adam's moments, the step) continues exactly where it stopped.

The learned coefficients are a file (:meth:`Coefficients.save`: one ``[T]`` tensor per parameter key), which the
registered ``adamerging`` method merges with (``nbmerge merge --method adamerging --param coefficients=FILE``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import torch

from ..codehash import digest
from ..errors import NbmergeError
from ..methods.adamerging import Coefficients
from ..threads import keep_up

GRANULARITIES = ("layer", "task")


@dataclass(frozen=True)
class AdaMergingSettings:
    """The training's knobs; defaults are the official code's (500 steps of Adam at lr 1e-3 from λ = 0.3, λ
    clamped to [0, 1], 16 inputs of every task per step)."""

    granularity: str = "layer"   # "layer": λ per task and parameter tensor; "task": one λ per task
    steps: int = 500
    lr: float = 1e-3
    init: float = 0.3
    clamp: bool = True
    batch: int = 16
    seed: int = 0                # the batches' order

    def __post_init__(self):
        if self.granularity not in GRANULARITIES:
            raise NbmergeError(f"adamerging: granularity must be one of {', '.join(GRANULARITIES)}, got "
                               f"{self.granularity!r}")
        for name in ("steps", "batch", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name != "batch" else 1):
                raise NbmergeError(f"adamerging: {name} must be a {'positive' if name == 'batch' else 'non-negative'}"
                                   f" integer, got {value!r}")
        for name in ("lr", "init"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise NbmergeError(f"adamerging: {name} must be a finite number, got {value!r}")
        if self.lr <= 0:
            raise NbmergeError(f"adamerging: lr must be positive, got {self.lr!r}")


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Mean Shannon entropy (nats) of the softmax of each row of ``logits``: the official code's loss."""
    return -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1).mean()


def batch_indices(n: int, batch: int, seed: int, task: int, step: int) -> np.ndarray:
    """The inputs task ``task`` trains on at ``step``: consecutive batches of a permutation of its ``n`` inputs per
    (seed, task, epoch), the last batch of an epoch shorter when ``batch`` does not divide ``n`` (a shuffled
    DataLoader's order, drawn without state)."""
    per_epoch = -(-n // batch)
    epoch, b = divmod(step, per_epoch)
    order = np.random.default_rng([seed, task, epoch, 31]).permutation(n)
    return order[b * batch:(b + 1) * batch]


class _Objective:
    """θ(λ) built from stacked task vectors and the entropy of every task's batch through the merged encoder."""

    def __init__(self, arch, heads: Sequence, base: Mapping[str, torch.Tensor],
                 experts: Sequence[Mapping[str, torch.Tensor]], device: str):
        from ..models.base import load_encoder_weights

        self.encoder = arch.build().to(device).eval()
        load_encoder_weights(self.encoder, dict(base), arch.prefix)
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        self.heads = list(heads)
        self.names = [name for name, _ in self.encoder.named_parameters()]
        self.keys = [arch.prefix + name for name in self.names]
        missing = [k for k in self.keys if any(k not in e for e in experts)]
        if missing:
            raise NbmergeError(f"adamerging: an expert has no tensor {missing[0]!r} ({len(missing)} missing)")
        self.theta0 = [base[k].to(device=device, dtype=torch.float32) for k in self.keys]
        # [T, numel] per tensor: the gradient of λ_{:,l} is one matrix-vector product with it
        self.stacks = [torch.stack([(e[k].to(device=device, dtype=torch.float32) - t0).reshape(-1) for e in experts])
                       for k, t0 in zip(self.keys, self.theta0)]
        for k, stack in zip(self.keys, self.stacks):
            if not torch.isfinite(stack).all():
                raise NbmergeError(f"adamerging: the task vectors of {k!r} contain NaN or Inf")

    def params(self, lambdas: torch.Tensor) -> dict[str, torch.Tensor]:
        """θ(λ) for ``lambdas`` of shape [T, L] (layer-wise) or [T, 1] (task-wise)."""
        out = {}
        for l, (name, t0, stack) in enumerate(zip(self.names, self.theta0, self.stacks)):
            column = lambdas[:, l if lambdas.shape[1] > 1 else 0]
            out[name] = t0 + (column @ stack).view_as(t0)
        return out

    def loss(self, lambdas: torch.Tensor, batches: Sequence[torch.Tensor]) -> torch.Tensor:
        params = self.params(lambdas)
        total = lambdas.new_zeros(())
        for head, inputs in zip(self.heads, batches):
            out = torch.func.functional_call(self.encoder, params, (inputs,), strict=False)
            if not getattr(self.encoder, "raw_features", False):
                out = torch.nn.functional.normalize(out, dim=-1)
            total = total + entropy(head.logits(out))
        return total


def _checkpoint_meta(key: dict) -> str:
    return json.dumps(key, sort_keys=True)


CHECKPOINT = "nbmerge-adamerging-checkpoint-1"


def _save_checkpoint(path: Path, key: dict, step: int, raw: torch.Tensor, optimizer, losses: list[float]) -> None:
    from ..engine.io import write_tagged

    state = optimizer.state.get(raw, {})
    tensors = {"lambdas": raw.detach().clone()}
    if state:
        tensors["exp_avg"] = state["exp_avg"].detach().clone()
        tensors["exp_avg_sq"] = state["exp_avg_sq"].detach().clone()
        tensors["adam_step"] = torch.as_tensor(state["step"], dtype=torch.float32).reshape(1).clone()
    write_tagged(path, tensors, CHECKPOINT, key=_checkpoint_meta(key), step=step, losses=losses)


def _load_checkpoint(path: Path, key: dict, raw: torch.Tensor, optimizer, steps: int, log
                     ) -> tuple[int, list[float]]:
    """Restore λ and Adam's state from ``path`` when it was written by this run's settings and inputs; (step,
    losses) to go on from, or (0, []) to start anew (said so, unless there is no checkpoint)."""
    from ..engine.io import read_tagged

    if not path.exists():
        return 0, []
    try:
        tensors, meta = read_tagged(path, CHECKPOINT, "an AdaMerging checkpoint")
        if meta.get("key") != _checkpoint_meta(key):
            log(f"adamerging: checkpoint {path} belongs to another run (other settings, inputs or models); "
                "starting anew")
            return 0, []
        step, losses = int(meta["step"]), list(meta["losses"])
        if step > steps:
            log(f"adamerging: checkpoint {path} is at step {step}, past the {steps} asked for; starting anew")
            return 0, []
        if tensors["lambdas"].shape != raw.shape or len(losses) != step:
            raise ValueError("its tensors do not match its record")
    except Exception as exc:  # noqa: BLE001 - a damaged checkpoint is never used
        log(f"adamerging: checkpoint {path} is damaged ({exc}); starting anew")
        return 0, []
    with torch.no_grad():
        raw.copy_(tensors["lambdas"].to(raw))
    if "exp_avg" in tensors:
        optimizer.state[raw] = {"step": tensors["adam_step"].reshape(()).to(torch.float32),
                                "exp_avg": tensors["exp_avg"].to(raw), "exp_avg_sq": tensors["exp_avg_sq"].to(raw)}
    log(f"adamerging: resumed from {path} at step {step}")
    return step, losses


def learn_coefficients(arch, heads: Mapping[str, object], inputs: Mapping[str, torch.Tensor],
                       base: Mapping[str, torch.Tensor], experts: Sequence[Mapping[str, torch.Tensor]],
                       settings: AdaMergingSettings = AdaMergingSettings(), *, device: str = "cpu",
                       checkpoint: Optional[str | Path] = None, checkpoint_every: int = 25,
                       key: Optional[dict] = None, progress: Optional[Callable[[int, float], None]] = None,
                       log: Callable = print) -> Coefficients:
    """Learn AdaMerging's coefficients for ``experts`` (one per task of ``heads``, in that order) over ``base``.

    ``inputs[task]``: that task's unlabeled inputs, ready for the encoder (a zoo's ``arch.inputs``). With
    ``checkpoint``, λ and Adam's state are saved there every ``checkpoint_every`` steps and at the end, and a run
    started again with the same settings, inputs and ``key`` (e.g. the zoo's fingerprint) resumes from it."""
    tasks = list(heads)
    if len(experts) != len(tasks):
        raise NbmergeError(f"adamerging: {len(tasks)} task heads but {len(experts)} experts")
    missing = [t for t in tasks if t not in inputs or len(inputs[t]) == 0]
    if missing:
        raise NbmergeError(f"adamerging: no unlabeled inputs for task {missing[0]!r}")
    objective = _Objective(arch, [heads[t] for t in tasks], base, experts, device)
    width = len(objective.keys) if settings.granularity == "layer" else 1
    raw = torch.full((len(tasks), width), float(settings.init), device=device, requires_grad=True)
    optimizer = torch.optim.Adam([raw], lr=settings.lr, betas=(0.9, 0.999), weight_decay=0.0)
    data = [inputs[t].to(device) for t in tasks]
    # what the run's trajectory depends on (not ``steps``: a longer run resumes a shorter one's checkpoint)
    run_key = {"settings": {k: v for k, v in asdict(settings).items() if k != "steps"}, "tasks": tasks,
               "keys_digest": digest(objective.keys, 16),
               "inputs": [list(x.shape) for x in data], **(key or {})}
    path = Path(checkpoint) if checkpoint else None
    start, losses = _load_checkpoint(path, run_key, raw, optimizer, settings.steps, log) if path else (0, [])

    def used(values: torch.Tensor) -> torch.Tensor:
        return values.clamp(0.0, 1.0) if settings.clamp else values

    for step in range(start, settings.steps):
        batches = [x[torch.from_numpy(batch_indices(len(x), settings.batch, settings.seed, t, step)).to(x.device)]
                   for t, x in enumerate(data)]
        loss = objective.loss(used(raw), batches)
        if not torch.isfinite(loss):
            raise NbmergeError(f"adamerging: the entropy is not finite at step {step} (λ diverged? try a smaller lr)")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        keep_up()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress(step + 1, losses[-1])
        if path is not None and ((step + 1) % checkpoint_every == 0 or step + 1 == settings.steps):
            _save_checkpoint(path, run_key, step + 1, raw, optimizer, losses)
    lambdas = used(raw.detach()).expand(len(tasks), len(objective.keys)).cpu().clone()
    return Coefficients(tasks, list(objective.keys), lambdas, losses, asdict(settings))


def validation_inputs(zoo, device: str = "cpu") -> dict[str, torch.Tensor]:
    """Every task's unlabeled validation inputs (the whole split), ready for the zoo's encoder."""
    return {task: zoo.arch.inputs(zoo.arrays[task]["val_x"]).contiguous().to(device) for task in zoo.tasks}


def learn_on_zoo(zoo, settings: AdaMergingSettings = AdaMergingSettings(), *, device: str = "cpu",
                 checkpoint: Optional[str | Path] = None, progress=None, log: Callable = print) -> Coefficients:
    """AdaMerging's coefficients for a zoo's experts, learned on its validation inputs (labels unread)."""
    from ..engine.io import load_state_dict
    from ..evaluate.trialcache import zoo_fingerprint

    base = load_state_dict(zoo.base_path)
    experts = [load_state_dict(path) for path in zoo.expert_paths]
    heads = {task: head.to(device) for task, head in zoo.heads().items()}
    return learn_coefficients(zoo.arch, heads, validation_inputs(zoo, device), base, experts, settings,
                              device=device, checkpoint=checkpoint, key={"zoo": zoo_fingerprint(zoo)},
                              progress=progress, log=log)


def tune_and_test(cache, base: Mapping[str, torch.Tensor], experts: Sequence[Mapping[str, torch.Tensor]],
                  settings_of: Callable[[int], AdaMergingSettings], seeds: Sequence[int],
                  validation: Callable[[int], object], device: str = "cpu") -> list[tuple]:
    """AdaMerging under the notebooks' protocol, as ``[(alpha_tuning.Tuned, test Predictions)]`` per seed: its
    coefficients learned with ``settings_of(seed)`` (the seed orders the batches: one training run is one draw) on the
    unlabeled inputs of the trial cache's whole validation split, then α chosen on the grid within
    ``validation(seed)`` (that seed's labeled subset) and tested once, like every method. Labels and test inputs never
    reach the training; a warm cache trains nothing."""
    from . import alpha_tuning

    evaluator = cache.evaluator
    tasks = list(evaluator.task_names)

    def recipe_and_merge(seed: int) -> tuple:
        settings = settings_of(seed)

        def merged_at_one():
            learned = learn_coefficients(evaluator.arch, {t: evaluator.heads[t] for t in tasks},
                                         {t: evaluator.unlabeled(t, "val") for t in tasks}, base, experts, settings,
                                         device=device, log=lambda *_: None)
            return learned.merged(base, experts)
        params = {**asdict(settings), "inputs": "val (whole split, unlabeled)"}
        return alpha_tuning.method_recipe("adamerging", params), merged_at_one

    return alpha_tuning.tune_at_seeds(cache, base, seeds, validation, recipe_and_merge)
