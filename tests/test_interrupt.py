"""Ctrl-C (SIGINT) stops ``equilens run`` within seconds, in the loopback-server stage and in a local batch.

Each test starts a real CLI process, sends it SIGINT mid-stage, and checks: the process is gone
within 10 s with exit code 130, the run is stored as ``interrupted``, none of the processes it had
started (the ephemeral Prefect API server) survives, and a re-run of the same config asks the model
only for the answers that were not cached.

The local-provider case uses a small random GPT-2 built here (no SmolLM2 load): its batches of four
take seconds each, so the signal lands inside ``generate``.
"""

from __future__ import annotations

import contextlib
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

    def __init__(self, stream) -> None:  # noqa: ANN001
        self.lines: list[str] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:  # noqa: ANN001
        for line in stream:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()

    def count(self, needle: str) -> int:
        """Occurrences of ``needle`` (two of them on one line count twice)."""
        with self._cond:
            return sum(line.count(needle) for line in self.lines)

    def wait_for(self, pred, timeout: float) -> bool:  # noqa: ANN001
        with self._cond:
            return self._cond.wait_for(lambda: any(pred(line) for line in self.lines), timeout)

    def text(self) -> str:
        with self._cond:
            return "\n".join(self.lines)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def _config(tmp_path: Path, llm: str, prompts: list[str], embedder: str) -> Path:
    cfg = tmp_path / "run.yaml"
    items = json.dumps(prompts)
    cfg.write_text(
        f"name: interrupt\nprompts: {{items: {items}}}\n"
        "counterfactual: {attributes: [gender], detect_names: false}\n"
        f"llm: {llm}\n"
        f"scoring: {{embedding_model: '{embedder}'}}\n"
        "metrics: {bootstrap_resamples: 20, permutations: 20}\n"
        "validation: {enabled: false}\n"
        f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    return cfg


def _start_run(cfg: Path, cwd: Path) -> tuple[subprocess.Popen, Lines]:
    proc = subprocess.Popen([sys.executable, "-m", "flows", "run", str(cfg)], cwd=cwd, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, Lines(proc.stderr)


def _interrupt(proc: subprocess.Popen, err: Lines) -> tuple[int, float, list]:
    """SIGINT to the run's process alone (its children get nothing): exit code, seconds to exit, children."""
    children = psutil.Process(proc.pid).children(recursive=True)
    assert any("uvicorn" in " ".join(c.cmdline()) for c in children), \
        f"no ephemeral Prefect server among the run's children: nothing to check\n{err.text()}"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the run ignored SIGINT for 60 s:\n{err.text()}") from None
    return code, time.monotonic() - sent, children


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
    assert _survivors(children) == [], [c.cmdline() for c in _survivors(children)]
    assert [status for _, status in _runs(db)] == ["interrupted"]


@contextlib.contextmanager
def _loopback(latency: float) -> Iterator[tuple[str, Lines]]:
    """The loopback OpenAI-compatible server in its own process: (base URL, its request log)."""
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(latency), "--log"],
                              cwd=ROOT, env=_env(), stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        yield base_url, Lines(server.stdout)
    finally:
        server.terminate()
        server.wait(timeout=10)


def _loopback_llm(base_url: str) -> str:
    return (f"{{provider: openai, model: fake, base_url: '{base_url}', max_concurrency: 2, max_retries: 0, "
            "timeout: 30}")


def _rerun_asks_only_for_the_rest(cfg: Path, cwd: Path, answered: Lines, calls: int, kept: int) -> str:
    """Re-run ``cfg``: it completes, takes the ``kept`` cached answers and asks the server (counted in
    its log) for exactly the rest; returns the first run's status."""
    db = cwd / "e.duckdb"
    time.sleep(1.5)  # calls the server was still answering when the client let go are logged by now
    before = answered.count("POST")
    rerun = subprocess.run([sys.executable, "-m", "flows", "run", str(cfg)], cwd=cwd, env=_env(),
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    answered.wait_for(lambda _: answered.count("POST") - before >= calls - kept, timeout=10)  # log lines lag
    time.sleep(0.5)
    asked = answered.count("POST") - before
    (_, first_status), (second, status) = _runs(db)
    assert status == "completed"
    assert _calls_of(db, second) == (kept, calls - kept)
    assert asked == calls - kept, (asked, kept)  # counted at the server: only the missing calls
    return first_status


@pytest.fixture(scope="module")
def tiny_embedder(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small random BERT that sentence-transformers loads with mean pooling (no MiniLM, no hub)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    path = tmp_path_factory.mktemp("embedder")
    words = sorted({w.strip("?").lower() for p in PROMPTS for w in p.split()} | {"echo", ":", "they", "person"})
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tok = BertTokenizer(str(path / "vocab.txt"))
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=128)).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def slow_causal_lm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random GPT-2 with a chat template and no end-of-text token: every answer runs to max_tokens."""
    from tests.fakes.endless_lm import build_endless_lm

    words = {w.strip("?").lower() for p in PROMPTS for w in p.split()}
    return build_endless_lm(tmp_path_factory.mktemp("causal"), words, n_layer=4, n_embd=256, n_head=4,
                            n_positions=1024)


def test_sigint_during_loopback_calls_stops_and_the_rerun_asks_only_for_the_rest(
    tmp_path: Path, tiny_embedder: str
) -> None:
    with _loopback(0.5) as (base_url, answered):
        cfg = _config(tmp_path, _loopback_llm(base_url), PROMPTS, tiny_embedder)
        calls = CALLS_PER_PROMPT * len(PROMPTS)  # 48
        db = tmp_path / "e.duckdb"
        proc, err = _start_run(cfg, tmp_path)
        assert answered.wait_for(lambda _: answered.count("POST") >= 6, timeout=240), err.text()
        at_signal = answered.count("POST")
        code, seconds, children = _interrupt(proc, err)
        _check_interrupted(code, seconds, children, err, db)
        kept = _cache_rows(db)
        # answers the client had read are flushed; at most max_concurrency were still on the wire
        assert at_signal - 2 <= kept < calls, (at_signal, kept)
        _rerun_asks_only_for_the_rest(cfg, tmp_path, answered, calls, kept)


def test_sigterm_stops_the_calls_and_exits_143(tmp_path: Path, tiny_embedder: str) -> None:
    """Prefect catches SIGTERM itself during a flow run; the calls in the worker thread must stop anyway."""
    with _loopback(2) as (base_url, answered):
        llm = f"{{provider: openai, model: fake, base_url: '{base_url}', max_concurrency: 2, max_retries: 0}}"
        cfg = _config(tmp_path, llm, PROMPTS, tiny_embedder)  # 48 calls, 2 at a time, 2 s each: 48 s
        proc, err = _start_run(cfg, tmp_path)
        assert answered.wait_for(lambda _: answered.count("POST") >= 2, timeout=240), err.text()
        children = psutil.Process(proc.pid).children(recursive=True)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        seconds = time.monotonic() - sent
        assert code == 143 and seconds < EXIT_WITHIN_S, (code, seconds, err.text())
        # (whether the stage stopped by itself or the 5 s watchdog finished the job, as it did once in a
        # full-suite run, the contract holds: exit within 10 s, status, no children, calls stop)
        assert _survivors(children) == []
        assert [status for _, status in _runs(tmp_path / "e.duckdb")] == ["interrupted"]
        time.sleep(2.5)  # calls that were still going would be answered by now
        assert answered.count("POST") <= 8, answered.count("POST")  # not all 48: the stage stopped


def test_sigint_inside_a_local_batch_stops_between_tokens_and_the_rerun_generates_only_the_rest(
    tmp_path: Path, tiny_embedder: str, slow_causal_lm: str
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

    rerun = subprocess.run([sys.executable, "-m", "flows", "run", str(cfg)], cwd=tmp_path, env=_env(),
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    (_, _), (second, status) = _runs(db)
    assert status == "completed"
    assert _calls_of(db, second) == (3, 9)  # only the nine missing answers were generated


def test_sigkill_leaves_no_server_the_run_reads_abandoned_and_the_rerun_asks_only_for_the_rest(
    tmp_path: Path, tiny_embedder: str
) -> None:
    """After ``kill -9`` Prefect's temporary server used to live on (re-parented to init, 18-30% CPU
    minutes later) and the run stayed ``running`` in every later ``equilens runs``."""
    with _loopback(0.5) as (base_url, answered):
        cfg = _config(tmp_path, _loopback_llm(base_url), PROMPTS, tiny_embedder)
        calls, db = CALLS_PER_PROMPT * len(PROMPTS), tmp_path / "e.duckdb"
        proc, err = _start_run(cfg, tmp_path)
        assert answered.wait_for(lambda _: answered.count("POST") >= 6, timeout=240), err.text()
        uvicorn = [c for c in psutil.Process(proc.pid).children(recursive=True) if "uvicorn" in " ".join(c.cmdline())]
        assert uvicorn, err.text()
        proc.kill()
        proc.wait(timeout=30)
        _, alive = psutil.wait_procs(uvicorn, timeout=EXIT_WITHIN_S)
        assert [c for c in alive if c.status() != psutil.STATUS_ZOMBIE] == [], "the Prefect server outlived its run"
        assert [status for _, status in _runs(db)] == ["running"]  # nobody was left to say otherwise
        listed = subprocess.run([sys.executable, "-m", "flows", "runs", "--db", str(db), "--format", "json"],
                                cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
        assert [r["status"] for r in json.loads(listed.stdout)] == ["abandoned"], listed.stderr
        kept = _cache_rows(db)  # flushed every half second while the run was alive
        assert 0 < kept < calls
        assert _rerun_asks_only_for_the_rest(cfg, tmp_path, answered, calls, kept) == "abandoned"
