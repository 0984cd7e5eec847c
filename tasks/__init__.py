"""Stage logic and the metric library of equilens, and the Prefect tasks that wrap the stages.

A stage is a plain function, importable and testable without a Prefect server; its ``@task`` (cache
policy, retries) is defined beside it: the shared stages' tasks in :mod:`equilens.tasks.pipeline.prefect_tasks`,
an assessment's own in its module under :mod:`equilens.tasks.assessments`. The flows in ``flows/``
compose them.
"""
