"""Answers that follow the application: the cache key of a ``python`` or ``langchain`` target holds
the fingerprint of its code (its package's modules, a LangChain object's configuration), so an edit
means new calls and unchanged code is read back from the cache in any process; installed libraries
are not part of it; ``llm.target_version`` overrides it. An ``http`` target without a version is
reused only within one run (a resumed run continues the interrupted one). A stage that takes answers
from the cache says how many and why, and the run's summary records it.

Each test writes a small application package into ``tmp_path`` and imports it from there. "A second
run" forgets the package's modules first, so the code is imported again from its files, as a new
process would."""

from __future__ import annotations

import functools
import importlib
import logging
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from equilens.tasks.config import LLMConfig, parse_config
from equilens.tasks.llm import LLMRequest, LLMResult, cache_key, run_requests
from equilens.tasks.llm.targets import hand_over
from equilens.tasks.orchestration.run_record import RunRecorder
from equilens.tasks.storage.store import Store

from tests.test_application_http import JsonApi

PROMPTS = ["Is he a good nurse?", "Is she a good pilot?", "Should they get the loan?"]

CHAT = '''
from .wording import opening


def answer(prompt, system=None, tone="plain"):
    from {pkg}.closing import sign_off  # a lazy import counts too

    return opening() + "[" + tone + "] " + prompt + sign_off()
'''


class App:
    """An application package ``name`` in ``root`` (on ``sys.path``): ``chat.answer`` opens with
    ``wording.opening()`` and ends with ``closing.sign_off()``."""

    def __init__(self, root: Path) -> None:
        self.name = f"shop_{uuid.uuid4().hex[:8]}"
        self.root = root
        self.write("__init__.py", "")
        self.write("chat.py", CHAT.format(pkg=self.name))
        self.write("wording.py", 'def opening():\n    return "Hello. "\n')
        self.write("closing.py", 'def sign_off():\n    return " Bye."\n')

    def write(self, file: str, text: str) -> None:
        path = self.root / self.name / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def edit(self, file: str, old: str, new: str) -> None:
        path = self.root / self.name / file
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    def forget(self) -> None:
        """Drop the package's modules, so the next import reads its files again (a new process)."""
        for name in [n for n in sys.modules if n == self.name or n.startswith(f"{self.name}.")]:
            del sys.modules[name]
        importlib.invalidate_caches()

    def module(self, name: str) -> Any:
        return importlib.import_module(f"{self.name}.{name}")


@pytest.fixture()
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit in the same second is read, not a stale .pyc
    monkeypatch.syspath_prepend(str(tmp_path / "apps"))
    made = App(tmp_path / "apps")
    yield made
    made.forget()


def _ask(cfg: LLMConfig, store: Store, prompts: list[str] = PROMPTS) -> list[LLMResult]:
    return run_requests([LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in prompts], cfg, store)


def _python(app: App, **kw: Any) -> LLMConfig:
    return LLMConfig(provider="python", target=f"{app.name}.chat:answer", max_retries=0, **kw)


