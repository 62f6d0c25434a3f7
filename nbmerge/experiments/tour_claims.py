"""The claims of ``notebooks/00_tour.ipynb``: each baseline paper against task arithmetic (T1–T5), BMM against its
anchor (T6–T7), decided by the paired intervals a :class:`.tour.Comparison` holds."""

from __future__ import annotations

from .. import protocol
from .common import claim

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
    ("T5", "ace", "ACE-Merging, data-free, beats task arithmetic",
     "ACE-Merging, arXiv 2603.02945 (ViT-B/16 results table)",
     "ViT-B/16, 8/14/20 tasks: 90.6/86.1/82.1% vs 75.4/70.5/65.8% absolute"),
)
_BMM_CLAIMS = (
    ("T6", "BMM data-assisted", "BMM with data Grams beats its anchor (at the registered prior strength)"),
    ("T7", "BMM data-free", "Data-free BMM (task-vector Grams, Theorem 1) beats its anchor (at the registered "
                            "prior strength)"),
)
_BMM_SOURCE = "BMM, arXiv 2605.12843, abstract"
_BMM_PAPER = "ViT-L/14, 8 tasks: one merged model 95.1% vs the experts' 95.8%; above every anchor it plugs into"


def _verdict(id_, text, source, paper, comparison, name: str):
    ref = comparison.reference
    if name not in comparison.test or ref not in comparison.test:
        missing = name if name not in comparison.test else ref
        return claim(text, source, None, f"not tested: {missing} was not run (parameters `methods`/`bmm_grams`)",
                     id=id_, paper=paper, suite=comparison.suite)
    decision = comparison.versus[name]
    ours = (f"{100 * comparison.normalized(name):.1f}% vs {100 * comparison.normalized(ref):.1f}% normalized; "
            f"Δ {protocol.Interval(**decision['interval'])}")
    evidence = (f"{decision['evidence']}; α chosen on the validation subset over the same grid: "
                f"{name} {comparison.tuned[name].alpha:g}, {ref} {comparison.tuned[ref].alpha:g}; one zoo, "
                f"paired bootstrap over test examples")
    return claim(text, source, decision["held"], evidence, id=id_, paper=paper, ours=ours, suite=comparison.suite)


def tour_claims(comparison, bmm=None) -> list:
    """T1–T5: each baseline against task arithmetic; T6–T7: BMM against its anchor. "Beats" = the paired 95%
    interval of normalized test accuracy lies above 0; "not tested" when a model is at chance or the two
    collapsed onto one another (``protocol.beats``)."""
    out = [_verdict(id_, text, source, paper, comparison, method) for id_, method, text, source, paper in _CLAIMS]
    for id_, name, text in _BMM_CLAIMS:
        if bmm is None:
            out.append(claim(text, _BMM_SOURCE, None, "not tested: the BMM section was not run", id=id_,
                             paper=_BMM_PAPER, suite=comparison.suite))
        else:
            out.append(_verdict(id_, text, _BMM_SOURCE, _BMM_PAPER, bmm, name))
    return out
