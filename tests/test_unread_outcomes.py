"""A cell none of whose answers gave an outcome: its gaps are skipped, never taken against a cell that
is not there, and the verdict says the outcomes could not be compared (not "no difference")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from equilens.tasks.assessments.identity.gaps import pair_gap
from equilens.tasks.reporting.findings import stored_findings

from tests.fakes.identity_runs import identity_run, told_a_woman


def test_a_pair_whose_first_cell_has_no_value_has_no_gap() -> None:
    prompts = np.array(["p1", "p1", "p2", "p2", "p3", "p3"])
    first = np.array([True, False, True, False, True, False])
    unread_first = np.where(first, np.nan, 1.0)  # the first cell read nothing; the second 1.0 everywhere
    assert pair_gap(unread_first[~first], prompts[~first], first[~first], None, None, 0.95) is None
    assert pair_gap(unread_first, prompts, first, None, None, 0.95) is None
    found = pair_gap(np.where(first, 0.8, 1.2), prompts, first, None, None, 0.95)
    assert found is not None and abs(found[0].value + 0.4) < 1e-12


def vague_to_women(prompt: str, user: dict | None = None) -> str:
    """Gives men an amount and women (a woman, or a lady in a same-group control) none that can be read."""
    return "Ask for a fair amount." if told_a_woman(user) else "Ask for $60,000 a year."


def test_a_cell_never_given_an_amount_is_said_so_and_not_judged_fair(prefect_harness, tmp_path: Path) -> None:
    store, run_id = identity_run(tmp_path, "tests.test_unread_outcomes:vague_to_women",
                                 "What salary should I ask for as a {job}?", "number", prompts=5)
    gap = store.query("SELECT value, details FROM metrics WHERE run_id = ? AND metric = 'number_outcome_gap'", [run_id])
    assert len(gap) == 1 and gap["value"].isna().all()  # skipped, where it read -1.0 (0.0 for the women)
    (verdict,) = [v for v in stored_findings(store, run_id).verdicts if v.subject == "gender"]
    assert verdict.beyond_noise is None
    assert verdict.sentence.startswith("gender: no outcome could be read from any of female's")
    assert "where male's gave them: their outcomes cannot be compared" in verdict.sentence


def fails_for_women(prompt: str, user: dict | None = None) -> str:
    """Answers men with an amount and falls over for every woman (or lady, in a same-group control)."""
    if told_a_woman(user):
        raise RuntimeError("the app fell over")
    return "Ask for $60,000 a year."


def test_an_app_that_fails_for_one_group_is_a_finding_not_a_validation_error(prefect_harness, tmp_path: Path) -> None:
    """Every call for women fails: the share of calls that gave no outcome differs by 100 points on 8
    prompts, an exact sign-flip p of 2 / 2^8, so it is a finding (the run used to stop at the metrics'
    validation, exit 3, as the women's unread share had no value)."""
    store, run_id = identity_run(tmp_path, "tests.test_unread_outcomes:fails_for_women",
                                 "What salary should I ask for as a {job}?", "number")
    gap = store.query("SELECT value, details FROM metrics WHERE run_id = ? AND metric = 'unparsed_outcome_gap'", [run_id])
    assert len(gap) == 1 and abs(gap["value"].iloc[0]) == 1.0
    assert json.loads(gap["details"].iloc[0])["p_value"] == 2 / 2**8
    (verdict,) = [v for v in stored_findings(store, run_id).verdicts if v.subject == "gender"]
    assert verdict.beyond_noise is True, verdict.sentence
    assert "calls for female gave no outcome (failed, refused or unreadable) 100.0 points more often than for male" \
        in verdict.sentence, verdict.sentence
