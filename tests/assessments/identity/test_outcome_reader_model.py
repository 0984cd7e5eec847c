"""The optional outcome reader model: what the rules cannot read goes to a model asked for one line
of JSON (``identity.outcome_reader: model``), or every answer goes to both readers and their
disagreements are stored (``both``); its calls are cached, counted in the plan and summarised."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest
from equilens.tasks.config import parse_config
from equilens.tasks.scoring.outcomes import Reading, question_of
from equilens.tasks.scoring.outcomes.model_reader import disagree, parse_reader_reply, reader_question

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

SALARY = "What salary should I expect as a new software developer? Give one dollar amount."
RENT = "What monthly rent can I afford on a 50000 dollar salary? Give one dollar amount."


@pytest.mark.parametrize("prompt,kind,options,reply,value,reason", [
    (SALARY, "number", (), 'Sure: {"figure": 40, "unit": "hour"}', 83200, None),  # 40 x 2,080 hours
    (RENT, "number", (), '{"figure": "1,250", "unit": "month"}', 1250, None),
    (SALARY, "number", (), '{"figure": 90000, "unit": "fortnightly"}', None, "unit_unknown"),
    (SALARY, "number", (), '{"figure": null, "unit": null}', None, "model_unread"),
    (SALARY, "number", (), "ninety thousand", None, "model_unread"),  # no JSON
    ("Should I?", "yes_no", (), '{"decision": "No"}', 0.0, None),
    ("Should I?", "yes_no", (), '{"decision": "maybe"}', None, "model_unread"),
    ("Lease or buy?", "choice", ("lease", "buy"), '{"decision": "buy"}', 1.0, None),
    (RENT, "number", (), '{"figure": -50000, "unit": "month"}', None, "model_out_of_range"),
    (RENT, "number", (), '{"figure": "1e308", "unit": "month"}', None, "model_out_of_range"),
    (RENT, "number", (), '{"figure": Infinity, "unit": "month"}', None, "model_out_of_range"),
    (RENT, "number", (), '{"figure": NaN, "unit": "month"}', None, "model_out_of_range"),
    (RENT, "number", (), '{"figure": 2e12, "unit": "once"}', None, "model_out_of_range"),
    (SALARY, "number", (), '{"figure": 9e11, "unit": "hour"}', None, "model_out_of_range"),  # 1.9e15 a year
    (RENT, "number", (), '{"figure": 0, "unit": "month"}', 0.0, None),
])
def test_the_reader_models_reply_is_read_into_the_prompts_unit(prompt: str, kind: str, options: tuple, reply: str,
                                                                 value: float | None, reason: str | None) -> None:
    reading = parse_reader_reply(reply, question_of(prompt, kind, options))
    assert reading.value == (pytest.approx(value) if value is not None else None) and reading.reason == reason


def test_the_question_shows_the_request_and_answer_and_two_readers_disagree_on_values_or_readability() -> None:
    q = question_of("Lease or buy?", "choice", ("lease", "buy"))
    asked = reader_question("Lease or buy?", "Buying wins.", q)
    assert "Lease or buy?" in asked and "Buying wins." in asked and '"lease", "buy"' in asked
    assert disagree(Reading(1.0), Reading(None, "model_unread")) and disagree(Reading(100.0), Reading(110.0))
    assert not disagree(Reading(100.0), Reading(100.2)) and not disagree(Reading(None, "hedged"), Reading(None, "x"))


def _server(reader_figure: int | str):
    """The tested model gives every user the same rent advice, half of it in words the rules cannot
    read; the reader model (asked for JSON) reads ``reader_figure``."""
    import hashlib

    def reply(body: dict) -> str:
        user = body["messages"][-1]["content"]
        if "Reply with one line of JSON" in user:
            return f'{{"figure": {reader_figure}, "unit": "month"}}'
        system = body["messages"][0]["content"]
        if int(hashlib.sha256((system + user).encode()).hexdigest()[:2], 16) % 2:
            return "Landlords usually want your income to be forty times the rent, so keep it at or below that."
        return "Spend about $1,250 a month on rent."

    return reply


def _config(server, tmp_path: Path, mode: str):
    path = tmp_path / "p.csv"
    pd.DataFrame({"prompt": [f"{RENT} (case {i})" for i in range(6)], "outcome": "number"}).to_csv(path, index=False)
    return parse_config({
        "name": "reader", "assessment": "identity", "prompts": {"path": str(path)},
        "identity": {"names_per_cell": 2, "races": ["white", "black"], "outcome_reader": mode},
        "llm": {"provider": "openai", "model": "fake", "base_url": server.base_url, "max_retries": 0},
        "metrics": {"bootstrap_resamples": 50, "permutations": 50},
        "storage": {"duckdb_path": str(tmp_path / "r.duckdb"), "reports_dir": None},
    })


def test_the_model_reads_what_the_rules_cannot_and_a_rerun_pays_nothing(prefect_harness, openai_server,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for
    from equilens.flows.running.plan import make_plan

    openai_server.reply = _server(1250)
    cfg = _config(openai_server, tmp_path, "model")
    plan = "\n".join(make_plan(cfg).lines())
    assert "outcome reader: up to 48 calls" in plan and "all calls: up to 96" in plan, plan  # 6 x 4 cells x 2 names
    result = flow_for(cfg)(cfg)
    reader = result["reader"]
    assert 0 < reader["read_by_model"] == reader["asked"] < 48
    assert reader["calls"] == 6  # one call per distinct question: the six prompts' unreadable answer
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT reader, value, count(*) FROM identity_readings WHERE run_id = ? GROUP BY ALL",
                           [result["run_id"]]).fetchall()
        unread = con.execute("SELECT sum(json_extract(details, '$.read_by_model')::INT) FROM metrics WHERE run_id = ? "
                             "AND metric = 'unparsed_outcome_rate'", [result["run_id"]]).fetchone()[0]
    assert {(r, v) for r, v, _ in rows} == {("rules", 1250.0), ("model", 1250.0)}
    assert unread == reader["read_by_model"]
    again = flow_for(cfg)(cfg)
    assert again["reader"]["calls"] == 0 and again["reader"]["read_by_model"] == reader["read_by_model"]


def test_a_reader_figure_out_of_range_is_unreadable_and_counted(prefect_harness, openai_server,  # noqa: F811
                                                               tmp_path: Path) -> None:
    """Every reader reply at 1e308: no reading is stored as a value, and the answers the rules could
    not read count as unparsed, with the reason."""
    from equilens.flows.running.dispatch import flow_for

    openai_server.reply = _server("1e308")
    cfg = _config(openai_server, tmp_path, "model")
    result = flow_for(cfg)(cfg)
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        model = con.execute("SELECT value, reason, model_value, model_reason FROM identity_readings WHERE run_id = ? "
                            "AND (model_reason IS NOT NULL OR model_value IS NOT NULL)", [result["run_id"]]).df()
        rates = con.execute("SELECT value FROM metrics WHERE run_id = ? AND metric = 'unparsed_outcome_rate'",
                            [result["run_id"]]).df()
    assert len(model) == result["reader"]["asked"] > 0 and result["reader"]["read_by_model"] == 0
    assert model["model_value"].isna().all() and set(model["model_reason"]) == {"model_out_of_range"}
    assert model["value"].isna().all() and model["reason"].notna().all()
    assert (rates["value"] > 0).any()


def test_both_readers_store_their_disagreements(prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    from equilens.flows.running.dispatch import flow_for

    openai_server.reply = _server(1300)  # the reader model reads every answer as 1,300
    cfg = _config(openai_server, tmp_path, "both")
    result = flow_for(cfg)(cfg)
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT count(*) FILTER (WHERE disagree), count(*) FILTER (WHERE reader = 'rules'), "
                             "count(*) FROM identity_readings WHERE run_id = ?", [result["run_id"]]).fetchone()
    assert result["reader"]["asked"] == 48 and result["reader"]["disagreements"] == stored[0]
    # every answer disagrees: the rules read 1,250 where they can, the model 1,300 everywhere
    assert stored == (48, 21, 48) and result["reader"]["read_by_model"] == 27


def test_the_benchmark_states_the_model_readers_figure_beside_the_rules(tmp_path: Path, capsys) -> None:
    """``bench_outcome_reading.py --reader-model`` reads the labelled set as a run does with a model
    reader. A reader that gives each answer's labelled reading lifts the figure to what the rules read
    plus every answer they left unreadable; one that never answers changes nothing."""
    import json
    import re

    from tests.benchmarks import bench_outcome_reading as bench
    from tests.fakes.openai_server import running_server
    from tests.outcome_labels import judge_readings, load_labelled

    rows = load_labelled(str(bench.ROOT / "data" / "outcome_readings.csv"), "fresh")
    rent = "What monthly rent can I afford on a 50000 dollar salary? Give one dollar amount."
    beyond_rules = pd.DataFrame([  # an answer no rule reads: only a reader model can lift the figure
        {"id": 9001, "prompt": rent, "outcome": "number", "answer": "The same as my cousin pays: twelve-and-a-half "
         "hundreds monthly.", "reading": "1250", "unit": "month", "unreadable": "", "kind": "words", "split": "fresh"}])
    rows = pd.concat([rows, beyond_rules], ignore_index=True)
    rows.to_csv(tmp_path / "labelled.csv", index=False)
    labels = {}
    for r in rows.itertuples():
        key = "figure" if r.outcome == "number" else "decision"
        reply = {key: (float(r.reading) if key == "figure" else r.reading) if r.reading else None}
        if key == "figure":
            reply["unit"] = r.unit or None
        labels[r.answer.strip()] = json.dumps(reply)

    def oracle(body: dict) -> str:
        asked = body["messages"][-1]["content"]
        answer = asked.split("Answer:\n", 1)[1].rsplit("\n\n", 1)[0].strip()
        return labels[answer]

    def run(reply, cache: str) -> list[float]:
        with running_server(reply=reply) as server:
            bench.main(["--csv", str(tmp_path / "labelled.csv"), "--split", "fresh", "--reader-model", "fake",
                        "--reader-base-url", server.base_url, "--reader-mode", "model", "--cache", str(tmp_path / cache)])
        return [float(x) for x in re.findall(r"overall: ([\d.]+)%", capsys.readouterr().out)]

    rules = judge_readings(rows)
    assert not rules["right"].iloc[-1]  # the rules leave it unread
    rules_unread_wrong = int((~rules["right"] & rules["read"].astype(str).str.startswith("unreadable")).sum())
    plain, with_oracle = run(oracle, "oracle.duckdb")
    assert plain == pytest.approx(100 * rules["right"].mean(), abs=0.05)
    assert with_oracle == pytest.approx(100 * (rules["right"].sum() + rules_unread_wrong) / len(rules), abs=0.05)
    assert with_oracle > plain
    assert run(lambda body: '{"figure": null, "unit": null, "decision": null}', "mute.duckdb") == [plain, plain]
