"""The LLM provider extension point and the records that flow through the LLM stage.

A provider answers one prompt (``acomplete``, for remote endpoints called concurrently) or a
batch of prompts (``complete_batch``, for in-process models that batch on the accelerator). Errors
are raised; the runner retries, classifies and records them per row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tasks.registry import Registry

if TYPE_CHECKING:
    from tasks.config import LLMConfig


@dataclass(frozen=True)
class Completion:
    text: str | None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class LLMRequest:
    prompt: str
    sample_idx: int
    cache_key: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class LLMResult:
    request: LLMRequest
    text: str | None
    ok: bool
    refusal: bool = False
    error_class: str | None = None
    error_message: str | None = None
    attempts: int = 0
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False


class Provider(Protocol):
    name: str
    model: str
    batched: bool
    """True: call :meth:`complete_batch`; False: call :meth:`acomplete` concurrently."""

    async def acomplete(self, prompt: str, sample_idx: int) -> Completion: ...

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]: ...

    async def aclose(self) -> None: ...


ProviderFactory = Callable[["LLMConfig"], Provider]
PROVIDERS: Registry[ProviderFactory] = Registry("LLM provider")


def cache_key(cfg: LLMConfig, prompt: str, sample_idx: int) -> str:
    """Key of one call: provider, model, generation parameters, system prompt, prompt, sample.

    Endpoint URLs and credentials are deliberately left out: the same model behind another URL
    gives the same cached answer, and a key never depends on a secret.
    """
    ident = {
        "provider": cfg.provider,
        "model": cfg.model,
        "deployment": cfg.azure_deployment,
        "temperature": cfg.temperature,
        "max_tokens": cfg.max_tokens,
        "seed": cfg.seed if cfg.provider == "local" else None,
        "system": cfg.system_prompt,
        "prompt": prompt,
        "sample": sample_idx,
    }
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


REFUSAL_MARKERS = (
    "i'm sorry, but i can",
    "i am sorry, but i can",
    "i cannot help with",
    "i can't help with",
    "i can't assist",
    "i cannot assist",
    "i won't be able to",
    "as an ai language model, i cannot",
    "i'm not able to help",
    "i must decline",
)


def looks_like_refusal(text: str | None) -> bool:
    """Heuristic: the reply opens with a stock refusal phrase (checked in its first 120 chars)."""
    if not text:
        return False
    head = text[:120].lower().replace("’", "'")
    return any(m in head for m in REFUSAL_MARKERS)
