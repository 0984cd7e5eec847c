"""``llm.provider: http``: the application is a JSON HTTP API.

``llm.base_url`` is the URL posted to; ``llm.request`` the JSON body, a template whose strings may hold
``{prompt}``, ``{system}`` and, for identity runs with the ``app`` placement, ``{name}`` or
``{identity}`` (filled as Python strings, so the JSON is escaped correctly whatever the text holds);
``llm.headers`` the headers, ``${VAR}`` in a value read from the environment and scrubbed like a key;
``llm.response_path`` a JMESPath expression to the answer string in the reply (``data.answer``,
``choices[0].message.content``).

A status of 400 or more is an :class:`~equilens.tasks.llm.base.EndpointStatusError` (429 and 5xx
retried, ``Retry-After`` honoured); a reply that is not JSON is retried like any malformed reply; a
path that finds no string is a failed row naming the path and showing the start of the reply
(scrubbed, capped). A reply is read up to :func:`~equilens.tasks.llm.base.reply_byte_cap` bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError
from equilens.tasks.llm.base import (
    PROVIDERS,
    Completion,
    EndpointStatusError,
    TargetReplyError,
    answer_char_cap,
    capped,
    reply_byte_cap,
)
from equilens.tasks.llm.targets import call_values, check_request_fields, expand_env, fill

REPLY_HEAD = 300  # characters of a reply shown in a failed row's message


class MalformedReplyError(ValueError):
    """A reply that is not JSON (retried: a proxy's error page is often passing)."""


class HttpProvider:
    """Posts ``llm.request`` to ``llm.base_url`` and reads the answer at ``llm.response_path``."""

    batched = False
    name = "http"

    def __init__(self, cfg: LLMConfig) -> None:
        import jmespath

        self.cfg, self.model = cfg, cfg.model
        self.path = jmespath.compile(cfg.response_path or "")
        # read now, so the values are registered as secrets before the run's scrubber lists them
        self._headers = {"content-type": "application/json",
                         **{k: str(v) for k, v in expand_env(cfg.headers, "llm.headers").items()}}
        self._client: Any = None
        self._cap, self._max_bytes = answer_char_cap(cfg), reply_byte_cap(cfg)

    async def aopen(self) -> None:
        if self._client is not None:
            return
        import httpx

        limits = httpx.Limits(max_connections=self.cfg.max_concurrency,
                              max_keepalive_connections=self.cfg.max_concurrency)
        # the runner's deadline (llm.timeout) bounds the whole request; this one each socket operation
        self._client = httpx.AsyncClient(timeout=self.cfg.timeout + 1.0, limits=limits)

    async def acomplete(self, prompt: str, sample_idx: int, system: str | None = None,
                        user: dict[str, str] | None = None) -> Completion:
        if self._client is None:
            await self.aopen()
        body = json.dumps(fill(self.cfg.request, call_values(self.cfg, prompt, system, user)), ensure_ascii=False)
        async with self._client.stream("POST", self.cfg.call_url(), content=body.encode(),
                                       headers=self._headers) as reply:
            raw, whole = await _read(reply, self._max_bytes)
            if reply.status_code >= 400:
                raise EndpointStatusError(reply.status_code, f"HTTP {reply.status_code}: {_head(raw)}", reply)
        return self.answer(raw, whole)

    def answer(self, raw: bytes, whole: bool = True) -> Completion:
        """The answer at ``llm.response_path`` in a reply body."""
        if not whole:
            raise MalformedReplyError(f"reply is longer than {len(raw):,} bytes (llm.max_answer_chars); it starts "
                                      f"{_head(raw)}")
        try:
            data = json.loads(raw)
        except ValueError:
            raise MalformedReplyError(f"reply is not JSON; it starts {_head(raw)}") from None
        found = self.path.search(data)
        if not isinstance(found, str):
            what = "nothing" if found is None else f"a JSON {type(found).__name__}"
            raise TargetReplyError(f"llm.response_path {self.cfg.response_path!r} finds {what}, not a string, in "
                                   f"the reply; it starts {_head(raw)}")
        return capped(found, self._cap)

    @staticmethod
    def preflight(cfg: LLMConfig, user_fields: set[str]) -> None:
        """The reply path compiles, the headers' variables are set, and the request has a place for the
        person's fields an identity signal sends (``user_fields``)."""
        import jmespath
        from jmespath.exceptions import JMESPathError

        try:
            jmespath.compile(cfg.response_path or "")
        except JMESPathError as err:
            raise ProviderError(f"llm.response_path {cfg.response_path!r} is not a JMESPath expression "
                                f"({str(err).splitlines()[0]}); for example data.answer or "
                                "choices[0].message.content.") from None
        expand_env(cfg.headers, "llm.headers")
        check_request_fields(cfg, user_fields)

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        raise NotImplementedError("an http target is called one prompt at a time")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def _read(reply: Any, limit: int) -> tuple[bytes, bool]:
    """(the body, at most ``limit`` bytes; whether that is all of it)."""
    parts, size = [], 0
    async for chunk in reply.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(parts)[:limit], False
    return b"".join(parts), True


def _head(raw: bytes) -> str:
    text = raw[: REPLY_HEAD * 4].decode("utf-8", "replace")
    return repr(text[:REPLY_HEAD] + ("…" if len(text) > REPLY_HEAD or len(raw) > REPLY_HEAD * 4 else ""))


PROVIDERS.add("http", HttpProvider)
