"""Secrets a run sent that come back in an answer, and keys in an application's exceptions, are never
stored: an answer loses each secret value the run holds (an expanded ``${VAR}``, an API key) and the
row says so; a failure message loses the common key formats and the values of variables whose names
say key, token, secret, pass(word), credential or auth."""

from __future__ import annotations

import json
import uuid

import duckdb
import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.base import SECRET_REMOVED, scrub_answer
from equilens.tasks.llm.targets import check_no_literal_secrets
from equilens.tasks.storage.store import Store

from tests.test_application_http import JsonApi, api  # noqa: F401 - fixture


def _requests(cfg: LLMConfig, prompts: list[str]) -> list[LLMRequest]:
    return [LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in prompts]


def test_an_app_echoing_its_request_headers_has_the_token_taken_out_of_the_stored_answer(
        api: JsonApi, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # noqa: F811
    token = f"tok-{uuid.uuid4().hex}"
    monkeypatch.setenv("EQUILENS_TEST_APP_TOKEN", token)
    api.handle = lambda body, headers: (200, json.dumps({"data": {"answer": (
        f"Your request: {json.dumps(headers)}. Answer: yes")}}).encode(), {})
    cfg = LLMConfig(provider="http", base_url=api.url, request={"input": {"messages": [
        {"role": "user", "content": "{prompt}"}]}}, response_path="data.answer", max_retries=0,
        headers={"Authorization": "Bearer ${EQUILENS_TEST_APP_TOKEN}"})  # a variable inside a value
    check_no_literal_secrets(cfg)
    store = Store(str(tmp_path / "e.duckdb"))
    (res,) = run_requests(_requests(cfg, ["May I?"]), cfg, store=store)
    assert api.headers[0]["authorization"] == f"Bearer {token}"  # the app got it...
    assert res.ok and "Answer: yes" in res.text and token not in res.text and "Bearer ***" in res.text
    assert res.error_message.startswith(SECRET_REMOVED)  # ...and the row says one was removed
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        cached = [t for (t,) in con.execute("SELECT text FROM response_cache").fetchall()]
    assert cached and all(token not in t for t in cached)


def test_a_key_written_around_a_variable_is_still_refused() -> None:
    cfg = LLMConfig(provider="http", base_url="http://127.0.0.1:9/x", request={"q": "{prompt}"}, response_path="a",
                    headers={"Authorization": "Bearer sk-live-0123456789abcdef ${X}"})
    with pytest.raises(ProviderError, match="llm.headers.Authorization"):
        check_no_literal_secrets(cfg)


def test_vendor_keys_and_secret_variables_in_an_application_s_exception_are_scrubbed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stripe, db = f"rk{uuid.uuid4().hex[:14]}", f"pw{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("EQUILENS_TEST_STRIPE_KEY", stripe)
    monkeypatch.setenv("EQUILENS_TEST_DB_PASS", db)
    cfg = LLMConfig(provider="python", target="tests.fakes.apps:raises_vendor_keys", max_retries=0)
    (res,) = run_requests(_requests(cfg, ["hello"]), cfg)
    assert not res.ok and res.error_message.startswith("RuntimeError: upstream refused")
    for leaked in ("sk_live_51HxQjK2", "ghp_16C7e42F", "AKIAIOSFODNN7", "xoxb-2048", "AIzaSyA1b2C3",
                   "eyJhbGciOiJIUzI1NiJ9", stripe, db):
        assert leaked not in res.error_message, (leaked, res.error_message)
    assert "stripe ***" in res.error_message and "db ***" in res.error_message


def test_an_answer_loses_only_what_is_certainly_a_secret() -> None:
    text = "Basic steps: pay the token fee, then set password: strong. Key AKIAIOSFODNN7EXAMPLE here."
    out, removed = scrub_answer(text, ["secretvalue123"])
    assert removed and out == "Basic steps: pay the token fee, then set password: strong. Key *** here."
    assert scrub_answer("nothing to see", ["secretvalue123"]) == ("nothing to see", False)
