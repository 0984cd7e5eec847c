"""The assessments equilens runs, one declared value each.

An assessment is one :class:`Assessment` value, ``ASSESSMENT``, in the ``__init__.py`` of its folder
(``tasks/assessments/NAME/``): its config class (the flow's parameter, which adds the sections the
assessment reads, and whose ``assessment`` value is its name), its shipped default config, a
one-paragraph card saying what it answers, its place in lists, its Prefect flow and the module of
its hooks (what the plan, the checks before a run and its looks ask it, :class:`Hooks`), and the
modules that register its metric families, its report sections and its tables. The flow and the
hooks are named as ``module:function`` and module, like a Prefect deployment's entrypoint, and
imported only when a run or a list needs them, so the config layer never imports a flow; the
registries of metrics, report sections and tables import the modules every assessment declares
(:func:`import_declared`), so no layer finds an assessment's module by its file name.

One discovery path fills the registry: each folder's value, then the value of each module named in
the entry-point group ``equilens.assessments`` of the installed packages (:data:`ENTRY_POINTS`).
Asking for one assessment by name imports only its folder.

Everything that lists assessments reads this registry: the config's ``assessment`` values and the
class each loads as (:mod:`equilens.tasks.config`), dispatch (:mod:`equilens.flows.running.dispatch`),
the run plan, ``equilens options``, ``equilens assessments`` and the README's table (``equilens
assessments --format markdown``; a test holds the README to it).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import typing
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from equilens.tasks.errors import RegistryError
from equilens.tasks.registry import Registry
from equilens.tasks.shipped import REPO_ROOT as ROOT

if TYPE_CHECKING:
    import pandas as pd


class PlanRequests(Protocol):
    def __call__(self, config: Any, prompts: pd.DataFrame) -> pd.DataFrame:  # its RunConfig
        """What the run's LLM stage would be asked for ``prompts``: one row per request."""
        ...


class PlanExtraCalls(Protocol):
    def __call__(self, config: Any, prompts: pd.DataFrame) -> list[Any]:  # its RunConfig
        """The calls a run makes beside the model's (a judge's), for ``prompts``: ``ExtraCalls`` of
        :mod:`equilens.tasks.llm.budget` (named, not imported: the LLM layer reads the config layer)."""
        ...


class CheckInputs(Protocol):
    def __call__(self, config: Any) -> None:  # its RunConfig
        """Raise a typed error on a problem with the assessment's own inputs; reads no prompt."""
        ...


class PromptWarnings(Protocol):
    def __call__(self, config: Any, prompts: pd.DataFrame) -> list[str]:  # its RunConfig
        """What reading ``prompts`` before the run warns of, one sentence each."""
        ...


class StopTargets(Protocol):
    def __call__(self, config: Any) -> tuple[str, ...]:  # its RunConfig
        """The metrics a gap to detect is measured in."""
        ...


class LookGroups(Protocol):
    def __call__(self, config: Any, prompts: pd.DataFrame,  # its RunConfig
                 ) -> tuple[pd.Series, list[tuple[str, pd.Index, bool]]]:
        """Each prompt's outcome kind, and the comparisons beyond one per attribute (label, prompts, breakdown)."""
        ...


class PromptStrata(Protocol):
    def __call__(self, config: Any, variants: pd.DataFrame) -> dict[str, tuple]:  # its RunConfig
        """Each prompt's stratum, of which every look holds an equal share."""
        ...


@dataclass(frozen=True)
class Hooks:
    """What an assessment's hooks module defines, each a function of that name (None: it has none).
    ``plan_requests``: what the run's LLM stage would be asked for some prompts; ``plan_extra_calls``:
    the calls beside the model's (a judge's); ``check_inputs``: its own checks before the run, which
    read no prompt; ``prompt_warnings``: what reading its prompts before the run warns of (the
    duplicates dropped are reported for every assessment that declares it). For a run that answers
    in looks (``equilens.flows.running.looks``; none: the counterfactual verdict's defaults):
    ``stop_targets``, the metrics a gap to detect is measured in; ``look_groups``, each prompt's
    outcome kind (the targets it can give a value) and the comparisons beyond one per attribute;
    ``prompt_strata``, what every look holds an equal share of."""

    plan_requests: PlanRequests | None = None
    plan_extra_calls: PlanExtraCalls | None = None
    check_inputs: CheckInputs | None = None
    prompt_warnings: PromptWarnings | None = None
    stop_targets: StopTargets | None = None
    look_groups: LookGroups | None = None
    prompt_strata: PromptStrata | None = None


