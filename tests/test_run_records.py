"""What a run leaves behind when things go wrong.

* a failed run stores its error message, scrubbed of secrets, and ``equilens show`` prints it;
* Prefect's ephemeral server that does not start is retried once, then explained in one paragraph;
* the trend across runs compares runs of the same name *and* model;
* a full disk is one paragraph naming the file and its free space, exit 2, the run recorded
  ``failed`` (even when the disk refuses its final row; when it refuses the run's first row too,
  the paragraph says that nothing was recorded), and nothing stored before is lost.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from equilens.flows.cli import main
from equilens.tasks.config import parse_config
from equilens.tasks.llm.base import scrub_secrets
from equilens.tasks.orchestration.memory import release_freed_memory
from equilens.tasks.orchestration.run_record import RunRecorder, recorded_run
from equilens.tasks.reporting.html import build_html_report
from equilens.tasks.storage.store import Store

from tests.fakes.cli import equilens
from tests.fakes.full_disk import full_disk

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-proj-Zx81kQ0secretvalue77"


# ---- defect 8: summary.error carries the message, scrubbed ----------------------------------------

def _config(tmp_path: Path):
    return parse_config({"name": "errors", "prompts": {"items": ["Is he a good nurse?"]},
                         "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": None}})


def test_failed_run_stores_the_scrubbed_message_and_show_prints_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cfg = _config(tmp_path)
    store = Store(cfg.storage.duckdb_path)
    recorder = RunRecorder(store, "run-broken", "counterfactual_assessment", cfg)
    with pytest.raises(ValueError), recorded_run(recorder):
        raise ValueError(f"zero-size array to reduction operation maximum which has no identity; "
                         f"request to http://bob:hunter2pass@10.0.0.5/v1 with key {KEY}")
    row = store.query("SELECT status, summary FROM runs WHERE run_id = 'run-broken'").iloc[0]
    error = json.loads(row["summary"])["error"]
    assert row["status"] == "failed"
    assert error.startswith("ValueError: zero-size array to reduction operation maximum")
    assert KEY not in error and "hunter2pass" not in error and "***" in error

    assert main(["show", "run-broken", "--db", cfg.storage.duckdb_path]) != 0  # no metrics to show
    out = capsys.readouterr()
    printed = out.out + out.err
    assert "run-broken failed: ValueError: zero-size array" in printed and KEY not in printed


def test_scrub_secrets_removes_keys_tokens_and_url_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-123456789")
    text = ("key sk-abcdefghijklmnop, Authorization: Bearer eyJhbGciOi.J9.x, url https://u:pw-9x@h.example/v1, "
            "query ?api-key=abcd1234&x=1, token tok-123456789, plain words stay")
    out = scrub_secrets(text)
    for secret in ("sk-abcdefghijklmnop", "eyJhbGciOi", "pw-9x", "abcd1234", "tok-123456789"):
        assert secret not in out
    assert "plain words stay" in out and "https://***@h.example/v1" in out
    assert len(scrub_secrets("x" * 5000)) == 2000


# ---- defect 6: Prefect's ephemeral server start-up ------------------------------------------------

def test_prefect_startup_timeout_is_one_paragraph_after_a_retry(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: startup\nprompts: {items: ['Is he a good nurse?']}\n"
                   "llm: {provider: openai, model: fake, base_url: 'http://127.0.0.1:9/v1'}\n"
                   f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(tmp_path / "prefect-home"), PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="0",
               PYTHONPATH=str(ROOT))  # this checkout's code, whatever the venv has installed
    out = subprocess.run([sys.executable, "-m", "equilens", "run", str(cfg)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout
    message = out.stderr.strip()
    assert message.startswith("error: Prefect's temporary API server did not start in time")
    assert "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS" in message and "PREFECT_API_URL" in message
    assert "prefect server start" in message and "\n\n" not in message


def test_prefect_startup_is_retried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks.orchestration.prefect_api import start_prefect_api
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    attempts: list[str] = []
    stopped: list[int] = []

    def start(self, timeout=None):  # Prefect's signature
        attempts.append("start")
        if len(attempts) == 1:
            raise RuntimeError("Timed out while attempting to connect to ephemeral Prefect API server.")
        self.running = True  # the second start succeeds

    def stop(self):
        stopped.append(len(attempts))
        SubprocessASGIServer._instances.pop(getattr(self, "_instance_key", None), None)

    monkeypatch.setattr(SubprocessASGIServer, "start", start)
    monkeypatch.setattr(SubprocessASGIServer, "stop", stop)
    saved = dict(SubprocessASGIServer._instances)
    SubprocessASGIServer._instances.clear()
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            start_prefect_api()
    finally:
        SubprocessASGIServer._instances.clear()
        SubprocessASGIServer._instances.update(saved)
    assert attempts == ["start", "start"]
    assert stopped == [1]  # the timed-out start was stopped before the retry


# ---- defect 7: the trend groups runs by name and model ---------------------------------------------

def _seed(store: Store, run_id: str, started: str, provider: str, model: str, cosine: float) -> None:
    store.start_run(run_id, name="demo", flow="counterfactual_assessment", started_at=pd.Timestamp(started),
                    config={}, config_hash="h", provider=provider, model=model)
    store.append("metrics", pd.DataFrame([{
        "run_id": run_id, "family": "counterfactual", "attribute": "gender", "metric": "cosine_similarity",
        "group_a": "male", "group_b": "female", "value": cosine, "ci_low": cosine - 0.05,
        "ci_high": cosine + 0.05, "n": 4, "direction": "higher", "aggregation": "mean"}]))
    store.finish_run(run_id, "completed", summary={})


def test_trend_keeps_runs_of_other_models_apart(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    _seed(store, "run-local-1", "2026-11-20 02:00", "local", "SmolLM2-135M-Instruct", 0.80)
    _seed(store, "run-endpoint", "2026-11-21 02:00", "openai", "smollm2-gguf", 0.20)
    _seed(store, "run-local-2", "2026-11-22 02:00", "local", "SmolLM2-135M-Instruct", 0.70)
    html = build_html_report(store, "run-local-2")
    trend = re.search(r"<section id=trend>.*?</section>", html, re.S).group(0)
    assert "run-local-1"[-13:] in trend and "run-local-2"[-13:] in trend
    assert "run-endpoint" not in trend and trend.count("<circle") == 2  # two points, not three
    assert "SmolLM2-135M-Instruct" in trend
    endpoint_html = build_html_report(store, "run-endpoint")  # one run of that model: nothing to trend
    assert "<section id=trend>" not in endpoint_html


def test_metric_rows_are_stored_before_their_gate_stops_the_run(tmp_path: Path) -> None:
    import equilens.tasks.metrics  # noqa: F401 - registers every family
    from equilens.tasks.errors import ValidationFailed
    from equilens.tasks.metrics.base import metric_row

    cfg = _config(tmp_path)
    store = Store(cfg.storage.duckdb_path)
    recorder = RunRecorder(store, "run-gated", "counterfactual_assessment", cfg)
    rows = pd.DataFrame([metric_row("strict_sentiment_parity", 0.1, (0.0, 0.2), 4, attribute="gender"),
                         metric_row("weak_sentiment_parity", None, attribute="gender")])  # no skip reason
    with pytest.raises(ValidationFailed, match="no value and no details.skipped reason"), recorded_run(recorder):
        recorder.save_metrics(rows, validate=True)
    assert store.query("SELECT count(*) AS n FROM metrics WHERE run_id = 'run-gated'").iloc[0]["n"] == 2
    failed = store.query("SELECT count(*) AS n FROM validations WHERE run_id = 'run-gated' AND NOT success")
    assert failed.iloc[0]["n"] == 1
    assert store.query("SELECT status FROM runs WHERE run_id = 'run-gated'").iloc[0]["status"] != "completed"


def test_a_run_without_metric_rows_passes_the_metrics_gate(tmp_path: Path) -> None:
    """An auto run whose families measured nothing stores an empty, column-less frame; the gate
    must not fail it for the missing columns."""
    cfg = _config(tmp_path)
    store = Store(cfg.storage.duckdb_path)
    recorder = RunRecorder(store, "run-empty", "auto_assessment", cfg)
    recorder.save_metrics(pd.DataFrame(), validate=True)
    assert store.query("SELECT count(*) AS n FROM validations WHERE run_id = 'run-empty' AND NOT success"
                       ).iloc[0]["n"] == 0


def test_a_finished_stage_hands_its_freed_memory_back(tmp_path: Path) -> None:
    """What a stage allocated and dropped leaves the process's resident size (glibc would keep it, so
    every later stage's peak would stack on top of the earlier ones)."""
    import psutil

    cfg = parse_config({"name": "m", "prompts": {"items": ["x"]}, "storage": {"duckdb_path": str(tmp_path / "m.duckdb")}})
    recorder = RunRecorder(Store(cfg.storage.duckdb_path), "run-memory", "counterfactual_assessment", cfg)
    process = psutil.Process()
    before = process.memory_info().rss
    with recorder.stage("llm"):
        answers = [b"x" * 1000 + i.to_bytes(4, "little") for i in range(300_000)]  # ~300 MB, malloc'd
        kept = [b"y" * 600 for _ in range(300)]  # a few live blocks among them
        del answers
    assert process.memory_info().rss - before < 60 * 2**20, "the stage's 300 MB stayed resident"
    assert len(kept) == 300 and "llm" in recorder.timings


