"""Counterfactual fairness assessment, end to end.

Does the model under test answer differently when only the protected group in a prompt changes?

1. **load prompts** from a file or the config (ids are content hashes, stable across runs);
2. **check fairness through unawareness**: which prompts mention gender, race or names at all;
3. **expand** each mentioning prompt into one variant per group (male/female/neutral,
   white/black/asian/hispanic, or custom groups), checking each variant differs only in
   attribute words, and give each variant a same-group control (another term or name of the
   same group, or a neutral edit) whose answers are the similarity noise floor;
4. **call the LLM** ``count`` times per variant, concurrently, with retries; every answer is
   cached in DuckDB as it arrives. With ``execution.stop_when: settled`` the prompts are answered
   in looks, in a stored random order, and steps 5-6 run after each look until the verdict is
   settled (:mod:`equilens.flows.running.looks`);
5. **score** each distinct response once (VADER sentiment, MiniLM embeddings);
6. **metrics** for every pair of groups, with cluster-bootstrap intervals, into DuckDB.

great-expectations suites run between the stages; a failed suite stops the run with a summary.
Run it with ``equilens run configs/demo.yaml`` or ``python -m equilens.flows.counterfactual CONFIG``.
"""

from __future__ import annotations

import sys

from equilens.flows.assessment_run import assessment_run
from equilens.flows.running.artifacts import closing_columns
from equilens.flows.running.looks import Looks
from equilens.tasks.assessments.counterfactual.config import CounterfactualRunConfig
from equilens.tasks.assessments.counterfactual.stages import counterfactual_metrics, metric_inputs, variants_stage
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline.prefect_tasks import load_prompts_stage, score_stage
from equilens.tasks.storage.fingerprint import lexicon_fingerprint
from prefect import flow

FLOW_NAME = "counterfactual-assessment"


@flow(name=FLOW_NAME, log_prints=False, validate_parameters=True)
def counterfactual_assessment(config: CounterfactualRunConfig) -> RunResult:
    """Counterfactual fairness of an LLM across protected groups (see the module docstring)."""
    with assessment_run(config, "counterfactual_assessment") as run:
        log, rec, summary, code = run.log, run.rec, run.summary, run.code
        prompts = load_prompts_stage(rec, config, code)

        lex_fp = code + lexicon_fingerprint(config.counterfactual.lexicon_dir)
        ftu, variants = variants_stage(rec, config, prompts, lex_fp, summary)
        if variants.empty:
            log.warning("No prompt mentions a protected attribute: nothing to compare. %s", ftu.summary)
            summary["metrics"] = []
            return run.result()

        looks = Looks.start(run, config, variants)  # one look of every prompt unless stop_when
        for batch in looks.batches():
            responses = looks.answer(rec, config, variants, batch, summary)
            if looks.rule is None:
                del variants  # stored; the answers carry what the later stages read (at 100,000 prompts, ~0.7 GB)
            scores = score_stage(rec, config, responses, code, save=looks.rule is None)
            with rec.stage("metrics"):
                inputs = metric_inputs(responses, scores)  # each attribute's answers, numbered, and their scores
                if looks.rule is None:
                    responses, scores = closing_columns(responses), None  # the texts live on in the inputs alone
                metrics = counterfactual_metrics(inputs, config.counterfactual, config.metrics, lex_fp,
                                                 config.execution)  # neutralisation reads the lexicons
                metrics = looks.judge(metrics, len(responses))
        looks.finish(rec, scores, summary)
        if looks.rule is not None:  # the answers of the look that stopped the run, as the close reads them
            responses = closing_columns(responses)
        rec.save_metrics(metrics, config.validation.enabled)
        run.close(metrics, responses)
    return run.result()



if __name__ == "__main__":  # python flows/counterfactual.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(counterfactual_assessment, "counterfactual"))
