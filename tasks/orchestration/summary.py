"""What a run's summary holds: the one declared list of its keys, each with its type and meaning.

The summary is written by the stages as they run, stored as JSON in the ``runs`` row when the run
ends (:func:`equilens.tasks.orchestration.run_record.recorded_run`), returned by the flow beside the
run id, and read back by the terminal, the reports and ``equilens show``. Every key a stage writes
is declared here (``tests/test_run_summary.py`` holds the code to it); each is optional, since an
assessment writes only its own.
"""

from __future__ import annotations

from typing import Any, TypedDict


class RunSummary(TypedDict, total=False):
    """A run's summary (see the module docstring). A JSON object: every value is plain data."""

    error: str  # why the run failed or was interrupted ("ClassName: message", secrets scrubbed)
    source: str  # where the answers came from: "provider:model", or a file of brought answers
    responses: dict[str, Any]  # answer counts: total, ok, failed, refused, cached (run_record.response_counts)
    usage: dict[str, Any]  # tokens and calls of the model under test (tasks.llm.usage)
    metrics: list[dict[str, Any]]  # the stored metric rows, details left out
    skipped: dict[str, str]  # metric -> why it was stored as skipped
    verdicts: list[str]  # one sentence per verdict, as the terminal prints them
    findings: list[dict[str, Any]]  # the verdicts that found a gap beyond noise (the fairness gate reads them)
    families: list[str]  # the metric families the run computed (auto)
    caveats: list[str]  # what the scores of this run cannot tell (stereotype, auto)
    ftu: dict[str, Any]  # fairness through unawareness: holds, counts per group, prompts
    variants: dict[str, Any]  # counterfactual variants: total, controls, dropped sets, lost per attribute
    identity: dict[str, Any]  # identity variants: prompts, variants, cells
    reader: dict[str, Any]  # the model reader of outcomes: answers asked, read, disagreeing
    judge: dict[str, Any]  # the identity judge: pairs judged, directed, failed
    judge_check: dict[str, Any]  # the judge's check against labelled pairs, or why it is incomplete
    looks: dict[str, Any]  # a run that stops when settled: the looks taken and how it settled
    decisions: dict[str, Any]  # the decision set: items, scenarios, attributes
    p_yes: dict[str, Any]  # how P(yes) was read: by log-probabilities, by samples, unread
    questions: dict[str, int]  # BBQ: questions per category
    method: str  # BBQ: how an answer was read (the options' log-probabilities or the text)
    parsing: dict[str, Any]  # classification: labels parsed, unparsed per group
    positive_label: str  # classification: the decision whose rates are compared
    empty_lists: int  # recommendation: answers whose list held no item
    sentences: dict[str, Any]  # bias test: sentences generated, kept, and the CSV they were written to
    stereotype_score_json: str  # bias test: the path of the stereotype score export


class RunResult(RunSummary, total=False):
    """What an assessment flow returns: its summary, the run id and the HTML report written."""

    run_id: str
    report: str | None  # the HTML report's path (None when none was written)
