"""The ground truth (multitask fine-tuning at the multitask α) and one subset's whole run; front timing (P3)."""

from __future__ import annotations

import json
import time
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ...device import synchronize
from ...engine.io import load_state_dict
from ...pools.posteriors import ivon_offsets
from ...solvers import pareto
from ...threads import keep_up
from .config import MIXTURE, MULTITASK_IVON, ParetoConfig, family_of, front_names, label
from .fronts import (
    Subset,
    mog_batch_rows,
    RecordStore,
    simplex_vertex,
    alpha_chunks,
    choose_temperature,
    evaluate_front,
    merge_family,
)
from .quality import accuracy_rows, quality

# ------------------------------------------------------------------------------------------------ ground truth

def multitask_alphas(tasks: int, config: ParetoConfig) -> torch.Tensor:
    if tasks == 2:
        return pareto.simplex_grid(2, config.multitask_divisions_2)
    grid = pareto.simplex_grid(3, config.multitask_divisions_3)
    centroid = torch.full((1, 3), 1 / 3, dtype=torch.float64)
    if config.multitask_centroid and not _contains(grid, centroid[0]):
        grid = torch.cat([grid, centroid])
    return grid


def _contains(grid: torch.Tensor, alpha: torch.Tensor) -> bool:
    return bool(((grid - alpha).abs().amax(1) < 1e-9).any())


def _union(front: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
    rows = [front] + [a[None] for a in extra if not _contains(front, a)]
    return torch.cat(rows)


def ground_truth(sub: Subset, alphas: torch.Tensor, log: Callable = print) -> dict:
    """Multitask fine-tuning at every α (trained once, cached in the zoo's store), test and val predictions, and
    the training seconds recorded when each run was trained (NaN where the run is the zoo's own expert)."""
    from ...pools.posteriors import multitask_run, read_metadata

    preds = {"test": {}, "val": {}}
    seconds = []
    for i, alpha in enumerate(alphas):
        path = multitask_run(sub.zoo, dict(zip(sub.tasks, alpha.tolist())), sub.config.multitask(), log=log)
        vertex = simplex_vertex(alpha)
        if vertex is not None and path == sub.zoo.expert_path(sub.tasks[vertex]):
            recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": "expert", "task": sub.tasks[vertex]}
            seconds.append(float("nan"))
        else:
            recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": "multitask",
                      "file": f"{path.parent.name}/{path.name}"}
            seconds.append(float(read_metadata(path).get("seconds", "nan")))
        for split in preds:
            preds[split][i] = sub.cache.predictions(recipe, split, lambda p=path: load_state_dict(p), tasks=sub.tasks)
    return {"predictions": preds, "train_seconds": seconds}


# ---------------------------------------------------------------------------------- IVON multitask reference

def train_ivon_multitask(base: torch.nn.Module, heads: dict, data: dict, weights: dict, settings, warmup: int,
                         seed: int, arch) -> dict:
    """IVON (the posteriors' recipe and steps, ``settings`` resolved) on Σ_t α_t · (mean cross-entropy of a batch
    of task t), heads frozen; each step draws one batch per task with α_t > 0. Returns the posterior mean as an
    encoder state dict (``arch.prefix``-prefixed)."""
    from torch.func import functional_call

    from ...pools.posteriors import task_loss
    from ...pools.train import shuffled_batches, lr_schedule
    from ...pools.zoo import seed_of_task

    active = sorted(t for t, a in weights.items() if a > 0)
    encoder, names, theta0, offsets, optimizer = ivon_offsets(base, settings)

    def model(inputs):
        return functional_call(encoder, {n: theta0[n] + d for n, d in zip(names, offsets)}, (inputs,))

    tensors = {t: (torch.from_numpy(data[t][0]), torch.from_numpy(data[t][1]).long()) for t in active}
    streams = {t: shuffled_batches(len(tensors[t][0]), settings.batch, settings.steps,
                                   np.random.default_rng([seed, seed_of_task(t), 9])) for t in active}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(np.random.default_rng([seed, 10]).integers(2 ** 62)))
        for step in range(settings.steps):
            for group in optimizer.param_groups:
                group["lr"] = settings.lr * lr_schedule(step, settings.steps, warmup)
            batches = {t: next(streams[t]) for t in active}
            for _ in range(settings.mc_samples):
                with optimizer.sampled_params(train=True):
                    optimizer.zero_grad(set_to_none=True)
                    loss = sum(weights[t] * task_loss(arch, model, heads[t], tensors[t][0][batches[t]],
                                                      tensors[t][1][batches[t]]) for t in active)
                    loss.backward()
            optimizer.step()
            keep_up()
    return {arch.prefix + n: (theta0[n] + d.detach()).contiguous() for n, d in zip(names, offsets)}


