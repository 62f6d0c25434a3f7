"""Front quality with paired bootstrap intervals: hypervolume (P1), the gap closed (P2), cost rows (P3)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ...solvers import pareto
from .config import LEVEL, MIXTURE, MOST, REPORTED_ALPHAS, ParetoConfig, label

# ---------------------------------------------------------------------------------------------------- quality

def _accuracy_rows(predictions: dict) -> list[list[float]]:
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
    from ...protocol import CHANCE_MARGIN

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


def compare_fronts(fronts: dict, base: "object", a: str, b: str, tasks: Sequence[str], n_boot: int = 2000,
                   seed: int = 0, boot: Optional[dict] = None) -> dict:
    """Decide "front ``a`` is closer to multitask than front ``b``" by hypervolume over the base model's accuracies:
    held when the paired bootstrap 95% interval of HV(a) − HV(b) lies above 0; not tested when both hypervolumes
    are 0 (no point of either front beats the base on every task), when the two fronts make the same test
    predictions (≥ 99.5% agreement) or when one is at chance. ``fronts``: name → {row: test Predictions};
    ``base``: the base model's test Predictions. ``boot`` caches the resampled hypervolumes across calls."""
    from ...protocol import COLLAPSED_AGREEMENT

    boot = {} if boot is None else boot
    for name in (a, b):
        _bootstrap_front(boot, fronts, base, name, tasks, n_boot, seed)
    diff = boot[a]["point"] - boot[b]["point"]
    low, high = _interval(boot[a]["draws"] - boot[b]["draws"])
    why = None
    if boot[a]["point"] == 0 and boot[b]["point"] == 0:
        why = "no point of either front beats the base model on every task (both hypervolumes are 0)"
    elif boot[a]["chance"] or boot[b]["chance"]:
        why = f"{label(a) if boot[a]['chance'] else label(b)} is at chance along its front"
    else:
        agreement = _agreement(fronts[a], fronts[b], tasks)
        if agreement >= COLLAPSED_AGREEMENT:
            why = f"the fronts are the same models: the same test prediction on {100 * agreement:.1f}% of examples"
    held = None if why else low > 0
    evidence = (f"HV {label(a)} − {label(b)} = {diff:+.4g} [{low:+.4g}, {high:+.4g}]"
                + (f" (not tested: {why})" if why else ""))
    return {"a": a, "b": b, "held": held, "diff": diff, "interval": [low, high], "why": why, "evidence": evidence}


