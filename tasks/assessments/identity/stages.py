"""The identity assessment's stages: variants with names, outcomes read from answers, metrics per
comparison (a signal, and a task within it).

A *comparison* is what one verdict judges: the attribute's cells under one signal (``gender x
race``, or ``gender x race | intro`` when a run has several signals), and again per task when the
prompt file has a ``task`` column (``gender x race | pricing``). Each is stored as the
``attribute`` of its metric rows, so the counterfactual metric stage, the report and the verdict
treat it as they treat an attribute.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from equilens.tasks.assessments.identity.config import IdentityConfig
from equilens.tasks.assessments.identity.gaps import detectable_outcome_gaps, outcome_rows
from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.controls import CONTROL, VARIANT
from equilens.tasks.inputs.personas import (
    IDENTITY,
    SEP,
    app_fields,
    attribute_label,
    cell_names,
    cells_of,
    check_inline,
    identity_phrases,
    place,
    slots_for,
)
from equilens.tasks.pipeline import NONE_JSON, VARIANT_COLUMNS, ScoreSet, variant_id
from equilens.tasks.pipeline.memo import computed_once

IDENTITY_EXTRA = ["signal", "name", "system", "user_fields", "task", "outcome"]  # stored in identity_variants
IDENTITY_COLUMNS = [*VARIANT_COLUMNS, *IDENTITY_EXTRA]


def comparison(attribute: str, signal: str, several_signals: bool, task: str | None = None) -> str:
    """The stored ``attribute`` of a comparison (see the module docstring)."""
    parts = [attribute, *([signal] if several_signals else []), *([task] if task else [])]
    return SEP.join(parts)


def _lexicons(cfg: IdentityConfig):  # noqa: ANN202
    from pathlib import Path

    from equilens.tasks.inputs.lexicon import load_lexicon
    from equilens.tasks.inputs.names import load_names

    folder = Path(cfg.lexicon_dir) if cfg.lexicon_dir else None
    return load_names(folder), load_lexicon("gender", folder), load_lexicon("race", folder)


def outcome_of(spec: object) -> tuple[str, list[str]] | None:
    """(kind, options) of one ``outcome`` value; None for no outcome (empty, none, text).
    ValueError for anything else that is not number, yes_no or choice: a | b."""
    from equilens.tasks.scoring.parsing import parse_outcome_spec

    if not isinstance(spec, str) or spec.strip().lower() in ("", "none", "text"):
        return None
    return parse_outcome_spec(spec)


def check_outcomes(prompts: pd.DataFrame) -> None:
    """Every value of an ``outcome`` column is number, yes_no, choice: a | b or none (else: which file
    and line)."""
    if "outcome" not in prompts:
        return
    where, unit = prompts.attrs.get("source", ("the prompt file", "line"))
    for line, spec in zip(prompts["source_line"], prompts["outcome"], strict=True):
        try:
            outcome_of(spec)
        except ValueError as err:
            raise InputDataError(f"{where}, {unit} {line}: {err} (outcome column; none, or empty, for a prompt "
                                 "whose answer is not compared).") from None


@computed_once
def expand_identities(prompts: pd.DataFrame, cfg: IdentityConfig, system_prompt: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(variants, names): per prompt, signal and cell a variant with one name of the cell and its
    control with another name of the same cell (an explicit signal: the identity in other words)."""
    for s in cfg.signals:
        if s.placement == "inline":
            check_inline(prompts, s.name)
    check_outcomes(prompts)
    table, gender_lex, race_lex = _lexicons(cfg)
    cells = cells_of(cfg.attributes, cfg.genders, cfg.races)
    names = cell_names(table, cells, cfg.names_per_cell, cfg.seed)
    by_slot = {(r.cell, r.slot): r.name for r in names.itertuples(index=False)}
    phrases = {c.label: identity_phrases(c, gender_lex, race_lex) for c in cells}
    attribute = attribute_label(cfg.attributes)
    several = len(cfg.signals) > 1
    rows = []
    for p in prompts.itertuples(index=False):
        task = getattr(p, "task", None)
        outcome = getattr(p, "outcome", None)
        for s in cfg.signals:
            label = comparison(attribute, s.name, several)
            explicit = IDENTITY in s.template and s.placement != "inline"
            first, second = slots_for(p.prompt_id, s.name, cfg.names_per_cell, cfg.seed)
            for c in cells:
                for role, slot, phrase in ((VARIANT, first, 0), (CONTROL, second, 1)):
                    fill = {"identity": phrases[c.label][phrase], "name": by_slot[(c.label, slot)]}
                    text, system = place(p.text, s.placement, s.template, fill, system_prompt, s.at)
                    kind = None if role == VARIANT else ("identity wording" if explicit else "name")
                    key = c.label if role == VARIANT else f"{c.label}|{CONTROL}"
                    rows.append({"variant_id": variant_id(p.prompt_id, label, key), "prompt_id": p.prompt_id,
                                 "attribute": label, "grp": c.label, "text": text, "swapped": NONE_JSON,
                                 "valid": True, "problems": NONE_JSON, "role": role, "control_kind": kind,
                                 "system": system, "user_fields": app_fields(s.placement, s.template, fill),
                                 "signal": s.name, "name": None if explicit else fill["name"],
                                 "task": task, "outcome": outcome})
    return pd.DataFrame(rows, columns=IDENTITY_COLUMNS), names


