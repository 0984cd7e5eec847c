"""Every LLM setting takes effect on a real OpenAI-compatible server on 127.0.0.1.

The loopback server records each request body and its arrival time, so the tests assert what the
server received: the length-cap field, the spacing of requests under ``rate_limit``, how long a
request may take under ``timeout``, and which server's answers the cache hands back.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.base import endpoint_identity
from equilens.tasks.llm.calls import RateLimiter
from equilens.tasks.llm.openai_provider import OpenAIChatProvider, length_cap_field
from equilens.tasks.storage.store import Store

from tests.fakes.openai_server import FakeOpenAIServer, openai_server, running_server  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[1]
LONG_REPLY = " ".join(f"w{i}" for i in range(40))  # 40 words; the fake server counts a word as a token


def _cfg(server: FakeOpenAIServer, **kw: object) -> LLMConfig:
    base = dict(provider="openai", model="fake", base_url=server.base_url, max_retries=0, backoff_base=0.01,
                timeout=5.0, max_concurrency=4)
    return LLMConfig(**{**base, **kw})


def _reqs(cfg: LLMConfig, prompts: list[str]) -> list[LLMRequest]:
    return [LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in prompts]


def _busiest_second(times: list[float]) -> int:
    """Most requests that arrived within any window [t, t + 1 s) starting at an arrival."""
    times = sorted(times)
    return max(sum(1 for u in times[i:] if u < t + 1.0) for i, t in enumerate(times))


# ---- defect 2: the length cap reaches servers that read max_tokens -------------------------------

def test_custom_base_url_sends_max_tokens(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server, max_tokens=12)
    assert all(r.ok for r in run_requests(_reqs(cfg, ["a"]), cfg))
    (body,) = openai_server.requests
    assert body["max_tokens"] == 12  # what llama.cpp's server, vLLM and Ollama read
    assert body["max_completion_tokens"] == 12  # what OpenAI reads


def test_max_tokens_is_honoured_by_a_server_that_reads_only_max_tokens() -> None:
    with running_server(reply=lambda body: LONG_REPLY, length_fields=("max_tokens",)) as server:
        cfg = _cfg(server, max_tokens=8)
        results = run_requests(_reqs(cfg, ["a", "b", "c"]), cfg)
    assert [len(r.text.split()) for r in results] == [8, 8, 8]  # 40 words without the cap
    assert all(r.completion_tokens == 8 for r in results)


@pytest.mark.parametrize(("field", "sent", "absent"), [
    ("max_tokens", "max_tokens", "max_completion_tokens"),
    ("max_completion_tokens", "max_completion_tokens", "max_tokens"),
])
def test_max_tokens_field_can_be_chosen(openai_server: FakeOpenAIServer, field: str, sent: str,  # noqa: F811
                                        absent: str) -> None:
    cfg = _cfg(openai_server, max_tokens=7, max_tokens_field=field)
    run_requests(_reqs(cfg, ["a"]), cfg)
    (body,) = openai_server.requests
    assert body[sent] == 7 and absent not in body


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_azure_sends_max_completion_tokens(openai_server: FakeOpenAIServer, transport: str) -> None:  # noqa: F811
    endpoint = openai_server.base_url.removesuffix("/v1")
    cfg = LLMConfig(provider="azure", model="gpt-4o-mini", azure_endpoint=endpoint, azure_deployment="dep-1",
                    api_version="2024-10-21", api_key_env="EQUILENS_TEST_AZURE_KEY", max_tokens=9,
                    max_retries=0, timeout=5.0, http_client=transport)
    os.environ["EQUILENS_TEST_AZURE_KEY"] = "azure-test-key-123456"
    try:
        (res,) = run_requests(_reqs(cfg, ["hello"]), cfg)
    finally:
        del os.environ["EQUILENS_TEST_AZURE_KEY"]
    assert res.ok and res.text == "echo: hello"
    (body,) = openai_server.requests
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body
    # Azure routing: the deployment's path, the API version, the key in its own header
    assert openai_server.paths == ["/openai/deployments/dep-1/chat/completions?api-version=2024-10-21"]
    (headers,) = openai_server.headers
    assert headers["api-key"] == "azure-test-key-123456" and "authorization" not in headers
    assert length_cap_field(LLMConfig(provider="openai", model="gpt-4o-mini")) == "max_completion_tokens"
    assert length_cap_field(LLMConfig(provider="openai", model="m", base_url="https://api.openai.com/v1/")) == (
        "max_completion_tokens")


# ---- defect 3: the rate limit holds from the first request -----------------------------------------

class SlowToBuildProvider(OpenAIChatProvider):
    """The real provider, whose client set-up stalls the event loop as cold imports do."""

    def _client(self):
        if self._llm is None:
            time.sleep(1.2)  # blocks the loop: langchain-openai + openai imports in a fresh process
        return super()._client()


def test_rate_limit_holds_while_the_client_is_built(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server, rate_limit=4.0, max_concurrency=10)
    results = run_requests(_reqs(cfg, [f"p{i}" for i in range(10)]), cfg, provider=SlowToBuildProvider(cfg))
    assert all(r.ok for r in results)
    assert len(openai_server.times) == 10
    assert _busiest_second(openai_server.times) <= 4 + 1, [round(t - openai_server.times[0], 3)
                                                           for t in openai_server.times]


def test_rate_limit_holds_from_the_first_request_in_a_fresh_process(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    script = textwrap.dedent(f"""
        from equilens.tasks.config import LLMConfig
        from equilens.tasks.llm import LLMRequest, cache_key, run_requests
        cfg = LLMConfig(provider="openai", model="fake", base_url={openai_server.base_url!r}, rate_limit=2.0,
                        max_concurrency=8, max_retries=0, timeout=10.0)
        reqs = [LLMRequest(f"p{{i}}", 0, cache_key(cfg, f"p{{i}}", 0)) for i in range(7)]
        assert all(r.ok for r in run_requests(reqs, cfg))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    gaps = [round(b - a, 3) for a, b in zip(openai_server.times, openai_server.times[1:], strict=False)]
    assert len(openai_server.times) == 7
    assert _busiest_second(openai_server.times) <= 2 + 1, gaps


