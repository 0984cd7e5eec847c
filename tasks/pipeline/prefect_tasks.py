"""Thin Prefect task wrappers around the stage functions.

Cached stages use ``INPUTS + TASK_SOURCE`` with explicit fingerprints of the code and files they
read (see :mod:`equilens.tasks.storage.fingerprint`); their inputs are configs, DataFrames and strings, all hashable
by Prefect. The two stages fed the run's answers (scoring and metrics) leave those inputs out of the
key and take a content digest of them instead (their ``digest`` parameter): hashing them through
``INPUTS`` would pickle every answer, gigabytes at 100k prompts. The LLM stage is not
Prefect-cached: its cache is the DuckDB response cache, which also survives a killed run. No cached
task writes to DuckDB.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from equilens.tasks import pipeline as assessment
from equilens.tasks import validation
from equilens.tasks.config import (
    ExecutionConfig,
    LLMConfig,
    MetricsConfig,
    PromptsConfig,
    RunConfig,
    ScoringConfig,
)
from equilens.tasks.inputs.prompts import load_prompts
from equilens.tasks.llm.base import LLMRequest, LLMResult
from equilens.tasks.llm.runner import run_requests
from equilens.tasks.orchestration.caching import cached
from equilens.tasks.orchestration.execution import run_heavy, run_sharded
from equilens.tasks.orchestration.outage import check_llm_failures
from equilens.tasks.orchestration.run_record import RunRecorder, response_counts
from equilens.tasks.storage.fingerprint import path_fingerprint, texts_digest
from equilens.tasks.storage.store import Store
from prefect import task
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE

CACHED = cached(INPUTS + TASK_SOURCE)


@task(name="load-prompts", **CACHED)
def load_prompts_task(cfg: PromptsConfig, fingerprint: str) -> pd.DataFrame:
    return load_prompts(cfg)


def planned_requests(variants: pd.DataFrame, cfg: LLMConfig):  # noqa: ANN201 - tasks.llm.context.ContextCheck
    """The variants' LLM requests, checked against the run's budget and fitted to a local model's
    context (prompts past it are refused or truncated)."""
    from equilens.tasks.llm.context import fit_to_context

    check_variants_budget(variants, cfg)
    return fit_to_context(assessment.build_requests(variants, cfg), cfg)


def prompt_shards(prompt_ids: list, size: int) -> list[list[int]]:
    """Positions of ``prompt_ids`` in shards of ``size`` prompts (in order of first appearance), so a
    prompt's items stay in one shard."""
    by_prompt: dict[str, list[int]] = {}
    for i, prompt in enumerate(prompt_ids):
        by_prompt.setdefault(str(prompt), []).append(i)
    groups = list(by_prompt.values())
    return [[i for group in groups[k:k + size] for i in group] for k in range(0, len(groups), size)]


LLM_CHUNK_CALLS = 50_000
"""The local LLM stage builds, calls and tabulates its requests this many at a time (whole prompts),
so the request and result objects of a 100,000-prompt run are never all in memory at once; a chunk
is long enough that the connection pool's drain at its end costs well under 1% of the stage."""


def variants_calls(variants: pd.DataFrame, cfg: LLMConfig) -> tuple[int, float]:
    """(calls, prompt tokens) of every call the variants ask for: ``cfg.count`` per variant, each
    with its own system message (a ``system`` column) or the configured one."""
    from equilens.tasks.llm.budget import prompt_tokens_of

    systems = [s if isinstance(s, str) else None for s in variants["system"]] if "system" in variants \
        else [None] * len(variants)
    return len(variants) * cfg.count, prompt_tokens_of(variants["text"], systems, cfg) * cfg.count


def check_variants_budget(variants: pd.DataFrame, cfg: LLMConfig) -> None:
    """The run's budget check over every call the variants ask for (:func:`variants_calls`), before
    any request is built."""
    from equilens.tasks.llm.budget import check_budget

    check_budget(cfg, *variants_calls(variants, cfg))


