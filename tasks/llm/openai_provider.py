"""Providers for OpenAI-compatible endpoints through langchain-openai.

``openai`` covers OpenAI itself and any server speaking its API (vLLM, Ollama, llama.cpp server,
LM Studio) via ``base_url``; ``azure`` uses ``AzureChatOpenAI``. The langchain client is built
inside the running event loop with its own ``httpx.AsyncClient`` (langchain-openai otherwise
shares one client per process, which breaks a second ``asyncio.run``), by :meth:`aopen` before the
first call so that imports and client set-up never hold up rate-limited calls. Retries and the
whole-request deadline are the runner's job, so the client is created with ``max_retries=0``.

Per call, the provider does as little as it can (the stage is CPU-bound past ~30 calls in flight):
the request body is langchain-openai's own payload, built once with the system message in place,
and only the user message changes; it is posted through the OpenAI client that ``ChatOpenAI``
configured (base URL, key, Azure deployment and headers, error classes), skipping the per-call
message conversion, callback set-up, TypedDict transform and the thread hop langchain makes to parse
each reply. With ``llm.http_client: aiohttp`` (the default) the request the OpenAI client would send
is recorded once and posted over one aiohttp pool (:mod:`equilens.tasks.llm.aiohttp_post`), with the SDK's
URL, headers and exception classes, and the body's JSON is the template's bytes with only the prompt (and a
call's own system message) encoded per call (:class:`BodyBytes`). With ``http_client: httpx``, connections are spread over small
httpx pools (:data:`CONNECTIONS_PER_POOL` connections each), because one
httpcore pool scans all its connections for every request and answer, which at 32+ connections costs
more CPU than the call itself.

A conversation's turn (``history=``, the earlier messages) goes out as ``[system, *history, user]``,
the history written between the template's pre-encoded bytes (:class:`BodyBytes`). With
``llm.stream`` the request asks for a stream (``"stream": true`` and the usage in its last chunk); the
chunks' ``delta.content`` pieces are joined as they arrive (:class:`~equilens.tasks.llm.streams.ChatChunks`),
over either transport, and ``Completion.first_token_s`` is the time to the first non-empty piece.

Replies are read up to :func:`equilens.tasks.llm.base.reply_byte_cap` bytes and no further (the
connection is dropped), so an endpoint that ignores the length cap and streams megabytes costs a
few hundred kilobytes: the answer is the first :func:`equilens.tasks.llm.base.answer_char_cap`
characters of the message content (read from the body as far as it came), with
``Completion.truncated`` set.

The answer length cap goes out as ``max_completion_tokens`` (what langchain-openai sends, and what
OpenAI and Azure read) and, for a custom ``base_url``, also as ``max_tokens``, the field that
llama.cpp's server, vLLM and Ollama honour (``llm.max_tokens_field`` chooses explicitly).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from collections.abc import AsyncGenerator, Sequence
from json.encoder import encode_basestring
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError, json_kind
from equilens.tasks.llm.base import (
    OPENAI_DEFAULT_URL,
    PROVIDERS,
    Completion,
    answer_char_cap,
    cut_json_string,
    endpoint_identity,
    reply_byte_cap,
)
from equilens.tasks.llm.logprobs import checked_logprob
from equilens.tasks.llm.streams import ChatChunks, EventReader, MalformedReplyError, aiter_bytes, join_stream


def resolve_api_key(cfg: LLMConfig, required: bool) -> str:
    """API key from the Prefect Secret block named in the config, else from the environment.

    The key is returned to the caller only; it is never logged or stored, and it is registered as a
    secret (:func:`equilens.tasks.secrets.register`) so that every scrubbed message replaces it.
    """
    from equilens.tasks.secrets import register

    if cfg.api_key_secret:
        try:
            from prefect.blocks.system import Secret

            key = Secret.load(cfg.api_key_secret).get()
            register(key)
            return key
        except Exception as err:  # noqa: BLE001 - any failure to load the block is a config problem
            raise ProviderError(
                f"Cannot load Prefect Secret block {cfg.api_key_secret!r} (llm.api_key_secret): "
                f"{type(err).__name__}. Create it with `prefect block create secret` or unset the option."
            ) from None
    key = os.environ.get(cfg.api_key_env)
    if key:
        register(key)
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


CONNECTIONS_PER_POOL = 4  # httpcore's pool costs O(connections) per request: keep pools small (1, 2, 4, 32 measured; 4 best)


def httpx_pools(cfg: LLMConfig) -> list[Any]:
    """``llm.http_client: httpx``: one httpx client per :data:`CONNECTIONS_PER_POOL` connections."""
    import httpx

    npools = max(1, -(-cfg.max_concurrency // CONNECTIONS_PER_POOL))
    limits = httpx.Limits(max_connections=CONNECTIONS_PER_POOL, max_keepalive_connections=CONNECTIONS_PER_POOL)
    return [httpx.AsyncClient(timeout=cfg.timeout + 1.0, limits=limits) for _ in range(npools)]


class OpenAIChatProvider:
    """One chat completion per call through ``ChatOpenAI`` / ``AzureChatOpenAI``'s OpenAI client."""

    batched = False

    def __init__(self, cfg: LLMConfig, azure: bool = False, api_key: str | None = None) -> None:
        self.cfg = cfg
        self.azure = azure
        self.name = "azure" if azure else "openai"
        self.model = cfg.azure_deployment or cfg.model if azure else cfg.model
        if azure and not (cfg.azure_endpoint and cfg.azure_deployment and cfg.api_version):
            raise ProviderError(
                "provider azure needs llm.azure_endpoint, llm.azure_deployment and llm.api_version."
            )
        # A custom base_url usually means a self-hosted server that needs no key.
        self._key = api_key or resolve_api_key(cfg, required=azure or cfg.base_url is None)
        self._llm: Any = None
        self._http: Any = None
        self._pools: list[Any] = []  # (openai client, its httpx client), one per few connections
        self._next_pool: Any = None
        self._aiohttp: Any = None  # tasks.llm.aiohttp_post.AiohttpPost, for llm.http_client: aiohttp
        self._template: dict[str, Any] | None = None
        self._body: BodyBytes | None = None  # the template's JSON, for the aiohttp transport
        self._max_chars, self._max_bytes = answer_char_cap(cfg), reply_byte_cap(cfg)

    def _client(self) -> Any:
        if self._llm is None:
            import httpx
            from langchain_openai import AzureChatOpenAI, ChatOpenAI

            # the runner's deadline (llm.timeout) bounds the whole request; this one bounds each
            # socket operation and is a little longer, so the whole-request deadline decides. The
            # chat model's own client sends nothing: calls go over the aiohttp pool or the httpx pools
            # (aopen), so it gets no connections, no proxies from the environment and no TLS context
            # (loading the CA certificates costs ~30 ms of CPU a run)
            self._http = httpx.AsyncClient(timeout=self.cfg.timeout + 1.0, trust_env=False,
                                           transport=httpx.MockTransport(_no_direct_requests))
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
                    model=self.cfg.model, base_url=self.cfg.call_url(), api_key=self._key, **common
                )
        return self._llm

    async def aopen(self) -> None:
        """The chat model, the request template and the connections (once per event loop)."""
        if self._template is not None:
            return
        llm = self._client()
        payload = llm._get_request_payload([("system", self.cfg.system_prompt), ("human", "")])
        payload.update(payload.pop("extra_body", None) or {})  # what create() would merge into the JSON
        payload.pop("stream", None)  # False is the server's default; one field less per call
        if self.cfg.stream:
            payload |= {"stream": True, "stream_options": {"include_usage": True}}
        if self.cfg.logprobs:
            payload |= {"logprobs": True, "top_logprobs": self.cfg.logprobs}
        messages = payload["messages"]
        if len(messages) != 2 or messages[1].get("role") != "user":
            raise ProviderError(f"unexpected langchain-openai request layout: {[m.get('role') for m in messages]}")
        if self.cfg.http_client == "aiohttp":
            from equilens.tasks.llm.aiohttp_post import AiohttpPost

            self._aiohttp = await AiohttpPost.open(llm.root_async_client, "/chat/completions", payload,
                                                   self.cfg.max_concurrency, self.cfg.timeout + 1.0)
            self._body = BodyBytes(payload)
        else:
            for http in httpx_pools(self.cfg):
                self._pools.append((llm.root_async_client.with_options(http_client=http), http))
            self._next_pool = itertools.cycle([client for client, _ in self._pools])
        self._template = payload

    async def _send(self, body: dict[str, Any]) -> Any:  # an httpx.Response, its body unread
        """POST ``body`` over the next httpx pool; the reply comes back before its body is read (the SDK's
        raw-response header)."""
        import httpx

        return await next(self._next_pool).post("/chat/completions", body=body, cast_to=httpx.Response,
                                                options={"headers": {"X-Stainless-Raw-Response": "stream"}})

    async def _post(self, body: dict[str, Any]) -> tuple[bytes, bool]:
        """(the reply body, at most ``reply_byte_cap`` bytes; whether that is all of it) over the httpx pools."""
        reply = await self._send(body)
        parts, size = [], 0
        try:
            async for chunk in reply.aiter_bytes():
                parts.append(chunk)
                size += len(chunk)
                if size > self._max_bytes:
                    return b"".join(parts)[: self._max_bytes], False
        finally:
            await reply.aclose()  # unread, the rest of the body is dropped with the connection
        return b"".join(parts), True

    async def _post_stream(self, body: dict[str, Any], t0: float) -> Completion:
        """``llm.stream``: the answer of a streamed reply over the httpx pools."""
        reply = await self._send(body)
        try:  # closed on every way out, a deadline's cancellation included
            return await self._read_stream(aiter_bytes(reply), reply.headers.get("content-type"), t0)
        finally:
            await reply.aclose()

    async def _read_stream(self, chunks: AsyncGenerator[bytes, None], content_type: str | None,
                           t0: float) -> Completion:
        chat = ChatChunks()
        joined = await join_stream(EventReader(chunks, content_type, self._max_bytes), chat.piece, self._max_chars, t0)
        return chat.completion(joined)

    def _messages(self, prompt: str, system: str | None, history: list[dict[str, str]] | None) -> dict[str, Any]:
        """The request body: the template's system message (or the call's own), the history, the prompt."""
        body = dict(self._template)  # type: ignore[arg-type]
        sys_msg, user = body["messages"]
        if system is not None:
            sys_msg = {**sys_msg, "content": system}
        body["messages"] = [sys_msg, *(history or []), {**user, "content": prompt}]
        return body

    async def acomplete(self, prompt: str, sample_idx: int, system: str | None = None,
                        history: list[dict[str, str]] | None = None, conversation: str | None = None) -> Completion:
        if self._template is None:
            await self.aopen()
        t0 = time.perf_counter()
        if self._aiohttp is not None:  # the body's bytes from the template's, the reply over the one pool
            data = self._body(prompt, system, history)  # type: ignore[misc]
            if data is None:
                data = json.dumps(self._messages(prompt, system, history), ensure_ascii=False).encode()
            if self.cfg.stream:
                return await self._aiohttp.stream(data, lambda chunks, kind: self._read_stream(chunks, kind, t0))
            raw, whole = await self._aiohttp.post(data, self._max_bytes)
            return parse_chat_completion(raw, self._max_chars, whole)
        body = self._messages(prompt, system, history)
        if self.cfg.stream:
            return await self._post_stream(body, t0)
        raw, whole = await self._post(body)
        return parse_chat_completion(raw, self._max_chars, whole)

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        raise NotImplementedError("remote providers are called one prompt at a time")

    async def aclose(self) -> None:
        for _, http in self._pools:
            await http.aclose()
        if self._aiohttp is not None:
            await self._aiohttp.aclose()
        if self._http is not None:
            await self._http.aclose()
        self._llm = self._http = self._next_pool = self._template = self._aiohttp = self._body = None
        self._pools = []


