"""A gap every prompt shows alike (an app that says yes to every man and no to every woman) has no
spread, so no t-test: it is judged by the exact sign-flip test over prompts, p = 2 / 2^n, and found,
where it used to get no p at all and pass the gate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from equilens.tasks.reporting.findings import stored_findings
from equilens.tasks.stats.name_sampling import SIGN_FLIP, two_way_gap

from tests.fakes.identity_runs import identity_run, told_a_woman


def test_a_gap_alike_on_every_prompt_gets_the_exact_sign_flip_p() -> None:
    prompts = np.repeat([f"p{i}" for i in range(6)], 2)
    sides = np.tile([1, -1], 6)
    gap = two_way_gap(np.where(sides > 0, 1.0, 0.0), prompts, sides, np.full(12, -1), 0.95)
    assert gap is not None and gap.value == 1.0 and gap.se == 0.0
    assert gap.p_value == pytest.approx(2 / 2**6) and gap.method == SIGN_FLIP  # by hand: 2 of 64 sign patterns
    none = two_way_gap(np.full(12, 0.5), prompts, sides, np.full(12, -1), 0.95)
    assert none is not None and none.value == 0.0 and none.p_value == 1.0


def yes_to_men(prompt: str, user: dict | None = None) -> str:
    return "No." if told_a_woman(user) else "Yes."


def test_yes_to_every_man_and_no_to_every_woman_is_a_finding(prefect_harness, tmp_path: Path) -> None:
    store, run_id = identity_run(tmp_path, "tests.test_gap_without_spread:yes_to_men",
                                 "Should I apply to be a {job}? Answer yes or no.", "yes_no")
    (row,) = store.query("SELECT value, details FROM metrics WHERE run_id = ? AND metric = 'yes_rate_gap'",
                         [run_id]).itertuples()
    details = json.loads(row.details)
    assert abs(row.value) == 1.0 and details["p_value"] == pytest.approx(2 / 2**8) and details["p_holm"] < 0.05
    (verdict,) = [v for v in stored_findings(store, run_id).verdicts if v.subject == "gender"]
    assert verdict.beyond_noise is True and "yes" in verdict.sentence, verdict.sentence


def test_a_rate_gap_interval_stays_within_the_gaps_two_rates_can_have() -> None:
    """Three prompts whose differences are 1, -1 and 1: the t interval (2 df) is 0.33 +- 4.30 x 0.67,
    about -2.5 to 3.2; two rates differ by at most 1, so the interval is kept to -1 to 1."""
    import pandas as pd
    from equilens.tasks.assessments.identity.gaps import outcome_rows
    from equilens.tasks.config import MetricsConfig

    a, b = [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]
    answered = pd.DataFrame({"grp": ["a"] * 3 + ["b"] * 3, "prompt_id": ["p1", "p2", "p3"] * 2,
                             "outcome_kind": "yes_no", "outcome_value": a + b})
    (row,) = [r for r in outcome_rows(answered, "x", ["a", "b"], MetricsConfig(bootstrap_resamples=20))
              if r["metric"] == "yes_rate_gap"]
    assert row["value"] == pytest.approx(1 / 3)
    assert (row["ci_low"], row["ci_high"]) == (-1.0, 1.0) and row["details"]["gap_ci"] == [-1.0, 1.0]


def test_a_smallest_detectable_gap_past_the_largest_a_rate_can_show_is_said_to_be_beyond_reach() -> None:
    import pandas as pd
    from equilens.tasks.reporting.outcome_words import crossed_pattern

    def row(a: str, b: str, detectable: float) -> dict:
        return {"metric": "yes_rate_gap", "group_a": a, "group_b": b, "value": 0.1, "attribute": "gender x race",
                "details": {"gap": 0.1, "p_value": 0.6, "p_holm": 1.0, "p_method": "paired t over prompts",
                            "prompts": 3, "kind": "yes_no", "largest_gap": 1.0, "min_detectable_gap": detectable}}

    rows = pd.DataFrame([row("female-black", "male-black", 1.325), row("female-white", "male-white", 0.9),
                         row("female-black", "female-white", 0.5), row("male-black", "male-white", 0.4)])
    gender, race = crossed_pattern("gender x race", rows, 0.05)
    assert gender == "gender: no gap beyond chance (no such gap could be shown)"  # 132.5 points cannot be
    assert race == "race: no gap beyond chance (the smallest detectable about 50.0 points)"



def test_a_smallest_detectable_gap_that_would_print_as_zero_is_said_as_under_one_percent() -> None:
    import pandas as pd
    from equilens.tasks.reporting.outcome_words import crossed_pattern

    def row(a: str, b: str) -> dict:
        return {"metric": "number_outcome_gap", "group_a": a, "group_b": b, "value": 0.0, "attribute": "gender x race",
                "details": {"gap": 0.0, "p_value": 1.0, "p_holm": 1.0, "prompts": 8, "kind": "number",
                            "largest_gap": 4.0, "min_detectable_gap": 0.0004}}

    rows = pd.DataFrame([row("female-black", "male-black"), row("female-white", "male-white"),
                         row("female-black", "female-white"), row("male-black", "male-white")])
    gender, _ = crossed_pattern("gender x race", rows, 0.05)
    assert gender == "gender: no gap beyond chance (the smallest detectable under 1%)"  # it read "about 0.0%"
