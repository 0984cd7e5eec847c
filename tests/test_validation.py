"""great-expectations gates: good frames pass, each broken case names the expectation and rows."""

from __future__ import annotations

import pandas as pd
import pytest

from tasks.errors import ValidationFailed
from tasks.validation import (
    raise_on_failure,
    validate_prompts,
    validate_responses,
    validate_scores,
    validate_variants,
)


def test_prompts_suite() -> None:
    good = pd.DataFrame({"prompt_id": ["a", "b"], "text": ["hi", "there"]})
    assert validate_prompts(good).success
    bad = pd.DataFrame({"prompt_id": ["a", "a", "c", "d", "e"], "text": ["hi", "x", "  ", "y", "z"]})
    report = validate_prompts(bad)
    failed = {(o.expectation, o.column): o for o in report.outcomes if not o.success}
    assert failed[("expect_column_values_to_be_unique", "prompt_id")].unexpected_count == 2
    assert failed[("expect_column_values_to_match_regex", "text")].examples == ["  "]
    assert "2 of 5 rows" in report.summary() and "'prompt_id'" in report.summary()
    with pytest.raises(ValidationFailed, match="expect_column_values_to_be_unique"):
        raise_on_failure(report)


def test_empty_prompts_fail_but_empty_variants_pass() -> None:
    assert not validate_prompts(pd.DataFrame({"prompt_id": [], "text": []})).success
    empty = pd.DataFrame(columns=["variant_id", "prompt_id", "attribute", "grp", "text", "valid"])
    assert validate_variants(empty).success


def test_variants_must_be_valid() -> None:
    frame = pd.DataFrame({"variant_id": ["1", "2"], "prompt_id": ["p", "p"], "attribute": ["gender"] * 2,
                          "grp": ["male", "female"], "text": ["He ran.", "She ran."], "valid": [True, False]})
    report = validate_variants(frame)
    (bad,) = [o for o in report.outcomes if not o.success]
    assert (bad.expectation, bad.column, bad.unexpected_count) == ("expect_column_values_to_be_in_set", "valid", 1)


def test_every_response_is_answered_or_failed_with_a_class() -> None:
    frame = pd.DataFrame({"variant_id": ["v", "v", "w"], "sample_idx": [0, 1, 0], "text": ["ok", None, None],
                          "ok": [True, False, False], "error_class": [None, "RateLimitError", None]})
    report = validate_responses(frame)
    (bad,) = [o for o in report.outcomes if not o.success]
    assert bad.column == "accounted_for" and bad.unexpected_count == 1
    dupes = frame.assign(sample_idx=0, error_class="X")
    assert not validate_responses(dupes).success


def test_scores_in_declared_range() -> None:
    frame = pd.DataFrame({"text_hash": ["a", "b", "c"], "scorer": ["vader-neg"] * 3, "value": [0.1, 1.3, 0.0]})
    report = validate_scores(frame, {"vader-neg": (0.0, 1.0)})
    (bad,) = [o for o in report.outcomes if not o.success]
    assert bad.expectation == "expect_column_values_to_be_between" and bad.unexpected_count == 1
    assert bad.examples == ["1.3"]
