"""The claims of ``notebooks/00_tour.ipynb``: each baseline paper against task arithmetic (T1–T5, T9 AdaMerging), BMM
against its anchor (T6–T7), RegMean++ against RegMean (T8), each decided by :func:`nbmerge.evaluate.verdicts.compare`
over the validation seeds and the test examples (held, contradicted, inconclusive or not tested)."""

from __future__ import annotations

from ..evaluate import verdicts
from ..evaluate.claims import claim

SETTING = "{suite}: {tasks} tasks, {experts}; α of every model chosen on {seeds} seeded validation subsets"
#: what our experts stand for, unless they are the papers' own kind (CLIP ViTs)
ANALOGUE = " (the analogue of the papers' ViT × 8)"
# The paper's effect of each claim, in points, in the estimate's orientation (the paper's own model and benchmark:
# our estimate is normalized accuracy on the text zoo, so the number is a scale, not a target).
EFFECTS = {"T1": 75.1 - 70.8, "T2": 92.3 - 76.6, "T3": 86.2 - 70.8, "T4": 82.4 - 68.0, "T5": 90.6 - 75.4,
           "T8": 84.4 - 82.4, "T9": 82.6 - 68.0}
EFFECT_UNITS = {"T1": "absolute points, ViT-B/32 × 8", "T2": "normalized points, ViT-B/32 × 8",
                "T3": "absolute points, ViT-B/32 × 8", "T4": "absolute points, CLIP ViT-B/32 × 8",
                "T5": "absolute points, ViT-B/16 × 8", "T8": "absolute points, CLIP ViT-B/32 × 8",
                "T9": "absolute points, CLIP ViT-B/32 × 8"}
# (id, model, claim, source, the paper's own figure). The three main papers have their own notebooks; the tour
# checks what each baseline claims against task arithmetic, and BMM against its anchor at the registered prior.
_CLAIMS = (
    ("T1", "ties", "TIES-Merging beats task arithmetic by trimming and resolving sign conflicts",
     "Yadav et al., NeurIPS 2023, arXiv 2306.01708; numbers as re-run in Marczak et al., arXiv 2502.04959, Table 1",
     "ViT-B/32, 8 tasks: 75.1% vs 70.8% absolute (above TA in all 9 vision settings of that table)"),
    ("T2", "tsv", "TSV-M beats task arithmetic by decorrelating the tasks' singular subspaces",
     "Gargiulo et al., CVPR 2025, arXiv 2412.00081, Table 2",
     "ViT-B/32, 8 tasks: 85.9% vs 70.8% absolute (92.3% vs 76.6% normalized)"),
    ("T3", "iso_cts", "ISO-CTS beats task arithmetic by flattening the spectrum of the merged update",
     "Marczak et al., ICML 2025, arXiv 2502.04959, Table 1",
     "ViT-B/32, 8 tasks: 86.2% vs 70.8% absolute"),
    ("T4", "regmean", "RegMean, which sees activation statistics, beats data-free task arithmetic",
     "Jin et al., ICLR 2023, arXiv 2212.09849 (the method); FusionBench's CLIP model-pool docs (the comparison)",
     "CLIP ViT-B/32, 8 tasks (FusionBench): 82.4% vs 68.0% absolute"),
    ("T5", "ace", "ACE-Merging (ε = 1e-5, the paper's ViT value), data-free, beats task arithmetic",
     "ACE-Merging, arXiv 2603.02945 (ViT-B/16 results table)",
     "ViT-B/16, 8/14/20 tasks: 90.6/86.1/82.1% vs 75.4/70.5/65.8% absolute"),
    ("T9", "adamerging", "Layer-wise AdaMerging, whose coefficients are learned on unlabeled inputs, beats task "
                         "arithmetic",
     "Yang et al., ICLR 2024, arXiv 2310.02575 (the method; it adapts on the unlabeled test inputs, here on "
     "validation inputs); FusionBench's CLIP model-pool docs (the comparison)",
     "CLIP ViT-B/32, 8 tasks (FusionBench): 82.6% vs 68.0% absolute"),
)
# Claims of a method against the method it extends (not against task arithmetic): (id, model, reference, claim,
# source, the paper's own figure).
_PAIR_CLAIMS = (
    ("T8", "regmean_plusplus", "regmean",
     "RegMean++, whose Grams see the merged earlier blocks, beats RegMean",
     "Nguyen et al., arXiv 2508.03121 (the method; \"consistently outperforms RegMean\"); the numbers as its first "
     "author added them to FusionBench's CLIP model-pool docs (256 examples per task, offdiag 0.95)",
     "CLIP ViT-B/32, 8 tasks: 84.4% vs 82.4% absolute (B/16 87.2 vs 86.0, L/14 91.0 vs 90.4)"),
)
_BMM_CLAIMS = (
    ("T6", "BMM data-assisted", "BMM with data Grams beats its anchor (at the registered prior strength)"),
    ("T7", "BMM data-free", "Data-free BMM (task-vector Grams, Theorem 1) beats its anchor (at the registered "
                            "prior strength)"),
)
_BMM_SOURCE = "BMM, arXiv 2605.12843, abstract"
_BMM_PAPER = ("ViT-L/14, 8 tasks: one merged model 95.1% vs the experts' 95.8%; above every anchor it plugs into "
              "(no gap over the anchor stated in the abstract)")


