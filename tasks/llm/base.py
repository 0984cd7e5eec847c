"""The LLM provider extension point and the records that flow through the LLM stage.

A provider answers one prompt (``acomplete``, for remote endpoints called concurrently) or a
batch of prompts (``complete_batch``, for in-process models that batch on the accelerator). Errors
are raised; the runner retries, classifies and records them per row.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from equilens.tasks.config.sections import APPLICATION_PROVIDERS
from equilens.tasks.registry import Registry

if TYPE_CHECKING:
    from equilens.tasks.config import LLMConfig


@dataclass(frozen=True)
class Completion:
    text: str | None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    top_logprobs: dict[str, float] | None = None
    """The first answer token's most likely tokens and their log-probabilities, when asked for."""
    truncated: bool = False
    """The reply ran past the answer cap (:func:`answer_char_cap`): ``text`` is its first characters."""
    first_token_s: float | None = None
    """Seconds from sending the request to the first piece of a streamed answer (``llm.stream``)."""


@dataclass(frozen=True)
class LLMRequest:
    prompt: str
    sample_idx: int
    cache_key: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    system: str | None = None
    """This call's system message; None: ``llm.system_prompt`` (a user profile varies it per call)."""
    user: tuple[tuple[str, str], ...] | None = None
    """The person this call is made for, as the application's own fields receive them (identity placement
    ``app``): ``(("name", "Latoya Washington"),)``; None for calls made for nobody in particular."""
    history: tuple[dict[str, str], ...] | None = field(default=None, hash=False)
    """A conversation's turn: the messages before this one, ``{"role", "content"}`` with role ``user``
    or ``assistant`` (empty for its first turn), handed to the provider as they are; None for a single
    prompt (:mod:`equilens.tasks.llm.conversation`)."""
    conversation: str | None = None
    """A conversation's turn: the id the turns of one conversation share (an application that keeps
    its own session is told which one a turn is in)."""


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
    top_logprobs: dict[str, float] | None = None
    truncated: bool = False
    """The answer was cut at the answer cap; ``error_message`` says so (it starts with :data:`ANSWER_CUT`)."""
    first_token_s: float | None = None
    turns: list[dict[str, Any]] | None = None
    """A conversation's answer: every turn in order, ``{"turn", "user", "answer"}`` (the last is this one)."""


class Provider(Protocol):
    name: str
    model: str
    batched: bool
    """True: call :meth:`complete_batch`; False: call :meth:`acomplete` concurrently."""

    async def aopen(self) -> None:
        """Build clients inside the running loop, before the first rate-limited call (optional)."""

    async def acomplete(self, prompt: str, sample_idx: int) -> Completion:
        """One answer. Called with ``system=`` (the call's own system message) only for requests that
        carry one, ``user=`` (a dict of the person's fields) only for requests made for a person, and
        ``history=`` (the earlier messages, a list of ``{"role", "content"}`` dicts) with
        ``conversation=`` (its id) only for a conversation's turns, so a provider that never sees them
        need not take them."""

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        """Answers in order; called with ``systems=`` (one system message or None per prompt) only
        when some request of the batch carries its own, and ``histories=`` (the earlier messages of
        each, or None) only when some request is a conversation's turn."""

    async def aclose(self) -> None: ...


ProviderFactory = Callable[["LLMConfig"], Provider]
PROVIDERS: Registry[ProviderFactory] = Registry("LLM provider")


OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

ANSWER_CHARS_PER_TOKEN = 16 * 8  # 16 x max_tokens tokens of 8 characters: room for any tokenizer
MIN_ANSWER_CHARS = 65_536
ANSWER_CUT = "warning: answer cut"
"""How the ``error_message`` of an answer cut at the cap begins (the answer row stays ok)."""


