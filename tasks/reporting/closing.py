"""What a run says when it ends: the lines ``equilens run`` prints, the markdown artifact the Prefect
UI shows, and the JUnit XML a CI job reads (``--junit``). The first two tell the summary the flow
returned: the verdict, fairness through unawareness, the variants left out, the answers' tally, what
was skipped, then the metrics."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from equilens.tasks.config import RunConfig
from equilens.tasks.reporting.terminal import ARROW, format_interval, pair_label, worst_pairs


def print_run_result(result: dict, db: str, say: Callable[[str], None]) -> None:
    """A finished run in the terminal, each line through ``say`` (the command's own output), the
    verdict and metric tables from the stored rows (with their gaps, p-values, skip reasons, caveats)."""
    from equilens.tasks.inputs.variant_validation import lost_lines
    from equilens.tasks.reporting.readings import unread_decisions_line
    from equilens.tasks.reporting.terminal import print_metrics_table, print_verdicts

    metrics = pd.DataFrame(result.get("metrics", []))
    config: dict = {}
    if not metrics.empty:
        from equilens.tasks.storage.store import Store

        store = Store(db)
        metrics = store.query("SELECT * FROM metrics WHERE run_id = ?", [result["run_id"]])
        config = store.run_config(result["run_id"])
    say(f"\nrun {result['run_id']}")
    if not metrics.empty:
        print_verdicts(metrics, config)
    ftu = result.get("ftu")
    if ftu:
        counts = ", ".join(f"{k} in {v}" for k, v in ftu.get("counts", {}).items())
        say(f"fairness through unawareness {'holds' if ftu.get('holds') else 'does not hold'}: "
            f"attribute words found ({counts or 'none'}) of {ftu.get('prompts', 0)} prompts")
    for line in lost_lines((result.get("variants") or {}).get("lost") or {}):
        say(line)
    if "sentences" in result:
        s = result["sentences"]
        say(f"test sentences: {s['kept']} kept of {s['total']} (review: {s['csv']})")
    for name, reason in (result.get("skipped") or {}).items():
        say(f"skipped {name}: {reason}")
    if "responses" in result:
        r = result["responses"]
        cut = f", {r['cut']} cut at the answer cap (llm.max_answer_chars)" if r.get("cut") else ""
        say(f"responses: {r['ok']} ok, {r['failed']} failed, {r['refusals']} refusals, {r['cached']} from cache{cut}")
    if unread := unread_decisions_line(result.get("p_yes")):
        say(unread)
    if not metrics.empty:
        print_metrics_table(metrics)
    say(f"stored in {db} (equilens show {result['run_id']} --db {db})")
    if result.get("report"):
        say(f"report: {result['report']}")


def write_junit(db: str, run_id: str, path: Path) -> None:
    """The JUnit XML of a stored run at ``path``: a test case per verdict, a failure per finding with
    its sentence and an example pair of answers."""
    from equilens.tasks.reporting.evidence import find_evidence, plain_examples
    from equilens.tasks.reporting.findings import junit_xml, stored_findings
    from equilens.tasks.storage.store import Store

    store = Store(db)
    config = store.run_config(run_id)
    examples = plain_examples(find_evidence(store, run_id, 1))
    path.write_text(junit_xml(stored_findings(store, run_id, config), str(config.get("name") or run_id), examples),
                    encoding="utf-8")


def markdown_report(
    run_id: str, config: RunConfig, summary: dict[str, Any], metrics: pd.DataFrame, responses: pd.DataFrame,
    evidence: list | None = None,
) -> str:
    """The run's markdown artifact: verdict, FTU, least fair pairs, the answers behind the gaps
    (``evidence``, from :func:`equilens.tasks.reporting.evidence.find_evidence`), non-completion, usage.
    Every name, model and text in it passes :func:`~equilens.tasks.plain.markdown` (or
    :func:`~equilens.tasks.plain.markdown_code` in a code span)."""
    from equilens.tasks.plain import markdown as md
    from equilens.tasks.plain import markdown_code as code
    from equilens.tasks.reporting.evidence import markdown_lines

    ftu = summary.get("ftu", {})
    from equilens.tasks.reporting.verdict import verdict_lines

    lines = [f"# equilens run {code(run_id)}", "", f"**{md(config.name)}** · model {code(config.llm.shown_name)} "
             f"({md(config.llm.provider)}) · {config.llm.count} response(s) per variant", ""]
    said = verdict_lines(metrics, config.model_dump(mode="json")) if not metrics.empty else []
    if said:
        lines += ["## Verdict", "", *[f"- {md(s)}" for s in said], ""]
    if ftu:  # an assessment that checks it (identity gives every prompt a group: nothing to check)
        counts = ", ".join(f"{md(k)}: {md(v)}" for k, v in ftu.get("counts", {}).items()) or "none"
        lines += ["## Fairness through unawareness",
                  f"{'Holds' if ftu.get('holds') else 'Does not hold'}: prompts mentioning each attribute "
                  f"({ftu.get('prompts', 0)} prompts): {counts}.", ""]
    from equilens.tasks.inputs.variant_validation import lost_lines

    lines += [f"- {md(line)}." for line in lost_lines((summary.get("variants") or {}).get("lost") or {})]
    if not metrics.empty:
        lines += ["## Least fair group pair per metric", "", "| attribute | metric | pair | value [95% CI] | direction |",
                  "|---|---|---|---|---|"]
        for _, r in worst_pairs(metrics).iterrows():
            lines.append(f"| {md(r['attribute'])} | {md(r['metric'])} | {md(pair_label(r))} | {format_interval(r)} | "
                         f"{md(ARROW.get(r['direction'], r['direction']))} |")
        lines.append("")
    lines += markdown_lines(evidence or [])
    if not responses.empty:
        lines += ["## Non-completion by group", "", "| attribute | group | calls | failed | refused |", "|---|---|---|---|---|"]
        from equilens.tasks.inputs.controls import variant_rows

        grouped = variant_rows(responses).groupby(["attribute", "grp"], sort=True)  # controls: in the totals only
        for (attribute, grp), sub in grouped:
            lines.append(f"| {md(attribute)} | {md(grp)} | {len(sub)} | {int((~sub['ok']).sum())} | "
                         f"{int(sub['refusal'].sum())} |")
        errors = responses.loc[~responses["ok"], "error_class"].value_counts()
        if len(errors):
            lines += ["", "Failures by class: " + ", ".join(f"{md(k)} ({v})" for k, v in errors.items())]
        lines.append("")
    usage = summary.get("usage") or {}
    if usage:
        cost = f", cost {usage['cost']:.4f}" if usage.get("cost") is not None else ""
        p50 = usage.get("latency_p50_s")
        lines += ["## Usage", f"{usage['calls']} calls, {usage.get('prompt_tokens') or 0} prompt + "
                  f"{usage.get('completion_tokens') or 0} completion tokens"
                  + (f", latency p50 {p50:.2f} s" if p50 is not None else "") + cost + ".", ""]
    skipped = summary.get("skipped") or {}
    if skipped:
        lines += ["## Skipped", *[f"- **{md(k)}**: {md(v)}" for k, v in skipped.items()], ""]
    return "\n".join(lines)
