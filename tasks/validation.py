"""great-expectations suites between pipeline stages (GX 1.x, one ephemeral context per process).

Each ``validate_*`` function runs one suite on a DataFrame and returns a :class:`SuiteReport`;
:func:`raise_on_failure` turns a failed report into :class:`ValidationFailed` with a readable
summary (which expectation, on which column, how many rows of how many, examples). The flows store
every report in DuckDB's ``validations`` table.

``great_expectations`` costs several seconds to import, so it is imported lazily, and the context
(which cannot be pickled) is built once per process and reused: one pandas data source with one
DataFrame asset per stage, fed a new DataFrame on every call. Suites are never saved to the context.
A required column that is missing fails ``expect_column_to_exist`` instead of crashing the suite.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from equilens.tasks.errors import ValidationFailed
from equilens.tasks.stats.importing import IMPORTING

MAX_EXAMPLES = 5
MAX_EXAMPLE_CHARS = 200
_SOURCE = "equilens"
_lock = threading.RLock()
_state: dict[str, Any] = {}


@dataclass(frozen=True)
class ExpectationOutcome:
    """The result of one expectation on one batch."""

    expectation: str
    column: str | None
    success: bool
    element_count: int
    unexpected_count: int
    examples: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line: expectation, column, count of unexpected rows and up to three examples."""
        where = f" on column {self.column!r}" if self.column else ""
        if self.unexpected_count:
            count = f": {self.unexpected_count} of {self.element_count} rows unexpected"
        else:  # a table-level or aggregate expectation: the example says what was observed
            count = f" ({self.element_count} rows)"
        shown = ", ".join(repr(e) for e in self.examples[:3])
        return f"{self.expectation}{where}{count}" + (f"; e.g. {shown}" if shown else "")


@dataclass(frozen=True)
class SuiteReport:
    """All expectation outcomes of one stage's suite."""

    stage: str
    success: bool
    outcomes: list[ExpectationOutcome]

    def summary(self) -> str:
        """Readable multi-line text naming every failed expectation."""
        failed = [o for o in self.outcomes if not o.success]
        if not failed:
            return f"Validation of {self.stage} passed: all {len(self.outcomes)} expectations met."
        head = (f"Validation of {self.stage} failed: {len(failed)} of {len(self.outcomes)} "
                f"expectations not met.")
        return "\n".join([head, *(f"  - {o.describe()}" for o in failed)])

    def to_frame(self, run_id: str) -> pd.DataFrame:
        """Rows for the ``validations`` table (``examples`` stays a list; the store writes JSON)."""
        cols = ["run_id", "stage", "expectation", "success", "column_name", "element_count",
                "unexpected_count", "examples"]
        return pd.DataFrame(
            [[run_id, self.stage, o.expectation, o.success, o.column, o.element_count,
              o.unexpected_count, list(o.examples)] for o in self.outcomes],
            columns=cols,
        )


def _context() -> Any:
    """The process-wide ephemeral GX context, built on first use with progress bars off."""
    with _lock:
        if "ctx" not in _state:
            os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
            with IMPORTING:
                import great_expectations as gx
                from great_expectations.data_context.types.base import ProgressBarsConfig

            ctx = gx.get_context(mode="ephemeral")
            ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
            _state["ctx"] = ctx
        return _state["ctx"]


def _batch_definition(stage: str) -> Any:
    """Whole-DataFrame batch definition for ``stage``'s asset, created once and reused."""
    key = f"bd:{stage}"
    if key not in _state:
        sources = _context().data_sources
        try:
            source = sources.get(_SOURCE)
        except KeyError:
            source = sources.add_pandas(_SOURCE)
        try:
            asset = source.get_asset(stage)
        except LookupError:
            asset = source.add_dataframe_asset(stage)
        try:
            _state[key] = asset.get_batch_definition("whole")
        except KeyError:
            _state[key] = asset.add_batch_definition_whole_dataframe("whole")
    return _state[key]


def _gxe() -> Any:
    with IMPORTING:
        import great_expectations.expectations as gxe

    return gxe


def _columns(exp: Any) -> list[str]:
    column = getattr(exp, "column", None)
    return [column] if column else list(getattr(exp, "column_list", None) or [])


def _stringify(values: Sequence[Any]) -> list[str]:
    out: list[str] = []
    for v in values:
        s = str(v)[:MAX_EXAMPLE_CHARS]
        if s not in out:
            out.append(s)
        if len(out) == MAX_EXAMPLES:
            break
    return out


