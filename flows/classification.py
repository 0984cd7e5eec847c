"""Classification fairness: an LLM that labels or decides (approve, flag, route), judged per group.

1. **items**: a prompts file with a group column (``classification.group_column``) and, when it
   has one, a ground-truth column; or a predictions file you bring (``classification.predictions_path``);
2. **answers**: ``count`` answers per item from the model under test, through the cached LLM runner,
   each prompt followed by the label instruction;
3. **parse** each answer into one of ``classification.labels`` (case, punctuation and a lead-in
   sentence ignored); answers that name no label are counted per group, never dropped;
4. **metrics**: predicted prevalence, FPR, FNR, FOR and FDR per group, their differences and
   ratios for every pair of groups and as max-min / max/min, each with a cluster-bootstrap
   interval over items and a verdict (does the interval hold the fair value?).

Run it with ``equilens run configs/classification.yaml``.
"""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd
from equilens.flows.assessment_run import assessment_run
from equilens.tasks import validation
from equilens.tasks.assessments.classification import stages as stage
from equilens.tasks.assessments.classification.config import ClassificationRunConfig
from equilens.tasks.assessments.classification.stages import classification_metrics_task
from equilens.tasks.orchestration.run_record import response_counts, skipped_summary
from equilens.tasks.orchestration.summary import RunResult, RunSummary
from equilens.tasks.pipeline.prefect_tasks import answer_variants
from equilens.tasks.storage.fingerprint import path_fingerprint
from prefect import flow


def classification_responses(config: ClassificationRunConfig, rec: Any,
                             summary: RunSummary) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, responses): brought predictions, or the model's answers to the items."""
    ccfg = config.classification
    if ccfg.predictions_path:
        items, responses = stage.load_byo_predictions(ccfg)
        summary["source"] = ccfg.predictions_path
    else:
        items = stage.load_items(config.prompts, ccfg)
        variants = stage.generation_frame(items, ccfg)
        rec.save("variants", variants)
        responses = answer_variants(config.execution, variants, config.llm,
                              config.storage.duckdb_path, config.storage.lock_timeout)
        summary["source"] = f"{config.llm.provider}:{config.llm.model}"
    rec.save("prompts", items.drop_duplicates("prompt_id")[["prompt_id", "prompt"]].rename(columns={"prompt": "text"}))
    rec.save("responses", responses)
    if config.validation.enabled and not ccfg.predictions_path:  # brought predictions have no call rows
        rec.gate(validation.validate_responses(responses))
    return items, responses


@flow(name="classification-assessment", validate_parameters=True)
def classification_assessment(config: ClassificationRunConfig) -> RunResult:
    """Fairness of an LLM used as a classifier (see the module docstring)."""
    with assessment_run(config, "classification_assessment") as run:
        rec, summary = run.rec, run.summary
        ccfg = config.classification
        with rec.stage("responses"):
            items, responses = classification_responses(config, rec, summary)
        summary["responses"] = response_counts(responses)
        with rec.stage("parse"):
            frame = stage.predictions(responses, items, ccfg)
            rec.save("metric_items", stage.prediction_items(frame))
        summary["parsing"] = stage.parse_summary(frame)
        summary["positive_label"] = stage.positive_label(ccfg)
        with rec.stage("metrics"):
            metrics = classification_metrics_task(frame, ccfg, config.metrics,
                                                  run.code + path_fingerprint(ccfg.predictions_path))
            rec.save_metrics(metrics, config.validation.enabled)
        summary["skipped"] = skipped_summary(metrics)
        run.close(metrics, responses)
    return run.result()


if __name__ == "__main__":  # python flows/classification.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(classification_assessment, "classification"))
