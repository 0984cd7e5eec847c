"""The counterfactual assessment's own stages: which prompts mention a group (FTU) and their
counterfactual variants, then the counterfactual metric stage, one task per attribute. Each Prefect
task sits beside the stage it wraps; the auto assessment runs the same stages on its prompts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import pandas as pd
from equilens.tasks import pipeline as assessment
from equilens.tasks import validation
from equilens.tasks.config import CounterfactualConfig, ExecutionConfig, MetricsConfig, RunConfig
from equilens.tasks.orchestration.caching import cached
from equilens.tasks.orchestration.execution import run_sharded
from equilens.tasks.orchestration.memory import memory_handed_back
from equilens.tasks.orchestration.run_record import RunRecorder
from equilens.tasks.pipeline.metric_stage import metric_stage
from equilens.tasks.pipeline.prefect_tasks import CACHED
from equilens.tasks.storage.fingerprint import frame_digest, texts_digest
from prefect import task
from prefect.cache_policies import INPUTS, TASK_SOURCE


@task(name="check-ftu", **CACHED)
def check_ftu_task(prompts: pd.DataFrame, cfg: CounterfactualConfig, fingerprint: str) -> assessment.FTUReport:
    return assessment.check_ftu_stage(prompts, cfg)


@task(name="expand-counterfactuals", **CACHED)
def expand_task(prompts: pd.DataFrame, cfg: CounterfactualConfig, fingerprint: str) -> pd.DataFrame:
    return assessment.expand_stage(prompts, cfg)


def variants_stage(rec: RunRecorder, config: RunConfig, prompts: pd.DataFrame, lex_fp: str,
                   summary: dict) -> tuple[Any, pd.DataFrame]:
    """The ``ftu`` and ``expand`` stages: which prompts mention a group (stored with the prompts), and
    the valid counterfactual variants of those that do, with their controls (all variants stored,
    the variants suite); the FTU report and the variants kept."""
    from equilens.tasks.inputs.controls import CONTROL
    from equilens.tasks.inputs.variant_validation import drop_invalid_sets, lost_contexts, lost_lines
    from prefect import get_run_logger

    log = get_run_logger()
    with rec.stage("ftu"):
        ftu = check_ftu_task(prompts, config.counterfactual, lex_fp)
        rec.save("prompts", prompts[["prompt_id", "text"]].assign(mentions=ftu.mentions))
    summary["ftu"] = {"holds": ftu.holds, "counts": ftu.counts, "prompts": ftu.prompts_total}
    log.info(ftu.summary)
    with rec.stage("expand"):
        variants = expand_task(prompts, config.counterfactual, lex_fp)
        rec.save("variants", variants)
        lost = lost_contexts(variants)
        variants, dropped = drop_invalid_sets(variants)
        for line in lost_lines(lost):
            log.warning(line)
        controls = variants["role"].eq(CONTROL)
        summary["variants"] = {"total": int((~controls).sum()), "dropped_sets": dropped, "lost": lost,
                               "controls": variants.loc[controls, "control_kind"].value_counts().to_dict()}
        if config.validation.enabled:
            rec.gate(validation.validate_variants(variants))
    return ftu, variants


@task(name="compute-metrics", **cached((INPUTS - "responses" - "texts" - "scores") + TASK_SOURCE))
def metrics_task(
    responses: pd.DataFrame, texts: Any, scores: assessment.ScoreSet, cf_cfg: CounterfactualConfig,
    cfg: MetricsConfig, fingerprint: str, digest: str,
) -> pd.DataFrame:
    return metric_stage(responses, scores, cf_cfg, cfg, texts=texts)


def metric_inputs(responses: pd.DataFrame, scores: assessment.ScoreSet) -> list[tuple]:
    """Each attribute's answers for :func:`counterfactual_metrics`: the columns the metric stage reads,
    numbered (:func:`equilens.tasks.pipeline.pairs.number_answers`), their distinct texts
    and their scores. Built for every attribute at once, so the caller can let the answers' text go
    before the stage runs (at 100,000 prompts the text of 1.3 million answers is 140 MB)."""
    from equilens.tasks.pipeline.metric_stage import RESPONSE_READS
    from equilens.tasks.pipeline.pairs import number_answers

    attributes = sorted(responses["attribute"].dropna().unique()) or [None]
    reads = [c for c in RESPONSE_READS if c in responses]  # what the stage reads is what it is keyed on
    inputs = []
    for attribute in attributes:
        rows = slice(None) if attribute is None else responses["attribute"] == attribute
        part, texts = number_answers(responses.loc[rows, reads])
        inputs.append((part, texts, scores.subset(pd.Series(texts))))
    return inputs


def counterfactual_metrics(inputs: list[tuple], cf_cfg: CounterfactualConfig, mcfg: MetricsConfig,
                           fingerprint: str, execution: ExecutionConfig) -> pd.DataFrame:
    """The metric stage as one task per attribute (``inputs``: :func:`metric_inputs`, taken from the
    list as they are handed out) on the task runner: any worker on Dask, side by side; with threads
    one attribute after the other, each attribute's memory handed back before the next starts.
    Attributes share nothing (each has its own draws, floors and Holm families), so the rows equal
    one pass over all of them. Each task is cached on a digest of its answers, texts and scores (not
    their pickles); the rows come back in attribute order."""

    def shards() -> Iterator[tuple]:
        while inputs:  # with threads, each attribute's memory goes back once it has finished
            with memory_handed_back() if execution.task_runner != "dask" else nullcontext():
                part, texts, own = inputs.pop(0)
                digest = f"{frame_digest(part)}|{texts_digest(texts)}|{own.digest()}"
                yield part, texts, own, cf_cfg, mcfg, fingerprint, digest
                del part, texts, own

    parts = run_sharded(metrics_task, execution, shards(), at_once=execution.task_runner == "dask")
    return pd.concat(parts, ignore_index=True)
