"""Test-session settings: offline models, a quiet Prefect, results in a temp dir."""

from __future__ import annotations

import os
import tempfile

import pytest
from equilens.tasks.environment import apply_offline_defaults

apply_offline_defaults()
# A Prefect home per test process, never inherited: the workers of ``-n 2`` inherit the controller's
# environment, and two workers' ephemeral servers on one SQLite database race to register block schemas.
_tmp_home = tempfile.mkdtemp(prefix=f"equilens-test-prefect-{os.getpid()}-")
os.environ["PREFECT_HOME"] = _tmp_home
os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = os.path.join(_tmp_home, "results")


_SERVER = pytest.StashKey["object"]()


def pytest_configure(config: pytest.Config) -> None:
    """The controller of ``-n N`` starts one Prefect test server for all its workers, before they start
    (each server costs 10-15 s of CPU to start and some every minute it runs); without workers, the
    test process starts its own when a test first asks (:func:`prefect_harness`)."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    from tests.prefect_server import SHARED_PREFECT_API, TestServer

    server = TestServer.start(_tmp_home)
    os.environ[SHARED_PREFECT_API] = server.api_url
    config.stash[_SERVER] = server


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_SERVER, None)
    if server is not None:
        server.stop()


@pytest.fixture(scope="session")
def prefect_harness():
    """The Prefect test server of this test session, for the first test that asks: the one the
    controller of ``-n N`` started for every worker, or one of this process's own (20-30 s to start)."""
    from tests.prefect_server import SHARED_PREFECT_API, reporting_to

    shared = os.environ.get(SHARED_PREFECT_API)
    if not shared:
        from prefect.testing.utilities import prefect_test_harness

        with prefect_test_harness(server_startup_timeout=120):
            yield
        return
    with reporting_to(shared, timeout=120):
        yield


@pytest.fixture(scope="session")
def prefect_api_env(prefect_harness) -> dict[str, str]:
    """The environment for a CLI process that reports to this test process's Prefect server rather than
    starting an ephemeral one of its own (its import and start cost 7-15 s per process). The tests of
    the ephemeral server itself (it starts, it dies with its run) do without."""
    from prefect.settings import PREFECT_API_URL

    return {"PREFECT_API_URL": str(PREFECT_API_URL.value())}


# ---- tiny models built on the spot, shared by the modules that test with them ------------------------
# Module-scoped: each module that asks builds its own copy once (a few hundred ms each).


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random causal LM (GPT-2) over ``LM_WORDS``: the path of its directory."""
    from tests.fakes.tiny_models import LM_WORDS, tiny_causal_lm

    return tiny_causal_lm(tmp_path_factory.mktemp("gpt2"), LM_WORDS)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random masked LM (BERT) over ``LM_WORDS``: the path of its directory. (The classifier
    BERT is ``tiny_bert_classifier``.)"""
    from tests.fakes.tiny_models import LM_WORDS, tiny_masked_lm

    return tiny_masked_lm(tmp_path_factory.mktemp("bert"), LM_WORDS)


@pytest.fixture(scope="session")
def gender():  # a Lexicon
    """The shipped gender lexicon (read-only: every test may share one)."""
    from equilens.tasks.inputs.lexicon import load_lexicon

    return load_lexicon("gender")


@pytest.fixture(scope="session")
def names():  # a NameTable
    """The shipped name table (read-only: every test may share one)."""
    from equilens.tasks.inputs.names import load_names

    return load_names()