def cell_phrases(cfg: IdentityConfig) -> dict[str, str]:
    """Each cell as a judge reads it: {"female-black": "a Black woman", ...}, in cell order."""
    _, gender_lex, race_lex = _lexicons(cfg)
    return {c.label: identity_phrases(c, gender_lex, race_lex)[0]
            for c in cells_of(cfg.attributes, cfg.genders, cfg.races)}


# --- outcomes ------------------------------------------------------------------------------------
READING_COLUMNS = ["variant_id", "sample_idx", "kind", "value", "unit", "reason", "figure", "reader", "model_value",
                   "model_reason", "disagree"]


def _questions(variants: pd.DataFrame) -> dict:
    """variant id -> its :class:`~equilens.tasks.scoring.outcomes.Question`, for variants with an outcome."""
    from equilens.tasks.scoring.outcomes import question_of
    from equilens.tasks.turns import last_turn

    by_variant = variants.drop_duplicates("variant_id").set_index("variant_id")
    questions = {}
    for vid, text, raw in zip(by_variant.index, by_variant["text"], by_variant["outcome"], strict=True):
        spec = outcome_of(raw)  # checked at expansion
        if spec is not None:
            kind, options = spec
            unit = options[0] if kind == "number" and options else None
            # the answer read is the one to the last turn of a conversation
            questions[vid] = question_of(last_turn(str(text)), kind, options if kind == "choice" else (), unit)
    return questions


def read_stage(responses: pd.DataFrame, variants: pd.DataFrame, pattern: str | None = None) -> pd.DataFrame:
    """One reading per answer to an outcome prompt (:data:`READING_COLUMNS`): the amount in the unit
    its prompt asks for, 1/0 for yes/no, the chosen option's index, or no value with the reason
    (:data:`equilens.tasks.scoring.outcomes.REASONS`; a failed or refused call is ``failed``).
    Read by :func:`equilens.tasks.scoring.outcomes.read_outcome` against the variant's own prompt,
    so figures the prompt gave are not taken for the answer; ``pattern`` (``identity.number_pattern``)
    first cuts an amount answer down to its first group."""
    import re

    from equilens.tasks.scoring.outcomes import Reading, read_outcome

    questions = _questions(variants)
    rows = []
    for vid, sample, text, ok in zip(responses["variant_id"], responses["sample_idx"], responses["text"],
                                     responses["ok"], strict=True):
        q = questions.get(vid)
        if q is None:
            continue
        if not ok:  # an answer flagged as a refusal is still read: a disclaimer may come before the outcome
            reading = Reading(None, "failed")
        elif pattern is not None and q.kind == "number":
            found = re.search(pattern, str(text or ""))
            reading = (read_outcome(found.group(1), q) if found and found.group(1)
                       else Reading(None, "no_figure"))
        else:
            reading = read_outcome(text, q)
        rows.append({"variant_id": vid, "sample_idx": int(sample), "kind": q.kind, "value": reading.value,
                     "unit": reading.unit, "reason": reading.reason, "figure": reading.figure, "reader": "rules",
                     "model_value": None, "model_reason": None, "disagree": None})
    return pd.DataFrame(rows, columns=READING_COLUMNS).astype({"value": float, "model_value": float})