def _exception_message(info: Any) -> str | None:
    """GX reports either one exception dict or a dict of them keyed by metric id."""
    if not isinstance(info, dict):
        return None
    if info.get("raised_exception"):
        return str(info.get("exception_message"))
    for value in info.values():
        if isinstance(value, dict) and value.get("raised_exception"):
            return str(value.get("exception_message"))
    return None


def _outcome(r: Any, rows: int, present: Sequence[str]) -> ExpectationOutcome:
    """One GX validation result as an outcome; errors and table-level results say what happened."""
    cfg = r.expectation_config
    kwargs = {k: v for k, v in cfg.kwargs.items() if k not in ("batch_id", "result_format")}
    columns = kwargs.get("column_list") or ([kwargs["column"]] if kwargs.get("column") else [])
    res = r.result or {}
    success = bool(r.success)
    error = _exception_message(r.exception_info)
    if error is not None:
        return ExpectationOutcome(cfg.type, ",".join(columns) or None, False, rows, rows,
                                  [f"error: {error}"])
    unexpected = res.get("unexpected_count")
    if unexpected is None:  # table-level or aggregate expectation: report what was observed
        examples: list[str] = []
        if not success and cfg.type == "expect_column_to_exist":
            examples = [f"column missing; present: {', '.join(map(str, present)) or 'none'}"]
        elif not success:
            expected = ", ".join(f"{k}={v}" for k, v in kwargs.items() if k not in ("column", "column_list"))
            examples = [f"observed {json.dumps(res.get('observed_value'), default=str)}"
                        + (f"; expected {expected}" if expected else "")]
        return ExpectationOutcome(cfg.type, ",".join(columns) or None, success, rows, 0, examples)
    return ExpectationOutcome(cfg.type, ",".join(columns) or None, success,
                              int(res.get("element_count", rows)), int(unexpected),
                              _stringify(res.get("partial_unexpected_list") or []))


def _run(stage: str, frame: pd.DataFrame, missing: Sequence[str], expectations: list[Any]) -> SuiteReport:
    """Validate ``frame`` against ``expectations``; each ``missing`` column fails by name and
    expectations on columns absent from ``frame`` are left out."""
    _context()  # ExpectationSuite.add_expectation needs an active context, even for unsaved suites
    with IMPORTING:
        import great_expectations as gx

    gxe = _gxe()
    runnable = [e for e in expectations if all(c in frame.columns for c in _columns(e))]
    suite_items = [gxe.ExpectColumnToExist(column=c) for c in missing] + runnable
    suite = gx.ExpectationSuite(name=f"equilens-{stage}")
    for i, exp in enumerate(suite_items):
        exp.meta = {"order": i}
        suite.add_expectation(exp)
    with _lock:
        batch = _batch_definition(stage).get_batch(batch_parameters={"dataframe": frame})
        try:
            result = batch.validate(suite, result_format={"result_format": "SUMMARY",
                                                          "partial_unexpected_count": 20})
        finally:
            _forget(batch)
    ordered = sorted(result.results, key=lambda r: (r.expectation_config.meta or {}).get("order", 0))
    outcomes = [_outcome(r, len(frame), list(frame.columns)) for r in ordered]
    return SuiteReport(stage, all(o.success for o in outcomes), outcomes)


def _forget(batch: Any) -> None:
    """Drop the validated frame from GX's execution engine, which caches every batch it loads: the
    context lives as long as the process, so each suite's frame (at 100,000 prompts, a million rows
    of variants or answers) would otherwise stay in memory until the run ends."""
    manager = getattr(getattr(getattr(batch, "data", None), "execution_engine", None), "batch_manager", None)
    if manager is not None:
        manager.reset_batch_cache()
        manager.batch_data_cache.clear()


def _text_checks(column: str, frame: pd.DataFrame) -> list[Any]:
    """Not null, a string (skipped on an empty frame, whose dtype means nothing), not blank."""
    gxe = _gxe()
    checks = [gxe.ExpectColumnValuesToNotBeNull(column=column)]
    if len(frame):
        checks.append(gxe.ExpectColumnValuesToBeOfType(column=column, type_="str"))
    checks.append(gxe.ExpectColumnValuesToMatchRegex(column=column, regex=r"\S"))
    return checks


