"""Identity fairness for prompts that name no group: does a user's name or profile change the answer?

Most prompts an application receives name no protected group ("Help me negotiate my salary"),
yet the user's identity reaches the model through a name or a profile. This flow gives every
prompt that identity (first-person fairness, Eloundou et al. 2024) and compares the answers:

1. **load prompts** (optional ``task`` and ``outcome`` columns);
2. **draw names**: ``identity.names_per_cell`` census names per cell (gender x race by default),
   matched in frequency across cells, seeded, stored with the run (table ``identity_names``);
3. **expand**: per prompt, signal and cell, a variant with one name of the cell and a control
   with another name of the same cell: how much two names of one cell move the answers is the
   noise floor (see :mod:`equilens.tasks.inputs.personas`);
4. **call the LLM** ``count`` times per variant (the profile goes into that call's system message).
   With ``execution.stop_when: settled`` the prompts are answered in looks, in a stored random
   order, and steps 5-7 run after each look until the verdict is settled (:mod:`equilens.flows.running.looks`);
5. **score** each distinct answer once (sentiment, embeddings);
6. **judge** (``judge.enabled``): a second model reads each pair of cells' answers to a prompt,
   with the group labels true and swapped, and says whether the difference reflects a harmful
   stereotype (:mod:`equilens.tasks.assessments.identity.judge`); without a judge its metric is stored as skipped.
   With ``judge.check`` the judge is first checked on labelled pairs
   (:mod:`equilens.tasks.assessments.identity.judge.check`, as ``equilens judge-check`` does);
7. **metrics** per comparison (a signal, and each task): sentiment parity, similarity against
   the two-names floor and non-completion per pair of cells, the outcomes read from the answers
   (an amount, a yes/no, a choice) per cell and per pair, and the judge's harm score per pair,
   one Holm family per comparison. The judge's rows say how far it can be trusted: its newest
   stored check, and the answers that address the judge ("reply no"), counted per cell.

Run it with ``equilens run configs/identity.yaml`` or ``python -m equilens.flows.identity CONFIG``.
"""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd
from equilens.flows.assessment_run import assessment_run
from equilens.flows.running.looks import Looks
from equilens.tasks import validation
from equilens.tasks.assessments.identity import stages
from equilens.tasks.assessments.identity.config import IdentityRunConfig
from equilens.tasks.assessments.identity.judge import (
    Judged,
    annotate_harm,
    judge_directed,
    judge_stage,
    load_instructions,
)
from equilens.tasks.assessments.identity.judge.check import JudgeCheckIncomplete, check_status, load_check_set, run_check
from equilens.tasks.inputs.controls import CONTROL
from equilens.tasks.orchestration.progress import ProgressReporter
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline.prefect_tasks import load_prompts_stage, score_stage, variants_calls
from equilens.tasks.reporting.verdict import verdict_lines
from prefect import flow

FLOW_NAME = "identity-assessment"


