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

from equilens.tasks.shipped import REPO_ROOT


def files_hash(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        if p.is_file():
            h.update(str(p.name).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def texts_digest(texts: list[str]) -> str:
    """Content hash of a list of strings (order matters), for cache keys of stages fed large lists.

    Prefect's ``INPUTS`` policy would pickle the whole list to hash it; this streams the strings
    through one hash instead, so a 600k-answer run does not copy its answers to compute a key.
    """
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return f"{len(texts)}:{h.hexdigest()[:24]}"


def frame_digest(frame) -> str:  # noqa: ANN001 - pd.DataFrame (pandas imported lazily)
    """Content hash of a DataFrame's columns and values (not its index), for the same purpose:
    8 bytes per row of temporary memory instead of a pickled copy of the frame."""
    import pandas as pd

    h = hashlib.sha256(repr([(c, str(t)) for c, t in frame.dtypes.items()]).encode())
    if len(frame):
        h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return f"{len(frame)}:{h.hexdigest()[:24]}"


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


def lexicon_fingerprint(lexicon_dir: str | None) -> str:
    """Content hash of the lexicon files the stages read: ``counterfactual.lexicon_dir`` when set,
    else the package's own ``data/lexicons`` (resolved from the code, never from the working
    directory, so a run started elsewhere still sees an edited lexicon). Also covers the default
    COBS targets and stop words, which live in the same folder."""
    from equilens.tasks.inputs.lexicon import LEXICON_DIR

    folder = Path(lexicon_dir) if lexicon_dir else LEXICON_DIR
    if not folder.is_dir():
        return path_fingerprint(str(folder))
    # the data the stages read; notes and build scripts beside it (SOURCES.md, build_*.py) are not
    return files_hash([q for q in folder.rglob("*") if q.is_file() and q.suffix in _LEXICON_SUFFIXES])


_LEXICON_SUFFIXES = frozenset({".yaml", ".yml", ".csv", ".txt", ".json"})


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("equilens", "torch", "transformers", "sentence-transformers", "prefect", "duckdb",
                 "langchain-openai", "great-expectations", "vadersentiment"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out
