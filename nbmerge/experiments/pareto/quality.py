"""Front quality with paired bootstrap intervals: hypervolume (P1), the gap closed (P2), cost rows (P3)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ...solvers import pareto
from .config import LEVEL, MIXTURE, MOST, MULTITASK_IVON, REPORTED_ALPHAS, ParetoConfig, label

# ---------------------------------------------------------------------------------------------------- quality

def accuracy_rows(predictions: dict) -> list[list[float]]:
    return [list(predictions[i].accuracy().values()) for i in sorted(predictions)]


def _correct(predictions: dict, tasks: Sequence[str]) -> list[np.ndarray]:
    """Per task: [A, n] correctness of the rows of ``predictions`` (row → Predictions) in row order."""
    rows = [predictions[i] for i in sorted(predictions)]
    return [np.stack([p.correct(t) for p in rows]) for t in tasks]


def bootstrap_indices(counts: Sequence[int], n_boot: int, seed: int) -> list[np.ndarray]:
    """Per task, [n_boot, n_t] test-example indices drawn with replacement: one draw shared by every model."""
    rng = np.random.default_rng([seed, 17])
    return [rng.integers(0, n, size=(n_boot, n)) for n in counts]


def resampled_accuracy(correct: Sequence[np.ndarray], draws: Sequence[np.ndarray]) -> np.ndarray:
    """[n_boot, A, T] accuracies of A models on every bootstrap draw (``correct``: per task [A, n_t])."""
    return np.stack([c[:, d].mean(-1).T for c, d in zip(correct, draws)], axis=-1)


def _hypervolumes(acc: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Hypervolume per bootstrap draw: ``acc`` [B, A, T], ``reference`` [B, T] → [B]."""
    return np.array([pareto.hypervolume(a, r) for a, r in zip(acc, reference)])


def _interval(values: np.ndarray) -> tuple[float, float]:
    tail = (1 - LEVEL) / 2
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)


def _at_chance(correct: Sequence[np.ndarray], predictions: dict) -> bool:
    from ...evaluate.protocol import CHANCE_MARGIN

    chance = next(iter(predictions.values())).chance()
    return float(np.mean([c.mean() for c in correct])) <= chance + CHANCE_MARGIN


def _agreement(a: dict, b: dict, tasks: Sequence[str]) -> float:
    same = total = 0
    for i in a:
        for t in tasks:
            pa, pb = a[i].logits[t].argmax(-1), b[i].logits[t].argmax(-1)
            same += int((pa == pb).sum())
            total += len(pa)
    return same / max(total, 1)


def _bootstrap_front(boot: dict, fronts: dict, base, name: str, tasks: Sequence[str], n_boot: int, seed: int):
    """Hypervolume of front ``name`` (point and on every bootstrap draw), recorded in ``boot``; the draws and the
    base model's resampled accuracies (the reference point moves with each draw) are shared by every front."""
    if "draws" not in boot:
        boot["draws"] = bootstrap_indices([len(base.labels[t]) for t in tasks], n_boot, seed)
        boot["reference"] = resampled_accuracy([base.correct(t)[None] for t in tasks], boot["draws"])[:, 0]
        boot["reference_point"] = np.array([base.correct(t).mean() for t in tasks])
    if name not in boot:
        correct = _correct(fronts[name], tasks)
        point = pareto.hypervolume(np.stack([c.mean(-1) for c in correct], -1), boot["reference_point"])
        boot[name] = {"point": point, "chance": _at_chance(correct, fronts[name]),
                      "draws": _hypervolumes(resampled_accuracy(correct, boot["draws"]), boot["reference"])}
    return boot[name]


HV_SCALE = 1e4   # hypervolume in accuracy points squared (pts²): fractions² × 100²


def _run_draws(k: int, n_boot: int, seed: int) -> np.ndarray:
    """[n_boot, k] run indices drawn with replacement (the first level of the hierarchical bootstrap)."""
    rng = np.random.default_rng([seed, 23])
    return rng.integers(0, k, size=(n_boot, k)) if k > 1 else np.zeros((n_boot, 1), dtype=int)


