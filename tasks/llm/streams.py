"""Streamed replies (``llm.stream``): server-sent events or JSON lines, read as they arrive.

A stream is read as server-sent events (``data: ...`` lines, an event ending at a blank line, ``data:
[DONE]`` ending the stream; comments and the other fields ignored) or as JSON lines (one JSON value a
line). The first non-blank line decides: ``data:``, ``event:``, ``id:``, ``retry:`` or a ``:`` comment
is an event stream, ``{`` or ``[`` a JSON-lines one; anything else is read as the ``content-type`` says
(``text/event-stream``, else JSON lines). Each event's JSON goes to the caller's ``pick``, which gives
the event's piece of the answer (None: the event carries none, e.g. a final usage event); the pieces
are joined (:func:`join_stream`).

Reading stops once the joined answer passes the answer cap (it is kept cut, ``truncated``) or the bytes
read pass the byte cap (counted after decompression); the runner's deadline (``llm.timeout``) bounds a
stream that never ends, and the caller's ``async with`` closes its connection on the way out. An event
that is not JSON is a :class:`MalformedReplyError` naming its number and its start.

:class:`ChatChunks` reads the chunks of an OpenAI chat-completion stream (``"stream": true``): the
first choice's ``delta.content`` pieces, its ``finish_reason``, the usage of the last chunk.
"""

from __future__ import annotations

import codecs
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from equilens.tasks.errors import json_kind
from equilens.tasks.llm.base import Completion

CHUNK = 1 << 16  # the most bytes one decompression step writes
EVENT_HEAD = 120  # characters of a broken event shown in its message
_SSE_LINE = re.compile(r"(?:data|event|id|retry)?:")


class MalformedReplyError(ValueError):
    """A reply that is not what was asked for: not JSON, an event that is not JSON, an unread encoding
    (retried: a proxy's error page is often passing)."""


async def decoded_chunks(reply: Any) -> AsyncGenerator[bytes, None]:
    """The body of an httpx response, decoded (gzip, deflate or none) as it arrives, at most
    :data:`CHUNK` bytes a piece, so a small compressed chunk cannot expand into memory at once; an
    encoding other than those is a :class:`MalformedReplyError` naming it."""
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
    try:
        async for chunk in reply.aiter_raw():
            if decoder is None:
                yield chunk
                continue
            while chunk:
                out = decoder.decompress(chunk, CHUNK)
                chunk = decoder.unconsumed_tail
                if out:
                    yield out
                elif not chunk:
                    break
    except zlib.error as err:
        raise MalformedReplyError(f"reply's {encoding} body does not decode ({err})") from None


class EventReader:
    """The JSON events of a streamed body (``reader.events()``), read up to ``limit`` bytes.

    After reading, ``count`` is how many events were read and ``whole`` whether the body was read to
    its end (False: reading stopped at ``limit``)."""

    def __init__(self, chunks: AsyncGenerator[bytes, None], content_type: str | None, limit: int) -> None:
        self._chunks, self._limit = chunks, limit
        self._sse_type = "text/event-stream" in (content_type or "").lower()
        self._sse: bool | None = None  # decided by the first non-blank line
        self._data: list[str] = []  # the data lines of the event being read
        self.count, self.whole, self.done = 0, True, False

    async def events(self) -> AsyncIterator[Any]:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        rest, size = "", 0
        async with aclosing(self._chunks) as chunks:
            async for chunk in chunks:
                if size + len(chunk) > self._limit:
                    chunk, self.whole = chunk[: self._limit - size], False
                size += len(chunk)
                *lines, rest = (rest + decoder.decode(chunk)).split("\n")
                for line in lines:
                    for event in self._line(line.rstrip("\r")):
                        yield event
                    if self.done:
                        return
                if not self.whole:
                    return
        for line in [*(rest + decoder.decode(b"", final=True)).split("\n"), ""]:  # the last line, then its end
            for event in self._line(line.rstrip("\r")):
                yield event
            if self.done:
                return

    def _line(self, line: str) -> list[Any]:
        """The events (zero or one) that ``line`` completes."""
        if self._sse is None:
            if not line.strip():
                return []
            start = line.lstrip()
            self._sse = bool(_SSE_LINE.match(start)) or (self._sse_type and start[:1] not in "{[")
        if not self._sse:
            return [self._event(line)] if line.strip() else []
        if not line:  # an event ends at a blank line
            data, self._data = "\n".join(self._data), []
            if not data:
                return []
            if data.strip() == "[DONE]":
                self.done = True
                return []
            return [self._event(data)]
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return []

    def _event(self, text: str) -> Any:
        import json

        self.count += 1
        try:
            return json.loads(text)
        except ValueError:
            head = text.strip()
            shown = repr(head[:EVENT_HEAD] + ("…" if len(head) > EVENT_HEAD else ""))
            raise MalformedReplyError(f"event {self.count} of the streamed reply is not JSON; it starts {shown}") from None


