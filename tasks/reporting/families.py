"""What a metric family shows in a report beyond the shared layout, declared by the assessment that
computes it: its own verdicts (one per comparison, say, instead of one for the family) and the
answers it shows as evidence. Each entry is declared in the report module its assessment's value
names (``Assessment.report``, its folder's ``report.py``), imported the first time the registry is
read, so reporting never imports an assessment; a family without an entry gets the shared verdict and
evidence (:mod:`equilens.tasks.reporting.verdict`, :mod:`equilens.tasks.reporting.evidence`).
An assessment from another package adds its entry from the module its entry point names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from equilens.tasks.catalog import import_declared
from equilens.tasks.registry import Registry

FamilyVerdicts = Callable[[Any, float], list]  # (the family's metric rows, alpha) -> [Verdict]
FamilyEvidence = Callable[[Any, str, Any, int], list]  # (store, run id, the run's metric rows, n) -> [Evidence]
FamilyGlance = Callable[[Any], str]  # (one of the family's verdicts) -> its HTML figure of signed gaps


@dataclass(frozen=True)
class FamilyReport:
    """``verdicts``: the family's verdicts in place of the one shared family verdict; ``evidence``:
    the answers the report shows for a run that computed the family; ``glance``: the figure of one of
    its verdicts in the report's glance, its gaps signed. Each may be None. ``names_skipped_pairs``:
    whether an attribute's verdict ends by naming the pairs of this family that could not be compared;
    False for a family whose skipped pairs are expected and counted by a metric of its own (a pair of
    identity cells without two prompts read on both sides counts in ``unparsed_outcome_rate``)."""

    verdicts: FamilyVerdicts | None = None
    evidence: FamilyEvidence | None = None
    glance: FamilyGlance | None = None
    names_skipped_pairs: bool = True


def _declared() -> None:
    """Import every assessment's report module (its ``Assessment.report``); each declares its
    families' entries as it loads."""
    import_declared("report")


FAMILY_REPORTS: Registry[FamilyReport] = Registry("family report", discover=_declared)
_SHARED = FamilyReport()


def family_report(family: str) -> FamilyReport:
    """What ``family`` shows of its own; a family without an entry shows only the shared layout."""
    return FAMILY_REPORTS.get(family) if family in FAMILY_REPORTS else _SHARED
