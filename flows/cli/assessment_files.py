"""The files that make one assessment (``equilens assessments NAME --files``): what a newcomer reads,
or copies to start another."""

from __future__ import annotations

import ast
from pathlib import Path

from equilens.tasks.catalog import Assessment
from equilens.tasks.shipped import REPO_ROOT as ROOT


def assessment_files(entry: Assessment) -> list[str]:
    """The files that make this assessment, relative to the repository root: its flow, its
    default config, its folder (the declaration, its config and hooks), the stage and metric
    modules these reach through imports (a stage it reuses from another assessment included),
    and the folder of its tests (``tests/assessments/NAME``)."""
    flow_file = entry.flow_file
    out, todo = [flow_file, ROOT / entry.default_config], [flow_file]
    modules = {entry.config.__module__.rpartition(".")[0], *([entry.hooks] if entry.hooks else [])}
    while todo or modules:
        for module in modules | (_imports(todo.pop()) if todo else set()):
            if not module.startswith(OWN_CODE) or module in SHARED:
                continue
            path = _path(module)
            package = path.is_dir() and module.startswith("equilens.tasks.assessments.")
            found = sorted(path.glob("*.py")) if package else [path.with_suffix(".py")]  # the whole package
            todo += [p for p in found if p.exists() and p not in out and p not in todo]
            out += [p for p in found if p.exists() and p not in out]
        modules = set()
        if not todo:
            todo = [p for p in _family_modules(out) if p not in out]
            out += todo
    out[2:] = sorted(out[2:])
    out.append(ROOT / "tests" / "assessments" / entry.name)  # its tests: a folder of their own
    return [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)  # another package's: where it is
            for p in dict.fromkeys(out) if p.exists()]


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
