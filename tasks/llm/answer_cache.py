"""The answers a stage already has: the response cache read before the first call and written as
answers arrive (:class:`CacheWriter`), the line that says how many answers come from it, and the
results put back in request order. Shared by the LLM stage (:mod:`equilens.tasks.llm.runner`) and
its conversations (:mod:`equilens.tasks.llm.conversation`)."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm.base import LLMRequest, LLMResult
from equilens.tasks.llm.logprobs import logprobs_problem
from equilens.tasks.storage.store import Store


class CacheWriter:
    """Buffers successful responses and writes them to DuckDB at least every ``interval`` s."""

    def __init__(self, store: Store | None, cfg: LLMConfig, interval: float = 0.5) -> None:
        self.store, self.cfg, self.interval = store, cfg, interval
        self._rows: list[dict] = []
        self._last = time.monotonic()
        self.seen = 0  # results offered so far, failed ones included

    def add(self, res: LLMResult) -> None:
        """Buffer a successful, fresh answer; call :meth:`flush` when :attr:`due`. An answer cut at the
        answer cap, or one with a log-probability that is not one, is not cached: a rerun asks again
        rather than reading it back without its flag."""
        self.seen += 1
        if self.store is None or not res.ok or res.cached or res.truncated or logprobs_problem(res.top_logprobs):
            return
        self._rows.append(
            {
                "cache_key": res.request.cache_key,
                "provider": self.cfg.provider,
                "model": self.cfg.model,
                "text": res.text,
                "refusal": res.refusal,
                "latency_s": res.latency_s,
                "prompt_tokens": res.prompt_tokens,
                "completion_tokens": res.completion_tokens,
                "created_at": datetime.now(timezone.utc).replace(tzinfo=None),
                "top_logprobs": None if res.top_logprobs is None else json.dumps(res.top_logprobs),
                "first_token_s": res.first_token_s,
                "turns": None if (said := turns_said(res)) is None else json.dumps(said, ensure_ascii=False),
            }
        )

    def keep(self, res: LLMResult) -> None:
        """Buffer an answer that is not one of the stage's results (an earlier turn of a conversation)."""
        seen = self.seen
        self.add(res)
        self.seen = seen

    @property
    def due(self) -> bool:
        return bool(self._rows) and (len(self._rows) >= 256 or time.monotonic() - self._last >= self.interval)

    def flush(self) -> None:
        rows, self._rows = self._rows, []
        if self.store is not None and rows:
            self.store.cache_put(rows)
        self._last = time.monotonic()


def turns_said(res: LLMResult) -> list[dict] | None:
    """Every turn of a conversation up to ``res``'s, ``{"turn", "user", "answer"}`` in order (its
    history, then its own turn); None for a single prompt's answer."""
    req = res.request
    if req.history is None:
        return res.turns
    said = said_in(req.history)
    return [*said, {"turn": len(said) + 1, "user": req.prompt, "answer": res.text}]


def said_in(history: Sequence[dict[str, str]]) -> list[dict]:
    """The turns a conversation's history holds, ``{"turn", "user", "answer"}`` in order."""
    h = history
    return [{"turn": i // 2 + 1, "user": h[i]["content"], "answer": h[i + 1]["content"]} for i in range(0, len(h) - 1, 2)]


def cached_results(requests: Sequence[LLMRequest], store: Store | None) -> dict[str, LLMResult]:
    """Cache key -> the cached answer, for the requests the response cache already holds."""
    cached = store.cache_get([r.cache_key for r in requests]) if store is not None else {}
    done: dict[str, LLMResult] = {}
    for req in requests:
        hit = cached.get(req.cache_key)
        if hit is not None and req.cache_key not in done:
            done[req.cache_key] = LLMResult(
                request=req, text=hit["text"], ok=True, refusal=bool(hit["refusal"]), attempts=0,
                latency_s=_num(hit["latency_s"]), prompt_tokens=_int(hit["prompt_tokens"]),
                completion_tokens=_int(hit["completion_tokens"]), cached=True,
                top_logprobs=json.loads(hit["top_logprobs"]) if isinstance(hit.get("top_logprobs"), str) else None,
                first_token_s=_num(hit.get("first_token_s")),
                turns=json.loads(hit["turns"]) if isinstance(hit.get("turns"), str) else None,
            )
    return done


def report_cached(requests: Sequence[LLMRequest], done: dict[str, LLMResult], cfg: LLMConfig,
                  what: str = "answers") -> int:
    """Say before the first call how many of the answers come from the cache and why ("N of M answers
    come from the cache (why: :func:`equilens.tasks.llm.targets.cache_reason`)"), on the console
    (stderr, beside the stage's progress lines) and in the run's log, and count them toward the run's
    summary (:func:`equilens.tasks.llm.reuse.note_cached`); the number of such answers. ``what`` they
    are, where not the requests' own answers (a resumed conversation's earlier turns)."""
    from equilens.tasks.llm.reuse import note_cached
    from equilens.tasks.llm.targets import cache_reason

    cached = sum(1 for r in requests if r.cache_key in done)
    line = note_cached(cfg, cached, len(requests), cache_reason(cfg), what) if cached else None
    if line is not None:
        print(line, file=sys.stderr, flush=True)
        stage_logger().info(line)
    return cached


def stage_logger() -> logging.Logger | logging.LoggerAdapter:
    """The Prefect run logger inside a flow or task run (the run's log in the Prefect UI), else the
    ``equilens`` logger."""
    if "prefect" in sys.modules:
        from prefect import get_run_logger
        from prefect.exceptions import MissingContextError

        try:
            return get_run_logger()
        except MissingContextError:
            pass
    return logging.getLogger("equilens")


def missing(requests: Sequence[LLMRequest], done: dict[str, LLMResult]) -> list[LLMRequest]:
    """The requests still to call, one per cache key, in request order."""
    return list({r.cache_key: r for r in requests if r.cache_key not in done}.values())


def in_order(requests: Sequence[LLMRequest], done: dict[str, LLMResult]) -> list[LLMResult]:
    """One result per request, in request order (requests sharing a cache key share its answer)."""
    out = []
    for req in requests:
        res = done[req.cache_key]
        out.append(res if res.request is req else _rebind(res, req))
    return out


def _rebind(res: LLMResult, req: LLMRequest) -> LLMResult:
    from dataclasses import replace

    return replace(res, request=req)


def _num(v: object) -> float | None:
    return None if v is None or v != v else float(v)  # NaN check


def _int(v: object) -> int | None:
    f = _num(v)
    return None if f is None else int(f)