def test_a_stage_that_freed_little_skips_the_full_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full garbage collection walks every live object (half a second in a process holding torch and
    Prefect): a stage that left the resident size where it began has nothing worth handing back."""
    import gc

    collections: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: (collections.append(1), collect(*a))[1])
    cfg = parse_config({"name": "m", "prompts": {"items": ["x"]}, "storage": {"duckdb_path": str(tmp_path / "m.duckdb")}})
    recorder = RunRecorder(Store(cfg.storage.duckdb_path), "run-light", "counterfactual_assessment", cfg)
    with recorder.stage("ftu"):
        words = [f"w{i}" for i in range(1000)]
    assert collections == [] and len(words) == 1000
    # what earlier tests of this worker freed goes back first, so the stage below grows the resident size
    # (pages the heap kept would otherwise hold its 150 MB without growing it)
    release_freed_memory()
    collections.clear()
    with recorder.stage("llm"):
        # ~150 MB, malloc'd, still live as the stage ends: however the heap lies, the stage grew the
        # resident size by that much (freed inside the stage, glibc may hand the top of it back at once)
        answers = [b"x" * 1000 + i.to_bytes(4, "little") for i in range(150_000)]
    assert collections == [1] and len(answers) == 150_000


# ---- a full disk: one paragraph, exit 2, the run recorded failed, nothing stored before lost ---------
def test_a_full_disk_is_one_paragraph_and_the_run_is_recorded_failed(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks.errors import DiskFullError
    from equilens.tasks.storage.store import RESERVE_BYTES

    cfg = _config(tmp_path)
    store = Store(cfg.storage.duckdb_path)
    recorder = RunRecorder(store, "run-full", "counterfactual_assessment", cfg)
    reserve = tmp_path / ".e.duckdb.run-full.reserve"  # room kept for the final status
    assert reserve.stat().st_size == RESERVE_BYTES
    refused: list[str] = []

    def refuse(sql: str) -> str | None:
        if sql.startswith("INSERT INTO metrics"):
            return "TransactionException"
        if "timings = ?" in sql:  # the run's final row, with its summary: refused too
            refused.append(sql)
            return "IOException"
        return None

    full_disk(monkeypatch, refuse)
    with pytest.raises(DiskFullError) as caught, recorded_run(recorder):
        recorder.save("metrics", pd.DataFrame([{"metric": "m", "value": 1.0}]))
    message = str(caught.value)
    assert message.startswith(f"{store.path} could not be written: the disk that holds it is full (")
    assert " free of " in message and "\n" not in message and "rolled the write back" in message
    assert refused  # the full status write was refused; the small one after it was recorded
    row = store.query("SELECT status, summary FROM runs WHERE run_id = 'run-full'").iloc[0]
    assert row["status"] == "failed" and json.loads(row["summary"])["error"].startswith("DiskFullError: ")
    assert not reserve.exists()

    # a run whose completed summary is refused is recorded failed, with the disk's error, and says so
    done = RunRecorder(store, "run-full-2", "counterfactual_assessment", cfg)
    with pytest.raises(DiskFullError), recorded_run(done) as summary:
        summary["metrics"] = [{"metric": "m", "value": 1.0}]
    row = store.query("SELECT status, summary FROM runs WHERE run_id = 'run-full-2'").iloc[0]
    assert row["status"] == "failed" and "the disk that holds it is full" in json.loads(row["summary"])["error"]

    # no room even for the status: it stays running, and `equilens runs` still lists (it cannot mark)
    full_disk(monkeypatch, lambda sql: "IOException" if sql.startswith("UPDATE") else None)
    last = RunRecorder(store, "run-full-3", "counterfactual_assessment", cfg)
    with pytest.raises(DiskFullError), recorded_run(last):
        raise RuntimeError("a stage failed")
    assert store.query("SELECT status FROM runs WHERE run_id = 'run-full-3'").iloc[0]["status"] == "running"
    assert store.mark_abandoned() == []


PATCHED_CLI = """
import sys
from tests.fakes.full_disk import full_disk

