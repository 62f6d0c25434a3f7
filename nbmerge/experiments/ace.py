"""The steps of ``notebooks/10_ace.ipynb``: ACE-Merging against the data-free baselines, its ablation, its cost.

Every method's α is chosen on the same grid by mean accuracy on the same seeded validation subset and tested once
at that α, through the shared trial cache under the canonical recipe of :func:`nbmerge.protocol.method_recipe` (so
the tour and BMM's anchors reuse the same entries). The protocol and each claim's rule are stated in the notebook;
the verdicts are in :mod:`.ace_claims`, the figures in :mod:`.ace_figures`. Library code the notebook calls
directly: ACE's gate and ablation recipes (:mod:`nbmerge.diagnostics`), task-vector norms
(:mod:`nbmerge.interference`), merge timing (:mod:`nbmerge.merging`), the bootstrap (:mod:`nbmerge.protocol`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from .. import protocol
from ..device import resolve_device
from ..diagnostics import FORCED_ON, GATED_OFF, LADDER, ace_params, effective
from ..errors import NbmergeError
from ..methods.ace import CODE_EPS
from .common import check_config


@dataclass(frozen=True)
class AceConfig:
    """The ACE notebook's knobs; their defaults are written once, in the notebook's parameters cell (build the
    config with ``nbmerge.params.build_config`` or ``notebook_config``)."""

    suite: str                      # the suite of the ablation, the gate and the heterogeneous setting
    suites: tuple                   # the suites of the benchmark (the task-count sweep needs at least two)
    device: str
    seed: int                       # seed of the validation subset; merges and experts are deterministic
    smoke: bool
    baselines: tuple
    eps: float                      # ACE's headline ε (the paper's ViT value); the code's 1e-2 is a second row
    wudi_iters: int                 # WUDI's reference protocol (Adam steps per matrix)
    val_examples: int               # validation subset per task that chooses every α (0: the whole split)
    scale_grid: tuple               # α grid of the benchmark, the same for every method (and BMM's anchors)
    ablation_grid: tuple            # α grid of every ACE variant in the ablation (a subset: budget)
    # heterogeneous experts: learning-rate and step multipliers cycled over the tasks (the gate needs a wide
    # spread of task-vector norms; steps below 1 also make them cheaper than the zoo's experts)
    hetero_lr_factors: tuple
    hetero_step_factors: tuple
    timing_repeats: int             # A3: each merge timed up to this many times (median) ...
    timing_cap_s: float             # ... while its samples add up to less than this (WUDI is timed once)
    a5_margin: float                # A5: forcing the components on "does not help" = gains < this many points
    cache: str

    def __post_init__(self):
        check_config(self)
        for name in ("suites", "baselines", "hetero_lr_factors", "hetero_step_factors"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("scale_grid", "ablation_grid"):
            grid = tuple(float(a) for a in getattr(self, name))
            if not grid or min(grid) <= 0:
                raise NbmergeError(f"parameter {name!r} must be non-empty and positive, got {grid}")
            object.__setattr__(self, name, grid)
        object.__setattr__(self, "device", resolve_device(self.device))
        if self.timing_repeats < 1 or self.a5_margin <= 0:
            raise NbmergeError("parameters: timing_repeats must be ≥ 1 and a5_margin > 0")


def as_dict(config: AceConfig) -> dict:
    return asdict(config)


def baseline_params(method: str, config: AceConfig) -> dict:
    return {"iters": config.wudi_iters} if method == "wudi" else {}


def headline_runs(config: AceConfig) -> list[tuple[str, str, dict]]:
    """(label, method, params) of the benchmark: ACE at both ε, then every baseline."""
    runs = [("ace", "ace", ace_params(config.eps)), ("ace (ε=1e-2, code)", "ace", ace_params(CODE_EPS))]
    return runs + [(m, m, baseline_params(m, config)) for m in config.baselines]


# ------------------------------------------------------------------------------------------------ running

@dataclass
class Lab:
    """One suite, opened: its trial cache, base and experts (the zoo's, or a named variant set)."""

    zoo: object
    cache: protocol.TrialCache
    base: dict
    experts: list
    experts_name: str = "zoo"
    expert_accuracy: dict = field(default_factory=dict)     # normalizes every accuracy (the zoo's experts, test)
    merge_seconds: dict = field(default_factory=dict)       # recipe key → merge wall times measured in this run

    @property
    def suite(self) -> str:
        return self.zoo.manifest.get("suite") or self.zoo.root.name

    def with_experts(self, experts: list, name: str) -> "Lab":
        return Lab(self.zoo, self.cache, self.base, experts, name, self.expert_accuracy, self.merge_seconds)


def open_lab(suite: str, config: AceConfig, log=print) -> Lab:
    from ..io import load_state_dict
    from ..pools.zoo import open_zoo

    zoo = open_zoo(suite, config.cache)
    cache = protocol.trial_cache(zoo, config.device, config.cache, config.val_examples, config.seed, log=log)
    base = load_state_dict(zoo.base_path)
    experts = [load_state_dict(p) for p in zoo.expert_paths]
    return Lab(zoo, cache, base, experts, "zoo", dict(zoo.manifest["expert_accuracy"]["test"]))


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
    tuned: protocol.Tuned
    test: protocol.Predictions
    summary: dict
    expert: dict = field(default_factory=dict, repr=False)   # the accuracies that normalize (zoo experts, test)

    def row(self) -> dict:
        return {"method": self.label, "experts": self.experts, "alpha": self.tuned.alpha,
                "val accuracy": max(r["val_accuracy"] for r in self.tuned.curve),
                "mean": self.summary["accuracy"], "normalized": self.summary["normalized"],
                "per_task": self.summary["per_task"]}


def _recipe_key(recipe: dict) -> str:
    return json.dumps(recipe, sort_keys=True, default=str)


def run_method(lab: Lab, label: str, method: str, params: dict, config: AceConfig,
               grid: Optional[Sequence[float]] = None) -> Run:
    """α on the validation grid (``config.scale_grid`` unless given), then test at it, both through the trial
    cache. The merge runs at most once (only on a cache miss) and its wall time is kept for A3."""
    from ..merging import merge
    from ..walker import WalkOptions

    recipe = protocol.method_recipe(method, params, None, lab.experts_name)
    memo: dict = {}

    def merged_at_one():
        if "state" not in memo:
            start = time.perf_counter()
            memo["state"] = merge(method, lab.base, lab.experts, {**params, "scale": 1.0},
                                  walk=WalkOptions(device=config.device))
            lab.merge_seconds.setdefault(_recipe_key(recipe), []).append(time.perf_counter() - start)
        return memo["state"]

    tuned = protocol.tune_scale(lab.cache, recipe, merged_at_one, lab.base, grid or config.scale_grid)
    tuned.merge_fn = merged_at_one
    test = protocol.test_at(lab.cache, tuned, merged_at_one, lab.base)
    memo.clear()
    return Run(label, method, dict(params), lab.experts_name, tuned, test, test.summary(lab.expert_accuracy),
               lab.expert_accuracy)


def benchmark(config: AceConfig, labs: Optional[dict] = None, log=print) -> dict[str, dict[str, Run]]:
    """Per suite: ACE (paper ε and code ε) and every baseline, each tuned alike. ``labs`` (suite → Lab) keeps the
    opened suites for later steps (only ``config.suite``'s is kept; the others are released)."""
    out = {}
    for suite in config.suites:
        lab = labs.get(suite) if labs is not None else None
        lab = lab or open_lab(suite, config, log)
        out[suite] = {}
        for label, method, params in headline_runs(config):
            run = out[suite][label] = run_method(lab, label, method, params, config)
            log(f"{suite:>7} {label:<20} α={run.tuned.alpha:<4g} normalized {run.summary['normalized']:.3f}")
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
    from ..io import load_state_dict
    from ..pools.zoo import variant_experts

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

def ablation(lab: Lab, config: AceConfig, gate: dict, extras: Sequence[str] = ("forced on",), log=print) -> dict:
    """The paper's ladder with the official gate, plus ``extras``: ACE with both gated components "forced on"
    and/or "gated components off" (the structural prior kept). Every variant's α is chosen on
    ``config.ablation_grid`` (full ACE too, so the variants compared share one grid).

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
        run = run_method(lab, label, "ace", ace_params(config.eps, **switches), config, config.ablation_grid)
        runs.update({m[0]: run for m in members})
    steps = []
    for index, (label, switches, gated) in enumerate(LADDER):
        before = LADDER[index - 1] if index else None
        same = before is not None and effective(switches, gate_off) == effective(before[1], gate_off)
        run = runs[label]
        steps.append({"step": label, **switches, "gated": bool(gated), "same_as": before[0] if same else "",
                      "alpha": run.tuned.alpha, "mean": run.summary["accuracy"],
                      "normalized": run.summary["normalized"]})
        log(f"{lab.experts_name[:24]:>24} {label:<26} α={run.tuned.alpha:<4g} normalized "
            f"{run.summary['normalized']:.3f}" + (f" (= {before[0]})" if same else ""))
    return {"experts": lab.experts_name, "gate": gate, "steps": steps, "runs": runs}


# ------------------------------------------------------------------------------------------------ A3: merge time

def merge_timing(lab: Lab, config: AceConfig, labels: Sequence[str] = ("ace", "tsv", "wudi"), log=print) -> dict:
    """Wall time of each merge (at α = 1, evaluation excluded), ACE against TSV-M and WUDI, measured in one run
    (:func:`nbmerge.merging.time_merge`: the merges this run made while tuning are samples; each is repeated up to
    ``timing_repeats`` times while its samples add up to less than ``timing_cap_s``, and the median is kept).

    The record is stored beside the trial cache, keyed by the recipes and the environment (device, threads, CPUs,
    torch), so a warm rerun reads it instead of merging again; a new environment measures again."""
    from ..io import atomic_write_text
    from ..merging import time_merge, timing_environment

    chosen = [(label, method, params) for label, method, params in headline_runs(config) if label in labels]
    recipes = {label: protocol.method_recipe(method, params, None, lab.experts_name)
               for label, method, params in chosen}
    environment = timing_environment(config.device)
    key = protocol._digest({"recipes": recipes, "environment": environment, "repeats": config.timing_repeats,
                            "cap": config.timing_cap_s})
    path = None if lab.cache.root is None else lab.cache.root / f"ace-merge-seconds-{key}.json"
    if path is not None and path.exists():
        try:
            record = json.loads(path.read_text())
            record["cached"] = True
            return record
        except (OSError, ValueError):
            pass  # a damaged record is measured again
    out = {}
    for label, method, params in chosen:
        out[label] = time_merge(method, lab.base, lab.experts, params,
                                samples=lab.merge_seconds.get(_recipe_key(recipes[label]), []),
                                repeats=config.timing_repeats, cap_s=config.timing_cap_s, device=config.device)
        log(f"merge time {label:<6} median {out[label]['median']:.2f} s over {len(out[label]['samples'])}")
    record = {"seconds": out, "environment": environment, "suite": lab.suite,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cached": False}
    if path is not None:
        atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True))
    return record
