"""The answers behind a gap: for each compared attribute, the prompts where the two groups' answers
differ most, side by side, for the terminal (``equilens show --examples N``), the markdown artifact
and the HTML report.

Which pair of groups: the pair the verdict calls a finding (the first, when several), else the pair
with the largest strict-parity gap, else the first pair compared. Which prompts: those whose
answers' sentiment scores differ most between the two groups (mean over samples), ties broken by
prompt id; with no scores stored, the prompts whose answers differ in text. An example shows each
group's prompt as sent (with the name or profile of an identity variant) and its first answer
with its score; a conversation is shown as its turns in order, each user turn followed by the
answer to it, the last answer (the one read and compared) last. Everything here is read from
DuckDB alone, so a stored run shows its evidence long after it ran.

An identity comparison with outcome gaps is shown by its outcomes instead: the pair and the
prompts come from the outcomes read from the answers (:mod:`equilens.tasks.reporting.readings`),
and each answer is shown with its reading ("read: $62,000 (year)", "unreadable: hedged").

The other families: per classifier (toxicity, stereotype), the answers it scores highest, one
column per group where the answers belong to groups. A family whose assessment declares its own
evidence (:mod:`equilens.tasks.reporting.families`) shows that instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from equilens.tasks.reporting.verdict import HEADLINE, details_of, paired_families


@dataclass
class Side:
    group: str
    prompt: str
    answer: str | None
    score: float | None
    profile: str | None = None  # an identity variant's name or profile line
    reading: str | None = None  # the outcome read from the answer ("read: yes", "unreadable: hedged")
    turns: list[dict] | None = None  # a conversation's turns as stored, {"turn", "user", "answer"} in order


@dataclass
class Example:
    prompt_id: str
    difference: float | None  # score of the second group minus the first (None: no scores)
    sides: list[Side] = field(default_factory=list)


@dataclass
class Evidence:
    attribute: str
    pair: tuple[str, ...]  # the compared groups (one column: the answers of one family)
    why: str  # why this pair: a finding, or the largest gap
    examples: list[Example]
    scorer: str = ""  # what the scores are (vader-neg: negativity, higher = more negative)


def _chosen_pair(rows: pd.DataFrame, evidence: list[dict]) -> tuple[tuple[str, str], str] | None:
    """The pair to show from an attribute's rows and its verdict's ``evidence``."""
    cross = rows[rows["group_b"].notna() & (rows["group_a"] != rows["group_b"]) & rows["value"].notna()]
    if cross.empty:
        return None
    found = [e for e in evidence if e["beyond_noise"]]
    if found:
        a, b = found[0]["pair"].split(" vs ", 1)
        return (a, b), f"finding ({found[0]['metric']})"
    head = cross[cross["metric"] == HEADLINE]
    if len(head):
        gaps = [details_of(d).get("gap") for d in head["details"]]
        best = head.iloc[max(range(len(head)), key=lambda i: gaps[i] if isinstance(gaps[i], float) else -1e9)]
        return (best["group_a"], best["group_b"]), f"largest gap ({HEADLINE}), not a finding"
    first = cross.iloc[0]
    return (first["group_a"], first["group_b"]), f"first pair compared ({first['metric']})"


REPORT_EXAMPLES = 3
"""Examples per compared attribute in the HTML report."""
MARKDOWN_EXAMPLES = 2
"""Examples per compared attribute in the markdown artifact: the report's first ones (:func:`first_examples`)."""


def first_examples(evidence: list[Evidence], n: int) -> list[Evidence]:
    """``evidence`` with each subject's first ``n`` examples (the examples are ranked, so these are the
    ones :func:`find_evidence` gives with ``n``)."""
    return [replace(ev, examples=ev.examples[:n]) for ev in evidence]


