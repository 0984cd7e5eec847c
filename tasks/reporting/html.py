"""A self-contained HTML report of one run, rebuilt from DuckDB alone (no network, inline SVG).

Sections: the verdict and the glance figure, headline (FTU, responses, least fair pairs), the
answers behind the findings, metric per group pair with intervals, score distributions per group,
the trend of each metric across runs of the same name and model, non-completion by group, and the
full metrics table. :func:`report_context` reads what the report shows from DuckDB; the shipped
Jinja2 template ``templates/report.html.j2`` lays it out, escaping every value (control bytes shown
as visible escapes); the SVG charts are drawn in :mod:`equilens.tasks.reporting.svg`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.errors import StorageError, clipped
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.llm.base import ANSWER_CUT
from equilens.tasks.llm.conversation import FAILED_TURN
from equilens.tasks.metrics import METRICS
from equilens.tasks.plain import escape  # html.escape of visible(): no raw control bytes
from equilens.tasks.reporting.readings import unread_decisions_line
from equilens.tasks.reporting.svg import histogram_chart, interval_chart, line_chart
from equilens.tasks.reporting.terminal import (
    ARROW,
    format_interval,
    p_of,
    pair_label,
    significance_mark,
    table_legend,
    unjudged_note,
    worst_pairs,
)
from equilens.tasks.storage.store import Store
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:980px;color:#222;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#666} table{border-collapse:collapse;margin:.5rem 0;font-size:13px} td,th{padding:3px 10px;border-bottom:1px
solid #eee;text-align:left}
th{background:#f6f6f6} .ok{color:#2a7a3b} .bad{color:#b3261e} figure{margin:1rem 0}
svg .title{font-weight:600;font-size:13px} svg .hint{font-weight:400;fill:#777} svg .tick,svg .label,svg
.legend{font-size:11px;fill:#444}
svg .grid{stroke:#eee} svg .axis{stroke:#999} svg .whisker{stroke:#3b6ea8;stroke-width:2} svg .point{fill:#3b6ea8} svg
.point.found{fill:#b3261e}
.cards{display:flex;gap:1rem;flex-wrap:wrap} .card{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem;min-width:160px}
.card b{display:block;font-size:1.3rem}
details.examples{margin:.5rem 0} details.examples summary{cursor:pointer;font-weight:600;padding:2px 4px}
details.examples[open]>summary{background:#eef4ea} details.examples td{vertical-align:top;width:50%}
.reading{font-weight:600;color:#5a3e00;background:#fbf3dc;display:inline-block;padding:0 4px;border-radius:3px}
"""


def _load(store: Store, run_id: str) -> dict[str, pd.DataFrame]:
    run = store.query("SELECT * FROM runs WHERE run_id = ?", [run_id])
    if run.empty:
        raise StorageError(f"No run {run_id!r} in {store.path} (see `equilens runs`).")
    q = lambda sql, before=(): store.query(sql, [*before, run_id])  # noqa: E731
    return {
        "run": run,
        "metrics": q("SELECT * FROM metrics WHERE run_id = ?"),
        "responses": q("SELECT attribute, grp, text, ok, refusal, error_class, latency_s, prompt_tokens, "
                       "completion_tokens, coalesce(starts_with(error_message, ?), false) AS cut "
                       "FROM responses WHERE run_id = ?", [ANSWER_CUT]),
        "scores": q("SELECT text_hash, scorer, value FROM scores WHERE run_id = ?"),
        "conversation_failure": q(  # the first failed conversation's stored reason (the turn it ended at)
            "SELECT error_message FROM responses WHERE NOT ok AND regexp_matches(error_message, ?) AND run_id = ? "
            "ORDER BY prompt_id, variant_id, sample_idx LIMIT 1", ["^" + FAILED_TURN.pattern]),
        "validations": q("SELECT stage, expectation, success, column_name, unexpected_count, element_count "
                         "FROM validations WHERE run_id = ?"),
        # a trend compares like with like: runs of the same name AND the same provider and model
        "history": store.query(
            "SELECT r.run_id, r.started_at, r.config_hash, m.metric, m.attribute, avg(m.value) AS value FROM metrics m "
            "JOIN runs r USING (run_id) WHERE r.name = ? AND r.provider IS NOT DISTINCT FROM ? "
            "AND r.model IS NOT DISTINCT FROM ? AND r.status = 'completed' AND m.value IS NOT NULL "
            "AND NOT (m.group_b IS NOT NULL AND m.group_a = m.group_b) "  # noise floors are baselines, not pairs
            "GROUP BY ALL ORDER BY r.started_at",
            [run["name"].iloc[0], run["provider"].iloc[0], run["model"].iloc[0]]),
    }


