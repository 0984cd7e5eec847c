"""A run started from a deployment cannot change what code or endpoint it calls.

A deployment's "Custom run" form in the Prefect UI, and an API trigger, set a flow run's parameters.
Whoever can do that must not be able to turn the worker into a shell (``llm.provider: python`` with
``target: "os:system"``), send an environment variable to a server of their choosing
(``headers: {X-Leak: "${AWS_SECRET_ACCESS_KEY}"}``), or read and write files outside the project.
So in a flow run that belongs to a deployment, the run's config is compared with the config the
deployment itself holds (its own parameters, as ``prefect deploy`` stored them) before any call:

* in every LLM section (the tested model's ``llm``, the judge's, the outcome reader's): the
  fields that choose the code or endpoint called and the keys sent (:data:`CALL_FIELDS`); a section
  the deployment leaves unset (the judge then uses the tested model's) cannot be set by a run;
* every file field (:func:`is_file_field`) whose value resolves outside the project folder (the
  flow run's working directory, where the deployment's pull step puts it).

A difference refuses the run (:class:`DeploymentRunRefused`, recorded as failed with one sentence
naming the fields); everything else (names, sample sizes, temperatures, the model name) stays open
to the form. A deployment that wants a field open says so in its own definition, with a tag
``equilens-open:FIELD`` (``equilens-open:llm.base_url``; ``equilens-open:llm`` opens the whole
section); tags of a flow run are not read, since the run's caller sets those too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ConfigError
from pydantic import BaseModel, ValidationError

CALL_FIELDS = ("provider", "target", "target_kwargs", "base_url", "headers", "request",
               "api_key_env", "api_key_secret", "azure_endpoint")
"""The fields of an LLM section that decide what code runs, which endpoint is called and which
environment variables are sent."""

OPEN_TAG = "equilens-open:"


class DeploymentRunRefused(ConfigError):
    """A deployment's flow run whose parameters change a field only the deployment may set."""


def is_file_field(name: str) -> bool:
    """A config field that names a file or folder: ``path``, ``*_path``, ``*_dir`` and the judge's
    ``instructions`` (``response_path`` is a JMESPath into a reply, not a file)."""
    return name != "response_path" and (name == "path" or name.endswith(("_path", "_dir")) or name == "instructions")


def changed_fields(run: BaseModel, deployed: BaseModel | None, project: Path) -> list[str]:
    """The dotted names of the fields in which ``run`` changes what ``deployed`` fixes (see the
    module docstring)."""
    found: list[str] = []
    _walk(run, deployed, "", project.resolve(), found)
    return found


def _walk(run: Any, deployed: Any, where: str, project: Path, found: list[str]) -> None:
    if isinstance(run, LLMConfig) or isinstance(deployed, LLMConfig):
        if run is None or deployed is None:
            found.append(where)
        else:
            found += [f"{where}.{f}" for f in CALL_FIELDS if getattr(run, f) != getattr(deployed, f)]
        return
    if isinstance(run, BaseModel):
        for name in type(run).model_fields:
            _walk(getattr(run, name), getattr(deployed, name, None), f"{where}.{name}".lstrip("."), project, found)
        return
    if isinstance(run, list):
        theirs = deployed if isinstance(deployed, list) else []
        for i, item in enumerate(run):
            _walk(item, theirs[i] if i < len(theirs) else None, f"{where}[{i}]", project, found)
        return
    name = where.rsplit(".", 1)[-1]
    if isinstance(run, str) and run != deployed and is_file_field(name) and not _inside(run, project):
        found.append(where)


def _inside(path: str, project: Path) -> bool:
    resolved = Path(os.path.realpath(project / Path(path).expanduser()))
    return resolved == project or project in resolved.parents


def opened(tags: Iterable[str]) -> set[str]:
    """The fields a deployment's tags open (``equilens-open:FIELD``)."""
    return {t[len(OPEN_TAG):].strip() for t in tags if t.startswith(OPEN_TAG) and t[len(OPEN_TAG):].strip()}


def _is_open(field: str, open_fields: set[str]) -> bool:
    return any(field == f or field.startswith((f + ".", f + "[")) for f in open_fields)


def refused_fields(run: BaseModel, deployment_parameters: dict[str, Any], tags: Iterable[str],
                   project: Path) -> list[str]:
    """The fields a deployment's run may not change but does: those of :func:`changed_fields` its
    tags leave closed. The deployment's own ``config`` parameter is read as the run's config class;
    one that does not read (or is missing) fixes nothing open, so every guarded field the run sets
    counts as changed."""
    try:
        deployed: BaseModel | None = type(run).model_validate(deployment_parameters.get("config") or {})
    except (ValidationError, ConfigError, ValueError):
        deployed = None
    open_fields = opened(tags)
    return [f for f in changed_fields(run, deployed, project) if not _is_open(f, open_fields)]


def deployment_of_this_run() -> tuple[dict[str, Any], list[str]] | None:
    """``(parameters, tags)`` of the deployment the current flow run belongs to, as stored on the
    Prefect server; None outside a deployment's run (an ad-hoc ``equilens run``, a test). The one
    seam through which the guard reads Prefect."""
    from prefect.context import FlowRunContext

    ctx = FlowRunContext.get()
    deployment_id = getattr(getattr(ctx, "flow_run", None), "deployment_id", None)
    if deployment_id is None:
        return None
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        deployment = client.read_deployment(deployment_id)
    return dict(deployment.parameters or {}), list(deployment.tags or [])


def check_deployment_run(config: BaseModel, project: Path | None = None) -> None:
    """Refuse (:class:`DeploymentRunRefused`) a deployment's flow run whose parameters change what code
    or endpoint it calls or point a file outside the project; nothing for any other run."""
    found = deployment_of_this_run()
    if found is None:
        return
    parameters, tags = found
    refused = refused_fields(config, parameters, tags, project or Path.cwd())
    if refused:
        shown = ", ".join(refused[:6]) + (f" and {len(refused) - 6} more" if len(refused) > 6 else "")
        raise DeploymentRunRefused(
            f"This run was refused before any call: its parameters change {shown}, which only the deployment's "
            f"own definition may set (what code or endpoint a run calls, and files outside the project); change "
            f"the deployment, or open a field there with the tag {OPEN_TAG}FIELD.")