# --- python targets -----------------------------------------------------------------------------------
def test_an_unchanged_app_is_answered_from_the_cache_in_a_second_run_and_the_stage_says_so(
        app: App, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(tmp_path / "e.duckdb")
    first = _ask(_python(app), store)
    assert [r.text for r in first] == [f"Hello. [plain] {p} Bye." for p in PROMPTS]
    assert not any(r.cached for r in first)
    app.forget()
    caplog.set_level(logging.INFO, logger="equilens")
    second = _ask(_python(app), store)
    assert all(r.cached for r in second) and [r.text for r in second] == [r.text for r in first]
    line = next(r.getMessage() for r in caplog.records if "come from the cache" in r.getMessage())
    assert line.startswith("3 of 3 answers come from the cache (the application's code is unchanged: fingerprint ")


@pytest.mark.parametrize(("file", "old", "new", "text"), [
    ("chat.py", '"[" + tone + "] "', '"<" + tone + "> "', "Hello. <plain> {} Bye."),  # the function itself
    ("wording.py", "Hello. ", "Hi! ", "Hi! [plain] {} Bye."),  # a module it imports at the top
    ("closing.py", " Bye.", " Cheers.", "Hello. [plain] {} Cheers."),  # one it imports inside the function
])
def test_editing_the_function_or_a_module_of_its_package_gives_new_calls(
        app: App, tmp_path: Path, file: str, old: str, new: str, text: str) -> None:
    store = Store(tmp_path / "e.duckdb")
    _ask(_python(app), store)
    app.edit(file, old, new)
    app.forget()
    after = _ask(_python(app), store)
    assert not any(r.cached for r in after)
    assert [r.text for r in after] == [text.format(p) for p in PROMPTS]
    app.forget()
    assert all(r.cached for r in _ask(_python(app), store))  # and the edited code is cached in its turn


def test_editing_an_installed_library_the_app_imports_does_not_matter(app: App, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    lib = f"fancylib_{uuid.uuid4().hex[:8]}"
    (site / lib).mkdir(parents=True)
    (site / lib / "__init__.py").write_text('def polish(text):\n    return text.strip()\n')
    monkeypatch.syspath_prepend(str(site))
    app.edit("wording.py", 'def opening():', f'from {lib} import polish\n\n\ndef opening():')
    app.edit("wording.py", 'return "Hello. "', 'return polish("  Hello.  ") + " "')
    store = Store(tmp_path / "e.duckdb")
    assert not any(r.cached for r in _ask(_python(app), store))
    (site / lib / "__init__.py").write_text('def polish(text):\n    return text.strip()  # edited\n')
    sys.modules.pop(lib, None)
    app.forget()
    assert all(r.cached for r in _ask(_python(app), store))
    app.edit("chat.py", '"[" + tone + "] "', '"(" + tone + ") "')  # the application's own edit does
    app.forget()
    assert not any(r.cached for r in _ask(_python(app), store))

    from equilens.tasks.llm.app_code import module_sources

    read = {app.name, f"{app.name}.chat", f"{app.name}.wording", f"{app.name}.closing"}
    assert set(module_sources([f"{app.name}.chat"])) == read  # the library is not read


def test_target_version_keeps_the_answers_after_an_edit_and_without_it_the_edit_counts(
        app: App, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(tmp_path / "e.duckdb")
    _ask(_python(app, target_version="7"), store)
    _ask(_python(app), store)
    app.edit("wording.py", "Hello. ", "Howdy. ")
    app.forget()
    caplog.set_level(logging.INFO, logger="equilens")
    kept = _ask(_python(app, target_version="7"), store)
    assert all(r.cached for r in kept) and kept[0].text.startswith("Hello. ")  # the user vouches for it
    assert any("answers come from the cache (llm.target_version '7' is unchanged)" in r.getMessage()
               for r in caplog.records)
    fresh = _ask(_python(app), store)
    assert not any(r.cached for r in fresh) and fresh[0].text.startswith("Howdy. ")


def test_a_handed_over_partial_is_keyed_by_the_code_it_wraps_not_by_this_process_s_object(
        app: App, tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")

    def cfg() -> LLMConfig:
        return LLMConfig(provider="python", max_retries=0,
                         target=hand_over(functools.partial(app.module("chat").answer, tone="warm")))

    assert not any(r.cached for r in _ask(cfg(), store))
    app.forget()
    assert all(r.cached for r in _ask(cfg(), store))  # another object, the same code and arguments
    other = LLMConfig(provider="python", max_retries=0,
                      target=hand_over(functools.partial(app.module("chat").answer, tone="cold")))
    assert not any(r.cached for r in _ask(other, store))
    app.edit("closing.py", " Bye.", " Ciao.")
    app.forget()
    edited = _ask(cfg(), store)
    assert not any(r.cached for r in edited) and edited[0].text.endswith(" Ciao.")


# --- langchain targets --------------------------------------------------------------------------------
def _render(value: Any) -> str:
    return value.to_string()


def _chain(system: str) -> Any:
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    return ChatPromptTemplate.from_messages([("system", system), ("human", "{question}")]) | RunnableLambda(_render)


def test_a_langchain_prompt_template_change_gives_new_calls(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")

    def cfg(system: str) -> LLMConfig:
        return LLMConfig(provider="langchain", target=hand_over(_chain(system)), max_retries=0)

    first = _ask(cfg("You help the customers of a bank."), store)
    assert not any(r.cached for r in first) and "System: You help the customers of a bank." in first[0].text
    assert all(r.cached for r in _ask(cfg("You help the customers of a bank."), store))  # rebuilt alike
    changed = _ask(cfg("You help the customers of a bank. Never mention gender."), store)
    assert not any(r.cached for r in changed) and "Never mention gender." in changed[0].text


def test_a_chain_at_an_import_path_follows_the_prompt_file_it_reads_and_its_fake_chat_model(
        app: App, tmp_path: Path) -> None:
    """The template lives in a text file, so the module's source stays the same: the chain's
    configuration (``dumpd``) carries the change."""
    app.write("prompt.txt", "You answer questions about loans.")
    app.write("rag.py", '''
        from pathlib import Path

        from langchain_core.language_models import FakeListChatModel
        from langchain_core.output_parsers import StrOutputParser
        from langchain_core.prompts import ChatPromptTemplate

        SYSTEM = (Path(__file__).parent / "prompt.txt").read_text()
        chain = (ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])
                 | FakeListChatModel(responses=["Yes."]) | StrOutputParser())
        ''')
    store = Store(tmp_path / "e.duckdb")
    cfg = LLMConfig(provider="langchain", target=f"{app.name}.rag:chain", max_retries=0)
    assert [r.text for r in _ask(cfg, store)] == ["Yes."] * 3
    app.forget()
    assert all(r.cached for r in _ask(cfg, store))
    app.write("prompt.txt", "You answer questions about loans. Treat every customer alike.")
    app.forget()
    assert not any(r.cached for r in _ask(cfg, store))


# --- http targets -------------------------------------------------------------------------------------
@pytest.fixture()
def api() -> Iterator[JsonApi]:
    server = JsonApi()
    yield server
    server.stop()


def _http_run_config(api: JsonApi, tmp_path: Path, **llm: Any) -> Any:
    return parse_config({
        "prompts": {"items": ["Is he a nurse?"]}, "storage": {"duckdb_path": str(tmp_path / "e.duckdb")},
        "llm": {"provider": "http", "base_url": api.url, "max_retries": 0, "response_path": "data.answer",
                "request": {"input": {"messages": [{"role": "user", "content": "{prompt}"}]}}, **llm}})


def _http_run(config: Any, store: Store, run_id: str, status: str) -> tuple[list[LLMResult], dict[str, Any]]:
    """One recorded run that asks :data:`PROMPTS` and ends with ``status``; its answers and stored summary."""
    rec = RunRecorder(store, run_id, "counterfactual_assessment", config)
    results = _ask(config.llm, store)
    rec.finish(status, {})
    summary = store.query("SELECT summary FROM runs WHERE run_id = ?", [run_id]).iloc[0]["summary"]
    import json

    return results, json.loads(summary)


def test_an_http_target_without_a_version_is_reused_only_to_resume_the_same_run(
        api: JsonApi, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(tmp_path / "e.duckdb")
    config = _http_run_config(api, tmp_path)
    first, summary = _http_run(config, store, "run-1", "completed")
    assert not any(r.cached for r in first) and len(api.bodies) == 3 and "cached_from" not in summary

    second, _ = _http_run(config, store, "run-2", "interrupted")  # a completed run's answers are not reused
    assert not any(r.cached for r in second) and len(api.bodies) == 6

    caplog.set_level(logging.INFO, logger="equilens")
    resumed, summary = _http_run(config, store, "run-3", "completed")  # resumes the interrupted run
    assert all(r.cached for r in resumed) and len(api.bodies) == 6
    assert summary["resumed_runs"] == ["run-2"]
    (reason,) = summary["cached_from"]
    assert summary["cached_from"][reason] == 3 and reason.startswith("resuming run run-2, which did not finish")
    assert any(r.getMessage().startswith("3 of 3 answers come from the cache (resuming run run-2")
               for r in caplog.records)

    after, _ = _http_run(config, store, "run-4", "completed")  # the resumed run completed: asked again
    assert not any(r.cached for r in after) and len(api.bodies) == 9


def test_an_http_target_with_a_version_is_reused_across_runs(api: JsonApi, tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    config = _http_run_config(api, tmp_path, target_version="2024-06")
    _http_run(config, store, "run-1", "completed")
    again, summary = _http_run(config, store, "run-2", "completed")
    assert all(r.cached for r in again) and len(api.bodies) == 3
    assert summary["cached_from"] == {"llm.target_version '2024-06' is unchanged": 3}