@dataclass(frozen=True)
class Assessment:
    """One assessment, declared once (see the module docstring)."""

    config: type  # the RunConfig subclass that is the flow's parameter; its `assessment` value is the name
    default_config: str  # a shipped config, relative to the repository root (another package's: its path)
    card: str  # one paragraph: the question it answers
    order: int  # its place in every list of assessments (the default, counterfactual, first)
    flow: str  # "module:function" of its Prefect flow
    hooks: str | None = None  # the module that defines its hooks (functions named as Hooks' fields)
    metrics: tuple[str, ...] = ()  # the modules that register its own metric families (tasks.metrics.METRICS)
    report: str | None = None  # the module that registers what its families show in a report (FAMILY_REPORTS)
    tables: str | None = None  # the module that adds the DuckDB tables only it writes (tasks.storage.schema.TABLES)

    def __post_init__(self) -> None:
        if _assessment_name(self.config) is None:
            raise RegistryError(f"{self.config!r} is not an assessment's run config: it needs an "
                                "`assessment: Literal[NAME]` field (equilens.tasks.config.assessment_field)")
        if self.flow.count(":") != 1:
            raise RegistryError(f"the {self.name} assessment's flow {self.flow!r} must be written module:function")
        object.__setattr__(self, "card", " ".join(self.card.split()))

    @property
    def name(self) -> str:
        """The one value of its config's ``assessment`` field."""
        return _assessment_name(self.config) or ""

    def load_flow(self) -> Any:  # a Prefect Flow
        """Its Prefect flow, imported from ``flow``; a flow that does not take this assessment's config
        is a RegistryError."""
        module, _, function = self.flow.partition(":")
        try:
            found = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as exc:
            raise RegistryError(f"the {self.name} assessment's flow {self.flow} cannot be loaded: {exc}") from None
        hint = typing.get_type_hints(getattr(found, "fn", found)).get("config")
        if hint is not self.config:
            took = getattr(hint, "__name__", hint)
            raise RegistryError(f"the {self.name} assessment's flow {self.flow} takes `config: {took}`, not its config "
                                f"{self.config.__name__}")
        return found

    def load_hooks(self) -> Hooks:
        """Its hooks, the functions of its hooks module named as :class:`Hooks`' fields (see :func:`_hooks_in`)."""
        return _hooks_in(self.hooks) if self.hooks is not None else Hooks()

    @property
    def flow_file(self) -> Path:
        """The flow's module file (found without running the flow module)."""
        spec = importlib.util.find_spec(self.flow.partition(":")[0])
        if spec is None or spec.origin is None:
            raise RegistryError(f"the {self.name} assessment's flow module {self.flow} is not installed")
        return Path(spec.origin).resolve()


def _assessment_name(config: type) -> str | None:
    """The one value of a run config's ``assessment`` field; None for a class that has no such field."""
    field = getattr(config, "model_fields", {}).get("assessment")
    named = typing.get_args(field.annotation) if field is not None else ()
    return named[0] if len(named) == 1 else None