def answer_char_cap(cfg: LLMConfig) -> int:
    """The most characters of an answer kept: ``llm.max_answer_chars``, else 128 x ``max_tokens``
    and at least :data:`MIN_ANSWER_CHARS`. Only an endpoint that ignores ``max_tokens`` reaches it."""
    chosen = getattr(cfg, "max_answer_chars", None)
    return chosen if chosen is not None else max(MIN_ANSWER_CHARS, ANSWER_CHARS_PER_TOKEN * cfg.max_tokens)


def reply_byte_cap(cfg: LLMConfig) -> int:
    """The most bytes of a reply body read: the answer cap at 6 bytes a character (JSON's ``\\uXXXX``),
    the log-probabilities asked for, and 64 KiB for the rest of the body."""
    logprobs = cfg.max_tokens * (cfg.logprobs + 1) * 256 if cfg.logprobs else 0
    return 6 * answer_char_cap(cfg) + logprobs + 65_536


def endpoint_identity(cfg: LLMConfig) -> str | None:
    """Which server answers: the Azure endpoint and deployment, or the OpenAI-compatible base URL.

    None for in-process models and for OpenAI's own API (no ``base_url``, or its default URL).
    Credentials a URL may carry (``user:pass@``, query strings such as ``?api-key=``) are dropped.
    """
    if cfg.provider in ("local", "python", "langchain"):
        return None
    if cfg.provider == "azure":
        return f"{_normalise_url(cfg.azure_endpoint or '')}#{cfg.azure_deployment or ''}"
    url = _normalise_url(cfg.base_url or "")
    return None if url in ("", OPENAI_DEFAULT_URL) else url


