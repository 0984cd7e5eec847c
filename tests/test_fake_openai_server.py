"""The fake OpenAI server, exercised through the real ``openai`` and ``langchain-openai`` clients."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    last_line_reply,
    openai_server,  # noqa: F401 - fixture
    running_server,
    serve,
)

KEY = "sk-test-fake-server"
MSG = [{"role": "user", "content": "hello there"}]


def _client(server: FakeOpenAIServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, timeout=timeout)


def _chat(server: FakeOpenAIServer, timeout: float = 5.0, **kw: object) -> ChatOpenAI:
    return ChatOpenAI(model="fake-model", base_url=server.base_url, api_key=KEY, max_retries=0,
                      timeout=timeout, **kw)


def _create(server: FakeOpenAIServer, timeout: float = 5.0, **kw: object):
    return _client(server, timeout).chat.completions.create(model="fake-model", messages=MSG, **kw)


def test_binds_loopback_only(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    assert openai_server._httpd.server_address[0] == "127.0.0.1"
    assert openai_server.base_url == f"http://127.0.0.1:{openai_server.port}/v1"


def test_openai_client_gets_echo_usage_and_n_choices(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "first question"},
                {"role": "assistant", "content": "ok"}, {"role": "user", "content": "hello there"}]
    out = _client(openai_server).chat.completions.create(model="m-1", messages=messages, n=3, temperature=0.7)
    assert [c.message.content for c in out.choices] == ["echo: hello there"] * 3
    assert [c.index for c in out.choices] == [0, 1, 2] and {c.finish_reason for c in out.choices} == {"stop"}
    assert (out.object, out.model) == ("chat.completion", "m-1") and out.id.startswith("chatcmpl-")
    assert abs(out.created - time.time()) < 60
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.total_tokens) == (7, 9, 16)
    assert openai_server.calls == 1 and openai_server.requests[0]["n"] == 3
    assert openai_server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert [m.id for m in _client(openai_server).models.list()] == ["fake"]


def test_langchain_invoke_gets_echo_and_token_usage(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    msg = _chat(openai_server, temperature=0.0).invoke("what is two plus two")
    assert isinstance(msg, AIMessage) and msg.content == "echo: what is two plus two"
    usage = msg.response_metadata["token_usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (5, 6, 11)
    assert msg.response_metadata["finish_reason"] == "stop"
    assert msg.usage_metadata["total_tokens"] == 11
    assert openai_server.requests[0]["messages"] == [{"role": "user", "content": "what is two plus two"}]
    assert openai_server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_reply_function_is_configurable(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.reply = lambda body: body["model"].upper() + " says hi"
    assert _chat(openai_server).invoke("x").content == "FAKE-MODEL says hi"


# ---- faults through the openai client -------------------------------------------------------------

@pytest.mark.parametrize(("kind", "opts", "exc", "status"), [
    ("429", {"retry_after": 0.25}, openai.RateLimitError, 429),
    ("500", {}, openai.InternalServerError, 500),
    ("500", {"status": 503}, openai.InternalServerError, 503),
    ("content_filter", {}, openai.BadRequestError, 400),
])
def test_openai_status_faults(openai_server: FakeOpenAIServer, kind: str, opts: dict, exc: type,  # noqa: F811
                              status: int) -> None:
    openai_server.fail_next(kind, **opts)
    with pytest.raises(exc) as info:
        _create(openai_server)
    assert info.value.status_code == status
    if kind == "429":
        assert info.value.response.headers["retry-after"] == "0.25"
        assert info.value.code == "rate_limit_exceeded"
    if kind == "content_filter":
        assert (info.value.code, info.value.param, info.value.type) == ("content_filter", "prompt",
                                                                         "invalid_request_error")
    assert _create(openai_server).choices[0].message.content == "echo: hello there"  # one fault only


@pytest.mark.parametrize("kind", ["hang", "timeout"])
def test_openai_hang_times_out(openai_server: FakeOpenAIServer, kind: str) -> None:  # noqa: F811
    openai_server.fail_next(kind, seconds=10)
    t0 = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        _create(openai_server, timeout=0.5)
    assert 0.4 < time.monotonic() - t0 < 5.0  # the 0.5 s timeout, not the 10 s hang


def test_openai_malformed_empty_and_refusal(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("malformed")
    with pytest.raises(json.JSONDecodeError):  # the client does not wrap a bad 200 body
        _create(openai_server)
    openai_server.fail_next("empty_choices")
    assert _create(openai_server).choices == []
    openai_server.fail_next("refusal", refusal="I can't help with that.")
    (choice,) = _create(openai_server).choices
    assert (choice.finish_reason, choice.message.content, choice.message.refusal) == (
        "content_filter", None, "I can't help with that.")


# ---- faults through langchain-openai --------------------------------------------------------------

@pytest.mark.parametrize(("kind", "exc", "lc_name"), [
    ("429", openai.RateLimitError, "OpenAIRateLimitError"),
    ("500", openai.InternalServerError, "OpenAIAPIError"),
    ("hang", openai.APITimeoutError, "OpenAITimeoutError"),
    ("content_filter", openai.BadRequestError, "OpenAIInvalidRequestError"),
    ("malformed", json.JSONDecodeError, "JSONDecodeError"),
    ("empty_choices", IndexError, "IndexError"),  # langchain indexes generations[0]: no graceful empty answer
])
def test_langchain_faults(openai_server: FakeOpenAIServer, kind: str, exc: type,  # noqa: F811
                          lc_name: str) -> None:
    openai_server.fail_next(kind, seconds=10)
    with pytest.raises(exc) as info:
        _chat(openai_server, timeout=0.5).invoke("hi")
    assert type(info.value).__name__ == lc_name
    assert openai_server.calls == 1  # max_retries=0: one HTTP call


def test_langchain_refusal_is_an_empty_message(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("refusal")
    msg = _chat(openai_server).invoke("hi")
    assert (msg.content, msg.additional_kwargs["refusal"]) == ("", None)
    assert msg.response_metadata["finish_reason"] == "content_filter"
    openai_server.fail_next("refusal", refusal="I can't help with that.")
    msg = _chat(openai_server).invoke("hi")
    assert (msg.content, msg.additional_kwargs["refusal"]) == ("", "I can't help with that.")
    assert msg.response_metadata["token_usage"]["completion_tokens"] == 5


def test_langchain_retries_count_http_calls(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("429", times=2, retry_after=0.05)
    llm = ChatOpenAI(model="m", base_url=openai_server.base_url, api_key=KEY, max_retries=2)
    assert llm.invoke("again").content == "echo: again"
    assert openai_server.calls == 3


# ---- scripting: queue order, rules, latency, validation ------------------------------------------

def test_fail_next_queue_is_consumed_in_order(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("500", times=2)
    openai_server.fail_next("429")
    assert openai_server.pending_faults == ["500", "500", "429"]
    outcomes = []
    for _ in range(4):
        try:
            outcomes.append(_create(openai_server).choices[0].message.content)
        except openai.APIStatusError as e:
            outcomes.append(e.status_code)
    assert outcomes == [500, 500, 429, "echo: hello there"] and openai_server.pending_faults == []


def test_rule_applies_forever_and_queue_comes_first(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fault_for = lambda body: "500" if "FAIL" in body["messages"][-1]["content"] else None
    llm = _chat(openai_server)
    for _ in range(3):
        with pytest.raises(openai.InternalServerError):
            llm.invoke("please FAIL")
    assert llm.invoke("fine").content == "echo: fine"
    openai_server.fail_next("429")  # the queue wins over the rule
    with pytest.raises(openai.RateLimitError):
        llm.invoke("please FAIL")
    openai_server.fault_for = lambda body: ("429", {"retry_after": 3})  # a rule may give options
    with pytest.raises(openai.RateLimitError) as info:
        llm.invoke("x")
    assert info.value.response.headers["retry-after"] == "3"


def test_unknown_faults_are_rejected(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="unknown fault"):
        openai_server.fail_next("418")
    openai_server.fault_for = lambda body: "teapot"  # a broken rule answers 500 with the reason
    with pytest.raises(openai.InternalServerError, match="teapot"):
        _create(openai_server)


def test_concurrent_requests_are_served_side_by_side(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    # each request is held until all 16 have arrived: a server that answered one at a time would hold
    # the first until it gave up waiting (counted in ungathered), whatever the machine's load
    openai_server.gather = 16
    client = _client(openai_server)

    def ask(i: int) -> str:
        messages = [{"role": "user", "content": f"prompt {i}"}]
        return client.chat.completions.create(model="m", messages=messages).choices[0].message.content

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(ask, range(16)))
    assert answers == [f"echo: prompt {i}" for i in range(16)]
    assert openai_server.ungathered == 0
    assert sorted(r["messages"][0]["content"] for r in openai_server.requests) == sorted(
        f"prompt {i}" for i in range(16))
    assert len(openai_server.headers) == 16


def test_a_request_held_for_others_that_never_come_gives_up_and_is_counted(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.gather, openai_server.gather_timeout = 2, 0.05
    _create(openai_server)
    assert openai_server.ungathered == 1


def test_latency_is_added_to_every_request(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.latency = 0.2
    t0 = time.monotonic()
    _create(openai_server)
    assert time.monotonic() - t0 >= 0.2


def test_keep_alive_reuses_one_connection(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    client = _client(openai_server)
    for _ in range(5):
        client.chat.completions.create(model="m", messages=MSG)
    assert openai_server.calls == 5 and openai_server.connections == 1


def test_wait_for_calls_and_reset(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    threading.Thread(target=lambda: _create(openai_server), daemon=True).start()
    assert openai_server.wait_for_calls(1, timeout=5)
    assert not openai_server.wait_for_calls(2, timeout=0.1)
    openai_server.fail_next("500")
    openai_server.reset()
    assert openai_server.calls == 0 and openai_server.pending_faults == []


# ---- shutdown -------------------------------------------------------------------------------------

def test_fixture_teardown_is_quick_with_a_hanging_request_in_flight() -> None:
    gen = serve()  # the fixture's own body
    server = next(gen)
    server.fail_next("hang", seconds=60)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            _create(server, timeout=30)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    caller = threading.Thread(target=call)
    caller.start()
    assert server.wait_for_calls(1, timeout=5)
    idle = httpx.Client(base_url=server.base_url)  # an idle keep-alive connection too
    assert idle.get("/models").status_code == 200
    t0 = time.monotonic()
    with pytest.raises(StopIteration):
        next(gen)  # teardown
    assert time.monotonic() - t0 < 10.0  # not the 60 s hang
    caller.join(5)
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], openai.APIConnectionError)  # hung up, no response
    with pytest.raises(httpx.TransportError):  # nothing listens any more, pooled connection included
        idle.get("/models")
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.base_url + "/models")
    idle.close()


def test_running_server_options_and_context_manager() -> None:
    with running_server(latency=0.05, reply=lambda body: "fixed") as server:
        t0 = time.monotonic()
        assert _chat(server).invoke("x").content == "fixed"
        assert time.monotonic() - t0 >= 0.05
    with FakeOpenAIServer() as server:
        assert _create(server).choices[0].message.content == "echo: hello there"


# ---- async: a fresh httpx.AsyncClient per event loop ----------------------------------------------

def test_ainvoke_in_two_event_loops(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    async def run(tag: str) -> list[str]:
        async with httpx.AsyncClient() as http:  # created inside the running loop
            llm = _chat(openai_server, http_async_client=http)
            msgs = await asyncio.gather(*(llm.ainvoke(f"{tag} {i}") for i in range(4)))
        return [m.content for m in msgs]

    assert asyncio.run(run("first")) == [f"echo: first {i}" for i in range(4)]
    assert asyncio.run(run("second")) == [f"echo: second {i}" for i in range(4)]  # no "Event loop is closed"
    assert openai_server.calls == 8


def test_a_broken_reply_function_answers_500(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.reply = lambda body: body["missing"]
    with pytest.raises(openai.InternalServerError, match="reply failed: KeyError"):
        _create(openai_server)


# ---- arrival times, trickling bodies, a server that dies, honoured length caps ----------------------

def test_arrival_times_are_recorded(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    t0 = time.monotonic()
    for _ in range(3):
        _create(openai_server)
    assert len(openai_server.times) == 3 and t0 <= openai_server.times[0] <= openai_server.times[-1]
    assert openai_server.times == sorted(openai_server.times)


def test_trickle_beats_a_per_read_timeout(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.fail_next("trickle", seconds=1.5)
    t0 = time.monotonic()
    out = _create(openai_server, timeout=0.5)  # every read waits ~0.1 s: the 0.5 s read timeout never fires
    assert out.choices[0].message.content == "echo: hello there"
    assert time.monotonic() - t0 >= 1.4


def test_die_after_answers_then_refuses(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.die_after(2)
    client = _client(openai_server)
    answers = [client.chat.completions.create(model="m", messages=MSG).choices[0].message.content
               for _ in range(2)]
    assert answers == ["echo: hello there"] * 2
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=MSG)
    assert openai_server.wait_stopped(10)  # the death runs in a thread; on a busy machine it takes a moment
    with pytest.raises(httpx.ConnectError):  # the port no longer listens
        httpx.get(openai_server.base_url + "/models")
    assert openai_server.answers == 2 and openai_server.dead


def test_die_after_with_concurrent_clients_answers_exactly_n(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.latency = 0.05
    openai_server.die_after(5)

    def ask(i: int) -> str:
        try:
            return _client(openai_server, timeout=3).chat.completions.create(
                model="m", messages=MSG).choices[0].message.content
        except openai.APIConnectionError:
            return "failed"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(ask, range(20)))
    assert outcomes.count("echo: hello there") == 5 and outcomes.count("failed") == 15


def test_length_fields_cut_the_reply(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    openai_server.reply = lambda body: "one two three four five six"
    assert _create(openai_server, max_tokens=3).choices[0].message.content == "one two three four five six"
    openai_server.length_fields = ("max_tokens",)  # like llama.cpp's server
    (choice,) = _create(openai_server, max_tokens=3).choices
    assert (choice.message.content, choice.finish_reason) == ("one two three", "length")
    (choice,) = _create(openai_server, max_completion_tokens=3).choices  # a field it does not read
    assert choice.message.content == "one two three four five six"


def test_the_log_has_one_whole_line_per_answer_under_concurrency() -> None:
    """``--log`` prints a line per answer for tests that count calls from another process. With
    print() two handler threads could write their texts before their newlines, merging two answers
    into one line: the SIGINT resume test once counted 17 calls where the client made 18."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", "0.05", "--log"],
                            cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().strip()
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        # the test counts lines, not speed: a generous timeout, since on a loaded 2-core machine running
        # other tests beside it one of 400 requests has waited more than 10 s for the CPU
        with httpx.Client(timeout=60) as client, ThreadPoolExecutor(32) as pool:
            codes = list(pool.map(lambda _: client.post(f"{base_url}/chat/completions", json=body).status_code,
                                  range(400)))
        assert codes == [200] * 400
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    lines = out.splitlines()
    assert lines == ["POST /v1/chat/completions"] * 400


def test_the_last_line_reply_echoes_only_a_prompt_s_last_line() -> None:
    packed = "User: hi\nAssistant: echo: hi\nUser: and?"
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": packed}]}
    assert last_line_reply(body) == "echo: User: and?"
    assert last_line_reply({"messages": [{"role": "user", "content": "one line"}]}) == "echo: one line"