@task(name="call-llm", cache_policy=NO_CACHE, persist_result=False)
def call_llm_task(variants: pd.DataFrame, cfg: LLMConfig, duckdb_path: str, lock_timeout: float) -> pd.DataFrame:
    """Every variant answered ``cfg.count`` times, each answer written to the response cache as it
    arrives; in chunks of whole prompts (:data:`LLM_CHUNK_CALLS` calls) built, called and tabulated
    one after the other."""
    from equilens.tasks.llm.context import fit_to_context
    from equilens.tasks.orchestration.progress import ProgressReporter

    check_variants_budget(variants, cfg)
    per_prompt = max(1, len(variants) * cfg.count // max(1, variants["prompt_id"].nunique()))
    store, frames, before, total = Store(Path(duckdb_path), lock_timeout), [], 0, len(variants) * cfg.count
    with ProgressReporter(*progress_unit(variants)) as progress:
        for chunk in prompt_shards(variants["prompt_id"].tolist(), max(1, LLM_CHUNK_CALLS // per_prompt)):
            requests = assessment.build_requests(variants.iloc[chunk], cfg)
            fit = fit_to_context(requests, cfg)  # the budget was checked for all chunks above
            results = fit.merge(run_requests(fit.requests, cfg, store,
                                             progress=lambda done, _, at=before: progress(at + done, total)))
            frames.append(assessment.results_frame(results, cfg))
            before += len(requests)  # cached and refused requests count as done with their chunk
            progress(before, total)
    return pd.concat(frames, ignore_index=True) if frames else assessment.results_frame([], cfg)


def progress_unit(variants: pd.DataFrame) -> tuple[str, str]:
    """What the LLM stage's progress counts: a call, or a conversation (all its turns' calls) where a
    variant is one."""
    from equilens.tasks.turns import TURN_MARK

    told = variants["text"].astype(str).str.contains(TURN_MARK, regex=False) if "text" in variants else None
    if told is None or not told.any():
        return "LLM calls", "call"
    return ("conversations", "conversation") if told.all() else ("LLM calls and conversations", "call")


@task(name="call-llm-shard", cache_policy=NO_CACHE, persist_result=False)
def call_llm_shard_task(requests: list[LLMRequest], cfg: LLMConfig) -> list[LLMResult]:
    """One shard of the LLM stage, on any worker: calls only. It never opens DuckDB; the flow looked
    up the cached answers before and writes this shard's answers when it returns."""
    return run_requests(requests, cfg, store=None)


SHARD_POLL_S = 0.1  # how often the wait for the LLM stage's shards looks for a stop request


def answer_variants(execution: ExecutionConfig, variants: pd.DataFrame, cfg: LLMConfig, duckdb_path: str,
                    lock_timeout: float) -> pd.DataFrame:
    """The LLM stage on the run's task runner. With threads: one task that writes each answer to the
    response cache as it arrives. On Dask: shards of ``execution.shard_size`` prompts, each one task
    on any worker; the response cache is read before and written as each shard returns, here only,
    so a killed run loses at most the shards in flight and a re-run calls only what is missing."""
    if execution.task_runner != "dask":
        return run_heavy(call_llm_task, execution, variants, cfg, duckdb_path, lock_timeout)
    from equilens.tasks.llm.answer_cache import CacheWriter, cached_results, in_order, missing, report_cached
    from equilens.tasks.llm.stop import raise_if_stopped, signals_as_stop_requests
    from equilens.tasks.orchestration.execution import gpu_annotation
    from equilens.tasks.orchestration.progress import ProgressReporter
    from prefect.futures import wait

    fit = planned_requests(variants, cfg)
    store = Store(Path(duckdb_path), lock_timeout)
    done = cached_results(fit.requests, store)
    report_cached(fit.requests, done, cfg)
    todo = missing(fit.requests, done)
    shards = [[todo[i] for i in shard]
              for shard in prompt_shards([r.meta.get("prompt_id") for r in todo], execution.shard_size)]
    writer = CacheWriter(store, cfg, interval=0.0)
    with gpu_annotation(execution):  # a shard on a worker that dies is run again by Dask on another
        futures = [call_llm_shard_task.submit(shard, cfg) for shard in shards]
    # a signal only requests the stop while the flow waits: raised inside the wait's lock, it broke the lock
    with ProgressReporter(*progress_unit(variants)) as progress, signals_as_stop_requests():
        answered, total, pending = 0, sum(map(len, shards)), futures
        while pending:
            raise_if_stopped("between LLM shards")  # Ctrl-C / SIGTERM: the finished shards are stored
            finished, waiting = wait(pending, timeout=SHARD_POLL_S)
            pending = list(waiting)
            for future in finished:
                results = future.result()
                for res in results:
                    done[res.request.cache_key] = res
                    writer.add(res)
                writer.flush()  # this shard's answers are safe before the next one is awaited
                answered += len(results)
                progress(answered, total)
    return assessment.results_frame(fit.merge(in_order(fit.requests, done)), cfg)


@task(name="score-responses", **cached((INPUTS - "texts") + TASK_SOURCE))
def score_task(texts: list[str], cfg: ScoringConfig, fingerprint: str, digest: str,
               embeddings: bool) -> assessment.ScoreSet:
    from equilens.tasks.orchestration.progress import ProgressReporter

    with ProgressReporter("Scoring", unit="scorer") as progress:
        return assessment.score_texts(texts, cfg, progress, embeddings=embeddings)


def score_answers(responses: pd.DataFrame, scoring: ScoringConfig, mcfg: MetricsConfig,
                  execution: ExecutionConfig, code: str) -> assessment.ScoreSet:
    """Score each distinct answered text once (embeddings only when a metric reads them), in shards
    of ``execution.shard_size`` prompts, each one task on the task runner and cached on its own."""
    answered = responses.loc[responses["ok"], ["prompt_id", "text"]]
    texts = answered["text"].tolist()
    shards = [sorted({texts[i] for i in shard})
              for shard in prompt_shards(answered["prompt_id"].tolist(), execution.shard_size)] or [[]]
    embeddings = assessment.needs_embeddings(mcfg.names)
    parts = run_sharded(score_task, execution, [(texts, scoring, code, texts_digest(texts), embeddings)
                                                for texts in shards])
    return assessment.ScoreSet.joined(parts)


# --- stages shared by the flows that load prompts, call the LLM on variants and score the answers -----
def load_prompts_stage(rec: RunRecorder, config: RunConfig, code: str) -> pd.DataFrame:
    """The ``load_prompts`` stage: the cached loader, then the prompts suite (when validation is on)."""
    with rec.stage("load_prompts"):
        prompts = load_prompts_task(config.prompts, code + path_fingerprint(config.prompts.path))
        if config.validation.enabled:
            rec.gate(validation.validate_prompts(prompts))
    return prompts


STORED_ONLY = ("cache_key",)
"""Response columns stored with the answers that no later stage of a counterfactual or identity run
reads: the frame the run carries on drops them (the cache keys of 100,000 prompts' answers: 89 MB)."""


def answer_stage(rec: RunRecorder, config: RunConfig, variants: pd.DataFrame, summary: dict,
                 brought: pd.DataFrame | None = None, keep_keys: bool = False) -> pd.DataFrame:
    """The ``llm`` stage: every variant answered and stored (with ``brought`` answers, read from a
    file, added), the responses suite, the counts in the summary; an outage fails the run (exit 4)
    before any scoring. The answers come back without the columns only the store needs
    (:data:`STORED_ONLY`) unless ``keep_keys``."""
    with rec.stage("llm"):
        responses = answer_variants(config.execution, variants, config.llm, config.storage.duckdb_path,
                                    config.storage.lock_timeout)
        if brought is not None:
            responses = pd.concat([responses, brought[[c for c in responses.columns if c in brought]]],
                                  ignore_index=True)
        rec.save("responses", responses)
        if config.validation.enabled:
            rec.gate(validation.validate_responses(responses))
    summary["responses"] = response_counts(responses)
    check_llm_failures(config, responses)
    return responses if keep_keys else responses.drop(columns=[c for c in STORED_ONLY if c in responses])


def score_stage(rec: RunRecorder, config: RunConfig, responses: pd.DataFrame, code: str,
                save: bool = True) -> assessment.ScoreSet:
    """The ``score`` stage: each distinct answer scored once, stored (unless ``save`` is off: a look
    of a run that stops when settled stores the scores of its last look), and the scores suite."""
    with rec.stage("score"):
        scores = score_answers(responses, config.scoring, config.metrics, config.execution, code)
        if save:
            rec.save("scores", scores.scalar)
        if config.validation.enabled:
            rec.gate(validation.validate_scores(scores.scalar, scores.ranges))
    return scores
