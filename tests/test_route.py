"""The route of one identity run stays short: at most 35 files from the command to its rows in DuckDB,
counted by ``tests/tools/route.py`` (what is on the route: its docstring and docs/layout.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.expensive  # the embedded model under a profiler that sees every call: about 3 minutes
def test_an_identity_run_walks_through_at_most_35_files() -> None:
    done = subprocess.run([sys.executable, "tests/tools/route.py"], cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"\(exit 0\): (\d+) files, (\d+) returns", done.stdout)
    assert found, done.stdout[-2000:]
    route = done.stdout[found.end():]
    for step in ("flows/identity.py", "flows/assessment_run.py", "tasks/pipeline/prefect_tasks.py",
                 "tasks/llm/local.py", "tasks/storage/store.py", "tasks/reporting/closing.py"):
        assert step in route, step  # the run went the whole way: command, flow, stages, model, store, result
    assert int(found.group(1)) <= 35, route