@functools.lru_cache(maxsize=64)
def _normalise_url(url: str) -> str:
    """``url`` without credentials, query or trailing slash, scheme and host in lower case (cached: a run
    keys every call with the same URL)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{parts.scheme.lower()}://{netloc}{parts.path.rstrip('/')}" if netloc else url.strip().rstrip("/")


def cache_key(cfg: LLMConfig, prompt: str, sample_idx: int, system: str | None = None,
              user: tuple[tuple[str, str], ...] | None = None) -> str:
    """Key of one call: provider, model, endpoint, generation parameters, system prompt, prompt, sample,
    and for a local call answered by CTranslate2 its engine (:func:`equilens.tasks.llm.engines.engine_key`).

    ``system`` is the call's own system message when it differs from ``llm.system_prompt``; ``user`` the
    person's fields the application receives. An application provider's key also names the application
    (:func:`equilens.tasks.llm.targets.target_identity`).

    The endpoint (:func:`endpoint_identity`) is part of the key, because two servers can serve
    different weights under one model name; ``llm.cache_across_endpoints`` leaves it out on purpose.
    When there is no endpoint to name (local model, OpenAI's own API) the key is the same as before
    endpoints were keyed, so those caches stay valid. A key never depends on a secret.
    """
    ident = {
        "provider": cfg.provider,
        "model": cfg.model,
        "deployment": cfg.azure_deployment,
        "temperature": cfg.temperature,
        "max_tokens": cfg.max_tokens,
        "seed": cfg.seed if cfg.provider == "local" else None,
        "system": cfg.system_prompt if system is None else system,
        "prompt": prompt,
        "sample": sample_idx,
    }
    if cfg.logprobs:  # keys of calls without log-probabilities stay as they were
        ident["logprobs"] = cfg.logprobs
    if cfg.provider == "local":  # CTranslate2's int8 answers are not fp32's; transformers keys stay as they were
        from equilens.tasks.llm.engines import engine_key

        engine = engine_key(cfg)
        if engine is not None:
            ident["engine"] = engine
    if user is not None:
        ident["user"] = [list(pair) for pair in user]
    if cfg.provider in APPLICATION_PROVIDERS:
        from equilens.tasks.llm.targets import OBJECT_MARK, target_identity

        ident["application"] = app = target_identity(cfg)
        if OBJECT_MARK in (cfg.model or "") and OBJECT_MARK not in (app["target"] or ""):
            ident["model"] = cfg.model.partition(OBJECT_MARK)[0]  # a model named after a handed-over target
    if getattr(cfg, "max_answer_chars", None) is not None:  # a set cap changes what is kept; default keys stay
        ident["max_answer_chars"] = cfg.max_answer_chars
    endpoint = None if cfg.cache_across_endpoints else endpoint_identity(cfg)
    if endpoint is not None:
        ident["endpoint"] = endpoint
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


class EndpointStatusError(RuntimeError):
    """An HTTP reply with an error status (the http provider); ``response`` carries its headers."""

    def __init__(self, status_code: int, message: str, response: object = None) -> None:
        super().__init__(message)
        self.status_code, self.response = status_code, response


class TargetReplyError(TypeError):
    """An application returned something that is not an answer (a wrong type, no string at the reply
    path); not retried."""

    retryable = False


_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*')  # a JSON string's characters, up to its closing quote


def cut_json_string(text: str, at: int) -> str | None:
    """The JSON string that starts at ``text[at]`` (just past its opening quote) read as far as it came in a
    body cut short: an escape cut in half at the end ("\\u00", a lone backslash) and half of a pair of
    surrogates are dropped; None when the characters there are no JSON string."""
    body = _STRING_BODY.match(text, at)
    if body is None:
        return None
    chars = body.group()
    for trim in range(6):
        try:
            content = json.loads(f'"{chars[:len(chars) - trim]}"')
        except ValueError:
            continue
        return content[:-1] if content and "\ud800" <= content[-1] <= "\udbff" else content
    return None


def capped(text: str, cap: int, **usage: Any) -> Completion:
    """An application's answer as a :class:`Completion`, cut to ``cap`` characters (``truncated``)."""
    cut = len(text) > cap
    return Completion(text[:cap] if cut else text, "length" if cut else "stop", truncated=cut, **usage)



SECRET_ENV_NAME = re.compile(r"(?i)(?:^|_)(?:[A-Z]*KEYS?|[A-Z]*TOKENS?|[A-Z]*SECRETS?|PASS(?:WORD|WD|PHRASE)?|"
                             r"[A-Z]*PASS|CREDENTIALS?|CREDS?|AUTH[A-Z]*)(?:_|$)")
"""Environment variables whose name says key, token, secret, pass(word), credential or auth, as a part
between underscores (``STRIPE_KEY``, ``DB_PASS``, ``GITHUB_TOKEN``, ``AUTH_HEADER``): their values
are secrets, scrubbed wherever they appear."""

KEY_FORMATS = (
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),  # OpenAI-style keys
    re.compile(r"\b(?:sk|pk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{8,}"),  # Stripe
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),  # GitHub
    re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google API keys
    re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"),  # Google OAuth access tokens
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWTs
)
"""Key formats with a prefix of their own, specific enough to scrub from any text, an answer included."""

_SECRET_PATTERNS = (
    *((pattern, "***") for pattern in KEY_FORMATS),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}"), r"\1 ***"),
    (re.compile(r"(?i)\b(api[-_]?key|access[-_]?token|token|password|secret)(\s*[=:]\s*)['\"]?[^\s'\",;&]{4,}"),
     r"\1\2***"),
    (re.compile(r"(://)[^/\s:@]+:[^/\s@]+@"), r"\1***@"),  # credentials in a URL
)
"""What a message (an error, a summary) is scrubbed of beyond the secret values: the key formats, and
keys by their context (``Bearer ...``, ``password=...``, a URL's credentials)."""

SECRET_REMOVED = "warning: secret removed"
"""How an answer's ``error_message`` says that a secret value was taken out of it before it was stored."""


def secret_values(api_key_env: str | None = None) -> list[str]:
    """Values of environment variables that hold secrets (the configured key variable included), and
    the credentials a base URL carried (:mod:`equilens.tasks.secrets`)."""
    names = {k for k in os.environ if SECRET_ENV_NAME.search(k)}
    if api_key_env:
        names.add(api_key_env)
    from equilens.tasks.secrets import registered

    found = {os.environ[k] for k in names if len(os.environ.get(k) or "") >= 6} | registered()
    return sorted(found, key=len, reverse=True)


