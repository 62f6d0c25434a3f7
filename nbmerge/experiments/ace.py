"""The steps of ``notebooks/10_ace.ipynb``: ACE-Merging against the data-free baselines, its ablation, its cost.

Every method's α is chosen on the same grid by mean accuracy on the same seeded validation subset and tested once at
that α, through the shared trial cache under the canonical recipe of :func:`nbmerge.tune.alpha_tuning.method_recipe` (so
the tour and BMM's anchors reuse the same entries). The protocol and each claim's rule are stated in the notebook; the
verdicts are in :mod:`.ace_claims`, the figures in :mod:`.ace_figures`. Library code the notebook calls directly: ACE's
gate and ablation recipes (:mod:`nbmerge.evaluate.diagnostics`), task-vector norms
(:mod:`nbmerge.evaluate.interference`), merge timing (:mod:`nbmerge.engine.merging`), the bootstrap
(:mod:`nbmerge.evaluate.protocol`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..evaluate import protocol
from ..tune import alpha_tuning
from ..engine.taskaware import shown
from ..evaluate.diagnostics import FORCED_ON, GATED_OFF, LADDER, ace_params, effective
from ..methods.ace import CODE_EPS
from ..tune.study import Lab, open_lab as study_lab
from . import rules
from .rules import knob


@dataclass(frozen=True)
class AceConfig:
    """The ACE notebook's knobs; their defaults are written once, in the notebook's parameters cell (build the
    config with ``nbmerge.params.build_config`` or ``notebook_config``), their rules once, here (``rules.knob``)."""

    # the suite of the ablation, the gate and the heterogeneous setting
    suite: str = knob(rules.SUITE)
    # the suites of the benchmark (the task-count sweep needs at least two)
    suites: tuple = knob(rules.SUITES)
    device: str = knob(rules.DEVICE)
    # the trial cache's first validation subset; merges and experts are deterministic
    seed: int = knob(rules.SEED)
    # validation subsets, one α choice each (A2's intervals span them)
    seeds: tuple = knob(rules.SEEDS)
    # how many of ``seeds`` the ablation (A4, A5) runs at (budget)
    ablation_seeds: int = knob(rules.COUNT, rules.at_most_entries_of("seeds"))
    smoke: bool = knob()
    baselines: tuple = knob(rules.list_of(rules.method(), non_empty=False, distinct=True))
    # ACE's headline ε (the paper's ViT value); the code's 1e-2 is a second row
    eps: float = knob(rules.POSITIVE)
    # WUDI's reference protocol (Adam steps per matrix)
    wudi_steps: int = knob(rules.COUNT)
    # validation subset per task that chooses every α (0: the whole split)
    val_examples: int = knob(rules.COUNT_OR_ALL)
    # α grid of every model of the notebook (benchmark and ablation alike)
    scale_grid: tuple = knob(rules.POSITIVES)
    # heterogeneous experts: learning-rate and step multipliers cycled over the tasks (the gate needs a wide
    # spread of task-vector norms; steps below 1 also make them cheaper than the zoo's experts)
    hetero_lr_factors: tuple = knob(rules.POSITIVES)
    hetero_step_factors: tuple = knob(rules.POSITIVES)
    # A3: interleaved rounds, each timing ACE, TSV-M and WUDI once (median; ≥ 5 for a decision)
    timing_repeats: int = knob(rules.COUNT)
    # A5a: forcing the components on "does not help" = within ± this many points
    a5_margin: float = knob(rules.POSITIVE)
    cache: str = knob(rules.CACHE)

    def __post_init__(self):
        rules.check(self)
        rules.normalise(self, floats=("scale_grid",))


def as_dict(config: AceConfig) -> dict:
    return asdict(config)


def baseline_params(method: str, config: AceConfig) -> dict:
    return {"iters": config.wudi_steps} if method == "wudi" else {}


CODE_LABEL = "ace (ε=1e-2, code)"   # the official code's default ε: a second configuration, under its own name


def headline_runs(config: AceConfig) -> list[tuple[str, str, dict]]:
    """(label, method, params) of the benchmark: ACE at the paper's ε ("ace", the same configuration as the tour's),
    ACE at the code's ε, then every baseline."""
    runs = [("ace", "ace", ace_params(config.eps)), (CODE_LABEL, "ace", ace_params(CODE_EPS))]
    return runs + [(m, m, baseline_params(m, config)) for m in config.baselines]


