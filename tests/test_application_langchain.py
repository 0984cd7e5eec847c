"""Provider langchain: real LangChain chat model classes, built from their import paths, against
loopback servers speaking each vendor's wire format (ChatOpenAI: tests/fakes/openai_server.py,
ChatAnthropic: tests/fakes/anthropic_server.py), and Runnables (chains) whose input is filled from
``llm.request`` so an identity run reaches the chain's own fields."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.targets import hand_over
from equilens.tasks.storage.store import Store

from tests.fakes import apps
from tests.fakes.anthropic_server import FakeAnthropicServer, anthropic_server, key_of  # noqa: F401 - fixture
from tests.fakes.openai_server import FakeOpenAIServer, openai_server  # noqa: F401 - fixture

OPENAI_KEY = "sk-lcOPENAI-h5Jk2Lm9Qr4T"
ANTHROPIC_KEY = "sk-ant-lcANTH-w3Ex8Rt6Yu1Io5"
PERSON = (("name", "Latoya Washington"),)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("EQUILENS_TEST_LC_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    apps.reset()
    yield


def _cfg(target: str, **kw: object) -> LLMConfig:
    base = dict(provider="langchain", target=target, max_retries=1, backoff_base=0.01, timeout=5.0,
                max_concurrency=4)
    return LLMConfig(**{**base, **kw})


def _chat_openai(server: FakeOpenAIServer, **kw: object) -> LLMConfig:
    kwargs = {"base_url": server.base_url, "api_key": "${EQUILENS_TEST_LC_KEY}", "model": "fake-chat",
              "max_retries": 0}
    return _cfg("langchain_openai:ChatOpenAI", target_kwargs=kwargs, **kw)


def _reqs(cfg: LLMConfig, prompts: list[str], user: tuple | None = None) -> list[LLMRequest]:
    return [LLMRequest(p, 0, cache_key(cfg, p, 0, user=user), user=user) for p in prompts]


def test_chat_openai_from_its_import_path_answers_with_usage_and_the_generation_settings(
        openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _chat_openai(openai_server, temperature=0.3, max_tokens=17, system_prompt="Be brief.")
    results = run_requests(_reqs(cfg, ["Is a nurse a good job?", "Hello"]), cfg)
    assert [(r.ok, r.text) for r in results] == [(True, "echo: Is a nurse a good job?"),
                                                 (True, "echo: Hello")]
    assert (results[0].prompt_tokens, results[0].completion_tokens) == (8, 7)  # the server's usage, in words
    body = next(b for b in openai_server.requests if b["messages"][-1]["content"] != "Hello")
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Is a nurse a good job?"}]
    assert body["temperature"] == 0.3 and body.get("max_completion_tokens", body.get("max_tokens")) == 17
    assert body["model"] == "fake-chat"
    assert {h["authorization"] for h in openai_server.headers} == {f"Bearer {OPENAI_KEY}"}
    assert cfg.model == "langchain_openai:ChatOpenAI"


def test_chat_openai_first_token_log_probabilities_are_read(
        openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.reply = lambda body: ("yes", {"yes": -0.1, "no": -2.5, "maybe": -4.0})
    cfg = _chat_openai(openai_server, logprobs=2)
    (res,) = run_requests(_reqs(cfg, ["Approve the loan? Answer yes or no."]), cfg)
    assert res.ok and res.text == "yes"
    assert res.top_logprobs == {"yes": -0.1, "no": -2.5}
    assert openai_server.requests[0]["logprobs"] is True and openai_server.requests[0]["top_logprobs"] == 2


@pytest.mark.parametrize("given", ["import path", "object"])
def test_chat_openai_runs_again_in_one_process(openai_server: FakeOpenAIServer, given: str) -> None:  # noqa: F811
    """Each run has its own event loop (chunks, looks, a notebook's second assess): the model's pooled
    connections, shared by langchain-openai across instances, must not outlive the loop that opened them."""
    cfg = _chat_openai(openai_server)
    if given == "object":  # as equilens.assess(model=ChatOpenAI(...)) hands it over: one object for every run
        from langchain_openai import ChatOpenAI

        model = ChatOpenAI(base_url=openai_server.base_url, api_key=OPENAI_KEY, model="fake", max_retries=0)
        cfg = _cfg(hand_over(model))
    for prompt in ("first run", "second run", "third run"):
        (res,) = run_requests(_reqs(cfg, [prompt]), cfg)
        assert (res.ok, res.text, res.attempts) == (True, f"echo: {prompt}", 1), res.error_message


def test_a_key_from_target_kwargs_is_scrubbed_from_the_first_failure(
        openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    value = f"cred{uuid.uuid4().hex[:16]}"  # a variable not named like a key, a value not shaped like one
    monkeypatch.setenv("EQUILENS_TEST_GATEWAY_CRED", value)
    cfg = _chat_openai(openai_server, max_retries=0)
    kwargs = {**cfg.target_kwargs, "api_key": "${EQUILENS_TEST_GATEWAY_CRED}"}
    cfg = cfg.model_copy(update={"target_kwargs": kwargs})
    openai_server.fail_next("500", message=f"the gateway refused {value}")  # a server that echoes the key
    (res,) = run_requests(_reqs(cfg, ["hello"]), cfg)
    assert openai_server.headers[0]["authorization"] == f"Bearer {value}"
    assert (res.ok, res.error_class) == (False, "ServerError")
    assert "the gateway refused ***" in res.error_message
    assert value not in res.error_message


def test_chat_anthropic_gets_the_system_message_top_level_and_the_key_only_from_the_environment(
        anthropic_server: FakeAnthropicServer, tmp_path: Path) -> None:  # noqa: F811
    cfg = _cfg("langchain_anthropic:ChatAnthropic", target_kwargs={"base_url": anthropic_server.base_url,
                                                                    "model": "claude-test", "max_retries": 0},
               system_prompt="You are a careful assistant.", temperature=0.0, max_tokens=40)
    store = Store(tmp_path / "e.duckdb")
    results = run_requests(_reqs(cfg, ["Should she get the loan?", "Say hi"]), cfg, store)
    assert [(r.ok, r.text) for r in results] == [(True, "echo: Should she get the loan?"),
                                                 (True, "echo: Say hi")]
    # usage: input_tokens (the system text too) and output_tokens, in words
    assert (results[0].prompt_tokens, results[0].completion_tokens) == (10, 6)
    body = next(b for b in anthropic_server.requests if b["messages"][0]["content"] != "Say hi")
    assert anthropic_server.paths == ["/v1/messages"] * 2
    assert body["system"] == "You are a careful assistant."  # Anthropic's top-level system, not a message
    assert body["messages"] == [{"role": "user", "content": "Should she get the loan?"}]
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("claude-test", 40, 0.0)
    assert {key_of(h) for h in anthropic_server.headers} == {ANTHROPIC_KEY}

    anthropic_server.error_for = lambda body, headers: (401, f"invalid key {key_of(headers)}")
    (failed,) = run_requests(_reqs(cfg, ["one more"]), cfg, store)
    assert not failed.ok and "invalid key ***" in failed.error_message, failed.error_message
    assert ANTHROPIC_KEY not in failed.error_message
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT * FROM response_cache").fetchall()
    assert len(stored) == 2 and not any(ANTHROPIC_KEY in str(v) for row in stored for v in row)


def test_a_chain_receives_the_person_s_name_in_its_own_field(
        openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    """A factory (tests.fakes.apps:support_chain) builds prompt template | ChatOpenAI; ``llm.request``
    puts the prompt in {question} and the person's name in {customer}."""
    cfg = _cfg("tests.fakes.apps:support_chain",
               target_kwargs={"base_url": openai_server.base_url, "api_key": "${EQUILENS_TEST_LC_KEY}"},
               request={"question": "{prompt}", "customer": "{name}"})
    (res,) = run_requests(_reqs(cfg, ["Can I get a refund?"], user=PERSON), cfg)
    assert res.ok and res.text == "echo: Can I get a refund?" and res.prompt_tokens is not None
    assert openai_server.requests[0]["messages"] == [
        {"role": "system", "content": "You help Latoya Washington, our customer."},
        {"role": "user", "content": "Can I get a refund?"}]


def test_a_runnable_handed_over_gets_the_filled_request_and_its_output_is_read() -> None:
    from langchain_core.runnables import RunnableLambda

    seen: list[object] = []

    def reply(inputs: dict) -> dict:
        seen.append(inputs)
        return {"result": {"answer": f"Dear {inputs['customer']}, yes."}, "sources": ["faq.md"]}

    chain = RunnableLambda(reply)
    cfg = _cfg(hand_over(chain), request={"question": "{prompt}", "customer": "{name}", "channel": "chat"},
               response_path="result.answer")
    (res,) = run_requests(_reqs(cfg, ["Is my order late?"], user=PERSON), cfg)
    assert res.ok and res.text == "Dear Latoya Washington, yes."
    assert seen == [{"question": "Is my order late?", "customer": "Latoya Washington", "channel": "chat"}]

    missing = cfg.model_copy(update={"response_path": "result.text"})
    (failed,) = run_requests(_reqs(missing, ["Again?"], user=PERSON), missing)
    assert (failed.ok, failed.error_class, failed.attempts) == (False, "TargetReplyError", 1)
    assert "'result.text' finds nothing" in failed.error_message
    assert "keys: result, sources" in failed.error_message


def test_a_runnable_returning_a_string_takes_the_prompt_by_default() -> None:
    from langchain_core.runnables import RunnableLambda

    chain = RunnableLambda(lambda text: f"you said: {text}")
    cfg = _cfg(hand_over(chain))
    (res,) = run_requests(_reqs(cfg, ["hello"]), cfg)
    assert res.ok and res.text == "you said: hello"


def test_a_runnable_without_async_support_is_invoked_in_a_thread() -> None:
    """``ChatHuggingFace`` over a local pipeline raises NotImplementedError from ``ainvoke``: every row
    failed. The provider runs ``invoke`` in a thread instead."""
    from equilens.tasks.config.sections import LLMConfig
    from equilens.tasks.llm.base import LLMRequest
    from equilens.tasks.llm.runner import run_requests
    from equilens.tasks.llm.targets import hand_over
    from langchain_core.runnables import Runnable

    class SyncOnly(Runnable):
        def invoke(self, value, config=None, **kwargs):
            return f"sync: {value}"

        async def ainvoke(self, value, config=None, **kwargs):
            raise NotImplementedError("async generation is not supported")

    cfg = LLMConfig(provider="langchain", target=hand_over(SyncOnly()), max_retries=0)
    results = run_requests([LLMRequest(p, 0, p) for p in ("a", "b")], cfg)
    assert [r.text for r in results] == ["sync: a", "sync: b"] and all(r.attempts == 1 for r in results)
