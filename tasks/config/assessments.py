"""The assessments equilens runs, one registry entry each.

An entry names the assessment, its config class (the flow's parameter, which adds the sections the
assessment reads), its shipped default config, a one-paragraph card saying what it answers and its
place in lists. Each entry is declared in its assessment's folder
(``tasks/assessments/NAME/config.py``, with :func:`assessment`), found by path the first time the
registry is read, so the config layer never imports an assessment. The flow module completes the
entry (:meth:`Assessment.bind`, through ``equilens.flows.running.dispatch.assessment_flow``) with
its Prefect flow and the hooks that the plan, the checks before a run and its looks call
(:class:`Hooks`, from the assessment's ``hooks.py``), so the tasks layer never names a flow.

Everything that lists assessments reads this registry: the config's ``assessment`` values and the
class each loads as (:mod:`equilens.tasks.config`), dispatch (:mod:`equilens.flows.running.dispatch`),
the run plan, ``equilens options``, ``equilens assessments`` and the README's table (``equilens
assessments --format markdown``; a test holds the README to it). A new assessment is a folder with
its decorated config class and a flow module with its decorated flow.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from equilens.tasks.errors import RegistryError
from equilens.tasks.registry import Registry, import_assessment_modules
from equilens.tasks.shipped import REPO_ROOT as ROOT

PlanRequests = Callable[[Any, Any], Any]  # (config, prompts DataFrame) -> the requests DataFrame
PlanExtraCalls = Callable[[Any, Any], list]  # (config, prompts DataFrame) -> [ExtraCalls]
CheckInputs = Callable[[Any], None]  # (config): raises a typed error on a problem; reads no prompt
PromptWarnings = Callable[[Any, Any], list]  # (config, prompts DataFrame) -> [warning sentences]
StopTargets = Callable[[Any], tuple]  # (config) -> the metrics a gap to detect is measured in
LookGroups = Callable[[Any, Any], tuple]  # (config, one row per prompt) -> (outcome kinds, [(label, index, breakdown)])
PromptStrata = Callable[[Any, Any], dict]  # (config, variants) -> {prompt id: its stratum}


@dataclass(frozen=True)
class Hooks:
    """What an assessment's flow module declares beside its flow (each None: the assessment has none).
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


@dataclass
class Assessment:
    name: str
    config: type  # the RunConfig subclass that is the flow's parameter
    default_config: str  # a shipped config, relative to the repository root (another package's: its path)
    card: str  # one paragraph: the question it answers
    order: int  # its place in every list of assessments (the default, counterfactual, first)
    flow: Any = None  # its Prefect flow, bound by its flow module (None until that module is imported)
    hooks: Hooks = Hooks()  # what the flow module declares beside the flow, bound with it

    def bind(self, flow: Any, hooks: Hooks) -> None:  # noqa: ANN401 - a Prefect Flow
        """Complete the entry with its flow and hooks, refusing a second, different flow. The
        same flow loaded again from its file (its module run as a script, Prefect loading a
        deployment's entrypoint) is the same flow: the package's own module
        (``equilens.flows.NAME``) is kept over such a copy."""
        if self.flow is not None and _origin(self.flow) != _origin(flow):
            raise RegistryError(f"assessment {self.name!r} already runs the flow {_origin(self.flow)[1]} of "
                                f"{_origin(self.flow)[0]}; {_origin(flow)[1]} of {_origin(flow)[0]} cannot replace it")
        if self.flow is None or self.flow_module_is_packaged(flow):
            self.flow, self.hooks = flow, hooks

    def flow_module_is_packaged(self, flow: Any = None) -> bool:  # noqa: ANN401 - a Prefect Flow
        """Whether ``flow`` (default: the bound one) comes from the package's module of this
        assessment's flow, ``equilens.flows.NAME``, not from a copy of its file loaded by path."""
        flow = self.flow if flow is None else flow
        return getattr(flow, "fn", flow).__module__ == f"equilens.flows.{self.name}"

    @property
    def flow_file(self) -> Path:
        """The flow's module file (the entry must be bound)."""
        if self.flow is None:
            raise RegistryError(f"assessment {self.name!r} has no flow yet: import its flow module "
                                "(equilens.flows.running.dispatch.load_flows imports them all)")
        return _origin(self.flow)[0]

    def files(self) -> list[str]:
        """The files that make this assessment, relative to the repository root: its flow, its
        default config, the stage and metric modules its flow reaches through imports (a stage it
        reuses from another assessment included), and the folder of its tests (``tests/assessments/NAME``)."""
        flow_file = self.flow_file
        out, todo = [flow_file, ROOT / self.default_config], [flow_file]
        while todo:
            for module in _imports(todo.pop()):
                if not module.startswith(OWN_CODE) or module in SHARED:
                    continue
                path = _path(module)
                package = path.is_dir() and module.startswith("equilens.tasks.assessments.")
                found = sorted(path.glob("*.py")) if package else [path.with_suffix(".py")]  # the whole package
                todo += [p for p in found if p.exists() and p not in out and p not in todo]
                out += [p for p in found if p.exists() and p not in out]
            if not todo:
                todo = [p for p in _family_modules(out) if p not in out]
                out += todo
        out[2:] = sorted(out[2:])
        out.append(ROOT / "tests" / "assessments" / self.name)  # its tests: a folder of their own
        return [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)  # another package's: where it is
                for p in dict.fromkeys(out) if p.exists()]


