"""A paper's claim and this run's outcome on it: what every report notebook records and the index tabulates.

An outcome is computed from the run's own numbers by :mod:`nbmerge.evaluate.verdicts` (held, contradicted, inconclusive,
or not tested with the reason); nothing is typed in by hand. ``docs/protocol.md`` says how each is decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import NbmergeError
from .verdicts import OUTCOMES, READINGS, Decision, not_tested

VERDICTS = OUTCOMES


@dataclass(frozen=True)
class Claim:
    """A paper claim, where it is stated, what this run found, and the decision's numbers.

    ``verdict`` is the outcome (one of :data:`VERDICTS`); ``estimate`` is oriented so that larger supports the
    claim, ``interval`` its 95% interval, ``threshold`` what it must clear (a number) or lie within (a pair),
    ``mde`` the effect this run could detect at 80% power, ``reading`` whether the row is the paper's literal claim
    or our stricter reading of it."""

    claim: str
    source: str
    verdict: str
    evidence: str = ""
    id: str = ""        # unique across the reports: B1a, B1b … (BMM), A1 … (ACE), P1 … (Pareto), T1 … (tour)
    paper: str = ""     # the paper's own figure for the claim, with its setting (model, tasks)
    ours: str = ""      # this run's number, with its interval
    suite: str = ""     # the suite(s) it was tested on
    setting: str = ""   # our setting, e.g. "text8, MiniLM analogue of ViT-B/32 × 8"
    decision: Optional[Decision] = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise NbmergeError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.decision is not None and self.decision.outcome != self.verdict:
            raise NbmergeError(f"claim {self.id}: verdict {self.verdict!r} differs from its decision's "
                               f"{self.decision.outcome!r}")

    @property
    def outcome(self) -> str:
        return self.verdict

    @property
    def reading(self) -> str:
        return self.decision.reading if self.decision else "paper"

    def to_dict(self) -> dict:
        """The claim as ``metrics.json`` records it: the text fields and the decision's numbers."""
        d = self.decision or not_tested(self.evidence or "not tested")
        out = {"claim": self.claim, "source": self.source, "verdict": self.verdict, "evidence": self.evidence,
               "id": self.id, "paper": self.paper, "ours": self.ours, "suite": self.suite, "setting": self.setting}
        out.update(d.to_dict())
        out["outcome"] = self.verdict
        return out


def claim(text: str, source: str, decision: Optional[Decision], evidence: str = "", *, id: str = "",
          paper: str = "", ours: str = "", suite: str = "", setting: str = "") -> Claim:
    """A claim decided by ``decision`` (a :class:`~nbmerge.evaluate.verdicts.Decision`); ``None`` means the run could
    not test it (say why in ``evidence``). A bare True/False is refused: an outcome needs its interval."""
    if isinstance(decision, bool):
        raise NbmergeError(f"claim {id or text!r}: give a verdicts.Decision, not {decision!r} (held, contradicted "
                           "and inconclusive are decided from an interval against a threshold)")
    if decision is None:
        decision = not_tested(evidence or "not tested")
    if decision.outcome == "not tested" and not evidence:
        evidence = f"not tested: {decision.why}"
    return Claim(text, source, decision.outcome, evidence, id, paper, ours, suite, setting, decision)


__all__ = ["Claim", "claim", "VERDICTS", "READINGS"]