def published_rows(lab: "Lab", runs: dict) -> tuple[list[dict], str]:
    """The published CLIP figures beside the benchmark's test accuracies (mean over seeds), and their source line
    ([], why: none for this pool)."""
    from ..pools.published import for_zoo

    ours = {label: run.row()["per_task"] for label, run in runs.items()}
    return for_zoo(lab.zoo, {**ours, "experts (own task)": dict(lab.expert_accuracy)})


def validation_seeds(config: AceConfig) -> tuple:
    """``config.seeds``, or only the first when validation is the whole split (every seed would draw the same)."""
    return tuple(config.seeds) if config.val_examples else tuple(config.seeds[:1])


def run_seeds(label: str, config: AceConfig) -> tuple:
    """The seeds a benchmark row runs at: every validation seed, except the code-ε row (no claim reads it; the first
    seed only, for budget)."""
    seeds = validation_seeds(config)
    return seeds[:1] if label == CODE_LABEL else seeds


# ------------------------------------------------------------------------------------------------ running

def open_lab(suite: str, config: AceConfig, log=print) -> Lab:
    """``suite`` opened by the study layer with the notebook's validation subset (its first seed)."""
    return study_lab(suite, cache=config.cache, device=config.device, val_examples=config.val_examples,
                     seed=config.seed, log=log)


def lab_for(config: AceConfig, labs: dict, log=print) -> Lab:
    """The opened ``config.suite`` (kept by :func:`benchmark` when it is one of the suites)."""
    if config.suite not in labs:
        labs[config.suite] = open_lab(config.suite, config, log)
    return labs[config.suite]


@dataclass
class Run:
    """One method tuned on validation and tested at its chosen α."""

    label: str
    method: str
    params: dict
    experts: str
    tuned: alpha_tuning.Tuned
    test: protocol.Predictions
    summary: dict
    expert: dict = field(default_factory=dict, repr=False)   # the accuracies that normalize (zoo experts, test)
    seeds: list = field(default_factory=list)     # [(seed, Tuned, test Predictions)], the first is tuned/test

    def __post_init__(self):
        if not self.seeds:
            self.seeds = [(0, self.tuned, self.test)]

    @property
    def tests(self) -> list:
        """The test predictions at each seed's chosen α."""
        return [test for _, _, test in self.seeds]

    @property
    def alphas(self) -> list:
        return [tuned.alpha for _, tuned, _ in self.seeds]

    def row(self) -> dict:
        """Mean over the seeds (the chosen α of each seed listed)."""
        summaries = [test.summary(self.expert) for test in self.tests] if len(self.seeds) > 1 else [self.summary]
        tasks = list(summaries[0]["per_task"])
        return {"method": shown(self.label, self.tuned.recipe.get("method", "")), "experts": self.experts,
                "seeds": len(self.seeds),
                "alpha": ", ".join(f"{a:g}" for a in self.alphas),
                "val accuracy": float(sum(max(r["val_accuracy"] for r in t.curve) for _, t, _ in self.seeds)
                                      / len(self.seeds)),
                "mean": float(sum(x["accuracy"] for x in summaries) / len(summaries)),
                "normalized": float(sum(x["normalized"] for x in summaries) / len(summaries)),
                "per_task": {t: float(sum(x["per_task"][t] for x in summaries) / len(summaries)) for t in tasks}}


def _recipe_key(recipe: dict) -> str:
    return json.dumps(recipe, sort_keys=True, default=str)


def run_method(lab: Lab, label: str, method: str, params: dict, config: AceConfig,
               seeds: Optional[Sequence[int]] = None) -> Run:
    """At each validation seed (``validation_seeds(config)`` unless given): α on that seed's subset over
    ``config.scale_grid``, then test at it, both through the trial cache. The merge runs at most once for all seeds
    (only on a cache miss); seeds that choose the same α share their test predictions."""
    from ..engine.merging import merge
    from ..engine.walker import WalkOptions
    from .tour import seeded_validation

    recipe = alpha_tuning.method_recipe(method, params, None, lab.experts_name)
    memo: dict = {}

    def merged_at_one():
        if "state" not in memo:
            start = time.perf_counter()
            memo["state"] = merge(method, lab.base, lab.experts, {**params, "scale": 1.0},
                                  walk=WalkOptions(device=config.device))
            lab.merge_seconds.setdefault(_recipe_key(recipe), []).append(time.perf_counter() - start)
        return memo["state"]

    done = []
    for seed in (validation_seeds(config) if seeds is None else seeds):
        with seeded_validation(lab.cache, config.val_examples, seed):
            tuned = alpha_tuning.tune_scale(lab.cache, recipe, merged_at_one, lab.base, config.scale_grid)
            tuned.merge_fn = merged_at_one
            test = alpha_tuning.test_at(lab.cache, tuned, merged_at_one, lab.base)
        done.append((seed, tuned, test))
    memo.clear()
    _, tuned, test = done[0]
    return Run(label, method, dict(params), lab.experts_name, tuned, test, test.summary(lab.expert_accuracy),
               lab.expert_accuracy, done)


