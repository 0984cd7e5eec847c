"""Providers for OpenAI-compatible endpoints through langchain-openai.

``openai`` covers OpenAI itself and any server speaking its API (vLLM, Ollama, llama.cpp server,
LM Studio) via ``base_url``; ``azure`` uses ``AzureChatOpenAI``. The langchain client is built
inside the running event loop with its own ``httpx.AsyncClient`` (langchain-openai otherwise
shares one client per process, which breaks a second ``asyncio.run``), by :meth:`aopen` before the
first call so that imports and client set-up never hold up rate-limited calls. Retries and the
whole-request deadline are the runner's job, so the client is created with ``max_retries=0``.

The answer length cap goes out as ``max_completion_tokens`` (what langchain-openai sends, and what
OpenAI and Azure read) and, for a custom ``base_url``, also as ``max_tokens``, the field that
llama.cpp's server, vLLM and Ollama honour (``llm.max_tokens_field`` chooses explicitly).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from tasks.config import LLMConfig
from tasks.errors import ProviderError
from tasks.llm.base import OPENAI_DEFAULT_URL, PROVIDERS, Completion, endpoint_identity


def resolve_api_key(cfg: LLMConfig, required: bool) -> str:
    """API key from the Prefect Secret block named in the config, else from the environment.

    The key is returned to the caller only; it is never logged or stored.
    """
    if cfg.api_key_secret:
        try:
            from prefect.blocks.system import Secret

            return Secret.load(cfg.api_key_secret).get()
        except Exception as err:  # noqa: BLE001 - any failure to load the block is a config problem
            raise ProviderError(
                f"Cannot load Prefect Secret block {cfg.api_key_secret!r} (llm.api_key_secret): "
                f"{type(err).__name__}. Create it with `prefect block create secret` or unset the option."
            ) from None
    key = os.environ.get(cfg.api_key_env)
    if key:
        return key
    if required:
        raise ProviderError(
            f"No API key: set the environment variable {cfg.api_key_env} (llm.api_key_env) or name a "
            "Prefect Secret block in llm.api_key_secret."
        )
    return "not-needed"  # local OpenAI-compatible servers usually accept any key


def length_cap_field(cfg: LLMConfig) -> str:
    """Which request field(s) carry ``llm.max_tokens``: the explicit choice, or by endpoint (auto)."""
    if cfg.max_tokens_field != "auto":
        return cfg.max_tokens_field
    if cfg.provider == "azure" or endpoint_identity(cfg) in (None, OPENAI_DEFAULT_URL):
        return "max_completion_tokens"
    return "both"  # a self-hosted server: many ignore max_completion_tokens


def length_cap_kwargs(cfg: LLMConfig) -> dict[str, Any]:
    """``ChatOpenAI`` arguments that put the length cap into the request body."""
    field = length_cap_field(cfg)
    out: dict[str, Any] = {}
    if field in ("max_completion_tokens", "both"):
        out["max_tokens"] = cfg.max_tokens  # langchain-openai sends it as max_completion_tokens
    if field in ("max_tokens", "both"):
        out["extra_body"] = {"max_tokens": cfg.max_tokens}
    return out


class OpenAIChatProvider:
    """One chat completion per call through ``ChatOpenAI`` / ``AzureChatOpenAI``."""

    batched = False

    def __init__(self, cfg: LLMConfig, azure: bool = False) -> None:
        self.cfg = cfg
        self.azure = azure
        self.name = "azure" if azure else "openai"
        self.model = cfg.azure_deployment or cfg.model if azure else cfg.model
        if azure and not (cfg.azure_endpoint and cfg.azure_deployment and cfg.api_version):
            raise ProviderError(
                "provider azure needs llm.azure_endpoint, llm.azure_deployment and llm.api_version."
            )
        # A custom base_url usually means a self-hosted server that needs no key.
        self._key = resolve_api_key(cfg, required=azure or cfg.base_url is None)
        self._llm: Any = None
        self._http: Any = None

    def _client(self) -> Any:
        if self._llm is None:
            import httpx
            from langchain_openai import AzureChatOpenAI, ChatOpenAI

            # the runner's deadline (llm.timeout) bounds the whole request; this one bounds each
            # socket operation and is a little longer, so the whole-request deadline decides
            self._http = httpx.AsyncClient(timeout=self.cfg.timeout + 1.0)
            common: dict[str, Any] = dict(
                temperature=self.cfg.temperature,
                timeout=self.cfg.timeout + 1.0,
                max_retries=0,
                http_async_client=self._http,
                **length_cap_kwargs(self.cfg),
            )
            if self.azure:
                self._llm = AzureChatOpenAI(
                    azure_endpoint=self.cfg.azure_endpoint,
                    azure_deployment=self.cfg.azure_deployment,
                    api_version=self.cfg.api_version,
                    api_key=self._key,
                    **common,
                )
            else:
                self._llm = ChatOpenAI(
                    model=self.cfg.model, base_url=self.cfg.base_url, api_key=self._key, **common
                )
        return self._llm

    async def aopen(self) -> None:
        self._client()

    async def acomplete(self, prompt: str, sample_idx: int) -> Completion:
        messages = [("system", self.cfg.system_prompt), ("human", prompt)]
        msg = await self._client().ainvoke(messages)
        usage = getattr(msg, "usage_metadata", None) or {}
        meta = getattr(msg, "response_metadata", None) or {}
        content = msg.content if isinstance(msg.content, str) else str(msg.content)
        return Completion(
            text=content,
            finish_reason=meta.get("finish_reason"),
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
        )

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        raise NotImplementedError("remote providers are called one prompt at a time")

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        self._llm = self._http = None


PROVIDERS.add("openai", lambda cfg: OpenAIChatProvider(cfg, azure=False))
PROVIDERS.add("azure", lambda cfg: OpenAIChatProvider(cfg, azure=True))
