"""Make the ``equilens`` package visible to static tools in a development checkout.

The repository's folders are subpackages of one import name (``equilens.flows`` is ``flows/``,
``equilens.tasks`` is ``tasks/``, ``equilens`` itself is ``flows/api/``: see ``pyproject.toml``). A
default editable install maps them with an import hook that only a running interpreter executes,
so pyright (Pylance) and jedi resolve none of the project's own imports. This script builds the
same layout as a tree of symbolic links and puts that tree on the virtual environment's path with
a ``.pth`` file, which static tools read:

    VENV/equilens-links/equilens/            a folder
        __init__.py, assess.py, ...          links to each file of flows/api/
        flows -> REPO/flows                  links to whole folders, so a module added under
        tasks -> REPO/tasks                  flows/ or tasks/ resolves at once
        data -> REPO/data, configs -> REPO/configs

Python finds the package through the same tree (a path entry is searched before the editable
hook), and ``Path(__file__).resolve()`` still lands in the repository. Only a file added to
``flows/api/`` needs the tree rebuilt; ``make setup`` does that whenever that folder changes, and
the editable hook still imports such a file in the meantime.

Usage: ``python tests/tools/link_package.py [VENV]`` (default ``.venv``); idempotent.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOT_PACKAGE = REPO / "flows" / "api"
SUBPACKAGES = ("flows", "tasks", "data", "configs")
PTH_NAME = "equilens-links.pth"


def site_packages(venv: Path) -> Path:
    """The virtual environment's purelib folder (``lib/pythonX.Y/site-packages`` on POSIX)."""
    rel = Path(sysconfig.get_path("purelib", vars={"base": "", "platbase": ""}).lstrip("/\\"))
    return venv / rel


def build(venv: Path) -> Path:
    """(Re)build the link tree under ``venv`` and register it; returns the tree's root."""
    root = venv / "equilens-links"
    package = root / "equilens"
    if package.exists() or package.is_symlink():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for entry in sorted(ROOT_PACKAGE.iterdir()):
        if entry.name == "__pycache__" or entry.name in SUBPACKAGES:
            continue
        (package / entry.name).symlink_to(entry)
    for name in SUBPACKAGES:
        (package / name).symlink_to(REPO / name, target_is_directory=True)
    pth = site_packages(venv) / PTH_NAME
    pth.write_text(f"{root.resolve()}\n", encoding="utf-8")
    return root


if __name__ == "__main__":
    venv = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / ".venv").resolve()
    if not (venv / "bin").is_dir() and not (venv / "Scripts").is_dir():
        sys.exit(f"error: {venv} is not a virtual environment (expected its bin/ folder)")
    print(f"linked equilens for static tools: {build(venv)}")
