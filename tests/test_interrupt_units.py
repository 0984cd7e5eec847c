"""The pieces of a Ctrl-C stop, each on its own: the LLM runner, a local batch, the run record, the watchdog."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from equilens.tasks.config import LLMConfig, parse_config
from equilens.tasks.llm import Completion, LLMRequest, cache_key, run_requests
from equilens.tasks.llm.stop import RunInterrupted, clear_stop, request_stop
from equilens.tasks.storage.store import Store

from tests.fakes.openai_server import running_server

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_stop_left_over() -> Iterator[None]:
    clear_stop()
    yield
    clear_stop()


def _when(condition, then, timeout: float = 20.0) -> threading.Thread:
    """Run ``then()`` in a thread as soon as ``condition()`` holds."""
    def watch() -> None:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        then()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _cached(db: Path) -> int:
    return int(Store(db).query("SELECT count(*) AS n FROM response_cache")["n"].iloc[0])


def test_stop_cancels_hanging_calls_and_flushes_the_answers_in_hand(tmp_path: Path) -> None:
    prompts = [f"prompt {i}" for i in range(10)]
    hang = set(prompts[4:])
    with running_server(fault_for=lambda body: ("hang", {"seconds": 30})
                        if body["messages"][-1]["content"] in hang else None) as server:
        cfg = LLMConfig(provider="openai", model="fake", base_url=server.base_url, max_concurrency=2,
                        max_retries=0, timeout=30.0)
        reqs = [LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in prompts]
        _when(lambda: server.calls >= 6, lambda: request_stop(signal.SIGINT))  # 4 answered, 2 hanging
        t0 = time.monotonic()
        with pytest.raises(RunInterrupted, match="SIGINT"):
            run_requests(reqs, cfg, Store(tmp_path / "c.duckdb"))
        stopped_after = time.monotonic() - t0
    assert stopped_after < 5.0  # the hanging calls would have held it for 30 s
    assert _cached(tmp_path / "c.duckdb") == 4


def test_a_stop_wakes_the_stage_at_once_whatever_its_beat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage hands answers over at a slow beat; a stop request does not wait for it."""
    from equilens.tasks.llm import runner

    monkeypatch.setattr(runner, "HAND_OVER_S", 60.0)
    with running_server(fault_for=lambda body: ("hang", {"seconds": 60})) as server:
        cfg = LLMConfig(provider="openai", model="fake", base_url=server.base_url, max_concurrency=2,
                        max_retries=0, timeout=60.0)
        reqs = [LLMRequest(p, 0, cache_key(cfg, p, 0)) for p in ("a", "b", "c")]
        _when(lambda: server.calls >= 2, lambda: request_stop(signal.SIGTERM))  # both loops hanging
        t0 = time.monotonic()
        with pytest.raises(RunInterrupted, match="SIGTERM"):
            run_requests(reqs, cfg, Store(tmp_path / "c.duckdb"))
    assert time.monotonic() - t0 < 20.0  # neither the 60 s beat nor the 60 s hang


class _BatchedFake:
    """A batched provider whose third batch is cut by a stop request (as the local model's is)."""

    name, model, batched = "local", "fake", True

    def __init__(self) -> None:
        self.batches = 0

    def complete_batch(self, prompts: list[str], sample_idxs: list[int]) -> list[Completion]:
        self.batches += 1
        if self.batches == 3:
            request_stop(signal.SIGTERM)  # arrives mid-batch: these texts are cut short
        return [Completion(f"answer to {p}", "stop", 3, 2) for p in prompts]

    async def aclose(self) -> None:
        return None


def test_a_batch_cut_by_a_stop_is_dropped_and_earlier_batches_are_cached(tmp_path: Path) -> None:
    cfg = LLMConfig(provider="local", model="fake", batch_size=2)
    reqs = [LLMRequest(f"p{i}", 0, cache_key(cfg, f"p{i}", 0)) for i in range(10)]
    fake = _BatchedFake()
    with pytest.raises(RunInterrupted, match="SIGTERM"):
        run_requests(reqs, cfg, Store(tmp_path / "c.duckdb"), provider=fake)
    assert fake.batches == 3 and _cached(tmp_path / "c.duckdb") == 4  # batches 1 and 2, not the cut third