@functools.cache
def _hooks_in(hooks: str) -> Hooks:
    """The hooks the module ``hooks`` defines, read once: the functions named as :class:`Hooks`' fields,
    each taking the parameters of its Protocol. A public function of that module with any other name is
    a RegistryError (a misspelt hook would otherwise be silently unused), and so is a hook whose
    parameters differ from its Protocol's."""
    module = importlib.import_module(hooks)
    wanted = {f.name for f in fields(Hooks)}
    stray = sorted(name for name, value in vars(module).items() if inspect.isfunction(value)
                   and value.__module__ == module.__name__ and not name.startswith("_") and name not in wanted)
    if stray:
        raise RegistryError(f"{hooks} defines {', '.join(stray)}, which are not hooks; the hooks are "
                            f"{', '.join(sorted(wanted))} (make a helper private with a leading underscore)")
    found = {name: getattr(module, name) for name in wanted if callable(getattr(module, name, None))}
    protocols = typing.get_type_hints(Hooks)
    for name, hook in found.items():  # each takes the parameters of its Protocol
        want = list(inspect.signature(typing.get_args(protocols[name])[0].__call__).parameters)[1:]
        got = list(inspect.signature(hook).parameters)
        if len(got) != len(want):
            raise RegistryError(f"{hooks}.{name} takes ({', '.join(got)}); the hook takes ({', '.join(want)})")
    return Hooks(**found)


FOLDERS = ROOT / "tasks" / "assessments"  # one folder per shipped assessment, named as it
ENTRY_POINTS = "equilens.assessments"
"""The entry-point group through which another installed package adds assessments: each entry, named
as the assessment, is a module that declares ``ASSESSMENT`` (or the :class:`Assessment` value itself)."""


class _Assessments(Registry[Assessment]):
    """The registry, filled by :func:`_declared`; asking for one shipped assessment by name before that
    imports only its folder."""

    def registered(self) -> list[tuple[str, Assessment]]:
        """(name, entry) in the order the entries declare: the reading order of every list."""
        return sorted(super().registered(), key=lambda item: item[1].order)

    def get(self, name: str) -> Assessment:
        return self._items[name] if self._one(name) else super().get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (self._one(name) or super().__contains__(name))

    def _one(self, name: str) -> bool:
        """Whether ``name`` is here, after declaring it from its folder alone where discovery has not run."""
        if name in self._items:
            return True
        if self._discover is None or not name.isidentifier() or not (FOLDERS / name / "__init__.py").is_file():
            return False
        self.declare_folder(name)
        return name in self._items

    def declare_folder(self, name: str) -> None:
        """Register the assessment that the shipped folder ``tasks/assessments/NAME`` declares."""
        self.declare(importlib.import_module(f"equilens.tasks.assessments.{name}"), name, f"tasks/assessments/{name}")

    def declare(self, module: Any, name: str, where: str) -> None:  # a module or an Assessment
        """Register the assessment ``module`` declares (its ``ASSESSMENT``, or the value itself), named
        ``name``; the same value twice is registered once."""
        declared = module if isinstance(module, Assessment) else getattr(module, "ASSESSMENT", None)
        if not isinstance(declared, Assessment):
            raise RegistryError(f"{where} declares no ASSESSMENT = Assessment(...)")
        if declared.name != name:
            raise RegistryError(f"{where} declares the assessment {declared.name!r}, but is named {name!r}")
        if self._items.get(name) is not declared:
            self.add(name, declared)


def _declared() -> None:
    """Declare the assessment of every folder (``tasks/assessments/NAME/__init__.py``), then of every
    module named in the :data:`ENTRY_POINTS` group of the installed packages. A package whose module
    fails to load, or declares no assessment of its name, is left out with a warning naming it, so one
    broken package never stops the others."""
    for folder in sorted(FOLDERS.iterdir()):
        if (folder / "__init__.py").is_file():
            ASSESSMENTS.declare_folder(folder.name)
    for point in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            ASSESSMENTS.declare(point.load(), point.name, f"{point.value} (entry point group {ENTRY_POINTS})")
        except Exception as exc:  # noqa: BLE001 - any failure of another package's module leaves it out
            warnings.warn(f"the assessment {point.name!r} of {point.value} (entry point group {ENTRY_POINTS}) "
                          f"was left out: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


ASSESSMENTS = _Assessments("assessment", discover=_declared)


def import_declared(kind: str) -> None:
    """Import the modules of ``kind`` (``"metrics"``, ``"report"`` or ``"tables"``) that every
    assessment declares, in the registry's order: the registries they add to fill as they load."""
    for _, entry in ASSESSMENTS.registered():
        named = getattr(entry, kind)
        for module in (named,) if isinstance(named, str) else named or ():
            importlib.import_module(module)
