"""An editor follows the project's own imports: jedi (the engine of many editors' go-to-definition)
resolves ``equilens.*`` imports in flows/ and tasks/ to the files in this checkout.

The package maps its import name onto the repository's folders (``pyproject.toml``); the dev set-up
links that layout into the virtual environment (``tests/tools/link_package.py``), which static
tools read. ``make lint`` runs pyright on the same question for every import.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

jedi = pytest.importorskip("jedi")

ROOT = Path(__file__).resolve().parents[1]
FROM_IMPORT = re.compile(r"\s*from (equilens[\w.]*) import \(?(\w+)")


def _first_import(path: Path) -> tuple[int, int, str] | None:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        found = FROM_IMPORT.match(line)
        if found:
            return number, line.index(found.group(2), found.end(1)), found.group(2)
    return None


# one module from every package of flows/ and tasks/, and the package root itself
SAMPLE = sorted({next(p for p in sorted(folder.glob("*.py")) if _first_import(p))
                 for top in ("flows", "tasks") for folder in [ROOT / top, *sorted((ROOT / top).rglob("*/"))]
                 if folder.is_dir() and any(_first_import(p) for p in folder.glob("*.py"))})


def test_the_package_is_linked_for_static_tools():
    """Every file of the package root (flows/api) has its link; a new one means ``make setup`` again."""
    tree = Path(sys.prefix) / "equilens-links" / "equilens"
    assert tree.is_dir(), "run `make setup` (or python tests/tools/link_package.py) to link the package"
    missing = [p.name for p in (ROOT / "flows" / "api").glob("*.py") if not (tree / p.name).exists()]
    assert not missing, f"not linked: {missing}; run `make setup`"
    for name in ("flows", "tasks", "data", "configs"):
        assert (tree / name).resolve() == ROOT / name


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_jedi_goes_to_the_definition_of_a_project_import(path: Path):
    line, column, name = _first_import(path)
    project = jedi.Project(str(ROOT), environment_path=sys.prefix)
    found = jedi.Script(path=str(path), project=project).goto(line, column + 1, follow_imports=True)
    assert found and found[0].module_path is not None, f"{path.name}:{line} `{name}` does not resolve"
    target = Path(found[0].module_path).resolve()
    assert target.is_relative_to(ROOT) and target.is_file(), target
