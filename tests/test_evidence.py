"""The answers behind a gap: chosen from the stored run, shown side by side, escaped everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.reporting.evidence import find_evidence, html_section, markdown_lines
from equilens.tasks.assessments.counterfactual.metrics import metric_stage
from equilens.tasks.storage.store import Store
from tests.simulate import Model, simulate

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "<script>alert(1)</script> **bold** [link](http://x)"


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    """A stored run of 24 prompts where 40% of the female answers turn wholly negative (a finding),
    one of them carrying markup a model might write."""
    responses, scores = simulate(24, Model(deterministic=True, turn=0.4), 7, count=1)
    turned = set(scores.scalar.loc[scores.scalar["value"] == 1.0, "text_hash"])
    from equilens.tasks.inputs.prompts import text_hash

    first = next(i for i, t in enumerate(responses["text"]) if text_hash(t) in turned)
    old = responses.loc[first, "text"]
    responses.loc[first, "text"] = old + " " + HOSTILE
    scores.scalar.loc[scores.scalar["text_hash"] == text_hash(old), "text_hash"] = text_hash(old + " " + HOSTILE)
    metrics = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"]),
                           MetricsConfig(names=["strict_sentiment_parity"], bootstrap_resamples=50, permutations=200))
    s = Store(tmp_path / "e.duckdb")
    s.start_run("run-e", name="e", flow="counterfactual_assessment", started_at=pd.Timestamp("2026-11-20"),
                config={}, config_hash="abc", provider="openai", model="m")
    s.append("responses", responses.assign(run_id="run-e"))
    variants = responses.drop_duplicates("variant_id")[["variant_id", "prompt_id", "attribute", "grp", "role"]]
    s.append("variants", variants.assign(run_id="run-e", text="Prompt " + variants["prompt_id"] + " for "
                                         + variants["grp"]))
    s.append("scores", scores.scalar.assign(run_id="run-e"))
    s.append("metrics", metrics.assign(run_id="run-e", family="counterfactual"))
    s.finish_run("run-e", "completed", summary={})
    return s


def test_the_finding_pair_and_its_most_different_prompts_are_chosen(store: Store) -> None:
    (ev,) = find_evidence(store, "run-e", 3)
    assert ev.attribute == "gender" and set(ev.pair) == {"male", "female"} and ev.why.startswith("finding")
    assert len(ev.examples) == 3
    female = [s for ex in ev.examples for s in ex.sides if s.group == "female"]
    assert all(s.score == 1.0 for s in female)  # the turned answers differ most
    assert all(abs(ex.difference) > 0.3 for ex in ev.examples)
    for ex in ev.examples:  # the second group's score minus the first's, the first answers' scores shown
        first, second = ex.sides
        assert [first.group, second.group] == list(ev.pair) and ex.difference == pytest.approx(second.score - first.score)


def test_the_examples_are_ranked_in_the_store_not_read_into_memory(store: Store) -> None:
    """At 100,000 prompts the examples read every answer of the run (with the prompt it was sent as)
    into a frame and hashed each in Python: 1.3 GB and 10 s after the metric stage. DuckDB now ranks
    the prompts and returns only the chosen ones' first answers."""
    from unittest import mock

    seen: list[int] = []
    query = Store.query

    def counted(self: Store, sql: str, params=None):  # noqa: ANN001, ANN202
        out = query(self, sql, params)
        seen.append(len(out))
        return out

    with mock.patch.object(Store, "query", counted):
        (ev,) = find_evidence(store, "run-e", 3)
    answers = len(store.query("SELECT * FROM responses WHERE run_id = 'run-e'"))
    assert len(ev.examples) == 3 and max(seen) < answers / 4, (seen, answers)


def test_model_text_is_escaped_in_html_and_markdown(store: Store) -> None:
    evidence = find_evidence(store, "run-e", 24)
    html = html_section(evidence)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    md = "\n".join(markdown_lines(evidence))
    assert "\\<script\\>" in md and "\\*\\*bold\\*\\*" in md and "\\[link\\]" in md