def model_read_stage(readings: pd.DataFrame, responses: pd.DataFrame, variants: pd.DataFrame, mode: str,
                     reader_llm: Any, store: Any = None, progress: Any = None) -> tuple[pd.DataFrame, dict]:
    """``readings`` with the model reader's (:mod:`equilens.tasks.scoring.outcomes.model_reader`):
    ``model`` sends the answers the rules left unreadable, ``both`` every answer (never a failed
    call). Returns the readings and a summary: calls made, their cost, answers read by the model,
    and (``both``) the answers where the two readers disagree."""
    from equilens.tasks.llm import LLMRequest, cache_key
    from equilens.tasks.llm.runner import run_requests
    from equilens.tasks.pipeline import call_cost
    from equilens.tasks.scoring.outcomes import Reading
    from equilens.tasks.scoring.outcomes.model_reader import disagree, parse_reader_reply, reader_question

    questions = _questions(variants)
    sent = variants.drop_duplicates("variant_id").set_index("variant_id")["text"]
    answers = responses.set_index(["variant_id", "sample_idx"])["text"]
    out = readings.copy()
    todo = out["reason"].ne("failed") & (out["value"].isna() if mode == "model" else True)
    asked = {i: reader_question(str(sent[v]), str(answers.get((v, s)) or ""), questions[v])
             for i, v, s in zip(out.index[todo], out.loc[todo, "variant_id"], out.loc[todo, "sample_idx"], strict=True)}
    distinct = list(dict.fromkeys(asked.values()))
    results = {r.request.prompt: r for r in run_requests(
        [LLMRequest(q, 0, cache_key(reader_llm, q, 0)) for q in distinct], reader_llm, store, progress=progress)}
    by_model = disagreements = 0
    for i, question in asked.items():
        r, q = results[question], questions[out.at[i, "variant_id"]]
        model = parse_reader_reply(r.text, q) if r.ok else Reading(None, "model_failed")
        rules = Reading(None if pd.isna(out.at[i, "value"]) else float(out.at[i, "value"]), out.at[i, "reason"])
        out.at[i, "model_value"], out.at[i, "model_reason"] = model.value, model.reason
        if mode == "both":
            out.at[i, "disagree"] = differ = disagree(rules, model) and r.ok
            disagreements += bool(differ)
        if not rules.readable and model.readable:
            out.loc[i, ["value", "unit", "reason", "figure", "reader"]] = [model.value, model.unit, None, model.figure,
                                                                           "model"]
            by_model += 1
    costs = [call_cost(reader_llm, r.prompt_tokens, r.completion_tokens, r.cached) for r in results.values()]
    summary = {"mode": mode, "asked": len(asked), "calls": sum(not r.cached for r in results.values()),
               "cost": None if any(c is None for c in costs) else float(sum(costs)), "read_by_model": by_model,
               "answers": int(len(out)), "disagreements": disagreements if mode == "both" else None,
               "failed": sum(not r.ok for r in results.values())}
    return out, summary


def with_readings(responses: pd.DataFrame, readings: pd.DataFrame) -> pd.DataFrame:
    """``responses`` with ``outcome_kind``, ``outcome_value`` (NaN: unreadable) and ``outcome_reason``."""
    keyed = readings.rename(columns={"kind": "outcome_kind", "value": "outcome_value", "reason": "outcome_reason",
                                     "reader": "outcome_reader", "disagree": "outcome_disagree"})
    columns = ["outcome_kind", "outcome_value", "outcome_reason", "outcome_reader", "outcome_disagree"]
    out = responses.merge(keyed[["variant_id", "sample_idx", *[c for c in columns if c in keyed]]],
                          on=["variant_id", "sample_idx"], how="left")
    choice = out["outcome_kind"].eq("choice")
    out.loc[choice, "outcome_value"] = (out.loc[choice, "outcome_value"] == 0).astype(float).where(
        out.loc[choice, "outcome_value"].notna())
    return out


def one_orientation(records: list[dict]) -> list[dict]:
    """Every pair of cells written one way, in sorted order as the counterfactual metrics compare them
    (``female-black`` vs ``female-white``): a signed row (an outcome gap, the judge's harm) read
    the other way round is flipped, its value, interval and gap negated."""
    from equilens.tasks.metrics.judged import two_sided

    for r in records:
        a, b = r["group_a"], r["group_b"]
        if not isinstance(a, str) or not isinstance(b, str) or a <= b:
            continue
        r["group_a"], r["group_b"] = b, a
        if not two_sided(r["metric"]):
            continue
        neg = (lambda v: -v if isinstance(v, float | int) and v == v else v)  # noqa: E731 - None and NaN stay
        r["value"], (r["ci_low"], r["ci_high"]) = neg(r["value"]), (neg(r["ci_high"]), neg(r["ci_low"]))
        d = r["details"]
        if "gap" in d:
            d["gap"] = neg(d["gap"])
        if isinstance(d.get("gap_ci"), list) and len(d["gap_ci"]) == 2:
            d["gap_ci"] = [neg(d["gap_ci"][1]), neg(d["gap_ci"][0])]
        if "about_a" in d:
            d["about_a"], d["about_b"] = d.get("about_b"), d["about_a"]
        if "names_a" in d:
            d["names_a"], d["names_b"] = d.get("names_b"), d["names_a"]
    return records