def _no_direct_requests(request: Any) -> Any:
    raise ProviderError(f"the chat model's own client sends no requests ({request.method} {request.url.path})")


class BodyBytes:
    """A request body's JSON bytes with the call's prompt (and system message) in the template's two
    messages: the bytes ``json.dumps(body, ensure_ascii=False).encode()`` gives for the body
    :meth:`OpenAIChatProvider.acomplete` builds from the template, written from the template's JSON
    around the two message contents (encoded once) and the two strings encoded per call."""

    SLOTS = ("\x00equilens system\x00", "\x00equilens user\x00")  # where the two contents go (JSON: \u0000...)

    def __init__(self, template: dict[str, Any]) -> None:
        sys_msg, user = template["messages"]
        marked = dict(template, messages=[{**sys_msg, "content": self.SLOTS[0]}, {**user, "content": self.SLOTS[1]}])
        text = json.dumps(marked, ensure_ascii=False)
        slots = [json.dumps(slot) for slot in self.SLOTS]
        if any(text.count(slot) != 1 for slot in slots):
            raise ProviderError("the request template holds the text that marks its message contents")
        head, rest = text.split(slots[0])
        mid, tail = rest.split(slots[1])
        self._head, self._mid, self._tail = head.encode(), mid.encode(), tail.encode()
        self._system = _json_string(sys_msg["content"])
        ends, sep, starts = mid.partition("}, {")  # where the system message ends and the user's begins
        self._between = (f"{ends}}}, ".encode(), f"{{{starts}".encode()) if sep and "}, {" not in starts else None

    def __call__(self, prompt: str, system: str | None = None,
                 history: Sequence[dict[str, str]] | None = None) -> bytes | None:
        """The body's bytes; with ``history`` (a conversation's earlier messages) those go between the
        system message and the prompt (None where the template's layout leaves no place to tell)."""
        own = self._system if system is None else _json_string(system)
        if not history:
            return b"".join((self._head, own, self._mid, _json_string(prompt), self._tail))
        if self._between is None:
            return None
        earlier = ", ".join(map(_message_json, history)).encode()  # one encode for all of them
        return b"".join((self._head, own, self._between[0], earlier, b", ", self._between[1], _json_string(prompt),
                         self._tail))