def _table(frame: pd.DataFrame) -> dict[str, list]:
    """A frame as the template's table: its columns and rows (escaped when rendered)."""
    return {"columns": [str(c) for c in frame.columns], "rows": [list(row) for row in frame.itertuples(index=False)]}


def _html(text: str) -> Markup:
    """HTML built and escaped here (the inline SVG charts, the glance, the examples)."""
    return Markup(text)


def _environment() -> Environment:
    """Jinja2 over the shipped templates. Every value is escaped with :func:`escape`, which also shows
    control bytes as visible escapes; :class:`Markup` (HTML built here) passes as it is."""
    return Environment(loader=PackageLoader("equilens.tasks.reporting", "templates"), autoescape=True,
                       finalize=lambda v: v if isinstance(v, Markup) else Markup(escape(str(v))),
                       trim_blocks=False, keep_trailing_newline=True)


def build_html_report(store: Store, run_id: str, evidence: list | None = None) -> str:
    """The run's report: :func:`report_context` rendered by ``templates/report.html.j2``."""
    return _environment().get_template("report.html.j2").render(report_context(store, run_id, evidence))


def report_context(store: Store, run_id: str, evidence: list | None = None) -> dict[str, Any]:
    """What the report shows, read from DuckDB: the run, its verdicts and glance, the headline cards,
    the least fair pairs, skipped metrics, examples, charts, trend, non-completion and every metric.
    ``evidence``: the run's examples when the caller has found them already (as the run's close
    has), else they are found here (:func:`~equilens.tasks.reporting.evidence.find_evidence`)."""
    from equilens.tasks.reporting.evidence import REPORT_EXAMPLES, find_evidence, html_section
    from equilens.tasks.reporting.verdict import run_verdicts

    d = _load(store, run_id)
    run = d["run"].iloc[0]
    summary = json.loads(run["summary"]) if isinstance(run["summary"], str) else {}
    metrics, responses = d["metrics"], d["responses"]
    config = json.loads(run["config"]) if isinstance(run["config"], str) else {}
    said = run_verdicts(metrics, config)  # the sentences and the glance figures read the same verdicts
    valued = metrics[metrics["value"].notna()]
    skipped = metrics[metrics["value"].isna()]
    try:
        examples = _html(html_section(find_evidence(store, run_id, REPORT_EXAMPLES) if evidence is None else evidence))
    except Exception as err:  # noqa: BLE001 - the examples are one section; the rest of the report stands
        examples = _html(f"<section id=examples><p class=meta>examples unavailable: {escape(str(err)[:300])}</p>"
                         "</section>")
    worst, worst_note = _worst(valued)
    table = metrics[["family", "attribute", "group_a", "group_b", "metric", "value", "ci_low", "ci_high", "n", "direction"]]
    table = table.assign(p_holm=[p_of(x) for x in metrics["details"]],  # Holm-adjusted (else raw) p-value
                         sig=[significance_mark(x, metric=m, family=f) for x, m, f in
                              zip(metrics["details"], metrics["metric"], metrics["family"], strict=True)])
    return {
        "css": _html(CSS),
        "run": {k: str(run[k]) for k in ("run_id", "name", "flow", "model", "provider", "status", "started_at",
                                         "config_hash")},
        "verdicts": [v.sentence for v in said],
        "glance": _html(_glance(said, metrics)),
        "failure": str(summary["error"]) if summary.get("error") else None,
        "cards": _cards(summary, responses, next(iter(d["conversation_failure"]["error_message"].dropna()), None)),
        "worst": worst, "worst_note": worst_note,
        "skipped": _skipped(skipped),
        "examples": examples,
        "figures": _interval_figures(valued),
        "distributions": [_html(x) for x in _distributions(responses, d["scores"])],
        "trend": _trend(d["history"], run),
        "completion": _completion(responses),
        "all_metrics": _table(table.round(4).astype(object).where(table.notna(), "–")),
        "all_note": unjudged_note(metrics),
        "all_legend": table_legend(metrics),  # from what the run's metrics and families declare
        "validations": _table(d["validations"]) if len(d["validations"]) else None,
    }