def benchmark(config: AceConfig, labs: Optional[dict] = None, log=print) -> dict[str, dict[str, Run]]:
    """Per suite: ACE (paper ε and code ε) and every baseline, each tuned alike at every validation seed (the
    code-ε row at the first only). ``labs`` (suite → Lab) keeps the
    opened suites for later steps (only ``config.suite``'s is kept; the others are released)."""
    out = {}
    for suite in config.suites:
        lab = labs.get(suite) if labs is not None else None
        lab = lab or open_lab(suite, config, log)
        out[suite] = {}
        for label, method, params in headline_runs(config):
            run = out[suite][label] = run_method(lab, label, method, params, config, run_seeds(label, config))
            log(f"{suite:>7} {label:<20} α={', '.join(f'{a:g}' for a in run.alphas):<12} normalized "
                f"{run.row()['normalized']:.3f} ({len(run.seeds)} seed{'s' if len(run.seeds) > 1 else ''})")
        if labs is not None and suite == config.suite:
            labs[suite] = lab
    return out


def benchmark_rows(bench: dict[str, dict[str, Run]]) -> list[dict]:
    return [{"suite": suite, "tasks": len(run.test.tasks), **run.row()}
            for suite, runs in bench.items() for run in runs.values()]


# -------------------------------------------------------------------------------------- heterogeneous experts

def heterogeneous_lab(lab: Lab, config: AceConfig) -> Lab:
    """The same tasks fine-tuned from the same base with per-task learning-rate and step multipliers: task vectors
    of widely different norms (trained once, kept in the zoo's store)."""
    from ..engine.io import load_state_dict
    from ..pools.build import variant_experts

    paths = variant_experts(lab.zoo, lr_factors=config.hetero_lr_factors, step_factors=config.hetero_step_factors)
    # the variant folder names (lr and steps) determine the weights, with the zoo's recipe and seeds
    name = "variants:" + ",".join(Path(p).parent.name for p in paths)
    return lab.with_experts([load_state_dict(p) for p in paths], name)


def own_accuracy(lab: Lab) -> dict[str, float]:
    """Each expert of the lab on its own task (test), through the trial cache."""
    out = {}
    for task, expert in zip(lab.zoo.tasks, lab.experts):
        recipe = {"method": "expert", "task": task, "experts": lab.experts_name}
        preds = lab.cache.predictions(recipe, "test", lambda e=expert: e, tasks=[task])
        out[task] = preds.accuracy()[task]
    return out


def setting(experts_name: str) -> str:
    """How the tables name a set of experts."""
    return "zoo experts" if experts_name == "zoo" else "heterogeneous experts"


# ------------------------------------------------------------------------------------------------ ablation

def ablation_seeds(config: AceConfig) -> tuple:
    return validation_seeds(config)[:config.ablation_seeds]


def ablation(lab: Lab, config: AceConfig, gate: dict, extras: Sequence[str] = ("forced on",), log=print) -> dict:
    """The paper's ladder with the official gate, plus ``extras``: ACE with both gated components "forced on"
    and/or "gated components off" (the structural prior kept). Every variant's α is chosen on ``config.scale_grid``,
    the grid of every other model of the notebook, at the first ``config.ablation_seeds`` validation seeds.

    Variants that the gate makes identical (where it fires on no matrix, "auto" runs the "off" code) are merged
    and evaluated once, under the shortest recipe (full ACE's, shared with the benchmark); a ladder step identical
    to the previous one is marked ``same_as`` and cannot be tested."""
    gate_off = gate["fired_fraction"] == 0
    variants = [(label, switches) for label, switches, _ in LADDER]
    variants += [(label, {"forced on": FORCED_ON, "gated components off": GATED_OFF}[label]) for label in extras]
    groups: dict[tuple, list] = {}
    for label, switches in variants:
        groups.setdefault(effective(switches, gate_off), []).append((label, switches))
    runs: dict[str, Run] = {}
    for members in groups.values():
        label, switches = min(members, key=lambda m: len(ace_params(config.eps, **m[1])))
        run = run_method(lab, label, "ace", ace_params(config.eps, **switches), config, ablation_seeds(config))
        runs.update({m[0]: run for m in members})
    steps = []
    for index, (label, switches, gated) in enumerate(LADDER):
        before = LADDER[index - 1] if index else None
        same = before is not None and effective(switches, gate_off) == effective(before[1], gate_off)
        run = runs[label]
        row = run.row()
        steps.append({"step": label, **switches, "gated": bool(gated), "same_as": before[0] if same else "",
                      "alpha": row["alpha"], "mean": row["mean"], "normalized": row["normalized"]})
        log(f"{lab.experts_name[:24]:>24} {label:<26} α={row['alpha']:<6} normalized "
            f"{row['normalized']:.3f}" + (f" (= {before[0]})" if same else ""))
    return {"experts": lab.experts_name, "gate": gate, "steps": steps, "runs": runs}


