"""The application under test, found and described: import paths, objects handed over in Python,
environment references, request templates, and what of the application goes into the cache key.

``llm.target`` is an import path ``module:attribute`` (``my_app.chat:answer``,
``langchain_anthropic:ChatAnthropic``). :func:`equilens.assess` also takes the object itself (a
function, a LangChain model or chain); it is held here, in this process only, under a target string
that names it (:func:`hand_over`), so the config stays plain data that Prefect can show and store.

The cache key names the target, its keyword arguments (secrets left out), the request template, the
reply path and what stands for the application's version (:func:`target_identity`): the fingerprint
of the code a ``python`` or ``langchain`` target runs (:mod:`equilens.tasks.llm.app_code`), the run's
session for an ``http`` target, whose code cannot be seen (:mod:`equilens.tasks.llm.reuse`), or, when
it is set, ``llm.target_version`` in place of either.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.config.sections import APPLICATION_PROVIDERS
from equilens.tasks.errors import ProviderError

OBJECT_MARK = "#object-"
"""How a target string handed over in Python ends: ``module:qualname#object-ID`` (this process only)."""

_OBJECTS: dict[str, Any] = {}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SECRET_NAMES = re.compile(r"(?i)(api[_-]?key|token|secret|password|credential|auth)")


def describe(obj: Any) -> str:
    """``module:qualname`` of a function or class, else of the object's class."""
    named = obj if hasattr(obj, "__qualname__") and hasattr(obj, "__module__") else type(obj)
    return f"{getattr(named, '__module__', '?')}:{getattr(named, '__qualname__', type(obj).__name__)}"


MODEL_FIELDS = ("model_name", "model", "model_id", "deployment_name", "repo_id")
"""Attributes under which LangChain chat models and LLMs keep the name of the model they call."""


def name_of(obj: Any) -> str:
    """How a run names an application handed over as an object, where it has no ``llm.target_name``:
    a function or class by ``module:qualname``; a ``functools.partial`` by the function it wraps; a
    LangChain object by its class and the name of the model it calls, found in it or in the steps it
    holds (``RunnableSequence(ChatOpenAI gpt-4o-mini)``)."""
    import functools

    if isinstance(obj, functools.partial):
        return f"{name_of(obj.func)} (partial)"
    model = _model_inside(obj, depth=0)
    if model is not None and not (hasattr(obj, "__qualname__") and hasattr(obj, "__module__")):
        kind, found = type(obj).__name__, f"{type(model[0]).__name__} {model[1]}"
        return f"{kind}({found})" if type(model[0]) is not type(obj) else f"{kind} {model[1]}"
    return describe(obj)


def _model_inside(obj: Any, depth: int) -> tuple[Any, str] | None:
    """(the object, its model's name) for the first object in ``obj`` (itself, its steps, its bound
    model) that names a model; None when none does within a few levels."""
    if depth > 4 or obj is None:
        return None
    for field in MODEL_FIELDS:
        value = getattr(obj, field, None)
        if isinstance(value, str) and value.strip():
            return obj, value.strip()
    parts: list[Any] = []
    for attr in ("steps", "first", "middle", "last", "bound", "runnable", "llm", "model_runnable"):
        value = getattr(obj, attr, None)
        parts += value if isinstance(value, list) else [value]
    for part in parts:
        if part is not None and part is not obj and (found := _model_inside(part, depth + 1)):
            return found
    return None


def hand_over(obj: Any) -> str:
    """The target string for an object given in Python: its import path when importing that path gives
    this very object (a module-level function or class), else a name valid in this process only."""
    path = describe(obj)
    module = path.partition(":")[0]
    if module != "__main__":
        try:
            if _import_path(path) is obj:
                return path
        except ProviderError:
            pass
    key = f"{path}{OBJECT_MARK}{id(obj):x}"
    _OBJECTS[key] = obj
    return key


def in_process_only(target: str | None) -> bool:
    """True for a target that another process cannot import: an object handed over in Python, or one
    defined in ``__main__`` (a notebook or script)."""
    return bool(target) and (OBJECT_MARK in target or target.startswith("__main__:"))


def resolve(target: str) -> Any:
    """The object a target names: the handed-over object, or the attribute at the import path."""
    if OBJECT_MARK in target:
        if target not in _OBJECTS:
            raise ProviderError(f"llm.target {target!r} was handed over in another Python process; pass the object "
                                "again, or give an import path module:attribute")
        return _OBJECTS[target]
    return _import_path(target)


