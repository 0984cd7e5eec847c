"""Test-session settings: offline models, a quiet Prefect, results in a temp dir."""

from __future__ import annotations

import os
import tempfile

import pytest

from equilens.tasks.environment import apply_offline_defaults

apply_offline_defaults()
_tmp_home = tempfile.mkdtemp(prefix="equilens-test-prefect-")
os.environ.setdefault("PREFECT_HOME", _tmp_home)
os.environ.setdefault("PREFECT_RESULTS_LOCAL_STORAGE_PATH", os.path.join(_tmp_home, "results"))


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect test server per test process (a worker of ``-n 2``), started by the first test that
    asks for it: each start costs 20-30 s, so every module shares it."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield

