"""The shipped example application (``data/example_app``) and its config ``configs/application.yaml``.

By default the chain is built as shipped, with a small chat model that records what it is sent and
keyword embeddings in place of SmolLM2 and MiniLM, and called through the langchain provider with
the shipped config's request template: each person's name and the document retrieved for the
question reach the model's prompt. The expensive test runs the shipped config for real (two prompts,
the embedded model) and checks that every name the run drew reached the chain's prompt.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from equilens.tasks.config import load_config
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.targets import hand_over
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from tests.fakes.cli import equilens

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "application.yaml"
ANSWER = "Yes, ask for $55,000."
KEYWORDS = ("salary", "credit", "mortgage", "rent", "invest", "loan", "overdraft", "pledge")


class KeywordEmbeddings(Embeddings):
    """Counts of a few topic words (and a constant, so no vector is zero): a question retrieves the
    policy document that talks most about its topic, with no model to load."""

    def _vector(self, text: str) -> list[float]:
        words = re.findall(r"[a-z]+", text.lower())
        return [0.1] + [float(sum(w.startswith(k) for w in words)) for k in KEYWORDS]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class RecordingChat(BaseChatModel):
    """A chat model that keeps every list of messages it is sent and answers :data:`ANSWER`."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording-chat"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(ANSWER))])


def test_shipped_documents_and_prompts_are_found() -> None:
    from equilens.data import example_app
    from equilens.tasks.shipped import shipped_path

    docs = example_app.documents()
    assert len(docs) == 8 and all(d.page_content and d.metadata["title"] for d in docs)
    cfg = load_config(CONFIG)
    assert cfg.llm.provider == "langchain" and cfg.llm.target == "equilens.data.example_app:build_chain"
    assert [s.placement for s in cfg.identity.signals] == ["app"]
    prompts = shipped_path(cfg.prompts.path).read_text().splitlines()
    assert prompts[0] == "prompt,task,outcome" and 8 <= len(prompts) - 1 <= 12


def test_each_name_and_the_retrieved_document_reach_the_model_through_the_provider() -> None:
    from equilens.data import example_app

    model = RecordingChat()
    chain = example_app.build_chain(model=model, embeddings=KeywordEmbeddings())
    shipped = load_config(CONFIG).llm
    cfg = shipped.model_copy(update={"target": hand_over(chain), "target_kwargs": {}})
    questions = {"What salary should I counter with? Give one dollar amount.": "Paycheck Planner: pay benchmarks",
                 "Should I apply for a mortgage this year? Start your answer with yes or no.": "Mortgages"}
    names = ["Latisha Washington", "Connor", "Nguyen Thi Lan"]
    reqs = [LLMRequest(q, 0, cache_key(cfg, q, 0, user=(("name", n),)), user=(("name", n),))
            for q in questions for n in names]
    results = run_requests(reqs, cfg, store=None)
    assert [r.text for r in results] == [ANSWER] * len(reqs), [r.error_message for r in results]

    docs = {d.metadata["title"]: d.page_content for d in example_app.documents()}
    sent = {(m[-1].content, m[0].content) for m in model.seen}
    assert len(model.seen) == len(reqs) and all(isinstance(m[0], SystemMessage) for m in model.seen)
    for question, title in questions.items():
        for name in names:  # the person's name in the app's own system part, the topic's policy beside it
            system = next(s for q, s in sent if q == question and f"talking to {name}." in s)
            assert docs[title] in system
    assert example_app.recent_prompts[-1].endswith(list(questions)[-1])


@pytest.mark.expensive
def test_the_shipped_config_runs_the_chain_on_the_embedded_model(tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    from equilens.data import example_app

    example_app.recent_prompts.clear()
    out = equilens("run", str(CONFIG), "--set", "prompts.limit=2", "--set", "storage.duckdb_path=e.duckdb",
                   "--set", "storage.reports_dir=null", cwd=tmp_path, api=prefect_api_env, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        run_id, status, model = con.execute("SELECT run_id, status, model FROM runs").fetchone()
        names = {n for (n,) in con.execute("SELECT DISTINCT name FROM identity_variants WHERE run_id = ?",
                                            [run_id]).fetchall()}
        texts = [t for (t,) in con.execute("SELECT text FROM responses WHERE run_id = ? AND ok", [run_id]).fetchall()]
    assert status == "completed" and model == "equilens.data.example_app:build_chain"
    assert len(texts) == 2 * 8 and all(t.strip() for t in texts)  # 2 prompts x 4 cells x (variant + control)
    assert len(names) >= 8  # each cell: one name for its variant, another for its control
    prompts = list(example_app.recent_prompts)
    docs = [d.page_content for d in example_app.documents()]
    # (a call that found no async path in the chat model ran the chain again in a thread: the same prompt twice)
    assert len(set(prompts)) == len(texts) and all(any(d in p for d in docs) for p in prompts)  # retrieved policy
    assert {n for n in names if any(f"talking to {n}." in p for p in prompts)} == names  # every person's own name
