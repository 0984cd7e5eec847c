"""Content fingerprints that make Prefect task caches safe across code and data changes.

Prefect's ``TASK_SOURCE`` policy hashes only a task's own body, not the helpers it calls, and
inputs given as paths say nothing about the file's content. Cached tasks therefore take a
fingerprint of the stage code and of the files they read as an explicit input.
"""

from __future__ import annotations

import hashlib
import platform
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from tasks.config import REPO_ROOT


def files_hash(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        if p.is_file():
            h.update(str(p.name).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Hash of every module under ``tasks/`` (the stage logic the cached tasks call)."""
    return files_hash(list((REPO_ROOT / "tasks").rglob("*.py")))


def path_fingerprint(path: str | None) -> str:
    if not path:
        return "-"
    p = Path(path)
    if p.is_dir():
        return files_hash([q for q in p.rglob("*") if q.is_file()])
    return files_hash([p]) if p.is_file() else "missing"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("equilens", "torch", "transformers", "sentence-transformers", "prefect", "duckdb",
                 "langchain-openai", "great-expectations", "vadersentiment"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out
