"""The answers behind a gap: chosen from the stored run, shown side by side, escaped everywhere."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.pipeline.metric_stage import metric_stage
from equilens.tasks.reporting.evidence import find_evidence, html_section, markdown_lines
from equilens.tasks.storage.store import Store

from tests.fakes.cli import equilens
from tests.fakes.runs import seed_identity_run
from tests.simulate import Model, simulate

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

    def counted(self: Store, sql: str, params=None):
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
    assert "&lt;script&gt;" in md and "\\*\\*bold\\*\\*" in md and "\\[link\\]" in md


def test_show_prints_answer_pairs_with_examples(store: Store, tmp_path: Path) -> None:
    out = equilens("show", "run-e", "--db", str(store.path), "--examples", "2", cwd=tmp_path, columns=120)
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
    # the examples judge findings at the run's own metrics.confidence, not at a default 95%
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


# --- an identity run (tests.fakes.runs): its examples are chosen and shown by the outcome read from each answer
@pytest.fixture()
def identity(tmp_path: Path) -> Store:
    s = Store(tmp_path / "i.duckdb")
    seed_identity_run(s)
    return s


def test_an_identity_run_shows_the_outcome_finding_pair_ranked_by_its_readings(identity: Store) -> None:
    (ev,) = find_evidence(identity, "run-i", 4)
    # the outcome finding with the largest gap, not the sentiment finding listed first
    assert (ev.attribute, ev.pair, ev.why) == ("gender x race", ("female-black", "male-white"),
                                               "finding (number_outcome_gap)")
    # amount prompts only, by how far the cells' amounts differ relative to the prompt's mean; then
    # the prompt where they differ only in an unreadable answer
    assert [ex.prompt_id for ex in ev.examples] == ["p1", "p2", "p0", "p3"]
    assert ev.examples[0].difference == pytest.approx((54_000 - 37_800) / ((37_800 * 2 + 54_000 * 2) / 4))
    low, high = ev.examples[1].sides
    assert (low.group, low.profile, low.reading) == ("female-black", "name: Lakisha Washington", "read: $46,400 (year)")
    assert low.prompt.startswith("I'm Lakisha Washington.") and "$46,400" in low.answer
    assert high.reading == "read: $58,000 (year)"
    assert ev.examples[0].sides[1].reading == "read: $50k to $58k (year) → 54,000 per year"
    assert ev.examples[3].sides[0].reading == "unreadable: no_figure"
    assert all(s.score is None for ex in ev.examples for s in ex.sides)


def test_identity_readings_are_shown_beside_the_answers_everywhere(identity: Store, capsys, monkeypatch) -> None:
    from equilens.tasks.reporting.evidence import print_examples

    evidence = find_evidence(identity, "run-i", 4)
    html = html_section(evidence)
    assert "<div class=reading>read: $46,400 (year)</div>" in html and "unreadable: no_figure" in html
    assert "&lt;b&gt;Negotiate&lt;/b&gt;" in html and "<b>Negotiate</b>" not in html
    assert "answers' readings" in html  # the section says how the prompts were chosen
    md = "\n".join(markdown_lines(evidence))
    assert "→ I would ask for $46,400. &lt;b&gt;Negotiate&lt;/b&gt; \\*firmly\\*.  \n  *read: $46,400 (year)*" in md
    assert "*unreadable: no\\_figure*" in md
    monkeypatch.setenv("COLUMNS", "200")
    print_examples(evidence)
    out = capsys.readouterr().out
    assert "[read: $46,400 (year)]" in out and "[unreadable: no_figure]" in out and "Lakisha Washington" in out


def test_the_largest_outcome_gap_is_shown_when_no_outcome_gap_is_a_finding(identity: Store) -> None:
    import duckdb

    with duckdb.connect(str(identity.path)) as con:
        con.execute("UPDATE metrics SET details = json_merge_patch(details, '{\"p_holm\": 0.9}') "
                    "WHERE metric = 'number_outcome_gap'")
    (ev,) = find_evidence(identity, "run-i", 2)
    # the yes-rate gap of -0.25 is the largest now: its pair, shown by its yes/no prompts
    assert (ev.pair, ev.why) == (("female-black", "male-white"), "largest gap (yes_rate_gap), not a finding")
    assert [ex.prompt_id for ex in ev.examples] == ["p4", "p5"]
    assert [s.reading for s in ev.examples[0].sides] == ["read: no", "read: yes"]
    assert ev.examples[0].difference == 1.0


def test_a_choice_is_read_as_its_option_and_an_amount_in_another_period_with_its_conversion() -> None:
    from equilens.tasks.reporting.readings import reading_text

    assert reading_text({"kind": "choice", "value": 1.0, "figure": "rent", "outcome": "choice: buy | rent"}) == \
        "read: option 'rent'"
    assert reading_text({"kind": "number", "value": 60_000.0, "figure": "$5,000", "unit": "month",
                         "outcome": "number: year"}) == "read: $5,000 (month) → 60,000 per year"
    assert reading_text({"kind": "yes_no", "value": None, "reason": "hedged"}) == "unreadable: hedged"
    assert reading_text({"kind": None, "value": None}) is None  # an answer to a prompt without an outcome


@pytest.mark.parametrize("fixture, run_id", [("store", "run-e"), ("identity", "run-i")])
def test_a_subject_s_first_examples_are_those_found_when_fewer_are_asked(fixture: str, run_id: str,
                                                                        request: pytest.FixtureRequest) -> None:
    from equilens.tasks.reporting.evidence import first_examples

    s = request.getfixturevalue(fixture)
    three = find_evidence(s, run_id, 3)
    assert any(len(ev.examples) == 3 for ev in three)
    assert first_examples(three, 2) == find_evidence(s, run_id, 2)


def test_a_run_s_close_finds_its_examples_once_for_the_markdown_artifact_and_the_report(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.flows.running import artifacts
    from equilens.flows.running.artifacts import close_run, run_result
    from equilens.tasks.config import RunConfig
    from equilens.tasks.reporting import evidence as evidence_module
    from equilens.tasks.reporting.html import build_html_report

    found = []
    real = evidence_module.find_evidence

    def counted(*args, **kwargs):
        found.append(args[2:] or kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(evidence_module, "find_evidence", counted)
    markdown = []
    monkeypatch.setattr(artifacts, "publish_artifacts", lambda run_id, metrics, text: markdown.append(text))
    monkeypatch.setattr("prefect.artifacts.create_link_artifact", lambda **_: None)
    config = RunConfig(prompts={"items": ["a"]}, storage={"duckdb_path": str(tmp_path / "e.duckdb"),
                                                          "reports_dir": str(tmp_path / "runs")})
    metrics = store.query("SELECT * FROM metrics WHERE run_id = ?", ["run-e"])
    summary: dict = {}
    judged, examples = close_run(store, "run-e", config, summary, metrics, pd.DataFrame())  # type: ignore[arg-type]
    report = run_result(store, "run-e", config, summary, judged, examples)["report"]  # type: ignore[arg-type]
    assert len(found) == 1  # the report shows what the close found
    assert "\n".join(markdown_lines(find_evidence(store, "run-e", 2))) in markdown[0]  # the artifact, its first two
    html = Path(report).read_text(encoding="utf-8")
    section = html[html.index("<section id=examples>"):]
    fresh = build_html_report(store, "run-e")  # found again, as `equilens report` does
    assert len(found) == 2 and section[:section.index("</section>")] in fresh
