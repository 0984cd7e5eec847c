"""The bias-test flow end to end on tiny models built on the spot: LPBS/CBS/AUL for a masked LM,
skipped with the reason for a causal LM, ``metrics.names`` honoured, validation gates stored."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from equilens.tasks.config import parse_config
from equilens.tasks.errors import ValidationFailed

SPEC = {"name": "doctor_nurse", "social_groups": {"male": ["he", "man"], "female": ["she", "woman"]},
        "attributes": {"doctor": ["doctor", "smart"], "nurse": ["nurse", "kind"]},
        "templates": ["[T] is [A]", "[T] was [A]"]}
SENTENCES = (
    "bias,group,group_term,attribute,attribute_term,sample,prompt,raw,sentence,discarded,reason\n"
    "doctor_nurse,male,he,doctor,doctor,0,,,he was a good doctor,false,\n"
    "doctor_nurse,female,she,nurse,nurse,0,,,she is a nurse,false,\n"
    "doctor_nurse,male,man,doctor,smart,0,,,the man is smart,false,\n"
    "doctor_nurse,female,woman,nurse,kind,0,,,the woman was kind,false,\n"
)


def _config(tmp_path: Path, model: str, kind: str, **metrics):
    spec, reviewed = tmp_path / "spec.json", tmp_path / "reviewed.csv"
    spec.write_text(json.dumps({"biases": [SPEC]}))
    reviewed.write_text(SENTENCES)
    return parse_config({
        "name": "bt", "assessment": "bias_test",
        "bias_test": {"spec_path": str(spec), "reviewed_csv": str(reviewed), "tested_model": model,
                      "tested_model_kind": kind, "subsample_rounds": 0, "crows_pairs": False, "weat": False},
        "metrics": {"bootstrap_resamples": 200, **metrics},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })


def _metrics(db: Path, run_id: str) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT metric, attribute, value, ci_low, ci_high, n, details FROM metrics "
                           "WHERE run_id = ?", [run_id]).df()


def test_masked_lm_gets_lpbs_cbs_and_aul(prefect_harness, tiny_bert, tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for

    cfg = _config(tmp_path, tiny_bert, "masked")
    result = flow_for(cfg)(cfg)
    m = _metrics(tmp_path / "e.duckdb", result["run_id"]).set_index("metric")
    assert set(m.index) == {"stereotype_score", "lpbs", "cbs", "aul_pair_score"}
    # 2 templates x 4 attribute terms x 2 parallel group pairs = 16 items, all single tokens
    assert m.loc["lpbs", "n"] == 16 and m.loc["cbs", "n"] == 16
    assert m.loc["lpbs", "ci_low"] <= m.loc["lpbs", "value"] <= m.loc["lpbs", "ci_high"]
    assert m.loc["cbs", "value"] >= 0
    assert m.loc["aul_pair_score", "n"] == 4 and 0 <= m.loc["aul_pair_score", "value"] <= 1
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        stages = {r[0] for r in con.execute("SELECT DISTINCT stage FROM validations WHERE run_id = ?",
                                            [result["run_id"]]).fetchall()}
    assert stages == {"bias_sentences", "bias_pairs", "metrics"}


def test_causal_lm_records_masked_metrics_as_skipped(prefect_harness, tiny_gpt2, tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for

    cfg = _config(tmp_path, tiny_gpt2, "causal")
    result = flow_for(cfg)(cfg)
    m = _metrics(tmp_path / "e.duckdb", result["run_id"]).set_index("metric")
    for name in ("lpbs", "cbs", "aul_pair_score"):
        assert m.loc[name, "value"] is None or pd.isna(m.loc[name, "value"])
        assert "masked LM" in json.loads(m.loc[name, "details"])["skipped"]
    assert m.loc["stereotype_score", "n"] == 4
    assert any(k.startswith("lpbs") for k in result["skipped"])


def test_metrics_names_are_honoured(prefect_harness, tiny_bert, tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for

    cfg = _config(tmp_path, tiny_bert, "masked", names=["lpbs"])
    result = flow_for(cfg)(cfg)
    assert _metrics(tmp_path / "e.duckdb", result["run_id"])["metric"].tolist() == ["lpbs"]


def test_a_kept_sentence_without_its_group_term_stops_the_flow(prefect_harness, tiny_bert, tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for

    cfg = _config(tmp_path, tiny_bert, "masked")
    Path(cfg.bias_test.reviewed_csv).write_text(SENTENCES + "doctor_nurse,male,he,doctor,doctor,1,,,a doctor,false,\n")
    with pytest.raises(ValidationFailed, match="usable"):
        flow_for(cfg)(cfg)


def test_pairs_gate_names_an_unscored_kept_pair() -> None:
    from equilens.tasks.validation import validate_bias_pairs

    frame = pd.DataFrame({
        "bias": ["b", "b", "b"], "stereotyped_sentence": ["he is kind", "he is smart", "x"],
        "anti_stereotyped_sentence": ["she is kind", "she is smart", "x"],
        "stereotyped_logprob": [-3.0, float("nan"), None], "anti_stereotyped_logprob": [-4.0, -2.0, None],
        "discarded": [False, False, True],
    })
    report = validate_bias_pairs(frame)
    assert not report.success and "he is smart" in report.summary()
    assert validate_bias_pairs(frame.iloc[[0, 2]]).success  # a discarded pair need not be scored
