"""DuckDB store: append-only runs, response cache, locked and foreign files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from equilens.tasks.errors import StorageError
from equilens.tasks.storage.store import Store


def test_runs_append_and_finish(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    store.start_run("r1", name="a", config={"k": 1})
    store.start_run("r2", name="b", config={"k": 2})
    store.finish_run("r2", "completed", timings={"llm": 1.5})
    runs = store.query("SELECT run_id, status, timings FROM runs ORDER BY run_id")
    assert runs["status"].tolist() == ["running", "completed"]
    assert runs["timings"].tolist()[1] == '{"llm": 1.5}'


def test_cache_put_keeps_first_answer(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    store.cache_put([{"cache_key": "k1", "text": "first"}])
    store.cache_put([{"cache_key": "k1", "text": "second"}, {"cache_key": "k2", "text": "other"}])
    got = store.cache_get(["k1", "k2", "missing"])
    assert {k: v["text"] for k, v in got.items()} == {"k1": "first", "k2": "other"}


def test_not_a_duckdb_file(tmp_path: Path) -> None:
    bad = tmp_path / "notes.duckdb"
    bad.write_text("just text")
    with pytest.raises(StorageError, match="not a valid DuckDB database"):
        Store(bad).init()


def test_waits_for_another_process_lock_then_writes(tmp_path: Path) -> None:
    path = tmp_path / "e.duckdb"
    Store(path).init()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, time, sys
            con = duckdb.connect({str(path)!r}); print('locked', flush=True); time.sleep(1.5); con.close()
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    t0 = time.monotonic()
    Store(path, lock_timeout=30).append("scores", pd.DataFrame([{"run_id": "r", "scorer": "s", "value": 1.0}]))
    waited = time.monotonic() - t0
    holder.wait()
    assert waited > 0.5  # it had to wait for the other process
    assert Store(path).query("SELECT count(*) AS n FROM scores")["n"][0] == 1


def test_lock_timeout_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "e.duckdb"
    Store(path).init()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(path)!r}); print('x', flush=True); time.sleep(3)"],
        stdout=subprocess.PIPE, text=True,
    )
    holder.stdout.readline()
    with pytest.raises(StorageError, match="stayed locked by another process"):
        Store(path, lock_timeout=0.3).init()
    holder.kill()
