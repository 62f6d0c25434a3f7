"""The claims P1a, P1b, P2, P3 with their outcomes, the headline, the notebook's tables and metrics.json."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..common import claim
from .config import (
    MIXTURE,
    MOST,
    MULTITASK_IVON,
    NESTED,
    PAPER_EXAMPLE,
    PAPER_SHARE,
    PAPER_SPEEDUP,
    REPORTED_ALPHAS,
    SOURCE_COST,
    SOURCE_EXAMPLE,
    SOURCE_THEOREM,
    SPEEDUP,
    ParetoConfig,
    label,
)
from .quality import p1_decisions, p2_decisions, p3_measure

# ----------------------------------------------------------------------------------------------------- claims

PAPER_SETTING = "the paper's ViT-B/32 (K = 10 IVON runs), RoBERTa (K = 3) and Gemma-2B experiments"


def _setting(config: ParetoConfig, result: dict) -> str:
    steps = f"{config.ivon_steps} steps" if config.ivon_steps else "the experts' steps"
    return (f"{config.suite}: the {len(result['tasks'])}-task subset {' + '.join(result['tasks'])} of the zoo's "
            f"encoder, K = {config.components} IVON runs per task ({steps}), {len(result['alphas'])} α on the front, "
            f"the whole test split (analogue of {PAPER_SETTING})")


def _others(results: Sequence[dict], pick) -> str:
    """The decisions of the subsets after the first (the 3-task one), for information: the first decides."""
    extra = [f"{'+'.join(r['tasks'])} (for information): {pick(i)}" for i, r in enumerate(results) if i > 0]
    return ("; " + "; ".join(extra)) if extra else ""


def pareto_claims(results: Sequence[dict], costs: Sequence[dict], surrogates: dict, config: ParetoConfig) -> list:
    """P1a, P1b, P2 and P3, decided on the first (2-task) subset; a 3-task subset's numbers are given beside."""
    from ...evaluate.verdicts import not_tested

    out = []
    suite = config.suite
    families = set(config.families)
    first = results[0] if results else None
    setting = _setting(config, first) if first else config.suite
    if set(NESTED) <= families and first:
        tau = first["temperature"]["chosen"]
        chosen = f"temperature chosen on validation: τ = {tau['factor']:g}·G = {tau['tau']:.4g}"
        if first.get("collapsed"):
            chosen += f"; at it the mixture collapsed: {first['collapsed']['text']}"
        p1 = {r_i: {d["family"]: d for d in p1_decisions(r, config)} for r_i, r in enumerate(results)}
        for cid, family, name in (("P1a", "ivon_hess", "IVON-Hess"), ("P1b", "simple", "simple merging")):
            d = p1[0].get(family)
            decision = d["decision"] if d else not_tested(f"no {name} front")
            out.append(claim(
                f"The mixture-weighted (MultiIVON-Hess) front is closer to the multitask front than {name}'s "
                f"(hypervolume over the base model, in pts²: HV(mixture) − mean over the K single IVON runs of "
                f"HV({name}) must clear 0; interval over runs, then test examples)",
                SOURCE_THEOREM, decision,
                chosen + "; " + (d["evidence"] if d else decision.text()) +
                _others(results, lambda i: p1[i][family]["evidence"] if family in p1[i] else "n/a"),
                id=cid, paper=("theorem: mixture ≥ Hessian ≥ simple fronts, the mixture's closest to multitask "
                               f"(no number; {PAPER_SETTING})"),
                ours=decision.text("{:+.1f}") if decision.outcome != "not tested" else "not tested",
                suite=suite, setting=setting))
        gaps = [p2_decisions(r, config) for r in results]
        d = gaps[0][0] if gaps[0] else None
        decision = d["decision"] if d else not_tested("no simple front or no mixture")
        ref = label(d["reference"]) if d else ""
        others = "; ".join(f"against {label(g['reference'])}: {g['evidence']}" for g in gaps[0][1:])
        out.append(claim(
            f"The mixture closes most of the gap from simple merging to multitask fine-tuning (share of the test "
            f"mean-accuracy gap closed, every model at its validation-chosen α among the multitask α, must clear "
            f"{100 * MOST:.0f}%; the paper's {PAPER_SHARE:.0f}% is the effect; reference: {ref})",
            SOURCE_EXAMPLE, decision,
            (f"against {ref}: {d['evidence']}" if d else decision.text()) + (f"; {others}" if others else "") +
            _others(results, lambda i: gaps[i][0]["evidence"] if gaps[i] else "n/a"),
            id="P2", paper=(f"{PAPER_EXAMPLE[0]}% simple → {PAPER_EXAMPLE[1]}% mixture vs {PAPER_EXAMPLE[2]}% "
                            f"multitask ({PAPER_SHARE:.0f}% of the gap; {PAPER_SETTING})"),
            ours=decision.text("{:.0f}") if decision.outcome != "not tested" else "not tested",
            suite=suite, setting=setting))
    else:
        for cid, text in (("P1a", "The mixture's front is closer to the multitask front than IVON-Hess's"),
                          ("P1b", "The mixture's front is closer to the multitask front than simple merging's"),
                          ("P2", "The mixture closes most of the gap")):
            why = f"needs the families {', '.join(NESTED)}" if first else "no subset was run"
            out.append(claim(text, SOURCE_EXAMPLE if cid == "P2" else SOURCE_THEOREM, not_tested(why),
                             id=cid, suite=suite, setting=setting))
    out.append(p3_claim(results, surrogates, config, setting))
    return out