def _setting(comparison) -> str:
    experts = comparison.experts_label + ("" if comparison.experts_label.startswith("CLIP") else ANALOGUE)
    return SETTING.format(suite=comparison.suite, tasks=len(comparison.tasks), experts=experts,
                          seeds=len(comparison.seeds))


def _published(comparison, name: str, ref: str) -> str:
    """The two methods' published figures on this pool's very checkpoints, when there are both (else "")."""
    figures = comparison.published
    if not figures or name not in figures["methods"] or ref not in figures["methods"]:
        return ""
    from ..pools.published import mean_over_tasks

    tasks, experts = figures["tasks"], figures["experts"]

    def mean(values, normalized=False):
        return 100 * mean_over_tasks(values, tasks, experts if normalized else None)

    a, b = figures["methods"][name], figures["methods"][ref]
    return (f"; published for these very checkpoints ({figures['setting']}, {figures['source']['repository']}): "
            f"{mean(a):.1f}% vs {mean(b):.1f}% absolute, {mean(a, True):.1f}% vs {mean(b, True):.1f}% normalized")


def _verdict(id_, text, source, paper, comparison, name: str, ref: str | None = None):
    ref = ref or comparison.reference
    paper += _published(comparison, name, ref)
    if name not in comparison.runs or ref not in comparison.runs:
        missing = name if name not in comparison.runs else ref
        why = f"{missing} was not run (parameters `methods`/`bmm_grams`)"
        return claim(text, source, verdicts.not_tested(why), f"not tested: {why}", id=id_, paper=paper,
                     suite=comparison.suite, setting=_setting(comparison))
    effect = EFFECTS.get(id_)
    decision = verdicts.compare(comparison.pairs(name, ref), comparison.expert, threshold=0.0, effect=effect,
                                names=(name, ref), seed=comparison.seed)
    seeds = len(comparison.pairs(name, ref))
    ours = f"{100 * comparison.normalized(name):.1f}% vs {100 * comparison.normalized(ref):.1f}% normalized"
    if decision.outcome != "not tested":
        ours += f"; Δ {decision.estimate:+.2f} [{decision.interval[0]:+.2f}, {decision.interval[1]:+.2f}] pts"
    alphas = "; ".join(f"{m} {', '.join(f'{a:g}' for a in comparison.alphas(m))}" for m in (name, ref))
    evidence = (f"{name} − {ref}, normalized test accuracy: {decision.text()}; {seeds} seed"
                f"{'s' if seeds != 1 else ''} (validation subsets {', '.join(map(str, comparison.seeds[:seeds]))}, "
                f"each its own α choice on the same grid: {alphas}), bootstrap over seeds then test examples")
    if effect is not None:
        evidence += (f"; the paper's effect {effect:+.1f} is in {EFFECT_UNITS[id_]} (its own model): an interval "
                     "wholly below it contradicts the claim as the paper states it")
    return claim(text, source, decision, evidence, id=id_, paper=paper, ours=ours, suite=comparison.suite,
                 setting=_setting(comparison))


def tour_claims(comparison, bmm=None) -> list:
    """T1–T5 and T9: each baseline against task arithmetic; T6–T7: BMM against its anchor; T8: RegMean++ against
    RegMean. "Beats": the 95% interval of the difference of normalized test accuracy (over seeds and test
    examples) lies above 0 (held); it is contradicted when its upper end is at or below 0, or below the paper's effect; inconclusive otherwise; not
    tested when a model is at chance or the two collapsed onto one another at every seed."""
    out = [_verdict(id_, text, source, paper, comparison, method) for id_, method, text, source, paper in _CLAIMS]
    for id_, name, text in _BMM_CLAIMS:
        if bmm is None:
            why = "the BMM section was not run"
            out.append(claim(text, _BMM_SOURCE, verdicts.not_tested(why), f"not tested: {why}", id=id_,
                             paper=_BMM_PAPER, suite=comparison.suite, setting=_setting(comparison)))
        else:
            out.append(_verdict(id_, text, _BMM_SOURCE, _BMM_PAPER, bmm, name))
    out += [_verdict(id_, text, source, paper, comparison, method, ref)
            for id_, method, ref, text, source, paper in _PAIR_CLAIMS]
    return sorted(out, key=lambda c: int(c.id[1:]))
