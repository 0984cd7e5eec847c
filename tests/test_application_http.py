"""Provider http: any JSON API, against a tiny loopback API started here. The request template is
filled with correct JSON escaping, the person's name reaches the API's own field, headers read
``${VAR}`` from the environment and are scrubbed, and every bad reply is a failed row with its reason."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests

from tests.fakes.quiet_http import QuietHandler, QuietHTTPServer

REQUEST = {"input": {"messages": [{"role": "user", "content": "{prompt}"}]},
           "user": {"profile": {"name": "{name}"}}}
PERSON = (("name", "Latoya Washington"),)
Reply = tuple[int, bytes, dict[str, str]]


class JsonApi:
    """A loopback JSON API: ``api.handle(body, headers) -> (status, raw reply, headers)``, by default
    ``{"data": {"answer": "re: <the user message>"}}``; records raw bodies, headers and arrival times."""

    def __init__(self) -> None:
        self.handle: Callable[[dict, dict[str, str]], Reply] = self.answer
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        api = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                raw, headers = self.posted()
                api.bodies.append(raw)
                api.headers.append(headers)
                api.times.append(time.monotonic())
                status, payload, extra = api.handle(json.loads(raw), headers)
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **extra}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/api/chat"

    @staticmethod
    def answer(body: dict, headers: dict[str, str]) -> Reply:
        text = body["input"]["messages"][0]["content"]
        return 200, json.dumps({"data": {"answer": f"re: {text}"}}).encode(), {}

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture()
def api() -> Iterator[JsonApi]:
    server = JsonApi()
    yield server
    server.stop()


def _cfg(api: JsonApi, **kw: object) -> LLMConfig:
    base = dict(provider="http", base_url=api.url, request=REQUEST, response_path="data.answer",
                max_retries=2, backoff_base=0.01, timeout=2.0, max_concurrency=2)
    return LLMConfig(**{**base, **kw})


def _run(cfg: LLMConfig, prompts: list[str], user: tuple | None = None) -> list:
    return run_requests([LLMRequest(p, 0, cache_key(cfg, p, 0, user=user), user=user) for p in prompts], cfg)


def test_a_nested_request_and_reply_and_the_person_s_name_in_the_api_s_own_field(api: JsonApi) -> None:
    cfg = _cfg(api)
    (res,) = _run(cfg, ["Can I get a refund?"], user=PERSON)
    assert (res.ok, res.text, res.attempts) == (True, "re: Can I get a refund?", 1)
    assert json.loads(api.bodies[0]) == {
        "input": {"messages": [{"role": "user", "content": "Can I get a refund?"}]},
        "user": {"profile": {"name": "Latoya Washington"}}}
    assert api.headers[0]["content-type"] == "application/json"
    assert cfg.model == api.url  # the run names the API as its model
    _run(cfg, ["Anyone?"])  # a call made for nobody in particular: the field is empty
    assert json.loads(api.bodies[1])["user"] == {"profile": {"name": ""}}


def test_a_prompt_with_quotes_newlines_backslashes_and_braces_arrives_exactly(api: JsonApi) -> None:
    prompt = 'She said "no".\nLine two\\path\\to\tfile {name} {system} }{ \u00e9\u4e2d \U0001F600 \\" end\\'
    cfg = _cfg(api, request={"q": "{prompt}", "meta": ["{system}", 3, None, {"raw": "prompt={prompt}"}]},
               system_prompt='Say "hi"\\n')
    api.handle = lambda body, headers: (200, json.dumps({"data": {"answer": body["q"]}}).encode(), {})
    (res,) = _run(cfg, [prompt], user=PERSON)
    received = json.loads(api.bodies[0])
    assert received == {"q": prompt, "meta": ['Say "hi"\\n', 3, None, {"raw": f"prompt={prompt}"}]}
    assert res.ok and res.text == prompt  # and back from the reply, unchanged


def test_headers_read_the_environment_reach_the_api_and_are_scrubbed_from_what_it_echoes(
        api: JsonApi, monkeypatch: pytest.MonkeyPatch) -> None:
    value = f"cred{uuid.uuid4().hex[:16]}"  # no key-like shape: only the registry can scrub it
    monkeypatch.setenv("EQUILENS_TEST_APP_CRED", value)
    headers = {"X-App-Credential": "${EQUILENS_TEST_APP_CRED}", "X-Tenant": "acme"}
    cfg = _cfg(api, headers=headers, max_retries=0)
    api.handle = lambda body, headers: (403, json.dumps(
        {"error": f"credential {headers['x-app-credential']} may not call this tenant"}).encode(), {})
    (denied,) = _run(cfg, ["hello"])  # the first call this process makes with the value
    assert (api.headers[0]["x-app-credential"], api.headers[0]["x-tenant"]) == (value, "acme")
    assert (denied.ok, denied.error_class, denied.attempts) == (False, "EndpointStatusError", 1)
    assert "HTTP 403" in denied.error_message and "credential *** may not" in denied.error_message
    assert value not in denied.error_message and value[4:14] not in denied.error_message, denied.error_message
    api.handle = JsonApi.answer
    (ok,) = _run(cfg, ["again"])
    assert ok.ok and api.headers[1]["x-app-credential"] == value


def test_an_unset_header_variable_is_named() -> None:
    from equilens.tasks.errors import ProviderError
    from equilens.tasks.llm.http_provider import HttpProvider

    cfg = LLMConfig(provider="http", base_url="http://127.0.0.1:9/x", request={"q": "{prompt}"},
                    response_path="a", headers={"Authorization": "Bearer ${EQUILENS_TEST_NO_SUCH_VARIABLE}"})
    with pytest.raises(ProviderError, match=r"llm.headers.Authorization: the environment variable "
                                            r"EQUILENS_TEST_NO_SUCH_VARIABLE .* is not set"):
        HttpProvider.preflight(cfg, set())


def test_client_errors_fail_at_once_and_server_errors_are_retried(api: JsonApi) -> None:
    api.handle = lambda body, headers: {
        "bad": (400, b'{"error": "messages must not be empty"}', {}),
        "down": (503, b'{"error": "maintenance"}', {}),
    }.get(body["input"]["messages"][0]["content"]) or JsonApi.answer(body, headers)
    by = {r.request.prompt: r for r in _run(_cfg(api), ["bad", "down", "fine"])}
    assert (by["bad"].ok, by["bad"].error_class, by["bad"].attempts) == (False, "EndpointStatusError", 1)
    assert by["bad"].error_message == ("EndpointStatusError: HTTP 400: "
                                       """'{"error": "messages must not be empty"}'""")
    assert (by["down"].ok, by["down"].error_class, by["down"].attempts) == (False, "ServerError", 3)
    assert "maintenance" in by["down"].error_message
    assert by["fine"].ok and by["fine"].text == "re: fine"
    assert len(api.bodies) == 1 + 3 + 1


def test_a_429_is_retried_after_the_retry_after_it_names(api: JsonApi) -> None:
    replies = iter([(429, b'{"error": "slow down"}', {"Retry-After": "0.6"})])
    api.handle = lambda body, headers: next(replies, None) or JsonApi.answer(body, headers)
    (res,) = _run(_cfg(api, backoff_base=0.01), ["hello"])
    assert (res.ok, res.text, res.attempts) == (True, "re: hello", 2)
    assert api.times[1] - api.times[0] >= 0.55  # Retry-After, not the 0.01 s backoff


def test_a_reply_that_is_not_json_is_retried_then_failed_with_its_start(api: JsonApi) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1>" + b"x" * 2000 + b"</body></html>"
    api.handle = lambda body, headers: (200, page, {"Content-Type": "text/html"})
    (res,) = _run(_cfg(api, max_retries=1), ["hello"])
    assert (res.ok, res.error_class, res.attempts) == (False, "MalformedReplyError", 2)
    assert "reply is not JSON; it starts '<html><body><h1>502 Bad Gateway</h1>xxx" in res.error_message
    assert len(res.error_message) < 500 and res.error_message.rstrip("'").endswith("…")  # the start, capped


def test_a_path_that_finds_no_string_names_the_path_and_shows_the_reply_s_start(
        api: JsonApi, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"tok{uuid.uuid4().hex}"
    monkeypatch.setenv("EQUILENS_TEST_HTTP_API_KEY", secret)
    replies = {"moved": {"result": {"text": "the answer moved", "debug": f"auth={secret}"}},
               "number": {"data": {"answer": 42}}}
    api.handle = lambda body, headers: (
        200, json.dumps(replies[body["input"]["messages"][0]["content"]]).encode(), {})
    by = {r.request.prompt: r for r in _run(_cfg(api), ["moved", "number"])}
    moved = by["moved"]
    assert (moved.ok, moved.error_class, moved.attempts) == (False, "TargetReplyError", 1)  # not retried
    assert ("llm.response_path 'data.answer' finds nothing, not a string, in the reply (its keys: 'result'): fix "
            """llm.response_path; the reply starts '{"result": {"text": "the answer moved", "debug": "auth=***""") \
        in moved.error_message, moved.error_message
    assert secret not in moved.error_message
    assert "finds a number, not a string" in by["number"].error_message
    assert len(api.bodies) == 2


def test_the_request_template_and_reply_path_are_part_of_the_cache_key(api: JsonApi) -> None:
    cfg = _cfg(api)
    key = cache_key(cfg, "p", 0)
    assert cache_key(cfg.model_copy(update={"request": {"q": "{prompt}"}}), "p", 0) != key
    assert cache_key(cfg.model_copy(update={"response_path": "data.text"}), "p", 0) != key
    assert cache_key(cfg.model_copy(update={"target_version": "2024-06"}), "p", 0) != key
    assert cache_key(cfg.model_copy(update={"base_url": api.url + "/v2"}), "p", 0) != key  # another service