def scrub_secrets(text: str, secrets: Sequence[str] | None = None, limit: int = 2000) -> str:
    """``text`` with secret values and key-shaped strings replaced by ``***``, cut to ``limit`` chars.

    ``secrets`` defaults to :func:`secret_values`; short values (< 6 chars) are left alone. Each
    secret is scrubbed in every spelling :func:`equilens.tasks.secrets.forms` lists (as typed,
    percent-decoded and -encoded, JSON- and Python-escaped), and any run of 8 or more characters
    of one of those spellings goes too (:func:`equilens.tasks.secrets.runs`), so a key that comes
    back with its first characters cut off is still caught.
    """
    from equilens.tasks.secrets import RUN

    spelled, pieces = _spellings(tuple(secret_values() if secrets is None else secrets))
    for value in spelled:
        text = text.replace(value, "***")
    # key-shaped strings before the runs are cut: a cut inside another key ("sk-liveKEY***abcdef")
    # would leave too little of its shape for the patterns to find
    for pattern, repl in _SECRET_PATTERNS:
        text = pattern.sub(repl, text)
    text = _cut_runs(text, pieces, RUN)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.lru_cache(maxsize=32)
def _spellings(secrets: tuple[str, ...]) -> tuple[list[str], frozenset[str]]:
    """(every spelling of the secrets of 6+ characters, longest first; their 8-character pieces)."""
    from equilens.tasks.secrets import forms, runs

    spelled = sorted({f for value in secrets if value and len(value) >= 6 for f in forms(value) if len(f) >= 6},
                     key=len, reverse=True)
    return spelled, frozenset(runs(spelled))


def held_secrets() -> tuple[str, ...]:
    """The secret values this run holds and may have sent: each ``${VAR}`` it expanded, each API key it
    read (:func:`equilens.tasks.secrets.register`), the credentials of a base URL, and the values of
    ``*_API_KEY`` variables, which LangChain classes read themselves."""
    from equilens.tasks.secrets import registered

    keys = {v for k, v in os.environ.items() if k.upper().endswith("_API_KEY") and len(v) >= 8}
    return tuple(sorted(registered() | keys))


def scrub_answer(text: str, secrets: Sequence[str] | None = None) -> tuple[str, bool]:
    """``(text without the run's secret values and key-formatted strings, whether any was removed)``.

    ``secrets`` defaults to :func:`held_secrets`. An answer is prose, so it loses only what is certainly
    a secret: each secret value of 8 or more
    characters in every spelling :func:`equilens.tasks.secrets.forms` lists (an application that
    echoes its request headers sends the key back), and the :data:`KEY_FORMATS`; not the pieces of
    values or the context patterns a message is scrubbed of ("Basic steps" is no credential).
    """
    spelled, _ = _spellings(tuple(held_secrets() if secrets is None else secrets))
    out = text
    for value in spelled:
        if len(value) >= 8:
            out = out.replace(value, "***")
    for pattern in KEY_FORMATS:
        out = pattern.sub("***", out)
    return out, out != text


def _cut_runs(text: str, pieces: frozenset[str], size: int) -> str:
    """``text`` with every stretch covered by occurrences of ``pieces`` (each ``size`` characters)
    replaced by one ``***``."""
    if not pieces or len(text) < size:
        return text
    spans = []
    for piece in pieces:
        at = text.find(piece)
        while at >= 0:
            spans.append((at, at + size))
            at = text.find(piece, at + 1)
    if not spans:
        return text
    spans.sort()
    out, pos, start, end = [], 0, *spans[0]
    for s, e in spans[1:] + [(len(text) + 1, 0)]:
        if s <= end:
            end = max(end, e)
            continue
        out += [text[pos:start], "***"]
        pos, start, end = end, s, e
    return "".join(out) + text[pos:]


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