def _skipped(skipped: pd.DataFrame) -> list[tuple[str, str]]:
    """(metric, reason) per line of the Skipped list: the rows of one metric with one reason fold into
    one line that names, per attribute, the groups ("female") and pairs ("female vs male") it holds
    for, in the order stored."""
    folded: dict[tuple[str, str], dict[str, list[str]]] = {}
    for r in skipped.to_dict("records"):
        details = json.loads(r["details"]) if isinstance(r["details"], str) else {}
        where = folded.setdefault((r["metric"], str(details.get("skipped", ""))), {})
        a, b = (r.get(k) if isinstance(r.get(k), str) and r.get(k) else None for k in ("group_a", "group_b"))
        attribute = r.get("attribute") if isinstance(r.get("attribute"), str) else ""
        names = where.setdefault(attribute, [])
        label = f"{a} vs {b}" if a and b and a != b else a or b
        if label and label not in names:
            names.append(label)
    lines = []
    for (metric, reason), where in folded.items():
        held = [f"{attribute}: {', '.join(names)}" if attribute and names else attribute or ", ".join(names)
                for attribute, names in where.items()]
        held = [h for h in held if h]
        lines.append((metric, f"{reason} ({'; '.join(held)})" if held else reason))
    return lines


def _cards(summary: dict[str, Any], responses: pd.DataFrame, failed_turn: str | None = None) -> list[dict[str, Any]]:
    """The headline cards: FTU, where a run that stops when settled stopped, responses (with
    ``failed_turn``, the first failed conversation's reason), latency, tokens."""
    cards = []
    ftu = summary.get("ftu")
    if ftu:
        cards.append({"label": "FTU", "cls": "ok" if ftu.get("holds") else "bad",
                      "value": "holds" if ftu.get("holds") else "does not hold",
                      "text": ", ".join(f"{k}: {v}" for k, v in ftu.get("counts", {}).items())})
    for attribute, lost in ((summary.get("variants") or {}).get("lost") or {}).items():
        cards.append({"label": f"{attribute} contexts left out", "cls": "bad", "value": f"{lost['lost']} of {lost['of']}",
                      "text": f"no valid variant set; first reason: {lost.get('reason') or 'see the variants table'}"})
    if looks := summary.get("looks"):
        cards.append({"label": "stopped at look", "cls": "ok" if looks.get("settled") else "",
                      "value": f"{looks['look']} of {looks['looks']}",
                      "text": f"{looks['prompts']:,} of {looks['planned']:,} prompts asked, "
                              + ("settled" if looks.get("settled") else "not settled")})
    if len(responses):
        failed = int((~responses["ok"].astype(bool)).sum())
        cards.append({"label": "responses", "value": len(responses),
                      "text": f"{failed} failed, {int(responses['refusal'].fillna(False).sum())} refused"
                              + (f"; first failed conversation: {clipped(failed_turn)}" if failed_turn else "")})
        lat = responses["latency_s"].dropna()
        if len(lat):
            cards.append({"label": "latency p50 / p95", "value": f"{lat.median():.2f} s",
                          "text": f"p95 {lat.quantile(.95):.2f} s"})
        if unread := unread_decisions_line(summary.get("p_yes")):
            p_yes = summary["p_yes"]
            cards.append({"label": "P(yes) unreadable", "cls": "bad", "value": f"{p_yes['unread']} of "
                          f"{p_yes['decisions']}", "text": unread})
        tok = responses["completion_tokens"].dropna()
        if len(tok):
            cards.append({"label": "completion tokens", "value": f"{int(tok.sum()):,}",
                          "text": f"prompt {int(responses['prompt_tokens'].dropna().sum()):,}"})
    return cards


