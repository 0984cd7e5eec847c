"""Stage logic and the metric library of equilens, as plain functions.

Prefect wrappers live in :mod:`equilens.tasks.pipeline.prefect_tasks`; everything else here is importable and
testable without a Prefect server.
"""