def _trainer_fingerprint() -> str:
    import hashlib
    import inspect

    source = inspect.getsource(train_ivon_multitask) + inspect.getsource(ivon_offsets)
    return hashlib.sha256(source.encode()).hexdigest()[:12]


_TRAINER = _trainer_fingerprint()   # the IVON multitask trainer's source, fixed at import (part of the run's key)


def ivon_multitask_run(zoo, weights: dict, config: ParetoConfig, log: Callable = print):
    """The IVON multitask model at ``weights`` (not a vertex), trained on demand and cached in the zoo's store with
    its training seconds; the posteriors' IVON settings and steps (the experts' steps unless ``ivon_steps``)."""
    from ...pools import posteriors as post

    recipe = zoo.recipe
    settings = config.ivon().resolve(recipe)
    weights = {t: round(float(a), 6) for t, a in weights.items()}
    # the key: settings, seed, the training code's fingerprint (posteriors._digest) and this module's trainer
    folder = "pareto/ivon-multitask-" + post._digest("ivon_multitask", settings, recipe,
                                                     {"run_seed": config.seed, "trainer": _TRAINER})
    rel = f"{folder}/{post._weights_key(weights)}.safetensors"
    store = post._store(zoo)
    if not store.has(rel):
        active = [t for t in weights if weights[t] > 0]
        data = {t: (zoo.arrays[t]["train_x"], zoo.arrays[t]["train_y"]) for t in active}
        start = time.perf_counter()
        state = train_ivon_multitask(post._base_encoder(zoo), zoo.heads(), data, weights, settings,
                                     recipe.warmup_steps, config.seed, zoo.arch)
        seconds = time.perf_counter() - start
        post._put(store, rel, state, {"seconds": seconds, "kind": "ivon_multitask",
                                      "weights": json.dumps(weights, sort_keys=True)})
        log(f"IVON multitask {post._weights_key(weights)}: {seconds:.1f} s")
    return store.verify(rel)


def ivon_ground_truth(sub: Subset, alphas: torch.Tensor, log: Callable = print) -> dict:
    """The IVON multitask reference at every multitask α: at a vertex, IVON run 0 of that task (the same recipe:
    one task, the same steps); elsewhere an IVON run on Σ_t α_t ℓ_t. Test and val predictions and training seconds
    (NaN at the vertices, whose cost is in the posteriors' one-time cost)."""
    from ...pools.posteriors import read_metadata

    preds = {"test": {}, "val": {}}
    seconds = []
    for i, alpha in enumerate(alphas):
        vertex = simplex_vertex(alpha)
        if vertex is not None:
            recipe = sub.recipe("simple@0", alpha)
            row = sub.index[vertex]
            make = lambda row=row: pareto.unflatten_state(  # noqa: E731
                sub.surrogates["ivon"]["means"][row, 0].float(), sub.surrogates["like"])
            seconds.append(float("nan"))
        else:
            path = ivon_multitask_run(sub.zoo, dict(zip(sub.tasks, alpha.tolist())), sub.config, log)
            recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": MULTITASK_IVON,
                      "file": f"{path.parent.name}/{path.name}"}
            make = lambda p=path: load_state_dict(p)  # noqa: E731
            seconds.append(float(read_metadata(path).get("seconds", "nan")))
        for split in preds:
            preds[split][i] = sub.cache.predictions(recipe, split, make, tasks=sub.tasks)
    return {"predictions": preds, "train_seconds": seconds}


# ------------------------------------------------------------------------------------ P3: interleaved timings

