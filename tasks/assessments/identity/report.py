"""What the identity family shows in a report beyond the shared layout (:mod:`equilens.tasks.reporting.families`)."""

from __future__ import annotations

from equilens.tasks.reporting.families import FAMILY_REPORTS, FamilyReport

# a pair of cells without two prompts read on both sides is expected, and counted in unparsed_outcome_rate
FAMILY_REPORTS.add("identity", FamilyReport(names_skipped_pairs=False))
