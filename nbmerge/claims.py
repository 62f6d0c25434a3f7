"""A paper's claim and this run's verdict on it: what every report notebook records and the index tabulates.

A verdict is computed from the run's own numbers (``held=None`` when the run could not test the claim: the evidence
says why); nothing is typed in by hand. ``docs/protocol.md`` says when a comparison counts as tested.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .errors import NbmergeError

VERDICTS = ("held", "did not hold", "not tested")


@dataclass(frozen=True)
class Claim:
    """A paper claim, where it is stated, and what this run found."""

    claim: str
    source: str
    verdict: str
    evidence: str = ""
    id: str = ""        # the claim's number across the reports: B1–B6 (BMM), A1–A5 (ACE), P1–P3 (Pareto), T… (tour)
    paper: str = ""     # the paper's own figure for the claim
    ours: str = ""      # this run's number, with its interval
    suite: str = ""     # the suite(s) it was tested on

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise NbmergeError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def claim(text: str, source: str, held: Optional[bool], evidence: str = "", *, id: str = "", paper: str = "",
          ours: str = "", suite: str = "") -> Claim:
    """``held=None`` means the run could not test it (say why in ``evidence``)."""
    verdict = "not tested" if held is None else ("held" if held else "did not hold")
    return Claim(text, source, verdict, evidence, id, paper, ours, suite)
