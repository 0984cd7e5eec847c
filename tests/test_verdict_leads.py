"""The verdict leads with the harm: outcome gaps first, one clause per crossed attribute saying the
pattern in words, the plain ratio of amounts beside the share-of-average gap, and tone (sentiment
parity) after them as support, even when it points the other way. Rows built by hand; every number
below is worked out from them."""

from __future__ import annotations

import json

import pandas as pd
from equilens.tasks.reporting.findings import run_findings
from equilens.tasks.reporting.verdict import crossed_pattern, verdict_lines

SUBJECT = "gender x race"


def _gap(a: str, b: str, gap: float, p: float, ci: tuple[float, float], mdg: float = 0.02) -> dict:
    return {"attribute": SUBJECT, "metric": "number_outcome_gap", "family": "identity", "group_a": a, "group_b": b,
            "value": gap, "ci_low": ci[0], "ci_high": ci[1], "n": 40, "direction": "target",
            "details": json.dumps({"gap": gap, "gap_ci": list(ci), "p_holm": p, "p_value": p, "kind": "number",
                                   "prompts": 40, "p_method": "paired t-test", "min_detectable_gap": mdg})}


def _cell(cell: str, value: float) -> dict:
    return {"attribute": SUBJECT, "metric": "number_outcome", "family": "identity", "group_a": cell, "group_b": None,
            "value": value, "ci_low": value - 0.01, "ci_high": value + 0.01, "n": 40, "direction": "target",
            "details": json.dumps({"kind": "number"})}


def _rows(with_tone: bool = False) -> pd.DataFrame:
    # black users get 0.95 of the prompt average, white users 1.05, in both genders: gap -0.10 (10.0%
    # lower in shares of the average), and 0.95 / 1.05 = $0.90 for every $1.00; no gender gap.
    rows = [_cell(c, v) for c, v in (("female-black", 0.95), ("male-black", 0.95), ("female-white", 1.05),
                                     ("male-white", 1.05))]
    rows += [_gap("female-black", "female-white", -0.10, 1e-6, (-0.13, -0.07)),
             _gap("male-black", "male-white", -0.09, 1e-5, (-0.12, -0.06)),
             _gap("female-black", "male-black", 0.004, 0.8, (-0.02, 0.03), mdg=0.021),
             _gap("female-white", "male-white", -0.003, 0.9, (-0.03, 0.02), mdg=0.018),
             _gap("female-black", "male-white", -0.10, 1e-6, (-0.13, -0.07)),
             _gap("male-black", "female-white", -0.10, 1e-6, (-0.13, -0.07))]
    if with_tone:  # "Yes, ..." answers to white users read a little more negative than "No, ..." ones
        rows.append({"attribute": SUBJECT, "metric": "strict_sentiment_parity", "family": "identity",
                     "group_a": "male-white", "group_b": "male-black", "value": 0.05, "ci_low": 0.03, "ci_high": 0.07,
                     "n": 40, "direction": "lower",
                     "details": json.dumps({"gap": 0.03, "gap_ci": [0.01, 0.05], "p_holm": 0.01, "p_value": 0.01,
                                            "noise_floor": 0.02, "mean_score_a": 0.12, "mean_score_b": 0.08,
                                            "p_method": "permutation", "prompts": 40})})
    return pd.DataFrame(rows)


def test_each_attribute_gets_one_clause_across_its_cells() -> None:
    race, gender = crossed_pattern(SUBJECT, _rows(), 0.05)[::-1]
    assert race == ("race: amounts for black users are lower than for white users by 10.0% of the prompt's "
                    "average [7.0%, 13.0%] ($0.90 for every $1.00), p_holm = 1e-06, in both genders")
    assert gender == "gender: no gap beyond chance (the smallest detectable about 2.1%)"


def test_the_outcome_gap_leads_and_tone_pointing_the_other_way_follows() -> None:
    (line,) = verdict_lines(_rows(with_tone=True))
    assert line.startswith("gender x race: gender: no gap beyond chance"), line
    assert "race: amounts for black users are lower than for white users by 10.0% of the prompt's average" in line
    assert line.index("in tone, answers to male-white variants are more negative") > line.index("race: amounts")