def p3_claim(results: Sequence[dict], surrogates: dict, config: ParetoConfig, setting: str = ""):
    from ...evaluate.verdicts import decide, not_tested

    m = p3_measure(results[0], config.bootstrap, config.seed) if results else None
    text = ("Once the surrogates exist, a front of hundreds of α takes seconds against hours of multitask "
            f"fine-tuning (a front of α is ≥ {SPEEDUP:.0f}× cheaper than as many multitask runs: one run's training "
            "time over the mixture's per-α merge time, medians of interleaved timings on one machine state; "
            "evaluation excluded on both sides)")
    paper = f"Gemma-2B: about 1 minute of merging against 17 hours of multitask training ({PAPER_SPEEDUP:.0f}×)"
    ivon = surrogates.get("costs", {}).get("ivon", {})
    once = (f"; the surrogates' one-time cost: {ivon['runs']} IVON runs, {ivon['seconds_total']:.0f} s in all "
            f"(recorded)" if ivon else "")
    if m is None:
        why = ("no multitask run was trained (every multitask α is a zoo expert), so there is no run to time"
               if results and results[0].get("temperature") else "no mixture front to time")
        return claim(text, SOURCE_COST, not_tested(why), id="P3", paper=paper, suite=config.suite, setting=setting)
    decision = decide(m["speedup"], m["samples"], threshold=SPEEDUP, effect=PAPER_SPEEDUP, unit="×")
    recorded = [s for s in results[0]["multitask"]["train_seconds"] if s is not None and np.isfinite(s)]
    front = m[f"front_{REPORTED_ALPHAS}_seconds"]
    evidence = (
        f"mixture merge {m['merge_seconds_per_alpha']:.2f} s per α ({m['em_iterations']} EM steps, "
        f"≈{m['merge_flops_per_alpha'] / 1e9:.3g} GFLOP analytic) vs one multitask training step "
        f"{m['step_seconds']:.2f} s (≈{m['run_flops'] / m['steps'] / 1e9:.3g} GFLOP counted) × {m['steps']} steps "
        f"= {m['run_seconds']:.0f} s per multitask run (medians of {m['repeats']} interleaved timings, "
        f"{m['threads']} threads; the run trained here took {', '.join(f'{s:.0f} s' for s in recorded)} as "
        f"recorded); FLOPs: {m['run_flops'] / max(m['merge_flops_per_alpha'], 1):.0f}× more for a run than for "
        f"an α. A front of {REPORTED_ALPHAS} α costs {front:.0f} s ({front / 60:.1f} min): as much as "
        f"{m['runs_per_front']:.1f} multitask runs; it replaces {REPORTED_ALPHAS} runs only if one would have "
        f"trained one per α. Speedup per α " + decision.text("{:.0f}") + once)
    return claim(text, SOURCE_COST, decision, evidence, id="P3", paper=paper,
                 ours=f"{front:.0f} s for {REPORTED_ALPHAS} α vs {m['run_seconds']:.0f} s per multitask run "
                      f"({m['speedup']:.0f}× per α; the front = {m['runs_per_front']:.1f} runs)",
                 suite=config.suite, setting=setting)


def headline(results: Sequence[dict]) -> dict:
    last = results[-1]
    q = {row["front"]: row for row in last["quality"]}
    name = MIXTURE if MIXTURE in q else next(iter(q))
    return {"name": f"{label(name)} α-matched gap to multitask fine-tuning ({'+'.join(last['tasks'])}), "
                    "accuracy points", "value": 100 * q[name]["gap"], "format": "{:.2f}"}


def temperature_rows(result: dict) -> list[dict]:
    """The temperature candidates: factor f, τ, mean validation accuracy of the mixture front, mean EM steps."""
    t = result["temperature"]
    if t is None:
        return []
    return [{"factor": c["factor"], "tau": c["tau"], "val_accuracy": c["val_accuracy"],
             "em_steps": float(np.mean([r["iterations"] for r in c["em"]])),
             "max_responsibility": float(np.mean([max(max(r) for r in e["responsibilities"]) for e in c["em"]])),
             "chosen": "✓" if c["factor"] == t["chosen"]["factor"] else ""} for c in t["candidates"]]


def responsibility_rows(result: dict) -> list[dict]:
    """Per mixture front, α and task: the responsibilities of the K runs at the merged θ, the run the task's
    mixture picks (the largest), and EM's steps."""
    rows = []
    for name, records in result["em"].items():
        for alpha, record in zip(result["alphas"], records):
            for task, r in zip(result["tasks"], record["responsibilities"]):
                rows.append({"front": "chosen τ" if name == MIXTURE else "τ = 1", "alpha": [round(a, 3) for a in alpha],
                             "task": task, "responsibilities": " ".join(f"{x:.3f}" for x in r),
                             "picks_run": int(np.argmax(r)), "em_steps": record["iterations"]})
    return rows


def metrics(results: Sequence[dict], costs: Sequence[dict], surrogates: dict) -> dict:
    """What metrics.json keeps: every number above, without the per-example predictions."""
    keep = []
    for result in results:
        row = {k: v for k, v in result.items() if k not in ("predictions", "_boot")}
        if row.get("temperature"):
            row["temperature"] = {k: v for k, v in row["temperature"].items() if k != "states"}
        keep.append(row)
    return {"subsets": keep, "costs": costs, "surrogate_costs": surrogates["costs"]}
