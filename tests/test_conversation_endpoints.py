"""Conversations and streamed replies over HTTP, against loopback applications (tests/fakes/chat_server.py):
an ``http`` app that takes the whole conversation (``{messages}``), one that keeps it itself behind a
session id and a cookie, streams of server-sent events and JSON lines, and ``provider: openai`` sending a
conversation's history and reading a streamed chat completion."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ConfigError, ProviderError
from equilens.tasks.llm import LLMRequest, LLMResult, cache_key, run_requests
from equilens.tasks.turns import join_turns

from tests.fakes.chat_server import ChatServer


@pytest.fixture()
def server() -> Iterator[ChatServer]:
    s = ChatServer()
    yield s
    s.stop()


def _http(server: ChatServer, path: str, **kw: object) -> LLMConfig:
    base = dict(provider="http", base_url=server.url + path, request={"message": "{prompt}"}, response_path="answer",
                max_retries=0, backoff_base=0.01, timeout=5.0, max_concurrency=2)
    return LLMConfig(**{**base, **kw})


def _run(cfg: LLMConfig, conversations: list[list[str]]) -> list[LLMResult]:
    prompts = [join_turns(turns) for turns in conversations]
    return run_requests([LLMRequest(p, 0, cache_key(cfg, p, i)) for i, p in enumerate(prompts)], cfg)


def test_a_stateless_app_gets_the_whole_conversation_each_turn(server: ChatServer) -> None:
    cfg = _http(server, "/stateless", request={"messages": "{messages}", "system": "{system}"})
    ada, bob = _run(cfg, [["My name is Ada.", "What time is it?", "What did I say first?"],
                          ["My name is Bob.", "What did I say first?"]])
    assert ada.ok and ada.text == "5 messages; you first said: My name is Ada."  # depends on turn 1
    assert bob.ok and bob.text == "3 messages; you first said: My name is Bob."
    assert [t["answer"] for t in ada.turns] == ["1 messages; you first said: My name is Ada.",
                                                "3 messages; you first said: My name is Ada.", ada.text]
    last = next(b for b in server.bodies("/stateless") if b["messages"][-1]["content"] == "What did I say first?"
                and len(b["messages"]) == 5)
    assert last["messages"] == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "1 messages; you first said: My name is Ada."},
        {"role": "user", "content": "What time is it?"},
        {"role": "assistant", "content": "3 messages; you first said: My name is Ada."},
        {"role": "user", "content": "What did I say first?"}]


@pytest.mark.parametrize("send_as", ["header:X-Session", "meta.session"])
def test_a_session_app_gets_its_own_id_and_cookie_back_and_two_conversations_never_mix(
        server: ChatServer, send_as: str) -> None:
    server.latency = 0.1  # the two conversations' turns are in flight together
    cfg = _http(server, "/session", session={"id_path": "session.id", "send_as": send_as})
    ada, bob = _run(cfg, [["I am Ada.", "Second?", "Third?"], ["I am Bob.", "Next?", "Last?"]])
    assert (ada.ok, ada.text) == (True, "3 turns; first: I am Ada.; cookie ok"), ada.error_message
    assert (bob.ok, bob.text) == (True, "3 turns; first: I am Bob.; cookie ok"), bob.error_message
    assert len(server.sessions) == 2  # one per conversation, never a new one for a later turn
    for session in server.sessions.values():
        assert session["cookies"] == [None, f"visit={session['visit']}", f"visit={session['visit']}"]
    later = [r for r in server.requests if r["body"]["message"] in ("Second?", "Third?", "Next?", "Last?")]
    assert len(later) == 4
    for r in later:
        sid = r["headers"].get("x-session") if send_as.startswith("header:") else r["body"]["meta"]["session"]
        assert sid in server.sessions
    if send_as.startswith("header:"):
        assert all("meta" not in r["body"] for r in server.requests)
    first_turns = [r for r in server.requests if r["body"]["message"].startswith("I am")]
    assert all("x-session" not in r["headers"] and "meta" not in r["body"] for r in first_turns)


def test_an_id_path_that_finds_nothing_is_a_failed_row_that_names_it(server: ChatServer) -> None:
    cfg = _http(server, "/session", session={"id_path": "data.sid", "send_as": "header:X-Session"})
    (res,) = _run(cfg, [["I am Ada.", "Second?"]])
    assert (res.ok, res.error_class, res.attempts) == (False, "TargetReplyError", 1)
    assert "turn 1 of 2 failed" in res.error_message
    assert "llm.session.id_path 'data.sid' finds nothing" in res.error_message
    assert "'session', 'answer'" in res.error_message and "Traceback" not in res.error_message
    assert len(server.requests) == 1  # the conversation ends there


@pytest.mark.parametrize(("session", "said"), [
    ({"id_path": "session[", "send_as": "x"}, "llm.session.id_path 'session[' is not a JMESPath expression"),
    ({"id_path": "session.id", "send_as": "header:"}, "names no valid header"),
    ({"id_path": "session.id", "send_as": "meta session"}, "is neither header:NAME nor a request field"),
    ({"id_path": "session.id", "send_as": "message.id"}, "llm.request has no JSON object there"),
])
def test_preflight_refuses_a_session_it_cannot_use(session: dict, said: str) -> None:
    from equilens.tasks.llm.http_provider import HttpProvider

    cfg = LLMConfig(provider="http", base_url="http://127.0.0.1:9/x", request={"message": "{prompt}"},
                    response_path="answer", session=session)
    with pytest.raises(ProviderError, match=said.replace("[", r"\[")):
        HttpProvider.preflight(cfg, set())


@pytest.mark.parametrize("path", ["/sse", "/ndjson"])
def test_a_streamed_reply_s_pieces_are_joined_and_the_first_token_timed(server: ChatServer, path: str) -> None:
    cfg = _http(server, path, request={"q": "{prompt}"}, response_path="delta", stream=True)
    (res,) = _run(cfg, [["hello there world"]])
    assert (res.ok, res.text, res.truncated) == (True, "you said: hello there world", False), res.error_message
    assert res.first_token_s is not None and 0 < res.first_token_s < res.latency_s - 0.05  # 5 pieces, 0.02 s apart


def test_a_stream_that_never_ends_fails_within_the_timeout_and_is_hung_up(server: ChatServer) -> None:
    cfg = _http(server, "/sse", request={"q": "{prompt}"}, response_path="delta", stream=True, timeout=1.0)
    t0 = time.monotonic()
    done, endless = _run(cfg, [["hello"], ["endless"]])
    assert (done.ok, done.text) == (True, "you said: hello")
    assert (endless.ok, endless.error_class) == (False, "Timeout")
    assert "no complete reply within 1 s (llm.timeout)" in endless.error_message  # it had begun to reply
    assert time.monotonic() - t0 < 8.0  # the 1 s deadline, not the endless stream
    while "endless" not in server.hangups and time.monotonic() - t0 < 5.0:  # the deadline closed the connection
        time.sleep(0.02)
    assert "endless" in server.hangups


@pytest.mark.parametrize("path", ["/sse", "/ndjson"])
def test_a_broken_event_is_a_failed_row_naming_it(server: ChatServer, path: str) -> None:
    cfg = _http(server, path, request={"q": "{prompt}"}, response_path="delta", stream=True)
    (res,) = _run(cfg, [["broken"]])
    assert (res.ok, res.error_class) == (False, "MalformedReplyError")
    assert "event 2 of the streamed reply is not JSON; it starts '{not json at all'" in res.error_message


def test_a_stream_past_the_answer_cap_is_cut_and_flagged(server: ChatServer) -> None:
    cfg = _http(server, "/sse", request={"q": "{prompt}"}, response_path="delta", stream=True, max_answer_chars=35)
    (res,) = _run(cfg, [["long 500"]])
    assert (res.ok, res.truncated, res.text) == (True, True, ("0123456789" * 4)[:35])
    assert res.latency_s < 500 * server.gap / 2  # reading stopped at the cap, not at the stream's end


def test_a_stream_whose_events_hold_no_answer_names_the_path(server: ChatServer) -> None:
    cfg = _http(server, "/ndjson", request={"q": "{prompt}"}, response_path="text", stream=True)
    (res,) = _run(cfg, [["hello"]])
    assert (res.ok, res.error_class) == (False, "TargetReplyError")
    assert "llm.response_path 'text' finds no string in any of the 4 events" in res.error_message


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
@pytest.mark.parametrize("stream", [False, True])
def test_openai_sends_the_history_and_reads_a_stream(server: ChatServer, client: str, stream: bool) -> None:
    cfg = LLMConfig(provider="openai", model="fake-chat", base_url=server.url + "/v1", max_retries=0, timeout=5.0,
                    http_client=client, stream=stream, system_prompt="Be brief.")
    (res,) = _run(cfg, [["I am Ada.", "Who am I?"]])
    tail = " " if stream else ""  # the fake streams each word with a space after it
    assert (res.ok, res.text) == (True, "4 messages; first: I am Ada." + tail), res.error_message
    first, second = server.bodies("/v1/chat/completions")
    assert second["messages"] == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "I am Ada."},
        {"role": "assistant", "content": "2 messages; first: I am Ada." + tail}, {"role": "user", "content": "Who am I?"}]
    assert first["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "I am Ada."}]
    if stream:
        assert second["stream"] is True and second["stream_options"] == {"include_usage": True}
        assert (res.prompt_tokens, res.completion_tokens) == (4, 6)  # from the last chunk's usage
        assert res.first_token_s is not None and 0 < res.first_token_s < res.latency_s
    else:
        assert "stream" not in second


def test_an_http_template_with_no_place_for_the_history_is_refused_before_any_call(server: ChatServer) -> None:
    cfg = _http(server, "/stateless", request={"message": "{prompt}"})
    with pytest.raises(ConfigError, match=r"The calls are conversations \(the prompts. turns, or an identity told in "
                                          r"the conversation\), but llm.request holds neither "
                                          r"\{messages\} nor \{history\} and llm.session is not set"):
        _run(cfg, [["My name is Ada.", "What did I say first?"]])
    assert server.requests == []
