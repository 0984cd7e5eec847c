"""Files shipped with equilens: lexicons, name tables, bias specifications, the judge's instructions,
the demo prompts and the configs.

In a checkout they are the repository's ``data/`` and ``configs/``; installed from the wheel they are
its package data (``equilens.data``, ``equilens.configs``), found with :mod:`importlib.resources`, so
``pip install .`` gives a tool that runs from any directory. A relative path that a config names
("data/demo_prompts.csv", "configs/demo.yaml") is read from the working directory when it exists
there, else from the shipped files (:func:`shipped_path`): your own files always win.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent  # the checkout, or site-packages/equilens when installed


def _root(package: str, folder: str) -> Path:
    try:
        return Path(str(importlib.resources.files(package)))
    except ModuleNotFoundError:  # a checkout used without installing it
        return REPO_ROOT / folder


DATA_DIR = _root("equilens.data", "data")
CONFIGS_DIR = _root("equilens.configs", "configs")
_ROOTS = {"data": DATA_DIR, "configs": CONFIGS_DIR}


def shipped_path(path: str | Path) -> Path:
    """``path`` itself when it is absolute or exists from the working directory; else, for a path
    under ``data/`` or ``configs/``, the shipped file of that name when there is one."""
    p = Path(path)
    if p.is_absolute() or p.exists() or len(p.parts) < 2 or p.parts[0] not in _ROOTS:
        return p
    candidate = _ROOTS[p.parts[0]].joinpath(*p.parts[1:])
    return candidate if candidate.exists() else p
