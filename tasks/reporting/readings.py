"""The outcome read from each answer of an identity comparison, as the examples show it.

An identity run reads an outcome from each answer to an outcome prompt (table
``identity_readings``: an amount, a yes/no decision, a chosen option, or why none could be read).
For the examples of a comparison with outcome gaps this module picks the pair (the outcome
finding with the largest gap, else the pair with the largest outcome gap), ranks its prompts by how
far the two cells' readings differ, and words a reading for a reader ("read: $62,000 (year)",
"read: yes", "read: option 'rent'", "unreadable: hedged").

A decisions run reads P(yes) per decision; :func:`unread_decisions_line` words how many decisions
were left without one, per group, for the terminal, ``equilens show`` and the HTML report.

How far two cells' readings differ on a prompt: for amounts, the difference of the cells' mean
amounts divided by the prompt's mean amount over both cells; for yes/no and choices, the
difference of the means (share of yes, mean option index). Prompts where the readable answers
differ come first, largest first; then prompts where the cells differ only in how many answers
could not be read; ties by prompt id. A cell's readings are those of both its names (variant and
control), as in the outcome metrics; its shown answer is the first of its variant.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
from equilens.tasks.reporting.verdict import details_of

OUTCOME_GAPS = {"number_outcome_gap": "number", "yes_rate_gap": "yes_no", "first_choice_rate_gap": "choice"}
"""The per-pair outcome metrics of an identity comparison and the reading kind each compares."""


def _gap(value: Any, details: Any) -> float | None:  # a stored cell
    gap = details_of(details).get("gap", value)
    try:
        out = float(gap)
    except (TypeError, ValueError):
        return None
    return None if out != out else out


def outcome_pair(rows: pd.DataFrame, evidence: list[dict]) -> tuple[tuple[str, str], str, str] | None:
    """((a, b), why, kind) for a comparison's examples from its metric ``rows`` and its verdict's
    ``evidence``: the outcome finding with the largest gap, else the pair with the largest outcome
    gap; None where the comparison has no outcome gap."""
    found = [e for e in evidence if e.get("beyond_noise") and e.get("metric") in OUTCOME_GAPS]
    if found:
        best = max(found, key=lambda e: abs(_gap(e.get("gap"), {}) or 0.0))
        a, b = str(best["pair"]).split(" vs ", 1)
        return (a, b), f"finding ({best['metric']})", OUTCOME_GAPS[best["metric"]]
    gaps = rows[rows["metric"].isin(list(OUTCOME_GAPS)) & rows["group_b"].notna()
                & (rows["group_a"] != rows["group_b"]) & rows["value"].notna()]
    sizes = [abs(_gap(v, d) or 0.0) for v, d in zip(gaps["value"], gaps["details"], strict=True)]
    if not sizes:
        return None
    best = gaps.iloc[max(range(len(sizes)), key=sizes.__getitem__)]
    return ((str(best["group_a"]), str(best["group_b"])), f"largest gap ({best['metric']}), not a finding",
            OUTCOME_GAPS[best["metric"]])


READINGS_SQL = """
WITH answers AS (  -- each answer of the two cells (both names) with the outcome read from it
    SELECT r.prompt_id, r.grp, r.sample_idx, r.variant_id, r.text, coalesce(r.role, 'variant') <> 'variant' AS control,
           x.kind, x.value, x.unit, x.reason, x.figure, r.turns
    FROM responses r JOIN identity_readings x
      ON x.run_id = r.run_id AND x.variant_id = r.variant_id AND x.sample_idx = r.sample_idx
    WHERE r.run_id = $run_id AND r.ok AND r.attribute = $attribute AND r.grp IN ($a, $b)
      AND ($kind = '' OR x.kind = $kind) {only}
), cells AS (  -- per prompt and cell: the readings' sum, count and mean, the share unreadable, the first answer
    SELECT prompt_id, grp, any_value(kind) AS kind, sum(value) AS total, count(value) AS readable, avg(value) AS mean,
           1 - count(value)::DOUBLE / count(*) AS unread,
           min({{'control': control, 'sample': sample_idx, 'variant': variant_id, 'text': text, 'value': value,
                 'unit': unit, 'reason': reason, 'figure': figure, 'turns': turns}}) AS first
    FROM answers GROUP BY prompt_id, grp
), prompts AS (  -- per prompt read for both cells: mean b minus mean a, an amount's over the prompt's mean amount
    SELECT prompt_id,
           (any_value(mean) FILTER (WHERE grp = $b) - any_value(mean) FILTER (WHERE grp = $a))
           / CASE WHEN any_value(kind) = 'number' THEN nullif(sum(total) / nullif(sum(readable), 0), 0) ELSE 1 END
           AS diff,
           abs(any_value(unread) FILTER (WHERE grp = $b) - any_value(unread) FILTER (WHERE grp = $a)) AS unread_gap
    FROM cells GROUP BY prompt_id HAVING count(*) = 2
), ranked AS (  -- readable differences first, largest first; then differences in unreadable answers
    SELECT prompt_id, diff,
           row_number() OVER (ORDER BY CASE WHEN abs(diff) > 0 THEN 0 WHEN unread_gap > 0 THEN 1 ELSE 2 END,
                              -abs(coalesce(diff, 0)), -unread_gap, prompt_id) AS place
    FROM prompts
)
SELECT k.place, k.prompt_id, k.diff, c.grp, c.kind, c.first.text AS text, c.first.variant AS variant_id,
       c.first.value AS value, c.first.unit AS unit, c.first.reason AS reason, c.first.figure AS figure,
       v.text AS sent, i.outcome, c.first.turns AS turns
