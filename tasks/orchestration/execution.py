"""Task-runner switch: run the heavy stages in threads here, or on a Dask cluster.

With ``execution.task_runner: dask`` the flow gets a ``DaskTaskRunner``: a local cluster of worker
processes with one thread each (``dask_workers``, one per core by default; Dask's nanny gives each
one BLAS/OpenMP thread, so torch runs one thread per worker), or the scheduler at
``dask_address``. The LLM task and every shard of the score stage are submitted to it, annotated
with ``resources={"GPU": gpus_per_task}`` when GPUs are requested (start workers with
``--resources GPU=1``). Results travel back through Prefect. Local workers are given the flow's
Prefect API address (:func:`equilens.tasks.orchestration.prefect_api.prefect_api_url`), so their task runs report to the run's
own server and none starts a temporary one; workers of an existing cluster need
``PREFECT_API_URL`` set to a server the flow uses too (README, "Scaling past one machine").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from equilens.tasks.config import ExecutionConfig


def with_task_runner(flow_obj: Any, cfg: ExecutionConfig) -> Any:
    if cfg.task_runner != "dask":
        return flow_obj
    from prefect_dask import DaskTaskRunner

    if cfg.dask_address:
        runner = DaskTaskRunner(address=cfg.dask_address)
    else:
        import os

        from equilens.tasks.orchestration.prefect_api import prefect_api_url

        url = prefect_api_url()
        runner = DaskTaskRunner(cluster_kwargs={"n_workers": cfg.dask_workers or os.cpu_count() or 1,
                                                "threads_per_worker": 1, "processes": True,
                                                "dashboard_address": None,
                                                "env": {"PREFECT_API_URL": url} if url else {}})
    return flow_obj.with_options(task_runner=runner)


@contextmanager
def gpu_annotation(cfg: ExecutionConfig) -> Iterator[None]:
    if cfg.task_runner == "dask" and cfg.gpus_per_task > 0:
        import dask

        with dask.annotate(resources={"GPU": cfg.gpus_per_task}):
            yield
    else:
        with nullcontext():
            yield


def run_heavy(task_obj: Any, cfg: ExecutionConfig, *args: Any, **kwargs: Any) -> Any:
    """Submit a heavy task to the flow's task runner (threads or Dask) and wait for its result."""
    with gpu_annotation(cfg):
        future = task_obj.submit(*args, **kwargs)
    return result_of(future)


def run_sharded(task_obj: Any, cfg: ExecutionConfig, shards: Iterable[tuple], *, at_once: bool = True,
                **kwargs: Any) -> list[Any]:
    """Submit one task per shard (its positional arguments) to the flow's task runner, all at once,
    so they run side by side (on Dask: on any worker); their results in shard order. With
    ``at_once=False`` each shard is submitted when the one before has finished (``shards`` may be a
    generator, so only one shard's inputs are built at a time)."""
    with gpu_annotation(cfg):
        if not at_once:
            return [result_of(task_obj.submit(*args, **kwargs)) for args in shards]
        futures = [task_obj.submit(*args, **kwargs) for args in shards]
    return [result_of(future) for future in futures]


WAIT_SLICE_S = 0.2


def result_of(future: Any) -> Any:
    """``future.result()``, waited for in slices of :data:`WAIT_SLICE_S` seconds.

    The kernel hands a signal sent to the process (Ctrl-C, SIGTERM) to any thread that does not
    block it. Python then runs the handler in the main thread, but only once that thread runs
    Python code again: a main thread blocked in one unbounded wait for a stage would hold the stop
    until the stage ended. Each slice returns to the interpreter, so the handler runs within one.
    While it waits, SIGINT and SIGTERM only request a stop (a handler that raises inside
    ``threading``'s lock code leaves the lock broken: "release unlocked lock"); the wait then ends and
    the signal goes to the handler installed before, outside any lock.
    ``future`` is a Prefect future (the thread pool's or Dask's future inside it is watched) or a
    ``concurrent.futures`` one.
    """
    from equilens.tasks.llm.stop import signals_as_stop_requests, stop_from_signal

    finished = threading.Event()
    getattr(future, "wrapped_future", future).add_done_callback(lambda _: finished.set())
    with signals_as_stop_requests():  # a handler that raises must not run inside the Event's lock
        while not finished.wait(WAIT_SLICE_S):
            if stop_from_signal():
                break  # leaving the block hands the signal to the run's handler, here
    return future.result()


Submit = Callable[..., Any]