def _worst(valued: pd.DataFrame) -> tuple[dict | None, str]:
    """The least fair pair per metric, and the note on metrics the verdict does not judge."""
    if not (len(valued) and valued["group_b"].notna().any()):
        return None, ""
    w = worst_pairs(valued)
    rows = pd.DataFrame({"attribute": w["attribute"], "metric": w["metric"], "least fair pair": w.apply(pair_label, axis=1),
                         "value [CI]": [v + significance_mark(x, metric=m, family=f) for v, x, m, f in
                                        zip(w.apply(format_interval, axis=1), w["details"], w["metric"],
                                            w["family"], strict=True)],
                         "fairer": w["direction"].map(ARROW)})
    return _table(rows), unjudged_note(w)


def _interval_figures(valued: pd.DataFrame) -> list[dict[str, Any]]:
    """One interval chart per (attribute, metric): each pair's value with its interval."""
    figs = []
    for (attribute, name), sub in valued.groupby(["attribute", "metric"], dropna=False, sort=True):
        rows = [(pair_label(r), r["value"], _f(r["ci_low"]), _f(r["ci_high"])) for _, r in sub.iterrows()]
        label = f"{name} · {attribute}" if isinstance(attribute, str) else name
        spec = METRICS.get(name) if name in METRICS else None
        figs.append({"metric": name, "svg": _html(interval_chart(
            label, rows, ARROW.get(sub["direction"].iloc[0], ""),
            spec.target if spec is not None and spec.direction == "target" else None,
            spec.value_range() if spec is not None else None))})
    return figs


def _trend(hist: pd.DataFrame, run: pd.Series) -> dict[str, Any] | None:
    """Each metric's mean over pairs across the runs of this name and model; a letter per config."""
    if hist["run_id"].nunique() <= 1:
        return None
    runs_order = list(dict.fromkeys(hist["run_id"]))
    hashes = dict(zip(hist["run_id"], hist["config_hash"], strict=True))
    letters: dict[str, str] = {}
    for r in runs_order:  # A, B, C...: runs with the same letter share a config
        letters.setdefault(str(hashes[r]), chr(ord("A") + len(letters) % 26))
    marks = [letters[str(hashes[r])] for r in runs_order]
    figures = []
    for name, sub in hist.groupby("metric", sort=True):
        series = {}
        for attribute, s2 in sub.groupby(sub["attribute"].fillna("all")):
            by_run = dict(zip(s2["run_id"], s2["value"], strict=True))
            series[str(attribute)] = [by_run.get(r) for r in runs_order]
        figures.append({"metric": name, "svg": _html(line_chart(
            f"{name}: mean over group pairs, runs named {run['name']}, model {run['model']} ({run['provider']})",
            runs_order, series, marks))})
    return {"letters": ", ".join(f"{v}: {k}" for k, v in letters.items()), "figures": figures}


