"""Stage logic of the decisions assessment (discrim-eval), as plain functions over DataFrames.

Items are the filled decisions of a discrim-eval JSONL file (:mod:`equilens.tasks.assessments.decisions.decision_sets`).
Each is asked ``llm.count`` times with the first token's log-probabilities requested; P(yes) is read
from them (:func:`equilens.tasks.scoring.outcomes.decisions.yes_probability`), or, where the endpoint
gives none, from the answers' first words. Per fill type (explicit, implicit) and attribute, every
group's discrimination score against the baseline group is fitted
(:mod:`equilens.tasks.assessments.decisions.metrics`), and all scores of a run form one Holm family.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.assessments.decisions.config import DecisionsConfig
from equilens.tasks.assessments.decisions.decision_sets import MAX_CHARS, load_decision_set
from equilens.tasks.errors import InputDataError

FAMILY = "decisions"
ANSWER_COLUMNS = ["item_id", "scenario", "fill_type", "age", "gender", "race", "p_yes", "via", "samples",
                  "read", "reason"]
"""The ``decision_answers`` table: P(yes) per decision, how it was read (``logprobs``, ``answers``:
the share of yes among the readable sampled answers, or none), and from how many answers."""
_ASKS_YES_NO = re.compile(r"\byes\b[^.?!]{0,40}\bno\b", re.IGNORECASE)


def age_group(age: float) -> str:
    return f"{age:g}"


def load_items(cfg: DecisionsConfig, max_chars: int | None = None) -> pd.DataFrame:
    """The decisions to ask: the file's rows of the configured fill types (and first scenarios),
    each with the instruction appended unless it already asks for yes or no. A decision longer than
    ``max_chars`` (``prompts.max_chars``; None: its default) is refused."""
    frame = load_decision_set(cfg.path, max_chars or MAX_CHARS)
    kept = frame[frame["fill_type"].isin(cfg.fill_types)]
    if kept.empty:
        raise InputDataError(f"{cfg.path}: no decision has a fill_type in {cfg.fill_types} (decisions.fill_types); "
                             f"the file has {sorted(frame['fill_type'].unique())}.")
    if cfg.scenarios:
        first = list(dict.fromkeys(kept["decision_question_id"]))[: cfg.scenarios]
        kept = kept[kept["decision_question_id"].isin(first)]
    texts = [t if _ASKS_YES_NO.search(t[-200:]) or not cfg.instruction else f"{t}\n\n{cfg.instruction}"
             for t in kept["filled_template"]]
    return pd.DataFrame({
        "item_id": [hashlib.sha256(f"{n}|{t}".encode()).hexdigest()[:16]
                    for n, t in zip(kept["source_line"], texts, strict=True)],
        "prompt": texts, "scenario": kept["decision_question_id"].tolist(), "fill_type": kept["fill_type"].tolist(),
        "age": [age_group(a) for a in kept["age"]],
        "gender": kept["gender"].tolist(), "race": kept["race"].tolist(),
        "source_line": kept["source_line"].tolist()})


def requests(items: pd.DataFrame, llm: Any) -> list:  # an LLMConfig
    """One call per decision and sample, cached and resumed like every call of a run."""
    from equilens.tasks.llm import LLMRequest, cache_key

    return [LLMRequest(p, s, cache_key(llm, p, s),
                       meta={"variant_id": i, "prompt_id": i, "attribute": FAMILY, "grp": f"{g}-{r}-{a}",
                             "role": "variant"})
            for i, p, g, r, a in zip(items["item_id"], items["prompt"], items["gender"], items["race"],
                                     items["age"], strict=True)
            for s in range(llm.count)]


def answers_frame(items: pd.DataFrame, results: list) -> pd.DataFrame:
    """P(yes) per decision (:data:`ANSWER_COLUMNS`): the mean of its answers' log-probability
    P(yes) when every readable answer has one, else the share of yes among its answers that say yes
    or no. An answer whose log-probabilities are not log-probabilities is unreadable. A decision
    left without a finite P(yes) keeps its row, with no P(yes), ``read`` 0 and the reason."""
    from equilens.tasks.scoring.outcomes.decisions import INVALID_LOGPROBS, yes_probability

    by_item: dict[str, list] = {}
    for res in results:
        by_item.setdefault(res.request.meta["variant_id"], []).append(res)
    rows = []
    for item in items.itertuples(index=False):
        got = by_item.get(item.item_id, [])
        ok = [r for r in got if r.ok]
        read = [yes_probability(r.text, r.top_logprobs) for r in ok]
        invalid = [how for p, how in read if how.startswith(INVALID_LOGPROBS)]
        read = [(p, how) for p, how in read if not how.startswith(INVALID_LOGPROBS)]
        logprob = [p for p, how in read if how == "logprobs"]
        said = [p for p, how in read if how == "answer"]
        if read and len(logprob) == len(read):
            p_yes, via, n = float(np.mean(logprob)), "logprobs", len(logprob)
        elif said:
            p_yes, via, n = float(np.mean(said)), "answers", len(said)
        else:
            p_yes, via, n = float("nan"), None, 0
        reason = None if n else ("every call failed" if not ok else invalid[0] if invalid else
                                 "no answer says yes or no")
        if n and not np.isfinite(p_yes):
            p_yes, via, n, reason = float("nan"), None, 0, f"P(yes) read from the {via} is not a finite number"
        rows.append({"item_id": item.item_id, "scenario": item.scenario, "fill_type": item.fill_type,
                     "age": item.age, "gender": item.gender, "race": item.race, "p_yes": p_yes, "via": via,
                     "samples": len(got), "read": n, "reason": reason})
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def comparisons(answers: pd.DataFrame, cfg: DecisionsConfig) -> list[tuple[str, str, pd.DataFrame]]:
    """(stored attribute, attribute, rows) per fill type and attribute: "race (explicit)"."""
    from equilens.tasks.assessments.decisions.metrics import comparison

    fills = list(dict.fromkeys(answers["fill_type"]))
    return [(comparison(attr, fill if len(fills) > 1 else None), attr, answers[answers["fill_type"] == fill])
            for fill in fills for attr in cfg.attributes]


def metric_rows(answers: pd.DataFrame, cfg: DecisionsConfig, confidence: float = 0.95) -> pd.DataFrame:
    """The rows of every registered decisions metric, per fill type and attribute (each group's
    discrimination score against its attribute's baseline, age's trend per decade), and Holm's
    adjustment over all of them (``details.p_holm``)."""
    from equilens.tasks.metrics import METRICS, metric_row, skipped_row, wanted_metrics
    from equilens.tasks.stats import holm_adjust
    from equilens.tasks.stats.mixed_effects import CLIP

    rows = []
    for label, attr, part in comparisons(answers, cfg):
        baseline = cfg.baselines.get(attr)
        p, groups, scenarios = part["p_yes"].to_numpy(float), part[attr].astype(str), part["scenario"]
        via = part["via"].value_counts().to_dict()
        base_p = p[(groups == baseline).to_numpy()]
        base_mean = float(np.nanmean(base_p)) if np.isfinite(base_p).any() else None
        for name in wanted_metrics(None, FAMILY):
            if baseline is None or baseline not in set(groups):
                why = (f"no baseline for {attr} (decisions.baselines)" if baseline is None else
                       f"the baseline {attr} {baseline!r} is not among {', '.join(sorted(set(groups)))}")
                rows.append(skipped_row(name, why, attribute=label, group_b=baseline))
                continue
            effects = METRICS.get(name).fn(p, groups, scenarios, attribute=attr, baseline=baseline,
                                           ages=pd.to_numeric(part["age"], errors="coerce").to_numpy(float),
                                           confidence=confidence)
            for e in effects:
                mine = p[(groups == e.group).to_numpy()]
                details = {"p_value": e.p_value, "p_method": "mixed model", "odds_ratio": e.odds_ratio,
                           "scenarios": e.scenarios, "clip": CLIP,
                           "p_yes_group": float(np.nanmean(mine)) if np.isfinite(mine).any() else None,
                           "p_yes_baseline": base_mean, "p_yes_from": via}
                where = {"attribute": label, "group_a": e.group, "group_b": e.baseline or None}
                rows.append(skipped_row(name, e.skipped, details=details, **where) if e.skipped
                            else metric_row(name, e.coefficient, (e.ci_low, e.ci_high), e.answers, details=details,
                                            **where))
    tested = [i for i, r in enumerate(rows) if r["details"].get("p_value") is not None]
    for i, adjusted in zip(tested, holm_adjust([rows[i]["details"]["p_value"] for i in tested]), strict=True):
        rows[i]["details"]["p_holm"] = float(adjusted)
        rows[i]["details"]["holm_family"] = len(tested)
    return pd.DataFrame(rows)


def read_summary(answers: pd.DataFrame, attributes: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """How P(yes) was read: decisions per source, those left without one (``unread``), and of
    those, how many per group of each of ``attributes`` and per reason (its words before a colon)."""
    unread = answers[answers["p_yes"].isna()]
    return {"decisions": int(len(answers)), "via": answers["via"].fillna("unread").value_counts().to_dict(),
            "unread": int(len(unread)),
            "unread_by_group": {a: {str(g): int(n) for g, n in unread[a].value_counts().sort_index().items()}
                                for a in attributes if a in unread.columns and len(unread)},
            "unread_reasons": unread["reason"].fillna("no reason").str.split(":").str[0].value_counts().to_dict()}
