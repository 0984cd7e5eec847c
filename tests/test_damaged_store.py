"""A DuckDB file with a damaged block: the CLI says so in one paragraph and a run never writes into it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pandas as pd
from equilens.tasks.storage.store import Store

from tests.fakes.cli import equilens

HEADER, BLOCK = 3 * 4096, 262144  # DuckDB's file layout: three 4 KiB headers, then 256 KiB blocks



def _overwrite(db: Path, blocks: set[int]) -> Path:
    """Bytes past the start of each of ``blocks`` overwritten, as a failing disk would leave them."""
    with db.open("r+b") as fh:
        for block in blocks:
            fh.seek(HEADER + block * BLOCK + 1000)
            fh.write(b"\xde\xad\xbe\xef" * 8)
    return db

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
    return _overwrite(db, blocks)


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


RUN = "20261124-010101-aaaaaa"


def _damaged_answers(tmp_path: Path) -> Path:
    """A stored run whose metric rows read fine and whose answers (other blocks) are damaged."""
    db = tmp_path / "e.duckdb"
    store = Store(db)
    store.start_run(RUN, name="n", flow="counterfactual_assessment", started_at=pd.Timestamp("2026-11-24"), config={},
                    config_hash="h", provider="openai", model="m")
    store.append("metrics", pd.DataFrame([{
        "run_id": RUN, "family": "counterfactual", "attribute": "gender", "group_a": "male", "group_b": "female",
        "metric": "sentiment_gap", "value": 0.1, "ci_low": 0.0, "ci_high": 0.2, "n": 10, "direction": "lower",
        "aggregation": "mean", "details": {}}]))
    store.append("responses", pd.DataFrame({
        "run_id": RUN, "variant_id": [f"v{i}" for i in range(5000)], "prompt_id": [f"p{i // 2}" for i in range(5000)],
        "attribute": "gender", "grp": ["male", "female"] * 2500, "role": "variant", "sample_idx": 0,
        "text": [f"answer number {i} " * 5 for i in range(5000)], "ok": True}))
    store.finish_run(RUN, "completed", summary={})
    with duckdb.connect(str(db), read_only=True) as con:
        def blocks(table: str) -> set[int]:
            return {b for (b,) in con.execute(f"SELECT DISTINCT block_id FROM pragma_storage_info('{table}') "
                                              "WHERE block_id >= 0").fetchall()}

        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        answers_only = blocks("responses") - set().union(*(blocks(t) for t in tables if t != "responses"))
    assert answers_only
    return _overwrite(db, answers_only)


def test_show_examples_from_damaged_answers_is_one_paragraph_exit_2(tmp_path: Path) -> None:
    db = _damaged_answers(tmp_path)
    plain = equilens("show", "20261124-010101", "--db", str(db), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr  # the metric rows are intact
    shown = equilens("show", "20261124-010101", "--db", str(db), "--examples", "2", cwd=tmp_path)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr, shown.stderr  # was StorageError + traceback
    assert shown.stderr.startswith("error: ") and shown.stderr.count("\n") == 1, shown.stderr
    assert f"{db} is damaged" in shown.stderr.replace("\n", "")
    assert shown.stdout == ""  # read before anything is printed: no table followed by an error
    for args in (("compare", RUN, RUN), ("runs",)):  # these read no answer: unaffected
        other = equilens(*args, "--db", str(db), cwd=tmp_path)
        assert other.returncode == 0 and "Traceback" not in other.stderr, other.stderr
