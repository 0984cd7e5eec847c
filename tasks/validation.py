"""great-expectations suites between stages (GX 1.x, one ephemeral context per process).

Each ``validate_*`` function runs one suite on a DataFrame and returns a :class:`SuiteReport`;
:func:`raise_on_failure` turns a failed report into :class:`ValidationFailed` with a readable
summary (which expectation, on which column, how many rows, examples). The flows store every
report in DuckDB's ``validations`` table. ``great_expectations`` is imported lazily: it costs
several seconds.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pandas as pd

from tasks.errors import ValidationFailed

_counter = itertools.count()


@dataclass(frozen=True)
class ExpectationOutcome:
    expectation: str
    column: str | None
    success: bool
    element_count: int
    unexpected_count: int
    examples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SuiteReport:
    stage: str
    success: bool
    outcomes: list[ExpectationOutcome]

    def summary(self) -> str:
        failed = [o for o in self.outcomes if not o.success]
        if not failed:
            return f"{self.stage}: all {len(self.outcomes)} expectations met."
        lines = [f"Validation of {self.stage} failed ({len(failed)} of {len(self.outcomes)} expectations):"]
        for o in failed:
            where = f" on column {o.column!r}" if o.column else ""
            count = f": {o.unexpected_count} of {o.element_count} rows" if o.element_count else ""
            examples = f"; e.g. {', '.join(o.examples[:3])}" if o.examples else ""
            lines.append(f"  - {o.expectation}{where}{count}{examples}")
        return "\n".join(lines)

    def to_frame(self, run_id: str) -> pd.DataFrame:
        return pd.DataFrame(
            [{"run_id": run_id, "stage": self.stage, "expectation": o.expectation, "success": o.success,
              "column_name": o.column, "element_count": o.element_count, "unexpected_count": o.unexpected_count,
              "examples": list(o.examples)} for o in self.outcomes],
            columns=["run_id", "stage", "expectation", "success", "column_name", "element_count",
                     "unexpected_count", "examples"],
        )


@lru_cache(maxsize=1)
def _context() -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx

    ctx = gx.get_context(mode="ephemeral")
    try:
        from great_expectations.data_context.types.base import ProgressBarsConfig

        ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    except Exception:  # noqa: BLE001 - cosmetic only
        pass
    return ctx


def _run(stage: str, frame: pd.DataFrame, expectations: list[Any]) -> SuiteReport:
    import great_expectations as gx

    ctx = _context()
    n = next(_counter)
    source = ctx.data_sources.add_pandas(f"{stage}-{n}")
    batch = source.add_dataframe_asset(f"{stage}-frame").add_batch_definition_whole_dataframe("all").get_batch(
        batch_parameters={"dataframe": frame}
    )
    suite = gx.ExpectationSuite(name=f"{stage}-{n}")
    for exp in expectations:
        suite.add_expectation(exp)
    result = batch.validate(suite, result_format="SUMMARY")
    outcomes = []
    for r in result.results:
        res = r.result or {}
        examples = [str(v)[:200] for v in (res.get("partial_unexpected_list") or [])[:5]]
        kwargs = r.expectation_config.kwargs
        column = kwargs.get("column") or (",".join(kwargs.get("column_list", [])) or None)
        unexpected = res.get("unexpected_count")
        if unexpected is None and not r.success:
            unexpected = len(frame)
            examples = examples or [f"observed {res.get('observed_value')}"]
        outcomes.append(ExpectationOutcome(r.expectation_config.type, column, bool(r.success),
                                           int(res.get("element_count") or len(frame)), int(unexpected or 0),
                                           examples))
    try:
        ctx.data_sources.delete(source.name)
    except Exception:  # noqa: BLE001 - only bookkeeping in an ephemeral context
        pass
    return SuiteReport(stage, all(o.success for o in outcomes), outcomes)


def _gxe() -> Any:
    import great_expectations.expectations as gxe

    return gxe


def validate_prompts(df: pd.DataFrame) -> SuiteReport:
    """Prompts: at least one; non-empty text; ids present and unique."""
    gxe = _gxe()
    return _run("prompts", df[["prompt_id", "text"]], [
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
        gxe.ExpectColumnValuesToNotBeNull(column="text"),
        gxe.ExpectColumnValuesToMatchRegex(column="text", regex=r"\S"),
        gxe.ExpectColumnValuesToNotBeNull(column="prompt_id"),
        gxe.ExpectColumnValuesToBeUnique(column="prompt_id"),
    ])


def validate_variants(df: pd.DataFrame) -> SuiteReport:
    """Variants: unique ids; prompt, attribute, group and text present; every swap validated."""
    gxe = _gxe()
    cols = ["variant_id", "prompt_id", "attribute", "grp", "text", "valid"]
    return _run("variants", df[cols], [
        gxe.ExpectColumnValuesToNotBeNull(column="variant_id"),
        gxe.ExpectColumnValuesToBeUnique(column="variant_id"),
        *[gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("prompt_id", "attribute", "grp")],
        gxe.ExpectColumnValuesToMatchRegex(column="text", regex=r"\S"),
        gxe.ExpectColumnValuesToBeInSet(column="valid", value_set=[True]),
    ])


def validate_responses(df: pd.DataFrame) -> SuiteReport:
    """Responses: one row per (variant, sample); each has a response or a recorded failure."""
    gxe = _gxe()
    frame = df[["variant_id", "sample_idx", "ok"]].copy()
    answered = df["ok"].astype(bool) & df["text"].notna()
    failed = ~df["ok"].astype(bool) & df["error_class"].notna()
    frame["accounted_for"] = answered | failed
    return _run("responses", frame, [
        gxe.ExpectColumnValuesToNotBeNull(column="ok"),
        gxe.ExpectColumnValuesToBeInSet(column="accounted_for", value_set=[True]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["variant_id", "sample_idx"]),
    ])


def validate_scores(df: pd.DataFrame, ranges: dict[str, tuple[float, float]]) -> SuiteReport:
    """Scores: present and within each scalar scorer's declared range."""
    gxe = _gxe()
    outcomes: list[ExpectationOutcome] = []
    for scorer, (lo, hi) in ranges.items():
        part = df.loc[df["scorer"] == scorer, ["value"]].rename(columns={"value": scorer}).reset_index(drop=True)
        report = _run("scores", part, [
            gxe.ExpectColumnValuesToNotBeNull(column=scorer),
            gxe.ExpectColumnValuesToBeBetween(column=scorer, min_value=lo, max_value=hi),
        ])
        outcomes += report.outcomes
    return SuiteReport("scores", all(o.success for o in outcomes), outcomes)


def raise_on_failure(report: SuiteReport) -> None:
    if not report.success:
        raise ValidationFailed(report.summary())
