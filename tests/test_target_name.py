"""What was tested is named: ``llm.target_name`` (and ``name=`` in ``equilens.assess`` for an
application object) in the stored run and the report; a name with control characters is one
paragraph and exit 2; ``--set`` keeps a value's text for a key that wants a string."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from equilens.tasks.config import LLMConfig, SetText, load_config
from pydantic import ValidationError

from tests.fakes.cli import equilens


def test_target_name_names_the_application_and_must_be_printable() -> None:
    cfg = LLMConfig(provider="python", target="tests.fakes.apps:answer", target_name="loan-bot v3")
    assert cfg.shown_name == "loan-bot v3" and cfg.model == "tests.fakes.apps:answer"
    assert LLMConfig(provider="python", target="tests.fakes.apps:answer").shown_name == "tests.fakes.apps:answer"
    for bad in ("loan\x1b[31mbot", "bot\n2", "  "):
        with pytest.raises(ValidationError, match="printable text"):
            LLMConfig(provider="python", target="tests.fakes.apps:answer", target_name=bad)


def test_a_control_character_in_target_name_is_one_paragraph_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "prompts: {items: ['Is he a good nurse?']}\n"
        "llm: {provider: python, target: 'tests.fakes.apps:answer', target_name: \"bot\\x07\"}\n"
        "storage: {duckdb_path: e.duckdb, reports_dir: null}\n")
    out = equilens("run", "c.yaml", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "llm.target_name" in out.stderr, out.stderr
    assert "Traceback" not in out.stdout + out.stderr and not (tmp_path / "e.duckdb").exists()


def test_set_keeps_the_text_for_a_string_key_and_the_number_for_the_others(tmp_path: Path) -> None:
    from equilens.flows.running.launch import parse_sets

    sets = parse_sets(["llm.target_version=2", "llm.count=3", "name=2.10", "llm.temperature=0.5",
                       "storage.reports_dir=null", "validation.enabled=false"])
    assert isinstance(sets["llm.target_version"], SetText)
    cfg = load_config("configs/demo.yaml", sets)
    assert cfg.llm.target_version == "2" and cfg.name == "2.10"  # the text as typed, not 2.1
    assert cfg.llm.count == 3 and cfg.llm.temperature == 0.5 and cfg.validation.enabled is False
    assert cfg.storage.reports_dir is None


@pytest.mark.filterwarnings("ignore:1 prompt\\(s\\) mention gender")
def test_assess_names_an_application_object_by_name(tmp_path: Path, prefect_harness) -> None:
    import functools

    import equilens

    def answer(prompt: str, system: str | None = None, tone: str = "plain") -> str:
        return f"[{tone}] It depends."

    result = equilens.assess(["Should he open a bakery?"], model=functools.partial(answer, tone="warm"),
                             name="bakery-bot", db=tmp_path / "e.duckdb", counterfactual__attributes=["gender"],
                             counterfactual__detect_names=False, storage__reports_dir=None)
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        (model,) = con.execute("SELECT model FROM runs WHERE run_id = ?", [result.run_id]).fetchone()
    assert model == "bakery-bot"


def test_without_a_name_a_partial_and_a_chain_are_named_by_what_they_run() -> None:
    import functools

    from equilens.flows.api.config_builder import application_section
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_openai import ChatOpenAI

    from tests.fakes import apps

    assert application_section(functools.partial(apps.answer, tone="warm"))["model"] == \
        "tests.fakes.apps:answer (partial)"
    model = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test-0123456789", base_url="http://127.0.0.1:9/v1")
    chain = ChatPromptTemplate.from_messages([("user", "{q}")]) | model | StrOutputParser()
    assert application_section(chain)["model"] == "RunnableSequence(ChatOpenAI gpt-4o-mini)"
    assert application_section(model)["model"] == "ChatOpenAI gpt-4o-mini"
    assert application_section(apps.answer)["model"] == "tests.fakes.apps:answer"