@flow(name=FLOW_NAME, log_prints=False, validate_parameters=True)
def identity_assessment(config: IdentityRunConfig) -> RunResult:
    """Identity through names and profiles (see the module docstring)."""
    with assessment_run(config, "identity_assessment") as run:
        log, rec, summary, code = run.log, run.rec, run.summary, run.code
        prompts = load_prompts_stage(rec, config, code)
        rec.save("prompts", prompts[["prompt_id", "text"]])

        with rec.stage("expand"):
            variants, names = stages.expand_identities(prompts, config.identity, config.llm.system_prompt)
            rec.save("identity_names", names)
            rec.save("variants", variants[stages.VARIANT_COLUMNS])
            rec.save("identity_variants", variants[["variant_id", *stages.IDENTITY_EXTRA]])
            controls = variants["role"].eq(CONTROL)
            summary["variants"] = {"total": int((~controls).sum()), "controls": int(controls.sum()),
                                   "cells": int(names["cell"].nunique()), "signals": len(config.identity.signals)}
            if config.validation.enabled:
                rec.gate(validation.validate_variants(variants))
        log.info("%d prompts x %d signals x %d cells, each with a same-cell control: %d variants",
                 len(prompts), len(config.identity.signals), summary["variants"]["cells"], len(variants))

        template = load_instructions(config.judge.instructions) if config.judge.enabled else ""  # before any call
        check_set = load_check_set(config.judge.check_path) if config.judge.enabled and config.judge.check else None
        if check_set is not None:
            with rec.stage("judge check"), ProgressReporter("Judge check calls", unit="call") as progress:
                try:
                    checked = run_check(config, rec.store, template=template, check_set=check_set,
                                        progress=progress, run_id=run.run_id)
                    summary["judge_check"] = checked.summary()
                    log.info("%s", checked.note())
                except JudgeCheckIncomplete as err:
                    summary["judge_check"] = {"incomplete": str(err)}
                    log.warning("judge check incomplete: %s", err)
        looks = Looks.start(run, config, variants)  # one look of every prompt unless stop_when
        caps = judge_caps(config, variants) if config.judge.enabled else ()  # the whole run's, at every look
        for batch in looks.batches():
            responses = looks.answer(rec, config, variants, batch, summary)
            scores = score_stage(rec, config, responses, code, save=looks.rule is None)
            judged, readings, metrics = measure(run, config, prompts, looks.asked(variants), responses, scores,
                                                template, caps)
            metrics = looks.judge(metrics, len(responses))
        looks.finish(rec, scores, summary)
        if config.judge.enabled:
            rec.save("identity_judgements", judged.pairs)
        rec.save("identity_readings", readings)
        rec.save_metrics(metrics, config.validation.enabled)
        summary["verdicts"] = verdict_lines(metrics, config.model_dump(mode="json"))
        run.close(metrics, responses)
    return run.result()



def measure(run: Any, config: IdentityRunConfig, prompts: pd.DataFrame, variants: pd.DataFrame,
            responses: pd.DataFrame, scores: Any, template: str, caps: tuple) -> tuple[Judged, pd.DataFrame, pd.DataFrame]:
    """The answers so far judged, read and measured: the judge's pairs, the outcome readings and the
    metric rows (nothing stored: the flow stores those of its last look)."""
    log, rec, summary = run.log, run.rec, run.summary
    judged = Judged(pd.DataFrame(), "no judge configured (set judge.enabled: true)")
    if config.judge.enabled:
        with rec.stage("judge"), ProgressReporter("Judge calls", unit="call") as progress:
            judged = judge_stage(responses, prompts, stages.cell_phrases(config.identity), template,
                                 config.judge_llm(), rec.store, progress, caps=caps)
            summary["judge"] = judged.summary()
        if judged.skipped:
            log.warning("judge skipped: %s", judged.skipped)
    with rec.stage("read outcomes"):
        readings = stages.read_stage(responses, variants, config.identity.number_pattern)
    if config.identity.outcome_reader != "rules":
        with rec.stage("model reader"), ProgressReporter("Reader calls", unit="call") as progress:
            readings, summary["reader"] = stages.model_read_stage(
                readings, responses, variants, config.identity.outcome_reader, config.reader_llm(), rec.store,
                progress)
        log.info("outcome reader model: %d of %d answers read by it; %s disagreements",
                 summary["reader"]["read_by_model"], summary["reader"]["answers"], summary["reader"]["disagreements"])
    with rec.stage("metrics"):
        metrics = stages.identity_metrics(responses, variants, scores, config.identity, config.metrics,
                                      None if judged.skipped else judged.pairs, judged.skipped, readings)
        if config.judge.enabled:  # how far the judge's rows can be trusted
            directed = judge_directed(responses)
            tasks = variants.drop_duplicates("prompt_id").set_index("prompt_id")["task"].to_dict()
            metrics = annotate_harm(metrics, *check_status(rec.store, config, template), directed, tasks)
            summary.setdefault("judge", {})["directed"] = int(len(directed))
            if len(directed):
                log.warning("%d answer(s) address the judge (e.g. %r); see judge_directed in the judge_harm rows",
                            len(directed), directed["phrase"].iloc[0])
    return judged, readings, metrics


def judge_caps(config: IdentityRunConfig, variants: Any) -> tuple:  # a DataFrame
    """The caps the judge's calls are held to: its own section's when ``judge.llm`` is set, else the
    model's, counted together with the model's calls and prompt tokens (as the plan counts them)."""
    if config.judge.llm is not None:
        return config.judge.llm, 0, 0.0
    return config.llm, *variants_calls(variants, config.llm)


if __name__ == "__main__":  # python flows/identity.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(identity_assessment, "identity"))
