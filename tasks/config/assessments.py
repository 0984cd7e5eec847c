"""The assessments equilens runs, one registry entry each.

An entry names the assessment, its config class (the flow's parameter, which adds the sections the
assessment reads), its flow (``module:function``, imported only when a run needs it), its shipped
default config, a one-paragraph card saying what it answers and its place in lists. Each entry is
declared in its assessment's folder (``tasks/assessments/NAME/config.py``), found by path the first
time the registry is read, so the config layer never imports an assessment. Everything that lists assessments
reads this registry: the config's ``assessment`` values and the class each loads as
(:mod:`equilens.tasks.config`), dispatch (:mod:`equilens.flows.running.dispatch`), the run plan, ``equilens options``,
``equilens assessments`` and the README's table (``equilens assessments --format markdown``; a test
holds the README to it). A config class registers itself with :func:`assessment`, the name taken
from its ``assessment`` field, so a new assessment is one decorated class and its flow.
"""

from __future__ import annotations

import ast
import importlib
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from equilens.tasks.registry import Registry
from equilens.tasks.shipped import REPO_ROOT as ROOT


@dataclass(frozen=True)
class Assessment:
    name: str
    config: type  # the RunConfig subclass that is the flow's parameter
    flow: str  # "module:function"
    default_config: str  # a shipped config, relative to the repository root
    card: str  # one paragraph: the question it answers
    order: int  # its place in every list of assessments (the default, counterfactual, first)

    @property
    def flow_module(self) -> str:
        return self.flow.partition(":")[0]

    def flow_function(self) -> Callable[..., dict[str, Any]]:
        """The Prefect flow, imported now (a run loads only its own flow)."""
        return getattr(importlib.import_module(self.flow_module), self.flow.partition(":")[2])

    def files(self) -> list[str]:
        """The files that make this assessment, relative to the repository root: its flow, its
        default config, the stage and metric modules its flow reaches through imports (a stage it
        reuses from another assessment included), and its tests."""
        flow_file = _path(self.flow_module).with_suffix(".py")
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
        out += sorted((ROOT / "tests").glob(f"test_{self.flow_module.rsplit('.', 1)[1]}*.py"))
        return [str(p.relative_to(ROOT)) for p in dict.fromkeys(out) if p.exists()]


OWN_CODE = ("equilens.tasks.assessments.", "equilens.tasks.metrics.")  # where an assessment's own modules live
SHARED = {"equilens.tasks.metrics.base", "equilens.tasks.metrics.judged"}  # ... except what every family shares


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


def _declared() -> None:
    """Import every assessment's config module (``tasks/assessments/NAME/config.py``); each
    declares its entry as it loads."""
    for found in sorted((ROOT / "tasks" / "assessments").glob("*/config.py")):
        importlib.import_module(f"equilens.tasks.assessments.{found.parent.name}.config")


ASSESSMENTS: Registry[Assessment] = _Assessments("assessment", discover=_declared)


def assessment(*, flow: str, default_config: str, card: str, order: int) -> Callable[[type], type]:
    """Class decorator: register the config class as its assessment (the one value of its
    ``assessment`` field), refusing a name already registered."""

    def deco(cls: type) -> type:
        (name,) = typing.get_args(cls.model_fields["assessment"].annotation)  # type: ignore[attr-defined]
        ASSESSMENTS.add(name, Assessment(name, cls, flow, default_config, " ".join(card.split()), order))
        return cls

    return deco