FROM ranked k JOIN cells c USING (prompt_id)
LEFT JOIN (SELECT variant_id, any_value(text) AS text FROM variants WHERE run_id = $run_id GROUP BY variant_id) v
  ON v.variant_id = c.first.variant
LEFT JOIN (SELECT variant_id, any_value(outcome) AS outcome FROM identity_variants WHERE run_id = $run_id
           GROUP BY variant_id) i ON i.variant_id = c.first.variant
WHERE k.place <= $n ORDER BY k.place, c.grp
"""
"""The ``n`` prompts of one pair ``(a, b)`` whose readings differ most (module docstring), each
cell's first answer with its reading (and a conversation's turns), ranked in DuckDB so only the
chosen answers leave the store. Parameters: run_id, attribute, a, b, n, kind ('' for every kind),
and variants where ``{only}`` limits the answers to a task's variants."""


def ranked_readings(store: Any, params: dict[str, Any], only: str = "") -> pd.DataFrame:  # a Store
    """The rows of :data:`READINGS_SQL`; empty for a store without readings."""
    try:
        return store.query(READINGS_SQL.format(only=only), params)
    except Exception:  # noqa: BLE001 - a store written before identity_readings existed
        return pd.DataFrame()


def _amount(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _options(outcome: Any) -> list[str]:  # a stored cell
    """The options (a choice) or the unit (an amount) of an ``outcome`` spec; [] when it has none."""
    from equilens.tasks.scoring.parsing import parse_outcome_spec

    try:
        return parse_outcome_spec(outcome)[1] if isinstance(outcome, str) else []
    except ValueError:
        return []


def reading_text(row: Any) -> str | None:  # a row with kind, value, unit, reason, figure, outcome
    """A reading in words: "read: $62,000 (year)", "read: $40k to $48k (year) → 44,000 per year",
    "read: yes", "read: option 'rent'", "unreadable: hedged"; None for an answer with no reading."""
    kind = row.get("kind")
    if not isinstance(kind, str):
        return None
    value, figure, unit = row.get("value"), row.get("figure"), row.get("unit")
    figure = figure if isinstance(figure, str) and figure.strip() else None
    if value is None or pd.isna(value):
        reason = row.get("reason")
        return f"unreadable: {reason if isinstance(reason, str) and reason else 'no reason stored'}"
    value = float(value)
    if kind == "yes_no":
        return "read: yes" if value == 1 else "read: no"
    if kind == "choice":
        options = _options(row.get("outcome"))
        index = int(value)
        name = options[index] if 0 <= index < len(options) else figure
        return f"read: option '{name}'" if name else f"read: option {index + 1}"
    amount = _amount(value)
    out = f"read: {figure or amount}" + (f" ({unit})" if isinstance(unit, str) and unit else "")
    if figure and re.sub(r"\D", "", figure) != re.sub(r"\D", "", amount):  # a range, words, another period
        asked = _options(row.get("outcome"))
        out += f" → {amount}" + (f" per {asked[0]}" if asked and asked[0] != "once" else "")
    return out


def unread_decisions_line(p_yes: Any) -> str | None:  # a run summary's "p_yes"
    """How many decisions were left without a P(yes), per group and per reason ("P(yes) unreadable
    for 12 of 96 decisions (race Black: 12): invalid log-probability 12"), from a decisions run's summary
    (:func:`equilens.tasks.assessments.decisions.stages.read_summary`);
    None when every decision was read or the run is not a decisions run."""
    if not isinstance(p_yes, dict) or not p_yes.get("unread"):
        return None
    groups = "; ".join(f"{attr} " + ", ".join(f"{g}: {n}" for g, n in counts.items())
                       for attr, counts in (p_yes.get("unread_by_group") or {}).items() if counts)
    reasons = ", ".join(f"{why} {n}" for why, n in (p_yes.get("unread_reasons") or {}).items())
    return (f"P(yes) unreadable for {p_yes['unread']} of {p_yes.get('decisions', '?')} decisions"
            + (f" ({groups})" if groups else "") + (f": {reasons}" if reasons else ""))
