"""``llm.provider: http``: the application is a JSON HTTP API.

``llm.base_url`` is the URL posted to; ``llm.request`` the JSON body, a template whose strings may hold
``{prompt}``, ``{system}`` and, for identity runs with the ``app`` placement, ``{name}`` or
``{identity}`` (filled as Python strings, so the JSON is escaped correctly whatever the text holds);
``llm.headers`` the headers, ``${VAR}`` in a value read from the environment and scrubbed like a key;
``llm.response_path`` a JMESPath expression to the answer string in the reply (``data.answer``,
``choices[0].message.content``).

A status of 400 or more is an :class:`~equilens.tasks.llm.base.EndpointStatusError` (429 and 5xx
retried, ``Retry-After`` honoured); a reply that is not JSON is retried like any malformed reply; a
path that finds no string is a failed row naming the path, the keys the reply has and its start
(scrubbed, capped); a redirect (not followed) names where it points.

A reply is read up to :func:`~equilens.tasks.llm.base.reply_byte_cap` bytes, counted after
decompression: the raw bytes go through one streaming decoder (gzip or deflate, the encodings asked
for) whose output is bounded by what is left of the cap, so a compressed reply that expands to a
gibibyte costs no more memory than the cap at any concurrency. A body cut at the cap keeps its answer
as far as it came, flagged like any answer cut at the answer cap, where the reply path's last field
occurs once in the bytes read (``{"data": {"answer": "...``); otherwise the row fails, not retried.
"""

from __future__ import annotations

import json
import re
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
    cut_json_string,
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
        self._headers = {"content-type": "application/json", "accept-encoding": "gzip, deflate",
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
            if 300 <= reply.status_code < 400:
                where = reply.headers.get("location") or "nowhere (no Location header)"
                raise RedirectedError(f"the server redirected (HTTP {reply.status_code}) to {where}, which is not "
                                      "followed: set llm.base_url to the address it names")
            raw, whole = await read_decoded(reply, self._max_bytes)
            if reply.status_code >= 400:
                raise EndpointStatusError(reply.status_code, f"HTTP {reply.status_code}: {_head(raw)}", reply)
        return self.answer(raw, whole)

    def answer(self, raw: bytes, whole: bool = True) -> Completion:
        """The answer at ``llm.response_path`` in a reply body (one cut at the byte cap: as far as it came)."""
        if not whole:
            return self._cut_answer(raw)
        try:
            data = json.loads(raw)
        except ValueError:
            raise MalformedReplyError(f"reply is not JSON; it starts {_head(raw)}") from None
        found = self.path.search(data)
        if not isinstance(found, str):
            what = "nothing" if found is None else f"a JSON {type(found).__name__}"
            keys = f" (its keys: {', '.join(map(repr, list(data)[:12]))})" if isinstance(data, dict) else ""
            raise TargetReplyError(f"llm.response_path {self.cfg.response_path!r} finds {what}, not a string, in "
                                   f"the reply{keys}: fix llm.response_path; the reply starts {_head(raw)}")
        return capped(found, self._cap)

    def _cut_answer(self, raw: bytes) -> Completion:
        """The answer of a body cut at the byte cap, as far as it came, when the reply path's last field
        occurs exactly once in it; TargetReplyError (not retried: the same reply would come) otherwise."""
        field = _last_field(self.cfg.response_path or "")
        text = raw.decode("utf-8", "ignore")
        found = list(re.finditer(r'"' + re.escape(field) + r'"\s*:\s*"', text)) if field else []
        content = cut_json_string(text, found[0].end()) if len(found) == 1 else None
        if content is not None:
            return Completion(content[: self._cap], "length", truncated=True)
        raise TargetReplyError(f"reply is longer than {len(raw):,} bytes (llm.max_answer_chars) and the answer at "
                               f"llm.response_path {self.cfg.response_path!r} cannot be told apart in its first "
                               f"bytes; it starts {_head(raw)}")

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


class RedirectedError(EndpointStatusError):
    """A 3xx reply: redirects are not followed (a key must not travel to another address); not retried."""

    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(0, message)


def _last_field(path: str) -> str:
    """The last field name of a plain JMESPath (``data.answer``, ``choices[0].message.content``); "" for
    any other expression."""
    names = re.fullmatch(r"[A-Za-z_][\w]*(?:\[\d+\])*(?:\.[A-Za-z_][\w]*(?:\[\d+\])*)*", path.strip())
    return re.sub(r"\[\d+\]", "", path.strip().split(".")[-1]) if names else ""


async def read_decoded(reply: Any, limit: int) -> tuple[bytes, bool]:
    """(the body decoded, at most ``limit`` bytes of it; whether that is all of it). The raw bytes pass
    one streaming decoder whose output is bounded by what is left of ``limit``, so a small compressed
    reply cannot expand past the cap in memory; an encoding other than gzip, deflate or none is a
    malformed reply naming it."""
    import zlib

    encoding = (reply.headers.get("content-encoding") or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        decoder: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        decoder = zlib.decompressobj()
    elif encoding == "identity":
        decoder = None
    else:
        raise MalformedReplyError(f"reply is encoded as {encoding!r}; equilens reads gzip, deflate or plain replies")
    parts, size = [], 0
    try:
        async for chunk in reply.aiter_raw():
            while chunk:
                if decoder is None:
                    out, chunk = chunk[: limit + 1 - size], b""
                else:
                    out = decoder.decompress(chunk, limit + 1 - size)
                    chunk = decoder.unconsumed_tail
                parts.append(out)
                size += len(out)
                if size > limit:
                    return b"".join(parts)[:limit], False
                if decoder is not None and not out:
                    break
    except zlib.error as err:
        raise MalformedReplyError(f"reply's {encoding} body does not decode ({err})") from None
    return b"".join(parts), True


def _head(raw: bytes) -> str:
    text = raw[: REPLY_HEAD * 4].decode("utf-8", "replace")
    return repr(text[:REPLY_HEAD] + ("…" if len(text) > REPLY_HEAD or len(raw) > REPLY_HEAD * 4 else ""))


PROVIDERS.add("http", HttpProvider)
