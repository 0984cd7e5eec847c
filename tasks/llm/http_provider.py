"""``llm.provider: http``: the application is a JSON HTTP API.

``llm.base_url`` is the URL posted to; ``llm.request`` the JSON body, a template whose strings may hold
``{prompt}``, ``{system}``, a conversation's ``{messages}`` and ``{history}`` (below) and, for identity
runs with the ``app`` placement, ``{name}`` or ``{identity}`` (filled as Python strings, so the JSON is
escaped correctly whatever the text holds); ``llm.headers`` the headers, ``${VAR}`` in a value read
from the environment and scrubbed like a key;
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

Conversations: ``{messages}`` in ``llm.request`` is the conversation so far (a JSON list of ``{"role",
"content"}``, this turn last), ``{history}`` the messages before this turn. An application that keeps
the history itself names its session in ``llm.session``: a conversation's first turn goes without one,
the id is read at ``session.id_path`` in that first reply, and every later turn of the conversation
carries it as ``session.send_as`` says (``header:NAME``, or a request field, dotted for nesting). Each
conversation keeps its own cookies (those its replies set go back on its later turns only); the client
keeps none, so single prompts and other conversations never carry them.

``llm.stream``: the reply is read as it arrives, as server-sent events or JSON lines
(:mod:`equilens.tasks.llm.streams`), ``llm.response_path`` applied to each event and the strings it finds
joined; an event where it finds none (a final usage event) is skipped, a stream where no event has one
is a failed row naming the path. ``Completion.first_token_s`` is the time to the first non-empty piece.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from contextlib import aclosing
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError, json_kind
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
from equilens.tasks.llm.streams import EventReader, MalformedReplyError, decoded_chunks, join_stream
from equilens.tasks.llm.targets import call_values, check_request_fields, expand_env, fill

REPLY_HEAD = 300  # characters of a reply shown in a failed row's message
_HEADER = re.compile(r"(?i)header:([!#$%&'*+.^_`|~0-9A-Za-z-]+)")
_FIELD_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*")


class HttpProvider:
    """Posts ``llm.request`` to ``llm.base_url`` and reads the answer at ``llm.response_path``."""

    batched = False
    name = "http"

    def __init__(self, cfg: LLMConfig) -> None:
        import jmespath

        self.cfg, self.model = cfg, cfg.model
        self.path = jmespath.compile(cfg.response_path or "")
        self.session_path = jmespath.compile(cfg.session.id_path) if cfg.session is not None else None
        # read now, so the values are registered as secrets before the run's scrubber lists them
        self._headers = {"content-type": "application/json", "accept-encoding": "gzip, deflate",
                         **{k: str(v) for k, v in expand_env(cfg.headers, "llm.headers").items()}}
        self._client: Any = None
        self._cap, self._max_bytes = answer_char_cap(cfg), reply_byte_cap(cfg)
        # per conversation, kept across the stage's waves (aclose/aopen): its session id, its cookies
        self._sessions: dict[str, str] = {}
        self._jars: dict[str, Any] = {}

    async def aopen(self) -> None:
        if self._client is not None:
            return
        from http.cookiejar import CookieJar, DefaultCookiePolicy

        import httpx

        limits = httpx.Limits(max_connections=self.cfg.max_concurrency,
                              max_keepalive_connections=self.cfg.max_concurrency)
        # the runner's deadline (llm.timeout) bounds the whole request; this one each socket operation.
        # The client's own jar takes no cookies: a conversation's are kept apart (_jars), a prompt's dropped
        self._client = httpx.AsyncClient(timeout=self.cfg.timeout + 1.0, limits=limits,
                                         cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])))

    def conversation_problem(self) -> str | None:
        """Why this application cannot be given a conversation (None: the request carries the earlier
        messages, or the application keeps them in its session)."""
        from equilens.tasks.config.sections import template_fields

        if self.cfg.session is not None or template_fields(self.cfg.request) & {"messages", "history"}:
            return None
        return ("llm.request holds neither {messages} nor {history} and llm.session is not set, so the application "
                'would see each turn alone: put "{messages}" where it takes the conversation (a list of {"role", '
                '"content"} objects), or set llm.session if it keeps the history itself.')

    async def acomplete(self, prompt: str, sample_idx: int, system: str | None = None,
                        user: dict[str, str] | None = None, history: list[dict[str, str]] | None = None,
                        conversation: str | None = None) -> Completion:
        if self._client is None:
            await self.aopen()
        body, headers = fill(self.cfg.request, call_values(self.cfg, prompt, system, user, history)), self._headers
        first, jar = False, None
        if conversation is not None:
            import httpx

            if not history:  # a conversation's first turn starts afresh: no session, no cookies
                self._sessions.pop(conversation, None)
                self._jars[conversation] = httpx.Cookies()
            jar = self._jars.setdefault(conversation, httpx.Cookies())
            if self.cfg.session is not None:
                first = not history
                body, headers = (body, headers) if first else self._with_session(body, headers, conversation)
        request = self._client.build_request("POST", self.cfg.call_url(), headers=headers,
                                             content=json.dumps(body, ensure_ascii=False).encode())
        if jar is not None:
            jar.set_cookie_header(request)
        t0 = time.perf_counter()
        reply = await self._client.send(request, stream=True)
        try:  # closed on every way out, a deadline's cancellation included
            if jar is not None:
                jar.extract_cookies(reply)
            if 300 <= reply.status_code < 400:
                where = reply.headers.get("location") or "nowhere (no Location header)"
                raise RedirectedError(f"the server redirected (HTTP {reply.status_code}) to {where}, which is not "
                                      "followed: set llm.base_url to the address it names")
            if self.cfg.stream and reply.status_code < 400:
                return await self._streamed(reply, t0, conversation if first else None)
            raw, whole = await read_decoded(reply, self._max_bytes)
            if reply.status_code >= 400:
                raise EndpointStatusError(reply.status_code, f"HTTP {reply.status_code}: {_head(raw)}", reply)
        finally:
            await reply.aclose()
        comp = self.answer(raw, whole)
        if first and conversation is not None:
            self._sessions[conversation] = self._session_id(raw)
        return comp

    def _with_session(self, body: Any, headers: dict[str, str], conversation: str) -> tuple[Any, dict[str, str]]:
        """The request of a conversation's later turn with the session id its first reply gave."""
        assert self.cfg.session is not None
        sid = self._sessions.get(conversation)
        if sid is None:
            raise TargetReplyError("this turn's conversation has no session id: its first turn was not answered "
                                   "by this run's client (llm.session)")
        header = _HEADER.fullmatch(self.cfg.session.send_as.strip())
        if header is not None:
            return body, {**headers, header.group(1): sid}
        *outer, last = self.cfg.session.send_as.strip().split(".")
        place = body
        for name in outer:
            place = place.setdefault(name, {})
        place[last] = sid
        return body, headers

    def _session_id(self, raw: bytes) -> str:
        """The session id at ``llm.session.id_path`` in a first turn's reply; TargetReplyError naming
        what it found there and the reply's keys otherwise."""
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        found = _id_value(self.session_path, data)
        if found is not None:
            return found
        raise TargetReplyError(self._no_session(data, "the first turn's reply", tail=f"; the reply starts {_head(raw)}"))

    def _no_session(self, data: Any, where: str, keys_of: str = "its keys", tail: str = "") -> str:
        assert self.cfg.session is not None and self.session_path is not None
        value = self.session_path.search(data) if data is not None else None
        what = "nothing" if value is None else json_kind(value)
        keys = f" ({keys_of}: {', '.join(map(repr, list(data)[:12]))})" if isinstance(data, dict) else ""
        return (f"llm.session.id_path {self.cfg.session.id_path!r} finds {what}, not a string or number, in {where}"
                f"{keys}: set llm.session.id_path to where the application's first reply gives its session id{tail}")

    async def _streamed(self, reply: Any, t0: float, first: str | None) -> Completion:
        """The answer of a streamed reply: the strings ``llm.response_path`` finds in its events, joined
        (for a conversation's ``first`` turn with a session, its id read from the first event that has one)."""
        found_id: list[str] = []
        first_event: list[Any] = []

        def pick(event: Any) -> str | None:
            if first is not None and not found_id:
                first_event[:] = first_event or [event]
                sid = _id_value(self.session_path, event)
                if sid is not None:
                    found_id.append(sid)
            piece = self.path.search(event)
            return piece if isinstance(piece, str) else None

        events = EventReader(decoded_chunks(reply), reply.headers.get("content-type"), self._max_bytes)
        joined = await join_stream(events, pick, self._cap, t0)
        if not joined.pieces:
            raise TargetReplyError(f"llm.response_path {self.cfg.response_path!r} finds no string in any of the "
                                   f"{joined.events} events of the streamed reply: fix llm.response_path (it is "
                                   "applied to each event)")
        if first is not None:
            if not found_id:
                raise TargetReplyError(self._no_session(first_event[0] if first_event else None,
                                                        f"the {joined.events} events of the first turn's streamed "
                                                        "reply", keys_of="the first one's keys"))
            self._sessions[first] = found_id[0]
        return Completion(joined.text, "length" if joined.truncated else "stop", truncated=joined.truncated,
                          first_token_s=joined.first_token_s)

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
            what = "nothing" if found is None else json_kind(found)
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
        """The reply path compiles, the headers' variables are set, the request has a place for the
        person's fields an identity signal sends (``user_fields``), and ``llm.session`` says where to
        find the session id and where to send it."""
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
        if cfg.session is not None:
            _check_session(cfg)

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        raise NotImplementedError("an http target is called one prompt at a time")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _check_session(cfg: LLMConfig) -> None:
    """``llm.session.id_path`` compiles; ``send_as`` is ``header:NAME`` or a field path the request can take."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    assert cfg.session is not None
    id_path, send_as = cfg.session.id_path, cfg.session.send_as.strip()
    try:
        jmespath.compile(id_path)
    except JMESPathError as err:
        raise ProviderError(f"llm.session.id_path {id_path!r} is not a JMESPath expression "
                            f"({str(err).splitlines()[0]}); for example session.id or data.session_id.") from None
    if send_as.lower().startswith("header:"):
        if _HEADER.fullmatch(send_as) is None:
            raise ProviderError(f"llm.session.send_as {send_as!r} names no valid header: write header:NAME, "
                                "e.g. header:X-Session-Id.")
        return
    if _FIELD_PATH.fullmatch(send_as) is None:
        raise ProviderError(f"llm.session.send_as {send_as!r} is neither header:NAME nor a request field: write "
                            "a field name, dotted for nesting (session_id, meta.session), or header:NAME.")
    place: Any = cfg.request
    for name in send_as.split(".")[:-1] + [""]:
        if not isinstance(place, dict):
            raise ProviderError(f"llm.session.send_as {send_as!r} is a request field, but llm.request has no JSON "
                                "object there to put it in: send it as header:NAME, or name a field of an object.")
        place = place.get(name, {}) if name else place


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
    one streaming decoder (:func:`~equilens.tasks.llm.streams.decoded_chunks`) whose pieces are bounded,
    so a small compressed reply cannot expand past the cap in memory; an encoding other than gzip,
    deflate or none is a malformed reply naming it."""
    parts, size = [], 0
    async with aclosing(decoded_chunks(reply)) as chunks:
        async for out in chunks:
            parts.append(out)
            size += len(out)
            if size > limit:
                return b"".join(parts)[:limit], False
    return b"".join(parts), True


def _id_value(path: Any, data: Any) -> str | None:
    """The session id ``path`` finds in ``data``: a non-empty string or a number, as a string; else None."""
    found = path.search(data) if path is not None and data is not None else None
    if isinstance(found, bool) or not isinstance(found, (str, int, float)) or found == "":
        return None
    return str(found)


def _head(raw: bytes) -> str:
    text = raw[: REPLY_HEAD * 4].decode("utf-8", "replace")
    return repr(text[:REPLY_HEAD] + ("…" if len(text) > REPLY_HEAD or len(raw) > REPLY_HEAD * 4 else ""))


PROVIDERS.add("http", HttpProvider)
