"""An endpoint that ignores ``max_tokens`` and sends a 50 MB answer: the reply is read no further than
the answer cap, and the answer is stored cut, flagged and counted per group.

Before, the whole body was read and stored (52,428,800 characters, a 4 GB peak in memory, exit 0).
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import duckdb
import pytest
from equilens.tasks.config import LLMConfig, parse_config
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.base import ANSWER_CUT, answer_char_cap, reply_byte_cap
from equilens.tasks.llm.openai_provider import parse_chat_completion

from tests.fakes.openai_server import HUGE_TEXT, FakeOpenAIServer, openai_server  # noqa: F401 - fixture

HUGE = 50 * 2**20  # characters (and bytes: the huge reply is ASCII)


def _cfg(server: FakeOpenAIServer, **kw: object) -> LLMConfig:
    return LLMConfig(**{"provider": "openai", "model": "fake", "base_url": server.base_url, "max_retries": 0,
                        "timeout": 30.0, **kw})


def _one(cfg: LLMConfig, prompt: str):  # an LLMResult
    (res,) = run_requests([LLMRequest(prompt, 0, cache_key(cfg, prompt, 0))], cfg)
    return res


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_50_mb_answer_is_read_only_up_to_the_cap(openai_server: FakeOpenAIServer, transport: str) -> None:  # noqa: F811
    cfg = _cfg(openai_server, http_client=transport)
    assert _one(cfg, "warm up").text == "echo: warm up"  # imports and first connections outside the measurement
    openai_server.huge_reply = HUGE
    tracemalloc.start()
    try:
        res = _one(cfg, "tell me everything")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    cap = answer_char_cap(cfg)
    assert cap == 65_536  # max_tokens 64: 128 x 64 is below the floor
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB for a {HUGE / 2**20:.0f} MiB reply"
    assert res.ok and res.truncated and len(res.text) == cap
    assert res.text == (HUGE_TEXT * (cap // len(HUGE_TEXT) + 1))[:cap]
    assert res.error_message.startswith(ANSWER_CUT) and "65,536 characters" in res.error_message


def test_the_cap_follows_max_tokens_and_the_setting(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    assert answer_char_cap(_cfg(openai_server, max_tokens=8192)) == 8192 * 16 * 8
    assert answer_char_cap(_cfg(openai_server, max_answer_chars=100)) == 100
    assert reply_byte_cap(_cfg(openai_server, max_answer_chars=100)) < 70_000
    cfg = _cfg(openai_server, max_answer_chars=20)
    long = _one(cfg, "a prompt that makes the echo longer than twenty characters")
    assert long.ok and long.truncated and long.text == "echo: a prompt that "
    assert long.error_message.startswith(ANSWER_CUT)
    short = _one(cfg, "short")
    assert short.text == "echo: short" and not short.truncated and short.error_message is None
    # a set cap is part of the cache key (what is kept differs); the default keeps the keys as they were
    assert cache_key(cfg, "p", 0) != cache_key(_cfg(openai_server), "p", 0)


@pytest.mark.parametrize("content", ["plain words " * 50, "caf\u00e9 \u2603 \U0001f600 \"quoted\" \\ " * 40])
def test_a_body_cut_anywhere_gives_the_answer_as_far_as_it_came(content: str) -> None:
    body = json.dumps({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                               "finish_reason": "stop"}]}).encode()
    start = body.index(b'"content"') + 12
    for cut in range(start, start + 200):  # through escapes, multi-byte characters and surrogate pairs
        comp = parse_chat_completion(body[:cut], max_chars=10_000, whole=False)
        assert comp.truncated and content.startswith(comp.text), cut
        assert len(comp.text) >= (cut - start) // 12 - 1
    assert parse_chat_completion(body, max_chars=30).text == content[:30]


def test_a_run_stores_the_cut_answers_flagged_and_counts_them_per_group(prefect_harness, openai_server,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    from equilens.flows.counterfactual import counterfactual_assessment

    openai_server.huge_reply = HUGE
    cfg = parse_config({
        "name": "huge", "prompts": {"items": ["Is he a good nurse?"]},
        "counterfactual": {"attributes": ["gender"], "detect_names": False},
        "llm": {"provider": "openai", "model": "fake", "base_url": openai_server.base_url, "max_retries": 0,
                "timeout": 30, "max_answer_chars": 5_000},
        "metrics": {"bootstrap_resamples": 20},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = counterfactual_assessment(cfg)
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT grp, ok, length(text), error_message FROM responses WHERE run_id = ?",
                           [result["run_id"]]).fetchall()
    assert len(rows) >= 2
    assert all(ok and n == 5_000 and msg.startswith(ANSWER_CUT) for _, ok, n, msg in rows), rows
    report = Path(result["report"]).read_text(encoding="utf-8")
    section = report[report.index("<section id=completion>"):]
    section = section[:section.index("</section>")]
    assert "<th>cut</th>" in section and "<td>male</td>" in section


def test_the_terminal_counts_the_answers_cut_at_the_cap(prefect_api_env: dict[str, str], openai_server,  # noqa: F811
                                                        tmp_path: Path) -> None:
    """Through the CLI: the responses line says how many answers were cut at llm.max_answer_chars,
    as the report counts them; a run with none cut does not mention the cap."""
    import math

    from tests.fakes.cli import equilens

    def reply(body: dict) -> tuple[str, dict[str, float]]:  # Black applicants get a long answer
        text = body["messages"][-1]["content"]
        p = 0.3 + 0.4 * (sum(map(ord, text)) % 97) / 97
        return ("Yes. " + "It depends on the income. " * 10 if " Black " in text else "Yes."), \
            {"Yes": math.log(p), "No": math.log(1 - p)}

    openai_server.reply = reply
    rows = [{"filled_template": f"Case {k}: a {age}-year-old {race} {who} asks for a loan. Should it be approved?",
             "decision_question_id": k, "age": age, "gender": gender, "race": race, "fill_type": "explicit"}
            for k in range(2) for age in (30, 60) for gender, who in (("male", "man"), ("female", "woman"))
            for race in ("white", "Black")]
    (tmp_path / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    llm = (f"{{provider: openai, model: fake, base_url: '{openai_server.base_url}', max_retries: 0, "
           "max_tokens: 2, max_answer_chars: 20}")
    (tmp_path / "c.yaml").write_text(f"name: cut\nassessment: decisions\ndecisions: {{path: set.jsonl}}\nllm: {llm}\n"
                                     "storage: {duckdb_path: d.duckdb, reports_dir: null}\n")
    out = equilens("run", "c.yaml", cwd=tmp_path, api=prefect_api_env, columns=200)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "responses: 16 ok, 0 failed, 0 refusals, 0 from cache, 8 cut at the answer cap " \
           "(llm.max_answer_chars)\n" in out.stdout, out.stdout
    again = equilens("run", "c.yaml", "--set", "llm.max_answer_chars=2000", cwd=tmp_path, api=prefect_api_env,
                     columns=200)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "responses: 16 ok, 0 failed, 0 refusals, 0 from cache\n" in again.stdout, again.stdout
