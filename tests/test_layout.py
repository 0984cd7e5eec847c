"""The code layout: no import circles in flows/ and tasks/, tasks/ never reaches into flows/, only the
command line imports the CLI, and no module grows past 420 lines.

Every import statement counts, also one inside a function or an ``if __name__ == "__main__":`` block:
a lazy import is still a dependency, and a circle of lazy imports is still a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("flows", "tasks")
MAX_LINES = 420
# A module allowed past the limit, with the one concept that keeps it whole (strict xfail); none today.
TOO_LONG: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(["equilens", *(parts[:-1] if parts[-1] == "__init__" else parts)])


MODULES = {_module_name(p): p for top in PACKAGES for p in sorted((ROOT / top).rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Modules of flows/ and tasks/ that ``name`` imports: ``from a.b import c`` is ``a.b.c`` when that is a
    module, else ``a.b``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in MODULES else base)
    return (found & MODULES.keys()) - {name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_graph_sees_lazy_and_main_block_imports() -> None:
    assert "equilens.flows.running.dispatch" in GRAPH["equilens.flows.cli"]  # imported inside a function
    assert "equilens.flows.running.launch" in GRAPH["equilens.flows.counterfactual"]  # imported in the __main__ block
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    cycles = _cycles(GRAPH)
    detail = "; ".join(
        " ".join(f"{m} -> {sorted(GRAPH[m] & set(c))}" for m in c) for c in cycles
    )
    assert not cycles, f"import circles: {detail}"


def test_no_cycles_between_the_packages_of_tasks() -> None:
    """A package of ``tasks/`` (config, inputs, metrics, reporting, assessments, ...) that imports another
    is never imported back by it, counting imports inside functions: the layers stay layers."""
    def package(module: str) -> str:
        return ".".join(module.split(".")[:3])

    graph: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        if module.startswith("equilens.tasks."):
            graph.setdefault(package(module), set()).update(
                package(t) for t in targets if t.startswith("equilens.tasks.") and package(t) != package(module))
    graph = {p: {t for t in targets if t in graph} for p, targets in graph.items()}
    assert not _cycles(graph), _cycles(graph)


def test_tasks_never_import_flows() -> None:
    bad = {m: sorted(t for t in GRAPH[m] if t.startswith("equilens.flows.")) for m in GRAPH if m.startswith("equilens.tasks.")}
    assert not {m: t for m, t in bad.items() if t}


def test_only_the_command_line_imports_the_cli() -> None:
    def is_cli(module: str) -> bool:
        return module == "equilens.flows.api.__main__" or module.rpartition(".")[2].startswith("cli")

    importers = sorted(m for m, targets in GRAPH.items() if "equilens.flows.cli" in targets and not is_cli(m))
    assert not importers, f"{importers} import equilens.flows.cli; use equilens.flows.running.launch (below the CLI) instead"


@pytest.mark.parametrize("module", [
    pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=TOO_LONG[m])) if m in TOO_LONG else m
    for m in sorted(MODULES)
])
def test_no_module_over_the_line_limit(module: str) -> None:
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(ROOT)} has {lines} lines; split it by concept"


def test_no_two_modules_of_a_folder_share_a_prefix() -> None:
    """A family of modules (``bias_test_generation.py``, ``bias_test_templates.py``) is a package
    (``bias_test/``): the folder names what belongs together."""
    by_folder: dict[tuple[Path, str], list[str]] = {}
    for path in MODULES.values():
        if path.stem != "__init__":
            by_folder.setdefault((path.parent, path.stem.split("_")[0]), []).append(path.stem)
    families = {f"{folder.relative_to(ROOT)}/{prefix}_*": names
                for (folder, prefix), names in by_folder.items() if len(names) > 1}
    assert not families, f"make these families packages: {families}"


def test_every_module_says_what_it_owns() -> None:
    missing = [str(p.relative_to(ROOT)) for p in MODULES.values()
               if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not missing, f"modules without a docstring: {missing}"


def test_lower_layers_of_tasks_never_import_the_stages_or_the_reports() -> None:
    """The stages compose inputs, llm, scoring, metrics, stats and storage; nothing below imports them.
    The reports sit above the stages: a stage needs the verdict's rule (which metrics are judged, the
    headline), never the verdict's words, so it takes the rule from :mod:`equilens.tasks.metrics.judged`
    (only the plain-text cell escaping of the reports is shared). The reports import no assessment: what
    an assessment's families show (`tasks/assessments/NAME/report.py`) sits with the reports, found by
    path, and nothing of the stages imports it."""
    stages = ("equilens.tasks.assessments", "equilens.tasks.pipeline")

    def reporting(module: str) -> bool:
        return module.startswith("equilens.tasks.reporting") or (module.startswith("equilens.tasks.assessments.")
                                                                and module.endswith(".report"))

    upward = sorted((m, d) for m, deps in GRAPH.items() if m.startswith("equilens.tasks.") for d in deps
                    if (d.startswith(stages) and not m.startswith(stages) and not reporting(d))
                    or (reporting(d) and d != "equilens.tasks.plain" and not reporting(m)))
    assert not upward, upward


def _assessment_flows() -> set[str]:
    """``module:function`` of every Prefect flow in flows/ whose ``config`` parameter is a run config."""
    found = set()
    for path in sorted((ROOT / "flows").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and getattr(d.func, "id", "") == "flow" for d in node.decorator_list):
                config = next((a for a in node.args.args if a.arg == "config"), None)
                if config is not None and ast.unparse(config.annotation or ast.Constant("")).endswith("RunConfig"):
                    found.add(f"{_module_name(path)}:{node.name}")
    return found


def test_every_assessment_is_registered_once() -> None:
    """One registry entry per assessment (tasks.catalog): every run config class with its own
    ``assessment`` value (each in its folder's config module) and every flow that takes one is named by
    exactly one entry."""
    import importlib

    from equilens.flows.running.dispatch import load_flows
    from equilens.tasks.catalog import ASSESSMENTS
    from equilens.tasks.config import RunConfig
    from equilens.tasks.errors import RegistryError

    entries = [entry for _, entry in ASSESSMENTS.registered()]
    modules = [importlib.import_module(m) for m in MODULES if m.startswith("equilens.tasks.assessments.")
               and m.endswith(".config")]
    classes = {cls for module in modules for cls in vars(module).values() if isinstance(cls, type)
               and issubclass(cls, RunConfig) and cls.__module__ == module.__name__
               and cls.model_fields["assessment"].annotation is not str}
    assert sorted(e.config.__name__ for e in entries) == sorted(c.__name__ for c in classes)
    load_flows()
    assert sorted(e.flow for e in entries) == sorted(_assessment_flows())
    with pytest.raises(RegistryError, match="already registered"):
        ASSESSMENTS.add(entries[0].name, entries[0])


STAGES = sorted(m for m in MODULES if m.startswith("equilens.tasks.assessments.")
                and not m.endswith(("metrics", ".report")))  # an assessment's report module words its own metrics


@pytest.mark.parametrize("module", STAGES)
def test_no_stage_module_names_a_metric(module: str) -> None:
    """A stage iterates the metric registry and calls what each metric declares (its function, its
    per-item step, the settings it reads, what it summarises); a new metric is one registered
    function and its test, never an edit of a stage."""
    from equilens.tasks.metrics import METRICS

    names = set(METRICS.names())
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    named = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in names})
    assert not named, f"{module} names the metrics {named}"


def test_every_import_goes_through_the_equilens_name() -> None:
    """``flows`` and ``tasks`` are folders of this repository, not import names: a project with its own
    ``flows/`` or ``tasks/`` package would shadow them (the installed wheel has only ``equilens``)."""
    bare = []
    for path in sorted([*MODULES.values(), *(ROOT / "tests").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bare += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in PACKAGES]
    assert not bare, bare


def test_no_module_imports_another_modules_private_names() -> None:
    """A name with a leading underscore belongs to its module: another module that needs it needs a
    public name for it (the statistics engine took ``_cluster_blocks`` and ``_swapped`` across modules)."""
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("equilens"):
                found += [f"{name}: from {node.module} import {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, found


def test_every_assessment_flow_runs_inside_the_one_skeleton() -> None:
    """The run's record, its close and its result come from :func:`equilens.flows.assessment_run.assessment_run`;
    no flow starts, closes or returns a run by hand."""
    by_hand = {}
    for flow in sorted(_assessment_flows()):
        source = MODULES[flow.partition(":")[0]].read_text(encoding="utf-8")
        calls = [c for c in ("begin_run(", "recorded_run(", "close_run(", "run_result(") if c in source]
        if calls or "assessment_run(" not in source:
            by_hand[flow] = calls
    assert len(_assessment_flows()) >= 8 and not by_hand, by_hand


def test_flows_top_level_shows_the_flows_and_defines_no_task() -> None:
    """``flows/`` shows the flows: its top level holds the flow modules, the skeleton and at most a
    couple more (12 in all), the run machinery sits in ``flows/running/``, and every Prefect
    ``@task`` is defined in ``tasks/`` beside the stage it wraps, never in ``flows/``."""
    top = sorted(p.name for p in (ROOT / "flows").glob("*.py"))
    assert len(top) <= 12, top
    defined = [f"{name}:{node.name}" for name, path in MODULES.items() if name.startswith("equilens.flows")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
               and any(ast.unparse(d).split("(")[0] == "task" for d in node.decorator_list)]
    assert not defined, defined
    tasks = [name for name, path in MODULES.items() if name.startswith("equilens.tasks")
             and "@task" in path.read_text(encoding="utf-8")]
    assert "equilens.tasks.pipeline.prefect_tasks" in tasks
    assert {t.split(".")[3] for t in tasks if t.startswith("equilens.tasks.assessments.")} >= {
        "bbq", "bias_test", "classification", "recommendation", "stereotype"}
