"""The LLM and score stages in shards, and the metric stage per attribute, on a real multi-process Dask
cluster: two worker processes both run shards, the flow alone writes the response cache, record their task runs in the flow's
Prefect API (none starts a temporary server), and the stored metrics
equal the thread runner's for the same seed, also when a run answers in looks."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from equilens.tasks.config import parse_config

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture
from tests.prefect_server import flow_runs_of

PROMPTS = [f"Write one sentence about a {who} who works as a {job}." for who in ("man", "woman")
           for job in ("nurse", "pilot", "teacher", "chef")]


def _config(tmp_path: Path, base_url: str, db: str, execution: dict) -> object:
    return parse_config({
        "name": "sharded", "prompts": {"items": PROMPTS},
        "counterfactual": {"attributes": ["gender"], "detect_names": False},
        "llm": {"provider": "openai", "model": "fake", "base_url": base_url, "count": 2, "timeout": 10},
        "metrics": {"bootstrap_resamples": 50, "permutations": 50,
                    "names": ["strict_sentiment_parity", "weak_sentiment_parity", "rougel_similarity"]},
        "execution": execution,
        "storage": {"duckdb_path": str(tmp_path / db), "reports_dir": None},
    })


def _task_runs_recorded(name: str, run_id: str) -> int:
    """Task runs whose name starts with ``name`` in the equilens run ``run_id``'s flow run, in the Prefect
    API this process reports to (shared with the other tests, which run flows of their own meanwhile)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterFlowRunId, TaskRunFilterName

    flows = flow_runs_of(run_id)
    assert flows, f"no flow run tagged with the run {run_id}"
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(task_run_filter=TaskRunFilter(
            name=TaskRunFilterName(like_=name), flow_run_id=TaskRunFilterFlowRunId(any_=[f.id for f in flows])))
    return sum(run.name.startswith(name) for run in runs)


@pytest.fixture(scope="module")
def cluster(prefect_harness):  # (LocalCluster, Client)
    """Two worker processes of one thread each, reporting to the test worker's Prefect server; shared
    by the tests of this module, since each worker process imports equilens, Prefect and torch when
    its first task arrives."""
    from distributed import Client, LocalCluster
    from equilens.tasks.orchestration.prefect_api import prefect_api_url

    url = prefect_api_url()
    assert url
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"PREFECT_API_URL": url}) as local, Client(local) as client:
        yield local, client


def _executed(client) -> dict[str, int]:
    """Tasks each worker (by address) has executed since it started."""
    return client.run(lambda dask_worker: dask_worker.state.executed_count)


def _metrics(db: Path, run_id: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT attribute, group_a, group_b, metric, value, ci_low, ci_high, n FROM metrics "
                           "WHERE run_id = ? ORDER BY ALL", [run_id]).fetchall()


def test_shards_run_on_both_worker_processes_and_match_the_thread_runner(
    cluster, openai_server, tmp_path: Path  # noqa: F811
) -> None:
    from equilens.flows.running.dispatch import flow_for

    local, client = cluster
    sharded = _config(tmp_path, openai_server.base_url, "dask.duckdb",
                      {"task_runner": "dask", "dask_address": local.scheduler_address, "shard_size": 1})
    names = ("call-llm-shard", "score-responses", "compute-metrics")
    executed = _executed(client)  # the cluster is shared with this module's other tests
    on_dask = flow_for(sharded)(sharded)  # first, so no shard is a cache hit of the thread run
    ran = {w: n - executed.get(w, 0) for w, n in _executed(client).items()}
    llm_shards, score_shards, metric_tasks = (_task_runs_recorded(n, on_dask["run_id"]) for n in names)
    calls = openai_server.calls
    again = flow_for(sharded)(sharded)  # every answer is cached now: no call, no shard to send
    assert openai_server.calls == calls
    in_looks = {"stop_when": "settled", "looks": 2}  # each look's shards awaited before it is judged
    looked = flow_for(sharded)(sharded.model_copy(update={"execution": sharded.execution.model_copy(
        update=in_looks)}))
    # one prompt per shard: the LLM and score shards spread over both processes
    assert llm_shards >= 4 and score_shards >= 4, (llm_shards, score_shards)
    assert len(ran) == 2 and all(count >= 1 for count in ran.values()), ran
    assert metric_tasks == 1, metric_tasks  # one attribute (gender)
    assert sum(ran.values()) == llm_shards + score_shards + metric_tasks, ran  # every task ran on a worker
    with duckdb.connect(str(tmp_path / "dask.duckdb"), read_only=True) as con:
        stored, keys = con.execute("SELECT count(*), count(DISTINCT cache_key) FROM response_cache").fetchone()
    assert stored == keys == calls  # written once each, by the flow, as each shard returned
    assert _metrics(tmp_path / "dask.duckdb", again["run_id"]) == _metrics(tmp_path / "dask.duckdb",
                                                                           on_dask["run_id"])
    # (the workers' task runs are counted in the flow's own API: a worker with a temporary server of
    # its own would have recorded them there)
    threaded = _config(tmp_path, openai_server.base_url, "thread.duckdb", {"shard_size": 3})
    here = flow_for(threaded)(threaded)
    dask_rows, thread_rows = _metrics(tmp_path / "dask.duckdb", on_dask["run_id"]), _metrics(
        tmp_path / "thread.duckdb", here["run_id"])
    assert dask_rows and dask_rows == thread_rows
    threaded_looks = flow_for(threaded)(threaded.model_copy(update={"execution": threaded.execution.model_copy(
        update=in_looks)}))
    assert looked["looks"]["look"] == threaded_looks["looks"]["look"] == 2
    assert _metrics(tmp_path / "dask.duckdb", looked["run_id"]) == _metrics(tmp_path / "thread.duckdb",
                                                                            threaded_looks["run_id"])


