"""The assessments equilens runs, one registry entry each.

An entry names the assessment, its config class (the flow's parameter, which adds the sections the
assessment reads), its flow (``module:function``, imported only when a run needs it), its shipped
default config and a one-paragraph card saying what it answers. Everything that lists assessments
reads this registry: the config's ``assessment`` values and the class each loads as
(:mod:`tasks.config`), dispatch (:mod:`flows.dispatch`), the run plan, ``equilens options``,
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
from typing import Any

from tasks.registry import Registry
from tasks.shipped import REPO_ROOT as ROOT


@dataclass(frozen=True)
class Assessment:
    name: str
    config: type  # the RunConfig subclass that is the flow's parameter
    flow: str  # "module:function"
    default_config: str  # a shipped config, relative to the repository root
    card: str  # one paragraph: the question it answers

    @property
    def flow_module(self) -> str:
        return self.flow.partition(":")[0]

    def flow_function(self) -> Callable[..., dict[str, Any]]:
        """The Prefect flow, imported now (a run loads only its own flow)."""
        return getattr(importlib.import_module(self.flow_module), self.flow.partition(":")[2])

    def files(self) -> list[str]:
        """The files that make this assessment, relative to the repository root: its flow, its
        default config, the stage and metric modules its flow imports, and its tests."""
        flow_file = ROOT / (self.flow_module.replace(".", "/") + ".py")
        out = [flow_file, ROOT / self.default_config]
        tree = ast.parse(flow_file.read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:  # "from tasks.assessments import identity" too
                imported |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        for module in sorted(imported):
            if module.startswith(("tasks.assessments.", "tasks.metrics.")):
                path = ROOT / module.replace(".", "/")
                out.append(path / "__init__.py" if path.is_dir() else path.with_suffix(".py"))  # kept if it exists
        out += sorted((ROOT / "tests").glob(f"test_{self.flow_module.rsplit('.', 1)[1]}*.py"))
        return [str(p.relative_to(ROOT)) for p in dict.fromkeys(out) if p.exists()]


ASSESSMENTS: Registry[Assessment] = Registry("assessment")


def assessment(*, flow: str, default_config: str, card: str) -> Callable[[type], type]:
    """Class decorator: register the config class as its assessment (the one value of its
    ``assessment`` field), refusing a name already registered."""

    def deco(cls: type) -> type:
        (name,) = typing.get_args(cls.model_fields["assessment"].annotation)  # type: ignore[attr-defined]
        ASSESSMENTS.add(name, Assessment(name, cls, flow, default_config, " ".join(card.split())))
        return cls

    return deco
