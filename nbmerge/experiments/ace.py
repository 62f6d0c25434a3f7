"""The logic behind ``notebooks/10_ace.ipynb``: ACE-Merging against the data-free baselines, its ablation, its gate.

Protocol (decided here, stated in the report):

* **Same tuning for every method.** ACE (at the paper's ViT ε = 1e-5 and at the official code's ε = 1e-2), task
  arithmetic, TIES, TSV-M, ISO-C, ISO-CTS and WUDI each get their global coefficient α chosen on the same grid by
  mean accuracy on the same seeded validation subset (:mod:`.protocol`); every other hyperparameter stays at its
  paper's default. Test data chooses nothing. Every evaluation goes through the shared trial cache under the
  canonical recipe of :func:`.protocol.method_recipe`, so the tour and BMM's anchors reuse the same entries.
* **"Beats" is a paired interval.** A beats B when the paired bootstrap 95% interval of A − B (normalized accuracy
  over the test examples) lies above 0; comparisons of models at chance or collapsed onto one another are "not
  tested" with that reason.
* **A2.** ACE (paper ε, fixed before the run) must beat *every* other data-free method in every suite; the margin
  "grows with tasks" when the margin over the validation-best other method at the largest suite minus the one at
  the smallest has a bootstrap interval above 0 (needs two suites).
* **A3.** Merge wall time of ACE, TSV-M and WUDI measured in one process (the median of a few repeats), never the
  cached evaluations; the record is kept beside the trial cache so a warm rerun does not merge again.
* **A4.** The paper's ladder (basic → + adaptive normalisation → + structural prior → + spectral refinement) with
  the official gate, each step tuned alike, step k against step k − 1 only where the component is active: where
  the gate fires on no matrix the gated step is the previous model ("not tested"). The gate fires on the
  heterogeneous experts, so every component is tested there; the zoo's ladder is reported and decides the prior.
* **A5.** "Switches on only when needed", as behaviour: on the zoo's experts (gate off) forcing the components on
  must not help (the upper end of the interval of forced − gated below a margin), and on heterogeneous experts
  (gate on) the gated ACE must beat ACE with both components off.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from .. import protocol
from ..device import resolve_device
from ..diagnostics import ace_diagnostics
from ..errors import NbmergeError
from ..methods.ace import CODE_EPS, PAPER_EPS
from .common import check_config, claim

PAPER_VIT_EPS = PAPER_EPS["vit"]
SOURCE = "ACE-Merging, arXiv 2603.02945"
# The official defaults of the gated components; a recipe names only what differs from them, so ACE with the
# paper's ε is {"eps": 1e-5} in every notebook that merges it.
ACE_DEFAULTS = {"eps": CODE_EPS, "adaptive": "auto", "prior": True, "refine": "auto"}
# The paper's ablation ladder, in its order, with the official gate (γ > 0.3) deciding where the gated
# components act: on ViT the gate never fires and the paper shows +0 for those two steps.
LADDER = (
    ("basic closed form", {"adaptive": "off", "prior": False, "refine": "off"}, None),
    ("+ adaptive normalisation", {"adaptive": "auto", "prior": False, "refine": "off"}, "gated"),
    ("+ structural prior", {"adaptive": "auto", "prior": True, "refine": "off"}, None),
    ("+ spectral refinement", {"adaptive": "auto", "prior": True, "refine": "auto"}, "gated"),
)
COMPONENTS = ("adaptive normalisation", "structural prior", "spectral refinement")
FORCED_ON = {"adaptive": "on", "prior": True, "refine": "on"}      # both gated components on every matrix
GATED_OFF = {"adaptive": "off", "prior": True, "refine": "off"}    # both gated components off (prior kept)
# A3 thresholds (the paper says "comparable" and "far below" without numbers): comparable = at most 3× TSV-M's
# merge time; far below = at most a fifth of WUDI's.
COMPARABLE_FACTOR = 3.0
FAR_BELOW_FACTOR = 5.0
NOT_IN_DEFAULT = ("the default profile runs one suite; `nbmerge report --profile paper` runs text8/14/20")


@dataclass(frozen=True)
class AceConfig:
    suite: str = "text8"            # the suite of the ablation, the gate and the heterogeneous setting
    suites: tuple = ("text8",)      # the suites of the benchmark (the task-count sweep needs at least two)
    device: str = "cpu"
    seed: int = 0                   # seed of the validation subset; merges and experts are deterministic
    smoke: bool = False
    baselines: tuple = ("task_arithmetic", "ties", "tsv", "iso_c", "iso_cts", "wudi")
    eps: float = PAPER_VIT_EPS      # ACE's headline ε (the paper's ViT value); the code's 1e-2 is a second row
    wudi_iters: int = 300           # WUDI's reference protocol (Adam steps per matrix)
    val_examples: int = 100         # validation subset per task that chooses every α (0: the whole split)
    scale_grid: tuple = protocol.SCALE_GRID   # α grid of the benchmark, the same for every method (and BMM's anchors)
    ablation_grid: tuple = (0.2, 0.5, 1.0, 2.0, 4.0)   # α grid of every ACE variant in the ablation (a subset: budget)
    # heterogeneous experts: learning-rate and step multipliers cycled over the tasks (the gate needs a wide
    # spread of task-vector norms; steps below 1 also make them cheaper than the zoo's experts)
    hetero_lr_factors: tuple = (0.1, 0.3, 1.0, 3.0)
    hetero_step_factors: tuple = (0.25, 0.5)
    timing_repeats: int = 3         # A3: each merge timed up to this many times (median) ...
    timing_cap_s: float = 20.0      # ... while its samples add up to less than this (WUDI is timed once)
    a5_margin: float = 1.0          # A5: forcing the components on "does not help" = gains < this many points
    cache: str = ""

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


# ------------------------------------------------------------------------------------------------ recipes

def ace_params(eps: float = CODE_EPS, **switches) -> dict:
    """ACE's parameters as a canonical recipe: only the values that differ from the official defaults."""
    values = {**ACE_DEFAULTS, "eps": float(eps), **switches}
    return {k: v for k, v in values.items() if v != ACE_DEFAULTS[k]}


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
    from ..walker import Walk

    recipe = protocol.method_recipe(method, params, None, lab.experts_name)
    memo: dict = {}

    def merged_at_one():
        if "state" not in memo:
            start = time.perf_counter()
            memo["state"] = merge(method, lab.base, lab.experts, {**params, "scale": 1.0},
                                  walk=Walk(device=config.device))
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


# ------------------------------------------------------------------------------------------------ the gate

def gate_summary(lab: Lab, eps: float) -> dict:
    """γ per matrix and where the official gate (γ > 0.3) fires, for the lab's experts."""
    diagnostics = ace_diagnostics(lab.base, lab.experts, eps=eps, condition=False)
    gammas = {k: d["gamma"] for k, d in diagnostics.items()}
    fired = [k for k, d in diagnostics.items() if d["flag"]]
    values = [g for g in gammas.values() if np.isfinite(g)]
    return {"gamma": gammas, "fired": fired, "fired_fraction": len(fired) / max(1, len(diagnostics)),
            "max_gamma": max(values) if values else float("nan"),
            "median_gamma": float(np.median(values)) if values else float("nan"), "matrices": len(diagnostics)}


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


def task_vector_norms(lab: Lab) -> dict[str, float]:
    import torch

    return {t: float(torch.sqrt(sum(((e[k].double() - lab.base[k].double()) ** 2).sum() for k in lab.base)))
            for t, e in zip(lab.zoo.tasks, lab.experts)}


# ------------------------------------------------------------------------------------------------ ablation

def effective(switches: Mapping, gate_off: bool) -> tuple:
    """The switches as the merge applies them: with the gate off on every matrix, "auto" is "off" (same code)."""
    return tuple((k, "off" if gate_off and v == "auto" else v) for k, v in sorted(switches.items()))


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

def _environment(device: str) -> dict:
    import torch

    return {"device": device, "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
            "machine": platform.machine(), "torch": torch.__version__}


def merge_timing(lab: Lab, config: AceConfig, labels: Sequence[str] = ("ace", "tsv", "wudi"), log=print) -> dict:
    """Wall time of each merge (at α = 1, evaluation excluded), ACE against TSV-M and WUDI, measured in one run.

    The merges this run already made while tuning are samples; each is repeated up to ``timing_repeats`` times
    while its samples add up to less than ``timing_cap_s``, and the median is kept. The record is stored beside the
    trial cache, keyed by the recipes and the environment (device, threads, CPUs, torch), so a warm rerun reads it
    instead of merging again; a new environment measures again."""
    from ..io import atomic_write_text
    from ..merging import merge
    from ..walker import Walk

    chosen = [(label, method, params) for label, method, params in headline_runs(config) if label in labels]
    recipes = {label: protocol.method_recipe(method, params, None, lab.experts_name)
               for label, method, params in chosen}
    environment = _environment(config.device)
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
        samples = list(lab.merge_seconds.get(_recipe_key(recipes[label]), []))
        while len(samples) < config.timing_repeats and sum(samples) < config.timing_cap_s:
            start = time.perf_counter()
            merge(method, lab.base, lab.experts, {**params, "scale": 1.0}, walk=Walk(device=config.device))
            samples.append(time.perf_counter() - start)
        out[label] = {"samples": samples, "median": statistics.median(samples)}
        log(f"merge time {label:<6} median {out[label]['median']:.2f} s over {len(samples)}")
    record = {"seconds": out, "environment": environment, "suite": lab.suite,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cached": False}
    if path is not None:
        atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True))
    return record


# ------------------------------------------------------------------------------------------------ intervals

def bootstrap_samples(a: protocol.Predictions, b: protocol.Predictions, expert: Mapping[str, float],
                      n_boot: int = protocol.BOOTSTRAP, seed: int = 0) -> np.ndarray:
    """The bootstrap distribution behind :func:`.protocol.paired_difference` (same statistic: normalized
    accuracy A − B, mean over tasks, in points, examples resampled within each task), as an array, so that two
    suites' margins can be compared."""
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_boot)
    for task in a.tasks:
        scale = 1.0 / expert[task] if expert.get(task, 0) > 0 else 1.0
        d = (a.correct(task).astype(np.float64) - b.correct(task).astype(np.float64)) * scale
        stats += d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
    return 100 * stats / len(a.tasks)


def _interval(samples: np.ndarray, point: float) -> dict:
    tail = (1 - protocol.LEVEL) / 2
    low, high = np.quantile(samples, [tail, 1 - tail])
    return {"diff": float(point), "low": float(low), "high": float(high)}


def _fmt(interval: Mapping) -> str:
    return f"{interval['diff']:+.2f} [{interval['low']:+.2f}, {interval['high']:+.2f}] pts"


def validation_best_other(runs: Mapping[str, Run]) -> str:
    """The non-ACE method with the best validation accuracy at its chosen α (test chooses nothing)."""
    others = [label for label in runs if not label.startswith("ace")]
    return max(others, key=lambda m: max(r["val_accuracy"] for r in runs[m].tuned.curve))


def margins(bench: Mapping[str, Mapping[str, Run]]) -> list[dict]:
    """Per suite: ACE minus the validation-best other method, with its paired interval."""
    out = []
    for suite, runs in bench.items():
        best = validation_best_other(runs)
        interval = protocol.paired_difference(runs["ace"].test, runs[best].test, runs["ace"].expert)
        out.append({"suite": suite, "tasks": len(runs["ace"].test.tasks), "best_other": best,
                    "ace": runs["ace"].summary["normalized"], "best_other_normalized": runs[best].summary["normalized"],
                    **interval.to_dict()})
    return out


# ------------------------------------------------------------------------------------------------ claims

def combine(decisions: Sequence[Optional[bool]]) -> Optional[bool]:
    """All must hold: did not hold when any did not; not tested when any could not be tested; held otherwise."""
    if any(d is False for d in decisions):
        return False
    if not decisions or any(d is None for d in decisions):
        return None
    return True


def claim_a1() -> "object":
    return claim("ACE improves GPT-2 and RoBERTa merges on GLUE over the best earlier methods",
                 f"{SOURCE}, GLUE results (GPT-2, RoBERTa-Base, RoBERTa-Large)", None,
                 "not tested: no GPT-2 or RoBERTa GLUE pool is embedded; ACE's GLUE numbers need the paper's "
                 "language-model experts, which do not install from the package registries (the embedded text zoo "
                 "is MiniLM classification heads, a different setting)",
                 id="A1", paper="GPT-2, 7 GLUE tasks: 74.1% vs TSV-M 70.2%, TA 70.0%; RoBERTa-Base 90.4% vs WUDI "
                 "85.3%; RoBERTa-Large 91.7% vs WUDI 88.8%", ours="—", suite="—")


def claim_sota(bench: Mapping[str, Mapping[str, Run]]):
    """A2 (state of the art): ACE at the paper's ε beats every other data-free method, in every suite."""
    per_suite, evidence, closest = [], [], []
    for suite, runs in bench.items():
        decisions = {label: protocol.beats(runs["ace"].test, run.test, runs["ace"].expert, names=("ACE", label))
                     for label, run in runs.items() if not label.startswith("ace")}
        per_suite.append(combine([d["held"] for d in decisions.values()]))
        nearest = min(decisions, key=lambda m: decisions[m]["interval"]["low"])
        closest.append(f"{suite}: ACE − {nearest} {_fmt(decisions[nearest]['interval'])}")
        evidence.append(f"{suite}: " + "; ".join(f"− {m} {_fmt(d['interval'])}" + (f" (not tested: {d['why']})"
                                                                                  if d["why"] else "")
                                                 for m, d in decisions.items()))
    return claim("ACE is state of the art among data-free methods: it beats every other one in every suite",
                 f"{SOURCE}, ViT-B/32, B/16, L/14 results at 8/14/20 tasks", combine(per_suite),
                 "ACE (ε = 1e-5, α tuned) against each baseline (α tuned alike), paired 95% intervals of normalized "
                 "accuracy; " + " | ".join(evidence), id="A2",
                 paper="ViT-B/16 8/14/20 tasks: ACE 90.6/86.1/82.1% vs TSV-M 89.0/84.6/80.6% absolute (ISO-CTS, "
                       "not in that table, reports 91.1/86.4/82.4)",
                 ours="closest competitor " + "; ".join(closest), suite=", ".join(bench))


def claim_growth(bench: Mapping[str, Mapping[str, Run]]):
    """A2 (growth): the margin over the validation-best other method is larger at the largest suite than at the
    smallest, by a bootstrap interval above 0 (the two suites' test sets are resampled independently)."""
    text = "ACE's margin over the best other data-free method grows with the number of tasks"
    source = f"{SOURCE}, ViT results at 8/14/20 tasks"
    paper = "ViT-B/16 vs TSV-M: +1.6/+1.5/+1.5 points at 8/14/20 tasks (the paper's stated growth is with model size)"
    gaps = margins(bench)
    if len({g["tasks"] for g in gaps}) < 2:
        return claim(text, source, None, f"not tested: needs suites with at least two task counts; "
                     f"{NOT_IN_DEFAULT}", id="A2", paper=paper, ours="—", suite=", ".join(bench))
    small, large = min(gaps, key=lambda g: g["tasks"]), max(gaps, key=lambda g: g["tasks"])
    samples = []
    for k, gap in enumerate((small, large)):
        runs = bench[gap["suite"]]
        samples.append(bootstrap_samples(runs["ace"].test, runs[gap["best_other"]].test, runs["ace"].expert,
                                         seed=k))
    growth = _interval(samples[1] - samples[0], large["diff"] - small["diff"])
    return claim(text, source, growth["low"] > 0,
                 "margin = ACE − the validation-best other method: " + ", ".join(
                     f"{g['tasks']} tasks ({g['best_other']}) {_fmt(g)}" for g in sorted(gaps, key=lambda g: g["tasks"]))
                 + f"; growth {large['tasks']} vs {small['tasks']} tasks {_fmt(growth)}",
                 id="A2", paper=paper, ours=f"growth {_fmt(growth)}", suite=", ".join(bench))


def claim_cost(timing: Optional[dict], suite: str):
    text = "ACE's merge cost is comparable to TSV-M and far below WUDI"
    source = f"{SOURCE}, efficiency comparison"
    paper = "'modest computational cost' (abstract); qualitative, no timings compared with TSV-M or WUDI here"
    if not timing or not {"ace", "tsv", "wudi"} <= set(timing["seconds"]):
        return claim(text, source, None, "not tested: tsv or wudi is not among the baselines", id="A3",
                     paper=paper, ours="—", suite=suite)
    s = {k: v["median"] for k, v in timing["seconds"].items()}
    held = s["ace"] <= COMPARABLE_FACTOR * s["tsv"] and s["ace"] * FAR_BELOW_FACTOR <= s["wudi"]
    counts = ", ".join(f"{k} {len(v['samples'])}" for k, v in timing["seconds"].items())
    return claim(text, source, held,
                 f"median merge wall time (evaluation excluded; samples: {counts}; {timing['environment']['threads']}"
                 f" threads, {timing['environment']['device']}, measured {timing['date']}): ACE {s['ace']:.2f} s, "
                 f"TSV-M {s['tsv']:.2f} s, WUDI {s['wudi']:.2f} s; comparable = ≤ {COMPARABLE_FACTOR:g}× TSV-M, "
                 f"far below = ≤ 1/{FAR_BELOW_FACTOR:g} of WUDI",
                 id="A3", paper=paper, ours=f"ACE/TSV-M {s['ace'] / s['tsv']:.2f}×, ACE/WUDI {s['ace'] / s['wudi']:.3f}×",
                 suite=suite)


def ladder_decisions(result: dict) -> list[dict]:
    """Step k against step k − 1 of one ladder: beats(), or not tested where the gate leaves the step identical."""
    out = []
    steps = result["steps"]
    for before, step in zip(steps, steps[1:]):
        if step["same_as"]:
            fired = result["gate"]
            decision = {"held": None, "interval": None,
                        "why": f"the gate fired on no matrix (max γ {fired['max_gamma']:.3f} ≤ 0.3): the step is "
                               f"the previous model"}
            decision["evidence"] = f"{step['step']}: not tested ({decision['why']})"
        else:
            run, previous = result["runs"][step["step"]], result["runs"][before["step"]]
            decision = protocol.beats(run.test, previous.test, run.expert, names=(step["step"], before["step"]))
        out.append({"component": COMPONENTS[len(out)], "setting": result["experts"], **decision})
    return out


def claim_components(ladders: Sequence[dict], suite: str):
    """A4: each component beats the step before it in every setting where it is active; held when each of the
    three was tested somewhere and every tested step held."""
    decisions = [d for result in ladders for d in ladder_decisions(result)]
    tested = {d["component"] for d in decisions if d["held"] is not None}
    held = combine([d["held"] for d in decisions if d["held"] is not None]) if tested else None
    if held and tested != set(COMPONENTS):
        held = None
    untested = [c for c in COMPONENTS if c not in tested]
    evidence = "; ".join(f"[{_setting(d['setting'])}] {d['evidence']}" for d in decisions)
    if untested:
        evidence += f"; tested nowhere (inactive, or every comparison vacuous): {', '.join(untested)}"
    ours = "; ".join(f"{_setting(d['setting'])} {d['component']} {_fmt(d['interval'])}" for d in decisions
                     if d["interval"] is not None and d["held"] is not None)
    return claim("each ACE component adds accuracy (normalisation, structural prior, refinement) where it is active",
                 f"{SOURCE}, ablation", held, evidence, id="A4",
                 paper="ViT-B/16 8 tasks: 89.91 → 89.91 → 90.60 → 90.60 (gated steps off); GPT-2: 68.72 → 71.50 → "
                       "71.51 → 74.09; RoBERTa-Large: 80.05 → 88.04 → 86.79 → 91.68",
                 ours=ours or "—", suite=suite)