class Patch:
    def setattr(self, owner, name, value):
        setattr(owner, name, value)

first = []

def refuse(sql):
    if sql.startswith("INSERT INTO responses"):
        return "TransactionException"
    if "timings = ?" in sql and not first:
        first.append(sql)
        return "IOException"
    return None

full_disk(Patch(), refuse)
from equilens.flows.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_full_disk_under_equilens_run_is_one_paragraph_exit_2_and_runs_reads_failed(
        tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    """The disk refuses the answers' rows (as DuckDB does: ``TransactionException``) and then the run's
    final row (``IOException``): the command says so in one paragraph naming the file and its free space,
    exits 2, and the run reads ``failed`` (it read ``abandoned``, after two raw tracebacks)."""
    from tests.fakes.openai_server import running_server

    db = tmp_path / "e.duckdb"
    env = {**os.environ, "PYTHONPATH": str(ROOT), **prefect_api_env}
    with running_server() as server:
        cfg = _two_prompt_config(tmp_path, server.base_url, db)
        run = subprocess.run([sys.executable, "-c", PATCHED_CLI, "run", str(cfg)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    said = [line for line in run.stderr.splitlines() if line and not line.startswith("LLM calls: ")]  # progress
    assert len(said) == 1 and " free of " in said[0], run.stderr
    assert said[0].startswith(f"error: {db} could not be written: the disk that holds it is full ("), run.stderr
    listed = equilens("runs", "--db", str(db), "--format", "json", cwd=tmp_path)
    assert [r["status"] for r in json.loads(listed.stdout)] == ["failed"], listed.stderr
    assert Store(db).query("SELECT count(*) AS n FROM response_cache").iloc[0]["n"] == server.calls  # kept


def _two_prompt_config(tmp_path: Path, base_url: str, db: Path) -> Path:
    """A counterfactual config of two gender prompts against ``base_url``, stored in ``db``."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: full\nprompts: {items: ['Is he a good nurse?', 'Should she get the loan?']}\n"
                   "counterfactual: {attributes: [gender], detect_names: false}\n"
                   f"llm: {{provider: openai, model: fake, base_url: '{base_url}', max_retries: 0}}\n"
                   f"storage: {{duckdb_path: '{db}', reports_dir: null}}\n")
    return cfg


@pytest.mark.parametrize("room", ["none", "a small row"])
def test_a_run_started_on_a_full_disk_is_recorded_failed_or_says_that_nothing_was(
        tmp_path: Path, prefect_api_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, room: str) -> None:
    """The disk refuses the run's first row (its config and versions with it): one paragraph, exit 2,
    no call made. Where a smaller row still fits, the run reads ``failed`` with the disk's error;
    where nothing fits, the paragraph says that nothing of the run was recorded."""
    from tests.fakes.openai_server import running_server

    db = tmp_path / "e.duckdb"
    Store(db).init()  # the file and its tables are there; the disk filled up since

    def refuse(sql: str) -> str | None:
        if not sql.startswith(("INSERT", "UPDATE")) or (room != "none" and '"config"' not in sql):
            return None
        return "TransactionException"

    full_disk(monkeypatch, refuse)
    with running_server() as server:
        cfg = _two_prompt_config(tmp_path, server.base_url, db)
        run = equilens("run", str(cfg), cwd=tmp_path, api=prefect_api_env)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert server.calls == 0
    said = [line for line in run.stderr.splitlines() if line]
    assert len(said) == 1, run.stderr
    assert said[0].startswith(f"error: {db} could not be written: the disk that holds it is full ("), said[0]
    monkeypatch.undo()
    rows = Store(db).query("SELECT name, status, summary FROM runs")
    if room == "none":
        assert said[0].endswith(" Nothing of this run was recorded (equilens runs does not list it): it stopped "
                                "before its first LLM call."), said[0]
        assert rows.empty
    else:
        assert said[0].endswith(" The run stopped before its first LLM call and is recorded failed."), said[0]
        assert rows[["name", "status"]].values.tolist() == [["full", "failed"]]
        assert json.loads(rows["summary"].iloc[0])["error"].startswith(f"DiskFullError: {db} could not be written")
        listed = equilens("runs", "--db", str(db), "--format", "json", cwd=tmp_path)
        assert [r["status"] for r in json.loads(listed.stdout)] == ["failed"], listed.stderr


def _tmpfs(path: Path, size: str) -> str | None:
    """Mount a tmpfs of ``size`` at ``path``; None, or why that cannot be done here."""
    import shutil

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    if shutil.which("mount") is None:
        return "no mount command"
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True,
                          text=True)
    return None if done.returncode == 0 else f"mount -t tmpfs failed: {done.stderr.strip()}"


def _noise(body: dict) -> str:
    """A deterministic answer of ~7.7 KB that does not compress (so a few hundred fill a small disk)."""
    import hashlib

    seed = hashlib.sha256(json.dumps(body.get("messages")).encode()).digest()
    out = []
    for _ in range(120):
        seed = hashlib.sha256(seed).digest()
        out.append(seed.hex())
    return " ".join(out)


@pytest.mark.expensive  # a full disk under `equilens run`: the test above
def test_a_run_that_fills_a_real_disk_fails_in_one_paragraph_and_loses_nothing(
        tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    """A 3 MB tmpfs holds the DuckDB file: the run stops with exit 2 and one paragraph, reads ``failed``,
    the file reads whole, and once the disk is larger the same command asks only for what was not cached."""
    from tests.fakes.openai_server import running_server
    from tests.fakes.tiny_models import tiny_embedder

    disk = tmp_path / "disk"
    why = _tmpfs(disk, "3m")
    if why:
        pytest.skip(why)
    db = disk / "e.duckdb"
    embedder = tiny_embedder(tmp_path / "embedder", ["he", "she", "nurse"])
    calls = 20 * 6 * 2  # prompts x (3 gender variants with a control each) x count

    try:
        with running_server(reply=_noise) as server:
            cfg = tmp_path / "c.yaml"
            prompts = json.dumps([f"Is he a good nurse, number {i}?" for i in range(20)])
            cfg.write_text(f"name: full\nprompts: {{items: {prompts}}}\n"
                           "counterfactual: {attributes: [gender], detect_names: false}\n"
                           f"llm: {{provider: openai, model: fake, base_url: '{server.base_url}', count: 2, "
                           "max_concurrency: 8, max_retries: 0}\n"
                           f"scoring: {{embedding_model: '{embedder}'}}\n"
                           "metrics: {bootstrap_resamples: 20, permutations: 20}\nvalidation: {enabled: false}\n"
                           f"storage: {{duckdb_path: '{db}', reports_dir: null}}\n")
            run = equilens("run", str(cfg), cwd=tmp_path, api=prefect_api_env, process=True)
            assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
            said = [line for line in run.stderr.splitlines() if line and not line.startswith("LLM calls: ")]
            assert len(said) == 1, run.stderr
            assert said[0].startswith(f"error: {db} could not be written: the disk that holds it is full (")
            assert " free of 3.0 MiB" in said[0] and "No space left on device" in said[0], said[0]
            listed = equilens("runs", "--db", str(db), "--format", "json", cwd=tmp_path)
            assert [r["status"] for r in json.loads(listed.stdout)] == ["failed"], listed.stderr
            Store(db).verify()  # every block of every table reads back
            cached = int(Store(db).query("SELECT count(*) AS n FROM response_cache").iloc[0]["n"])
            assert 0 < cached <= calls

            subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
            before = server.calls
            rerun = equilens("run", str(cfg), cwd=tmp_path, api=prefect_api_env, process=True)
            assert rerun.returncode == 0, rerun.stdout + rerun.stderr
            assert server.calls - before == calls - cached  # the cached answers were not asked for again
            listed = equilens("runs", "--db", str(db), "--format", "json", cwd=tmp_path)
            assert sorted(r["status"] for r in json.loads(listed.stdout)) == ["completed", "failed"]
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