@pytest.fixture(scope="module")
def endless_lm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random GPT-2 with no end-of-text token and a long context: generate runs to max_new_tokens."""
    from tests.fakes.endless_lm import build_endless_lm

    return build_endless_lm(tmp_path_factory.mktemp("endless"), ["hi"], n_layer=2, n_embd=64, n_head=2,
                            n_positions=8192)


def test_local_generate_stops_between_tokens(endless_lm: str) -> None:
    from equilens.tasks.llm.local import LocalProvider, load_causal_lm

    load_causal_lm(endless_lm)  # loaded before the clock starts
    provider = LocalProvider(LLMConfig(provider="local", model=endless_lm, max_tokens=6000, temperature=0))
    t0 = time.monotonic()
    timer = threading.Timer(0.5, request_stop)
    timer.start()
    with pytest.raises(RunInterrupted):
        provider.complete_batch(["hi", "hi hi"], [0, 0])
    stopped_after = time.monotonic() - t0
    clear_stop()
    t1 = time.monotonic()  # the same model runs on without a stop: 200 tokens for scale
    short = LocalProvider(LLMConfig(provider="local", model=endless_lm, max_tokens=200, temperature=0))
    assert short.complete_batch(["hi", "hi hi"], [0, 0])[0].completion_tokens == 200
    per_200 = time.monotonic() - t1
    print(f"stopped after {stopped_after:.2f} s; 200 tokens take {per_200:.2f} s")
    # 6000 tokens take more than 30x the time of 200 (attention grows with length); stopped, it is ~0.5 s
    assert stopped_after < 0.5 + max(2.0, 3 * per_200), (stopped_after, per_200)


def _recorder(tmp_path: Path):
    from equilens.tasks.orchestration.run_record import RunRecorder

    cfg = parse_config({"prompts": {"items": ["Is he a nurse?"]}, "storage": {"duckdb_path": str(tmp_path / "r.duckdb")}})
    store = Store(tmp_path / "r.duckdb")
    return store, RunRecorder(store, f"run-{time.monotonic_ns()}", "counterfactual_assessment", cfg)


@pytest.mark.parametrize(("raised", "status"), [(KeyboardInterrupt, "interrupted"), (RunInterrupted, "interrupted"),
                                                (ValueError, "failed")])
def test_recorded_run_marks_an_interruption_as_interrupted(tmp_path: Path, raised: type, status: str) -> None:
    from equilens.tasks.orchestration.run_record import recorded_run

    store, rec = _recorder(tmp_path)
    with pytest.raises(raised), recorded_run(rec):
        raise raised("stop")
    row = store.query("SELECT status, summary FROM runs WHERE run_id = ?", [rec.run_id]).iloc[0]
    assert row["status"] == status


def test_prefects_termination_signal_reaches_the_worker_threads(tmp_path: Path) -> None:
    """During a flow run Prefect's own SIGTERM handler raises TerminationSignal in the main thread only."""
    from equilens.tasks.llm.stop import stop_requested, stop_signal
    from equilens.tasks.orchestration.run_record import recorded_run
    from prefect.exceptions import TerminationSignal

    store, rec = _recorder(tmp_path)
    with pytest.raises(TerminationSignal), recorded_run(rec):
        raise TerminationSignal(signal.SIGTERM)
    assert stop_requested() and stop_signal() == signal.SIGTERM  # the LLM stage in its thread stops too
    summary = store.query("SELECT status, summary FROM runs WHERE run_id = ?", [rec.run_id]).iloc[0]
    assert summary["status"] == "interrupted" and "interrupted by SIGTERM" in summary["summary"]


def test_interrupt_active_runs_marks_unfinished_runs_once(tmp_path: Path) -> None:
    from equilens.tasks.orchestration.run_record import interrupt_active_runs

    store, rec = _recorder(tmp_path)
    assert rec.run_id in interrupt_active_runs("interrupted by SIGTERM")
    rec.finish("completed", {})  # a late second finish (the flow unwinding) changes nothing
    assert store.query("SELECT status FROM runs WHERE run_id = ?", [rec.run_id])["status"].iloc[0] == "interrupted"
    assert rec.run_id not in interrupt_active_runs("again")


