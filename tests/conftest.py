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


LONGEST_FIRST = ("test_interrupt", "test_wheel", "test_dask_cluster", "test_run_records", "test_decisions",
                 "test_deployment", "test_stopping", "test_detectable_gap", "test_mixed_effects", "test_cli_outage")
"""Modules whose tests run for tens of seconds each (whole runs in subprocesses, clusters, simulations):
collected first, so two workers start on them together and the many short tests fill the end."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__.rsplit(".", 1)[-1], len(rank))
               if item.module is not None else len(rank))