def compare_fronts(fronts: dict, base: "object", a: str, b, tasks: Sequence[str], n_boot: int = 2000,
                   seed: int = 0, boot: Optional[dict] = None, collapsed: Optional[str] = None) -> dict:
    """Decide "front ``a`` is closer to multitask than the fronts ``b``" (one name, or the K single-run fronts of
    a family) by hypervolume over the base model's accuracies: the estimate is HV(a) − mean_k HV(b_k) in pts², its
    interval a two-level bootstrap (the runs k with replacement, then the test examples within each task, one draw
    shared by every front and by the base); threshold 0 (:func:`nbmerge.evaluate.verdicts.decide`). Not tested when
    ``collapsed`` says why (the mixture is one of its runs), when every hypervolume is 0 (no point beats the base
    on every task), when a front is at chance, or when ``a`` makes the same test predictions as some ``b_k``
    (≥ 99.5% agreement). ``fronts``: name → {row: test Predictions}; ``base``: the base model's test Predictions;
    ``boot`` caches the resampled hypervolumes across calls."""
    from ...evaluate.protocol import COLLAPSED_AGREEMENT
    from ...evaluate.verdicts import decide, not_tested

    bs = [b] if isinstance(b, str) else list(b)
    boot = {} if boot is None else boot
    for name in (a, *bs):
        _bootstrap_front(boot, fronts, base, name, tasks, n_boot, seed)
    point = HV_SCALE * (boot[a]["point"] - float(np.mean([boot[x]["point"] for x in bs])))
    runs = _run_draws(len(bs), n_boot, seed)
    others = np.stack([boot[x]["draws"] for x in bs], axis=1)               # [B, K]
    samples = HV_SCALE * (boot[a]["draws"] - np.take_along_axis(others, runs, axis=1).mean(1))
    why = collapsed
    if why is None and boot[a]["point"] == 0 and all(boot[x]["point"] == 0 for x in bs):
        why = "no point of any front beats the base model on every task (every hypervolume is 0)"
    if why is None:
        chance = [x for x in (a, *bs) if boot[x]["chance"]]
        if chance:
            why = f"{label(chance[0])} is at chance along its front"
    if why is None:
        for x in bs:
            agreement = _agreement(fronts[a], fronts[x], tasks)
            if agreement >= COLLAPSED_AGREEMENT:
                why = (f"{label(a)} and {label(x)} are the same models: the same test prediction on "
                       f"{100 * agreement:.1f}% of examples (a comparison of training runs, not of posteriors)")
                break
    n = sum(len(base.labels[t]) for t in tasks)
    if why:
        decision = not_tested(why)
    else:
        decision = decide(point, samples, threshold=0.0, n=n, unit="pts²")
    low, high = decision.interval or [float("nan"), float("nan")]
    names = label(bs[0]).rsplit(", run", 1)[0] + (f" (mean of {len(bs)} runs)" if len(bs) > 1 else "")
    evidence = f"HV {label(a)} − {names}: " + decision.text("{:+.1f}")
    return {"a": a, "b": bs, "decision": decision, "diff": point, "interval": [low, high], "why": why,
            "evidence": evidence}


def gap_closed(simple, mixture: "object", multitask: "object", tasks: Sequence[str], n_boot: int = 2000,
               seed: int = 0, collapsed: Optional[str] = None, effect: Optional[float] = None) -> dict:
    """Share of the gap from simple merging to ``multitask`` that ``mixture`` closes, in % of test mean accuracy
    (each a Predictions at its validation-chosen α; ``simple`` one Predictions or one per IVON run k), with a
    two-level bootstrap interval (the runs k, then the test examples within each task, one draw shared by every
    model); decided against :data:`MOST` (50%) and the paper's ``effect`` (%). Not tested when ``collapsed`` says
    why, when a model is at chance, or when multitask is not reliably above simple merging (the interval of
    multitask − simple reaches 0: no gap to close)."""
    from ...evaluate.protocol import CHANCE_MARGIN
    from ...evaluate.verdicts import decide, not_tested

    simples = [simple] if not isinstance(simple, (list, tuple)) else list(simple)
    models = (*simples, mixture, multitask)
    k = len(simples)
    correct = [np.stack([m.correct(t) for m in models]) for t in tasks]
    draws = bootstrap_indices([c.shape[1] for c in correct], n_boot, seed)
    acc = resampled_accuracy(correct, draws).mean(-1)                   # [B, K + 2]
    point = np.array([np.mean([c[j].mean() for c in correct]) for j in range(k + 2)])
    simple_b = np.take_along_axis(acc[:, :k], _run_draws(k, n_boot, seed), axis=1).mean(1)
    denominator = acc[:, k + 1] - simple_b
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = 100 * np.where(denominator > 0, (acc[:, k] - simple_b) / denominator, np.nan)
    gap_low, gap_high = _interval(denominator)
    s0 = float(point[:k].mean())
    share = 100 * (point[k] - s0) / (point[k + 1] - s0) if point[k + 1] > s0 else float("nan")
    why = collapsed
    chance = [m.mean_accuracy() <= m.chance() + CHANCE_MARGIN for m in models]
    if why is None and any(chance):
        names = [f"simple run {i}" for i in range(k)] + ["mixture", "multitask"]
        why = f"{names[chance.index(True)]} is at chance"
    if why is None and not gap_low > 0:
        why = (f"multitask is not reliably above simple merging: multitask − simple = "
               f"{100 * (point[k + 1] - s0):+.1f} [{100 * gap_low:+.1f}, {100 * gap_high:+.1f}] pts, no gap to close")
    if why is None and np.isfinite(ratios).sum() < 10:
        why = "the gap is not positive on enough bootstrap draws"
    decision = not_tested(why) if why else decide(share, ratios, threshold=100 * MOST, effect=effect,
                                                  n=sum(c.shape[1] for c in correct), unit="% of the gap")
    text = (f"simple {100 * s0:.1f}%{f' (mean of {k} runs)' if k > 1 else ''} → mixture {100 * point[k]:.1f}% vs "
            f"multitask {100 * point[k + 1]:.1f}%; share closed " + decision.text("{:.0f}"))
    low, high = decision.interval or [float("nan"), float("nan")]
    return {"decision": decision, "share": share, "interval": [low, high],
            "accuracy": [s0, float(point[k]), float(point[k + 1])], "why": why, "evidence": text}


