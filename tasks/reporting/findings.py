"""The verdict as data: what a gate acts on and what scripts read.

A **finding** is a difference the verdict reports beyond chance: a judged pair whose gap is beyond
noise after Holm (:func:`equilens.tasks.metrics.judged.beyond_noise`), a decisions score whose
Holm p-value is below alpha, or a target metric whose interval excludes its fair value. Each is one
:class:`Finding` with its metric, groups, value, interval, ``p_holm``, the metric's declared
direction and the verdict sentence it belongs to. :func:`run_findings` reads them off the stored
metric rows through the same verdicts the terminal, the HTML report and ``equilens show`` print, so a
gate never disagrees with the report it links to.

Three consumers: ``equilens run --fail-on-finding`` and ``execution.fail_on: finding`` (exit 1, a
deployment's flow run ends Failed), ``--junit PATH`` (:func:`junit_xml`), and ``equilens show --format
json`` (:func:`verdict_objects`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
from equilens.tasks.errors import EquilensError
from equilens.tasks.reporting.verdict import Verdict, number_or_none, run_verdicts


class FindingsFound(EquilensError):
    """A run told to fail on a finding (``execution.fail_on: finding``) found one. Raised after the run
    is stored and its report written; ``result`` is what the flow would have returned."""

    exit_code = 1

    def __init__(self, message: str, result: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.result = result or {}


@dataclass(frozen=True)
class Finding:
    """One difference beyond chance."""

    subject: str  # the verdict's subject: an attribute, a family, a decisions comparison
    metric: str
    groups: list[str]
    value: float | None  # the gap (or the metric's value, for a target metric)
    interval: list[float | None]
    p_holm: float | None
    direction: str  # the metric's declared direction: lower, higher or target (fair value)
    sentence: str  # the verdict sentence that reports it

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Judged:
    """A run's verdicts and the findings among them."""

    verdicts: list[Verdict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.findings)


def _number(value: Any) -> float | None:  # a stored cell
    n = number_or_none(value)
    return None if n is None or not math.isfinite(n) else float(n)


def _direction(metric: str) -> str:
    from equilens.tasks.metrics import METRICS

    if metric not in METRICS:
        return ""
    spec = METRICS.get(metric)
    return f"target {spec.target:g}" if spec.direction == "target" and spec.target is not None else spec.direction


def run_findings(metrics: pd.DataFrame, config: dict[str, Any] | None = None) -> Judged:
    """The verdicts of a run's metric rows and every finding they report."""
    verdicts = run_verdicts(metrics, config)
    found = []
    for v in verdicts:
        for e in v.evidence:
            if e.get("beyond_noise") is not True:
                continue
            pair = str(e.get("pair") or "")
            groups = pair.split(" vs ") if pair else []
            value = _number(e.get("gap")) if e.get("gap") is not None else _number(e.get("value"))
            ci = e.get("gap_ci") or [None, None]
            found.append(Finding(subject=v.subject, metric=str(e["metric"]), groups=groups, value=value,
                                 interval=[_number(ci[0]), _number(ci[1])], p_holm=_number(e.get("p_holm")),
                                 direction=_direction(str(e["metric"])), sentence=v.sentence))
    return Judged(verdicts, found)


def stored_findings(store: Any, run_id: str, config: dict[str, Any] | None = None) -> Judged:  # a Store
    """The verdicts and findings of a run's stored metric rows (what the report and ``show`` print);
    ``config``: the run's stored config where the caller has read it already."""
    config = store.run_config(run_id) if config is None else config
    return run_findings(store.query("SELECT * FROM metrics WHERE run_id = ?", [run_id]), config)


def verdict_objects(metrics: pd.DataFrame, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"verdicts": [...], "findings": [...]}`` as plain JSON-able objects (``show --format json``)."""
    judged = run_findings(metrics, config)
    return {"verdicts": [{"subject": v.subject, "beyond_chance": v.beyond_noise, "sentence": v.sentence}
                         for v in judged.verdicts],
            "findings": [f.as_dict() for f in judged.findings]}


def gate_message(judged: Judged) -> str:
    """The paragraph a failed gate prints: how many findings, and each verdict that reports one."""
    subjects = list(dict.fromkeys(f.subject for f in judged.findings))
    sentences = [v.sentence for v in judged.verdicts if v.subject in subjects]
    n = len(judged.findings)
    return (f"fairness gate failed: {n} finding{'s' if n != 1 else ''} beyond chance in "
            f"{', '.join(subjects)}. " + " ".join(sentences))


def junit_xml(judged: Judged, suite: str, examples: dict[str, str] | None = None, seconds: float = 0.0) -> str:
    """JUnit XML of a run's verdicts: a test case per verdict (an attribute, a task, a family) with one
    ``<failure>`` when it reports findings, its message the verdict sentence and its body each
    finding's numbers and ``examples[subject]`` (an example pair of answers, as text); a verdict that
    could judge nothing is ``<skipped>``. The suite counts test cases, as JUnit readers do. Every text
    is escaped by the XML writer."""
    import xml.etree.ElementTree as ET

    from equilens.tasks.plain import visible

    examples = examples or {}
    failing = {f.subject for f in judged.findings}
    root, cases = _suites(suite, tests=str(len(judged.verdicts)),
                          failures=str(sum(v.subject in failing for v in judged.verdicts)),
                          skipped=str(sum(v.beyond_noise is None and v.subject not in failing for v in judged.verdicts)),
                          time=f"{seconds:.3f}")
    for v in judged.verdicts:
        case = ET.SubElement(cases, "testcase", classname=visible(f"equilens.{suite}"), name=visible(v.subject))
        mine = [f for f in judged.findings if f.subject == v.subject]
        if mine:
            numbers = [f"metric {f.metric}; groups {' vs '.join(f.groups)}; value {f.value}; interval {f.interval}; "
                       f"p_holm {f.p_holm}; direction {f.direction}" for f in mine]
            example = examples.get(v.subject, "")
            body = "\n".join(numbers) + (f"\n\nan example pair of answers:\n{example}" if example else "")
            failure = ET.SubElement(case, "failure", message=visible(v.sentence),
                                    type=visible(", ".join(dict.fromkeys(f.metric for f in mine))))
            failure.text = visible(body)
        elif v.beyond_noise is None:
            ET.SubElement(case, "skipped", message=visible(v.sentence))
        else:
            ET.SubElement(case, "system-out").text = visible(v.sentence)
    return _written(root)


def junit_error_xml(suite: str, message: str) -> str:
    """JUnit XML of a run that ended without a verdict (a validation gate, the application's calls
    failing): one test case with an ``<error>`` whose message says why, so a CI reporter shows the
    failure where it would show a finding."""
    import xml.etree.ElementTree as ET

    from equilens.tasks.plain import visible

    root, cases = _suites(suite, tests="1", failures="0", errors="1", skipped="0")
    case = ET.SubElement(cases, "testcase", classname=visible(f"equilens.{suite}"), name="run")
    ET.SubElement(case, "error", message=visible(message.split("\n")[0][:500]), type="run ended").text = visible(message)
    return _written(root)


def _suites(suite: str, **counts: str) -> tuple[Any, Any]:
    """(the ``<testsuites>`` root, its one ``<testsuite>`` named ``suite`` with ``counts``)."""
    import xml.etree.ElementTree as ET

    from equilens.tasks.plain import visible

    root = ET.Element("testsuites", name="equilens")
    return root, ET.SubElement(root, "testsuite", name=visible(suite), **counts)


def _written(root: Any) -> str:
    """JUnit XML as text, indented, with its declaration."""
    import xml.etree.ElementTree as ET

    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
