"""The packages of the one import name ``equilens``, found under each folder ``pyproject.toml``'s
``[tool.setuptools.package-dir]`` maps (``equilens.tasks`` is ``tasks/``, ...): every folder is a
package, with an ``__init__.py`` or without (a folder of data such as the report's templates, whose
files ``[tool.setuptools.package-data]`` ships), so a new one ships without editing a list. Left out:
``__pycache__`` and ``data/runs``, where runs write their reports (``storage.reports_dir``'s default).
Everything else about the build is declared in ``pyproject.toml``."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent
CACHES = ["__pycache__", "*.__pycache__"]
NOT_SHIPPED = {"data": ["runs", "runs.*"]}  # under a mapped folder: the reports runs write
PACKAGE_DIR: dict[str, str] = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
    "package-dir"]


def packages() -> list[str]:
    """Each mapped package and the packages found under its folder, less the folders mapped on their own."""
    mapped = {Path(folder) for folder in PACKAGE_DIR.values()}
    found = []
    for name, folder in PACKAGE_DIR.items():
        found.append(name)
        found += [f"{name}.{sub}" for sub in find_namespace_packages(
                      str(HERE / folder), exclude=[*CACHES, *NOT_SHIPPED.get(folder, [])])
                  if not any(Path(folder, *sub.split(".")[:depth]) in mapped
                             for depth in range(1, sub.count(".") + 2))]
    return sorted(set(found))


setup(packages=packages())