def test_a_local_clusters_workers_report_to_the_runs_own_prefect_server(openai_server, tmp_path: Path) -> None:  # noqa: F811
    """``equilens run`` starts one temporary Prefect server; the worker process of the local cluster it
    starts is given its address, so it starts none of its own (each worker did: a server per worker
    besides the run's). One worker: a second would only pay the same imports again."""
    import os
    import subprocess
    import sys

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"name: d\nprompts: {{items: {PROMPTS[:4]!r}}}\n"
        "counterfactual: {attributes: [gender], detect_names: false}\n"
        f"llm: {{provider: openai, model: fake, base_url: '{openai_server.base_url}', count: 1}}\n"
        "metrics: {bootstrap_resamples: 20, permutations: 20, names: [strict_sentiment_parity]}\n"
        "execution: {task_runner: dask, dask_workers: 1, shard_size: 1}\n"
        "validation: {enabled: false}\nstorage: {duckdb_path: e.duckdb, reports_dir: null}\n")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")},
           "PREFECT_LOGGING_LEVEL": "INFO"}  # each process that starts a server says so
    import time

    import psutil

    # its own session, so every process it starts (server, scheduler, nannies, workers) can be found after
    run = subprocess.Popen([sys.executable, "-m", "equilens", "run", str(cfg), "--debug"], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr[-3000:]
    assert stderr.count("Starting temporary server") == 1, stderr[-3000:]

    def left() -> list[str]:
        found = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            try:
                if os.getsid(proc.pid) == run.pid:
                    found.append(" ".join(proc.info["cmdline"] or [])[:120])
            except (ProcessLookupError, PermissionError):
                continue
        return found

    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left(), left()  # nothing the run started outlives it


def test_a_worker_killed_mid_run_costs_only_its_shard(cluster, openai_server, tmp_path: Path) -> None:  # noqa: F811
    """The worker answering an LLM shard is killed: Dask runs that shard again on the other worker, the
    run completes, every answer is stored once, and only the lost shard's calls are made twice."""
    import os
    import signal
    import threading
    import time

    from equilens.flows.running.dispatch import flow_for

    local, client = cluster
    openai_server.latency = 0.3
    cfg = _config(tmp_path, openai_server.base_url, "kill.duckdb",
                  {"task_runner": "dask", "dask_address": local.scheduler_address, "shard_size": 2})
    out: dict = {}
    run = threading.Thread(target=lambda: out.update(result=flow_for(cfg)(cfg)), daemon=True)
    run.start()
    deadline, busy = time.monotonic() + 120, []
    while not busy:  # wait until a worker is answering a shard
        assert time.monotonic() < deadline and run.is_alive(), "no shard started"
        busy = [w for w, keys in client.processing().items() if any("call_llm_shard" in str(k) for k in keys)]
        time.sleep(0.05)
    openai_server.wait_for_calls(openai_server.calls + 2, timeout=30)  # its calls are under way
    os.kill(client.run(os.getpid, workers=busy[:1])[busy[0]], signal.SIGKILL)
    run.join(timeout=240)
    assert "result" in out, "the run did not complete after a worker died"
    shard_runs = _task_runs_recorded("call-llm-shard", out["result"]["run_id"])
    # no worker started a process of its own (a temporary Prefect server, as each did when it was
    # given no API address), so none is left behind when a worker stops
    assert client.run(lambda: len(__import__("psutil").Process().children(recursive=True))) == {
        w: 0 for w in client.scheduler_info()["workers"]}
    with duckdb.connect(str(tmp_path / "kill.duckdb"), read_only=True) as con:
        stored, keys = con.execute("SELECT count(*), count(DISTINCT cache_key) FROM response_cache").fetchone()
        answered = con.execute("SELECT count(*) FROM responses WHERE run_id = ? AND ok",
                               [out["result"]["run_id"]]).fetchone()[0]
    assert stored == keys and answered > 0
    assert shard_runs == 4  # four shards of two prompts; Dask ran the lost one again as the same task run
    # only calls the lost shard had made can be asked again (none when it died before its first
    # answer): at most one shard's worth, never an answer that was stored
    assert 0 <= openai_server.calls - keys <= 2 * 3 * 2 * 2, (openai_server.calls, keys)


def test_a_python_target_runs_on_the_workers_imported_by_its_path(cluster, tmp_path: Path) -> None:
    """Workers import ``llm.target`` by its path: the answers come from the worker processes."""
    import os

    from equilens.flows.running.dispatch import flow_for

    local, client = cluster
    cfg = _config(tmp_path, "", "python.duckdb", {"task_runner": "dask", "dask_address": local.scheduler_address,
                                                  "shard_size": 1})
    cfg = cfg.model_copy(update={"llm": parse_config({
        "prompts": {"items": PROMPTS}, "llm": {"provider": "python", "target": "tests.fakes.apps:where"}}).llm})
    flow_for(cfg)(cfg)
    with duckdb.connect(str(tmp_path / "python.duckdb"), read_only=True) as con:
        texts = [t for (t,) in con.execute("SELECT text FROM responses WHERE ok").fetchall()]
    pids = {t.split("process ")[1].split(":")[0] for t in texts}
    assert len(texts) >= 2 * len(PROMPTS) and str(os.getpid()) not in pids
    workers = set(client.run(os.getpid).values())
    assert {int(p) for p in pids} <= workers, (pids, workers)
