"""The Prefect flow run carries the equilens run id (name and tag); the metrics artifact stays narrow."""

from __future__ import annotations

import pandas as pd


def test_flow_run_is_named_and_tagged_with_the_run_id(prefect_harness) -> None:
    from equilens.tasks.orchestration.run_record import label_flow_run
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.context import FlowRunContext

    @flow
    def labelled() -> str:
        label_flow_run("20261122-101010-abcdef", "nightly")
        return str(FlowRunContext.get().flow_run.id)

    flow_run_id = labelled()
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(flow_run_id)
    assert run.name == "nightly · 20261122-101010-abcdef"
    assert {"equilens-run:20261122-101010-abcdef", "equilens-name:nightly"} <= set(run.tags)


def test_label_outside_a_flow_is_a_no_op() -> None:
    from equilens.tasks.orchestration.run_record import label_flow_run

    label_flow_run("r", "n")  # no flow run context: nothing to label, nothing raised


def test_metrics_artifact_columns(monkeypatch) -> None:
    import prefect.artifacts
    from equilens.flows.running.artifacts import publish_artifacts

    seen: dict = {}
    monkeypatch.setattr(prefect.artifacts, "create_table_artifact", lambda **kw: seen.update(kw))
    monkeypatch.setattr(prefect.artifacts, "create_markdown_artifact", lambda **kw: None)
    metrics = pd.DataFrame([{"run_id": "r", "family": "counterfactual", "attribute": "gender", "group_a": "male",
                             "group_b": "female", "metric": "cosine_similarity", "value": 0.91234, "ci_low": 0.9,
                             "ci_high": 0.93, "n": 8, "direction": "higher", "aggregation": "mean of pairs",
                             "details": '{"p_holm": 0.0213, "gap": 0.01}'}])
    publish_artifacts("r", metrics, "# report")
    [row] = seen["table"]
    assert list(row) == ["attribute", "group_a", "group_b", "metric", "value", "ci_low", "ci_high", "n", "p_holm"]
    assert row["p_holm"] == 0.0213 and row["value"] == 0.9123
