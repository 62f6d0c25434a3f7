"""The verdicts of ``notebooks/10_ace.ipynb`` (claims A1–A5), its headline, and what its metrics.json keeps.

Each claim is decided from this run's predictions (normalized by the zoo experts' test accuracy) by the rule the
notebook states: "A beats B" when the paired bootstrap 95% interval of A − B lies above 0
(:func:`nbmerge.protocol.beats`); comparisons of models at chance or collapsed onto one another are not tested.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from .. import protocol
from ..diagnostics import COMPONENTS, LADDER
from .ace import AceConfig, Run, setting
from .common import claim

SOURCE = "ACE-Merging, arXiv 2603.02945"
# A3 thresholds (the paper says "comparable" and "far below" without numbers): comparable = at most 3× TSV-M's
# merge time; far below = at most a fifth of WUDI's.
COMPARABLE_FACTOR = 3.0
FAR_BELOW_FACTOR = 5.0
NOT_IN_DEFAULT = ("the default profile runs one suite; `nbmerge report --profile paper` runs text8/14/20")


# ------------------------------------------------------------------------------------------------ margins

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
        samples.append(protocol.bootstrap_samples(runs["ace"].test, runs[gap["best_other"]].test, runs["ace"].expert,
                                         seed=k))
    growth = protocol.quantile_interval(samples[1] - samples[0], large["diff"] - small["diff"])
    return claim(text, source, growth["low"] > 0,
                 "margin = ACE − the validation-best other method: " + ", ".join(
                     f"{g['tasks']} tasks ({g['best_other']}) {_fmt(g)}"
                     for g in sorted(gaps, key=lambda g: g["tasks"]))
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
                 id="A3", paper=paper,
                 ours=f"ACE/TSV-M {s['ace'] / s['tsv']:.2f}×, ACE/WUDI {s['ace'] / s['wudi']:.3f}×", suite=suite)


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
    evidence = "; ".join(f"[{setting(d['setting'])}] {d['evidence']}" for d in decisions)
    if untested:
        evidence += f"; tested nowhere (inactive, or every comparison vacuous): {', '.join(untested)}"
    ours = "; ".join(f"{setting(d['setting'])} {d['component']} {_fmt(d['interval'])}" for d in decisions
                     if d["interval"] is not None and d["held"] is not None)
    return claim("each ACE component adds accuracy (normalisation, structural prior, refinement) where it is active",
                 f"{SOURCE}, ablation", held, evidence, id="A4",
                 paper="ViT-B/16 8 tasks: 89.91 → 89.91 → 90.60 → 90.60 (gated steps off); GPT-2: 68.72 → 71.50 → "
                       "71.51 → 74.09; RoBERTa-Large: 80.05 → 88.04 → 86.79 → 91.68",
                 ours=ours or "—", suite=suite)


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


def metrics(bench, zoo_result: dict, hetero_result: Optional[dict], timing: Optional[dict], hetero_info: dict) -> dict:
    """What metrics.json keeps: numbers, curves and intervals (no logits)."""
    def runs(result):
        return {label: {"alpha": run.tuned.alpha, "curve": run.tuned.curve, "recipe": run.tuned.recipe,
                        **{k: v for k, v in run.summary.items()}} for label, run in result["runs"].items()}

    ladders = {r["experts"]: {"gate": {k: v for k, v in r["gate"].items() if k != "gamma"}, "steps": r["steps"],
                              "runs": runs(r)} for r in (zoo_result, hetero_result) if r is not None}
    return {"benchmark": {suite: runs({"runs": rs}) for suite, rs in bench.items()},
            "margins": margins(bench), "ablation": ladders, "merge_seconds": timing, "heterogeneous": hetero_info}

