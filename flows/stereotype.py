"""Stereotype and toxicity assessment.

Do the model's answers associate groups with stereotyped words, or turn toxic?

1. **responses**: ``count`` generations per prompt from the model under test (cached in DuckDB
   like every LLM call), or a responses file you bring (``stereotype.responses_path``);
2. **score** each distinct response once: toxicity (alt-profanity-check by default, weak; or any
   Hugging Face classifier) and stereotype (when a classifier is configured);
3. **metrics**: co-occurrence bias (COBS), stereotypical associations, demographic representation,
   toxicity and stereotype-classifier metrics per prompt, HONEST with a lexicon you supply; word-
   and prompt-level values go to the ``metric_items`` table.

Run it with ``equilens run configs/stereotype.yaml``.
"""

from __future__ import annotations

import sys

from equilens.flows.assessment_run import assessment_run
from equilens.tasks import validation
from equilens.tasks.assessments.stereotype import stages as stereotype_stage
from equilens.tasks.assessments.stereotype.config import StereotypeRunConfig
from equilens.tasks.assessments.stereotype.stages import (
    score_classifiers_task,
    stereotype_data_fingerprint,
    stereotype_metrics_task,
)
from equilens.tasks.orchestration.execution import run_heavy
from equilens.tasks.orchestration.outage import check_llm_failures
from equilens.tasks.orchestration.run_record import response_counts
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline.answers import RESPONSE_COLUMNS
from equilens.tasks.pipeline.prefect_tasks import answer_variants, load_prompts_task
from equilens.tasks.storage.fingerprint import path_fingerprint
from prefect import flow


@flow(name="stereotype-assessment", validate_parameters=True)
def stereotype_assessment(config: StereotypeRunConfig) -> RunResult:
    """Stereotype and toxicity of an LLM's responses (see the module docstring)."""
    with assessment_run(config, "stereotype_assessment") as run:
        log, rec, summary, code = run.log, run.rec, run.summary, run.code
        scfg = config.stereotype
        with rec.stage("responses"):
            if scfg.responses_path:
                responses = stereotype_stage.load_byo_responses(scfg, config.prompts)
                rec.save("prompts", responses.drop_duplicates("prompt_id")[["prompt_id", "prompt"]]
                         .rename(columns={"prompt": "text"}))
                summary["source"] = scfg.responses_path
            else:
                prompts = load_prompts_task(config.prompts, code + path_fingerprint(config.prompts.path))
                if config.validation.enabled:
                    rec.gate(validation.validate_prompts(prompts))
                rec.save("prompts", prompts[["prompt_id", "text"]])
                variants = stereotype_stage.prompt_frame_for_generation(prompts)
                responses = answer_variants(config.execution, variants, config.llm,
                                      config.storage.duckdb_path, config.storage.lock_timeout)
                summary["source"] = f"{config.llm.provider}:{config.llm.model}"
            keep = [c for c in RESPONSE_COLUMNS if c in responses.columns]  # a brought file's own columns left out
            rec.save("responses", responses[keep])
            if config.validation.enabled and not scfg.responses_path:
                rec.gate(validation.validate_responses(responses))
        summary["responses"] = response_counts(responses)
        check_llm_failures(config, responses)  # an outage fails the run (exit 4) before any scoring

        with rec.stage("score"):
            texts = sorted(set(responses.loc[responses["ok"], "text"]))
            scores = run_heavy(score_classifiers_task, config.execution, texts, scfg, code + path_fingerprint(scfg.toxicity_model)
                                            + path_fingerprint(scfg.stereotype_model))
            rec.save("scores", scores.scalar)
            if config.validation.enabled:
                rec.gate(validation.validate_scores(scores.scalar, scores.ranges))

        with rec.stage("metrics"):
            metrics, items, skipped = stereotype_metrics_task(
                responses, scores, scfg, config.metrics,
                code + stereotype_data_fingerprint(scfg.cobs_targets, scfg.honest_lexicon))
            rec.save_metrics(metrics, config.validation.enabled)
            rec.save("metric_items", items)
        for name, reason in skipped.items():
            log.info("%s skipped: %s", name, reason)
        summary["skipped"] = skipped
        summary["caveats"] = scores.caveats
        run.close(metrics, responses)
    return run.result()



if __name__ == "__main__":  # python flows/stereotype.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(stereotype_assessment, "stereotype"))
