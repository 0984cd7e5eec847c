"""Why a path a user named cannot be read as a file, in words: missing, a symbolic-link loop, a
link to nothing, a directory, a device or pipe (``/dev/null``, a FIFO), or unreadable; and the text
of a file that must be UTF-8. Every input check (config, prompts, decisions, brought tables) asks
here, so each says the same thing the same way."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from equilens.tasks.errors import EquilensError, InputDataError

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISSOCK, "a socket"))


def file_problem(path: str | Path) -> str | None:
    """``None`` when ``path`` is a readable regular file, else what is wrong ("is a directory", ...)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "is a loop of symbolic links"
        if p.is_symlink():
            return f"is a symbolic link to {os.readlink(p)}, which does not exist"
        if err.errno == errno.ENOENT:
            return "does not exist"
        return f"cannot be opened ({err.strerror})"
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    for test, kind in _KINDS:
        if test(mode):
            return f"is {kind}, not a regular file"
    if not os.access(p, os.R_OK):
        return "cannot be read (permission denied)"
    return None


def read_utf8(path: str | Path, error: type[EquilensError] = InputDataError) -> str:
    """The text of the file at ``path`` (a leading byte-order mark dropped); bytes that are not UTF-8
    raise ``error`` naming the line and the offset where they are."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise error(
            f"{path}, line {line}: bytes that are not UTF-8 at offset {err.start} "
            f"({raw[err.start:err.start + 4]!r}). Save the file as UTF-8 and run again."
        ) from None


def require_file(path: str | Path, what: str, error: type[EquilensError] = InputDataError) -> Path:
    """``path`` if it is a readable regular file; else ``error`` naming ``what`` and the problem."""
    problem = file_problem(path)
    if problem:
        raise error(f"{what}: {path} {problem}.")
    return Path(path)
