"""Fairness in a team's own test suite: ``equilens.testing.assert_no_finding``.

    from equilens.testing import assert_no_finding

    def test_support_bot_treats_customers_alike():
        assert_no_finding("tests/fairness_prompts.csv", model=my_app.answer, assessment="identity",
                          llm__count=2)

The assessment runs as :func:`equilens.assess` runs it (stored in DuckDB, its report written); a
finding (any difference its verdict reports beyond chance) raises ``AssertionError`` whose message
leads with the verdict sentences and names the run, so ``equilens show RUN_ID --examples 3`` shows
the answers behind it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from .assess import assess
from .result import AssessmentResult


def assert_no_finding(prompts: str | os.PathLike | Iterable[str] | None = None, model: Any = None,
                      assessment: str | None = None, **overrides: Any) -> AssessmentResult:
    """Run an assessment (the arguments of :func:`equilens.assess`) and raise ``AssertionError`` when its
    verdict reports any difference beyond chance; the result otherwise. Without ``name`` or ``config``
    the run is named after the test that calls it (pytest's current test), so `equilens runs` tells
    each test's runs apart."""
    if "name" not in overrides and overrides.get("config") is None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        overrides["name"] = test.rsplit("::", 1)[-1] if test else "assert_no_finding"
    result = assess(prompts, model, assessment, **overrides)
    found = result.findings
    if found:
        subjects = list(dict.fromkeys(f.subject for f in found))
        sentences = [s for s in result.verdicts if any(s.startswith(f"{subject}:") for subject in subjects)]
        raise AssertionError(
            f"{len(found)} finding{'s' if len(found) != 1 else ''} beyond chance in {', '.join(subjects)}:\n"
            + "\n".join(f"  {s}" for s in sentences or result.verdicts)
            + f"\n(run {result.run_id} in {result.db_path}: equilens show {result.run_id} --db {result.db_path} "
              "--examples 3)")
    return result
