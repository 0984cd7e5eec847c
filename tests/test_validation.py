"""great-expectations gates: good frames pass; each broken case names the expectation, column and rows."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from equilens.tasks.errors import ValidationFailed
from equilens.tasks.validation import (
    ExpectationOutcome,
    SuiteReport,
    raise_on_failure,
    validate_prompts,
    validate_responses,
    validate_scores,
    validate_variants,
)


def failures(report: SuiteReport) -> dict[tuple[str, str | None], ExpectationOutcome]:
    return {(o.expectation, o.column): o for o in report.outcomes if not o.success}


def variants_frame(n: int = 2) -> pd.DataFrame:
    return pd.DataFrame({
        "variant_id": [f"v{i}" for i in range(n)], "prompt_id": ["p"] * n, "attribute": ["gender"] * n,
        "grp": ["male", "female"] * (n // 2), "text": ["He ran.", "She ran."] * (n // 2), "valid": [True] * n,
    })


def responses_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "variant_id": ["v", "v", "w", "w", "x"], "sample_idx": [0, 1, 0, 1, 0],
        "text": ["fine", None, "also fine", None, "ok"], "ok": [True, False, True, False, True],
        "error_class": [None, "RateLimitError", None, "Timeout", None],
    })


def test_good_frames_pass() -> None:
    prompts = pd.DataFrame({"prompt_id": ["a", "b"], "text": ["hi", "there"], "extra": [1, 2]})
    scores = pd.DataFrame({"scorer": ["neg", "neg", "tox"], "value": [0.0, 1.0, 0.5]})
    ranges = {"neg": (0.0, 1.0), "tox": (0, 1)}
    for report in (validate_prompts(prompts), validate_variants(variants_frame()),
                   validate_responses(responses_frame()), validate_scores(scores, ranges)):
        assert report.success, report.summary()
        assert report.outcomes and all(o.success for o in report.outcomes)
        assert "passed" in report.summary()
        raise_on_failure(report)


def test_prompts_duplicate_id_and_blank_text() -> None:
    bad = pd.DataFrame({"prompt_id": ["a", "a", "c", "d", "e"], "text": ["hi", "x", "  ", "", "z"]})
    report = validate_prompts(bad)
    assert not report.success
    failed = failures(report)
    assert set(failed) == {("expect_column_values_to_be_unique", "prompt_id"),
                           ("expect_column_values_to_match_regex", "text")}
    dup = failed[("expect_column_values_to_be_unique", "prompt_id")]
    assert (dup.element_count, dup.unexpected_count, dup.examples) == (5, 2, ["a"])
    blank = failed[("expect_column_values_to_match_regex", "text")]
    assert (blank.unexpected_count, blank.examples) == (2, ["  ", ""])
    text = report.summary()
    assert "expect_column_values_to_be_unique on column 'prompt_id': 2 of 5 rows" in text
    assert "column 'text'" in text and "'  '" in text
    with pytest.raises(ValidationFailed, match="expect_column_values_to_be_unique") as info:
        raise_on_failure(report)
    assert info.value.exit_code == 3


def test_prompts_null_and_non_string_text() -> None:
    bad = pd.DataFrame({"prompt_id": ["a", None, "c"], "text": ["hi", None, 7]}, dtype=object)
    failed = failures(validate_prompts(bad))
    assert failed[("expect_column_values_to_not_be_null", "prompt_id")].unexpected_count == 1
    assert failed[("expect_column_values_to_not_be_null", "text")].unexpected_count == 1
    assert failed[("expect_column_values_to_be_of_type", "text")].examples == ["7"]


def test_empty_prompts_fail_but_other_empty_stages_pass() -> None:
    report = validate_prompts(pd.DataFrame({"prompt_id": [], "text": []}))
    (bad,) = [o for o in report.outcomes if not o.success]
    assert bad.expectation == "expect_table_row_count_to_be_between" and bad.column is None
    assert "observed 0" in bad.examples[0] and "min_value=1" in bad.examples[0]
    assert "expect_table_row_count_to_be_between" in report.summary()
    assert validate_variants(pd.DataFrame(columns=list(variants_frame().columns))).success
    assert validate_responses(responses_frame().iloc[:0]).success
    assert validate_scores(pd.DataFrame({"scorer": [], "value": []}), {"neg": (0.0, 1.0)}).success


def test_missing_column_fails_by_name() -> None:
    report = validate_variants(variants_frame().drop(columns=["grp"]))
    failed = failures(report)
    assert set(failed) == {("expect_column_to_exist", "grp")}
    assert "expect_column_to_exist on column 'grp'" in report.summary()
    assert failed[("expect_column_to_exist", "grp")].examples == [
        "column missing; present: variant_id, prompt_id, attribute, text, valid"]


def test_variants_must_be_valid_and_unique() -> None:
    frame = variants_frame(4)
    frame.loc[1, "valid"] = False
    frame.loc[3, "variant_id"] = "v0"
    frame.loc[2, "text"] = " \t"
    failed = failures(validate_variants(frame))
    assert set(failed) == {("expect_column_values_to_be_in_set", "valid"),
                           ("expect_column_values_to_be_unique", "variant_id"),
                           ("expect_column_values_to_match_regex", "text")}
    assert failed[("expect_column_values_to_be_in_set", "valid")].examples == ["False"]
    assert failed[("expect_column_values_to_be_unique", "variant_id")].unexpected_count == 2
    unchecked = variants_frame().astype({"valid": object})
    unchecked.loc[0, "valid"] = None  # GX's in_set skips missing values; not_null catches them
    assert set(failures(validate_variants(unchecked))) == {("expect_column_values_to_not_be_null", "valid")}


def test_every_response_is_answered_or_failed_with_a_class() -> None:
    frame = responses_frame()
    frame.loc[3, "error_class"] = None  # ok=False and no error class
    frame.loc[4, "text"] = None  # ok=True and no text
    report = validate_responses(frame)
    (bad,) = [o for o in report.outcomes if not o.success]
    assert (bad.expectation, bad.column) == ("expect_column_values_to_be_in_set", "accounted_for")
    assert (bad.element_count, bad.unexpected_count) == (5, 2)
    assert bad.examples == [
        "variant_id=w sample_idx=1: ok=False, text=missing, error_class=missing",
        "variant_id=x sample_idx=0: ok=True, text=missing, error_class=missing",
    ]
    assert "2 of 5 rows" in report.summary()


def test_responses_unique_per_variant_and_sample_and_ok_set() -> None:
    frame = responses_frame().assign(sample_idx=0).astype({"ok": object})
    frame.loc[0, "ok"] = None
    failed = failures(validate_responses(frame))
    assert failed[("expect_compound_columns_to_be_unique", "variant_id,sample_idx")].unexpected_count == 4
    assert failed[("expect_column_values_to_not_be_null", "ok")].unexpected_count == 1
    assert failed[("expect_column_values_to_be_in_set", "accounted_for")].unexpected_count == 1


def test_scores_in_declared_range_per_scorer() -> None:
    frame = pd.DataFrame({"scorer": ["neg"] * 3 + ["pol"] * 3 + ["other"],
                          "value": [0.1, 1.3, 0.0, -0.9, 1.0, None, 99.0]})
    report = validate_scores(frame, {"neg": (0.0, 1.0), "pol": (-1.0, 1.0)})
    assert [o.column for o in report.outcomes] == ["value[neg]"] * 2 + ["value[pol]"] * 2
    failed = failures(report)
    assert set(failed) == {("expect_column_values_to_be_between", "value[neg]"),
                           ("expect_column_values_to_not_be_null", "value[pol]")}
    out = failed[("expect_column_values_to_be_between", "value[neg]")]
    assert (out.element_count, out.unexpected_count, out.examples) == (3, 1, ["1.3"])
    assert "'value[neg]': 1 of 3 rows" in report.summary()


def test_examples_capped_and_truncated() -> None:
    prompts = pd.DataFrame({"prompt_id": [str(i) for i in range(8)] * 2, "text": ["x" * 500] * 16})
    (dup,) = failures(validate_prompts(prompts)).values()
    assert dup.unexpected_count == 16 and len(dup.examples) == 5
    report = validate_prompts(pd.DataFrame({"prompt_id": ["a"], "text": [" " * 300]}))
    (blank,) = failures(report).values()
    assert len(blank.examples[0]) == 200


def test_to_frame_matches_validations_table() -> None:
    report = validate_scores(pd.DataFrame({"scorer": ["neg"], "value": [1.3]}), {"neg": (0.0, 1.0)})
    frame = report.to_frame("run-1")
    assert list(frame.columns) == ["run_id", "stage", "expectation", "success", "column_name",
                                   "element_count", "unexpected_count", "examples"]
    assert set(frame["run_id"]) == {"run-1"} and set(frame["stage"]) == {"scores"}
    row = frame[~frame["success"]].iloc[0]
    assert row["column_name"] == "value[neg]" and json.loads(json.dumps(row["examples"])) == ["1.3"]


def test_large_frame_is_fast() -> None:
    import time

    n = 40_000
    frame = pd.DataFrame({"variant_id": [f"v{i // 4}" for i in range(n)],
                          "sample_idx": [i % 4 for i in range(n)], "text": ["a response"] * n,
                          "ok": [True] * n, "error_class": [None] * n})
    validate_responses(frame.iloc[:10])  # warm
    t0 = time.perf_counter()
    report = validate_responses(frame)
    assert report.success and time.perf_counter() - t0 < 3.0


def test_metric_rows_have_a_value_or_a_skip_reason() -> None:
    import equilens.tasks.metrics  # noqa: F401 - registers every family
    from equilens.tasks.metrics.base import metric_row, skipped_row
    from equilens.tasks.validation import validate_metrics

    good = [metric_row("strict_sentiment_parity", 0.1, (0.05, 0.2), 10, attribute="gender", group_a="male",
                       group_b="female"),
            metric_row("strict_sentiment_parity", 0.3, (0.31, 0.5), 10),  # a biased statistic may sit outside
            skipped_row("weak_sentiment_parity", "fewer than 2 prompts", attribute="gender")]
    assert validate_metrics(pd.DataFrame(good)).success
    bad = pd.DataFrame(good + [metric_row("strict_sentiment_parity", float("nan")),
                               metric_row("strict_sentiment_parity", 0.2, (0.1, None))])
    bad.loc[len(bad)] = {**good[0], "metric": "made_up_metric"}
    report = validate_metrics(bad)
    assert not report.success
    text = report.summary()
    assert "no value and no details.skipped reason" in text and "half an interval" in text
    assert "made_up_metric" in text


def test_a_suite_keeps_no_reference_to_the_frame_it_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GX context lives as long as the process and its engine caches every batch it loads: a run's
    validated variants, answers and scores must not stay in memory after their suite."""
    import gc
    import weakref

    from equilens.tasks import validation

    checked = []
    run = validation._run
    monkeypatch.setattr(validation, "_run", lambda stage, frame, *a: checked.append(weakref.ref(frame)) or run(stage, frame, *a))
    frame = pd.DataFrame({"variant_id": ["a", "b"], "prompt_id": "p", "attribute": "gender", "grp": ["male", "female"],
                          "text": ["Is he kind?", "Is she kind?"], "valid": True})
    assert validation.validate_variants(frame).success
    gc.collect()
    assert checked and checked[0]() is None, "GX still holds the validated frame"
