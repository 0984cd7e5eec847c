"""What :func:`equilens.assess` returns: one stored run as DataFrames, its verdicts, tables and report."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass
class AssessmentResult:
    """One run, read back from its DuckDB file.

    ``metrics`` has a row per metric and group pair (``value``, ``ci_low``, ``ci_high``, ``n``,
    ``direction``, ``details`` as a dict) plus ``p_holm`` and ``beyond_noise`` (the verdict of that row:
    True / False for a counterfactual pair with a noise floor, None where nothing is judged);
    ``verdicts`` holds one sentence per attribute or family, ``findings`` every difference beyond chance
    as an object. ``responses``, ``variants`` and ``prompts``
    are the run's stored rows. In a notebook the object shows the verdicts and the terminal tables.
    """

    run_id: str
    db_path: str
    status: str
    config: dict[str, Any]
    summary: dict[str, Any]
    metrics: pd.DataFrame
    verdicts: list[str]
    responses: pd.DataFrame
    variants: pd.DataFrame
    prompts: pd.DataFrame
    report_path: str | None = None
    _verdict_objects: list[Any] = field(default_factory=list, repr=False)

    @classmethod
    def load(cls, db_path: str | Path, run_id: str, summary: dict[str, Any] | None = None) -> AssessmentResult:
        """Read run ``run_id`` (a full id) from ``db_path``; any stored run works, not only this session's."""
        from equilens.tasks.errors import StorageError
        from equilens.tasks.reporting.verdict import run_verdicts
        from equilens.tasks.storage.store import Store

        store = Store(db_path)
        run = store.query("SELECT status, config, summary FROM runs WHERE run_id = ?", [run_id])
        if run.empty:
            raise StorageError(f"No run {run_id!r} in {db_path} (see `equilens runs --db {db_path}`).")
        config = _json(run["config"].iloc[0])
        stored_summary = _json(run["summary"].iloc[0])
        q = lambda table: store.query(f"SELECT * EXCLUDE (run_id) FROM {table} WHERE run_id = ?", [run_id])  # noqa: E731
        metrics = q("metrics")
        metrics["details"] = [_json(d) for d in metrics["details"]]
        said = run_verdicts(metrics, config)
        metrics = _with_verdict_columns(metrics, said)
        variants = q("variants")
        for column in ("swapped", "problems"):
            if column in variants:
                variants[column] = [_json(v, []) for v in variants[column]]
        prompts = q("prompts")
        if "mentions" in prompts:
            prompts["mentions"] = [_json(v) for v in prompts["mentions"]]
        summary = summary or stored_summary
        return cls(run_id=run_id, db_path=str(db_path), status=str(run["status"].iloc[0]), config=config,
                   summary=summary, metrics=metrics, verdicts=[v.sentence for v in said],
                   responses=q("responses"), variants=variants, prompts=prompts,
                   report_path=(summary or {}).get("report"), _verdict_objects=said)

    @property
    def findings(self) -> list[Any]:
        """Every difference beyond chance the verdicts report, as
        :class:`equilens.tasks.reporting.findings.Finding` objects (metric, groups, value, interval,
        p_holm, direction, sentence); empty when the run found none."""
        from equilens.tasks.reporting.findings import run_findings

        return run_findings(self.metrics, self.config).findings

    def report(self, path: str | Path) -> Path:
        """Write the self-contained HTML report of this run (the same as ``equilens report``) to ``path``."""
        from equilens.tasks.reporting.html import write_html_report
        from equilens.tasks.storage.store import Store

        return write_html_report(Store(self.db_path), self.run_id, Path(path))

    def tables(self) -> str:
        """The metrics tables as the terminal shows them (plain text, no colour)."""
        if self.metrics.empty:
            return "(no metrics: see summary)"
        from equilens.tasks.reporting.terminal import print_metrics_table

        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            print_metrics_table(self.metrics)
        return buffer.getvalue().rstrip()

    def _head(self) -> str:
        responses = self.summary.get("responses") or {}
        counts = (f", {responses.get('ok', 0)} of {responses.get('total', 0)} responses answered"
                  if responses else "")
        return f"equilens run {self.run_id} ({self.status}{counts}) in {self.db_path}"

    def __repr__(self) -> str:
        lines = [self._head(), "", "Verdict", *[f"  {s}" for s in self.verdicts or ["(none)"]], "", self.tables()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{escape(s)}</li>" for s in self.verdicts) or "<li>(none)</li>"
        return (f"<div><p><b>{escape(self._head())}</b></p><p>Verdict</p><ul>{items}</ul>"
                f"<pre style='font-size:12px;line-height:1.25'>{escape(self.tables())}</pre></div>")


def _json(value: Any, empty: Any = None) -> Any:
    """A JSON column's value as Python data ({} or ``empty`` when missing)."""
    default = {} if empty is None else empty
    if isinstance(value, (dict, list)):
        return value
    if isinstance(value, str) and value:
        try:
            return json.loads(value)
        except ValueError:
            return default
    return default


def _with_verdict_columns(metrics: pd.DataFrame, said: list[Any]) -> pd.DataFrame:
    """``p_holm`` from each row's details and ``beyond_noise`` from the verdicts' evidence: every row a
    verdict judged (parity, similarity, outcome gaps, the judge's harm) has True or False."""
    from equilens.tasks.reporting.terminal import p_of

    out = metrics.copy()
    out["p_holm"] = [p_of(d) for d in out["details"]]
    judged = {(v.subject, e["metric"], e["pair"]): bool(e["beyond_noise"]) for v in said for e in v.evidence}
    out["beyond_noise"] = [judged.get((str(a), m, f"{ga} vs {gb}"))
                           for a, m, ga, gb in zip(out["attribute"], out["metric"], out["group_a"], out["group_b"],
                                                   strict=True)]
    return out
