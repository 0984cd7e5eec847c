"""Secret material a run was given outside the environment, kept out of everything it stores.

A base URL may carry credentials (``http://alice:PASSWORD@host/v1``). :func:`split_url` takes them
out: the config keeps the URL without them (so DuckDB, Prefect parameters, artifacts and reports
never see them), the calls use the whole URL, and :func:`register` records the password, the
``user:password`` pair and its base64 form (what HTTP Basic auth sends, and what a server may echo
back), so that every scrubbed message (:func:`equilens.tasks.llm.base.scrub_secrets`) replaces them.
The password and the pair are registered both as typed (``p%40ss``) and decoded (``p@ss``).
Process-wide on purpose: the values are known only to the process that read the config.

A secret comes back in other spellings than the one it was given in: :func:`forms` lists them (as
typed, percent-decoded, percent-encoded with upper- and lower-case hex, ``+`` for a space, and as
JSON and Python would quote it inside a string), and :func:`runs` the 8-character pieces from which
a scrubber finds any run of 8 or more characters of a secret (a key with its first characters cut
off, a token wrapped over two lines).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

_REGISTERED: set[str] = set()
RUN = 8  # a run of this many characters of a secret is scrubbed wherever it occurs


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
    typed = parts.netloc.rsplit("@", 1)[0]  # user:password as written, percent-encoding and all
    typed_password = typed.split(":", 1)[1] if ":" in typed else ""
    register(password, typed_password, pair, typed, base64.b64encode(pair.encode()).decode(),
             base64.b64encode(typed.encode()).decode())
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host)), url


def forms(value: str) -> set[str]:
    """``value`` and the spellings it may come back in: percent-decoded, percent-encoded (upper- and
    lower-case hex, ``+`` for a space), and escaped as JSON and Python write it inside a string."""
    decoded = unquote(value)
    out = {value, decoded}
    for v in (value, decoded):
        encoded = quote(v, safe="")
        out |= {encoded, _lower_hex(encoded), quote_plus(v, safe=""), json.dumps(v)[1:-1], repr(v)[1:-1]}
    return {f for f in out if f}


def _lower_hex(encoded: str) -> str:
    parts = encoded.split("%")
    return parts[0] + "".join("%" + p[:2].lower() + p[2:] for p in parts[1:])


def runs(values: Iterable[str], size: int = RUN) -> set[str]:
    """Every ``size``-character piece of the values at least ``size`` long: a text holds a run of
    ``size`` or more characters of a value exactly where such pieces occur."""
    return {v[i:i + size] for v in values if len(v) >= size for i in range(len(v) - size + 1)}