class Joined:
    """A streamed answer: ``text`` (its pieces joined, at most ``cap`` characters), ``pieces`` (how many
    events gave one), ``truncated`` (cut at the cap or at the byte cap), ``first_token_s`` (seconds from
    ``t0`` to the first non-empty piece), ``events`` (how many were read)."""

    def __init__(self, cap: int, t0: float) -> None:
        self.cap, self.t0 = cap, t0
        self.parts: list[str] = []
        self.size = self.pieces = self.events = 0
        self.truncated = False
        self.first_token_s: float | None = None

    def add(self, piece: str) -> bool:
        """Add one piece; True once the answer is past the cap (read no further)."""
        self.pieces += 1
        if piece and self.first_token_s is None:
            self.first_token_s = time.perf_counter() - self.t0
        self.parts.append(piece)
        self.size += len(piece)
        self.truncated = self.size > self.cap
        return self.truncated

    @property
    def text(self) -> str:
        return "".join(self.parts)[: self.cap]


async def join_stream(reader: EventReader, pick: Callable[[Any], str | None], cap: int, t0: float) -> Joined:
    """The pieces ``pick`` finds in the events of ``reader``, joined, up to ``cap`` characters."""
    joined = Joined(cap, t0)
    async with aclosing(reader.events()) as events:
        async for event in events:
            piece = pick(event)
            if piece is not None and joined.add(piece):
                break
    joined.events = reader.count
    joined.truncated = joined.truncated or not reader.whole
    return joined


async def aiter_bytes(reply: Any) -> AsyncGenerator[bytes, None]:
    """The decoded body of an httpx response as it arrives, as a generator (closed when reading stops)."""
    async for chunk in reply.aiter_bytes():
        yield chunk


class ChatChunks:
    """What the chunks of a streamed chat completion say: each one's piece of the first choice's
    message (``choices[0].delta.content``), the ``finish_reason`` of the one that has it, the usage of
    the last one that carries it (``stream_options.include_usage``)."""

    def __init__(self) -> None:
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.choices = False  # some chunk had a choice

    def piece(self, event: Any) -> str | None:
        if not isinstance(event, dict):
            raise MalformedReplyError(f"a streamed chunk is {json_kind(event)}, not an object")
        if event.get("error"):
            raise MalformedReplyError(f"the stream carries an error: {event['error']}")
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        choices = event.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if choice is None:
            return None
        self.choices = True
        self.finish = choice.get("finish_reason") or self.finish
        delta = choice.get("delta") or choice.get("message") or {}  # a server that answered unstreamed: its message
        content = delta.get("content") if isinstance(delta, dict) else None
        return content if isinstance(content, str) else None

    def completion(self, joined: Joined) -> Completion:
        text = joined.text if joined.pieces or self.choices else None  # no choice at all: no answer
        return Completion(text, "length" if joined.truncated else self.finish, self.usage.get("prompt_tokens"),
                          self.usage.get("completion_tokens"), truncated=joined.truncated,
                          first_token_s=joined.first_token_s)