def gap_closed(simple: "object", mixture: "object", multitask: "object", tasks: Sequence[str], n_boot: int = 2000,
               seed: int = 0) -> dict:
    """Share of the gap from ``simple`` to ``multitask`` that ``mixture`` closes, in test mean accuracy (each a
    Predictions at its validation-chosen α), with a paired bootstrap 95% interval. Held when the interval's lower
    end is above :data:`MOST`; not tested when multitask is not above simple merging by more than the interval
    (no gap to close: its own interval reaches 0) or a model is at chance."""
    from ...protocol import CHANCE_MARGIN

    models = (simple, mixture, multitask)
    correct = [np.stack([m.correct(t) for m in models]) for t in tasks]
    draws = bootstrap_indices([c.shape[1] for c in correct], n_boot, seed)
    acc = resampled_accuracy(correct, draws).mean(-1)                   # [B, 3]
    point = np.array([np.mean([c[j].mean() for c in correct]) for j in range(3)])
    denominator = acc[:, 2] - acc[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(denominator > 0, (acc[:, 1] - acc[:, 0]) / denominator, np.nan)
    gap_low, gap_high = _interval(denominator)
    share = (point[1] - point[0]) / (point[2] - point[0]) if point[2] > point[0] else float("nan")
    low, high = _interval(ratios)
    why = None
    chance = [m.mean_accuracy() <= m.chance() + CHANCE_MARGIN for m in models]
    if any(chance):
        why = f"{('simple', 'mixture', 'multitask')[chance.index(True)]} is at chance"
    elif not gap_low > 0:
        why = (f"multitask is not reliably above simple merging: multitask − simple = "
               f"{100 * (point[2] - point[0]):+.1f} [{100 * gap_low:+.1f}, {100 * gap_high:+.1f}] pts, no gap to close")
    held = None if why else low > MOST
    text = f"simple {100 * point[0]:.1f}% → mixture {100 * point[1]:.1f}% vs multitask {100 * point[2]:.1f}%"
    if why:
        text += f" (not tested: {why})"
    else:
        text += f": {_pct(share)} of the gap closed [{_pct(low)}, {_pct(high)}]"
    return {"held": held, "share": share, "interval": [low, high], "accuracy": point.tolist(), "why": why,
            "evidence": text}


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
    boot: dict = {}
    result["_boot"] = boot
    truth_acc = np.array(_accuracy_rows(truth_test))
    rows = []
    for name, test in everything.items():
        _bootstrap_front(boot, everything, base, name, tasks, config.bootstrap, config.seed)
        acc = np.array(_accuracy_rows(test))
        if name == "multitask":
            chosen = _val_choice(preds["multitask"]["val"])
            chosen_alpha, chosen_test = result["multitask_alphas"][chosen], truth_test[chosen].mean_accuracy()
            gap = 0.0
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


def p1_decisions(result: dict, config: ParetoConfig) -> list[dict]:
    """Mixture vs IVON-Hess and vs simple of every single run k on one subset (:func:`compare_fronts`)."""
    preds = result["predictions"]
    fronts = {n: p["test"] for n, p in preds["fronts"].items()}
    base = preds["base"]["test"]
    boot = result.setdefault("_boot", {})
    out = []
    for family in ("ivon_hess", "simple"):
        for k in range(config.components):
            name = f"{family}@{k}"
            if name in fronts:
                out.append(compare_fronts(fronts, base, MIXTURE, name, result["tasks"], config.bootstrap,
                                          config.seed, boot))
    return out


def p2_decisions(result: dict, config: ParetoConfig) -> list[dict]:
    """Gap closed by the mixture against simple of every single run k, each model at its validation-chosen α among
    the multitask α (:func:`gap_closed`)."""
    preds = result["predictions"]
    matched = result["matched"]
    fronts = preds["fronts"]
    truth = preds["multitask"]
    mixture = fronts[MIXTURE]
    mix = mixture["test"][_val_choice({i: mixture["val"][i] for i in matched})]
    mtl = truth["test"][_val_choice(truth["val"])]
    out = []
    for k in range(config.components):
        name = f"simple@{k}"
        if name not in fronts:
            continue
        simple = fronts[name]["test"][_val_choice({i: fronts[name]["val"][i] for i in matched})]
        out.append({"run": k, **gap_closed(simple, mix, mtl, result["tasks"], config.bootstrap, config.seed)})
    return out


def cost_rows(results: Sequence[dict], surrogates: dict) -> list[dict]:
    """Per subset and front: the measured merge time of a front of many α against one multitask run (recorded
    training seconds, mean over the runs that are not zoo experts) and the sweep over as many α."""
    rows = []
    for result in results:
        trained = [s for s in result["multitask"]["train_seconds"] if np.isfinite(s)]
        one_run = float(np.mean(trained)) if trained else float("nan")
        timing = result["timing"]
        for name, seconds in timing["seconds"].items():
            seconds = float("nan") if seconds is None else seconds  # a record stored without a measurement
            per_alpha = seconds / timing["alphas"]
            rows.append({"subset": "+".join(result["tasks"]), "front": name, "alphas": timing["alphas"],
                         "front_seconds": seconds, "seconds_per_alpha": per_alpha,
                         f"front_{REPORTED_ALPHAS}_seconds": per_alpha * REPORTED_ALPHAS,
                         "eval_seconds_per_alpha": result["eval_seconds"],
                         "one_multitask_run_seconds": one_run, "sweep_seconds": one_run * timing["alphas"],
                         "speedup_vs_sweep": one_run / per_alpha if per_alpha > 0 else float("nan")})
    return rows
