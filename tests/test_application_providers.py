"""The application as the model under test, provider python: a function named by its import path
(or handed over as an object) answers through the same LLM stage as an endpoint: concurrency, the
per-attempt deadline, retries, failed rows with scrubbed messages, and the cache keyed on the
application. The functions under test live in tests/fakes/apps.py."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.targets import OBJECT_MARK, hand_over, resolve
from equilens.tasks.storage.store import Store

from tests.fakes import apps

KEY = "zzAppSecretValue-7Q2w9E4r"  # an application's key in the environment (EQUILENS_TEST_APP_API_KEY)


@pytest.fixture(autouse=True)
def _fresh_apps() -> Iterator[None]:
    apps.reset()
    yield
    apps.RELEASE.set()  # a hung call's thread returns


def _cfg(target: str, **kw: object) -> LLMConfig:
    base = dict(provider="python", target=f"tests.fakes.apps:{target}", max_retries=2, backoff_base=0.01,
                timeout=2.0, max_concurrency=4)
    return LLMConfig(**{**base, **kw})


def _reqs(cfg: LLMConfig, prompts: list[str], count: int = 1) -> list[LLMRequest]:
    return [LLMRequest(p, i, cache_key(cfg, p, i)) for p in prompts for i in range(count)]


def test_a_sync_function_answers_with_its_own_token_counts_and_gets_the_system_message() -> None:
    cfg = _cfg("answer", target_kwargs={"tone": "formal"}, system_prompt="Answer in one line.")
    results = run_requests(_reqs(cfg, ["How do I reset my password?", "Hi"]), cfg)
    assert [r.text for r in results] == ["[formal] How do I reset my password?", "[formal] Hi"]
    assert [(r.ok, r.prompt_tokens, r.completion_tokens, r.attempts) for r in results] == [(True, 6, 7, 1),
                                                                                           (True, 1, 7, 1)]
    assert cfg.model == "tests.fakes.apps:answer"  # the run names the application as its model
    received = {(c["system"], c["tone"], c["user"]) for c in apps.CALLS}
    assert received == {("Answer in one line.", "formal", None)}


def test_an_async_function_answers_a_string_on_the_loop_and_a_call_s_own_system_message_wins() -> None:
    cfg = _cfg("aanswer")
    reqs = [LLMRequest("first", 0, "k1"), LLMRequest("second", 0, "k2", system="You are a loan officer.")]
    results = run_requests(reqs, cfg)
    assert [(r.ok, r.text, r.prompt_tokens) for r in results] == [(True, "async: first", None),
                                                                 (True, "async: second", None)]
    by = {c["prompt"]: c["system"] for c in apps.CALLS}
    assert by == {"first": cfg.system_prompt, "second": "You are a loan officer."}


def test_a_person_s_fields_reach_the_function_as_user() -> None:
    cfg = _cfg("answer")
    person = (("name", "Latoya Washington"),)
    (res,) = run_requests([LLMRequest("Should I ask for a raise?", 0, "k", user=person)], cfg)
    assert res.ok and apps.CALLS[0]["user"] == {"name": "Latoya Washington"}
    assert cache_key(cfg, "p", 0, user=person) != cache_key(cfg, "p", 0)  # the person is part of the call


def test_a_function_raising_on_some_prompts_fails_those_rows_after_retries_with_a_scrubbed_message(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EQUILENS_TEST_APP_API_KEY", KEY)
    cfg = _cfg("flaky", max_retries=2)
    by = {r.request.prompt: r for r in run_requests(_reqs(cfg, ["good one", "bad one", "good two"]), cfg)}
    assert [(by[p].ok, by[p].text) for p in ("good one", "good two")] == [(True, "fine: good one"),
                                                                          (True, "fine: good two")]
    bad = by["bad one"]
    assert (bad.ok, bad.error_class, bad.attempts) == (False, "RuntimeError", 3)
    assert bad.error_message.startswith("RuntimeError: upstream refused 'bad one' with key ***")
    assert KEY not in bad.error_message and "sk-liveKEY" not in bad.error_message, bad.error_message
    assert sum(c["prompt"] == "bad one" for c in apps.CALLS) == 3  # retried like an endpoint's error


def test_a_target_kwargs_value_read_from_the_environment_is_scrubbed_from_the_first_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    value = f"cred{uuid.uuid4().hex[:16]}"  # a variable not named like a key, a value not shaped like one
    monkeypatch.setenv("EQUILENS_TEST_BACKEND_CREDENTIAL", value)
    cfg = _cfg("leaky", target_kwargs={"credential": "${EQUILENS_TEST_BACKEND_CREDENTIAL}"}, max_retries=0)
    (res,) = run_requests(_reqs(cfg, ["hello"]), cfg)
    assert apps.CALLS[0]["credential"] == value  # the function got the value
    assert res.error_message == "PermissionError: backend refused credential ***", res.error_message


@pytest.mark.parametrize(("prompt", "named"), [("number", "int"), ("list", "list"),
                                               ("dict", "a dict whose 'text' is NoneType")])
def test_a_return_value_that_is_no_answer_is_a_failed_row_naming_its_type_and_not_retried(prompt: str,
                                                                                         named: str) -> None:
    cfg = _cfg("wrong_type", max_retries=3)
    (res,) = run_requests(_reqs(cfg, [prompt]), cfg)
    assert (res.ok, res.error_class, res.attempts) == (False, "TargetReplyError", 1)
    assert f"the target returned {named}" in res.error_message, res.error_message
    assert len(apps.CALLS) == 1


def test_a_hanging_function_times_out_per_attempt_and_the_run_goes_on() -> None:
    cfg = _cfg("hangs", timeout=0.3, max_retries=1)
    t0 = time.monotonic()
    (res,) = run_requests(_reqs(cfg, ["are you there?"]), cfg)
    took = time.monotonic() - t0
    assert (res.ok, res.error_class, res.attempts) == (False, "Timeout", 2)
    assert len(apps.CALLS) == 2 and 0.6 <= took < 5, took  # two deadlines of 0.3 s, not the 30 s hang


@pytest.mark.parametrize("target", ["slow", "aslow"])
def test_max_concurrency_bounds_the_calls_in_flight(target: str) -> None:
    cfg = _cfg(target, max_concurrency=3)
    results = run_requests(_reqs(cfg, [f"q{i}" for i in range(24)]), cfg)
    assert all(r.ok for r in results) and results[5].text == f"{target}: q5"
    assert apps.PEAK["peak"] == 3  # reached, never passed


def test_a_rerun_with_the_same_store_makes_no_call(tmp_path: Path) -> None:
    cfg = _cfg("answer")
    store = Store(tmp_path / "e.duckdb")
    first = run_requests(_reqs(cfg, ["a", "b"], count=2), cfg, store)
    assert len(apps.CALLS) == 4 and not any(r.cached for r in first)
    second = run_requests(_reqs(cfg, ["a", "b"], count=2), cfg, store)
    assert len(apps.CALLS) == 4 and all(r.cached for r in second)
    assert [(r.text, r.prompt_tokens) for r in second] == [(r.text, r.prompt_tokens) for r in first]


def test_the_cache_key_names_the_application_its_version_and_kwargs_but_no_secret(tmp_path: Path) -> None:
    cfg = _cfg("answer", target_kwargs={"tone": "plain"})
    key = cache_key(cfg, "p", 0)
    changed = {
        "target_version": cfg.model_copy(update={"target_version": "2"}),
        "target_kwargs": cfg.model_copy(update={"target_kwargs": {"tone": "formal"}}),
        "target": cfg.model_copy(update={"target": "tests.fakes.apps:no_user"}),
    }
    assert all(cache_key(c, "p", 0) != key for c in changed.values())
    keyed = [cfg.model_copy(update={"target_kwargs": {"tone": "plain", "api_key": f"${{{var}}}"}})
             for var in ("KEY_ONE", "KEY_TWO")]
    assert cache_key(keyed[0], "p", 0) == cache_key(keyed[1], "p", 0)  # which key is no part of the answer

    store = Store(tmp_path / "e.duckdb")
    run_requests(_reqs(cfg, ["a"]), cfg, store)
    bumped = changed["target_version"]
    (again,) = run_requests(_reqs(bumped, ["a"]), bumped, store)
    assert not again.cached and len(apps.CALLS) == 2  # the application changed: asked again


def test_an_object_handed_over_resolves_in_this_process() -> None:
    seen: list[str] = []

    def local_app(prompt: str) -> str:  # no import path reaches it
        seen.append(prompt)
        return prompt.upper()

    target = hand_over(local_app)
    assert OBJECT_MARK in target and target.startswith(f"{__name__}:")
    assert resolve(target) is local_app
    cfg = LLMConfig(provider="python", target=target, max_retries=0)
    assert [r.text for r in run_requests(_reqs(cfg, ["quiet", "please"]), cfg)] == ["QUIET", "PLEASE"]
    assert seen == ["quiet", "please"]
    assert hand_over(apps.answer) == "tests.fakes.apps:answer"  # an importable function keeps its path
