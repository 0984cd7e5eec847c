"""Bias tests on a language model's own likelihoods (BiasTestGPT, CrowS-Pairs, WEAT/SEAT).

1. **specification**: named biases, each two social groups and two attribute lists (JSON);
2. **test sentences**: the configured LLM writes sentences for group/attribute term pairs (cached
   like every LLM call), or a reviewed CSV is fed back; kept and discarded sentences go to DuckDB
   (``bias_sentences``) and to ``RUN_ID_sentences.csv`` with ``discarded`` / ``reason`` columns a
   person can edit and pass back as ``bias_test.reviewed_csv``;
3. **pairs**: each sentence becomes a template with a group placeholder, then a stereotype /
   anti-stereotype pair;
4. **Stereotype Score** (Nadeem et al. 2020) of the tested model per bias, with a Wilson interval,
   bootstrap std and tests against 0.5; the seed's JSON export goes to ``RUN_ID_stereotype_score.json``;
5. optionally **CrowS-Pairs** per bias category, and **WEAT/SEAT** on the spec's terms.

Run it with ``equilens run configs/bias_test.yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
from prefect import flow, get_run_logger, task

from flows.common import begin_run, close_run, recorded_run, run_result
from tasks import bias_test_stage as stage
from tasks.biastest.generation import export_csv, import_csv
from tasks.biastest.spec import load_bias_specs
from tasks.biastest.stereotype_score import export_json
from tasks.config import RunConfig
from tasks.llm.base import LLMRequest, cache_key
from tasks.llm.runner import run_requests
from tasks.store import Store


@task(name="generate-test-sentences")
def generate_task(prompts: list[str], config: RunConfig) -> list[str | None]:
    from tasks.progress import ProgressReporter

    reqs = [LLMRequest(p, 0, cache_key(config.llm, p, 0)) for p in prompts]
    with ProgressReporter("Generating test sentences", unit="call") as progress:
        results = run_requests(reqs, config.llm, Store(config.storage.duckdb_path, config.storage.lock_timeout),
                               progress=progress)
    return [r.text if r.ok else None for r in results]


@task(name="load-tested-model")
def scorer_task(config: RunConfig) -> Any:
    from tasks.lm_likelihood import LanguageModelScorer

    bt = config.bias_test
    return LanguageModelScorer(bt.tested_model, kind=bt.tested_model_kind, batch_size=bt.batch_size)


@flow(name="bias-test", validate_parameters=True)
def bias_test(config: RunConfig) -> dict[str, Any]:
    """Stereotype Score, CrowS-Pairs and WEAT/SEAT of a language model (see the module docstring)."""
    log = get_run_logger()
    run_id, store, rec = begin_run(config, "bias_test")
    bt = config.bias_test
    out_dir = Path(config.storage.reports_dir or "data/runs")
    metrics: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []

    with recorded_run(rec) as summary:
        specs = load_bias_specs(bt.spec_path)
        with rec.stage("sentences"):
            if bt.reviewed_csv:
                rows = import_csv(bt.reviewed_csv)
            else:
                requests = stage.generation_requests(specs, bt)
                outputs = generate_task([r.prompt for r in requests], config)
                rows = stage.clean_generations(requests, outputs, specs)
            sentences = stage.sentences_frame(rows)
            rec.save("bias_sentences", sentences)
            csv_path = export_csv(rows, out_dir / f"{run_id}_sentences.csv")
        kept = int((~sentences["discarded"]).sum()) if len(sentences) else 0
        summary["sentences"] = {"total": len(sentences), "kept": kept, "csv": str(csv_path)}
        log.info("%d of %d generated sentences kept; review them in %s", kept, len(sentences), csv_path)

        with rec.stage("stereotype_score"):
            scorer = scorer_task(config)
            pairs, results, rows_m, rows_i, report = stage.stereotype_scores(
                rows, specs, scorer.sentence_logprobs, bt, config.metrics, bt.tested_model)
            metrics += rows_m
            items += rows_i
            rec.save("bias_pairs", stage.pairs_frame(pairs, results))
            summary["stereotype_score_json"] = str(export_json(report, out_dir / f"{run_id}_stereotype_score.json"))
        if not results:
            summary.setdefault("skipped", {})["stereotype_score"] = (
                "no usable test sentence survived generation and templating; see the sentences CSV")

        if bt.crows_pairs:
            with rec.stage("crows_pairs"):
                metrics += stage.crows_pairs_metrics(scorer, bt, config.metrics)
        if bt.weat:
            with rec.stage("weat"):
                metrics += stage.weat_metrics(specs, config.scoring.embedding_model, config.metrics)

        frame = pd.DataFrame(metrics)
        rec.save("metrics", frame)
        rec.save("metric_items", pd.DataFrame(items))
        close_run(store, run_id, config, summary, frame, pd.DataFrame())
    return run_result(store, run_id, config, summary)


if __name__ == "__main__":
    from flows.cli import main

    sys.exit(main(["run", *sys.argv[1:]]))
