"""How the BBQ assessment reports: as evidence, per category, the questions the model answered with
the stereotyped option, wrong ones first."""

from __future__ import annotations

from typing import Any

from equilens.tasks.reporting.evidence import Evidence, Example, Side
from equilens.tasks.reporting.families import FAMILY_REPORTS, FamilyReport


def bbq_answers(store: Any, run_id: str, n: int) -> list[Evidence]:
    """Per BBQ category, up to ``n`` questions answered with the stereotyped option, wrong ones first
    (in an ambiguous context every such answer is wrong: the right one is UNKNOWN)."""
    from equilens.tasks.inputs.prompts import prompt_id

    items = store.query("SELECT metric, item, value FROM metric_items WHERE run_id = ? AND family = 'bbq' "
                        "AND metric IN ('stereotyped', 'correct')", [run_id])
    if items.empty:
        return []
    table = items.pivot_table(index="item", columns="metric", values="value", aggfunc="first")
    texts = store.query("SELECT p.prompt_id, p.text AS prompt, r.text AS answer FROM prompts p LEFT JOIN responses r "
                        "ON r.run_id = p.run_id AND r.variant_id = p.prompt_id AND r.sample_idx = 0 "
                        "WHERE p.run_id = ?", [run_id]).drop_duplicates("prompt_id").set_index("prompt_id")
    out = []
    for category, part in table.groupby(table.index.str.split(":").str[0], sort=True):
        counted = part[part["stereotyped"].notna()]
        chosen = counted[counted["stereotyped"] == 1].sort_values("correct", kind="stable")
        examples = []
        for qid, row in chosen.iterrows():
            if len(examples) == n:
                break
            key = prompt_id(str(qid))  # a question's prompt id is that of its qid
            if key in texts.index:
                right = "right" if row["correct"] == 1 else "wrong"
                examples.append(Example(str(qid), None, [Side(f"stereotyped, {right}", str(texts.loc[key, "prompt"]),
                                                              texts.loc[key, "answer"], None)]))
        wrong = int((chosen["correct"] != 1).sum())
        why = (f"{len(chosen)} of {len(counted)} answers naming a group chose the stereotyped one, "
               f"{wrong} of them wrong")
        out.append(Evidence(str(category), ("answered with the stereotyped option",), why, examples))
    return out


def _evidence(store: Any, run_id: str, metrics: Any, n: int) -> list[Evidence]:  # a Store
    return bbq_answers(store, run_id, n)


FAMILY_REPORTS.add("bbq", FamilyReport(evidence=_evidence))
