"""The logic behind ``notebooks/pareto.ipynb``: Pareto-front previews by variational merging (arXiv 2412.08147)
against multitask fine-tuning, on 2-task and 3-task subsets of a zoo.

Protocol (decided here, stated in the report; METHODS.md §12 and §17 leave it open):
* subsets: the tasks in ``tasks`` (3 names) and the 2-task subset of its first two;
* posteriors (nbmerge.zoo.posteriors): K IVON runs per task from the zoo's base, run 0 alone for the isotropic
  and IVON-Hess families, all K for SoupIVON-Hess and MultiIVON-Hess; squared gradients at the zoo's AdamW
  experts for AdamW-SG-Hess, and the same experts averaged for the AdamW isotropic family;
* ground truth: AdamW fine-tuning on Σ_t α_t ℓ_t from the base with the experts' recipe, on a coarse simplex grid
  (plus its centroid); at a vertex that is the zoo's expert itself;
* evaluation: test accuracy on the first ``eval_examples`` test images of each task; previews on a finer simplex
  grid joined with the multitask α;
* quality: hypervolume of the per-task accuracies with the base model's accuracies as reference point (our
  choice: the paper names no metric), the α-matched gap at the multitask α, the best-α mean accuracy (the best
  evaluated α: the front's best point, an oracle choice, not a validation pick);
* cost: the wall time of one batched merge of a front of ≥100 α per family (posteriors already trained; their
  one-time training cost is reported beside it) against the recorded wall time of one multitask run.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from .. import pareto
from ..errors import NbmergeError
from ..io import load_state_dict
from ..walker import resolve_device
from .common import check_config, claim

# family → (label, what it is). The IVON families are nested (isotropic ⊂ diagonal ⊂ mixture) on the same runs.
FAMILIES = {
    "simple": ("simple (isotropic, IVON means)", "α-weighted average of the IVON means (run 0)"),
    "ivon_hess": ("IVON-Hess", "diagonal Gaussian: IVON mean and precision (run 0)"),
    "soup_ivon_hess": ("SoupIVON-Hess", "diagonal Gaussian from each task's K IVON runs collapsed into one"),
    "multi_ivon_hess": ("MultiIVON-Hess (MoG, EM)", "mixture of each task's K IVON runs, merged by EM"),
    "adamw_simple": ("simple (isotropic, AdamW experts)", "α-weighted average of the zoo's AdamW experts"),
    "adamw_sg_hess": ("AdamW-SG-Hess", "diagonal Gaussian: AdamW expert, squared-gradient precision"),
}
IVON_FAMILIES = ("simple", "ivon_hess", "soup_ivon_hess", "multi_ivon_hess")
NESTED = ("simple", "ivon_hess", "multi_ivon_hess")   # the theorem's Q1 ⊂ Q2 ⊂ Q3
PAPER_EXAMPLE = (76.9, 87.2, 90.4)   # BRIEF.md §3: simple → mixture, against multitask fine-tuning
EXAMPLE_RECOVERY = 0.5               # our threshold for the example's claim (the paper's example recovers 76%)
SECONDS = 60.0                       # "a front in seconds": at most a minute for ≥100 α


@dataclass(frozen=True)
class ParetoConfig:
    suite: str = "tiny8"
    # the 3-task subset (its first two are the 2-task subset): on tiny8 these gain most from their experts
    # (+27, +38, +26 points) and hurt one another most (each expert costs the others 13-48 points)
    tasks: tuple = ("fashion", "textures", "devanagari")
    device: str = "cpu"
    seed: int = 0                     # seeds the IVON runs and the squared-gradient sample
    smoke: bool = False
    families: tuple = tuple(FAMILIES)
    components: int = 3               # K IVON runs per task (the paper: 10 for ViT, 3 for RoBERTa)
    ivon_steps: int = 0               # 0: the zoo's expert steps
    ivon_lr: float = 0.2
    ivon_ess: float = 1e6             # λ, shared by the tasks (λ = N kept the encoder at chance: zoo/posteriors.py)
    ivon_hess_init: float = 0.01
    ivon_beta2: float = 0.99
    prior_weight_decay: float = 1e-4  # δ: prior precision λδ around the base, for IVON and squared gradients
    sg_examples: int = 256            # per-example gradients for the squared-gradient precision
    em_iterations: int = 20           # "a few EM steps"; stops earlier once θ stops moving
    em_temperature: float = 1.0       # 1: the plain mixture (responsibilities ~one-hot in high dimension)
    multitask_steps: int = 0          # 0: the zoo's expert steps (then a vertex is the zoo's expert)
    multitask_divisions_2: int = 6    # multitask α₁ ∈ {0, 1/6, ..., 1} on the 2-task subset
    multitask_divisions_3: int = 2    # multitask α on the 3-task simplex grid of step 1/2 ...
    multitask_centroid: bool = True   # ... plus (1/3, 1/3, 1/3)
    front_divisions_2: int = 30       # previews evaluated at α₁ ∈ {0, 1/30, ..., 1}
    front_divisions_3: int = 10       # ... and on the 3-task grid of step 1/10 (66 α)
    timing_divisions_2: int = 100     # a front of 101 α merged in one batch, timed
    timing_divisions_3: int = 20      # ... and of 231 α
    eval_examples: int = 500          # test images per task for every evaluated model (0: all)
    cache: str = ""                   # zoo cache folder (empty: NBMERGE_CACHE or ~/.cache/nbmerge)

    def __post_init__(self):
        check_config(self)
        for name in ("tasks", "families"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise NbmergeError(f"unknown families {unknown}; valid: {', '.join(FAMILIES)}")
        if len(self.tasks) not in (2, 3) or len(set(self.tasks)) != len(self.tasks):
            raise NbmergeError(f"tasks must name 2 or 3 distinct tasks, got {list(self.tasks)}")
        for name in ("components", "em_iterations", "multitask_divisions_2", "multitask_divisions_3",
                     "front_divisions_2", "front_divisions_3", "timing_divisions_2", "timing_divisions_3"):
            if getattr(self, name) < 1:
                raise NbmergeError(f"parameter {name!r} must be ≥ 1, got {getattr(self, name)}")
        object.__setattr__(self, "device", resolve_device(self.device))

    def ivon(self):
        from ..zoo.posteriors import IvonSettings

        return IvonSettings(steps=self.ivon_steps, lr=self.ivon_lr, ess=self.ivon_ess, hess_init=self.ivon_hess_init,
                            beta2=self.ivon_beta2, weight_decay=self.prior_weight_decay)

    def squared_gradients(self):
        from ..zoo.posteriors import SquaredGradientSettings

        return SquaredGradientSettings(examples=self.sg_examples, ess=self.ivon_ess,
                                       weight_decay=self.prior_weight_decay)

    def multitask(self):
        from ..zoo.posteriors import MultitaskSettings

        return MultitaskSettings(steps=self.multitask_steps)


def as_dict(config: ParetoConfig) -> dict:
    return asdict(config)


def open_zoo(config: ParetoConfig):
    from ..zoo.build import build_zoo, load_zoo

    build_zoo(config.suite, cache=config.cache or None, quiet=True, log=lambda *_: None)
    return load_zoo(config.suite, config.cache or None)


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


# ------------------------------------------------------------------------------------------------- surrogates

def prepare(zoo, config: ParetoConfig, log: Callable = print) -> dict:
    """The flat base and, per family kind, the stacked per-task surrogates on ``config.device`` (posteriors are
    trained on first use and cached in the zoo's store); with their one-time costs."""
    from ..zoo import posteriors

    tasks = list(config.tasks)
    base_state = load_state_dict(zoo.base_path)
    keys = list(base_state)
    out = {"tasks": tasks, "like": base_state, "base": pareto.flatten_state(base_state).to(config.device),
           "costs": {}}
    if any(f in IVON_FAMILIES for f in config.families):
        start = time.perf_counter()
        files = posteriors.ivon_posteriors(zoo, tasks, config.components, config.ivon(), seed=config.seed, log=log)
        stacked = posteriors.stack_posteriors([files[t] for t in tasks], keys)
        out["ivon"] = {k: stacked[k].to(config.device) for k in ("means", "precisions")}
        out["costs"]["ivon"] = {"runs": len(stacked["seconds"]), "seconds_per_run": float(np.mean(stacked["seconds"])),
                                "seconds_total": float(np.sum(stacked["seconds"])),
                                "wall_this_session": time.perf_counter() - start}
    if "adamw_sg_hess" in config.families:
        files = posteriors.squared_gradient_posteriors(zoo, tasks, config.squared_gradients(), seed=config.seed,
                                                       log=log)
        stacked = posteriors.stack_posteriors([[files[t]] for t in tasks], keys)
        out["sg"] = {k: stacked[k][:, 0].to(config.device) for k in ("means", "precisions")}
        out["costs"]["squared_gradients"] = {"runs": len(tasks), "seconds_total": float(np.sum(stacked["seconds"]))}
    if "adamw_simple" in config.families:
        out["experts"] = torch.stack([pareto.flatten_state(load_state_dict(zoo.expert_path(t)), keys)
                                      for t in tasks]).to(config.device)
    return out


def merge_family(surrogates: dict, family: str, index: Sequence[int], alphas, config: ParetoConfig) -> torch.Tensor:
    """θ̂(α) [A, P] of one family for the tasks ``index`` (positions in ``surrogates['tasks']``), every α at once."""
    base, idx = surrogates["base"], list(index)
    alphas = torch.as_tensor(alphas, dtype=torch.float64).to(base.device)
    if family == "simple":
        return pareto.isotropic_merge(base, surrogates["ivon"]["means"][idx, 0], alphas)
    if family == "ivon_hess":
        ivon = surrogates["ivon"]
        return pareto.gaussian_merge(base, ivon["means"][idx, 0], ivon["precisions"][idx, 0], alphas)
    if family == "soup_ivon_hess":
        mean, precision = pareto.collapse(surrogates["ivon"]["means"][idx], surrogates["ivon"]["precisions"][idx])
        return pareto.gaussian_merge(base, mean, precision, alphas)
    if family == "multi_ivon_hess":
        ivon = surrogates["ivon"]
        return pareto.mog_merge(base, ivon["means"][idx], ivon["precisions"][idx], alphas,
                                iterations=config.em_iterations, temperature=config.em_temperature)
    if family == "adamw_simple":
        return pareto.isotropic_merge(base, surrogates["experts"][idx], alphas)
    if family == "adamw_sg_hess":
        return pareto.gaussian_merge(base, surrogates["sg"]["means"][idx], surrogates["sg"]["precisions"][idx],
                                     alphas)
    raise NbmergeError(f"unknown family {family!r}; valid: {', '.join(FAMILIES)}")


# ------------------------------------------------------------------------------------------------- evaluation

def subset_evaluator(zoo, tasks: Sequence[str], examples: int, device: str):
    """An evaluator over the first ``examples`` test images of each task (all when 0)."""
    from ..zoo.evaluate import Evaluator

    cap = slice(0, examples or None)
    heads = zoo.heads()
    data = {t: {"test": (zoo.arrays[t]["test_x"][cap], zoo.arrays[t]["test_y"][cap])} for t in tasks}
    return Evaluator(zoo.arch, data, {t: heads[t] for t in tasks}, device=device)


def accuracies(evaluator, state: dict, tasks: Sequence[str]) -> list[float]:
    result = evaluator.evaluate(state, "test", tasks=list(tasks))
    return [result["tasks"][t]["accuracy"] for t in tasks]


def evaluate_front(evaluator, thetas: torch.Tensor, like: dict, tasks: Sequence[str]) -> np.ndarray:
    return np.array([accuracies(evaluator, pareto.unflatten_state(theta, like), tasks) for theta in thetas])


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


def ground_truth(zoo, tasks: Sequence[str], alphas: torch.Tensor, evaluator, config: ParetoConfig,
                 log: Callable = print) -> dict:
    """Multitask fine-tuning at every α (cached), evaluated; training seconds as recorded when each was trained
    (NaN where the run is the zoo's own expert)."""
    from ..zoo.posteriors import multitask_run, read_metadata

    rows, seconds = [], []
    for alpha in alphas:
        path = multitask_run(zoo, dict(zip(tasks, alpha.tolist())), config.multitask(), log=log)
        rows.append(accuracies(evaluator, load_state_dict(path), tasks))
        seconds.append(float(read_metadata(path).get("seconds", "nan")))
    return {"alphas": alphas.tolist(), "accuracy": np.array(rows).tolist(), "train_seconds": seconds}


def run_subset(zoo, index: Sequence[int], surrogates: dict, config: ParetoConfig, log: Callable = print) -> dict:
    """Everything for one subset: previews of every family, multitask ground truth, quality, timings."""
    tasks = [surrogates["tasks"][i] for i in index]
    count = len(tasks)
    front = pareto.simplex_grid(count, config.front_divisions_2 if count == 2 else config.front_divisions_3)
    truth_alphas = multitask_alphas(count, config)
    alphas = _union(front, truth_alphas)
    matched = [int(((alphas - a).abs().amax(1) < 1e-9).nonzero()[0]) for a in truth_alphas]
    evaluator = subset_evaluator(zoo, tasks, config.eval_examples, config.device)
    reference = accuracies(evaluator, surrogates["like"], tasks)
    fronts = {}
    for family in config.families:
        merge_s, evaluate_s, parts = 0.0, 0.0, []
        for chunk in alpha_chunks(alphas, surrogates):
            _sync(config.device)
            start = time.perf_counter()
            thetas = merge_family(surrogates, family, index, chunk, config)
            _sync(config.device)
            merge_s += time.perf_counter() - start
            start = time.perf_counter()
            parts.append(evaluate_front(evaluator, thetas, surrogates["like"], tasks))
            evaluate_s += time.perf_counter() - start
            del thetas
        acc = np.concatenate(parts)
        fronts[family] = {"accuracy": acc.tolist(), "merge_seconds": merge_s, "evaluate_seconds": evaluate_s}
        log(f"{'+'.join(tasks)} {family:<16} {len(alphas)} α: merge {merge_s:.2f} s, evaluate "
            f"{fronts[family]['evaluate_seconds']:.1f} s, best mean {acc.mean(1).max():.3f}")
    truth = ground_truth(zoo, tasks, truth_alphas, evaluator, config, log)
    result = {"tasks": tasks, "alphas": alphas.tolist(), "matched": matched, "reference": reference,
              "fronts": fronts, "multitask": truth}
    result["timing"] = time_fronts(surrogates, index, config)
    result["quality"] = quality(result)
    return result


def time_fronts(surrogates: dict, index: Sequence[int], config: ParetoConfig) -> dict:
    """Wall time of one batched merge of ≥100 α per family (merge only; posteriors already trained)."""
    count = len(index)
    alphas = pareto.simplex_grid(count, config.timing_divisions_2 if count == 2 else config.timing_divisions_3)
    chunks = alpha_chunks(alphas, surrogates)
    out = {"alphas": len(alphas), "batches": len(chunks), "seconds": {}}
    for family in config.families:
        out["seconds"][family] = 0.0
        for chunk in chunks:
            _sync(config.device)
            start = time.perf_counter()
            merge_family(surrogates, family, index, chunk, config)
            _sync(config.device)
            out["seconds"][family] += time.perf_counter() - start
    return out


# The merges hold θ̂(α) for a whole batch of α in float64, and EM's temporaries beside it: on MiniLM (22.7 M
# parameters) 231 α at once would take ~40 GB. Batches are sized to this budget (on the vision zoos every α still
# fits in one batch, as before).
MERGE_MEMORY_BYTES = 4 * 2 ** 30
_BYTES_PER_ALPHA_PER_PARAMETER = 8 * 8  # float64 θ̂(α) and up to seven more of its size (EM's responsibilities)


def alpha_chunks(alphas: torch.Tensor, surrogates: dict, budget: int = MERGE_MEMORY_BYTES) -> list[torch.Tensor]:
    """``alphas`` in batches whose merges fit in ``budget`` bytes (at least one α per batch)."""
    size = max(1, int(budget // (surrogates["base"].numel() * _BYTES_PER_ALPHA_PER_PARAMETER)))
    return [alphas[i:i + size] for i in range(0, len(alphas), size)]


# ---------------------------------------------------------------------------------------------------- quality

def quality(result: dict) -> list[dict]:
    """Per family (and the multitask runs): hypervolume of the evaluated front over the base model's accuracies,
    the same over the subset's nadir (the worst accuracy per task among every evaluated model: never zero, so
    fronts that all stay below the base can still be ranked), the hypervolume at the multitask α only, the
    α-matched gap, the best-α mean accuracy and where it is."""
    reference = np.array(result["reference"])
    truth = np.array(result["multitask"]["accuracy"])
    matched = result["matched"]
    everything = np.concatenate([truth] + [np.array(f["accuracy"]) for f in result["fronts"].values()])
    nadir = everything.min(0)
    result["nadir"] = nadir.tolist()
    rows = []

    def row(family, label, acc, at_truth, gap, best_alpha):
        means = acc.mean(1)
        return {"family": family, "label": label, "hypervolume": pareto.hypervolume(acc, reference),
                "hypervolume_nadir": pareto.hypervolume(acc, nadir),
                "hypervolume_at_multitask_alphas": pareto.hypervolume(at_truth, reference), "gap": gap,
                "best_mean_accuracy": float(means.max()), "best_alpha": best_alpha[int(means.argmax())]}

    for family, front in result["fronts"].items():
        acc = np.array(front["accuracy"])
        rows.append(row(family, FAMILIES[family][0], acc, acc[matched], pareto.alpha_matched_gap(acc[matched], truth),
                        result["alphas"]))
    rows.append(row("multitask", "multitask fine-tuning (ground truth)", truth, truth, 0.0,
                    result["multitask"]["alphas"]))
    return rows


def cost_rows(results: Sequence[dict], surrogates: dict) -> list[dict]:
    """Per subset and family: one batched front of ≥100 α against one multitask run (and the whole sweep)."""
    rows = []
    for result in results:
        trained = [s for s, a in zip(result["multitask"]["train_seconds"], result["multitask"]["alphas"])
                   if np.isfinite(s) and all(x > 0 for x in a)]
        one_run = float(np.mean(trained)) if trained else float("nan")
        for family, seconds in result["timing"]["seconds"].items():
            rows.append({"subset": "+".join(result["tasks"]), "family": family, "alphas": result["timing"]["alphas"],
                         "front_seconds": seconds, "one_multitask_run_seconds": one_run,
                         "sweep_seconds": one_run * result["timing"]["alphas"],
                         "speedup_vs_sweep": one_run * result["timing"]["alphas"] / seconds})
    return rows


def _by_family(result: dict) -> dict:
    return {row["family"]: row for row in result["quality"]}


# ----------------------------------------------------------------------------------------------------- claims

def pareto_claims(results: Sequence[dict], costs: Sequence[dict], surrogates: dict) -> list:
    out = []
    families = set(results[0]["fronts"]) if results else set()
    labels = {f: FAMILIES[f][0] for f in FAMILIES}

    def per_subset(fmt):
        return "; ".join(f"{'+'.join(r['tasks'])}: " + fmt(_by_family(r)) for r in results)

    source = "BRIEF.md §3 claim 1; arXiv 2412.08147"
    if set(NESTED) <= families:
        closer = all(q["multi_ivon_hess"]["gap"] < min(q["ivon_hess"]["gap"], q["simple"]["gap"])
                     for q in map(_by_family, results))
        out.append(claim("Mixture-weighted fronts are closer to the true multitask front than Hessian-weighted "
                         "or simple merging", source, closer,
                         "α-matched gap (mean |Δ accuracy| at the multitask α), " + per_subset(
                             lambda q: ", ".join(f"{labels[f]} {100 * q[f]['gap']:.2f} pts" for f in NESTED))))
        ordered, notes = [], []
        for result in results:
            q = _by_family(result)
            key = "hypervolume"
            if all(q[f][key] == 0 for f in NESTED):  # no point beats the base on every task: rank over the nadir
                key = "hypervolume_nadir"
                notes.append("+".join(result["tasks"]))
            ordered.append(q["multi_ivon_hess"][key] >= q["ivon_hess"][key] >= q["simple"][key])
        extra = ""
        if {"adamw_simple", "adamw_sg_hess"} <= families:
            extra = " (AdamW experts, not part of the verdict: " + per_subset(
                lambda q: f"simple {q['adamw_simple']['hypervolume']:.4g}, SG-Hess {q['adamw_sg_hess']['hypervolume']:.4g}") + ")"
        if notes:
            extra += (f"; on {', '.join(notes)} no front point beats the base on every task, so the verdict there "
                      "uses the hypervolume over the subset's nadir: " + per_subset(
                          lambda q: ", ".join(f"{labels[f]} {q[f]['hypervolume_nadir']:.4g}" for f in NESTED)))
        out.append(claim("A more flexible posterior family gives a better front: mixture ≥ Hessian-weighted ≥ "
                         "simple (hypervolume)", "BRIEF.md §3 (theorem); arXiv 2412.08147 abstract", all(ordered),
                         "hypervolume over the base model's accuracies, " + per_subset(
                             lambda q: ", ".join(f"{labels[f]} {q[f]['hypervolume']:.4g}" for f in NESTED)) + extra))
        recoveries = []
        for q in map(_by_family, results):
            simple, mixture, mtl = (q[f]["best_mean_accuracy"] for f in ("simple", "multi_ivon_hess", "multitask"))
            recoveries.append((mixture - simple) / (mtl - simple) if mtl > simple else float("nan"))
        valid = [r for r in recoveries if np.isfinite(r)]
        held = all(r >= EXAMPLE_RECOVERY for r in valid) if valid else None  # no gap to close: not testable
        out.append(claim(f"The mixture closes most of the gap from simple merging to multitask fine-tuning "
                         f"(paper's example: {PAPER_EXAMPLE[0]} → {PAPER_EXAMPLE[1]} vs {PAPER_EXAMPLE[2]}, 76% of "
                         f"the gap; held here if ≥ {EXAMPLE_RECOVERY:.0%})", "BRIEF.md §3 claim 2", held,
                         "best-α mean accuracy, " + per_subset(lambda q: (
                             f"simple {100 * q['simple']['best_mean_accuracy']:.1f} → mixture "
                             f"{100 * q['multi_ivon_hess']['best_mean_accuracy']:.1f} vs multitask "
                             f"{100 * q['multitask']['best_mean_accuracy']:.1f}")) + "; share of the gap closed: "
                         + ", ".join("n/a (multitask not above simple)" if not np.isfinite(r) else f"{r:.0%}"
                                     for r in recoveries)))
    else:
        for text in ("Mixture-weighted fronts are closer to the true multitask front",
                     "A more flexible posterior family gives a better front", "The mixture closes most of the gap"):
            out.append(claim(text, source, None, f"needs the families {', '.join(NESTED)}"))
    if costs:
        slowest = max(costs, key=lambda r: r["front_seconds"])
        held = all(r["front_seconds"] <= SECONDS and r["front_seconds"] < r["one_multitask_run_seconds"] for r in costs)
        ivon = surrogates["costs"].get("ivon", {})
        once = (f"; one-time posterior training: {ivon['runs']} IVON runs, {ivon['seconds_total']:.0f} s in all"
                if ivon else "")
        out.append(claim("Once the surrogates exist, a front of hundreds of α takes seconds, against hours of "
                         "multitask fine-tuning", "BRIEF.md §3 claim 3", held,
                         f"slowest front: {slowest['family']} on {slowest['subset']}, {slowest['alphas']} α in "
                         f"{slowest['front_seconds']:.2f} s; one multitask run {slowest['one_multitask_run_seconds']:.0f} s, "
                         f"a multitask sweep over the same α ≈ {slowest['sweep_seconds'] / 3600:.2f} h "
                         f"({slowest['speedup_vs_sweep']:.0f}× the front's time){once}. Held if every front takes ≤ "
                         f"{SECONDS:.0f} s and less than one multitask run"))
    return out


def headline(results: Sequence[dict]) -> dict:
    last = results[-1]
    q = _by_family(last)
    family = "multi_ivon_hess" if "multi_ivon_hess" in q else next(iter(q))
    return {"name": f"{FAMILIES[family][0]} α-matched gap to multitask fine-tuning ({'+'.join(last['tasks'])}), "
                    "accuracy points", "value": 100 * q[family]["gap"], "format": "{:.2f}"}


# ---------------------------------------------------------------------------------------------------- figures

STYLE = {"simple": ("tab:blue", "-"), "ivon_hess": ("tab:orange", "-"), "soup_ivon_hess": ("tab:green", "--"),
         "multi_ivon_hess": ("tab:red", "-"), "adamw_simple": ("tab:purple", ":"), "adamw_sg_hess": ("tab:brown", ":")}


def plot_front_2d(result: dict, ax=None):
    """Accuracy on task 1 against task 2 along α₁ for every family, the multitask runs and the base."""
    import matplotlib.pyplot as plt

    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 5))
    order = np.argsort(np.array(result["alphas"])[:, 0])
    for family, front in result["fronts"].items():
        acc = 100 * np.array(front["accuracy"])[order]
        color, line = STYLE.get(family, ("gray", "-"))
        ax.plot(acc[:, 0], acc[:, 1], line, color=color, marker=".", markersize=3, label=FAMILIES[family][0])
    if "multitask" in result:
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.plot(truth[:, 0], truth[:, 1], "ks-", label="multitask fine-tuning", markersize=6)
    ref = 100 * np.array(result["reference"])
    ax.plot([ref[0]], [ref[1]], "k*", markersize=12, label="base (reference point)")
    ax.set_xlabel(f"{result['tasks'][0]} accuracy (%)")
    ax.set_ylabel(f"{result['tasks'][1]} accuracy (%)")
    ax.set_title(f"α-fronts: {' vs '.join(result['tasks'])}")
    ax.legend(fontsize=7)
    if fig is not None:
        fig.tight_layout()
    return fig or ax.figure


def plot_front_3d(result: dict):
    """The 3-task fronts as their three pairwise projections (points, since the α grid is 2-dimensional)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.3))
    tasks = result["tasks"]
    for ax, (i, j) in zip(axes, ((0, 1), (0, 2), (1, 2))):
        for family, front in result["fronts"].items():
            acc = 100 * np.array(front["accuracy"])
            ax.scatter(acc[:, i], acc[:, j], s=6, color=STYLE.get(family, ("gray",))[0], label=FAMILIES[family][0],
                       alpha=0.6)
        truth = 100 * np.array(result["multitask"]["accuracy"])
        ax.scatter(truth[:, i], truth[:, j], s=40, marker="s", color="black", label="multitask fine-tuning")
        ref = 100 * np.array(result["reference"])
        ax.plot([ref[i]], [ref[j]], "k*", markersize=12, label="base")
        ax.set_xlabel(f"{tasks[i]} (%)")
        ax.set_ylabel(f"{tasks[j]} (%)")
    axes[0].legend(fontsize=6)
    fig.suptitle(f"3-task fronts ({', '.join(tasks)}), pairwise projections")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------- tour

def tour_preview(zoo, *, tasks: Optional[Sequence[str]] = None, divisions: int = 10, components: int = 2,
                 ivon_steps: int = 0, eval_examples: int = 300, device: str = "cpu", seed: int = 0,
                 plot: bool = True, log: Callable = lambda *_: None) -> dict:
    """The α preview of the three posterior families (simple, IVON-Hess, MultiIVON-Hess) on two tasks of ``zoo``
    (default its first two): fronts over α₁ ∈ {0, 1/divisions, ..., 1}, no multitask runs. The IVON posteriors
    are trained on first use (``components`` runs per task, ``ivon_steps`` steps each, 0 = the zoo's expert
    steps) and cached. Returns the fronts, merge times and (``plot``) a figure."""
    tasks = list(tasks or zoo.tasks[:2])
    if len(tasks) != 2:
        raise NbmergeError(f"tour_preview shows a 2-task front; got tasks {tasks}")
    config = ParetoConfig(suite=zoo.manifest["suite"], tasks=tuple(tasks), device=device, seed=seed,
                          families=NESTED, components=components, ivon_steps=ivon_steps,
                          front_divisions_2=divisions, eval_examples=eval_examples)
    surrogates = prepare(zoo, config, log=log)
    alphas = pareto.simplex_grid(2, divisions)
    evaluator = subset_evaluator(zoo, tasks, eval_examples, config.device)
    result = {"tasks": tasks, "alphas": alphas.tolist(), "reference": accuracies(evaluator, surrogates["like"], tasks),
              "fronts": {}}
    for family in NESTED:
        start = time.perf_counter()
        thetas = merge_family(surrogates, family, [0, 1], alphas, config)
        seconds = time.perf_counter() - start
        result["fronts"][family] = {"accuracy": evaluate_front(evaluator, thetas, surrogates["like"], tasks).tolist(),
                                    "merge_seconds": seconds}
    result["hypervolume"] = {f: pareto.hypervolume(np.array(r["accuracy"]), np.array(result["reference"]))
                             for f, r in result["fronts"].items()}
    if plot:
        result["figure"] = plot_front_2d(result)
    return result