def _message_json(message: dict[str, str]) -> str:
    """What ``json.dumps(message, ensure_ascii=False)`` gives; a ``{"role", "content"}`` message
    (every one a conversation sends) written directly."""
    if tuple(message) == ("role", "content") and type(role := message["role"]) is str \
            and type(content := message["content"]) is str:
        return f'{{"role": {encode_basestring(role)}, "content": {encode_basestring(content)}}}'
    return json.dumps(message, ensure_ascii=False)


def _json_string(text: Any) -> bytes:
    if isinstance(text, str):  # what json.dumps(text, ensure_ascii=False) gives, without building an encoder
        return encode_basestring(text).encode()
    return json.dumps(text, ensure_ascii=False).encode()


def parse_chat_completion(raw: bytes, max_chars: int | None = None, whole: bool = True) -> Completion:
    """The first choice of an OpenAI chat-completion body, read as langchain-openai reads it.

    An answer longer than ``max_chars`` is cut to that many characters (``truncated``). A body that
    is not ``whole`` (reading stopped at the byte cap) gives the message content as far as it came.
    """
    if not whole:
        return _cut_reply(raw, max_chars)
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise MalformedReplyError(f"reply is not JSON: {err}") from None
    if not isinstance(data, dict):
        raise MalformedReplyError(f"reply is {json_kind(data)}, not an object")
    if data.get("error"):
        raise MalformedReplyError(f"reply carries an error: {data['error']}")
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise MalformedReplyError("reply has no 'choices' list")
    usage = data.get("usage") or {}
    if not choices:
        return Completion(None, None, usage.get("prompt_tokens"), usage.get("completion_tokens"))
    choice = choices[0] or {}
    message = choice.get("message") or {}
    content = message.get("content")
    if content is not None and not isinstance(content, str):  # a list of parts
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    if content is None:
        content = ""  # as langchain-openai reads it (tool calls, refusals; finish_reason tells a filter)
    cut = max_chars is not None and len(content) > max_chars
    return Completion(content[:max_chars] if cut else content, choice.get("finish_reason"), usage.get("prompt_tokens"),
                      usage.get("completion_tokens"), first_token_logprobs(choice.get("logprobs")), truncated=cut)