def _pick(df: pd.DataFrame, cols: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """The present ones of ``cols`` (a new frame), and the missing ones."""
    return df[[c for c in cols if c in df.columns]], [c for c in cols if c not in df.columns]


def validate_prompts(df: pd.DataFrame) -> SuiteReport:
    """Prompts: at least one row; ``prompt_id`` present and unique; ``text`` a non-blank string."""
    gxe = _gxe()
    cols = ["prompt_id", "text"]
    frame, missing = _pick(df, cols)
    return _run("prompts", frame, missing, [
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
        gxe.ExpectColumnValuesToNotBeNull(column="prompt_id"),
        gxe.ExpectColumnValuesToBeUnique(column="prompt_id"),
        *_text_checks("text", frame),
    ])


def validate_variants(df: pd.DataFrame) -> SuiteReport:
    """Variants: unique ids; prompt, attribute and group present; non-blank text; every swap valid."""
    gxe = _gxe()
    cols = ["variant_id", "prompt_id", "attribute", "grp", "text", "valid"]
    frame, missing = _pick(df, cols)
    return _run("variants", frame, missing, [
        gxe.ExpectColumnValuesToNotBeNull(column="variant_id"),
        gxe.ExpectColumnValuesToBeUnique(column="variant_id"),
        *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("prompt_id", "attribute", "grp")),
        *_text_checks("text", frame),
        gxe.ExpectColumnValuesToNotBeNull(column="valid"),  # in_set skips missing values
        gxe.ExpectColumnValuesToBeInSet(column="valid", value_set=[True]),
    ])


def _is(values: pd.Series, flag: bool) -> Any:
    """Boolean mask (numpy) of values equal to ``flag``; missing values count as not equal."""
    return values.eq(flag).fillna(False).to_numpy(dtype=bool)


def validate_responses(df: pd.DataFrame) -> SuiteReport:
    """Responses: ``ok`` set; each row answered (ok, text) or failed with an ``error_class``; one
    row per (variant_id, sample_idx).

    The derived column ``accounted_for`` is True for such rows and otherwise describes the row, so
    the failure's examples say which rows are neither answered nor recorded as failed.
    """
    gxe = _gxe()
    cols = ["variant_id", "sample_idx", "text", "ok", "error_class"]
    frame, missing = _pick(df, cols)
    frame = frame.drop(columns=[c for c in ("text", "error_class") if c in frame.columns])
    if not missing:
        ok = df["ok"]
        answered = _is(ok, True) & df["text"].notna().to_numpy()
        failed = _is(ok, False) & df["error_class"].notna().to_numpy()
        frame["accounted_for"] = _derived_check(df[cols], ~(answered | failed), lambda r: (
            f"variant_id={r.variant_id} sample_idx={r.sample_idx}: ok={r.ok}, "
            f"text={'missing' if pd.isna(r.text) else 'present'}, "
            f"error_class={'missing' if pd.isna(r.error_class) else r.error_class}")).to_numpy()
    return _run("responses", frame, missing, [
        gxe.ExpectColumnValuesToNotBeNull(column="variant_id"),
        gxe.ExpectColumnValuesToNotBeNull(column="ok"),
        gxe.ExpectColumnValuesToBeInSet(column="accounted_for", value_set=[True]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["variant_id", "sample_idx"]),
    ])


def validate_scores(df: pd.DataFrame, ranges: dict[str, tuple[float, float]]) -> SuiteReport:
    """Scores (long format ``scorer``, ``value``): each ranged scorer's values present and in range.

    Every scorer is its own batch; its outcomes name the column ``value[<scorer>]``.
    """
    gxe = _gxe()
    frame, missing = _pick(df, ["scorer", "value"])
    if missing:
        return _run("scores", frame, missing, [])
    outcomes: list[ExpectationOutcome] = []
    for scorer, (lo, hi) in ranges.items():
        part = df.loc[df["scorer"] == scorer, ["value"]].reset_index(drop=True)
        report = _run("scores", part, [], [
            gxe.ExpectColumnValuesToNotBeNull(column="value"),
            gxe.ExpectColumnValuesToBeBetween(column="value", min_value=lo, max_value=hi),
        ])
        outcomes += [replace(o, column=f"value[{scorer}]") for o in report.outcomes]
    return SuiteReport("scores", all(o.success for o in outcomes), outcomes)


def raise_on_failure(report: SuiteReport) -> None:
    """Raise :class:`ValidationFailed` with the report's summary when the suite failed."""
    if not report.success:
        raise ValidationFailed(report.summary())


def _derived_check(df: pd.DataFrame, bad: Any, describe: Any) -> pd.Series:
    """True for good rows; a description (from ``describe(row)``) for each bad one."""
    out = pd.Series(True, index=df.index, dtype=object)
    if bad.any():
        out[bad] = [describe(r) for r in df.loc[bad].itertuples(index=False)]
    return out