def find_evidence(store: Any, run_id: str, n: int = REPORT_EXAMPLES) -> list[Evidence]:  # a Store
    """Up to ``n`` examples per compared attribute of a stored run (see the module docstring), then
    per classifier its highest-scored answers; for BBQ, the questions answered with the stereotype."""
    metrics = store.query("SELECT attribute, metric, family, group_a, group_b, value, ci_low, ci_high, details "
                          "FROM metrics WHERE run_id = ?", [run_id])
    paired = metrics[metrics["family"].isin(paired_families())]
    if n <= 0 or metrics.empty:
        return []
    from equilens.tasks.reporting.families import family_report

    for family in sorted(set(metrics["family"].astype(str))):  # a family that shows its own answers
        if (own := family_report(family).evidence) is not None:
            return own(store, run_id, metrics, n)
    if paired.empty:
        return _scored_answers(store, run_id, n)
    return _paired_answers(store, run_id, paired, n) + _scored_answers(store, run_id, n)


def _paired_answers(store: Any, run_id: str, paired: pd.DataFrame, n: int) -> list[Evidence]:
    """For each compared attribute, the chosen pair's most different prompts (module docstring)."""
    scorer = store.query("SELECT min(scorer) AS s FROM scores WHERE run_id = ? AND scorer LIKE 'vader%'",
                         [run_id])["s"].iloc[0]
    scorer = scorer if isinstance(scorer, str) else ""
    from equilens.tasks.reporting.readings import outcome_pair, ranked_readings

    profiles, tasks = _profiles(store, run_id)
    known = set(store.query("SELECT DISTINCT attribute FROM responses WHERE run_id = ?", [run_id])["attribute"])
    from equilens.tasks.reporting.verdict import run_verdicts

    said = {v.subject: v.evidence for v in run_verdicts(paired, store.run_config(run_id))}  # the run's alpha
    out = []
    for attribute, rows in paired.groupby(paired["attribute"].fillna("–"), sort=True):
        evidence = said.get(str(attribute), [])
        by_outcome = outcome_pair(rows, evidence)
        chosen = by_outcome[:2] if by_outcome else _chosen_pair(rows, evidence)
        if chosen is None:
            continue
        (a, b), why = chosen
        base = _base_attribute(str(attribute), known)
        variants = None
        if base != attribute:  # a per-task comparison: that task's prompts only
            task = str(attribute).rsplit(" | ", 1)[1]
            variants = sorted(v for v, t in tasks.items() if t == task)
        only = _ONLY_VARIANTS if variants is not None else ""
        params = {"run_id": run_id, "attribute": base, "a": a, "b": b, "n": n,
                  **({"variants": variants} if variants is not None else {})}
        read = ranked_readings(store, {**params, "kind": by_outcome[2]}, only) if by_outcome else pd.DataFrame()
        if len(read):  # an identity comparison's outcomes: ranked by its readings, each shown
            out.append(Evidence(str(attribute), (a, b), why, _examples(read, a, b, profiles)))
            continue
        found = store.query(_EXAMPLES_SQL.format(only=only), {"scorer": scorer, **params})
        out.append(Evidence(str(attribute), (a, b), why, _examples(found, a, b, profiles), scorer))
    return out


