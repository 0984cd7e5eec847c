"""Recommendation fairness (FaiRLLM, Zhang et al. 2023): does telling the model who the user is
change what it recommends?

1. **requests**: each template with a ``{group}`` slot becomes a neutral request (slot dropped)
   and one request per group of ``recommendation.groups``; or, with ``source: counterfactual``,
   the gender variants of the counterfactual expansion, whose gender-neutral variant is the neutral request;
   or a responses file you bring (``recommendation.responses_path``);
2. **answers** from the model under test through the cached LLM runner, ``count`` per request;
3. **parse** each answer into a top-K list (numbered, bulleted or comma-separated; normalised,
   duplicates dropped);
4. **metrics**: Jaccard@K, SERP*@K and PRAG*@K of each group's list against the neutral list of
   the same prompt and sample, averaged per group; then min, max, range (SNSR) and standard
   deviation (SNSV) across the groups of each attribute, with cluster-bootstrap intervals.

Run it with ``equilens run configs/recommendation.yaml``.
"""

from __future__ import annotations

import sys

import pandas as pd
from equilens.flows.assessment_run import assessment_run
from equilens.tasks import validation
from equilens.tasks.assessments.recommendation import stages as stage
from equilens.tasks.assessments.recommendation.config import RecommendationRunConfig
from equilens.tasks.assessments.recommendation.stages import recommendation_metrics_task
from equilens.tasks.orchestration.run_record import response_counts, skipped_summary
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline.prefect_tasks import answer_variants, load_prompts_task
from equilens.tasks.storage.fingerprint import code_fingerprint, path_fingerprint
from prefect import flow


def build_requests(config: RecommendationRunConfig) -> pd.DataFrame:
    rcfg = config.recommendation
    if rcfg.source == "counterfactual":
        prompts = load_prompts_task(config.prompts, code_fingerprint() + path_fingerprint(config.prompts.path))
        return stage.counterfactual_requests(prompts, config.counterfactual)
    templates = list(rcfg.templates)
    if not templates:
        prompts = load_prompts_task(config.prompts, code_fingerprint() + path_fingerprint(config.prompts.path))
        templates = prompts["text"].tolist()
    return stage.template_requests(templates, rcfg)


@flow(name="recommendation-assessment", validate_parameters=True)
def recommendation_assessment(config: RecommendationRunConfig) -> RunResult:
    """Fairness of an LLM used as a recommender (see the module docstring)."""
    with assessment_run(config, "recommendation_assessment") as run:
        rec, summary = run.rec, run.summary
        rcfg = config.recommendation
        with rec.stage("responses"):
            if rcfg.responses_path:
                responses = stage.load_byo_responses(rcfg)
                summary["source"] = rcfg.responses_path
            else:
                requests = build_requests(config)
                rec.save("variants", requests)
                responses = answer_variants(config.execution, requests, config.llm,
                                      config.storage.duckdb_path, config.storage.lock_timeout)
                summary["source"] = f"{config.llm.provider}:{config.llm.model}"
            rec.save("responses", responses)
            if config.validation.enabled and not rcfg.responses_path:  # brought answers have no call rows
                rec.gate(validation.validate_responses(responses))
        summary["responses"] = response_counts(responses)
        with rec.stage("parse"):
            lists = stage.ranked_lists(responses, rcfg.k)
            rec.save("metric_items", stage.list_items(lists))
        summary["empty_lists"] = int((lists["items"].map(len) == 0).sum())
        with rec.stage("metrics"):
            metrics = recommendation_metrics_task(lists, rcfg, config.metrics,
                                                  run.code + path_fingerprint(rcfg.responses_path))
            rec.save_metrics(metrics, config.validation.enabled)
        summary["skipped"] = skipped_summary(metrics)
        run.close(metrics, responses)
    return run.result()


if __name__ == "__main__":  # python flows/recommendation.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(recommendation_assessment, "recommendation"))