def _setting(experts_name: str) -> str:
    return "zoo experts" if experts_name == "zoo" else "heterogeneous experts"


def claim_gating(zoo_result: dict, hetero_result: Optional[dict], margin: float, suite: str):
    """A5, as behaviour: (a) with the zoo's experts, forcing normalisation and refinement on does not help
    (the 95% upper end of forced − gated is below ``margin`` points; did not hold when its lower end is above 0
    and the upper end reaches the margin); (b) with heterogeneous experts, where the gate fires, gated ACE beats
    ACE with both components off."""
    zoo_gate = zoo_result["gate"]
    forced, gated = zoo_result["runs"]["forced on"].test, zoo_result["runs"][LADDER[3][0]].test
    interval = protocol.paired_difference(forced, gated, zoo_result["runs"]["forced on"].expert)
    why = protocol.vacuous(forced, gated, interval, ("forced on", "gated"))
    if why:
        part_a = None
    elif interval.high < margin:
        part_a = True
    elif interval.low > 0:
        part_a = False
    else:
        part_a, why = None, f"the interval straddles the {margin:g}-point margin: inconclusive"
    text_a = (f"(a) zoo experts, gate fired on {100 * zoo_gate['fired_fraction']:.0f}% of {zoo_gate['matrices']} "
              f"matrices (max γ {zoo_gate['max_gamma']:.3f}): forced on − gated = {interval}, must stay below "
              f"+{margin:g} pts" + (f" (not tested: {why})" if why else ""))
    if hetero_result is None:
        part_b, text_b, interval_b = None, "(b) not run: no heterogeneous experts", None
    else:
        het_gate = hetero_result["gate"]
        if het_gate["fired_fraction"] == 0:
            part_b, interval_b = None, None
            text_b = (f"(b) heterogeneous experts: the gate fired on no matrix (max γ {het_gate['max_gamma']:.3f}), "
                      "so they are not a setting where it is on; widen `hetero_lr_factors`/`hetero_step_factors`")
        else:
            gated_run = hetero_result["runs"][LADDER[3][0]]
            decision = protocol.beats(gated_run.test, hetero_result["runs"]["gated components off"].test,
                                      gated_run.expert, names=("gated", "components off"))
            part_b, interval_b = decision["held"], decision["interval"]
            text_b = (f"(b) heterogeneous experts, gate fired on {100 * het_gate['fired_fraction']:.0f}% of "
                      f"{het_gate['matrices']} matrices (max γ {het_gate['max_gamma']:.3f}): {decision['evidence']}")
    ours = f"(a) {interval}" + (f"; (b) {_fmt(interval_b)}" if interval_b else "")
    return claim("adaptive normalisation and spectral refinement switch on only when needed: forcing them on does "
                 "not help where the gate is off, and the gate helps where it fires", f"{SOURCE}, gating analysis "
                 "(γ per model family)", combine([part_a, part_b]), f"{text_a}; {text_b}", id="A5",
                 paper="γ > 0.3 on RoBERTa (gate on), γ < 0.25 on ViT (gate never fires); the ablation's gated steps "
                       "add +0 on ViT", ours=ours, suite=suite)