def _pct(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{100 * value:.0f}%"


def _val_choice(val: dict) -> int:
    """The row with the best mean validation accuracy (ties: the first)."""
    rows = sorted(val)
    scores = [val[i].mean_accuracy() for i in rows]
    return rows[int(np.argmax(scores))]


def quality(result: dict, config: ParetoConfig) -> list[dict]:
    """Per front (and multitask): test hypervolume over the base with its bootstrap interval, the α-matched gap
    at the multitask α, and the α chosen on validation among the multitask α with its test mean accuracy."""
    preds = result["predictions"]
    tasks, matched = result["tasks"], result["matched"]
    base = preds["base"]["test"]
    truth_test = preds["multitask"]["test"]
    fronts = dict(preds["fronts"])
    everything = {**{n: p["test"] for n, p in fronts.items()}, "multitask": truth_test}
    if MULTITASK_IVON in preds:
        everything[MULTITASK_IVON] = preds[MULTITASK_IVON]["test"]
    boot: dict = {}
    result["_boot"] = boot
    truth_acc = np.array(accuracy_rows(truth_test))
    rows = []
    for name, test in everything.items():
        _bootstrap_front(boot, everything, base, name, tasks, config.bootstrap, config.seed)
        acc = np.array(accuracy_rows(test))
        if name in ("multitask", MULTITASK_IVON):
            chosen = _val_choice(preds[name]["val"])
            chosen_alpha, chosen_test = result["multitask_alphas"][chosen], test[chosen].mean_accuracy()
            gap = 0.0 if name == "multitask" else pareto.alpha_matched_gap(acc, truth_acc)
        else:
            val = {i: fronts[name]["val"][i] for i in matched}
            chosen = _val_choice(val)
            chosen_alpha, chosen_test = result["alphas"][chosen], test[chosen].mean_accuracy()
            gap = pareto.alpha_matched_gap(acc[matched], truth_acc)
        low, high = _interval(boot[name]["draws"])
        rows.append({"front": name, "label": label(name), "hypervolume": boot[name]["point"],
                     "hypervolume_low": low, "hypervolume_high": high, "gap": gap,
                     "val_alpha": [round(a, 3) for a in chosen_alpha], "val_chosen_test_accuracy": chosen_test})
    return rows


def _collapse_reason(result: dict) -> Optional[str]:
    c = result.get("collapsed")
    if not c:
        return None
    return (f"the mixture collapsed onto one IVON run per task at the chosen τ ({c['text']}): comparing it with "
            "single runs compares training runs (budgets, seeds), not posterior families")


def p1_decisions(result: dict, config: ParetoConfig) -> list[dict]:
    """Mixture vs IVON-Hess (P1a) and vs simple (P1b), each over the K single runs of the family on one subset
    (:func:`compare_fronts`)."""
    preds = result["predictions"]
    fronts = {n: p["test"] for n, p in preds["fronts"].items()}
    base = preds["base"]["test"]
    boot = result.setdefault("_boot", {})
    out = []
    for family in ("ivon_hess", "simple"):
        names = [f"{family}@{k}" for k in range(config.components) if f"{family}@{k}" in fronts]
        if names and MIXTURE in fronts:
            out.append({"family": family, **compare_fronts(fronts, base, MIXTURE, names, result["tasks"],
                                                           config.bootstrap, config.seed, boot,
                                                           _collapse_reason(result))})
    return out


def p2_decisions(result: dict, config: ParetoConfig) -> list[dict]:
    """Gap closed by the mixture from simple merging (over the K single runs) to multitask fine-tuning, each
    model at its validation-chosen α among the multitask α (:func:`gap_closed`). The reference is the IVON
    multitask run (the posteriors' optimizer and steps) when there is one, else AdamW multitask; both are given."""
    from .config import MULTITASK_IVON, PAPER_SHARE

    preds = result["predictions"]
    matched = result["matched"]
    fronts = preds["fronts"]
    if MIXTURE not in fronts:
        return []
    mixture = fronts[MIXTURE]
    mix = mixture["test"][_val_choice({i: mixture["val"][i] for i in matched})]
    simples = [fronts[f"simple@{k}"]["test"][_val_choice({i: fronts[f"simple@{k}"]["val"][i] for i in matched})]
               for k in range(config.components) if f"simple@{k}" in fronts]
    if not simples:
        return []
    out = []
    for reference in (MULTITASK_IVON, "multitask"):
        if reference in preds:
            truth = preds[reference]
            mtl = truth["test"][_val_choice(truth["val"])]
            out.append({"reference": reference, **gap_closed(simples, mix, mtl, result["tasks"], config.bootstrap,
                                                             config.seed, _collapse_reason(result), PAPER_SHARE)})
    return out


def cost_rows(results: Sequence[dict], surrogates: dict) -> list[dict]:
    """Per subset and front: the merge time per α as the evaluated front's merges ran (one timing each, for
    orientation), against one multitask run at the P3 measurement's median step time × its steps."""
    rows = []
    for result in results:
        cost = result.get("cost") or {}
        run = (float(np.median(cost["step_seconds"])) * cost["steps"]) if cost.get("step_seconds") else float("nan")
        timing = result["timing"]
        for name, seconds in timing["seconds"].items():
            seconds = float("nan") if seconds is None else seconds  # a record stored without a measurement
            per_alpha = seconds / timing["alphas"]
            rows.append({"subset": "+".join(result["tasks"]), "front": name, "alphas": timing["alphas"],
                         "front_seconds": seconds, "seconds_per_alpha": per_alpha,
                         f"front_{REPORTED_ALPHAS}_seconds": per_alpha * REPORTED_ALPHAS,
                         "eval_seconds_per_alpha": result["eval_seconds"], "multitask_run_seconds": run,
                         "runs_per_front": per_alpha * REPORTED_ALPHAS / run if run > 0 else float("nan")})
    return rows


def p3_measure(result: dict, n_boot: int = 2000, seed: int = 0) -> Optional[dict]:
    """P3's numbers from the interleaved timings (:func:`~.runs.time_cost`): the per-α merge (median), one
    multitask run (median step × steps), the speedup of a front over as many multitask runs (a run's cost over
    a per-α merge's) with bootstrap samples over the repeats, a 101-α front's cost and how many runs it equals."""
    cost = result.get("cost")
    if not cost or not cost.get("step_seconds") or not cost.get("merge_seconds"):
        return None
    merge, step = np.array(cost["merge_seconds"]), np.array(cost["step_seconds"])
    rng = np.random.default_rng([seed, 31])
    m = np.median(merge[rng.integers(0, len(merge), (n_boot, len(merge)))], axis=1)
    s = np.median(step[rng.integers(0, len(step), (n_boot, len(step)))], axis=1)
    per_alpha, run = float(np.median(merge)), float(np.median(step)) * cost["steps"]
    front = per_alpha * REPORTED_ALPHAS
    return {"merge_seconds_per_alpha": per_alpha, "step_seconds": float(np.median(step)), "steps": cost["steps"],
            "run_seconds": run, "speedup": run / per_alpha, "samples": s * cost["steps"] / m,
            f"front_{REPORTED_ALPHAS}_seconds": front, "runs_per_front": front / run,
            "merge_flops_per_alpha": cost["merge_flops"], "run_flops": cost["step_flops"] * cost["steps"],
            "repeats": len(merge), "em_iterations": cost["em_iterations"], "threads": cost.get("threads")}