def _import_path(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # the user's own package beside the config, as `python -m` finds it
    try:
        found: Any = importlib.import_module(module_name.strip())
    except Exception as err:  # noqa: BLE001 - any import failure is a config problem, named as such
        raise ProviderError(f"llm.target {target!r}: module {module_name!r} does not import "
                            f"({type(err).__name__}: {err}). Expected an import path module:attribute of "
                            "an installed module or one under the working directory.") from None
    for part in attribute.strip().split("."):
        if not hasattr(found, part):
            raise ProviderError(f"llm.target {target!r}: module {module_name!r} has no attribute "
                                f"{attribute.strip()!r}.")
        found = getattr(found, part)
    return found


def expand_env(value: Any, where: str) -> Any:
    """``value`` with every ``${VAR}`` in its strings replaced by that environment variable, whose value
    is registered as a secret (scrubbed from every message); ProviderError names an unset one."""
    if isinstance(value, dict):
        return {k: expand_env(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value
    from equilens.tasks.secrets import register

    def one(found: re.Match) -> str:
        name = found.group(1)
        if name not in os.environ:
            raise ProviderError(f"{where}: the environment variable {name} (written ${{{name}}}) is not set.")
        register(os.environ[name])
        return os.environ[name]

    return _ENV_REF.sub(one, value)


def literal_secrets(value: Any, where: str) -> list[str]:
    """Keys under ``value`` named like a secret (api_key, token, authorization, ...) whose value is written in
    the config rather than read from the environment with ``${VAR}`` (anywhere in it: ``Bearer ${TOKEN}``)."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if SECRET_NAMES.search(str(k)) and isinstance(v, str) and v and _written_out(v):
                found.append(f"{where}.{k}")
            found += literal_secrets(v, f"{where}.{k}")
    return found


def _written_out(value: str) -> bool:
    """A value that holds a key itself: one with no ``${VAR}``, or one whose text around its references
    carries a key-shaped word (12 or more key characters: ``Bearer sk-live...``). ``Bearer ${APP_TOKEN}``
    and ``${TOKEN}`` read theirs from the environment."""
    if not _ENV_REF.search(value):
        return True
    return any(_KEY_WORD.fullmatch(word) for word in _ENV_REF.sub(" ", value).split())


_KEY_WORD = re.compile(r"[A-Za-z0-9_\-+/=.~]{12,}")


def fill(template: Any, values: dict[str, Any]) -> Any:
    """A request template with its ``{field}`` strings filled: the value is placed as a Python string,
    so the JSON written from it is escaped correctly whatever the prompt holds. A string that is one
    field alone takes the value as it is (``"{messages}"`` becomes the JSON array); inside a longer
    string a list is written as its JSON text."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        whole = _WHOLE_FIELD.fullmatch(template)
        if whole is not None and not isinstance(values.get(whole.group(1), ""), str):
            return values[whole.group(1)]
        return template.format_map(_Blank({k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                                           for k, v in values.items()}))
    return template


_WHOLE_FIELD = re.compile(r"\{(\w+)\}")


class _Blank(dict):
    """Fields a call has no value for (``{name}`` outside an identity run) are left empty."""

    def __missing__(self, key: str) -> str:
        return ""


def call_values(cfg: LLMConfig, prompt: str, system: str | None, user: dict[str, str] | None,
                history: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The values a request template is filled with for one call: ``messages`` is the conversation so
    far with this turn last (a single prompt: this turn alone), ``history`` the messages before it
    (copies: an application that edits what it was given must not rewrite the stored turns)."""
    earlier = [dict(m) for m in history or []]
    return {"prompt": prompt, "system": cfg.system_prompt if system is None else system,
            "messages": [*earlier, {"role": "user", "content": prompt}], "history": earlier, **(user or {})}


def check_request_fields(cfg: LLMConfig, user_fields: set[str]) -> None:
    """An identity signal placed in the application (``user_fields``: ``name``, ``identity``) needs
    ``llm.request`` to say where each field goes."""
    from equilens.tasks.config.sections import NAME_FIELDS, template_fields

    placed = template_fields(cfg.request)
    if placed & set(NAME_FIELDS):
        placed |= {"name"}  # {first_name} or {last_name} places the name as well as {name} does
    missing = sorted(user_fields - placed)
    if missing:
        raise ProviderError(f"identity.signals places the person in the application (placement app), but "
                            f"llm.request has no {{{missing[0]}}}: put it where the application takes the user's "
                            f"{missing[0]}, e.g. {{\"user\": {{\"{missing[0]}\": \"{{{missing[0]}}}\"}}}}.")


def check_no_literal_secrets(cfg: LLMConfig) -> None:
    """Keys of ``target_kwargs`` and ``headers`` named like secrets must read them with ``${VAR}``."""
    literal = literal_secrets(cfg.target_kwargs, "llm.target_kwargs") + literal_secrets(cfg.headers, "llm.headers")
    if literal:
        raise ProviderError(f"{literal[0]}: write ${{VARIABLE}} and keep the value in the environment; the config "
                            "is stored with every run, so a key written in it would be stored too.")


def target_identity(cfg: LLMConfig) -> dict[str, Any]:
    """What of an application provider's settings names the application in the cache key: the target,
    ``target_kwargs`` without secrets, the request template, the reply path, the header names and
    ``target_version``; without a ``target_version``, also the fingerprint of a ``python`` or
    ``langchain`` target's code (``code``) and the session of an ``http`` target's run (``session``).

    A handed-over object is named without this process's object id when a version or a fingerprint
    vouches for it across processes (:func:`code_identity`), else with it (cached for this process).
    With a ``target_version`` the key holds neither a fingerprint nor a session: the version stands
    for the application, as the user says (:mod:`equilens.tasks.llm.reuse`)."""
    target = cfg.target
    ident: dict[str, Any] = {}
    if cfg.target_version is None and cfg.provider in ("python", "langchain") and target:
        code = code_identity(cfg)
        ident["code"] = code
        if code is not None:
            target = target.partition(OBJECT_MARK)[0]
    elif cfg.target_version is None and cfg.provider == "http":
        from equilens.tasks.llm.reuse import session_of

        ident["session"] = session_of(cfg)
    if target and OBJECT_MARK in target and cfg.target_version is not None:
        target = target.partition(OBJECT_MARK)[0]  # the user vouches for it across processes
    return {
        "target": target,
        "target_kwargs": _without_secrets(cfg.target_kwargs),
        "target_version": cfg.target_version,
        "request": cfg.request,
        "response_path": cfg.response_path,
        "headers": sorted(cfg.headers),
        **ident,
    }


def code_identity(cfg: LLMConfig) -> str | None:
    """The fingerprint of the code ``llm.target`` runs (:func:`equilens.tasks.llm.app_code.app_fingerprint`),
    once per process per target object; None when none of it can be read. Resolving an import path
    imports its module, as calling it would."""
    from equilens.tasks.llm.app_code import app_fingerprint

    target = cfg.target or ""
    return app_fingerprint(target, _loaded(target))


def cache_reason(cfg: LLMConfig) -> str:
    """Why answers in the cache stand for this config's calls, in words (:mod:`equilens.tasks.llm.reuse`)."""
    if cfg.provider not in APPLICATION_PROVIDERS:
        return "the same model, endpoint, settings and prompts were answered before"
    if cfg.target_version is not None:
        return f"llm.target_version {cfg.target_version!r} is unchanged"
    if cfg.provider == "http":
        from equilens.tasks.llm.reuse import resumed_by

        resumes = resumed_by(cfg)
        if resumes:
            return (f"resuming run {resumes[0]}, which did not finish; without llm.target_version an http "
                    "target's answers are reused only within one run")
        return ("answered earlier in this run; without llm.target_version an http target's answers are "
                "reused only within one run")
    code = code_identity(cfg)
    if code is not None:
        return f"the application's code is unchanged: fingerprint {code[:12]}"
    if OBJECT_MARK in (cfg.target or ""):
        return "the same object of this process answered them (its code cannot be read)"
    return "the same target and settings (its code is installed, so not fingerprinted)"


def _loaded(target: str) -> Any:
    """:func:`resolve`, without the import machinery when the module is loaded already (every call's
    key asks)."""
    if OBJECT_MARK not in target:
        module_name, _, attribute = target.partition(":")
        found = sys.modules.get(module_name.strip())
        if found is not None:
            try:
                for part in attribute.strip().split("."):
                    found = getattr(found, part)
                return found
            except AttributeError:
                pass
    return resolve(target)


def _without_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "***" if SECRET_NAMES.search(str(k)) else _without_secrets(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_without_secrets(v) for v in value]
    return value


def first_positional(fn: Any) -> str | None:
    """The name of the parameter the first positional argument of a call of ``fn`` binds to (None: no
    such parameter, ``*args``, or no signature to read)."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    first = params[0] if params else None
    return first.name if first is not None and first.kind in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD) else None


def accepts(fn: Any, name: str) -> bool:
    """Whether calling ``fn`` with the keyword ``name`` is allowed (a parameter of that name, or ``**kwargs``)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True  # a builtin or C callable: no signature to read, try it
    return any(p.name == name and p.kind is not p.POSITIONAL_ONLY or p.kind is p.VAR_KEYWORD for p in params)
