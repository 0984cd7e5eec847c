"""Which flow runs a config, and how a flow module declares itself.

Each flow module (``flows/NAME.py``) decorates its Prefect flow with :func:`assessment_flow`, which
completes the registry entry of the assessment whose config class the flow takes
(:mod:`equilens.tasks.config.assessments`) with the flow and the hooks from the assessment's
folder. An assessment's flow module is ``flows/NAME.py`` (the layout every assessment follows), so a
run imports only its own flow (:func:`assessment_entry`); :func:`load_flows` imports them all, found
by path, for the lists of every assessment. Nothing keeps a list of flows; :func:`flow_for` and the
plan read the entry.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Callable
from typing import Any

from equilens.tasks.config import RunConfig
from equilens.tasks.config.assessments import (
    ASSESSMENTS,
    Assessment,
    CheckInputs,
    Hooks,
    LookGroups,
    PlanExtraCalls,
    PlanRequests,
    PromptStrata,
    PromptWarnings,
    StopTargets,
)
from equilens.tasks.errors import RegistryError
from equilens.tasks.shipped import REPO_ROOT

F = typing.TypeVar("F")


def assessment_flow(*, plan_requests: PlanRequests | None = None, plan_extra_calls: PlanExtraCalls | None = None,
                    check_inputs: CheckInputs | None = None, prompt_warnings: PromptWarnings | None = None,
                    stop_targets: StopTargets | None = None, look_groups: LookGroups | None = None,
                    prompt_strata: PromptStrata | None = None) -> Callable[[F], F]:
    """Decorator on an assessment's Prefect flow: bind it, with its hooks (:class:`Hooks`), to the
    registry entry of the assessment its ``config`` parameter's class belongs to.
    ``plan_requests(config, prompts)`` says what the run's LLM stage would be asked;
    ``plan_extra_calls(config, prompts)`` the calls beside the model's (a judge's);
    ``check_inputs(config)`` checks the assessment's own inputs before the run;
    ``prompt_warnings(config, prompts)`` says what its prompts warn of; ``stop_targets``,
    ``look_groups`` and ``prompt_strata`` say how a run that stops early answers in looks."""

    def deco(flow: F) -> F:
        hints = typing.get_type_hints(getattr(flow, "fn", flow))
        config = hints.get("config")
        if not (isinstance(config, type) and issubclass(config, RunConfig)):
            raise RegistryError(f"{flow!r} takes no `config: <an assessment's RunConfig>` parameter")
        (name,) = typing.get_args(config.model_fields["assessment"].annotation)
        entry = ASSESSMENTS.get(name)
        if entry.config is not config:
            raise RegistryError(f"{flow!r} takes {config.__name__}, but the {name} assessment's config is "
                                f"{entry.config.__name__}")
        entry.bind(flow, Hooks(plan_requests, plan_extra_calls, check_inputs, prompt_warnings, stop_targets,
                               look_groups, prompt_strata))
        return flow

    return deco


def load_flows() -> None:
    """Bind every assessment's entry (each flow module ``flows/NAME.py`` imported once)."""
    for name, _ in ASSESSMENTS.registered():
        assessment_entry(name)


def assessment_entry(name: str) -> Assessment:
    """The registry entry of assessment ``name``, its flow and hooks bound: its flow module,
    ``flows/NAME.py``, is imported (once) and binds them. A module that binds nothing is a
    RegistryError naming it."""
    entry = ASSESSMENTS.get(name)
    if entry.flow is None or not entry.flow_module_is_packaged():  # unbound, or bound by a copy loaded by path
        module = f"equilens.flows.{name}"
        if (REPO_ROOT / "flows" / f"{name}.py").is_file():
            importlib.import_module(module)
        if entry.flow is None:
            raise RegistryError(f"the {name} assessment has no flow: flows/{name}.py must define its Prefect flow "
                                "decorated with @assessment_flow")
    return entry


def flow_for(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    """The flow for ``config.assessment``, on the task runner ``config.execution`` asks for."""
    from equilens.tasks.orchestration.execution import with_task_runner

    return with_task_runner(assessment_entry(config.assessment).flow, config.execution)
