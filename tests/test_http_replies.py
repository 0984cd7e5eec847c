"""Hostile replies through ``provider: http``: a gzip bomb costs no more memory than the answer cap
whatever the concurrency, a redirect names where it points, and an over-cap reply keeps its answer
cut and flagged, as the openai provider does."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests

from tests.test_application_http import JsonApi, api  # noqa: F401 - fixture


def _cfg(api: JsonApi, **kw: object) -> LLMConfig:  # noqa: F811
    base = dict(provider="http", base_url=api.url, request={"input": {"messages": [{"role": "user",
                "content": "{prompt}"}]}}, response_path="data.answer", max_retries=0, timeout=20.0,
                max_answer_chars=1000, max_tokens=8)
    return LLMConfig(**{**base, **kw})


def _run(cfg: LLMConfig, prompts: list[str]) -> list:
    return run_requests([LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in prompts], cfg)


BOMB = gzip.compress(b'{"data": {"answer": "' + b"a" * (64 << 20) + b'"}}', compresslevel=9)  # 64 MiB inside


@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_gzip_bomb_costs_no_more_than_the_cap_at_any_concurrency(api: JsonApi, concurrency: int) -> None:  # noqa: F811
    assert len(BOMB) < 100_000
    api.handle = lambda body, headers: (200, BOMB, {"Content-Encoding": "gzip"})
    cfg = _cfg(api, max_concurrency=concurrency)
    tracemalloc.start()
    try:
        results = _run(cfg, [f"q{i}" for i in range(8)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * (1 << 20), f"{peak / (1 << 20):.0f} MiB at concurrency {concurrency}"  # 64 MiB x 8 expanded
    assert all(r.ok and r.truncated and r.text == "a" * 1000 for r in results), results[0]


def test_a_gzipped_reply_within_the_cap_is_read_whole(api: JsonApi) -> None:  # noqa: F811
    api.handle = lambda body, headers: (200, gzip.compress(json.dumps({"data": {"answer": "fine"}}).encode()),
                                        {"Content-Encoding": "gzip"})
    (res,) = _run(_cfg(api), ["hi"])
    assert (res.ok, res.text, res.truncated) == (True, "fine", False)
    assert api.headers[0]["accept-encoding"] == "gzip, deflate"


def test_a_redirect_says_the_server_redirected_and_where(api: JsonApi) -> None:  # noqa: F811
    api.handle = lambda body, headers: (307, b"", {"Location": "https://new.example/api/chat"})
    (res,) = _run(_cfg(api, max_retries=2), ["hi"])
    assert not res.ok and res.attempts == 1  # the same redirect would come again
    assert "the server redirected (HTTP 307) to https://new.example/api/chat" in res.error_message, res.error_message
    assert "not JSON" not in res.error_message


def test_an_over_cap_reply_is_kept_cut_and_flagged_as_every_provider_does(api: JsonApi) -> None:  # noqa: F811
    long = json.dumps({"data": {"answer": "word " * 50_000}}).encode()
    api.handle = lambda body, headers: (200, long, {})
    (res,) = _run(_cfg(api, max_retries=2), ["hi"])
    assert res.ok and res.truncated and res.attempts == 1 and res.text == ("word " * 200)[:1000]
    assert res.error_message.startswith("warning: answer cut")
    # a reply whose answer field cannot be told apart in the bytes read fails once, naming why
    twice = json.dumps({"meta": {"answer": "x" * 8}, "data": {"answer": "word " * 50_000}}).encode()
    api.handle = lambda body, headers: (200, twice, {})
    (res,) = _run(_cfg(api, max_retries=2), ["again"])
    assert not res.ok and res.attempts == 1 and "cannot be told apart" in res.error_message
