"""Bias tests on a language model's own likelihoods (BiasTestGPT, CrowS-Pairs, WEAT/SEAT).

1. **specification**: named biases, each two social groups and two attribute lists (JSON);
2. **test sentences**: the configured LLM writes sentences for group/attribute term pairs (cached
   like every LLM call), or a reviewed CSV is fed back; kept and discarded sentences go to DuckDB
   (``bias_sentences``) and to ``RUN_ID_sentences.csv`` with ``discarded`` / ``reason`` columns a
   person can edit and pass back as ``bias_test.reviewed_csv``;
3. **pairs**: each sentence becomes a template with a group placeholder, then a stereotype /
   anti-stereotype pair;
4. **Stereotype Score** (Nadeem et al. 2020) of the tested model per bias, with a Wilson interval,
   subsample-round std and tests against 0.5; the seed's JSON export goes to ``RUN_ID_stereotype_score.json``;
5. for a masked tested model, **LPBS** and **CBS** (Kurita et al. 2019; Ahn & Oh 2021) from the
   probability of each group term at a [MASK] in the spec's templates against its prior with the
   attribute masked too, and the **AUL pair score** on the stereotype pairs; a causal model gets
   them recorded as skipped, with the reason;
6. optionally **CrowS-Pairs** per bias category, and **WEAT/SEAT** on the spec's terms.

``metrics.names`` picks which of these run (default: all). great-expectations gates check the
sentences (before scoring) and the scored pairs (before any metric is stored).

Run it with ``equilens run configs/bias_test.yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
from equilens.flows.assessment_run import assessment_run
from equilens.tasks import validation
from equilens.tasks.assessments.bias_test import stages as stage
from equilens.tasks.assessments.bias_test.bias_specs import load_bias_specs
from equilens.tasks.assessments.bias_test.config import BiasTestRunConfig
from equilens.tasks.assessments.bias_test.embedding_metrics import TERM_SETS
from equilens.tasks.assessments.bias_test.generation import export_csv, import_csv
from equilens.tasks.assessments.bias_test.probability_metrics import (
    CROWS_PAIRS,
    GENERATED_PAIRS,
    MASKED_AUL,
    NEEDS_MASKED_LM,
    NEEDS_TESTED_MODEL,
)
from equilens.tasks.assessments.bias_test.stages import generate_task, scorer_task
from equilens.tasks.assessments.bias_test.stereotype_score import export_json
from equilens.tasks.assessments.bias_test.templates import build_pairs
from equilens.tasks.metrics import wanted_metrics
from equilens.tasks.metrics.base import with_inputs
from equilens.tasks.orchestration.summary import RunResult
from prefect import flow


@flow(name="bias-test", validate_parameters=True)
def bias_test(config: BiasTestRunConfig) -> RunResult:
    """Stereotype Score, CrowS-Pairs, WEAT/SEAT, LPBS/CBS/AUL of a language model (module docstring)."""
    with assessment_run(config, "bias_test") as run:
        log, rec, summary = run.log, run.rec, run.summary
        bt = config.bias_test
        out_dir = Path(config.storage.reports_dir or "data/runs")
        metrics: list[dict[str, Any]] = []
        items: list[dict[str, Any]] = []
        wanted = wanted_metrics(config.metrics.names, "probability", "embedding")
        specs = load_bias_specs(bt.spec_path)
        with rec.stage("sentences"):
            if bt.reviewed_csv:
                rows = import_csv(bt.reviewed_csv)
            else:
                requests = stage.generation_requests(specs, bt)
                outputs = generate_task([r.prompt for r in requests], config)
                rows = stage.clean_generations(requests, outputs, specs)
            sentences = stage.sentences_frame(rows)
            if config.validation.enabled:
                rec.gate(validation.validate_bias_sentences(sentences))
            rec.save("bias_sentences", sentences)
            csv_path = export_csv(rows, out_dir / f"{run.run_id}_sentences.csv")
        kept = int((~sentences["discarded"]).sum()) if len(sentences) else 0
        summary["sentences"] = {"total": len(sentences), "kept": kept, "csv": str(csv_path)}
        log.info("%d of %d generated sentences kept; review them in %s", kept, len(sentences), csv_path)

        scorer = scorer_task(config) if with_inputs(wanted, *NEEDS_TESTED_MODEL) else None
        pairs = build_pairs(rows, specs)
        if with_inputs(wanted, GENERATED_PAIRS):
            with rec.stage("stereotype_score"):
                pairs, results, rows_m, rows_i, report = stage.stereotype_scores(
                    rows, specs, scorer.sentence_logprobs, bt, config.metrics, bt.tested_model, wanted)
                metrics += rows_m
                items += rows_i
                scored = stage.pairs_frame(pairs, results)
                if config.validation.enabled:
                    rec.gate(validation.validate_bias_pairs(scored))
                rec.save("bias_pairs", scored)
                summary["stereotype_score_json"] = str(export_json(report, out_dir / f"{run.run_id}_stereotype_score.json"))
            if not results:
                summary.setdefault("skipped", {}).update(dict.fromkeys(
                    with_inputs(wanted, GENERATED_PAIRS),
                    "no usable test sentence survived generation and templating; see the sentences CSV"))

        if scorer is not None and with_inputs(wanted, *NEEDS_MASKED_LM):
            with rec.stage("masked_lm"):
                if scorer.kind != "masked":
                    metrics += stage.masked_lm_skips(specs, scorer.kind, bt.tested_model, wanted)
                else:
                    metrics += stage.probability_metrics(specs, scorer.target_logprobs, config.metrics, wanted,
                                                         bt.tested_model)
                    if with_inputs(wanted, MASKED_AUL):
                        metrics += stage.aul_metrics(pairs, scorer.aul, config.metrics, bt.tested_model, wanted)

        if bt.crows_pairs and with_inputs(wanted, CROWS_PAIRS):
            with rec.stage("crows_pairs"):
                metrics += stage.crows_pairs_metrics(scorer, bt, config.metrics, wanted)
        if bt.weat and with_inputs(wanted, TERM_SETS):
            with rec.stage("weat"):
                metrics += stage.weat_metrics(specs, config.scoring.embedding_model, config.metrics, wanted)

        skipped = {f"{m['metric']}[{m['attribute']}]": m["details"]["skipped"] for m in metrics
                   if m["value"] is None and "skipped" in m["details"]}
        if skipped:
            summary.setdefault("skipped", {}).update(skipped)
        frame = pd.DataFrame(metrics)
        rec.save("metric_items", pd.DataFrame(items))
        rec.save_metrics(frame, config.validation.enabled)
        run.close(frame)
    return run.result()


if __name__ == "__main__":  # python flows/bias_tests.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]
    from equilens.flows.running.launch import run_flow_script

    sys.exit(run_flow_script(bias_test, "bias_test"))
