"""A set-up mistake is found by the first calls, not the last: a wrong token (401), a wrong path (404)
or a misspelt ``llm.response_path`` stops the run after a handful of calls with one paragraph naming
what to fix (exit 4); a request template can place each part of the person's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.cli import equilens
from tests.test_application_http import JsonApi, api  # noqa: F401 - fixture

PROMPTS = [f"Should she ask for a raise at job number {i}?" for i in range(30)]


def _config(tmp_path: Path, api: JsonApi, **llm: object) -> None:  # noqa: F811
    section = {"provider": "http", "base_url": api.url, "request": {"input": {"messages": [
        {"role": "user", "content": "{prompt}"}]}}, "response_path": "data.answer", "max_retries": 0,
        "max_concurrency": 2, "headers": {"Authorization": "Bearer ${EQUILENS_TEST_FIRST_TOKEN}"}, **llm}
    (tmp_path / "c.yaml").write_text(
        f"prompts: {{items: {json.dumps(PROMPTS)}}}\ncounterfactual: {{attributes: [gender], detect_names: false}}\n"
        f"llm: {json.dumps(section)}\nstorage: {{duckdb_path: e.duckdb, reports_dir: null}}\n")


@pytest.mark.parametrize(("reply", "llm", "cause", "fix"), [
    ((401, b'{"error": "invalid token"}'), {}, "(HTTP 401)", "check the key or token in llm.headers"),
    ((404, b'{"error": "no route"}'), {}, "(HTTP 404)", "check llm.base_url (its path)"),
    ((200, b'{"data": {"text": "yes"}, "meta": {}}'), {"response_path": "data.answr"},
     "(response_path 'data.answr')", "fix llm.response_path"),
])
def test_the_first_calls_failing_alike_stop_the_run_with_the_cause(
        tmp_path: Path, api: JsonApi, prefect_api_env: dict[str, str], reply: tuple, llm: dict,  # noqa: F811
        cause: str, fix: str) -> None:
    api.handle = lambda body, headers: (reply[0], reply[1], {})
    _config(tmp_path, api, **llm)
    out = equilens("run", "c.yaml", cwd=tmp_path, api=prefect_api_env, env={"EQUILENS_TEST_FIRST_TOKEN": "tok-abc-123456"})
    assert out.returncode == 4, out.stdout + out.stderr
    paragraph = out.stderr
    assert "error: the first 6 calls to" in paragraph and cause in paragraph and fix in paragraph, paragraph
    assert "Traceback" not in out.stdout + out.stderr and "tok-abc-123456" not in paragraph
    assert len(api.bodies) <= 6 + 2  # a handful, not the 30 x 3 variants x 2 calls
    if "response_path" in cause:
        assert "(its keys: 'data', 'meta')" in paragraph


def test_one_answer_among_the_first_calls_means_the_run_is_measured(
        tmp_path: Path, api: JsonApi, prefect_api_env: dict[str, str]) -> None:  # noqa: F811
    seen: list[int] = []

    def handle(body: dict, headers: dict) -> tuple:
        seen.append(1)
        if len(seen) == 3:
            return 200, json.dumps({"data": {"answer": "Yes, ask."}}).encode(), {}
        return 403, b'{"error": "forbidden"}', {}

    api.handle = handle
    _config(tmp_path, api)
    out = equilens("run", "c.yaml", cwd=tmp_path, api=prefect_api_env, env={"EQUILENS_TEST_FIRST_TOKEN": "tok-abc-123456"})
    assert "the first 6 calls" not in out.stdout + out.stderr  # measured: every call sent, judged at the end
    assert len(seen) == 180


def test_a_request_template_places_each_part_of_the_person_s_name(tmp_path: Path, api: JsonApi,  # noqa: F811
                                                                 prefect_api_env: dict[str, str]) -> None:
    api.handle = lambda body, headers: (200, json.dumps({"data": {"answer": "Ask for $50,000."}}).encode(), {})
    (tmp_path / "c.yaml").write_text(
        "assessment: identity\nprompts: {items: ['What salary should I ask for? Give one amount.']}\n"
        "identity: {races: [white, black], names_per_cell: 2, signals: [{name: app, placement: app, "
        "template: '{first_name}'}]}\n"
        f"llm: {{provider: http, base_url: '{api.url}', response_path: data.answer, max_retries: 0, request: "
        "{input: {messages: [{role: user, content: '{prompt}'}]}, customer: {given: '{first_name}', "
        "family: '{last_name}', full: '{name}'}}}\n"
        "metrics: {bootstrap_resamples: 20, permutations: 20}\nstorage: {duckdb_path: e.duckdb, reports_dir: null}\n")
    out = equilens("run", "c.yaml", cwd=tmp_path, api=prefect_api_env)
    assert out.returncode == 0, out.stdout + out.stderr
    customers = [json.loads(b)["customer"] for b in api.bodies]
    assert customers and all(c["given"] and f"{c['given']} {c['family']}".strip() == c["full"] for c in customers)