def test_every_judged_outcome_gap_is_a_finding_with_its_numbers() -> None:
    found = run_findings(_rows())
    assert len(found.findings) == 4 and found.failed
    first = next(f for f in found.findings if f.groups == ["female-black", "female-white"])
    assert (first.metric, first.value, first.interval, first.p_holm, first.direction) == (
        "number_outcome_gap", -0.10, [-0.13, -0.07], 1e-6, "target 0")


def test_a_detectable_gap_too_small_to_print_is_said_as_under_the_smallest_figure() -> None:
    from equilens.tasks.reporting.outcome_words import detectable_words

    # deterministic answers (a chain at temperature 0) give a detectable gap of about 0: never "0% apart"
    assert detectable_words("number", 0.0004) == "amounts under 1% apart"
    assert detectable_words("yes_no", 0.0) == "yes rates under 0.01 apart"
    assert detectable_words("number", 0.061) == "amounts about 6% apart"


def test_a_finding_on_few_names_says_so() -> None:
    rows = _rows()
    few = rows["metric"].eq("number_outcome_gap") & rows["group_a"].eq("female-black") & rows["group_b"].eq(
        "female-white")
    details = json.loads(rows.loc[few, "details"].iloc[0]) | {"few_names": True, "names_a": 3, "names_b": 4}
    rows.loc[few, "details"] = json.dumps(details)
    race = crossed_pattern(SUBJECT, rows, 0.05)[1]
    assert race.endswith("p_holm = 1e-06, resting on only 3 and 4 names (raise identity.names_per_cell), "
                         "in both genders"), race


def test_an_amount_gap_past_what_the_cells_allow_is_no_gap_that_could_be_shown() -> None:
    from equilens.tasks.assessments.identity.gaps import largest_gap
    from equilens.tasks.reporting.outcome_words import outcome_detectable

    # four cells: one cell's share of the prompt average is at most 4 (the others at 0), so no gap past 4
    assert largest_gap("number", 4) == 4.0 and largest_gap("yes_no", 4) == 1.0
    row = {"attribute": SUBJECT, "metric": "number_outcome_gap", "family": "identity", "group_a": "female-black",
           "group_b": "male-white", "value": 0.3, "ci_low": -5.0, "ci_high": 5.6, "n": 3, "direction": "target",
           "details": json.dumps({"gap": 0.3, "p_value": 0.7, "kind": "number", "prompts": 3, "min_detectable_gap": 5.91,
                                  "largest_gap": 4.0, "kind_answers": 24, "kind_unread": 12})}
    said = outcome_detectable(pd.DataFrame([row]))
    assert "591%" not in said and said == ("no gap in amounts could be shown with 3 readable prompts "
                                           "(12 of 24 amount answers could not be read)"), said


def test_beyond_noise_is_filled_for_every_judged_row_outcome_gaps_included() -> None:
    from equilens.flows.api.result import _with_verdict_columns
    from equilens.tasks.reporting.verdict import run_verdicts

    rows = _rows()
    rows["details"] = [json.loads(d) for d in rows["details"]]
    out = _with_verdict_columns(rows, run_verdicts(rows))
    gaps = out[out["metric"] == "number_outcome_gap"].set_index(["group_a", "group_b"])["beyond_noise"]
    assert gaps[("female-black", "female-white")] is True and gaps[("female-black", "male-black")] is False
    assert out.loc[out["metric"] == "number_outcome", "beyond_noise"].isna().all()  # a cell's own value: not judged


def test_an_amount_gap_is_said_in_shares_of_the_average_beside_the_plain_ratio() -> None:
    """Cells at 0.89 and 1.11 of the prompt's average: a gap of 0.22 of the average, and $0.80 for
    every $1.00 (20% less): the sentence must not call the 0.22 "22% lower"."""
    import pandas as pd
    from equilens.tasks.reporting.outcome_words import worded_outcome

    row = pd.Series({"value": -0.22, "group_a": "female", "group_b": "male"})
    said = worded_outcome(row, {"kind": "number", "gap_ci": [-0.225, -0.215]}, {"female": 0.89, "male": 1.11})
    assert said == ("amounts for female are lower than for male by 22.0% of the prompt's average [21.5%, 22.5%] "
                    "($0.80 for every $1.00)")
