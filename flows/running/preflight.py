"""Checks a run config in seconds, before Prefect or any model starts: files, keys, names, storage.

Everything here is cheap: no model load, and no network but one TCP connect to a configured Dask
scheduler (``execution.dask_address``), so an address nothing answers at is refused before the
first call instead of stalling the run. Problems raise the typed errors of
:mod:`equilens.tasks.errors`, so the CLI prints one paragraph and exits 2; harmless surprises (duplicate
prompts dropped) come back as warning lines.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from equilens.tasks.catalog import ASSESSMENTS
from equilens.tasks.config import RunConfig
from equilens.tasks.config.sections import APPLICATION_PROVIDERS
from equilens.tasks.errors import ConfigError, InputDataError, StorageError
from equilens.tasks.files import file_problem

BUILTIN_PROVIDERS = ("local", "openai", "azure", *APPLICATION_PROVIDERS)


def preflight(cfg: RunConfig) -> list[str]:
    """Raise on the first problem a run would hit; return warnings worth printing."""
    check_inputs(cfg)
    check_storage(cfg)
    return prompt_warnings(cfg)


def check_inputs(cfg: RunConfig) -> None:
    """The checks that read no prompt and write nothing: files, metric names, provider, lexicons."""
    _check_files(cfg)
    _check_metric_names(cfg)
    _check_cluster(cfg)
    if uses_llm(cfg):
        _check_provider(cfg)
    own = ASSESSMENTS.get(cfg.assessment).load_hooks().check_inputs
    if own is not None:  # the assessment's own (counterfactual: its lexicons)
        own(cfg)


def prompt_warnings(cfg: RunConfig) -> list[str]:
    """For an assessment that declares what its prompts warn of, and asks the LLM about them: every
    prompt is read, and the duplicates dropped are reported with the assessment's own warnings
    (counterfactual: attributes mentioned by too few prompts)."""
    if cfg.prompts is not None and not cfg.needs_prompts and (cfg.prompts.path or cfg.prompts.items):
        given = "prompts.path" if cfg.prompts.path else "prompts.items"
        return [f"the {cfg.assessment} assessment asks the questions of its own section ({cfg.assessment}): "
                f"{given} is not read, and no result is about those prompts."]
    own = ASSESSMENTS.get(cfg.assessment).load_hooks().prompt_warnings
    if cfg.prompts is None or not cfg.needs_prompts or not uses_llm(cfg):
        return []
    from equilens.tasks.inputs.prompts import load_prompts

    prompts = load_prompts(cfg.prompts)
    warnings = []
    dropped = int(prompts.attrs.get("duplicates_dropped", 0))
    if dropped:
        warnings.append(f"{dropped} duplicate prompt(s) dropped: each distinct prompt is asked once.")
    return warnings + (own(cfg, prompts) if own is not None else [])


def uses_llm(cfg: RunConfig) -> bool:
    """Whether the run calls the configured LLM (not when it brings its own answers)."""
    return not cfg.brought_answers()


def _check_files(cfg: RunConfig) -> None:
    for key, value in cfg.input_files().items():
        if not value:
            continue
        if problem := file_problem(value):
            where = "" if Path(value).is_absolute() else f" (paths are relative to {Path.cwd()})"
            raise InputDataError(f"{key}: {value} {problem}{where}.")


def _check_cluster(cfg: RunConfig) -> None:
    """A Dask scheduler address must be one (tcp://HOST:PORT) and answer within a few seconds."""
    import socket
    from urllib.parse import urlsplit

    ex = cfg.execution
    if ex.task_runner != "dask" or not ex.dask_address:
        return
    address = ex.dask_address if "://" in ex.dask_address else f"tcp://{ex.dask_address}"
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise ConfigError(f"execution.dask_address: {ex.dask_address!r} is not a scheduler address; write "
                          "tcp://HOST:PORT (a Dask scheduler listens on 8786 by default).")
    try:
        with socket.create_connection((host, port), timeout=CLUSTER_TIMEOUT_S):
            pass
    except OSError as err:
        raise ConfigError(f"execution.dask_address: no Dask scheduler answers at {ex.dask_address} "
                          f"({err.strerror or type(err).__name__}); start one there (`dask scheduler`), or remove "
                          "execution.dask_address to run a local cluster.") from None


CLUSTER_TIMEOUT_S = 3.0


def _check_metric_names(cfg: RunConfig) -> None:
    if not cfg.metrics.names:
        return
    from equilens.tasks.metrics import METRICS  # importing the package registers every family

    known = dict(METRICS.items())
    unknown = [n for n in cfg.metrics.names if n not in known]
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, list(known), n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(f"metrics.names: unknown metric {', '.join(hints)}. `equilens metrics` lists them all.")


def _check_provider(cfg: RunConfig) -> None:
    llm = cfg.llm
    if llm.provider not in BUILTIN_PROVIDERS:
        from equilens.tasks.llm.base import PROVIDERS

        if llm.provider not in PROVIDERS:
            raise ConfigError(f"llm.provider: unknown provider {llm.provider!r}; use one of "
                              f"{', '.join(sorted({*BUILTIN_PROVIDERS, *PROVIDERS}))}.")
        return
    if llm.provider in APPLICATION_PROVIDERS:
        _check_application(cfg)
        return
    app = app_signal_fields(cfg)
    if app:
        raise ConfigError(f"identity.signals places the person in the application (placement app), which provider "
                          f"{llm.provider} does not have: use placement system (a profile in the system message), "
                          f"or test the application itself with provider {', '.join(APPLICATION_PROVIDERS)}.")
    if llm.provider in ("openai", "azure") and not llm.api_key_secret:  # a Secret block needs Prefect: checked later
        from equilens.tasks.llm.openai_provider import OpenAIChatProvider

        OpenAIChatProvider(llm, azure=llm.provider == "azure")  # checks azure fields and the key; no network


def app_signal_fields(cfg: RunConfig) -> set[str]:
    """The person's fields the identity signals placed in the application send (``name``, ``identity``;
    a signal naming ``{first_name}`` or ``{last_name}`` sends the name, whole and in parts)."""
    from equilens.tasks.config.sections import NAME_FIELDS, PERSON_FIELDS, template_fields

    identity = getattr(cfg, "identity", None)
    signals = getattr(identity, "signals", None) or []
    named = {f for s in signals if s.placement == "app" for f in template_fields(s.template)} & set(PERSON_FIELDS)
    return {"name" if f in NAME_FIELDS else f for f in named}


def _check_application(cfg: RunConfig) -> None:
    """The application under test: it imports and builds, takes what it is given, keys stay in the
    environment, and an object handed over in Python never goes to a Dask worker."""
    from equilens.tasks.llm.base import PROVIDERS
    from equilens.tasks.llm.calls import load_providers
    from equilens.tasks.llm.targets import check_no_literal_secrets, in_process_only

    load_providers()
    llm = cfg.llm
    check_no_literal_secrets(llm)
    if cfg.execution.task_runner == "dask" and in_process_only(llm.target):
        raise ConfigError(f"llm.target {llm.target.partition('#')[0]!r} lives in this Python process only (an "
                          "object passed to equilens.assess, or defined in __main__), and Dask workers import the "
                          "target by its path: give an import path module:attribute of an importable module, or "
                          "use execution.task_runner: thread.")
    check = getattr(PROVIDERS.get(llm.provider), "preflight", None)
    if check is not None:
        check(llm, app_signal_fields(cfg))


def check_storage(cfg: RunConfig) -> None:
    """The DuckDB file can be created (or is undamaged) and the reports folder written."""
    from equilens.tasks.storage.store import Store

    db = Path(cfg.storage.duckdb_path)
    if db.is_dir():
        raise StorageError(f"storage.duckdb_path: {db} is a directory; name a file such as {db / 'equilens.duckdb'}.")
    try:
        store = Store(db, cfg.storage.lock_timeout)
        if db.is_file():
            store.verify()  # a damaged file is refused before the run writes into it
        store.init()
    except OSError as err:
        raise StorageError(f"storage.duckdb_path: cannot create {db} ({err.strerror or err}); "
                           "point it at a folder you can write.") from None
    if cfg.storage.reports_dir:
        _check_writable_dir(Path(cfg.storage.reports_dir), "storage.reports_dir",
                            "set it to a folder you can write, or to null to write no report")


def _check_writable_dir(folder: Path, key: str, advice: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".equilens-write-check-"):
            pass
    except OSError as err:
        raise StorageError(f"{key}: cannot write to {folder} ({err.strerror or type(err).__name__}); {advice}.") from None
    if not os.access(folder, os.W_OK):  # pragma: no cover - the write above already failed
        raise StorageError(f"{key}: cannot write to {folder}; {advice}.")
