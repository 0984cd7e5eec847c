"""Two threads importing the two halves of an import cycle at once: without a shared lock Python
raises ``_DeadlockError`` in one of them (as scipy's compiled modules did under a metric task and an
embedding model's load); under :data:`equilens.tasks.stats.importing.IMPORTING` both finish; and
every import of scipy, or of a library that imports it, in ``flows/`` and ``tasks/`` is made under it.

The cycle is two modules made here by a finder of the test's own. Like a compiled module, each imports
the other while it is being made, before it is in ``sys.modules``, and only once the other thread has
begun making the other one (it waits a second at most): the interleaving that deadlocks, made certain
rather than left to chance."""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.util
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import ModuleType

import pytest
from equilens.tasks.stats.importing import IMPORTING


class CycleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``PREFIX_left`` and ``PREFIX_right``; making either imports the other first."""

    def __init__(self, prefix: str) -> None:
        self.names = {f"{prefix}_left": f"{prefix}_right", f"{prefix}_right": f"{prefix}_left"}
        self.begun = {name: threading.Event() for name in self.names}
        self.making = threading.local()  # the modules this thread is making, outermost first

    def find_spec(self, name: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name in self.names else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        other, making = self.names[spec.name], self.making.__dict__.setdefault("stack", [])
        self.begun[spec.name].set()
        if other in making:  # this thread is making the other one: the cycle closes here
            return
        self.begun[other].wait(1.0)
        making.append(spec.name)
        try:
            importlib.import_module(other)  # while this one is not yet in sys.modules
        finally:
            making.pop()

    def exec_module(self, module: ModuleType) -> None:
        return None


@pytest.fixture()
def cycle(request: pytest.FixtureRequest) -> Iterator[CycleFinder]:
    finder = CycleFinder(f"equilens_test_cycle_{abs(hash(request.node.nodeid))}")
    sys.meta_path.insert(0, finder)
    yield finder
    sys.meta_path.remove(finder)
    for name in finder.names:
        sys.modules.pop(name, None)


def _import_both(finder: CycleFinder, lock: AbstractContextManager) -> list[str]:
    """The exceptions (by class name) the two threads' imports raised."""
    raised: list[str] = []

    def half(name: str) -> None:
        try:
            with lock:
                importlib.import_module(name)
        except BaseException as err:  # noqa: BLE001 - what each thread raised is the result
            raised.append(type(err).__name__)

    threads = [threading.Thread(target=half, args=(name,)) for name in finder.names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads), "the imports never finished"
    return raised


def test_two_threads_importing_a_cycle_without_the_lock_deadlock(cycle: CycleFinder) -> None:
    assert _import_both(cycle, nullcontext()) == ["_DeadlockError"]


def test_under_the_lock_both_imports_finish(cycle: CycleFinder) -> None:
    assert _import_both(cycle, IMPORTING) == []
    assert set(cycle.names) <= set(sys.modules)


SCIPY_AND_ITS_IMPORTERS = ("scipy", "nltk", "sentence_transformers", "great_expectations")


def _unguarded(tree: ast.AST) -> list[int]:
    """Lines of imports of scipy (or a library that imports it) not inside ``with IMPORTING:``."""
    found: list[int] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.With) and any(isinstance(item.context_expr, ast.Name)
                                              and item.context_expr.id == "IMPORTING" for item in node.items):
            guarded = True
        if isinstance(node, ast.Import | ast.ImportFrom) and not guarded:
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if any(name.split(".")[0] in SCIPY_AND_ITS_IMPORTERS for name in names):
                found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return found


def test_every_import_of_scipy_or_a_library_that_imports_it_is_made_under_the_lock() -> None:
    root = Path(__file__).resolve().parents[1]
    unguarded = {str(path.relative_to(root)): lines for path in sorted([*root.glob("flows/**/*.py"), *root.glob("tasks/**/*.py")])
                 if (lines := _unguarded(ast.parse(path.read_text(encoding="utf-8"))))}
    assert unguarded == {}


def test_the_check_finds_an_import_outside_the_lock() -> None:
    source = "def f():\n    from scipy.stats import norm\n    with IMPORTING:\n        import nltk\n"
    assert _unguarded(ast.parse(source)) == [2]