def validate_bias_sentences(df: pd.DataFrame) -> SuiteReport:
    """Bias-test sentences: at least one row; bias, group and attribute terms present; ``discarded``
    set; every kept sentence non-blank and contains its group term (``usable`` names the rows)."""
    gxe = _gxe()
    cols = ["bias", "group_term", "attribute_term", "sentence", "discarded"]
    frame, missing = _pick(df, cols)
    frame = frame.drop(columns=[c for c in ("sentence",) if c in frame.columns])
    if not missing:
        kept = _is(df["discarded"], False)
        text = df["sentence"].fillna("").astype(str)
        has_term = [bool(t) and t.lower() in s.lower() for s, t in zip(text, df["group_term"].fillna(""), strict=True)]
        bad = kept & ~(text.str.strip().ne("").to_numpy() & pd.Series(has_term, index=df.index).to_numpy())
        frame["usable"] = _derived_check(df, bad, lambda r: f"{r.bias}: kept sentence {r.sentence!r} lacks "
                                                             f"group term {r.group_term!r}").to_numpy()
    return _run("bias_sentences", frame, missing, [
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
        *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("bias", "group_term", "attribute_term", "discarded")),
        gxe.ExpectColumnValuesToBeInSet(column="discarded", value_set=[True, False]),
        gxe.ExpectColumnValuesToBeInSet(column="usable", value_set=[True]),
    ])


def validate_bias_pairs(df: pd.DataFrame) -> SuiteReport:
    """Scored stereotype pairs: every kept pair has two different sentences and two finite
    log-likelihoods (``scored`` names the rows that do not)."""
    import numpy as np

    gxe = _gxe()
    cols = ["bias", "stereotyped_sentence", "anti_stereotyped_sentence", "stereotyped_logprob",
            "anti_stereotyped_logprob", "discarded"]
    frame, missing = _pick(df, cols)
    frame = frame[[c for c in ("bias", "discarded") if c in frame.columns]]
    if not missing:
        kept = _is(df["discarded"], False)
        lp = df[["stereotyped_logprob", "anti_stereotyped_logprob"]].apply(pd.to_numeric, errors="coerce")
        finite = np.isfinite(lp.to_numpy(dtype=float)).all(axis=1)
        differ = (df["stereotyped_sentence"].astype(str) != df["anti_stereotyped_sentence"].astype(str)).to_numpy()
        bad = kept & ~(finite & differ)
        frame = frame.assign(scored=_derived_check(
            df, bad, lambda r: f"{r.bias}: {r.stereotyped_sentence!r} / {r.anti_stereotyped_sentence!r} "
                               f"scored {r.stereotyped_logprob} / {r.anti_stereotyped_logprob}").to_numpy())
    return _run("bias_pairs", frame, missing, [
        gxe.ExpectColumnValuesToNotBeNull(column="bias"),
        gxe.ExpectColumnValuesToNotBeNull(column="discarded"),
        gxe.ExpectColumnValuesToBeInSet(column="scored", value_set=[True]),
    ])


def validate_metrics(df: pd.DataFrame) -> SuiteReport:
    """Metric rows, as they are stored: a registered ``metric`` name on every row, and each row
    either a value (with both interval ends or neither) or no value with ``details.skipped`` saying
    why (the rule every family follows: a statistic that lacks data is skipped, with the reason).
    A value outside its interval is allowed: a percentile bootstrap of a biased statistic (a
    maximum over groups, a Wasserstein distance) can exclude the point estimate.

    The derived columns ``explained`` and ``whole_interval`` are True for such rows and otherwise
    describe the row.
    """
    from equilens.tasks.metrics import METRICS

    gxe = _gxe()
    cols = ["metric", "value", "ci_low", "ci_high", "details"]
    frame, missing = _pick(df, cols)
    frame = frame.drop(columns=[c for c in ("value", "ci_low", "ci_high", "details") if c in frame.columns])
    if not missing:
        skipped = df["details"].map(lambda d: isinstance(d, dict) and bool(d.get("skipped"))).to_numpy(dtype=bool)
        unexplained = df["value"].isna().to_numpy() & ~skipped
        half = (df["ci_low"].isna() != df["ci_high"].isna()).to_numpy()
        frame["explained"] = _derived_check(
            df, unexplained, lambda r: f"{r.metric}: no value and no details.skipped reason").to_numpy()
        frame["whole_interval"] = _derived_check(
            df, half, lambda r: f"{r.metric}: half an interval [{r.ci_low}, {r.ci_high}]").to_numpy()
    return _run("metrics", frame, missing, [
        gxe.ExpectColumnValuesToNotBeNull(column="metric"),
        gxe.ExpectColumnValuesToBeInSet(column="metric", value_set=METRICS.names()),
        gxe.ExpectColumnValuesToBeInSet(column="explained", value_set=[True]),
        gxe.ExpectColumnValuesToBeInSet(column="whole_interval", value_set=[True]),
    ])