# ------------------------------------------------------------------------------------------------ A3: merge time

def merge_bytes(base: dict, experts: Sequence[dict]) -> dict:
    """What every merge of these experts reads: the base and each expert's floating-point tensors (bytes), and the
    number of 2-D matrices the matrix methods (ACE, TSV-M, WUDI) treat as such."""
    import torch

    def size(state):
        return sum(t.numel() * t.element_size() for t in state.values() if torch.is_floating_point(t))

    matrices = sum(1 for t in base.values() if torch.is_floating_point(t) and t.ndim == 2)
    return {"bytes_read": size(base) + sum(size(e) for e in experts), "experts": len(experts), "matrices": matrices,
            "parameters": sum(t.numel() for t in base.values() if torch.is_floating_point(t))}


def merge_timing(lab: Lab, config: AceConfig, labels: Sequence[str] = ("ace", "tsv", "wudi"), log=print) -> dict:
    """Wall time of each merge at α = 1 (evaluation excluded), ACE against TSV-M and WUDI: ``timing_repeats``
    interleaved rounds, each merging every method once (in an order rotated from round to round), so that every
    method sees the same machine state; merges made while tuning are not counted (other states). Kept: every
    round's seconds, the medians, and what each merge reads (:func:`merge_bytes`).

    The record is stored beside the trial cache, keyed by the recipes and the environment (device, threads, CPUs,
    torch), so a warm rerun reads it instead of merging again; a new environment measures again."""
    from ..engine.merging import timing_environment
    from ..tune.study import stored

    chosen = [(label, method, params) for label, method, params in headline_runs(config) if label in labels]
    recipes = {label: alpha_tuning.method_recipe(method, params, None, lab.experts_name)
               for label, method, params in chosen}
    environment = timing_environment(config.device)
    key = {"recipes": recipes, "environment": environment, "rounds": config.timing_repeats, "design": "interleaved"}
    measured = []

    def measure() -> dict:
        measured.append(1)
        return _timed_rounds(lab, config, chosen, environment, log)

    return {**stored(lab.cache.root, "ace-merge-seconds", key, measure, lab.cache.log), "cached": not measured}


def _timed_rounds(lab: Lab, config: AceConfig, chosen: list, environment: dict, log=print) -> dict:
    import gc

    from ..engine.merging import merge
    from ..engine.walker import WalkOptions

    rounds = []
    start_all = time.perf_counter()
    for r in range(config.timing_repeats):
        order = chosen[r % len(chosen):] + chosen[:r % len(chosen)]
        row = {}
        for label, method, params in order:
            gc.collect()
            start = time.perf_counter()
            merged = merge(method, lab.base, lab.experts, {**params, "scale": 1.0},
                           walk=WalkOptions(device=config.device))
            row[label] = time.perf_counter() - start
            del merged
        rounds.append(row)
        log(f"merge time round {r + 1}/{config.timing_repeats}: " + ", ".join(f"{k} {v:.2f} s"
                                                                              for k, v in row.items()))
    import statistics

    out = {label: {"samples": [row[label] for row in rounds], "median": statistics.median(row[label]
                                                                                          for row in rounds)}
           for label, _, _ in chosen}
    record = {"seconds": out, "rounds": rounds, "environment": environment, "suite": lab.suite,
              "reads": merge_bytes(lab.base, lab.experts), "wudi_steps": config.wudi_steps,
              "total_s": time.perf_counter() - start_all,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    return record
