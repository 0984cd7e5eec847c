"""AutoEval: every family on the same prompts in one flow, as LangFair's AutoEval.

1. **load prompts** and **check fairness through unawareness** (which prompts mention gender,
   race or names);
2. **expand** the mentioning prompts into counterfactual variants (invalid variant sets dropped,
   as in the counterfactual flow);
3. **one LLM stage** answers the original prompts (``count`` each, for stereotype and toxicity)
   and the variants (for counterfactual fairness) together: a variant whose text equals its
   original prompt, and anything a counterfactual or stereotype run already answered with the
   same model settings, comes from the response cache instead of a new call;
4. **counterfactual metrics** on the variants' answers (VADER sentiment, MiniLM embeddings),
   **stereotype and toxicity metrics** on the original prompts' answers, through the same stage
   functions as the dedicated flows;
5. with an ``identity`` section, the prompts that name no group get identities through names
   (:mod:`equilens.flows.identity`: a census name per gender x race cell in the system message, a
   same-cell name as the floor) in the same LLM stage, and their comparison is judged like an
   attribute (no pairwise judge here: ``assessment: identity`` has one);
6. **one report** with one verdict per attribute and per family (``equilens.tasks.reporting.verdict``).

Run it with ``equilens run configs/auto.yaml``.
"""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd
from equilens.flows.assessment_run import assessment_run
from equilens.tasks.assessments.auto.config import AutoRunConfig
from equilens.tasks.assessments.counterfactual.stages import counterfactual_metrics, metric_inputs, variants_stage
from equilens.tasks.assessments.identity import stages as identity_stages
from equilens.tasks.assessments.stereotype import stages as stereotype_stage
from equilens.tasks.assessments.stereotype.stages import (
    score_classifiers_task,
    stereotype_data_fingerprint,
    stereotype_metrics_task,
)
from equilens.tasks.inputs.controls import VARIANT
from equilens.tasks.orchestration.execution import run_heavy
from equilens.tasks.orchestration.run_record import response_counts
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline.prefect_tasks import answer_stage, load_prompts_stage, score_answers
from equilens.tasks.storage.fingerprint import lexicon_fingerprint, path_fingerprint
from prefect import flow


def identity_variants(rec: Any, unnamed: pd.DataFrame, variants: pd.DataFrame, config: AutoRunConfig,
                      summary: dict) -> pd.DataFrame:
    """The counterfactual variants and, for the prompts that name no group, identity variants
    (stored as the identity flow stores them)."""
    id_variants, names = identity_stages.expand_identities(unnamed, config.identity, config.llm.system_prompt)
    rec.save("identity_names", names)
    rec.save("variants", id_variants[identity_stages.VARIANT_COLUMNS])
    rec.save("identity_variants", id_variants[["variant_id", *identity_stages.IDENTITY_EXTRA]])
    summary["identity"] = {"prompts": len(unnamed), "variants": len(id_variants),
                           "cells": int(names["cell"].nunique())}
    return pd.concat([variants, id_variants], ignore_index=True)


def family_verdicts(metrics: pd.DataFrame, ftu: Any, config: AutoRunConfig) -> list[str]:
    """FTU first, then one sentence per counterfactual attribute and per family."""
    from equilens.tasks.reporting.verdict import verdict_lines

    counts = ", ".join(f"{k} in {v}" for k, v in ftu.counts.items()) or "none"
    head = (f"fairness through unawareness: {'holds' if ftu.holds else 'does not hold'} "
            f"({counts} of {ftu.prompts_total} prompts).")
    return [head, *verdict_lines(metrics, config.model_dump(mode="json"))]


