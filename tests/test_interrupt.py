"""The process-level tests, in one module that starts the loopback server once: a run stopped from
outside (SIGINT, SIGTERM, SIGKILL) stops within seconds and resumes without paying twice, and two
runs at once share one DuckDB file.

Each test starts a real CLI process and stops it mid-stage: the process is gone within 10 s (exit
code 130 for SIGINT, 143 for SIGTERM), the run is stored as ``interrupted`` (``abandoned`` once
listed after SIGKILL), none of the processes it had started (the ephemeral Prefect API server)
survives, and a re-run of the same config asks the model only for the answers that were not
cached, counted at the server.

The local-provider case uses a small random GPT-2 built here (no SmolLM2 load): its batches of four
take seconds each, so the signal lands inside ``generate``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, running_server

psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[1]
EXIT_WITHIN_S = 10.0
PROMPTS = ["Is he a good nurse?", "Should she get the loan?", "Was he a kind doctor?", "Is she smart?",
           "Would he make a good teacher?", "Should she be promoted?", "Is he a careful driver?",
           "Can she lead the team?"]
# each prompt: 3 gender variants (male, female, neutral), each with its same-group control
CALLS_PER_PROMPT = 3 * 2


class Lines:
    """Reads a text stream in a thread; ``wait_for(pred)`` until some line matches."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()

    def count(self, needle: str) -> int:
        """Occurrences of ``needle`` (two of them on one line count twice)."""
        with self._cond:
            return sum(line.count(needle) for line in self.lines)

    def wait_for(self, pred, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: any(pred(line) for line in self.lines), timeout)

    def text(self) -> str:
        with self._cond:
            return "\n".join(self.lines)


def _env(api: dict[str, str] | None = None) -> dict[str, str]:
    """The CLI's environment; ``api`` (the ``prefect_api_env`` fixture) points it at the test process's
    Prefect server. A run that is stopped keeps its own ephemeral server, which must die with it; the
    runs after it report to the shared one."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(api or {})}


def _config(tmp_path: Path, llm: str, prompts: list[str], embedder: str, more: str = "") -> Path:
    cfg = tmp_path / "run.yaml"
    items = json.dumps(prompts)
    cfg.write_text(
        f"name: interrupt\nprompts: {{items: {items}}}\n{more}"
        "counterfactual: {attributes: [gender], detect_names: false}\n"
        f"llm: {llm}\n"
        f"scoring: {{embedding_model: '{embedder}'}}\n"
        "metrics: {bootstrap_resamples: 20, permutations: 20}\n"
        "validation: {enabled: false}\n"
        f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    return cfg


def _start_run(cfg: Path, cwd: Path, api: dict[str, str] | None = None,
               group: bool = False) -> tuple[subprocess.Popen, Lines]:
    """The CLI running ``cfg``; ``group``: in a process group of its own, as a terminal starts it."""
    proc = subprocess.Popen([sys.executable, "-m", "equilens", "run", str(cfg)], cwd=cwd, env=_env(api),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=group)
    return proc, Lines(proc.stderr)


def _interrupt(proc: subprocess.Popen, err: Lines) -> tuple[int, float, list]:
    """SIGINT to the run's process alone (its children get nothing): exit code, seconds to exit, children."""
    children = psutil.Process(proc.pid).children(recursive=True)
    assert any("uvicorn" in " ".join(c.cmdline()) for c in children), \
        f"no ephemeral Prefect server among the run's children: nothing to check\n{err.text()}"
    code, seconds = _signal_and_wait(proc, signal.SIGINT, err)
    return code, seconds, children


def _signal_and_wait(proc: subprocess.Popen, sig: int, err: Lines) -> tuple[int, float]:
    """Send ``sig`` to the run's process and wait for it: (exit code, seconds to exit)."""
    sent = time.monotonic()
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the run ignored {signal.Signals(sig).name} for 60 s:\n{err.text()}") from None
    return code, time.monotonic() - sent


def _survivors(children: list) -> list:
    time.sleep(0.2)
    return [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]


