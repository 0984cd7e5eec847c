"""The LLM stage against a real OpenAI-compatible server on 127.0.0.1, through langchain-openai."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError
from equilens.tasks.llm import LLMRequest, cache_key, classify_error, make_provider, run_requests
from equilens.tasks.storage.store import Store

from tests.fakes.openai_server import FakeOpenAIServer, openai_server  # noqa: F401 - fixture


def _cfg(server: FakeOpenAIServer, **kw: object) -> LLMConfig:
    base = dict(provider="openai", model="fake", base_url=server.base_url, max_retries=3, backoff_base=0.01,
                timeout=2.0, max_concurrency=4)
    return LLMConfig(**{**base, **kw})


def _reqs(cfg: LLMConfig, prompts: list[str], count: int = 1) -> list[LLMRequest]:
    return [LLMRequest(p, i, cache_key(cfg, p, i)) for p in prompts for i in range(count)]


def test_answers_in_request_order_with_usage(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server)
    results = run_requests(_reqs(cfg, ["alpha", "beta", "gamma"], count=2), cfg)
    assert [r.text for r in results] == ["echo: alpha"] * 2 + ["echo: beta"] * 2 + ["echo: gamma"] * 2
    assert all(r.ok and r.attempts == 1 and r.completion_tokens == 2 for r in results)
    assert len(openai_server.requests) == 6
    assert openai_server.requests[0]["messages"][0] == {"role": "system", "content": cfg.system_prompt}


def test_rate_limits_and_server_errors_are_retried(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server, max_concurrency=1)
    openai_server.fail_next("429", times=2, retry_after=0.2)
    openai_server.fail_next("500")
    t0 = time.monotonic()
    (res,) = run_requests(_reqs(cfg, ["hello"]), cfg)
    assert res.ok and res.text == "echo: hello" and res.attempts == 4
    assert time.monotonic() - t0 >= 0.4  # Retry-After honoured twice
    assert len(openai_server.requests) == 4


def test_persistent_failures_are_recorded_per_row(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server, max_retries=1, timeout=0.5)
    rules = {"boom": "500", "slow": "hang", "bad": "malformed", "none": "empty_choices",
             "filtered": "content_filter", "refused": "refusal"}
    openai_server.fault_for = lambda body: rules.get(body["messages"][-1]["content"])
    results = run_requests(_reqs(cfg, [*rules, "fine"]), cfg)
    by = {r.request.prompt: r for r in results}
    assert by["fine"].ok and by["fine"].text == "echo: fine"
    assert (by["boom"].ok, by["boom"].error_class, by["boom"].attempts) == (False, "ServerError", 2)
    assert (by["slow"].ok, by["slow"].error_class) == (False, "Timeout")
    assert not by["bad"].ok and by["bad"].attempts == 2
    assert (by["none"].ok, by["none"].attempts) == (False, 2)
    assert (by["filtered"].ok, by["filtered"].refusal, by["filtered"].error_class) == (False, True, "ContentFilter")
    assert by["filtered"].attempts == 1  # a content filter is not retried
    assert (by["refused"].ok, by["refused"].refusal) == (False, True)
    assert len(results) == 7  # nothing dropped


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_each_transport_records_the_same_error_classes(openai_server: FakeOpenAIServer, transport: str) -> None:  # noqa: F811
    cfg = _cfg(openai_server, max_retries=0, timeout=0.5, http_client=transport)
    rules = {"boom": "500", "slow": "hang", "busy": "429", "filtered": "content_filter"}
    openai_server.fault_for = lambda body: rules.get(body["messages"][-1]["content"])
    by = {r.request.prompt: r for r in run_requests(_reqs(cfg, [*rules, "fine"]), cfg)}
    assert {p: by[p].error_class for p in [*rules, "fine"]} == {
        "boom": "ServerError", "slow": "Timeout", "busy": "RateLimitError", "filtered": "ContentFilter", "fine": None}
    openai_server.die_after(1)  # one more answer, then hang up on the next and refuse connections
    one = cfg.model_copy(update={"max_concurrency": 1})
    hung_up, refused = run_requests(_reqs(one, ["last", "gone"]), one)
    assert hung_up.ok and refused.error_class == "ConnectionError"  # a dead server is no timeout


def test_aiohttp_transport_keeps_max_concurrency_connections(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.latency = 0.02
    cfg = _cfg(openai_server, max_concurrency=6)
    assert cfg.http_client == "aiohttp"
    results = run_requests(_reqs(cfg, [f"p{i}" for i in range(60)]), cfg)
    assert all(r.ok for r in results) and openai_server.connections == 6  # one pool, reused, never more


def test_aiohttp_transport_looks_up_the_environment_proxy_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks.llm.aiohttp_post import env_proxy

    monkeypatch.setenv("HTTP_PROXY", "http://user:secret@proxy.internal:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    found = env_proxy("http://llm.internal/v1/chat/completions")
    assert str(found["proxy"]) == "http://proxy.internal:3128" and found["proxy_auth"].login == "user"
    monkeypatch.setenv("NO_PROXY", "llm.internal")
    assert env_proxy("http://llm.internal/v1/chat/completions") == {}


ODD_TEXTS = ["", "plain", 'quotes " and \\ backslash', "new\nline\ttab\x00nul\x1f", "é ✓ 😀 \u2028 </script>",
             "x" * 5000]


def test_a_request_body_is_written_as_the_json_of_its_dict() -> None:
    import json

    from equilens.tasks.llm.openai_provider import BodyBytes

    template = {"model": 'm "x" é', "temperature": 1.0, "max_completion_tokens": 64, "logprobs": True,
                "messages": [{"content": "sys ✓ \"q\"", "role": "system"}, {"content": "", "role": "user"}],
                "max_tokens": 64}
    body = BodyBytes(template)
    for prompt in ODD_TEXTS:
        for system in [None, *ODD_TEXTS]:
            sys_msg = template["messages"][0] if system is None else {"content": system, "role": "system"}
            whole = dict(template, messages=[sys_msg, {"content": prompt, "role": "user"}])
            assert body(prompt, system) == json.dumps(whole, ensure_ascii=False).encode()
    for earlier in ([{"role": "user", "content": ODD_TEXTS[3]}],
                    [{"role": "user", "content": "}, {"}, {"role": "assistant", "content": ODD_TEXTS[4]}],
                    [{"content": ODD_TEXTS[2], "role": "user"}, {"role": "user", "content": "a", "name": "n ✓"}]):
        for prompt in ODD_TEXTS[:4]:  # a conversation's turn: its history between the system message and the prompt
            whole = dict(template, messages=[template["messages"][0], *earlier, {"content": prompt, "role": "user"}])
            assert body(prompt, None, earlier) == json.dumps(whole, ensure_ascii=False).encode()


def test_both_transports_send_the_same_bodies_with_the_sdk_headers(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    sent = {}
    for client in ("aiohttp", "httpx"):
        openai_server.reset()
        cfg = _cfg(openai_server, http_client=client, max_concurrency=1, logprobs=3)
        reqs = [LLMRequest(p, 0, cache_key(cfg, p, 0, s), system=s) for p in ODD_TEXTS for s in (None, "own ✓ \"sys\"")]
        assert all(r.ok for r in run_requests(reqs, cfg))
        sent[client] = (list(openai_server.requests), list(openai_server.headers))
    assert sent["aiohttp"][0] == sent["httpx"][0] and len(sent["aiohttp"][0]) == 2 * len(ODD_TEXTS)
    assert sent["aiohttp"][0][1]["messages"][0]["content"] == "own ✓ \"sys\""
    for headers in sent["aiohttp"][1]:  # the headers the SDK would send, on every call
        assert headers["authorization"] == "Bearer not-needed" and headers["x-stainless-lang"] == "python"
        assert headers["content-type"] == "application/json"


def test_cache_makes_a_rerun_free(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    cfg = _cfg(openai_server)
    store = Store(tmp_path / "e.duckdb")
    first = run_requests(_reqs(cfg, ["a", "b"], count=2), cfg, store)
    assert len(openai_server.requests) == 4 and not any(r.cached for r in first)
    second = run_requests(_reqs(cfg, ["a", "b"], count=2), cfg, store)
    assert len(openai_server.requests) == 4
    assert all(r.cached for r in second) and [r.text for r in second] == [r.text for r in first]
    other = cfg.model_copy(update={"temperature": 0.2})  # a different parameter is a different call
    run_requests(_reqs(other, ["a"]), other, store)
    assert len(openai_server.requests) == 5


def test_failures_are_not_cached(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    cfg = _cfg(openai_server, max_retries=0)
    store = Store(tmp_path / "e.duckdb")
    openai_server.fail_next("500")
    (res,) = run_requests(_reqs(cfg, ["x"]), cfg, store)
    assert not res.ok
    (again,) = run_requests(_reqs(cfg, ["x"]), cfg, store)
    assert again.ok and not again.cached


def test_concurrency_and_rate_limit(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.gather = 8  # each call held until 8 have arrived: none gives up only if 8 run side by side
    cfg = _cfg(openai_server, max_concurrency=8)
    assert all(r.ok for r in run_requests(_reqs(cfg, [f"p{i}" for i in range(16)]), cfg))
    assert openai_server.ungathered == 0
    openai_server.gather = 0
    limited = _cfg(openai_server, rate_limit=20.0, system_prompt="limited")
    t0 = time.monotonic()
    run_requests(_reqs(limited, [f"q{i}" for i in range(10)]), limited)
    assert time.monotonic() - t0 >= 0.4  # 10 calls at 20/s take at least 9/20 s


def test_two_event_loops_in_one_process(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server)
    assert run_requests(_reqs(cfg, ["one"]), cfg)[0].ok
    cfg2 = _cfg(openai_server, system_prompt="second loop")
    assert run_requests(_reqs(cfg2, ["two"]), cfg2)[0].ok


def test_missing_api_key_without_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="set the environment variable OPENAI_API_KEY"):
        make_provider(LLMConfig(provider="openai", model="gpt-4o-mini"))


def test_classify_plain_exceptions() -> None:
    assert classify_error(TimeoutError()).error_class == "Timeout"
    assert classify_error(ValueError("bad json")).retryable


def test_calls_complete_one_prompt_sample_across_groups_first(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server, max_concurrency=1, count=2)
    reqs = [LLMRequest(f"{p} {g}", i, cache_key(cfg, f"{p} {g}", i), meta={"prompt_id": p, "attribute": "gender"})
            for p in ("p1", "p2") for g in ("he", "she") for i in range(2)]  # the stage's (variant, sample) order
    results = run_requests(reqs, cfg)
    assert [r.request for r in results] == reqs  # results stay in request order
    sent = [body["messages"][-1]["content"] for body in openai_server.requests]
    # a server lost after any call leaves (prompt, sample) rows with every group answered, not scattered ones
    assert sent == ["p1 he", "p1 she", "p1 he", "p1 she", "p2 he", "p2 she", "p2 he", "p2 she"]


def test_the_local_llm_stage_works_in_chunks_of_whole_prompts(openai_server: FakeOpenAIServer,  # noqa: F811
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests are built, called and tabulated a chunk at a time (never all of a big run's objects at
    once), a prompt's variants in one chunk; the frame is the one the whole set gives, and a text
    shared by two chunks is called once."""
    import pandas as pd
    from equilens.tasks import pipeline as counterfactual
    from equilens.tasks.pipeline import prefect_tasks

    texts = {"p1": ["Is he kind?", "Is she kind?"], "p2": ["Was he late?", "Was she late?"],
             "p3": ["Is he kind?", "Is she kind?", "Are they kind?"]}
    variants = pd.DataFrame([{"variant_id": f"{p}{i}", "prompt_id": p, "attribute": "gender", "grp": f"g{i}",
                              "text": t} for p, ts in texts.items() for i, t in enumerate(ts)])
    built = []
    build = counterfactual.build_requests
    monkeypatch.setattr(counterfactual, "build_requests", lambda v, c: built.append(list(v["prompt_id"])) or build(v, c))
    monkeypatch.setattr(prefect_tasks, "LLM_CHUNK_CALLS", 4)  # two calls per variant: one prompt a chunk
    cfg = _cfg(openai_server, count=2)
    frame = prefect_tasks.call_llm_task.fn(variants, cfg, str(tmp_path / "e.duckdb"), 10.0)
    assert built == [["p1", "p1"], ["p2", "p2"], ["p3", "p3", "p3"]]
    assert list(zip(frame["variant_id"], frame["sample_idx"])) == [(v, i) for v in variants["variant_id"] for i in (0, 1)]
    assert frame["text"].tolist() == [f"echo: {t}" for t in variants["text"] for _ in (0, 1)]
    assert frame["cached"].tolist() == [False] * 8 + [True] * 4 + [False] * 2  # p3 repeats p1's two texts
    assert len(openai_server.requests) == 10
