"""A killed run resumes without repeating finished calls; concurrent runs share one DuckDB file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = [f"Write one sentence about a {w} who works as a {job}." for w in ("man", "woman")
           for job in ("nurse", "pilot", "teacher", "chef", "lawyer", "farmer")]


def _write_config(tmp_path: Path, base_url: str, name: str = "c.yaml", db: str = "e.duckdb") -> Path:
    cfg = tmp_path / name
    items = "\n".join(f"    - {p!r}" for p in PROMPTS)
    cfg.write_text(
        f"name: resilience\nprompts:\n  items:\n{items}\n"
        "counterfactual: {attributes: [gender], detect_names: false}\n"
        f"llm: {{provider: openai, model: fake, base_url: '{base_url}', count: 2, max_concurrency: 2, "
        "max_retries: 1, backoff_base: 0.01, timeout: 10}\n"
        "metrics: {bootstrap_resamples: 20, permutations: 20}\n"
        f"storage: {{duckdb_path: '{tmp_path / db}', reports_dir: null, lock_timeout: 300}}\n"
    )
    return cfg


def _env(tmp_path: Path, tag: str) -> dict[str, str]:
    env = dict(os.environ)  # each process its own ephemeral Prefect (its own SQLite)
    env["PREFECT_HOME"] = str(tmp_path / f"prefect-home-{tag}")
    env["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(tmp_path / f"prefect-results-{tag}")
    return env


def _run(cfg: Path, tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "flows", "run", str(cfg)], cwd=tmp_path, env=_env(tmp_path, cfg.stem),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_sigkilled_run_resumes_without_paying_twice(openai_server, tmp_path: Path) -> None:  # noqa: F811
    openai_server.latency = 0.3
    cfg = _write_config(tmp_path, openai_server.base_url)
    proc = _run(cfg, tmp_path)
    deadline = time.monotonic() + 180
    while len(openai_server.requests) < 8:  # let some calls finish and reach the cache
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "the run made no calls"
        time.sleep(0.1)
    time.sleep(1.0)  # > the cache writer's flush interval
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        cached_before = con.execute("SELECT count(*) FROM response_cache").fetchone()[0]
    first_calls = len(openai_server.requests)
    assert 0 < cached_before <= first_calls

    openai_server.latency = 0.0
    second = _run(cfg, tmp_path)
    out, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        expected = con.execute("SELECT count(DISTINCT cache_key) FROM responses WHERE run_id = "
                               "(SELECT run_id FROM runs WHERE status = 'completed')").fetchone()[0]
        dupes = con.execute("SELECT count(*) - count(DISTINCT cache_key) FROM response_cache").fetchone()[0]
        rows = con.execute("SELECT count(*), count(DISTINCT (variant_id, sample_idx)) FROM responses WHERE run_id = "
                           "(SELECT run_id FROM runs WHERE status = 'completed')").fetchone()
    # every call that was cached before the kill is not made again
    assert len(openai_server.requests) - first_calls == expected - cached_before
    assert dupes == 0 and rows[0] == rows[1]


def test_two_runs_at_once_on_one_duckdb_file_both_complete(openai_server, tmp_path: Path) -> None:  # noqa: F811
    openai_server.latency = 0.02
    a = _run(_write_config(tmp_path, openai_server.base_url, "a.yaml"), tmp_path)
    b = _run(_write_config(tmp_path, openai_server.base_url, "b.yaml"), tmp_path)
    out_a, _ = a.communicate(timeout=400)
    out_b, _ = b.communicate(timeout=400)
    assert a.returncode == 0, out_a
    assert b.returncode == 0, out_b
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        runs = con.execute("SELECT run_id FROM runs WHERE status = 'completed'").fetchall()
        assert len(runs) == 2
        for (run_id,) in runs:
            n = con.execute("SELECT count(*) FROM responses WHERE run_id = ?", [run_id]).fetchone()[0]
            assert n == con.execute("SELECT count(*) * 2 FROM variants WHERE run_id = ? AND valid", [run_id]).fetchone()[0]
            assert con.execute("SELECT count(*) FROM metrics WHERE run_id = ?", [run_id]).fetchone()[0] > 0