_CONTENT = re.compile(r'"content"\s*:\s*"')


def _cut_reply(raw: bytes, max_chars: int | None) -> Completion:
    """The first choice's message content of a chat-completion body cut short, as far as it came
    (at most ``max_chars`` characters), marked ``truncated``; MalformedReplyError when none came."""
    text = raw.decode("utf-8", "ignore")  # drops a character cut in half at the end
    choices = text.find('"choices"')
    found = _CONTENT.search(text, choices) if choices >= 0 else None
    if found is None:
        raise MalformedReplyError(f"reply is longer than {len(raw):,} bytes and its first bytes hold no answer")
    content = cut_json_string(text, found.end())
    if content is None:
        raise MalformedReplyError("reply is cut short inside an answer that is not a JSON string")
    return Completion(content[:max_chars], "length", truncated=True)


def first_token_logprobs(logprobs: Any) -> dict[str, float] | None:
    """{token: log-probability} of the first answer token's alternatives, or None when the reply has
    none. Each value passes :func:`~equilens.tasks.llm.logprobs.checked_logprob`: one that is not a
    log-probability (1000, ``Infinity``, a string) stays one its readers refuse, with the reason."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    first = content[0]
    out: dict[str, float] = {}
    for alt in [first, *(first.get("top_logprobs") or [])]:
        if isinstance(alt, dict) and isinstance(alt.get("token"), str) and alt.get("logprob") is not None:
            out.setdefault(alt["token"], checked_logprob(alt["logprob"]))
    return out or None


PROVIDERS.add("openai", lambda cfg: OpenAIChatProvider(cfg, azure=False))
PROVIDERS.add("azure", lambda cfg: OpenAIChatProvider(cfg, azure=True))
