"""Task-runner switch: run the heavy stages in threads here, or on a Dask cluster.

With ``execution.task_runner: dask`` the flow gets a ``DaskTaskRunner`` (a local cluster, or the
scheduler at ``dask_address``) and the LLM and scoring tasks are submitted to it, annotated with
``resources={"GPU": gpus_per_task}`` when GPUs are requested (start workers with
``--resources GPU=1``). Results travel back through Prefect; responses are also cached in the
shared DuckDB file, so point ``storage.duckdb_path`` at storage every worker can reach.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from tasks.config import ExecutionConfig


def with_task_runner(flow_obj: Any, cfg: ExecutionConfig) -> Any:
    if cfg.task_runner != "dask":
        return flow_obj
    from prefect_dask import DaskTaskRunner

    if cfg.dask_address:
        runner = DaskTaskRunner(address=cfg.dask_address)
    else:
        runner = DaskTaskRunner(cluster_kwargs={"n_workers": cfg.dask_workers, "threads_per_worker": 1,
                                                "processes": False, "dashboard_address": None})
    return flow_obj.with_options(task_runner=runner)


@contextmanager
def _gpu_annotation(cfg: ExecutionConfig) -> Iterator[None]:
    if cfg.task_runner == "dask" and cfg.gpus_per_task > 0:
        import dask

        with dask.annotate(resources={"GPU": cfg.gpus_per_task}):
            yield
    else:
        with nullcontext():
            yield


def run_heavy(task_obj: Any, cfg: ExecutionConfig, *args: Any, **kwargs: Any) -> Any:
    """Submit a heavy task to the flow's task runner (threads or Dask) and wait for its result."""
    with _gpu_annotation(cfg):
        future = task_obj.submit(*args, **kwargs)
    return future.result()


Submit = Callable[..., Any]
