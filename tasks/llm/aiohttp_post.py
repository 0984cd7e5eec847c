"""Chat-completion requests over one aiohttp connection pool, sent as the OpenAI client would send them.

The OpenAI SDK spends most of a call's client CPU building each request (options, URL parsing, header
merging, an httpx request object) and wrapping each reply, several times what the HTTP exchange itself
costs. :class:`AiohttpPost` asks the SDK once, when the run's client opens, to build a request through
a transport that only records it; the URL (base URL, Azure deployment path and ``api-version``) and the
headers (the key, the SDK's own headers) it records are then reused for every call, and only the JSON
body changes. Replies come back as bytes. Failures are the SDK's own exception classes, so the runner's
error classes, ``Retry-After`` handling and retries are unchanged:

* a reply of status 400 or more becomes the exception the SDK raises for it (``RateLimitError``,
  ``InternalServerError``, a content filter's ``BadRequestError``, ...);
* a refused, reset or closed connection is an ``APIConnectionError``;
* a connection not made within its timeout is an ``APITimeoutError``. Reads have no timeout here: the
  caller's deadline bounds the whole request (the runner's ``llm.timeout``, shorter than the pool's
  timeout, so a read timeout could never fire first, and it would set two timers on every call).

A reply body is read up to a byte cap and no further: past it the connection is dropped, and the
caller learns the body is not whole (an endpoint that ignores ``max_tokens`` cannot fill memory).
A streamed reply (:meth:`AiohttpPost.stream`) is handed to the caller's reader chunk by chunk as it
arrives, and its connection dropped when the reader stops early, fails or is cancelled.

The recorded headers hold the API key: they live in this object only and are never logged or stored.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import aiohttp
import openai
from yarl import URL

T = TypeVar("T")
DROPPED_HEADERS = frozenset({"content-length", "host", "idempotency-key"})  # per request: aiohttp's or unique


def _http_module() -> Any:
    """The httpx package the OpenAI SDK is built on (``httpx2`` in recent releases, ``httpx`` before)."""
    try:
        import httpx2

        return httpx2
    except ImportError:
        import httpx

        return httpx


def env_proxy(url: str) -> dict[str, Any]:
    """The proxy that ``HTTP(S)_PROXY`` / ``NO_PROXY`` name for ``url``, looked up once.

    aiohttp's ``trust_env`` would look it up again in a worker thread for every request.
    """
    from aiohttp.helpers import get_env_proxy_for_url

    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:  # no proxy set for this scheme, or the host is in NO_PROXY
        return {}
    return {"proxy": proxy, "proxy_auth": auth}


async def read_capped(reply: Any, limit: int | None) -> tuple[bytes, bool]:
    """(at most ``limit`` bytes of an aiohttp reply's body, whether that is all of it), read in chunks."""
    if limit is None or (reply.content_length is not None and reply.content_length <= limit):
        return await reply.read(), True
    parts, size = [], 0
    while size <= limit:
        chunk = await reply.content.read(min(1 << 16, limit + 1 - size))
        if not chunk:
            return b"".join(parts), True
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)[:limit], False


async def _chunks(reply: Any) -> AsyncGenerator[bytes, None]:
    """An aiohttp reply's body as it arrives."""
    async for chunk in reply.content.iter_any():
        yield chunk


class AiohttpPost:
    """POST a chat-completion body to one recorded URL with the recorded headers, over one aiohttp pool."""

    def __init__(self, client: Any, request: Any, connections: int, timeout: float) -> None:
        self._client = client  # the OpenAI client: it turns an error reply into its exception
        self._request = request  # the recorded request, attached to exceptions as the SDK does
        # credentials in the base URL reach the server as the Basic header httpx built from them (in
        # the recorded headers); aiohttp refuses a URL with them beside an Authorization header
        self.url = str(URL(str(request.url)).with_user(None))
        self._headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED_HEADERS}
        self._proxy = env_proxy(self.url)
        # the session's default headers: aiohttp copies them into each request as one multidict, where
        # headers passed per call would be merged into it one by one
        self._session = aiohttp.ClientSession(
            headers=self._headers,
            connector=aiohttp.TCPConnector(limit=connections),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=None),
        )

    @classmethod
    async def open(cls, client: Any, path: str, body: dict, connections: int, timeout: float) -> AiohttpPost:
        """Record the request ``client.post(path, body=body)`` would send, and open the pool."""
        http = _http_module()
        recorded: list[Any] = []

        def record(request: Any) -> Any:
            recorded.append(request)
            return http.Response(200, json={}, request=request)

        probe = http.AsyncClient(transport=http.MockTransport(record))
        try:
            await client.with_options(http_client=probe, max_retries=0).post(path, body=body, cast_to=http.Response)
        finally:
            await probe.aclose()
        return cls(client, recorded[-1], connections, timeout)

    async def post(self, data: bytes, limit: int | None = None) -> tuple[bytes, bool]:
        """(the reply body of one POST of the JSON bytes ``data``, at most ``limit`` bytes; whether that
        is all of it); the SDK's exception for an error status or a failed connection."""
        try:
            async with self._session.post(self.url, data=data, **self._proxy) as reply:
                raw, whole = await read_capped(reply, limit)
                status, headers = reply.status, reply.raw_headers
                if not whole:
                    reply.close()  # the rest of the body is never read: drop the connection
        except (aiohttp.ServerTimeoutError, TimeoutError) as err:
            raise openai.APITimeoutError(request=self._request) from err
        except aiohttp.ClientError as err:
            raise openai.APIConnectionError(message=f"{type(err).__name__}: {err}", request=self._request) from err
        if status >= 400:
            self._raise_status(status, headers, raw, whole)
        return raw, whole

    async def stream(self, data: bytes, read: Callable[[AsyncGenerator[bytes, None], str | None], Awaitable[T]],
                     limit: int | None = None) -> T:
        """What ``read(chunks, content type)`` makes of the body of one POST of ``data``, handed over in
        chunks as they arrive (a streamed reply); an error status's body is read up to ``limit`` bytes
        and raised as the SDK's exception. The connection is dropped when ``read`` stops early, raises
        or is cancelled (the caller's deadline)."""
        try:
            async with self._session.post(self.url, data=data, **self._proxy) as reply:
                if reply.status >= 400:
                    raw, whole = await read_capped(reply, limit)
                    status, headers = reply.status, reply.raw_headers
                    if not whole:
                        reply.close()
                else:
                    try:
                        result = await read(_chunks(reply), reply.headers.get("content-type"))
                    except BaseException:
                        reply.close()
                        raise
                    if not reply.content.at_eof():
                        reply.close()  # stopped at a cap or at the end event: the rest is never read
                    return result
        except (aiohttp.ServerTimeoutError, TimeoutError) as err:
            raise openai.APITimeoutError(request=self._request) from err
        except aiohttp.ClientError as err:
            raise openai.APIConnectionError(message=f"{type(err).__name__}: {err}", request=self._request) from err
        self._raise_status(status, headers, raw, whole)

    def _raise_status(self, status: int, headers: Any, raw: bytes, whole: bool) -> NoReturn:
        """Raise the SDK's exception for an error reply."""
        http = _http_module()
        if not whole:  # the cut body no longer has the length the header gives
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        response = http.Response(status, headers=list(headers), content=raw, request=self._request)
        raise self._client._make_status_error_from_response(response)

    async def aclose(self) -> None:
        await self._session.close()
