"""A DuckDB file with a damaged block: the CLI says so in one paragraph and a run never writes into it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pandas as pd

from equilens.tasks.storage.store import Store
from tests.test_cli_output import equilens

HEADER, BLOCK = 3 * 4096, 262144  # DuckDB's file layout: three 4 KiB headers, then 256 KiB blocks


def _damaged_db(tmp_path: Path) -> Path:
    """A stored run whose responses fill one block, and that block's bytes overwritten."""
    db = tmp_path / "e.duckdb"
    store = Store(db)
    store.start_run("20261124-010101-aaaaaa", name="n", flow="counterfactual_assessment",
                    started_at=pd.Timestamp("2026-11-24"), config={}, config_hash="h", provider="openai", model="m")
    store.append("responses", pd.DataFrame({"run_id": "20261124-010101-aaaaaa", "variant_id": [f"v{i}" for i in range(5000)],
                                            "text": [f"answer number {i} " * 5 for i in range(5000)], "ok": True}))
    store.finish_run("20261124-010101-aaaaaa", "completed", summary={})
    with duckdb.connect(str(db), read_only=True) as con:
        blocks = {b for (b,) in con.execute("SELECT DISTINCT block_id FROM pragma_storage_info('responses') "
                                            "WHERE block_id >= 0").fetchall()}
    with db.open("r+b") as fh:
        for block in blocks:
            fh.seek(HEADER + block * BLOCK + 1000)
            fh.write(b"\xde\xad\xbe\xef" * 8)
    return db


def test_a_damaged_block_is_one_paragraph_and_a_run_refuses_to_write(tmp_path: Path) -> None:
    db = _damaged_db(tmp_path)
    report = equilens("report", "20261124-010101", "--db", str(db), "--out", str(tmp_path / "r.html"), cwd=tmp_path)
    assert report.returncode != 0 and "Traceback" not in report.stderr, report.stderr  # was _duckdb.Error + traceback
    assert report.stderr.startswith("error: ") and "is damaged" in report.stderr and report.stderr.count("\n") == 1
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: {items: ['Is he a good nurse?']}\n"
                   "llm: {provider: openai, model: fake, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n"
                   f"storage: {{duckdb_path: '{db}', reports_dir: null}}\n")
    run = equilens("run", str(cfg), cwd=tmp_path)
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    assert "is damaged" in run.stderr and "127.0.0.1:9" not in run.stderr  # refused before any call
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # not a byte written
