"""A real Prefect server (the test worker's own, shared with the other tests): deploy from
deployments/prefect.yaml, trigger through the API, and check the run completes through a process
worker and writes to DuckDB."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture()
def prefect_cli_env(tmp_path: Path, prefect_api_env: dict[str, str]) -> dict[str, str]:
    """The environment of the Prefect CLI, its worker and the flow runs it starts: the test worker's
    Prefect server, a Prefect home of the test's own."""
    return dict(os.environ, PREFECT_HOME=str(tmp_path / "home"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
                EQUILENS_HOME=str(ROOT), PREFECT_LOGGING_LEVEL="WARNING", **prefect_api_env)


def _cli(env: dict, *args: str, timeout: int = 120) -> str:
    out = subprocess.run([str(BIN / "prefect"), *args], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _create_run(client: httpx.Client, deployment_id: str, body: dict) -> dict:
    for _ in range(10):  # the server's SQLite can answer 5xx while the deploy (or, on busy cores, a test beside it) writes
        created = client.post(f"/deployments/{deployment_id}/create_flow_run", json=body)
        if created.status_code < 500:
            break
        time.sleep(3)
    assert created.status_code == 201, created.text
    return created.json()


def _final_state(client: httpx.Client, flow_run_id: str, wait: float = 300) -> str:
    deadline = time.monotonic() + wait
    while True:
        state = client.get(f"/flow_runs/{flow_run_id}").json()["state"]["type"]
        if state in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
            return state
        assert time.monotonic() < deadline, f"flow run still {state}"
        time.sleep(1)


def test_deploy_schedule_trigger_and_complete(prefect_cli_env: dict, tmp_path: Path) -> None:
    env = prefect_cli_env
    api = env["PREFECT_API_URL"]
    responses = tmp_path / "responses.csv"
    responses.write_text("prompt,response\nq1,He is a confident leader.\nq1,She is an emotional nurse.\n"
                         "q2,She is a confident engineer.\nq2,He is a kind teacher.\n")
    # The shipped file, with a fast brought-responses config swapped in for the scheduled local-model one.
    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    (nightly,) = spec["deployments"]
    nightly["entrypoint"] = "flows/stereotype.py:stereotype_assessment"
    nightly["parameters"]["config"] = {
        "name": "deployed", "assessment": "stereotype", "stereotype": {"responses_path": str(responses)},
        "metrics": {"bootstrap_resamples": 20},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    }
    prefect_file = tmp_path / "prefect.yaml"
    prefect_file.write_text(yaml.safe_dump(spec))
    _cli(env, "work-pool", "create", "equilens-process", "--type", "process")
    _cli(env, "--no-prompt", "deploy", "--prefect-file", str(prefect_file), "--all")

    with httpx.Client(base_url=api, timeout=30) as client:
        named = {"deployments": {"name": {"any_": [nightly["name"]]}}}  # the server holds other tests' runs
        (dep,) = client.post("/deployments/filter", json=named).json()
        # the UI renders the RunConfig parameter as a form from this schema
        assert "config" in dep["parameter_openapi_schema"]["properties"]
        assert dep["schedules"] and dep["schedules"][0]["schedule"]["cron"] == "0 2 * * *"
        defs = json.dumps(dep["parameter_openapi_schema"].get("definitions", {}))
        assert "stereotype" in defs and "llm" in defs

        run = _create_run(client, dep["id"], {})
        # the run form / an API trigger switching the provider to code of its choosing is refused
        hostile = {**nightly["parameters"]["config"], "name": "hijacked",
                   "llm": {"provider": "python", "target": "os:system"}}
        hijacked = _create_run(client, dep["id"], {"parameters": {"config": hostile}})
        worker = subprocess.Popen([str(BIN / "prefect"), "worker", "start", "--pool", "equilens-process"],
                                  env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            state, refused = [_final_state(client, r["id"]) for r in (run, hijacked)]
        finally:
            _kill(worker)
        assert refused == "FAILED"
        assert state == "COMPLETED"
        of_run = {"artifacts": {"flow_run_id": {"any_": [run["id"]]}}}
        artifacts = client.post("/artifacts/filter", json=of_run).json()
        assert {a["key"] for a in artifacts} >= {"metrics", "report"}

    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        [(status, summary)] = con.execute("SELECT status, summary FROM runs WHERE name = 'hijacked'").fetchall()
        assert status == "failed" and "llm.provider, llm.target" in summary and "before any call" in summary
        (run_id,) = con.execute("SELECT run_id FROM runs WHERE status = 'completed' AND name = 'deployed'").fetchone()
        assert con.execute("SELECT count(*) FROM metrics WHERE run_id = ? AND value IS NOT NULL",
                           [run_id]).fetchone()[0] > 0
