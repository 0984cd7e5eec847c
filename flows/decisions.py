"""Decisions about people (discrim-eval): does the model say yes less often to some people?

Teams that put a model in front of lending, hiring, housing, triage or benefits decisions ask it
yes/no questions about a person. After Tamkin et al. (2023), this flow asks each decision about
people of every age, gender and race, and separates the effect of who the person is from the
variation between decisions:

1. **load decisions**: a discrim-eval JSONL file (``decisions.path``: the shipped 24-scenario set
   or a downloaded discrim-eval file, run as it is), the configured fill types and scenarios
   (:mod:`equilens.tasks.assessments.decisions.decision_sets`);
2. **ask**: each decision ``llm.count`` times with the first answer token's log-probabilities
   requested, through the cached LLM runner (a killed run resumes without paying twice);
3. **read P(yes)** per decision: from the log-probabilities of yes against no where the endpoint
   gives them (the embedded local model does), else the share of yes among the answers; stored per
   decision in ``decision_answers`` with how it was read;
4. **fit** per fill type and attribute the mixed model ``logit P(yes) ~ group + (1 | scenario)``
   against the baseline group (``decisions.baselines``), and age's slope per decade; every score
   of the run is one Holm family (:mod:`equilens.tasks.assessments.decisions.stages`).

Run it with ``equilens run configs/decisions.yaml`` or ``python -m equilens.flows.decisions CONFIG``.
"""

from __future__ import annotations

import sys

from equilens.flows.assessment_run import assessment_run
from equilens.tasks import validation
from equilens.tasks.assessments.decisions import stages as stage
from equilens.tasks.assessments.decisions.config import DecisionsRunConfig
from equilens.tasks.orchestration.outage import check_llm_failures
from equilens.tasks.orchestration.progress import ProgressReporter
from equilens.tasks.orchestration.run_record import response_counts, skipped_summary
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline import results_frame
from equilens.tasks.pipeline.prefect_tasks import check_variants_budget
from equilens.tasks.reporting.verdict import verdict_lines
from prefect import flow

FLOW_NAME = "decisions-assessment"


@flow(name=FLOW_NAME, log_prints=False, validate_parameters=True)
def decisions_assessment(config: DecisionsRunConfig) -> RunResult:
    """Yes/no decisions about people, discrim-eval style (see the module docstring)."""
    from equilens.tasks.llm.runner import run_requests

    with assessment_run(config, "decisions_assessment") as run:
        log, rec, summary = run.log, run.rec, run.summary
        with rec.stage("load decisions"):
            items = stage.load_items(config.decisions, config.prompts and config.prompts.max_chars)
            rec.save("prompts", items[["item_id", "prompt"]].rename(columns={"item_id": "prompt_id", "prompt": "text"}))
        summary["decisions"] = {"items": int(len(items)), "scenarios": int(items["scenario"].nunique()),
                                "fill_types": sorted(items["fill_type"].unique())}
        log.info("%d decisions from %d scenarios (%s)", len(items), summary["decisions"]["scenarios"],
                 ", ".join(summary["decisions"]["fill_types"]))
        llm = config.decision_llm()
        check_variants_budget(items.rename(columns={"prompt": "text"}), llm)  # before any call
        with rec.stage("answers"), ProgressReporter("Decision calls", unit="call") as progress:
            results = run_requests(stage.requests(items, llm), llm, rec.store, progress=progress)
            responses = results_frame(results, llm)
            rec.save("responses", responses)
            if config.validation.enabled:
                rec.gate(validation.validate_responses(responses))
        summary["responses"] = response_counts(responses)
        check_llm_failures(config, responses)  # an outage fails the run (exit 4), every answer kept
        with rec.stage("read P(yes)"):
            answers = stage.answers_frame(items, results)
            rec.save("decision_answers", answers)
        summary["p_yes"] = stage.read_summary(answers, config.decisions.attributes)
        with rec.stage("metrics"):
            metrics = stage.metric_rows(answers, config.decisions, config.metrics.confidence)
            rec.save_metrics(metrics, config.validation.enabled)
        summary["skipped"] = skipped_summary(metrics)
        summary["verdicts"] = verdict_lines(metrics, config.model_dump(mode="json"))
        run.close(metrics, responses)
    return run.result()


if __name__ == "__main__":  # python flows/decisions.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(decisions_assessment, "decisions"))
