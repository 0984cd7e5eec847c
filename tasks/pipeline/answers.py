"""Variants to answers: the LLM requests of a variant table, and the answers as a DataFrame with
their cost."""

from __future__ import annotations

import json

import pandas as pd
from equilens.tasks.config import LLMConfig
from equilens.tasks.inputs.controls import VARIANT
from equilens.tasks.llm.base import ANSWER_CUT, LLMRequest, LLMResult, cache_key


def build_requests(variants: pd.DataFrame, cfg: LLMConfig) -> list[LLMRequest]:
    """``cfg.count`` calls per variant; a variant with a ``system`` text (an identity profile) sends it
    as that call's system message, one with ``user_fields`` (JSON) gives the application those fields."""
    reqs = []
    for row in variants.itertuples(index=False):
        system = getattr(row, "system", None)
        system = system if isinstance(system, str) else None
        user = user_of(getattr(row, "user_fields", None))
        for i in range(cfg.count):
            reqs.append(
                LLMRequest(
                    prompt=row.text,
                    sample_idx=i,
                    cache_key=cache_key(cfg, row.text, i, system, user),
                    meta={"variant_id": row.variant_id, "prompt_id": row.prompt_id,
                          "attribute": row.attribute, "grp": row.grp, "role": getattr(row, "role", VARIANT)},
                    system=system,
                    user=user,
                )
            )
    return reqs


def user_of(fields: object) -> tuple[tuple[str, str], ...] | None:
    """A variant's ``user_fields`` JSON as the request's ``user`` pairs, in key order."""
    if not isinstance(fields, str) or not fields:
        return None
    return tuple(sorted((str(k), str(v)) for k, v in json.loads(fields).items()))


RESPONSE_COLUMNS = [
    "variant_id", "prompt_id", "attribute", "grp", "role", "sample_idx", "text", "ok", "refusal",
    "error_class", "error_message", "attempts", "latency_s", "prompt_tokens", "completion_tokens",
    "cached", "cache_key", "cost", "truncated", "first_token_s", "turns",
]


def call_cost(cfg: LLMConfig, prompt_tokens: int | None, completion_tokens: int | None, cached: bool) -> float | None:
    """Money paid for one call from the config's price table; cache hits cost nothing."""
    if cfg.price_input_per_1k is None and cfg.price_output_per_1k is None:
        return None
    if cached:
        return 0.0
    return ((prompt_tokens or 0) * (cfg.price_input_per_1k or 0.0)
            + (completion_tokens or 0) * (cfg.price_output_per_1k or 0.0)) / 1000


def results_frame(results: list[LLMResult], cfg: LLMConfig | None = None) -> pd.DataFrame:
    meta = [r.request.meta for r in results]
    columns: dict[str, list] = {name: [m.get(name) for m in meta] for name in RESPONSE_COLUMNS[:5]}
    columns.update(
        sample_idx=[r.request.sample_idx for r in results], text=[r.text for r in results],
        ok=[r.ok for r in results], refusal=[r.refusal for r in results],
        error_class=[r.error_class for r in results], error_message=[r.error_message for r in results],
        attempts=[r.attempts for r in results], latency_s=[r.latency_s for r in results],
        prompt_tokens=[r.prompt_tokens for r in results], completion_tokens=[r.completion_tokens for r in results],
        cached=[r.cached for r in results], cache_key=[r.request.cache_key for r in results],
        cost=[call_cost(cfg, r.prompt_tokens, r.completion_tokens, r.cached) if cfg else None for r in results],
        # cut at llm.max_answer_chars: flagged on the result, and in its message (which also crosses processes)
        truncated=[r.truncated or (r.error_message or "").startswith(ANSWER_CUT) for r in results],
        first_token_s=[r.first_token_s for r in results],
        turns=[None if r.turns is None else json.dumps(r.turns, ensure_ascii=False) for r in results],
    )
    frame = pd.DataFrame(columns, columns=RESPONSE_COLUMNS)  # a list per column, not a dict per row
    return frame.astype({"prompt_tokens": "Int64", "completion_tokens": "Int64", "attempts": "Int64"})
