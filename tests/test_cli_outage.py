"""An unreachable endpoint is a failed run: exit 4, the URL in the message, status failed, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from equilens.tasks.config import parse_config
from equilens.tasks.orchestration.outage import LLMOutageError, check_llm_failures

from tests.fakes.cli import equilens


def _cfg(**llm: object):
    return parse_config({"prompts": {"items": ["Is he a nurse?"]},
                         "llm": {"provider": "openai", "model": "m", "base_url": "http://u:pw@10.0.0.1:8000/v1", **llm}})


def _responses(ok: int, failed: int, refused: int = 0) -> pd.DataFrame:
    rows = ([{"ok": True, "refusal": False, "error_class": None, "error_message": None}] * ok
            + [{"ok": False, "refusal": False, "error_class": "ConnectionError",
                "error_message": "APIConnectionError: Connection error."}] * failed
            + [{"ok": False, "refusal": True, "error_class": "ContentFilter", "error_message": "filtered"}] * refused)
    return pd.DataFrame(rows)


def test_all_failed_names_the_endpoint_without_its_password() -> None:
    with pytest.raises(LLMOutageError) as err:
        check_llm_failures(_cfg(), _responses(0, 6))
    text = str(err.value)
    assert text.startswith("all 6 LLM calls failed: could not connect to http://")
    assert "10.0.0.1:8000/v1" in text and "pw" not in text.split("could not connect to")[1].split(".")[0]
    assert "ConnectionError (6)" in text and err.value.exit_code == 4


def test_a_long_first_error_is_cut_between_words_and_the_next_sentence_stands_apart() -> None:
    reply = "turn 2 of 2 failed, so the conversation ends there: the reply starts " + "word " * 100
    frame = pd.DataFrame([{"ok": False, "refusal": False, "error_class": "TargetReplyError", "error_message": reply,
                           "turns": None}] * 8)
    with pytest.raises(LLMOutageError) as err:
        check_llm_failures(_cfg(), frame)
    text = str(err.value)
    assert text.startswith("all 8 conversations failed: TargetReplyError from http://")
    assert "First TargetReplyError: turn 2 of 2 failed, so the conversation ends there: the reply starts word" in text
    assert " word ... The run is recorded as failed; fix the endpoint and" in text and " wor " not in text
    with pytest.raises(LLMOutageError, match="; fix the application and run the same command again"):
        check_llm_failures(_cfg(provider="python", target="my_app:answer", base_url=None), frame)


def test_partial_failures_pass_by_default_and_fail_past_the_share() -> None:
    check_llm_failures(_cfg(), _responses(1, 9))  # default 1.0: only an all-failed run fails
    check_llm_failures(_cfg(max_failed_share=0.5), _responses(5, 5))  # 50% is not more than 50%
    with pytest.raises(LLMOutageError, match=r"6 of 10 LLM calls failed \(60%, more than llm.max_failed_share=0.5\)"):
        check_llm_failures(_cfg(max_failed_share=0.5), _responses(4, 6))


def test_refusals_are_answers_not_failures() -> None:
    check_llm_failures(_cfg(), _responses(0, 0, refused=4))
    check_llm_failures(_cfg(), _responses(0, 3, refused=1))  # one refusal: not every call failed


def test_unreachable_endpoint_fails_the_run_with_exit_4(tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    db = tmp_path / "e.duckdb"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: outage\nprompts: {items: ['Is he a good nurse?', 'Should she get the loan?']}\n"
                   "counterfactual: {attributes: [gender], detect_names: false}\n"
                   "llm: {provider: openai, model: fake, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n"
                   f"storage: {{duckdb_path: '{db}', reports_dir: '{tmp_path / 'runs'}'}}\n")
    out = equilens("run", str(cfg), cwd=tmp_path, api=prefect_api_env, process=True, columns=None)
    whole = out.stdout + out.stderr
    assert out.returncode == 4, whole
    assert "Traceback" not in whole and "LLMOutageError(" not in whole, whole  # Prefect's copy is filtered
    [error] = [line for line in out.stderr.splitlines() if line.startswith("error:")]  # after preflight warnings
    # 2 prompts x 3 gender groups, each variant with its same-group control: 12 calls
    assert error.startswith("error: all 12 LLM calls failed: could not connect to http://127.0.0.1:9/v1")
    assert "Created temporary directory" not in whole  # great-expectations' INFO line
    with duckdb.connect(str(db), read_only=True) as con:
        status, summary = con.execute("SELECT status, summary FROM runs").fetchone()
        stored = con.execute("SELECT count(*) FROM responses").fetchone()[0]
    assert status == "failed" and "could not connect to http://127.0.0.1:9/v1" in json.loads(summary)["error"]
    assert stored == 12  # the failures are stored, per row (controls included)


def test_the_llm_stage_counts_conversations_as_conversations() -> None:
    from equilens.tasks.pipeline.prefect_tasks import progress_unit
    from equilens.tasks.turns import join_turns

    told = join_turns(["Hi, I'm Sam.", "What should I ask for?"])
    assert progress_unit(pd.DataFrame({"text": ["a", "b"]})) == ("LLM calls", "call")
    assert progress_unit(pd.DataFrame({"text": [told, told]})) == ("conversations", "conversation")
    assert progress_unit(pd.DataFrame({"text": ["a", told]})) == ("LLM calls and conversations", "call")
