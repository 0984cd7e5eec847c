"""Before an identity run: what it asks its LLM and the calls beside the model's (the judge's, its
check's, the outcome reader's), for the plan (flows.running.plan); and how it answers in looks
when it stops early (flows.running.looks): the gaps it measures, the comparisons a look plans for,
the strata every look holds an equal share of."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pandas as pd
from equilens.tasks.assessments.identity import stages
from equilens.tasks.assessments.identity.config import IdentityRunConfig
from equilens.tasks.assessments.identity.judge import judge_question, load_instructions
from equilens.tasks.assessments.identity.judge.check import check_questions, load_check_set
from equilens.tasks.llm.budget import CHARS_PER_TOKEN, ExtraCalls
from equilens.tasks.metrics import outcome_gaps


def plan_requests(config: IdentityRunConfig, prompts: Any) -> Any:  # DataFrames
    """What the LLM stage would be asked (each row ``llm.count`` times), for a plan: every identity
    variant and its control (the judge's calls come on top: :func:`plan_extra_calls`)."""
    return stages.expand_identities(prompts, config.identity, config.llm.system_prompt)[0]


def plan_extra_calls(config: IdentityRunConfig, prompts: Any) -> list:  # a DataFrame
    """The judge's calls, for a plan: up to 4 per pair of cells per prompt, signal and answer
    (``llm.count``; identical answers skip theirs), each question holding the prompt, two group
    phrases and two answers of at most ``llm.max_tokens`` tokens; with ``judge.check``, one call
    per labelled pair of the check set."""
    out = _reader_calls(config, prompts)
    if not config.judge.enabled:
        return out
    judge = config.judge_llm()
    caps = "judge.llm" if config.judge.llm is not None else "llm"
    template = load_instructions(config.judge.instructions)
    labels = stages.cell_phrases(config.identity)
    pairs = list(combinations(labels.values(), 2))
    per_prompt = 4 * len(pairs) * len(config.identity.signals) * config.llm.count
    longest = max(pairs, key=lambda p: len(p[0]) + len(p[1])) if pairs else ("", "")
    chars = sum(len(judge_question(template, text, (longest[0], ""), (longest[1], ""))) + len(judge.system_prompt)
                for text in prompts["text"])
    tokens = (chars / CHARS_PER_TOKEN + len(prompts) * 2 * config.llm.max_tokens) * per_prompt
    out.append(ExtraCalls("judge", len(prompts) * per_prompt, tokens, judge, caps,
                          why=f"4 per pair of {len(labels)} cells per prompt and answer; identical answers skip theirs"))
    if config.judge.check:
        check_set = load_check_set(config.judge.check_path)
        questions = check_questions(check_set, template)
        check_tokens = sum(len(q) + len(judge.system_prompt) for q in questions) / CHARS_PER_TOKEN
        out.append(ExtraCalls("judge check", len(questions), check_tokens, judge, caps, per_prompt=False,
                              up_to=False, why=f"judge.check: one per labelled pair of {check_set.name}"))
    return out


def _reader_calls(config: IdentityRunConfig, prompts: Any) -> list:  # a DataFrame
    """The outcome reader model's calls, for a plan: one per answer to an outcome prompt (``both``),
    or up to that many (``model``: only the answers the rules cannot read)."""
    mode = config.identity.outcome_reader
    if mode == "rules" or "outcome" not in prompts:
        return []
    with_outcome = prompts[[stages.outcome_of(o) is not None for o in prompts["outcome"]]]
    per_prompt = 2 * len(stages.cells_of(config.identity.attributes, config.identity.genders, config.identity.races)) \
        * len(config.identity.signals) * config.llm.count
    calls = len(with_outcome) * per_prompt
    tokens = calls * (600 / CHARS_PER_TOKEN + config.llm.max_tokens) + per_prompt * sum(
        len(t) for t in with_outcome["text"]) / CHARS_PER_TOKEN
    reader = config.reader_llm()
    caps = "identity.reader_llm" if config.identity.reader_llm is not None else "llm"
    return [ExtraCalls("outcome reader", calls, tokens, reader, caps, up_to=mode == "model",
                       why="one per answer to an outcome prompt" + (" the rules cannot read" if mode == "model" else ""))]


def prompt_warnings(config: IdentityRunConfig, prompts: Any) -> list[str]:  # a DataFrame
    """A signal told in the conversation at a turn the prompts do not reach: it goes before their last
    turn instead (:func:`equilens.tasks.inputs.personas.place`), which the run should not do unsaid."""
    from equilens.tasks.turns import split_turns

    turns = [len(split_turns(t)) for t in prompts["text"]]
    warnings = []
    for signal in config.identity.signals:
        if signal.placement != "conversation" or signal.at == 1:
            continue
        short = [n for n in turns if signal.at > n]  # the line would come after the prompt's last turn
        if short:
            warnings.append(f"identity.signals {signal.name!r}: at {signal.at} is past the turns of {len(short)} of "
                            f"{len(turns)} prompts (the shortest has {min(short)}); there the line is told just "
                            "before the prompt's last turn.")
    return warnings


def stop_targets(config: IdentityRunConfig) -> tuple[str, ...]:
    """The metrics a gap to detect is measured in, without ``execution.detect_metric``: the outcome
    gaps (amounts, yes rates, first choices)."""
    return outcome_gaps()


def look_groups(config: IdentityRunConfig, prompts: pd.DataFrame) -> tuple[pd.Series, list[tuple[str, pd.Index, bool]]]:
    """Each planned prompt's outcome kind (which outcome gap it can give a value), and the per-task
    comparisons a look plans for as breakdowns (reported, never waited for) when the prompts have
    more than one task and ``identity.per_task`` is on."""
    kinds = prompts["outcome"].map(lambda spec: (stages.outcome_of(spec) or (None,))[0])
    task = prompts["task"]
    if not (config.identity.per_task and task.notna().any() and task.nunique() > 1):
        return kinds, []
    return kinds, [(f"{a}{stages.SEP}{t}", part.index, True)
                   for (a, t), part in prompts[task.notna()].groupby(["attribute", "task"], sort=True)]


def prompt_strata(config: IdentityRunConfig, variants: pd.DataFrame) -> dict[str, tuple]:
    """Each prompt's (outcome kind, task), so every look holds an equal share of the amounts, the
    decisions and each task's breakdown."""
    first = variants.assign(prompt_id=variants["prompt_id"].astype(str)).drop_duplicates("prompt_id")
    return {p: ((stages.outcome_of(o) or ("none",))[0], str(t)) for p, o, t in
            zip(first["prompt_id"], first["outcome"], first["task"], strict=True)}
