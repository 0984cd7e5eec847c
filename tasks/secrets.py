"""Secret material a run was given outside the environment, kept out of everything it stores.

A base URL may carry credentials (``http://alice:PASSWORD@host/v1``). :func:`split_url` takes them
out: the config keeps the URL without them (so DuckDB, Prefect parameters, artifacts and reports
never see them), the calls use the whole URL, and :func:`register` records the password, the
``user:password`` pair and its base64 form (what HTTP Basic auth sends, and what a server may echo
back), so that every scrubbed message (:func:`equilens.tasks.llm.base.scrub_secrets`) replaces them.
Process-wide on purpose: the values are known only to the process that read the config.
"""

from __future__ import annotations

import base64
from urllib.parse import unquote, urlsplit, urlunsplit

_REGISTERED: set[str] = set()


def register(*values: str) -> None:
    """Treat ``values`` as secrets for the rest of the process (values under 6 characters are too
    common to replace safely and are left out)."""
    _REGISTERED.update(v for v in values if v and len(v) >= 6)


def registered() -> set[str]:
    return set(_REGISTERED)


def split_url(url: str) -> tuple[str, str | None]:
    """``(url without user:password@, the whole url or None when it carried none)``; the
    credentials are registered as secrets."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    pair = f"{user}:{password}"
    register(password, pair, base64.b64encode(pair.encode()).decode(), parts.netloc.rsplit("@", 1)[0])
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host)), url
