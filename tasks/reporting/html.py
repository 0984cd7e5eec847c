"""A self-contained HTML report of one run, rebuilt from DuckDB alone (no network, inline SVG).

Sections: headline (FTU, responses, least fair pairs), metric per group pair with intervals,
score distributions per group, non-completion by group, the trend of each metric across runs of
the same name and model, and the full metrics table.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from equilens.tasks.errors import StorageError
from equilens.tasks.llm.base import ANSWER_CUT
from equilens.tasks.metrics import METRICS
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.reporting.plain import escape  # html.escape of visible(): no raw control bytes
from equilens.tasks.reporting.terminal import (ARROW, format_interval, p_of, pair_label, significance_mark,
                                               unjudged_note, worst_pairs)
from equilens.tasks.storage.store import Store
from equilens.tasks.reporting.svg import histogram_chart, interval_chart, line_chart
from equilens.tasks.reporting.verdict import MIN_PROMPTS_SIMILARITY

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:980px;color:#222;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#666} table{border-collapse:collapse;margin:.5rem 0;font-size:13px} td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}
th{background:#f6f6f6} .ok{color:#2a7a3b} .bad{color:#b3261e} figure{margin:1rem 0}
svg .title{font-weight:600;font-size:13px} svg .hint{font-weight:400;fill:#777} svg .tick,svg .label,svg .legend{font-size:11px;fill:#444}
svg .grid{stroke:#eee} svg .axis{stroke:#999} svg .whisker{stroke:#3b6ea8;stroke-width:2} svg .point{fill:#3b6ea8} svg .point.found{fill:#b3261e}
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


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def build_html_report(store: Store, run_id: str) -> str:
    d = _load(store, run_id)
    run = d["run"].iloc[0]
    summary = json.loads(run["summary"]) if isinstance(run["summary"], str) else {}
    metrics, responses = d["metrics"], d["responses"]
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>equilens {escape(run_id)}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>equilens report · {escape(str(run['name']))}</h1>",
             f"<p class=meta>run <code>{escape(run_id)}</code> · {escape(str(run['flow']))} · model "
             f"<code>{escape(str(run['model']))}</code> ({escape(str(run['provider']))}) · status "
             f"<b>{escape(str(run['status']))}</b> · started {escape(str(run['started_at']))} · config "
             f"<code>{escape(str(run['config_hash']))}</code></p>"]

    from equilens.tasks.reporting.verdict import run_verdicts

    config = json.loads(run["config"]) if isinstance(run["config"], str) else {}
    said = run_verdicts(metrics, config)  # the sentences and the glance figures read the same verdicts
    if said:
        parts.append("<section id=verdict><h2>Verdict</h2><ul>" + "".join(f"<li>{escape(v.sentence)}</li>"
                                                                          for v in said) + "</ul></section>")
    parts.append(_glance(said, metrics))
    if summary.get("error"):
        parts.append(f"<section id=failure><h2>Run failed</h2><p class=bad>{escape(str(summary['error']))}</p></section>")

    cards = []
    ftu = summary.get("ftu")
    if ftu:
        cls = "ok" if ftu.get("holds") else "bad"
        cards.append(f"<div class=card>FTU<b class={cls}>{'holds' if ftu.get('holds') else 'does not hold'}</b>"
                     + escape(", ".join(f"{k}: {v}" for k, v in ftu.get("counts", {}).items())) + "</div>")
    if len(responses):
        failed = int((~responses["ok"].astype(bool)).sum())
        cards.append(f"<div class=card>responses<b>{len(responses)}</b>{failed} failed, "
                     f"{int(responses['refusal'].fillna(False).sum())} refused</div>")
        lat = responses["latency_s"].dropna()
        if len(lat):
            cards.append(f"<div class=card>latency p50 / p95<b>{lat.median():.2f} s</b>p95 {lat.quantile(.95):.2f} s</div>")
        tok = responses["completion_tokens"].dropna()
        if len(tok):
            cards.append(f"<div class=card>completion tokens<b>{int(tok.sum()):,}</b>"
                         f"prompt {int(responses['prompt_tokens'].dropna().sum()):,}</div>")
    parts.append(f"<section id=headline><h2>Headline</h2><div class=cards>{''.join(cards)}</div>")
    valued = metrics[metrics["value"].notna()]
    if len(valued) and valued["group_b"].notna().any():
        w = worst_pairs(valued)
        rows = pd.DataFrame({"attribute": w["attribute"], "metric": w["metric"], "least fair pair": w.apply(pair_label, axis=1),
                             "value [CI]": [v + significance_mark(x, metric=m, family=f) for v, x, m, f in
                                            zip(w.apply(format_interval, axis=1), w["details"], w["metric"],
                                                w["family"], strict=True)],
                             "fairer": w["direction"].map(ARROW)})
        note = unjudged_note(w)
        parts.append("<h3>Least fair group pair per metric</h3>" + _table(rows)
                     + (f"<p class=meta data-unjudged>{escape(note)}.</p>" if note else ""))
    skipped = metrics[metrics["value"].isna()]
    if len(skipped):
        reasons = [json.loads(x).get("skipped", "") if isinstance(x, str) else "" for x in skipped["details"]]
        parts.append("<h3>Skipped</h3><ul>" + "".join(f"<li><b>{escape(m)}</b>: {escape(r)}</li>"
                                                    for m, r in zip(skipped["metric"], reasons, strict=True)) + "</ul>")
    parts.append("</section>")
    from equilens.tasks.reporting.evidence import find_evidence, html_section

    try:
        parts.append(html_section(find_evidence(store, run_id, 3)))
    except Exception as err:  # noqa: BLE001 - the examples are one section; the rest of the report stands
        parts.append(f"<section id=examples><p class=meta>examples unavailable: {escape(str(err)[:300])}</p></section>")

    figs = []
    for (attribute, name), sub in valued.groupby(["attribute", "metric"], dropna=False, sort=True):
        rows = [(pair_label(r), r["value"], _f(r["ci_low"]), _f(r["ci_high"])) for _, r in sub.iterrows()]
        label = f"{name} · {attribute}" if isinstance(attribute, str) else name
        spec = METRICS.get(name) if name in METRICS else None
        figs.append(f'<figure class=plot data-metric="{escape(name)}">'
                    + interval_chart(label, rows, ARROW.get(sub["direction"].iloc[0], ""),
                                     spec.target if spec is not None and spec.direction == "target" else None)
                    + "</figure>")
    parts.append("<section id=metrics><h2>Metrics per group pair (95% intervals)</h2>" + "".join(figs) + "</section>")

    dist = _distributions(responses, d["scores"])
    if dist:
        parts.append("<section id=distributions><h2>Score distributions per group</h2>" + "".join(dist) + "</section>")

    hist = d["history"]
    if hist["run_id"].nunique() > 1:
        trend = []
        runs_order = list(dict.fromkeys(hist["run_id"]))
        hashes = dict(zip(hist["run_id"], hist["config_hash"], strict=True))
        letters: dict[str, str] = {}
        for r in runs_order:  # A, B, C...: runs with the same letter share a config
            letters.setdefault(str(hashes[r]), chr(ord("A") + len(letters) % 26))
        marks = [letters[str(hashes[r])] for r in runs_order]
        for name, sub in hist.groupby("metric", sort=True):
            series = {}
            for attribute, s2 in sub.groupby(sub["attribute"].fillna("all")):
                by_run = dict(zip(s2["run_id"], s2["value"], strict=True))
                series[str(attribute)] = [by_run.get(r) for r in runs_order]
            trend.append(f'<figure class=plot data-trend="{escape(name)}">'
                         + line_chart(f"{name}: mean over group pairs, runs named {run['name']}, model "
                                      f"{run['model']} ({run['provider']})", runs_order, series, marks)
                         + "</figure>")
        parts.append(f"<section id=trend><h2>Trend across runs</h2><p class=meta>runs named "
                     f"<code>{escape(str(run['name']))}</code> with model <code>{escape(str(run['model']))}</code> "
                     f"({escape(str(run['provider']))}); runs of other models are left out. The letter after each "
                     f"run names its config ({escape(', '.join(f'{v}: {k}' for k, v in letters.items()))}); a dashed "
                     f"line marks a config change, where a move may come from the config rather than the model</p>"
                     + "".join(trend) + "</section>")

    if len(responses):
        from equilens.tasks.inputs.controls import variant_rows

        nc = variant_rows(responses)
        nc = nc.assign(failed=~nc["ok"].astype(bool), refused=nc["refusal"].fillna(False).astype(bool))
        nc = nc.groupby(["attribute", "grp"]).agg(calls=("ok", "size"), failed=("failed", "sum"), refused=("refused", "sum"),
                                                  cut=("cut", "sum"))  # answers cut at llm.max_answer_chars
        nc = nc if nc["cut"].any() else nc.drop(columns="cut")
        parts.append("<section id=completion><h2>Non-completion by group</h2>" + _table(nc.reset_index()) + "</section>")
    table = metrics[["family", "attribute", "group_a", "group_b", "metric", "value", "ci_low", "ci_high", "n", "direction"]]
    table = table.assign(p_holm=[p_of(x) for x in metrics["details"]],  # Holm-adjusted (else raw) p-value
                         sig=[significance_mark(x, metric=m, family=f) for x, m, f in
                              zip(metrics["details"], metrics["metric"], metrics["family"], strict=True)])
    note = unjudged_note(metrics)
    parts.append("<section id=all-metrics><h2>All metrics</h2><p class=meta>p_holm: the permutation (parity) or "
                 "bootstrap (similarity gap) p-value, Holm-adjusted across an attribute's pairs; * below 0.05, "
                 f"for a similarity gap only on {MIN_PROMPTS_SIMILARITY} or more prompts"
                 + (f". {escape(note)}" if note else "") + "</p>"
                 + _table(table.round(4).astype(object).where(table.notna(), "–")) + "</section>")
    if len(d["validations"]):
        parts.append("<section id=validation><h2>Validation (great-expectations)</h2>" + _table(d["validations"]) + "</section>")
    parts.append("</body></html>")
    return "".join(parts)


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
    from equilens.tasks.reporting.readings import OUTCOME_GAPS
    from equilens.tasks.reporting.verdict import HEADLINE, SHORT

    figs, signed = [], False
    for v in said:
        if not any(e["metric"] in OUTCOME_GAPS for e in v.evidence):
            shown = [e for e in v.evidence if e["metric"] == HEADLINE or e["beyond_noise"]]
            figs.append(_glance_figure(v.subject, f"{v.subject}: {SHORT.get(HEADLINE, HEADLINE)} gap per pair", shown,
                                       lambda e: "" if e["metric"] == HEADLINE else SHORT.get(e["metric"], e["metric"])))
            continue
        signed = True
        for metric, title in GLANCE_TITLES.items():
            figs.append(_glance_figure(v.subject, f"{v.subject}: {title}", [e for e in v.evidence if e["metric"] == metric],
                                       metric=metric, signed=True))
        harm = [e for e in v.evidence if _is_judge(e["metric"])]
        notes = list(dict.fromkeys([str(e["judge_note"]) for e in harm if e.get("judge_note")]
                                   + _judge_lines(metrics, v.subject, "judge_note")))
        if harm:
            caption = "".join(f"<figcaption class=meta>{escape(n)}</figcaption>" for n in notes)
            figs.append(_glance_figure(v.subject, f"{v.subject}: the judge's harm score per pair (true labels minus "
                                       "swapped)", harm, metric="judge_harm", signed=True, caption=caption))
        elif skipped := _judge_lines(metrics, v.subject, "skipped"):
            figs.append(f"<p class=meta data-judge=\"{escape(v.subject)}\">the judge's harm score: not measured "
                        f"({escape(skipped[0])})</p>")
        found = [e for e in v.evidence if e["beyond_noise"] and e["metric"] not in OUTCOME_GAPS
                 and not _is_judge(e["metric"])]
        figs.append(_glance_figure(v.subject, f"{v.subject}: sentiment and similarity findings per pair", found,
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


def _glance_figure(subject: str, title: str, shown: list[dict], suffix=None, metric: str = "",  # noqa: ANN001
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


def write_html_report(store: Store, run_id: str, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_html_report(store, run_id), encoding="utf-8")
    return out