OWN_CODE = ("equilens.tasks.assessments.", "equilens.tasks.metrics.")  # where an assessment's own modules live
SHARED = {"equilens.tasks.metrics.base", "equilens.tasks.metrics.judged"}  # ... except what every family shares


def _origin(flow: Any) -> tuple[Path, str]:  # noqa: ANN401 - a Prefect Flow
    """Where a flow is defined: its file and its function's name (one flow, however its module was loaded)."""
    fn = getattr(flow, "fn", flow)
    return Path(inspect.getsourcefile(fn) or fn.__code__.co_filename).resolve(), fn.__qualname__


def _path(module: str) -> Path:
    """The file or folder of a module of equilens ("equilens.tasks.metrics" is tasks/metrics)."""
    return ROOT.joinpath(*module.removeprefix("equilens.").split("."))


def _family_modules(files: list[Path]) -> list[Path]:
    """The modules that register the metric families ``files`` name (a stage asks the registry for
    its metrics by family, "wanted_metrics(names, 'counterfactual')", instead of importing them)."""
    from equilens.tasks.metrics import METRICS

    named = set()
    for path in files:
        if path.suffix == ".py":
            named |= {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    modules = {spec.fn.__module__ for _, spec in METRICS.items() if spec.family in named}
    return [_path(m).with_suffix(".py") for m in sorted(modules)]


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports from, and each name it imports as a possible submodule
    ("from equilens.tasks.assessments.identity import stages" names equilens.tasks.assessments.identity.stages)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return imported


class _Assessments(Registry[Assessment]):
    def registered(self) -> list[tuple[str, Assessment]]:
        """(name, entry) in the order the entries declare: the reading order of every list."""
        return sorted(super().registered(), key=lambda item: item[1].order)


ENTRY_POINTS = "equilens.assessments"
"""The entry-point group through which another installed package adds assessments: each entry names a
module that declares one (its config class with :func:`assessment`, its flow with
``equilens.flows.running.dispatch.assessment_flow``), loaded with the shipped ones."""


def _declared() -> None:
    """Import every assessment's config module (``tasks/assessments/NAME/config.py``), then every
    module named in the :data:`ENTRY_POINTS` group of the installed packages; each declares its entry
    as it loads. A package whose module fails to load is left out with a warning naming it, so one
    broken package never stops the others."""
    import_assessment_modules("config.py")
    for point in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            point.load()
        except Exception as exc:  # noqa: BLE001 - any failure of another package's module leaves it out
            warnings.warn(f"the assessment {point.name!r} of {point.value} (entry point group {ENTRY_POINTS}) "
                          f"was left out: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


ASSESSMENTS: Registry[Assessment] = _Assessments("assessment", discover=_declared)


def assessment(*, default_config: str, card: str, order: int) -> Callable[[type], type]:
    """Class decorator: register the config class as its assessment (the one value of its
    ``assessment`` field), refusing a name already registered."""

    def deco(cls: type) -> type:
        (name,) = typing.get_args(cls.model_fields["assessment"].annotation)  # type: ignore[attr-defined]
        ASSESSMENTS.add(name, Assessment(name, cls, default_config, " ".join(card.split()), order))
        return cls

    return deco
