"""LLM providers (local SmolLM2, OpenAI-compatible, Azure) and the concurrent, cached runner."""

from tasks.llm.base import PROVIDERS, Completion, LLMRequest, LLMResult, cache_key
from tasks.llm.calls import classify_error, make_provider
from tasks.llm.runner import run_requests

__all__ = [
    "PROVIDERS", "Completion", "LLMRequest", "LLMResult", "cache_key",
    "classify_error", "make_provider", "run_requests",
]