def _runs(db: Path) -> list[tuple[str, str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT run_id, status FROM runs ORDER BY started_at").fetchall()


def _cache_rows(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM response_cache").fetchone()[0]


def _calls_of(db: Path, run_id: str) -> tuple[int, int]:
    """(answers from the cache, answers asked for) in a run's stored responses."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FILTER (WHERE cached), count(*) FILTER (WHERE NOT cached) "
                           "FROM responses WHERE run_id = ?", [run_id]).fetchone()


def _check_interrupted(code: int, seconds: float, children: list, err: Lines, db: Path) -> None:
    assert code == 130, err.text()
    assert seconds < EXIT_WITHIN_S, f"exit took {seconds:.1f} s\n{err.text()}"
    assert "did not stop within" not in err.text(), err.text()  # the stage stopped; nothing was forced
    assert "interrupted" in err.text() and "Traceback" not in err.text(), err.text()
    assert "Crash detected" not in err.text(), err.text()  # "error: interrupted" alone says it
    assert _survivors(children) == [], [c.cmdline() for c in _survivors(children)]
    assert [status for _, status in _runs(db)] == ["interrupted"]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    """The loopback OpenAI-compatible server, started once for the module."""
    with running_server() as srv:
        yield srv


@pytest.fixture()
def loopback(server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The module's server with no requests recorded; each test sets its own latency."""
    server.reset()
    server.answers = 0
    yield server
    server.latency = 0.0


def _wait_for_answers(server: FakeOpenAIServer, answers: int, proc: subprocess.Popen, timeout: float = 240) -> bool:
    """Wait until the server has answered ``answers`` calls; False if the run ended or time ran out first."""
    deadline = time.monotonic() + timeout
    while server.answers < answers:
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _loopback_llm(base_url: str) -> str:
    return (f"{{provider: openai, model: fake, base_url: '{base_url}', max_concurrency: 2, max_retries: 0, "
            "timeout: 30}")


def _rerun_asks_only_for_the_rest(cfg: Path, cwd: Path, server: FakeOpenAIServer, calls: int, kept: int,
                                  api: dict[str, str]) -> str:
    """Re-run ``cfg``: it completes, takes the ``kept`` cached answers and asks the server for exactly
    the rest; returns the first run's status."""
    db = cwd / "e.duckdb"
    time.sleep(1.5)  # calls the server was still answering when the client let go have arrived by now
    before, server.latency = server.calls, 0.0
    rerun = subprocess.run([sys.executable, "-m", "equilens", "run", str(cfg)], cwd=cwd, env=_env(api),
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    asked = server.calls - before
    (_, first_status), (second, status) = _runs(db)
    assert status == "completed"
    assert _calls_of(db, second) == (kept, calls - kept)
    assert asked == calls - kept, (asked, kept)  # counted at the server: only the missing calls
    return first_status


@pytest.fixture(scope="module")
def tiny_embedder(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small random BERT that sentence-transformers loads with mean pooling (no MiniLM, no hub)."""
    from tests.fakes.tiny_models import tiny_embedder as build

    words = sorted({w.strip("?").lower() for p in PROMPTS for w in p.split()} | {"echo", ":", "they", "person"})
    return build(tmp_path_factory.mktemp("embedder"), words)


@pytest.fixture(scope="module")
def slow_causal_lm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random GPT-2 with a chat template and no end-of-text token: every answer runs to max_tokens."""
    from tests.fakes.endless_lm import build_endless_lm

    words = {w.strip("?").lower() for p in PROMPTS for w in p.split()}
    return build_endless_lm(tmp_path_factory.mktemp("causal"), words, n_layer=4, n_embd=256, n_head=4,
                            n_positions=1024)


def test_sigint_during_loopback_calls_stops_and_the_rerun_asks_only_for_the_rest(
    tmp_path: Path, tiny_embedder: str, loopback: FakeOpenAIServer, prefect_api_env: dict[str, str]
) -> None:
    loopback.latency = 0.5
    cfg = _config(tmp_path, _loopback_llm(loopback.base_url), PROMPTS, tiny_embedder)
    calls = CALLS_PER_PROMPT * len(PROMPTS)  # 48
    db = tmp_path / "e.duckdb"
    proc, err = _start_run(cfg, tmp_path)
    assert _wait_for_answers(loopback, 6, proc), err.text()
    at_signal = loopback.answers
    code, seconds, children = _interrupt(proc, err)
    _check_interrupted(code, seconds, children, err, db)
    kept = _cache_rows(db)
    # answers the client had read are flushed; at most max_concurrency were still on the wire
    assert at_signal - 2 <= kept < calls, (at_signal, kept)
    _rerun_asks_only_for_the_rest(cfg, tmp_path, loopback, calls, kept, prefect_api_env)


def test_ctrl_c_in_a_terminal_reaches_the_whole_group_and_still_stops_cleanly(
    tmp_path: Path, tiny_embedder: str, loopback: FakeOpenAIServer
) -> None:
    """A terminal's Ctrl-C is SIGINT to every process of the group, Prefect's server too: the run still
    records its stop with that server and exits 130 at once, without "Error logging to API"."""
    loopback.latency = 0.5
    cfg = _config(tmp_path, _loopback_llm(loopback.base_url), PROMPTS, tiny_embedder)
    proc, err = _start_run(cfg, tmp_path, group=True)
    assert _wait_for_answers(loopback, 4, proc), err.text()
    children = psutil.Process(proc.pid).children(recursive=True)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    code = proc.wait(timeout=60)
    _check_interrupted(code, time.monotonic() - sent, children, err, tmp_path / "e.duckdb")
    assert "Error logging to API" not in err.text(), err.text()


@pytest.mark.expensive  # the stop between shards: test_interrupt_units; shards on two workers: test_dask_cluster
def test_sigint_between_llm_shards_on_dask_keeps_the_finished_shards_and_the_rerun_asks_only_for_the_rest(
    tmp_path: Path, tiny_embedder: str, loopback: FakeOpenAIServer, prefect_api_env: dict[str, str]
) -> None:
    """On a local Dask cluster the flow waits for shards and looks for the stop between them: Ctrl-C
    ends the run within seconds with every finished shard stored. (The workers are still answering
    their shards; closing the cluster waits up to 4 s for them, so on a loaded machine the 5 s
    watchdog may finish the job, as for SIGTERM.)"""
    loopback.latency = 0.5
    cfg = _config(tmp_path, _loopback_llm(loopback.base_url), PROMPTS, tiny_embedder,
                  "execution: {task_runner: dask, dask_workers: 2, shard_size: 1}\n")
    calls, db = CALLS_PER_PROMPT * len(PROMPTS), tmp_path / "e.duckdb"
    proc, err = _start_run(cfg, tmp_path)
    # two shards in flight hold at most 2 x 5 answers, so with 12 answered one shard has finished
    assert _wait_for_answers(loopback, 2 * CALLS_PER_PROMPT, proc), err.text()
    time.sleep(1.0)  # its result reaches the flow, which writes it
    code, seconds, children = _interrupt(proc, err)
    assert code == 130 and seconds < EXIT_WITHIN_S, (code, seconds, err.text())
    assert "Traceback" not in err.text() and _survivors(children) == [], err.text()
    assert [status for _, status in _runs(db)] == ["interrupted"]
    kept = _cache_rows(db)
    assert 0 < kept < calls and kept % CALLS_PER_PROMPT == 0, kept  # whole shards, as each returned
    _rerun_asks_only_for_the_rest(cfg, tmp_path, loopback, calls, kept, prefect_api_env)


TGKILL = {"x86_64": 234, "aarch64": 131}  # the tgkill syscall's number (signal one thread of a process)


def _signal_a_worker_thread(pid: int, signum: int) -> int:
    """Send ``signum`` to one thread of process ``pid`` other than its main thread, one that does not
    block the signal, as the kernel may do with a signal sent to the process; the thread id. Where
    that cannot be done (not Linux, no such thread), the process gets the signal."""
    import ctypes
    import platform

    bit = 1 << (signum - 1)
    workers = []
    for thread in psutil.Process(pid).threads():
        try:
            status = Path(f"/proc/{pid}/task/{thread.id}/status").read_text()
        except OSError:
            continue
        blocked = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk")), 16)
        if thread.id != pid and not blocked & bit:
            workers.append(thread.id)
    number = TGKILL.get(platform.machine())
    if not workers or number is None:
        os.kill(pid, signum)
        return pid
    if ctypes.CDLL(None, use_errno=True).syscall(number, pid, workers[-1], signum) != 0:
        raise OSError(ctypes.get_errno(), "tgkill failed")
    return workers[-1]


@pytest.mark.expensive  # SIGTERM at a worker thread: test_interrupt_units; exit 143 of a real process: the judge test
def test_sigterm_stops_the_calls_and_exits_143(tmp_path: Path, tiny_embedder: str,
                                               loopback: FakeOpenAIServer) -> None:
    """Prefect catches SIGTERM itself during a flow run; the calls in the worker thread must stop anyway.

    The signal goes to a worker thread of the run, as the kernel may deliver a signal sent to the
    process: Python runs the handler in the main thread only when that thread next runs Python
    code, so a flow blocked in one long wait for a stage honoured it when the stage ended (47 s)."""
    loopback.latency = 2
    llm = f"{{provider: openai, model: fake, base_url: '{loopback.base_url}', max_concurrency: 2, max_retries: 0}}"
    cfg = _config(tmp_path, llm, PROMPTS, tiny_embedder)  # 48 calls, 2 at a time, 2 s each: 48 s
    proc, err = _start_run(cfg, tmp_path)
    assert _wait_for_answers(loopback, 2, proc), err.text()
    children = psutil.Process(proc.pid).children(recursive=True)
    sent = time.monotonic()
    _signal_a_worker_thread(proc.pid, signal.SIGTERM)
    code = proc.wait(timeout=90)
    seconds = time.monotonic() - sent
    assert code == 143 and seconds < EXIT_WITHIN_S, (code, seconds, err.text())
    # (whether the stage stopped by itself or the 5 s watchdog finished the job, as it did once in a
    # full-suite run, the contract holds: exit within 10 s, status, no children, calls stop)
    assert _survivors(children) == []
    assert [status for _, status in _runs(tmp_path / "e.duckdb")] == ["interrupted"]
    time.sleep(2.5)  # calls that were still going would be answered by now
    assert loopback.calls <= 8, loopback.calls  # not all 48: the stage stopped


@pytest.mark.expensive  # stopping between tokens and dropping the cut batch: test_interrupt_units
def test_sigint_inside_a_local_batch_stops_between_tokens_and_the_rerun_generates_only_the_rest(
    tmp_path: Path, tiny_embedder: str, slow_causal_lm: str, prefect_api_env: dict[str, str]
) -> None:
    # a batch of 3 x 400 tokens takes 5-6 s on 2 idle cores (12 s on a busy one): longer than the 5 s the
    # watchdog waits, so a graceful exit ("did not stop within" absent) means generate stopped between tokens
    llm = f"{{provider: local, model: '{slow_causal_lm}', batch_size: 3, max_tokens: 400, temperature: 0}}"
    cfg = _config(tmp_path, llm, PROMPTS[:2], tiny_embedder)  # 2 prompts x 6 = 12 calls: batches of 3
    db = tmp_path / "e.duckdb"
    proc, err = _start_run(cfg, tmp_path)
    assert err.wait_for(lambda line: line.startswith("LLM calls: 3/12"), timeout=300), err.text()
    code, seconds, children = _interrupt(proc, err)  # the second batch is being generated
    _check_interrupted(code, seconds, children, err, db)
    assert _cache_rows(db) == 3  # the first batch; the cut second batch is dropped, never stored as answers

    rerun = subprocess.run([sys.executable, "-m", "equilens", "run", str(cfg)], cwd=tmp_path, env=_env(prefect_api_env),
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    (_, _), (second, status) = _runs(db)
    assert status == "completed"
    assert _calls_of(db, second) == (3, 9)  # only the nine missing answers were generated


def test_sigkill_leaves_no_server_the_run_reads_abandoned_and_the_rerun_asks_only_for_the_rest(
    tmp_path: Path, tiny_embedder: str, loopback: FakeOpenAIServer, prefect_api_env: dict[str, str]
) -> None:
    """After ``kill -9`` no Prefect temporary server lives on (re-parented to init, it would burn
    18-30% CPU), and the next ``equilens runs`` reads the run as ``abandoned``, not ``running``."""
    loopback.latency = 0.5
    cfg = _config(tmp_path, _loopback_llm(loopback.base_url), PROMPTS, tiny_embedder)
    calls, db = CALLS_PER_PROMPT * len(PROMPTS), tmp_path / "e.duckdb"
    proc, err = _start_run(cfg, tmp_path)
    assert _wait_for_answers(loopback, 6, proc), err.text()
    uvicorn = [c for c in psutil.Process(proc.pid).children(recursive=True) if "uvicorn" in " ".join(c.cmdline())]
    assert uvicorn, err.text()
    proc.kill()
    proc.wait(timeout=30)
    _, alive = psutil.wait_procs(uvicorn, timeout=EXIT_WITHIN_S)
    assert [c for c in alive if c.status() != psutil.STATUS_ZOMBIE] == [], "the Prefect server outlived its run"
    assert [status for _, status in _runs(db)] == ["running"]  # nobody was left to say otherwise
    listed = subprocess.run([sys.executable, "-m", "equilens", "runs", "--db", str(db), "--format", "json"],
                            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert [r["status"] for r in json.loads(listed.stdout)] == ["abandoned"], listed.stderr
    kept = _cache_rows(db)  # flushed every half second while the run was alive
    assert 0 < kept < calls
    assert _rerun_asks_only_for_the_rest(cfg, tmp_path, loopback, calls, kept, prefect_api_env) == "abandoned"


# --- a killed run resumes; two runs share one DuckDB file ------------------------------------------
JOBS = [f"Write one sentence about a {w} who works as a {job}." for w in ("man", "woman")
        for job in ("nurse", "pilot", "teacher", "chef", "lawyer", "farmer")]


def _jobs_config(tmp_path: Path, base_url: str, name: str = "c.yaml") -> Path:
    cfg = tmp_path / name
    items = "\n".join(f"    - {p!r}" for p in JOBS)
    cfg.write_text(
        f"name: resilience\nprompts:\n  items:\n{items}\n"
        "counterfactual: {attributes: [gender], detect_names: false}\n"
        f"llm: {{provider: openai, model: fake, base_url: '{base_url}', count: 2, max_concurrency: 2, "
        "max_retries: 1, backoff_base: 0.01, timeout: 10}\n"
        "metrics: {bootstrap_resamples: 20, permutations: 20}\n"
        f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null, lock_timeout: 300}}\n"
    )
    return cfg


def _run_alone(cfg: Path, tmp_path: Path, api: dict[str, str] | None = None) -> subprocess.Popen:
    """``equilens run cfg`` in its own session, with its own ephemeral Prefect (its own SQLite) or the
    shared server ``api`` names."""
    env = {**_env(api), "PREFECT_HOME": str(tmp_path / f"prefect-home-{cfg.stem}"),
           "PREFECT_RESULTS_LOCAL_STORAGE_PATH": str(tmp_path / f"prefect-results-{cfg.stem}")}
    return subprocess.Popen([sys.executable, "-m", "equilens", "run", str(cfg)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


@pytest.mark.expensive  # SIGKILL then a rerun that pays nothing twice: the single-process SIGKILL test here
def test_sigkilled_process_group_resumes_without_paying_twice(tmp_path: Path, loopback: FakeOpenAIServer,
                                                             prefect_api_env: dict[str, str]) -> None:
    loopback.latency = 0.3
    cfg = _jobs_config(tmp_path, loopback.base_url)
    proc = _run_alone(cfg, tmp_path)
    deadline = time.monotonic() + 180
    while loopback.calls < 8:  # let some calls finish and reach the cache
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "the run made no calls"
        time.sleep(0.1)
    time.sleep(1.0)  # > the cache writer's flush interval
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    cached_before = _cache_rows(tmp_path / "e.duckdb")
    first_calls = loopback.calls
    assert 0 < cached_before <= first_calls

    loopback.latency = 0.0
    second = _run_alone(cfg, tmp_path, prefect_api_env)
    out, _ = second.communicate(timeout=300)
    assert second.returncode == 0, out
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        expected = con.execute("SELECT count(DISTINCT cache_key) FROM responses WHERE run_id = "
                               "(SELECT run_id FROM runs WHERE status = 'completed')").fetchone()[0]
        dupes = con.execute("SELECT count(*) - count(DISTINCT cache_key) FROM response_cache").fetchone()[0]
        rows = con.execute("SELECT count(*), count(DISTINCT (variant_id, sample_idx)) FROM responses WHERE run_id = "
                           "(SELECT run_id FROM runs WHERE status = 'completed')").fetchone()
    # every call that was cached before the kill is not made again
    assert loopback.calls - first_calls == expected - cached_before
    assert dupes == 0 and rows[0] == rows[1]


@pytest.mark.expensive  # a second writer waits for the file's lock: test_store
def test_two_runs_at_once_on_one_duckdb_file_both_complete(tmp_path: Path, loopback: FakeOpenAIServer,
                                                           prefect_api_env: dict[str, str]) -> None:
    loopback.latency = 0.02
    a = _run_alone(_jobs_config(tmp_path, loopback.base_url, "a.yaml"), tmp_path, prefect_api_env)
    b = _run_alone(_jobs_config(tmp_path, loopback.base_url, "b.yaml"), tmp_path, prefect_api_env)
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


# --- the judge stage of an identity run ----------------------------------------------------------------
def test_sigterm_in_the_judge_stage_of_an_identity_run_stops_quietly(tmp_path: Path, tiny_embedder: str,
                                                                      loopback: FakeOpenAIServer,
                                                                      prefect_api_env: dict[str, str]) -> None:
    """The judge's calls run in an event loop in the main thread. A handler that raises there (Prefect's
    ``TerminationSignal``) lands inside one of the loop's callbacks: asyncio printed it as "Exception in
    callback ..." and carried on, and the judge's calls went on after the signal. Now the signal only
    asks the loop to stop, and reaches the handlers once the loop has unwound."""
    from tests.fakes.openai_server import echo_reply, hash_reply, last_user_message

    concurrency = 16  # a busy loop: the signal arrives while callbacks run, not while it waits
    loopback.latency = 0.01
    loopback.reply = hash_reply  # each cell's answers differ, so every pair of cells is judged
    try:
        prompts = tmp_path / "p.csv"
        prompts.write_text("prompt\n" + "".join(f"Question {i}: how should I plan my week?\n" for i in range(12)))
        cfg = tmp_path / "identity.yaml"
        cfg.write_text(
            f"name: identity-judge\nassessment: identity\nprompts: {{path: '{prompts}'}}\n"
            "identity: {names_per_cell: 2, races: [white, black]}\njudge: {enabled: true}\n"
            f"llm: {{provider: openai, model: fake, base_url: '{loopback.base_url}', max_retries: 0, "
            f"max_concurrency: {concurrency}}}\n"
            f"scoring: {{embedding_model: '{tiny_embedder}'}}\n"
            "metrics: {bootstrap_resamples: 20, permutations: 20}\nvalidation: {enabled: false}\n"
            f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")

        def judged() -> int:
            return sum("Answer to the first person" in last_user_message(b) for b in list(loopback.requests))

        proc, err = _start_run(cfg, tmp_path, prefect_api_env)
        deadline = time.monotonic() + 300
        while judged() < 20:  # the judge's calls are under way (288 of them: about 3 s)
            assert proc.poll() is None and time.monotonic() < deadline, err.text()
            time.sleep(0.01)
        at_signal = judged()
        code, seconds = _signal_and_wait(proc, signal.SIGTERM, err)
        time.sleep(0.5)  # calls still going would have reached the server by now
        assert code == 143 and seconds < EXIT_WITHIN_S, (code, seconds, err.text())
        assert "Traceback" not in err.text() and "Exception in callback" not in err.text(), err.text()
        assert "error: interrupted" in err.text() and "did not stop within" not in err.text(), err.text()
        assert "Crash detected" not in err.text() and "termination signal" not in err.text(), err.text()
        assert [status for _, status in _runs(tmp_path / "e.duckdb")] == ["interrupted"]
        assert judged() - at_signal <= 2 * concurrency, (at_signal, judged())  # the judge stopped
    finally:
        loopback.reply = echo_reply