_ONLY_VARIANTS = "AND list_contains($variants, r.variant_id)"
_EXAMPLES_SQL = """
WITH answers AS (  -- each answer of the two groups with its score (a text is scored once per run and scorer)
    SELECT r.prompt_id, r.grp, r.sample_idx, r.variant_id, r.text, s.value AS score, r.turns
    FROM responses r LEFT JOIN scores s ON s.run_id = r.run_id AND s.scorer = $scorer
                                        AND s.text_hash = left(sha256(r.text), 20)  -- tasks.inputs.prompts.text_hash
    WHERE r.run_id = $run_id AND r.ok AND coalesce(r.role, 'variant') = 'variant' AND r.attribute = $attribute
      AND r.grp IN ($a, $b) {only}
), groups AS (  -- per prompt and group: the mean score and the first answer (by sample, then variant)
    SELECT prompt_id, grp, avg(score) AS mean, count(score) AS scores,
           min({{'sample': sample_idx, 'variant': variant_id, 'text': text, 'score': score, 'turns': turns}}) AS first
    FROM answers GROUP BY prompt_id, grp
), prompts AS (  -- per prompt answered by both: mean score difference, and whether the first answers match
    SELECT prompt_id, any_value(mean) FILTER (WHERE grp = $b) - any_value(mean) FILTER (WHERE grp = $a) AS diff,
           any_value(first.text) FILTER (WHERE grp = $a) IS NOT DISTINCT FROM
           any_value(first.text) FILTER (WHERE grp = $b) AS same_text
    FROM groups GROUP BY prompt_id HAVING count(*) = 2
), by_score AS (  -- scores stored for both groups: rank by the score gap, else by differing text
    SELECT sum(scores) FILTER (WHERE grp = $a) > 0 AND sum(scores) FILTER (WHERE grp = $b) > 0 AS yes FROM groups
), ranked AS (
    SELECT p.prompt_id, CASE WHEN b.yes THEN p.diff END AS diff,
           row_number() OVER (ORDER BY CASE WHEN b.yes THEN -abs(coalesce(p.diff, 0)) ELSE p.same_text::DOUBLE END,
                              p.prompt_id) AS place
    FROM prompts p, by_score b
)
SELECT k.place, k.prompt_id, k.diff, g.grp, g.first.text AS text, g.first.score AS score,
       g.first.variant AS variant_id, v.text AS sent, g.first.turns AS turns
FROM ranked k JOIN groups g USING (prompt_id) LEFT JOIN variants v ON v.run_id = $run_id AND v.variant_id = g.first.variant
WHERE k.place <= $n ORDER BY k.place, g.grp
"""
"""The examples of one pair ``(a, b)`` in one attribute, ranked in DuckDB, so only the chosen prompts'
first answers leave the store (at 100,000 prompts, reading every answer into memory took 1.3 GB)."""


def _base_attribute(attribute: str, known: set[str]) -> str:
    """A per-task identity comparison ("gender x race | pricing") reads the responses of its base."""
    while attribute not in known and " | " in attribute:
        attribute = attribute.rsplit(" | ", 1)[0]
    return attribute


