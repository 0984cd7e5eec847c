"""Classification fairness: label parsing, golden rates and disparities, the flow end to end."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from equilens.tasks.assessments.classification.config import ClassificationConfig
from equilens.tasks.config import MetricsConfig, parse_config
from equilens.tasks.errors import InputDataError
from equilens.tasks.scoring.parsing import parse_label

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

LABELS = ["approve", "deny"]
ALIASES = {"approve": ["approved", "yes"], "deny": ["denied", "no"]}


@pytest.mark.parametrize(("text", "label"), [
    ("Approve", "approve"),
    ("  DENY.  ", "deny"),
    ("**Approve**", "approve"),
    ("Sure! After looking at the numbers, I would approve the loan.", "approve"),  # lead-in sentence
    ("The decision is: deny", "deny"),
    ("Answer: approve. Denying would be unfair.", "approve"),  # marker beats a later mention
    ("Deny, because the income is too low to approve anything.", "deny"),  # leading label
    ("Loan denied.", "deny"),  # alias
    ("I could approve or deny it.", None),  # two labels, no marker: ambiguous
    ("It depends on the bank.", None),
    ("", None),
    (None, None),
])
def test_parse_label(text: str | None, label: str | None) -> None:
    assert parse_label(text, LABELS, ALIASES) == label


def test_a_longer_label_is_not_read_as_the_shorter_one_inside_it() -> None:
    assert parse_label("My answer: not approved", ["approved", "not approved"]) == "not approved"
    assert parse_label("I think it should be not approved here", ["approved", "not approved"]) == "not approved"


def _frame() -> pd.DataFrame:
    nan = np.nan
    # group a: (pred, truth) = (1,1) (1,0) (0,1) (0,0) (unparsed, 1)
    # group b: (1,1) (1,1) (1,0) (0,0)
    rows = [("a", 1, 1), ("a", 1, 0), ("a", 0, 1), ("a", 0, 0), ("a", nan, 1),
            ("b", 1, 1), ("b", 1, 1), ("b", 1, 0), ("b", 0, 0)]
    return pd.DataFrame({"grp": [r[0] for r in rows], "pred": [r[1] for r in rows], "truth": [r[2] for r in rows],
                         "cluster": [f"c{i}" for i in range(len(rows))], "failed": False,
                         "item_id": [f"i{i}" for i in range(len(rows))], "sample_idx": 0})


def _value(metrics: pd.DataFrame, name: str, a: str | None = None, b: str | None = None) -> pd.Series:
    sel = metrics[(metrics["metric"] == name)
                  & (metrics["group_a"].isna() if a is None else metrics["group_a"] == a)
                  & (metrics["group_b"].isna() if b is None else metrics["group_b"] == b)]
    assert len(sel) == 1, (name, a, b, sel)
    return sel.iloc[0]


def test_golden_rates_and_disparities() -> None:
    from equilens.tasks.assessments.classification.stages import classification_metrics

    m = classification_metrics(_frame(), ClassificationConfig(attribute="gender"), MetricsConfig(bootstrap_resamples=200))
    def v(*k):
        return _value(m, *k)["value"]
    # group a, parsed 4: prevalence 2/4; FPR = FP/(FP+TN) = 1/2; FNR = FN/(FN+TP) = 1/2;
    # FOR = FN/(FN+TN) = 1/2; FDR = FP/(FP+TP) = 1/2; unparsed 1 of 5 answers
    assert v("predicted_prevalence", "a") == pytest.approx(0.5)
    assert v("false_positive_rate", "a") == pytest.approx(0.5)
    assert v("false_negative_rate", "a") == pytest.approx(0.5)
    assert v("false_omission_rate", "a") == pytest.approx(0.5)
    assert v("false_discovery_rate", "a") == pytest.approx(0.5)
    assert v("unparsed_rate", "a") == pytest.approx(0.2)
    assert _value(m, "unparsed_rate", "a")["details"]["unparsed"] == 1
    # group b: prevalence 3/4; FPR 1/2 (truth-0 rows (1,0), (0,0)); FNR 0/2; FOR 0/1; FDR 1/3
    assert v("predicted_prevalence", "b") == pytest.approx(0.75)
    assert v("false_negative_rate", "b") == pytest.approx(0.0)
    assert v("false_omission_rate", "b") == pytest.approx(0.0)
    assert v("false_discovery_rate", "b") == pytest.approx(1 / 3)
    # pairs a vs b: prevalence 0.5 - 0.75 = -0.25, ratio 0.5 / 0.75 = 2/3; FDR 1/2 - 1/3 = 1/6, ratio 1.5
    assert v("predicted_prevalence_difference", "a", "b") == pytest.approx(-0.25)
    assert v("predicted_prevalence_ratio", "a", "b") == pytest.approx(2 / 3)
    assert v("false_discovery_rate_difference", "a", "b") == pytest.approx(1 / 6)
    assert v("false_discovery_rate_ratio", "a", "b") == pytest.approx(1.5)
    # FNR ratio a/b = 0.5 / 0: recorded as skipped with a reason, never as 0 or inf
    fnr_ratio = _value(m, "false_negative_rate_ratio", "a", "b")
    assert pd.isna(fnr_ratio["value"]) and "denominator" in fnr_ratio["details"]["skipped"]
    # across groups: max - min = 0.75 - 0.5, max / min = 1.5
    assert v("predicted_prevalence_difference") == pytest.approx(0.25)
    assert v("predicted_prevalence_ratio") == pytest.approx(1.5)
    assert _value(m, "predicted_prevalence_ratio")["details"]["max_group"] == "b"
    row = _value(m, "predicted_prevalence_difference", "a", "b")
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert row["details"]["verdict"] in ("fair", "unfair")


def test_rates_needing_truth_are_skipped_without_it() -> None:
    from equilens.tasks.assessments.classification.stages import classification_metrics

    frame = _frame().assign(truth=np.nan)
    m = classification_metrics(frame, ClassificationConfig(), MetricsConfig(bootstrap_resamples=0))
    fpr = m[m["metric"] == "false_positive_rate"]
    assert len(fpr) == 1 and "no ground truth" in fpr.iloc[0]["details"]["skipped"]
    assert _value(m, "predicted_prevalence", "a")["value"] == pytest.approx(0.5)


def test_verdict_by_simulation_is_mostly_fair_without_a_difference_and_unfair_with_one() -> None:
    """Simulated truth: equal approval probability (no disparity) vs 0.8 against 0.3 (a large one)."""
    from equilens.tasks.assessments.classification.stages import classification_metrics

    rng = np.random.default_rng(7)
    cfg, mcfg = ClassificationConfig(), MetricsConfig(bootstrap_resamples=300)

    def verdict(p_a: float, p_b: float, seed: int) -> str:
        n = 60
        rng = np.random.default_rng(seed)
        frame = pd.DataFrame({"grp": ["a"] * n + ["b"] * n,
                              "pred": np.r_[rng.random(n) < p_a, rng.random(n) < p_b].astype(float),
                              "truth": np.nan, "cluster": [f"c{i}" for i in range(2 * n)], "failed": False})
        m = classification_metrics(frame, cfg, mcfg.model_copy(update={"seed": seed}))
        return _value(m, "predicted_prevalence_difference", "a", "b")["details"]["verdict"]

    seeds = rng.integers(0, 10**6, 20)
    null = [verdict(0.5, 0.5, int(s)) for s in seeds]
    alt = [verdict(0.8, 0.3, int(s)) for s in seeds]
    assert null.count("unfair") <= 4  # ~5% expected at 95% confidence
    assert alt.count("unfair") >= 18


def test_items_need_a_group_column(tmp_path: Path) -> None:
    from equilens.tasks.assessments.classification.stages import load_items
    from equilens.tasks.config import PromptsConfig

    path = tmp_path / "p.csv"
    path.write_text("prompt\nShould we approve?\n")
    with pytest.raises(InputDataError, match="group"):
        load_items(PromptsConfig(path=str(path)), ClassificationConfig())
    path.write_text("prompt,group,label\nShould we approve?,a,maybe\n")
    with pytest.raises(InputDataError, match="ground truth 'maybe'"):
        load_items(PromptsConfig(path=str(path)), ClassificationConfig(labels=LABELS))


def _count(db: Path, sql: str, params: list) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).fetchone()[0]


def test_classification_flow_end_to_end(prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    from equilens.flows.running.dispatch import flow_for

    data = tmp_path / "items.csv"
    rows = ["case,group,label,prompt"]
    for case in range(6):
        truth = "approve" if case % 2 == 0 else "deny"
        for group, who in (("male", "a man"), ("female", "a woman")):
            rows.append(f'{case},{group},{truth},"Case {case}: {who} asks for a loan. Approve or deny?"')
    data.write_text("\n".join(rows) + "\n")

    def reply(body: dict) -> str:
        text = body["messages"][-1]["content"]
        if "Case 5" in text and "woman" in text:
            return "I am not sure."  # unparseable: counted for female, never dropped
        return "Sure. I would approve this one." if "woman" in text or "Case 0" in text else "Deny."

    openai_server.reply = reply
    cfg = parse_config({
        "name": "cls", "assessment": "classification",
        "prompts": {"path": str(data), "column": "prompt"},
        "classification": {"labels": LABELS, "attribute": "gender", "cluster_column": "case"},
        "llm": {"provider": "openai", "model": "fake", "base_url": openai_server.base_url, "max_retries": 0},
        "metrics": {"bootstrap_resamples": 50},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = flow_for(cfg)(cfg)
    db, run_id = tmp_path / "e.duckdb", result["run_id"]
    assert result["parsing"]["female"] == {"answers": 6, "parsed": 5, "unparsed": 1, "failed": 0}
    assert _count(db, "SELECT count(*) FROM responses WHERE run_id = ?", [run_id]) == 12
    # female: 5 parsed, all approve -> 1.0; male: approve only for case 0 -> 1/6
    with duckdb.connect(str(db), read_only=True) as con:
        got = dict(con.execute("SELECT group_a, value FROM metrics WHERE run_id = ? AND metric = 'predicted_prevalence'",
                               [run_id]).fetchall())
        unparsed = dict(con.execute("SELECT group_a, value FROM metrics WHERE run_id = ? AND metric = 'unparsed_rate'",
                                    [run_id]).fetchall())
        diff = con.execute("SELECT value, ci_low, ci_high, details->>'verdict' FROM metrics WHERE run_id = ? AND "
                           "metric = 'predicted_prevalence_difference' AND group_b IS NOT NULL", [run_id]).fetchone()
    assert got == pytest.approx({"female": 1.0, "male": 1 / 6})
    assert unparsed == pytest.approx({"female": 1 / 6, "male": 0.0})
    assert diff[0] == pytest.approx(1 - 1 / 6) and diff[1] is not None and diff[3] == "unfair"
    assert _count(db, "SELECT count(*) FROM metric_items WHERE run_id = ? AND item_kind = 'response'", [run_id]) == 12
    assert Path(result["report"]).is_file()

    # brought predictions: no model call at all
    preds = tmp_path / "preds.csv"
    preds.write_text("group,prediction,label\nmale,approve,approve\nmale,deny,approve\nfemale,approve,approve\n"
                     "female,approve,deny\n")
    calls = len(openai_server.requests)
    byo = parse_config({"name": "cls-byo", "assessment": "classification",
                        "classification": {"labels": LABELS, "predictions_path": str(preds)},
                        "metrics": {"bootstrap_resamples": 20},
                        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": None}})
    out = flow_for(byo)(byo)
    assert len(openai_server.requests) == calls
    with duckdb.connect(str(db), read_only=True) as con:
        fnr = dict(con.execute("SELECT group_a, value FROM metrics WHERE run_id = ? AND metric = 'false_negative_rate'",
                               [out["run_id"]]).fetchall())
    assert fnr == pytest.approx({"male": 0.5, "female": 0.0})  # male: truth-approve rows predicted deny 1 of 2