def _completion(responses: pd.DataFrame) -> dict | None:
    """Calls, failures, refusals (and answers cut at ``llm.max_answer_chars``) per group."""
    if not len(responses):
        return None
    from equilens.tasks.inputs.controls import variant_rows

    nc = variant_rows(responses)
    nc = nc.assign(failed=~nc["ok"].astype(bool), refused=nc["refusal"].fillna(False).astype(bool))
    nc = nc.groupby(["attribute", "grp"]).agg(calls=("ok", "size"), failed=("failed", "sum"), refused=("refused", "sum"),
                                              cut=("cut", "sum"))
    nc = nc if nc["cut"].any() else nc.drop(columns="cut")
    return _table(nc.reset_index())


GLANCE_TITLES = {"number_outcome_gap": "relative amount gap per pair (share of the prompt's average)",
                 "yes_rate_gap": "yes-rate gap per pair (share of answers)",
                 "first_choice_rate_gap": "first-choice rate gap per pair (share of answers)"}
"""The title of each outcome gap's glance figure (the order in which they are shown)."""


def _glance(said: list, metrics: pd.DataFrame | None = None) -> str:  # the run's Verdicts (run_verdicts)
    """The verdicts at a glance. A verdict with outcome gaps (an identity comparison): one figure per
    outcome gap and one for the judge's harm score, each pair's signed gap with its interval and a
    band of the smallest detectable gap on both sides of 0, the judge's note under its figure, and
    a parity figure only for parity or similarity findings. Any other verdict: one figure of each
    pair's gap beyond noise for the headline metric (and any finding), sorted by gap. The first
    GLANCE_ROWS pairs are shown and the rest behind "show all"; a pair reads as its metric rows do."""
    from equilens.tasks.metrics import METRICS
    from equilens.tasks.reporting.families import family_report
    from equilens.tasks.reporting.readings import OUTCOME_GAPS
    from equilens.tasks.reporting.verdict import HEADLINE, SHORT

    figs, signed = [], False
    for v in said:
        families = {METRICS.get(e["metric"]).family for e in v.evidence if e["metric"] in METRICS}
        own = family_report(next(iter(families))).glance if len(families) == 1 else None
        if v.evidence and own is not None:  # a family that draws its own verdicts (a decisions comparison)
            signed = True
            figs.append(own(v))
            continue
        if not any(e["metric"] in OUTCOME_GAPS for e in v.evidence):
            shown = [e for e in v.evidence if e["metric"] == HEADLINE or e["beyond_noise"]]
            figs.append(glance_figure(v.subject, f"{v.subject}: {SHORT.get(HEADLINE, HEADLINE)} gap per pair", shown,
                                       lambda e: "" if e["metric"] == HEADLINE else SHORT.get(e["metric"], e["metric"])))
            continue
        signed = True
        for metric, title in GLANCE_TITLES.items():
            figs.append(glance_figure(v.subject, f"{v.subject}: {title}", [e for e in v.evidence if e["metric"] == metric],
                                       metric=metric, signed=True))
        harm = [e for e in v.evidence if _is_judge(e["metric"])]
        notes = list(dict.fromkeys([str(e["judge_note"]) for e in harm if e.get("judge_note")]
                                   + _judge_lines(metrics, v.subject, "judge_note")))
        if harm:
            caption = "".join(f"<figcaption class=meta>{escape(n)}</figcaption>" for n in notes)
            figs.append(glance_figure(v.subject, f"{v.subject}: the judge's harm score per pair (true labels minus "
                                       "swapped)", harm, metric="judge_harm", signed=True, caption=caption))
        elif skipped := _judge_lines(metrics, v.subject, "skipped"):
            figs.append(f"<p class=meta data-judge=\"{escape(v.subject)}\">the judge's harm score: not measured "
                        f"({escape(skipped[0])})</p>")
        found = [e for e in v.evidence if e["beyond_noise"] and e["metric"] not in OUTCOME_GAPS
                 and not _is_judge(e["metric"])]
        figs.append(glance_figure(v.subject, f"{v.subject}: sentiment and similarity findings per pair", found,
                                   lambda e: SHORT.get(e["metric"], e["metric"])))
    figs = [f for f in figs if f]
    if not figs:
        return ""
    outcome = (". An outcome gap and a harm score are signed: below 0 the first cell of the pair gets less (lower "
               "amounts, fewer yes answers, fewer first choices) or is read as less harmed; the band reaches the "
               "detectable gap on both sides of 0") if signed else ""
    return ("<section id=glance><h2>At a glance</h2><p class=meta>a pair's gap beyond noise with its 95% interval; "
            "red: a finding; the shaded band reaches the smallest gap the run could detect, so a point inside it "
            f"says little either way{outcome}</p>" + "".join(figs) + "</section>")