def judged_names(judged: pd.DataFrame, variants: pd.DataFrame) -> pd.DataFrame:
    """``judged`` with ``name_a`` and ``name_b``: the names its two answers were asked with (the
    variants' names; the judge reads no control), None for a signal that states the identity."""
    if "name" not in variants or "role" not in variants:
        return judged
    names = variants.loc[variants["role"] == VARIANT, ["attribute", "prompt_id", "grp", "name"]].drop_duplicates(
        ["attribute", "prompt_id", "grp"])
    out = judged.reset_index(drop=True)
    for side in ("a", "b"):
        out = out.merge(names.rename(columns={"grp": f"cell_{side}", "name": f"name_{side}"}),
                        on=["attribute", "prompt_id", f"cell_{side}"], how="left")
    return out


def identity_metrics(responses: pd.DataFrame, variants: pd.DataFrame, scores: ScoreSet, cfg: IdentityConfig,
                 metrics_cfg: MetricsConfig, judged: pd.DataFrame | None = None,
                 judge_skipped: str = "no judge configured (set judge.enabled: true)",
                 readings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every comparison's rows: the counterfactual metrics (parity, similarity against the floor of
    two names of one cell, non-completion), the outcome metrics and the judge's harm score per pair
    (``judged``; without it one skipped row per comparison says why), with one Holm family per
    comparison over every gap the verdict judges."""
    from equilens.tasks.assessments.identity.judge import harm_rows, skipped_harm
    from equilens.tasks.metrics.base import METRIC_ROW_COLUMNS
    from equilens.tasks.metrics.judged import judged_metric
    from equilens.tasks.pipeline.metric_stage import metric_stage as pair_metrics
    from equilens.tasks.stats import holm_adjust

    cf_cfg = CounterfactualConfig(attributes=[], noise_floor="controls")  # no lexicon: cells are the groups
    kept = ["task", *(["name"] if "name" in variants and "name" not in responses else [])]
    meta = variants.drop_duplicates("variant_id").set_index("variant_id")[kept]
    if readings is None:
        readings = read_stage(responses, variants, cfg.number_pattern)
    responses = with_readings(responses, readings).join(meta, on="variant_id")
    cells = [c.label for c in cells_of(cfg.attributes, cfg.genders, cfg.races)]
    tasks = variants.drop_duplicates("prompt_id").set_index("prompt_id")["task"]
    judged = (judged_names(judged, variants).assign(task=lambda f: f["prompt_id"].map(tasks)) if judged is not None
              else None)
    frames = [(responses, judged, False)]  # (answers, the judge's pairs, whether only outcomes are compared)
    if cfg.per_task and responses["task"].notna().any() and responses["task"].nunique() > 1:
        for task, part in responses.groupby("task"):
            own = judged[judged["task"] == task] if judged is not None else None
            frames.append((part.assign(attribute=part["attribute"] + SEP + str(task)),
                           own.assign(attribute=own["attribute"] + SEP + str(task)) if own is not None else None,
                           False))
    if cfg.per_turn:  # every turn of a conversation compared too: its outcome only
        from equilens.tasks.assessments.identity.by_turn import readable_turns, turn_frames

        turn_responses, turn_variants = turn_frames(responses, variants)
        if len(turn_responses):
            read = with_readings(turn_responses.drop(columns=[c for c in turn_responses if c.startswith("outcome_")]),
                                 read_stage(turn_responses, turn_variants, cfg.number_pattern))
            frames.append((readable_turns(read), None, True))
    rows: list[dict] = []
    for frame, pairs, outcome_only in frames:
        for label, part in frame.groupby("attribute", sort=True):
            if outcome_only:
                records = outcome_rows(part, str(label), cells, metrics_cfg)
            else:
                harm = (harm_rows(pairs[pairs["attribute"] == label], str(label), cells, metrics_cfg)
                        if pairs is not None else skipped_harm(str(label), judge_skipped))
                records = [*pair_metrics(part, scores, cf_cfg, metrics_cfg).to_dict("records"),
                           *outcome_rows(part, str(label), cells, metrics_cfg), *harm]
            family = [r for r in records if r["group_b"] not in (None, r["group_a"])
                      and isinstance(r["details"].get("p_value"), float)
                      and (judged_metric(r["metric"], r["details"]) or r["family"] == "identity")]
            for r, adj in zip(family, holm_adjust([r["details"]["p_value"] for r in family]), strict=True):
                r["details"]["p_holm"] = adj
            detectable_outcome_gaps(records, len(family), 1 - metrics_cfg.confidence)
            rows += one_orientation(records)
    return pd.DataFrame(rows, columns=METRIC_ROW_COLUMNS)