STUCK = """
import subprocess, sys, threading, time
from equilens.flows.running.interrupt import stop_on_signals
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(child.pid, flush=True)
stuck = threading.Thread(target=time.sleep, args=(120,))  # a stage that cannot be stopped
stuck.start()
with stop_on_signals(grace=1.0):
    try:
        time.sleep(120)
    except KeyboardInterrupt:
        stuck.join()  # waits, like a task runner for its worker thread
"""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stage_that_cannot_stop_is_abandoned_after_the_grace(signum: int, code: int) -> None:
    proc = subprocess.Popen([sys.executable, "-c", STUCK], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = int(proc.stdout.readline())
    time.sleep(0.3)
    t0 = time.monotonic()
    proc.send_signal(signum)
    try:
        assert proc.wait(timeout=15) == code
    finally:
        proc.kill()
    assert time.monotonic() - t0 < 6.0  # the 1 s grace, then 1.5 s at most for the child
    assert "did not stop within 1 s" in proc.stderr.read()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the child is gone (reaped by the stopped process)


def test_a_second_signal_stops_at_once() -> None:
    proc = subprocess.Popen([sys.executable, "-c", STUCK.replace("grace=1.0", "grace=60.0")], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.readline()
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        assert proc.wait(timeout=15) == 130
    finally:
        proc.kill()
    assert time.monotonic() - t0 < 4.0
    assert "a second signal" in proc.stderr.read()


LOCK_ERROR = """
import os, signal, sys, time
from pathlib import Path
import equilens.tasks.orchestration.prefect_api
from equilens.flows.running.launch import run_config
equilens.tasks.orchestration.prefect_api.start_prefect_api = lambda: None  # the flow below needs no Prefect API

def flow(cfg):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    except KeyboardInterrupt:
        # what threading.Condition raises when the interrupt lands while its wait re-takes the lock
        raise RuntimeError("release unlocked lock")

run_config(Path(sys.argv[1]), [], Path(sys.argv[2]), False, lambda cfg: flow)
"""


def test_an_interrupt_that_unwinds_as_another_error_still_exits_as_interrupted(tmp_path: Path) -> None:
    """Ctrl-C raises in the main thread wherever it is. Landing inside ``threading.Condition.wait``
    (a task runner's wait for a shard) it can leave the condition's lock released, and the unwinding
    ``with`` raises ``RuntimeError: release unlocked lock`` in place of the interrupt: the run ended
    with exit code 1 and a traceback. After a signal, whatever error unwinds the run is the stop."""
    proc = subprocess.run([sys.executable, "-c", LOCK_ERROR, str(ROOT / "configs" / "demo.yaml"),
                           str(tmp_path / "e.duckdb")], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "error: interrupted" in proc.stderr, proc.stderr


def test_a_stop_quiets_dask_teardown_tracebacks_for_the_run_only() -> None:
    """After Ctrl-C a local cluster closes with connections still sending, and distributed's scheduler
    logged that as a traceback on the user's terminal; the stop quiets its loggers until the run ends."""
    import logging

    from equilens.flows.running.interrupt import stop_on_signals

    dask_log = logging.getLogger("distributed")
    before = dask_log.level
    try:
        with stop_on_signals(grace=60.0):
            assert dask_log.level == before
            request_stop(signal.SIGINT)  # in-process: no signal was received, so no watchdog starts
            assert dask_log.getEffectiveLevel() == logging.CRITICAL
        assert dask_log.level == before
    finally:
        clear_stop()


def test_a_stage_wait_sees_a_signal_that_the_kernel_gave_to_a_worker_thread() -> None:
    """The kernel hands a process's SIGTERM to any thread that does not block it. Python runs the
    handler in the main thread, but only once that thread runs Python code again: a stage awaited
    with a bare ``future.result()`` held the stop until the stage ended (a SIGTERM honoured after
    47 s). The flow's wait wakes up in slices, so the handler runs at once."""
    from concurrent.futures import ThreadPoolExecutor

    from equilens.tasks.orchestration.execution import result_of

    class Stopped(Exception):
        pass

    def handler(signum: int, frame: object) -> None:
        raise Stopped

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    previous = signal.signal(signal.SIGUSR1, handler)
    with ThreadPoolExecutor(2) as pool:
        stage = pool.submit(time.sleep, 4.0)
        pool.submit(lambda: (time.sleep(0.3), signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)))
        t0 = time.monotonic()
        try:
            with pytest.raises(Stopped):
                result_of(stage)
            seen = time.monotonic() - t0
        finally:
            signal.signal(signal.SIGUSR1, previous)
    assert seen < 1.5, f"the handler ran {seen:.1f} s after the signal came, when the stage ended"
    with ThreadPoolExecutor(1) as pool:
        assert result_of(pool.submit(lambda: 42)) == 42


def test_a_signal_during_a_stage_wait_reaches_the_run_outside_threadings_lock_code() -> None:
    """A handler that raises, run while the main thread is inside ``Event.wait``, can leave the
    Condition's lock released twice ("RuntimeError: release unlocked lock", a traceback and a 5 s
    watchdog exit on Dask). The flow's wait takes the signal as a stop request and hands it on to the
    run's handler once it has left the wait."""
    from concurrent.futures import ThreadPoolExecutor

    from equilens.tasks.orchestration.execution import result_of

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    inside: list[list[str]] = []

    class Stopped(Exception):
        pass

    def handler(signum: int, frame: object) -> None:
        files, f = [], frame
        while f is not None:
            files.append(f.f_code.co_filename)
            f = f.f_back
        inside.append([name for name in files if name == threading.__file__])
        raise Stopped

    previous = signal.signal(signal.SIGINT, handler)
    try:
        with ThreadPoolExecutor(2) as pool:
            stage = pool.submit(time.sleep, 3.0)
            pool.submit(lambda: (time.sleep(0.3), signal.pthread_kill(threading.get_ident(), signal.SIGINT)))
            t0 = time.monotonic()
            with pytest.raises(Stopped):
                result_of(stage)
            seen = time.monotonic() - t0
    finally:
        signal.signal(signal.SIGINT, previous)
        clear_stop()
    assert inside == [[]], inside  # the handler ran once, with no threading frame under it
    assert seen < 1.5, f"the handler ran {seen:.1f} s after the signal came"
