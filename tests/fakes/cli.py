"""The equilens command line as the tests run it.

By default in this process: ``equilens.flows.cli.main(args)`` with its standard output and error
captured, in the working directory and with the environment the test gives, both put back after.
A command-line process costs about 1.3 s of imports before its first line; in this process the
imports are paid once per test worker. ``process=True`` runs ``python -m equilens`` instead, for a
test about the process itself: a run that starts Prefect and loads models, signals, what reaches
the terminal of a process that ends.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Ran:
    """What a command did: its exit code and everything it wrote (as ``subprocess.CompletedProcess``)."""

    returncode: int
    stdout: str
    stderr: str


def equilens(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, columns: int | None = 80,
             api: dict[str, str] | None = None, process: bool = False, timeout: float = 240) -> Ran:
    """``equilens *args`` run from ``cwd``, with ``env`` added to the environment and a terminal of
    ``columns`` (None: the environment's). ``api`` (the ``prefect_api_env`` fixture) makes a
    process report to the test process's Prefect server; ``timeout`` bounds a process."""
    extra = {**(env or {}), **({"COLUMNS": str(columns)} if columns else {}), **(api or {})}
    if process:
        out = subprocess.run([sys.executable, "-m", "equilens", *args], cwd=cwd, capture_output=True,
                             text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **extra})
        return Ran(out.returncode, out.stdout, out.stderr)
    from equilens.flows.cli import main

    saved, here = dict(os.environ), os.getcwd()
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        os.environ.update(extra)
        os.chdir(cwd)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(list(args))
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)
    return Ran(code, stdout.getvalue(), stderr.getvalue())
