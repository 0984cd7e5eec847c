"""LLM providers (local SmolLM2, OpenAI-compatible, Azure) and the concurrent, cached runner."""

from equilens.tasks.llm.base import PROVIDERS, Completion, LLMRequest, LLMResult, cache_key
from equilens.tasks.llm.calls import classify_error, make_provider
from equilens.tasks.llm.runner import run_requests

__all__ = [
    "PROVIDERS", "Completion", "LLMRequest", "LLMResult", "cache_key",
    "classify_error", "make_provider", "run_requests",
]