@flow(name="auto-assessment", validate_parameters=True)
def auto_assessment(config: AutoRunConfig) -> RunResult:
    """FTU, counterfactual, stereotype and toxicity on the same prompts (see the module docstring)."""
    with assessment_run(config, "auto_assessment") as run:
        log, rec, summary, code = run.log, run.rec, run.summary, run.code
        lex_fp = code + lexicon_fingerprint(config.counterfactual.lexicon_dir)
        scfg = config.stereotype  # with stereotype.responses_path, the stereotype families read brought answers
        prompts = load_prompts_stage(rec, config, code)
        ftu, variants = variants_stage(rec, config, prompts, lex_fp, summary)
        named = variants  # with identities for the prompts that name no group, when the config has them
        if config.identity is not None:
            unnamed = prompts[[not any(m.values()) for m in ftu.mentions]]
            if len(unnamed):
                named = identity_variants(rec, unnamed, variants, config, summary)
        originals = stereotype_stage.prompt_frame_for_generation(prompts)
        if scfg.responses_path:  # brought answers to the original prompts: only variants are called
            originals = originals.iloc[:0]
            summary["source"] = scfg.responses_path
        asked = [c for c in (*originals.columns, "role", "system") if c in named]
        wanted = pd.concat([originals.assign(role=VARIANT), named[asked]], ignore_index=True)  # a control stays one
        brought = stereotype_stage.load_byo_responses(scfg, config.prompts) if scfg.responses_path else None
        responses = answer_stage(rec, config, wanted, summary, brought=brought, keep_keys=True)
        is_original = responses["attribute"] == "none"
        is_identity = responses["variant_id"].isin(named["variant_id"]) & ~responses["variant_id"].isin(
            variants["variant_id"])
        original, counterfactual = responses[is_original], responses[~is_original & ~is_identity]
        shared = len(set(original["cache_key"]) & set(counterfactual["cache_key"]))
        summary["responses"] = response_counts(responses, shared_between_families=shared)

        frames = []
        if len(counterfactual):
            with rec.stage("counterfactual"):
                scores = score_answers(counterfactual, config.scoring, config.metrics, config.execution, code)
                rec.save("scores", scores.scalar)
                frames.append(counterfactual_metrics(metric_inputs(counterfactual, scores), config.counterfactual,
                                                     config.metrics, lex_fp, config.execution))
        else:
            log.warning("No prompt mentions a protected attribute: no counterfactual metrics. %s%s", ftu.summary,
                        "" if config.identity else " Add an identity section to give them identities through names.")
        if is_identity.any():
            with rec.stage("identity"):
                answered = responses[is_identity]
                scores = score_answers(answered, config.scoring, config.metrics, config.execution, code)
                rec.save("scores", scores.scalar)
                frames.append(identity_stages.identity_metrics(
                    answered, named[named["variant_id"].isin(answered["variant_id"])], scores, config.identity,
                    config.metrics, judge_skipped="no judge in an auto run (assessment: identity has one)"))
        with rec.stage("stereotype"):
            texts = sorted(set(original.loc[original["ok"], "text"]))
            cscores = run_heavy(score_classifiers_task, config.execution, texts, scfg,
                                code + path_fingerprint(scfg.toxicity_model) + path_fingerprint(scfg.stereotype_model)
                                + path_fingerprint(scfg.responses_path))
            rec.save("scores", cscores.scalar)
            st_metrics, items, skipped = stereotype_metrics_task(
                original, cscores, scfg, config.metrics,
                code + stereotype_data_fingerprint(scfg.cobs_targets, scfg.honest_lexicon)
                + path_fingerprint(scfg.responses_path))
            frames.append(st_metrics)
            rec.save("metric_items", items)
        metrics = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) \
            else pd.DataFrame()
        rec.save_metrics(metrics, config.validation.enabled)
        summary["skipped"] = skipped
        summary["caveats"] = cscores.caveats
        summary["families"] = sorted(set(metrics["family"])) if len(metrics) else []
        summary["verdicts"] = family_verdicts(metrics, ftu, config)
        run.close(metrics, responses)
    return run.result()



if __name__ == "__main__":  # python flows/auto.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(auto_assessment, "auto"))