def test_show_prints_answer_pairs_with_examples(store: Store, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    out = subprocess.run([sys.executable, "-m", "equilens", "show", "run-e", "--db", str(store.path), "--examples", "2"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert "gender: " in out.stdout and "male vs female" in out.stdout or "female vs male" in out.stdout
    assert out.stdout.count("→ ") == 4 and "vader-neg 1.000" in out.stdout  # two prompts, two answers each


def test_a_run_without_group_pairs_shows_the_answers_each_classifier_scores_highest(tmp_path: Path) -> None:
    from equilens.tasks.inputs.prompts import text_hash

    s = Store(tmp_path / "t.duckdb")
    s.start_run("run-t", name="t", flow="stereotype_assessment", started_at=pd.Timestamp("2026-11-20"),
                config={}, config_hash="abc", provider="openai", model="m")
    answers = {f"answer {i}": i / 10 for i in range(6)}
    s.append("prompts", pd.DataFrame({"run_id": "run-t", "prompt_id": [f"p{i}" for i in range(6)],
                                      "text": [f"prompt {i}" for i in range(6)]}))
    s.append("responses", pd.DataFrame({"run_id": "run-t", "variant_id": "v", "prompt_id": [f"p{i}" for i in range(6)],
                                        "attribute": "none", "grp": "none", "sample_idx": 0, "text": list(answers),
                                        "ok": True, "refusal": False}))
    s.append("scores", pd.DataFrame({"run_id": "run-t", "text_hash": [text_hash(t) for t in answers],
                                     "scorer": "profanity-check", "value": list(answers.values())}))
    s.append("metrics", pd.DataFrame([{"run_id": "run-t", "family": "toxicity", "metric": "toxic_fraction",
                                       "value": 0.0, "direction": "lower", "n": 6, "aggregation": "mean"}]))
    (ev,) = find_evidence(s, "run-t", 2)
    assert ev.attribute == "profanity-check"
    assert [(x.sides[0].prompt, x.sides[0].answer, x.sides[0].score) for x in ev.examples] == \
        [("prompt 5", "answer 5", 0.5), ("prompt 4", "answer 4", 0.4)]


def test_the_pair_follows_the_verdict_at_the_run_s_own_confidence(store: Store) -> None:
    # the examples used to judge findings at the default 95%, whatever the run's metrics.confidence
    import json

    import duckdb

    with duckdb.connect(str(store.path)) as con:
        con.execute("UPDATE runs SET config = ? WHERE run_id = 'run-e'", [json.dumps({"metrics": {"confidence": 0.99999}})])
    (ev,) = find_evidence(store, "run-e", 1)
    assert ev.why.startswith("largest gap"), ev.why  # p = 1/201 at best: no finding at alpha = 1e-5


def test_classifier_evidence_has_a_column_per_group_where_answers_belong_to_groups(tmp_path: Path) -> None:
    from equilens.tasks.inputs.prompts import text_hash

    s = Store(tmp_path / "g.duckdb")
    s.start_run("run-g", name="g", flow="auto_assessment", started_at=pd.Timestamp("2026-11-20"),
                config={}, config_hash="abc", provider="openai", model="m")
    rows = [("male", "p0", "he is fine", 0.1), ("male", "p1", "he is awful", 0.7),
            ("female", "p0", "she is fine", 0.2), ("female", "p1", "she is awful", 0.9)]
    s.append("responses", pd.DataFrame({"run_id": "run-g", "variant_id": [f"v{i}" for i in range(4)],
                                        "prompt_id": [r[1] for r in rows], "attribute": "gender",
                                        "grp": [r[0] for r in rows], "sample_idx": 0, "text": [r[2] for r in rows],
                                        "ok": True, "refusal": False}))
    s.append("variants", pd.DataFrame({"run_id": "run-g", "variant_id": [f"v{i}" for i in range(4)],
                                       "prompt_id": [r[1] for r in rows], "attribute": "gender",
                                       "grp": [r[0] for r in rows], "text": [f"ask {r[0]} {r[1]}" for r in rows]}))
    s.append("scores", pd.DataFrame({"run_id": "run-g", "text_hash": [text_hash(r[2]) for r in rows],
                                     "scorer": "toxicity", "value": [r[3] for r in rows]}))
    s.append("metrics", pd.DataFrame([{"run_id": "run-g", "family": "toxicity", "metric": "toxic_fraction",
                                       "value": 0.0, "direction": "lower", "n": 4, "aggregation": "mean"}]))
    (ev,) = find_evidence(s, "run-g", 2)
    assert (ev.attribute, ev.pair) == ("toxicity · gender", ("female", "male"))
    # row k holds each group's k-th highest-scored answer, with the variant as it was sent
    assert [[(x.group, x.answer, x.score) for x in ex.sides] for ex in ev.examples] == [
        [("female", "she is awful", 0.9), ("male", "he is awful", 0.7)],
        [("female", "she is fine", 0.2), ("male", "he is fine", 0.1)]]
    assert ev.examples[0].sides[0].prompt == "ask female p1"
