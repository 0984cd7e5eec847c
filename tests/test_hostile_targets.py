"""Applications that misbehave on purpose: a token count of 10^30 is unknown usage and the answer is
kept (DuckDB never sees it), ``sys.exit()`` is a failed row naming it and the run goes on, an async
function that blocks its loop cannot outlast ``llm.timeout``, and each failure says what it was."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.logprobs import checked_logprob, logprob_problem
from equilens.tasks.storage.store import Store

from tests.fakes import apps


def _cfg(target: str, **kw: object) -> LLMConfig:
    return LLMConfig(**{"provider": "python", "target": f"tests.fakes.apps:{target}", "max_retries": 1,
                        "backoff_base": 0.01, **kw})


def _run(cfg: LLMConfig, prompts: list[str], store: Store | None = None) -> list:
    return run_requests([LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in prompts], cfg, store=store)


def test_implausible_token_counts_are_unknown_usage_and_the_answer_is_kept(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "e.duckdb"))
    cfg = _cfg("huge_usage")
    by = {r.request.prompt: r for r in _run(cfg, ["big", "neg", "text", "float", "ok"], store)}
    assert all(r.ok and r.text == f"answer to {p}" for p, r in by.items())
    assert all(r.prompt_tokens is None for p, r in by.items() if p != "ok") and by["ok"].prompt_tokens == 42
    assert all(r.completion_tokens is None for r in by.values())
    assert "usage unreadable (prompt_tokens=1000000000000000000000000000000" in by["big"].error_message
    again = _run(cfg, ["big"], store)  # cached: the rerun does not crash the same way
    assert again[0].cached and again[0].text == "answer to big"
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM response_cache").fetchone()[0] == 5


def test_sys_exit_in_an_application_is_a_failed_row_and_the_run_goes_on() -> None:
    by = {r.request.prompt: r for r in _run(_cfg("exits"), ["please exit", "stay"])}
    assert not by["please exit"].ok and by["please exit"].attempts == 1  # not retried
    assert "tests.fakes.apps:exits called sys.exit(3)" in by["please exit"].error_message
    assert by["stay"].ok and by["stay"].text == "fine"
    (res,) = _run(_cfg("aexits"), ["anything"])
    assert not res.ok and "called sys.exit(4)" in res.error_message


def test_an_async_function_that_blocks_its_loop_cannot_outlast_the_timeout() -> None:
    apps.reset()
    t0 = time.perf_counter()
    try:
        by = {r.request.prompt: r for r in _run(_cfg("ablocks", timeout=1.0, max_retries=0), ["block", "free"])}
        assert time.perf_counter() - t0 < 10  # the 30 s block did not hold the stage
    finally:
        apps.RELEASE.set()
    blocked = by["block"]
    assert not blocked.ok and "tests.fakes.apps:ablocks blocked its event loop" in blocked.error_message, blocked


def test_a_timeout_says_what_it_was() -> None:
    apps.reset()
    try:
        (res,) = _run(_cfg("hangs", timeout=0.3, max_retries=0), ["hello"])
    finally:
        apps.RELEASE.set()
    assert not res.ok and res.error_message == "TimeoutError: no complete reply within 0.3 s (llm.timeout)"


def test_a_log_probability_that_is_not_a_number_is_named() -> None:
    for sent, shown in (("high", "'high' (str) is not a number"), (True, "True (bool) is not a number"),
                        ({"p": 1}, "{'p': 1} (dict) is not a number")):
        assert logprob_problem(checked_logprob(sent)) == shown
    assert logprob_problem(checked_logprob(float("nan"))) == "nan is not finite"