def ace_claims(bench, zoo_result: dict, hetero_result: Optional[dict], timing: Optional[dict],
               config: AceConfig) -> list:
    """Every ACE claim, A1–A5, from this run's predictions (normalized by the zoo experts' test accuracy)."""
    ladders = [zoo_result] + ([hetero_result] if hetero_result is not None else [])
    return [claim_a1(), claim_sota(bench), claim_growth(bench), claim_cost(timing, config.suite),
            claim_components(ladders, config.suite),
            claim_gating(zoo_result, hetero_result, config.a5_margin, config.suite)]


def headline(bench: Mapping[str, Mapping[str, Run]]) -> dict:
    gaps = margins(bench)
    largest = max(gaps, key=lambda g: g["tasks"])
    return {"name": f"ACE − validation-best other data-free ({largest['suite']}, {largest['best_other']}), "
                    "normalized points", "value": largest["diff"], "format": "{:+.2f}",
            "interval": [largest["low"], largest["high"]]}


# ------------------------------------------------------------------------------------------------ figures

def plot_task_count(rows: list[dict]):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for method in dict.fromkeys(r["method"] for r in rows):
        points = sorted((r["tasks"], 100 * r["normalized"]) for r in rows if r["method"] == method)
        style = {"linewidth": 2.5, "color": "black"} if method == "ace" else {"alpha": 0.8}
        ax.plot(*zip(*points), marker="o", label=method, **style)
    ax.set_xlabel("number of tasks")
    ax.set_ylabel("normalized accuracy (%)")
    ax.set_title("merging more tasks (α of every method tuned on validation)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def plot_gamma(gates: Sequence[tuple[str, dict]], threshold: float = 0.3):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    values = [np.array([g for g in gate["gamma"].values() if np.isfinite(g) and g > 0]) for _, gate in gates]
    low = min((v.min() for v in values if len(v)), default=1e-3)
    high = max(max((v.max() for v in values if len(v)), default=threshold), threshold * 2)
    bins = np.geomspace(max(low, 1e-6), high, 30)
    for (label, _), v in zip(gates, values):
        ax.hist(v, bins=bins, alpha=0.6, label=label)
    ax.axvline(threshold, color="red", linestyle="--", label="gate γ = 0.3")
    ax.set_xscale("log")
    ax.set_xlabel("heterogeneity γ per matrix")
    ax.set_ylabel("matrices")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------ notebook helpers

def lab_for(config: AceConfig, labs: dict, log=print) -> Lab:
    """The opened ``config.suite`` (kept by :func:`benchmark` when it is one of the suites)."""
    if config.suite not in labs:
        labs[config.suite] = open_lab(config.suite, config, log)
    return labs[config.suite]


def ladder_rows(*results: dict) -> list[dict]:
    return [{"experts": _setting(r["experts"]), **{k: v for k, v in step.items() if k != "gated"}}
            for r in results for step in r["steps"]] + \
        [{"experts": _setting(r["experts"]), "step": label, "alpha": run.tuned.alpha, "mean": run.summary["accuracy"],
          "normalized": run.summary["normalized"]}
         for r in results for label, run in r["runs"].items() if label in ("forced on", "gated components off")]


def metrics(bench, zoo_result: dict, hetero_result: Optional[dict], timing: Optional[dict], hetero_info: dict) -> dict:
    """What metrics.json keeps: numbers, curves and intervals (no logits)."""
    def runs(result):
        return {label: {"alpha": run.tuned.alpha, "curve": run.tuned.curve, "recipe": run.tuned.recipe,
                        **{k: v for k, v in run.summary.items()}} for label, run in result["runs"].items()}

    ladders = {r["experts"]: {"gate": {k: v for k, v in r["gate"].items() if k != "gamma"}, "steps": r["steps"],
                              "runs": runs(r)} for r in (zoo_result, hetero_result) if r is not None}
    return {"benchmark": {suite: runs({"runs": rs}) for suite, rs in bench.items()},
            "margins": margins(bench), "ablation": ladders, "merge_seconds": timing, "heterogeneous": hetero_info}