def test_limiter_spaces_starts_across_a_stalled_loop() -> None:
    async def main() -> list[float]:
        limiter, starts = RateLimiter(10.0), []

        async def one(i: int) -> None:
            await limiter.acquire()
            starts.append(time.monotonic())
            if i == 1:
                time.sleep(0.5)  # a stalled loop: five slots' worth of waiting callers

        await asyncio.gather(*(one(i) for i in range(8)))
        return starts

    starts = asyncio.run(main())
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= 0.1 * 0.95, [round(g, 3) for g in gaps]  # never two starts closer than 1 / rate


# ---- defect 4: llm.timeout bounds the whole request ------------------------------------------------

def test_timeout_is_a_whole_request_deadline(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("trickle", seconds=20.0)  # bytes keep coming: no single read waits 1 s
    cfg = _cfg(openai_server, timeout=1.0)
    t0 = time.monotonic()
    (res,) = run_requests(_reqs(cfg, ["slow"]), cfg)
    elapsed = time.monotonic() - t0
    assert (res.ok, res.error_class, res.attempts) == (False, "Timeout", 1)
    assert res.latency_s < 6 and elapsed < 8  # cut at 1 s, not after the 20 s trickle


def test_each_retry_gets_its_own_deadline(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("trickle", seconds=4.0)
    cfg = _cfg(openai_server, timeout=1.0, max_retries=1)
    (res,) = run_requests(_reqs(cfg, ["slow then fine"]), cfg)
    assert res.ok and res.attempts == 2 and res.text == "echo: slow then fine"


# ---- defect 5: the endpoint is part of the cache key -----------------------------------------------

def test_another_server_under_the_same_model_name_is_called(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    with running_server(reply=lambda b: "from A") as a, running_server(reply=lambda b: "from B") as b:
        cfg_a, cfg_b = _cfg(a), _cfg(b)
        assert [r.text for r in run_requests(_reqs(cfg_a, ["x", "y"]), cfg_a, store)] == ["from A"] * 2
        second = run_requests(_reqs(cfg_b, ["x", "y"]), cfg_b, store)
        assert [r.text for r in second] == ["from B"] * 2 and not any(r.cached for r in second)
        assert (a.calls, b.calls) == (2, 2)
        again = run_requests(_reqs(cfg_a, ["x", "y"]), cfg_a, store)  # each server keeps its own answers
        assert [r.text for r in again] == ["from A"] * 2 and all(r.cached for r in again)
        assert (a.calls, b.calls) == (2, 2)


def test_sharing_the_cache_across_endpoints_is_explicit(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    with running_server(reply=lambda b: "from A") as a, running_server(reply=lambda b: "from B") as b:
        cfg_a = _cfg(a, cache_across_endpoints=True)
        cfg_b = _cfg(b, cache_across_endpoints=True)
        run_requests(_reqs(cfg_a, ["x"]), cfg_a, store)
        (res,) = run_requests(_reqs(cfg_b, ["x"]), cfg_b, store)
        assert (res.text, res.cached, b.calls) == ("from A", True, 0)


def test_cache_key_names_the_endpoint_but_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    def key(**kw: object) -> str:
        return cache_key(LLMConfig(**{"provider": "openai", "model": "m", **kw}), "p", 0)

    url = "http://127.0.0.1:8080/v1"
    assert key(base_url=url) != key(base_url="http://127.0.0.1:8081/v1") != key()
    assert key(base_url=url) == key(base_url=url + "/") == key(base_url="HTTP://127.0.0.1:8080/v1")
    assert key() == key(base_url="https://api.openai.com/v1")  # OpenAI's own endpoint, named or not
    with_creds = LLMConfig(provider="openai", model="m", base_url="http://user:hunter22@127.0.0.1:8080/v1?api-key=zz9")
    assert endpoint_identity(with_creds) == url and key(base_url=with_creds.base_url) == key(base_url=url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-first-key-000000")
    first = key(base_url=url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-key-111111")
    assert key(base_url=url) == first
    azure = dict(provider="azure", model="gpt-4o", azure_deployment="d1", api_version="2024-10-21")
    a1 = key(azure_endpoint="https://one.openai.azure.com", **azure)
    assert a1 != key(azure_endpoint="https://two.openai.azure.com", **azure)
    assert a1 != key(azure_endpoint="https://one.openai.azure.com", **{**azure, "azure_deployment": "d2"})
    assert a1 == key(azure_endpoint="https://one.openai.azure.com/", **azure)
    local = dict(provider="local", model="SmolLM2-135M-Instruct")
    assert key(**local) == key(base_url=url, **local)  # an in-process model has no endpoint