def _profiles(store: Any, run_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """(variant -> its name or profile line, variant -> its task) for a run's identity variants."""
    try:
        frame = store.query("SELECT variant_id, name, system, task FROM identity_variants WHERE run_id = ?", [run_id])
    except Exception:  # noqa: BLE001 - a run without identity variants (or an older store)
        return {}, {}
    profiles = {v: (f"name: {n}" if isinstance(n, str) else str(s)) for v, n, s in
                zip(frame["variant_id"], frame["name"], frame["system"], strict=True) if isinstance(n, str) or s}
    return profiles, {v: t for v, t in zip(frame["variant_id"], frame["task"], strict=True) if isinstance(t, str)}


def _examples(found: pd.DataFrame, a: str, b: str, profiles: dict[str, str]) -> list[Example]:
    """The ranked prompts' first answers (:data:`_EXAMPLES_SQL`, or
    :data:`equilens.tasks.reporting.readings.READINGS_SQL` with each answer's reading) as examples,
    group ``a`` first."""
    from equilens.tasks.reporting.readings import reading_text

    out = []
    for _, rows in found.groupby("place", sort=True):
        first = {r["grp"]: r for _, r in rows.iterrows()}
        sides = [Side(g, first[g]["sent"], first[g]["text"],
                      float(first[g]["score"]) if pd.notna(first[g].get("score")) else None,
                      profiles.get(first[g]["variant_id"]), reading_text(first[g]) if "kind" in found else None,
                      stored_turns(first[g].get("turns")))
                 for g in (a, b)]
        diff = rows["diff"].iloc[0]
        out.append(Example(str(rows["prompt_id"].iloc[0]), float(diff) if pd.notna(diff) else None, sides))
    return out


def stored_turns(value: Any) -> list[dict] | None:  # a stored ``turns`` cell: JSON text, or NULL
    """A conversation's turns as the responses table stores them, in order; None for a single prompt."""
    import json

    said = json.loads(value) if isinstance(value, str) else value
    return said if isinstance(said, list) and said and all(isinstance(t, dict) for t in said) else None


def _clip(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exchange(side: Side) -> list[tuple[str | None, str | None]]:
    """(user turn, answer) pairs of a side in order: a conversation's turns as stored, its last answer
    the side's own (the one read); for a single prompt, the prompt as sent and its answer."""
    if not side.turns:
        return [(side.prompt, side.answer)]
    said = [(t.get("user"), t.get("answer")) for t in side.turns]
    return [*said[:-1], (said[-1][0], side.answer)]


def markdown_lines(evidence: list[Evidence], limit: int = 240) -> list[str]:
    """A markdown section with the examples (answers quoted as text, cut at ``limit`` characters);
    every name and text passes :func:`equilens.tasks.plain.markdown`."""
    from equilens.tasks.plain import markdown as _md

    if not evidence:
        return []
    lines = ["## The answers behind the gaps", ""]
    for ev in evidence:
        lines += [f"### {_md(ev.attribute)}: {_md(' vs '.join(ev.pair))} ({_md(ev.why)})", ""]
        for ex in ev.examples:
            for s in ex.sides:
                who = f"{s.group}" + (f", {s.profile}" if s.profile else "")
                score = f" · {_md(ev.scorer)} {s.score:.3f}" if s.score is not None else ""
                reading = f"  \n  *{_md(s.reading)}*" if s.reading else ""
                said = "  \n  ".join(f"{_md(_clip(user, limit))}  \n  → {_md(_clip(answer, limit))}"
                                      for user, answer in exchange(s))
                lines.append(f"- **{_md(who)}**{score}: {said}{reading}")
            lines.append("")
    return lines


def plain_examples(evidence: list[Evidence], limit: int = 400) -> dict[str, str]:
    """Attribute -> its example pairs of answers as plain text (``group · profile: prompt -> answer``),
    for a JUnit failure's body; an XML writer escapes it."""
    out = {}
    for ev in evidence:
        blocks = []
        for ex in ev.examples:
            blocks.append("\n".join(f"{s.group}" + (f" · {s.profile}" if s.profile else "") + ": "
                                     + "\n  ".join(f"{_clip(user, limit)}\n  -> {_clip(answer, limit)}"
                                                   for user, answer in exchange(s))
                                     + (f" [{s.reading}]" if s.reading else "") for s in ex.sides))
        if blocks:
            out[ev.attribute] = f"{' vs '.join(ev.pair)} ({ev.why})\n" + "\n\n".join(blocks)
    return out


def print_examples(evidence: list[Evidence], limit: int = 400) -> None:
    """The examples as side-by-side tables in the terminal (answers printed as plain text)."""
    from equilens.tasks.plain import console, text
    from rich.table import Table

    console = console()
    if not evidence:
        console.print("No examples: the run compared no pair of groups.")
        return
    for ev in evidence:
        table = Table(title=f"{ev.attribute}: {' vs '.join(ev.pair)} ({ev.why})", title_justify="left",
                      show_lines=True)
        for g in ev.pair:
            table.add_column(g, overflow="fold", ratio=1)
        for ex in ev.examples:
            cells = []
            for s in ex.sides:
                head = f"{s.profile} · " if s.profile else ""
                score = f"\n[{ev.scorer} {s.score:.3f}]" if s.score is not None else ""
                reading = f"\n[{s.reading}]" if s.reading else ""
                said = "\n".join(f"{_clip(user, limit)}\n→ {_clip(answer, limit)}" for user, answer in exchange(s))
                cells.append(text(f"{head}{said}{score}{reading}"))
            table.add_row(*cells)
        console.print(table)


def html_section(evidence: list[Evidence], limit: int = 1200) -> str:
    """The examples as collapsible side-by-side tables; every prompt and answer is HTML-escaped, its
    control characters made visible (:func:`equilens.tasks.plain.escape`)."""
    from equilens.tasks.plain import escape

    if not evidence:
        return ""
    read = any(s.reading for ev in evidence for ex in ev.examples for s in ex.sides)
    outcomes = ("; per identity comparison with outcomes, the prompts whose answers' readings (the amount or "
                "decision read from each answer) differ most between the pair with the outcome finding (or "
                "the largest outcome gap)") if read else ""
    parts = ["<section id=examples><h2>The answers behind the gaps</h2><p class=meta>per attribute, the prompts "
             "whose answers differ most in score between the pair the verdict found (or with the largest gap)"
             f"{outcomes}; per classifier, the answers it scores highest; for BBQ, answers that chose the "
             "stereotype</p>"]
    for i, ev in enumerate(evidence):
        rows = []
        for ex in ev.examples:
            cells = []
            for s in ex.sides:
                who = f"<div class=meta>{escape(s.profile)}</div>" if s.profile else ""
                score = f"<div class=meta>{escape(ev.scorer)} {s.score:.3f}</div>" if s.score is not None else ""
                reading = f"<div class=reading>{escape(s.reading)}</div>" if s.reading else ""
                said = "".join(f"<p><b>{escape(_clip(user, limit))}</b></p><p>{escape(_clip(answer, limit))}</p>"
                               for user, answer in exchange(s))
                cells.append(f"<td>{who}{said}{reading}{score}</td>")
            rows.append(f"<tr>{''.join(cells)}</tr>")
        head = "".join(f"<th>{escape(g)}</th>" for g in ev.pair)
        parts.append(f"<details class=examples{' open' if i == 0 else ''}><summary>{escape(ev.attribute)}: "
                     f"{escape(' vs '.join(ev.pair))} · {escape(ev.why)} · {len(ev.examples)} "
                     f"prompt(s)</summary><table><tr>{head}</tr>{''.join(rows)}</table></details>")
    return "".join(parts) + "</section>"


def _scored_answers(store: Any, run_id: str, n: int) -> list[Evidence]:
    """Per classifier (toxicity, stereotype), the ``n`` answers it scored highest, each with its
    prompt; where answers belong to groups (counterfactual variants in an auto run), one column per
    group, row k holding each group's k-th highest."""
    from equilens.tasks.inputs.prompts import text_hash

    scores = store.query("SELECT scorer, text_hash, value FROM scores WHERE run_id = ? AND scorer NOT LIKE 'vader%'",
                         [run_id])
    if scores.empty:
        return []
    answers = store.query("SELECT r.text, r.attribute, r.grp, coalesce(v.text, p.text) AS prompt, r.turns "
                          "FROM responses r "
                          "LEFT JOIN prompts p USING (run_id, prompt_id) LEFT JOIN variants v USING (run_id, variant_id) "
                          "WHERE r.run_id = ? AND r.ok AND coalesce(r.role, 'variant') = 'variant'", [run_id])
    answers = answers.assign(text_hash=[text_hash(t) if isinstance(t, str) else None for t in answers["text"]])
    out = []
    for scorer, part in scores.groupby("scorer", sort=True):
        scored = answers.merge(part[["text_hash", "value"]].drop_duplicates("text_hash"), on="text_hash")
        scored = scored.sort_values(["value", "text_hash"], ascending=[False, True])
        for attribute, mine in scored.groupby(scored["attribute"].fillna("none"), sort=True):
            grouped = attribute != "none" and mine["grp"].nunique() > 1
            groups = sorted(mine["grp"].dropna().unique()) if grouped else ["highest scores"]
            tops = {g: (mine[mine["grp"] == g] if grouped else mine).drop_duplicates("text_hash").head(n)
                    for g in groups}
            examples = [Example("", None, [Side(g, str(tops[g].iloc[k]["prompt"] or ""), tops[g].iloc[k]["text"],
                                                float(tops[g].iloc[k]["value"]),
                                                turns=stored_turns(tops[g].iloc[k]["turns"])) for g in groups])
                        for k in range(min(len(t) for t in tops.values()))]
            if examples:
                subject = f"{scorer} · {attribute}" if grouped else str(scorer)
                why = "each group's answers this scorer rates highest" if grouped else "the answers this scorer rates highest"
                out.append(Evidence(subject, tuple(groups), why, examples, str(scorer)))
    return out
