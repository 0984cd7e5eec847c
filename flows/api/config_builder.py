"""Turns the keyword arguments of :func:`equilens.assess` into one checked :class:`~equilens.tasks.config.RunConfig`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from equilens.tasks.config import RunConfig, config_classes, load_config, parse_config
from equilens.tasks.errors import ConfigError, InputDataError, json_kind
from equilens.tasks.turns import unfit_prompt

SOURCE = "equilens.assess()"


def build_config(
    prompts: str | os.PathLike | Iterable[str] | None = None,
    model: Any = None,
    assessment: str | None = None,
    *,
    name: str | None = None,
    config: str | os.PathLike | RunConfig | Mapping | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    db: str | os.PathLike | None = None,
    **overrides: Any,
) -> RunConfig:
    """The run config :func:`equilens.assess` runs, without running it.

    ``config`` (a YAML path, a dict or a RunConfig) is the starting point, default: every key's default.
    ``assessment`` is the config's own unless given (counterfactual without a config).
    ``prompts`` is a file path (.csv/.jsonl/.parquet/.txt) or a list of prompt strings; ``model``,
    ``provider``, ``base_url`` set the ``llm`` section (``model`` may also be the application itself: a
    function, or a LangChain chat model or Runnable; see :func:`application_section`; ``name`` then names
    it in every output as ``llm.target_name`` does), ``db`` sets ``storage.duckdb_path``.
    Any other
    keyword overrides one config key: a double underscore separates sections (``llm__count=2``,
    ``metrics__bootstrap_resamples=200``), and a section name takes a dict that is merged into it
    (``llm={"count": 2, "temperature": 0}``). Unknown keys raise :class:`~equilens.tasks.errors.ConfigError`.
    """
    data = _base(config)
    assessment = assessment or str(data.get("assessment") or "counterfactual")
    if config is not None and not isinstance(config, Mapping):  # a loaded config's own sections: keep the ones
        keep = config_classes().get(assessment, RunConfig).model_fields  # this assessment reads
        data = {k: v for k, v in data.items() if k in keep}
    data["assessment"] = assessment
    if name is not None:
        data["name"] = name
    elif config is None:
        data["name"] = "notebook"
    if prompts is not None:
        source = _prompts_section(prompts)
        data["prompts"] = {**_section(data, "prompts"), **source}
        data["prompts"].pop("items" if "path" in source else "path", None)
    llm = {k: v for k, v in (("model", model), ("provider", provider), ("base_url", base_url)) if v is not None}
    if model is not None and not isinstance(model, str):
        llm = {**llm, **application_section(model, provider)}
        if name is not None:  # assess(prompts, model=app, name="loan-bot"): the application's name too
            llm.setdefault("target_name", name)
    if llm:
        data["llm"] = {**_section(data, "llm"), **llm}
    if db is not None:
        data["storage"] = {**_section(data, "storage"), "duckdb_path": str(db)}
    for key, value in overrides.items():
        _apply(data, key.replace("__", "."), value)
    return parse_config(data, SOURCE)


def application_section(obj: Any, provider: str | None = None) -> dict[str, Any]:
    """The ``llm`` keys for an application handed over as an object: provider ``langchain`` for a
    LangChain Runnable, ``python`` for any other callable; the target names the object (its import
    path when it has one, else a name valid in this process: :func:`equilens.tasks.llm.targets.hand_over`)
    and the run records its name as the model (:func:`equilens.tasks.llm.targets.name_of`: a partial by the
    function it wraps, a LangChain object by its class and its model's name)."""
    from equilens.tasks.llm.targets import hand_over, name_of

    runnable = _is_runnable(obj)
    if not runnable and not callable(obj):
        raise ConfigError(f"{SOURCE}: model must be a model name, a function, or a LangChain chat model or "
                          f"Runnable, not a {type(obj).__name__}.")
    chosen = provider or ("langchain" if runnable else "python")
    if chosen not in ("langchain", "python"):
        raise ConfigError(f"{SOURCE}: model is an object, which provider {chosen!r} cannot call; leave provider out "
                          "(langchain for a Runnable, python for a function).")
    return {"provider": chosen, "target": hand_over(obj), "model": name_of(obj)}


def _is_runnable(obj: Any) -> bool:
    try:
        from langchain_core.runnables import Runnable
    except ImportError:  # pragma: no cover - langchain-core is a dependency
        return False
    return isinstance(obj, Runnable)


def _base(config: str | os.PathLike | RunConfig | Mapping | None) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, RunConfig):
        return config.model_dump(mode="json")
    if isinstance(config, Mapping):
        return _plain(config)
    if isinstance(config, (str, os.PathLike)):
        return load_config(config).model_dump(mode="json")
    raise ConfigError(f"{SOURCE}: config must be a YAML path, a dict or a RunConfig, not {type(config).__name__}.")


def _plain(mapping: Mapping) -> dict[str, Any]:
    """A deep copy of nested mappings as plain dicts (the caller's dict is never changed)."""
    return {k: _plain(v) if isinstance(v, Mapping) else v for k, v in mapping.items()}


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def _prompts_section(prompts: str | os.PathLike | Iterable[str]) -> dict[str, Any]:
    if isinstance(prompts, (str, os.PathLike)):
        path = Path(prompts)
        if not path.is_file():
            raise InputDataError(
                f"prompts={str(prompts)[:80]!r} is not a file (paths are relative to {Path.cwd()}). Give a prompt "
                "file (.csv with a `prompt` column, .jsonl, .parquet or .txt) or a list of prompt strings.")
        return {"path": str(path)}
    if isinstance(prompts, Mapping) or not isinstance(prompts, Iterable):
        raise InputDataError(f"{SOURCE}: prompts must be a file path or a list of strings, not "
                             f"{'a mapping' if isinstance(prompts, Mapping) else type(prompts).__name__}.")
    items = [list(p) if isinstance(p, (list, tuple)) else p for p in prompts]
    if found := unfit_prompt(items):
        i, turn, value = found
        what = f"turn {turn} of item {i} is {json_kind(value)}" if turn else f"item {i} is {json_kind(value)}"
        unfit = sum(unfit_prompt([p]) is not None for p in items)
        raise InputDataError(f"{SOURCE}: prompts must be strings (or, for a conversation, lists of strings); {what} "
                             f"({unfit} such item(s), counted from 1).")
    if not items:
        raise InputDataError(f"{SOURCE}: prompts is an empty list.")
    return {"items": items}


def _apply(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set one dotted key; a mapping given for a section is merged into what is there."""
    *parents, leaf = dotted.split(".")
    node = data
    for key in parents:
        if node.get(key) is None:
            node[key] = {}
        node = node[key]
        if not isinstance(node, dict):
            raise ConfigError(f"{SOURCE}: override {dotted}: {key} is not a section.")
    if isinstance(value, Mapping) and isinstance(node.get(leaf), dict):
        node[leaf] = {**node[leaf], **_plain(value)}
    else:
        node[leaf] = _plain(value) if isinstance(value, Mapping) else value