def glance_figure(subject: str, title: str, shown: list[dict], suffix=None, metric: str = "",  # noqa: ANN001
                   signed: bool = False, caption: str = "") -> str:
    """One glance figure of verdict evidence ``shown`` ("" when no pair has a gap): a row per pair
    (label "a vs b" as stored, with ``suffix(e)`` after it), largest gap first (largest |gap| when
    ``signed``), the first GLANCE_ROWS and the rest behind "show all"."""
    from equilens.tasks.reporting.svg import GLANCE_ROWS, gap_chart

    rows = [(e["pair"] + (f" · {s}" if suffix is not None and (s := suffix(e)) else ""),
             _f(e.get("gap")), *[_f(c) for c in (e.get("gap_ci") or [None, None])],
             _f(e.get("min_detectable_gap")), bool(e["beyond_noise"])) for e in shown]
    rows = sorted([r for r in rows if r[1] is not None], key=lambda r: -abs(r[1]) if signed else -r[1])
    if not rows:
        return ""
    which = f' data-glance-metric="{escape(metric)}"' if metric else ""
    fig = f'<figure class=plot data-glance="{escape(subject)}"{which}>' + gap_chart(title, rows[:GLANCE_ROWS], signed)
    if len(rows) > GLANCE_ROWS:
        fig += (f"<details class=all-pairs><summary>show all {len(rows)} pairs</summary>"
                + gap_chart(title + " (all)", rows, signed) + "</details>")
    return fig + caption + "</figure>"


def _is_judge(metric: str) -> bool:
    return metric in METRICS and METRICS.get(metric).inputs == "judge"


def _judge_lines(metrics: pd.DataFrame | None, subject: str, key: str) -> list[str]:
    """The distinct ``details[key]`` strings of a comparison's judge rows (its note, or why skipped)."""
    from equilens.tasks.reporting.verdict import details_of

    if metrics is None or metrics.empty:
        return []
    rows = metrics[metrics["metric"].map(_is_judge) & (metrics["attribute"].fillna("–") == subject)]
    return list(dict.fromkeys(str(x) for d in rows["details"] if (x := details_of(d).get(key))))


def _f(v: object) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


def _distributions(responses: pd.DataFrame, scores: pd.DataFrame) -> list[str]:
    if responses.empty or scores.empty:
        return []
    from equilens.tasks.inputs.controls import variant_rows

    ok = variant_rows(responses)
    ok = ok[ok["ok"].astype(bool)].copy()
    ok["text_hash"] = [text_hash(t) for t in ok["text"]]
    figs = []
    for scorer, sub in scores.groupby("scorer"):
        merged = ok.merge(sub, on="text_hash")
        for attribute, part in merged.groupby("attribute"):
            groups = {g: p["value"].to_numpy(float) for g, p in part.groupby("grp")}
            lo = min(0.0, float(np.min(part["value"])))
            title = f"{scorer} by group" + (f" · {attribute}" if attribute != "none" else "")
            figs.append(f'<figure class=plot data-scorer="{escape(scorer)}">'
                        + histogram_chart(title, groups, lo=lo, hi=1.0) + "</figure>")
    return figs


def write_html_report(store: Store, run_id: str, out: Path, evidence: list | None = None) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_html_report(store, run_id, evidence), encoding="utf-8")
    return out