def _multitask_stepper(zoo, weights: dict, config: ParetoConfig):
    """One AdamW step of the multitask run at ``weights`` (the runs' recipe and batches), as a closure."""
    import copy

    from ...pools import posteriors as post
    from ...pools.train import shuffled_batches
    from ...pools.zoo import seed_of_task

    recipe = zoo.recipe
    settings = config.multitask().resolve(recipe)
    active = sorted(t for t, a in weights.items() if a > 0)
    heads = zoo.heads()
    encoder = copy.deepcopy(post._base_encoder(zoo)).train()
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=settings.lr, weight_decay=recipe.expert_weight_decay)
    tensors = {t: (torch.from_numpy(zoo.arrays[t]["train_x"]), torch.from_numpy(zoo.arrays[t]["train_y"]).long())
               for t in active}
    streams = {t: shuffled_batches(len(tensors[t][0]), settings.batch, 10 ** 6,
                                   np.random.default_rng([recipe.seed, seed_of_task(t), 4])) for t in active}

    def step():
        loss = 0
        for t in active:
            idx = next(streams[t])
            loss = loss + weights[t] * post.task_loss(recipe.arch, encoder, heads[t], tensors[t][0][idx],
                                                      tensors[t][1][idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        keep_up()

    return step, settings.steps


def _flops(fn) -> float:
    """Floating-point operations of ``fn()`` as torch's FLOP counter sees them (matrix products, convolutions)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return float(counter.get_total_flops())


def time_cost(sub: Subset, config: ParetoConfig, temperature: Optional[dict], weights: Optional[dict],
              log: Callable = print) -> dict:
    """P3's measurement, on one machine state: ``config.timing_repeats`` timings of the mixture's per-α merge
    (EM at the chosen temperature, at the centroid α) interleaved with as many timings of one multitask training
    step (AdamW, the multitask run at ``weights``), after one untimed warm-up of each; with FLOP counts (the
    merge's analytic, the step's counted by torch). Recorded beside the trial cache (a rerun reports it)."""
    count = len(sub.index)
    centroid = torch.full((count,), 1 / count, dtype=torch.float64)
    key = {"cost": sub.recipe(MIXTURE, centroid, temperature), "repeats": config.timing_repeats,
           "weights": weights, "device": config.device}
    found = sub.store.get(key)
    if found is not None:
        return found
    ivon = sub.surrogates["ivon"]
    means, precisions = ivon["means"][sub.index], ivon["precisions"][sub.index]
    tau = (temperature or {}).get("tau", 1.0)
    info = {}

    def merge():
        synchronize(config.device)
        _, out = pareto.mog_merge(sub.surrogates["base"], means, precisions, centroid[None].to(means.device),
                                  iterations=config.em_iterations, responsibility_tol=config.em_tolerance,
                                  temperature=tau, batch=1, return_info=True)
        synchronize(config.device)
        info["iterations"] = int(out["row_iterations"][0])

    step, steps = _multitask_stepper(sub.zoo, weights, config) if weights else (None, 0)
    merge()
    if step:
        step()
    merge_seconds, step_seconds = [], []
    for _ in range(config.timing_repeats):
        start = time.perf_counter()
        merge()
        merge_seconds.append(time.perf_counter() - start)
        if step:
            start = time.perf_counter()
            step()
            step_seconds.append(time.perf_counter() - start)
    t, k, p = means.shape
    merge_flops = float((4 + 8 * info["iterations"]) * t * k * p)   # collapse, then E- and M-steps over T·K·P
    out = {"merge_seconds": merge_seconds, "step_seconds": step_seconds, "steps": steps,
           "em_iterations": info["iterations"], "merge_flops": merge_flops,
           "step_flops": _flops(step) if step else float("nan"), "weights": weights, "device": config.device,
           "threads": torch.get_num_threads(), "measured": time.strftime("%Y-%m-%d %H:%M:%S")}
    log(f"P3 timings: merge {np.median(merge_seconds):.2f} s per α, multitask step "
        f"{np.median(step_seconds) if step_seconds else float('nan'):.2f} s (medians of {config.timing_repeats})")
    return sub.store.put(key, out)


# --------------------------------------------------------------------------------------------------- a subset

def run_subset(zoo, index: Sequence[int], surrogates: dict, config: ParetoConfig, cache,
               log: Callable = print) -> dict:
    """Everything for one subset: the temperature, every front (test at the front α, validation at the multitask
    α), multitask ground truth, P1/P2 quality with intervals, and the front timings. ``cache``: the trial cache of
    the suite the study layer opened (``nbmerge.tune.study.open_lab``, the validation subset of ``config``)."""
    sub = Subset(zoo, cache, surrogates, config, list(index), RecordStore(cache))
    count = len(sub.index)
    front = pareto.simplex_grid(count, config.front_divisions_2 if count == 2 else config.front_divisions_3)
    truth_alphas = multitask_alphas(count, config)
    alphas = _union(front, truth_alphas)
    matched = [int(((alphas - a).abs().amax(1) < 1e-9).nonzero()[0]) for a in truth_alphas]
    both = lambda i: ("test", "val") if i in matched else ("test",)  # noqa: E731
    base_recipe = {"notebook": "pareto", "tasks": sub.tasks, "model": "base"}
    base = {s: cache.predictions(base_recipe, s, lambda: surrogates["like"], tasks=sub.tasks) for s in ("test", "val")}
    names = front_names(config)
    temperature = choose_temperature(sub, alphas, log) if MIXTURE in names else None
    fronts, em, merges = {}, {}, {}
    for name in names:
        if name == MIXTURE:
            result = evaluate_front(sub, name, alphas, both, temperature["chosen"], temperature.pop("states"), log=log)
            chosen = next(c for c in temperature["candidates"] if c["factor"] == temperature["chosen"]["factor"])
            merges[name] = chosen.pop("merge")
            for candidate in temperature["candidates"]:
                candidate.pop("merge", None)
        else:
            result = evaluate_front(sub, name, alphas, both, log=log)
            merges[name] = [result["merge_seconds"], result["merged"]]
        fronts[name] = result["predictions"]
        if result["em"][0] is not None:
            em[name] = result["em"]
    truth = ground_truth(sub, truth_alphas, log)
    ivon_truth = ivon_ground_truth(sub, truth_alphas, log) if "ivon" in surrogates else None
    result = {"tasks": sub.tasks, "alphas": alphas.tolist(), "matched": matched,
              "multitask_alphas": truth_alphas.tolist(), "val_examples": config.val_examples,
              "reference": list(base["test"].accuracy().values()),
              "fronts": {n: {"label": label(n), "accuracy": accuracy_rows(p["test"]),
                             "val_accuracy": {str(i): p["val"][i].mean_accuracy() for i in matched}}
                             for n, p in fronts.items()},
              "multitask": {"alphas": truth_alphas.tolist(), "accuracy": accuracy_rows(truth["predictions"]["test"]),
                            "train_seconds": truth["train_seconds"],
                            "eval_seconds": _eval_seconds(list(truth["predictions"]["test"].values()))},
              "temperature": temperature, "em": em, "collapsed": collapsed(em.get(MIXTURE)),
              "predictions": {"fronts": fronts, "multitask": truth["predictions"], "base": base}}
    if ivon_truth is not None:
        result[MULTITASK_IVON] = {"alphas": truth_alphas.tolist(),
                                  "accuracy": accuracy_rows(ivon_truth["predictions"]["test"]),
                                  "train_seconds": ivon_truth["train_seconds"]}
        result["predictions"][MULTITASK_IVON] = ivon_truth["predictions"]
    if result["collapsed"]:
        log(f"{'+'.join(sub.tasks)}: the mixture collapsed onto one run per task: {result['collapsed']['text']}")
    result["eval_seconds"] = _eval_seconds([p for n in fronts for p in fronts[n]["test"].values()])
    result["timing"] = time_fronts(sub, config, temperature["chosen"] if temperature else None, alphas, merges)
    # the multitask run P3 times: a trained one (not a zoo expert), mixing the most tasks
    trained = sorted((dict(zip(sub.tasks, a)) for a, s in zip(truth_alphas.tolist(), truth["train_seconds"])
                      if np.isfinite(s)), key=lambda w: -sum(x > 0 for x in w.values()))
    result["cost"] = time_cost(sub, config, temperature["chosen"], trained[0] if trained else None, log) \
        if temperature else None
    result["quality"] = quality(result, config)
    return result


def collapsed(records: Optional[Sequence[dict]], level: Optional[float] = None) -> Optional[dict]:
    """Whether the mixture is one of its components: at every α every task's largest responsibility is ≥
    ``level`` (:data:`COLLAPSED_RESPONSIBILITY`). Returns None, or the run each task picks (``runs``: task
    position → the runs it picks over α) with a sentence; ``same_run`` is the run when every task picks one and
    the same (then the mixture's front is that run's IVON-Hess front)."""
    from .config import COLLAPSED_RESPONSIBILITY

    level = COLLAPSED_RESPONSIBILITY if level is None else level
    if not records:
        return None
    r = np.array([rec["responsibilities"] for rec in records])          # [A, T, K]
    if r.shape[-1] < 2 or not (r.max(-1) >= level).all():
        return None
    picks = r.argmax(-1)                                                 # [A, T]
    runs = {t: sorted({int(x) for x in picks[:, t]}) for t in range(picks.shape[1])}
    same = int(picks.flat[0]) if (picks == picks.flat[0]).all() else None
    text = (f"every responsibility ≥ {level:g} on one run (the run picked per task: "
            + ", ".join(f"task {t}: run {'/'.join(map(str, v))}" for t, v in runs.items()) + ")"
            + (f"; the mixture's front is IVON-Hess run {same}'s" if same is not None else ""))
    return {"runs": runs, "same_run": same, "text": text, "level": level}


def _eval_seconds(predictions: Sequence) -> float:
    """Mean seconds of one test evaluation, as measured when each was computed (the cache records it)."""
    seconds = [p.seconds or p.extra.get("seconds", 0.0) for p in predictions]
    seconds = [s for s in seconds if s > 0]
    return float(np.mean(seconds)) if seconds else float("nan")


def time_fronts(sub: Subset, config: ParetoConfig, temperature: Optional[dict] = None,
                front: Optional[torch.Tensor] = None, merges: Optional[dict] = None) -> dict:
    """Wall time of merging a front of many α per family (merge only; posteriors already trained; the mixture at
    its chosen ``temperature``), measured once per posteriors and device and recorded beside the trial cache: a
    rerun reports the recorded time, as it reports the multitask runs' recorded training time. With timing
    divisions 0, the evaluated ``front``'s own merges (``merges``: name → [seconds, α merged]) are the
    measurement: no extra merging (each batch's set-up included, so the per-α time is an upper bound)."""
    count = len(sub.index)
    divisions = config.timing_divisions_2 if count == 2 else config.timing_divisions_3
    alphas = pareto.simplex_grid(count, divisions) if divisions else front
    centroid = torch.full((count,), 1 / count, dtype=torch.float64)
    out = {"alphas": len(alphas), "seconds": {}, "device": config.device,
           "source": "a timed front" if divisions else "the evaluated front's merges"}
    for name in front_names(config):
        family, run = family_of(name)
        chosen = temperature if name == MIXTURE else None
        key = {"timing": sub.recipe(name, centroid, chosen), "alphas": [[round(float(a), 6) for a in row]
                                                                        for row in alphas], "device": config.device}
        found = sub.store.get(key)
        if found is None and not divisions:
            seconds, merged = (merges or {}).get(name, [float("nan"), 0])
            # a front partly found in the cache (a vertex shared with another front) merged fewer α: per α
            found = sub.store.put(key, {"seconds": seconds / merged * len(alphas) if merged else float("nan"),
                                        "measured": time.strftime("%Y-%m-%d %H:%M:%S")})
        if found is None:
            synchronize(config.device)
            start = time.perf_counter()
            if family == MIXTURE:
                ivon = sub.surrogates["ivon"]
                batches = pareto.iter_mog_merge(
                    sub.surrogates["base"], ivon["means"][sub.index], ivon["precisions"][sub.index], alphas,
                    iterations=config.em_iterations, responsibility_tol=config.em_tolerance,
                    temperature=(chosen or {}).get("tau", 1.0), batch=mog_batch_rows(sub.surrogates))
                for _ in batches:  # each batch is dropped at once: a front of hundreds of α never sits in memory
                    synchronize(config.device)
            else:
                for chunk in alpha_chunks(alphas, sub.surrogates):
                    merge_family(sub.surrogates, family, sub.index, chunk, config, run=run or 0)
            synchronize(config.device)
            found = sub.store.put(key, {"seconds": time.perf_counter() - start,
                                        "measured": time.strftime("%Y-%m-%d %H:%M:%S")})
        out["seconds"][name] = found["seconds"]
    return out
