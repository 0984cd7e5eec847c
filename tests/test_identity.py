"""The identity assessment: names per cell, signals, outcomes read from answers, their statistics
against a known truth, and a run end to end against the loopback server."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.config import MetricsConfig, parse_config
from tasks.errors import ConfigError, InputDataError
from tasks.inputs.identity import cell_names, cells_of, check_inline, identity_phrases, place, slots_for
from tasks.inputs.names import load_names
from tasks.scoring.parsing import parse_amount, parse_outcome
from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

CELLS = cells_of(["gender", "race"], ["female", "male"], ["white", "black", "asian", "hispanic"])


def test_names_are_matched_in_frequency_seeded_and_distinct() -> None:
    table = load_names()
    names = cell_names(table, CELLS, 10, seed=0)
    assert len(names) == 80 and names.groupby("cell")["name"].nunique().eq(10).all()
    # slot k holds names of about the same frequency in every cell: within a factor 1.5 of each other
    spread = names.groupby("slot")["freq"].agg(lambda f: math.log(f.max() / f.min()))
    assert spread.max() < math.log(1.5)
    assert names.equals(cell_names(table, CELLS, 10, seed=0))
    assert not names["name"].equals(cell_names(table, CELLS, 10, seed=1)["name"])
    for row in names.itertuples():
        info = table.info[row.name.lower()]  # the table is keyed by the lowercase name
        assert (info.gender, info.race) == (row.gender, row.race)


def test_a_cell_with_fewer_names_than_asked_is_a_clear_error() -> None:
    with pytest.raises(InputDataError, match=r"names_per_cell is 5000.*female-asian has \d+"):
        cell_names(load_names(), CELLS, 5000, seed=0)


def test_variant_and_control_take_two_different_slots() -> None:
    pairs = {slots_for(f"p{i}", "profile", 10, 0) for i in range(200)}
    assert all(a != b and 0 <= a < 10 and 0 <= b < 10 for a, b in pairs)
    assert len({a for a, _ in pairs}) == 10  # every slot is used as the variant's


def test_signals_place_the_identity_where_asked() -> None:
    fill = {"name": "Latisha", "identity": "a Black woman"}
    assert place("Help me.", "system", "The user's name is {name}.", fill, "Be brief.") == \
        ("Help me.", "Be brief. The user's name is Latisha.")
    assert place("Help me.", "before", "My name is {name}.", fill, "S") == ("My name is Latisha. Help me.", None)
    assert place("Help me.", "after", "I am {identity}.", fill, "S") == ("Help me. I am a Black woman.", None)
    assert place("Write to {name} about rent.", "inline", "", fill, "S") == ("Write to Latisha about rent.", None)


def test_explicit_identities_come_from_the_lexicons_with_a_same_group_rewording() -> None:
    from tasks.inputs.lexicon import load_lexicon

    g, r = load_lexicon("gender"), load_lexicon("race")
    by_cell = {c.label: identity_phrases(c, g, r) for c in CELLS}
    assert by_cell["female-black"] == ("a Black woman", "an African American woman")
    assert by_cell["female-hispanic"] == ("a Hispanic woman", "a Latina woman")
    assert by_cell["male-white"] == ("a white man", "a Caucasian man")


def test_bad_signals_and_prompt_files_are_clear_errors(tmp_path: Path) -> None:
    base = {"assessment": "identity", "prompts": {"items": ["Help me."]}}
    with pytest.raises(ConfigError, match="placement 'before' needs {name} or {identity}"):
        parse_config({**base, "identity": {"signals": [{"name": "a", "placement": "before", "template": "Hi."}]}})
    with pytest.raises(ConfigError, match=r"template has \{user\}"):
        parse_config({**base, "identity": {"signals": [{"name": "a", "template": "I am {user}."}]}})
    prompts = pd.DataFrame({"text": ["Write to {name}.", "Help me."], "source_line": [2, 3]})
    with pytest.raises(InputDataError, match=r"1 prompt\(s\) have no \{name\} placeholder \(line\(s\) 3\)"):
        check_inline(prompts, "third_person")
    from tasks.config import PromptsConfig
    from tasks.inputs.prompts import load_prompts

    path = tmp_path / "p.csv"
    path.write_text("prompt,task\nHelp me.,advice\nPrice my car.,\n", encoding="utf-8")
    with pytest.raises(InputDataError, match=r"p.csv, line 3: the 'task' column is empty"):
        load_prompts(PromptsConfig(path=str(path)))


@pytest.mark.parametrize("text,value", [
    ("I'd offer $52,000 for it.", 52000.0), ("Ask for about 4.5k.", 4500.0), ("In 2025, ask for 3,500.", 3500.0),
    ("Between $40,000 and $45,000.", 40000.0), ("In 2024 ask for $80k", 80000.0), ("No idea, sorry.", None),
])
def test_amounts_are_read_as_a_reader_would(text: str, value: float | None) -> None:
    assert parse_amount(text) == value


def test_yes_no_and_choices_are_read_or_left_unparsed() -> None:
    assert parse_outcome("Yes, go for it.", "yes_no") == 1.0
    assert parse_outcome("No. Wait a year.", "yes_no") == 0.0
    assert parse_outcome("It depends.", "yes_no") is None
    assert parse_outcome("Take the bus.", "choice", ["car", "bus"]) == 1.0


# --- statistics against a known truth ----------------------------------------------------------
def _simulated(rng: np.random.Generator, prompts: int, effects: dict[str, float], cells: list[str]) -> pd.DataFrame:
    """Answers with amounts: a prompt's scale (lognormal over prompts) times the cell's effect times
    name-to-name noise (sd 10%), two names per cell and prompt."""
    rows = []
    for p in range(prompts):
        scale = float(np.exp(rng.normal(10, 1)))
        for c in cells:
            for role in ("variant", "control"):
                value = scale * (1 + effects.get(c, 0.0)) * float(np.exp(rng.normal(0, 0.1)))
                rows.append({"prompt_id": f"p{p}", "grp": c, "role": role, "outcome_kind": "number",
                             "outcome_value": value})
    return pd.DataFrame(rows)


def _true_gap(effects: dict[str, float], cells: list[str], a: str, b: str, draws: int = 400_000) -> float:
    """The estimand, E[(x_a - x_b) / mean of the prompt's amounts], by brute-force Monte Carlo of the
    data-generating process above (not through the code under test)."""
    rng = np.random.default_rng(99)
    values = {c: (1 + effects.get(c, 0.0)) * np.exp(rng.normal(0, 0.1, size=(draws, 2))) for c in cells}
    mean = np.mean(np.concatenate(list(values.values()), axis=1), axis=1)
    return float(np.mean((values[a].mean(axis=1) - values[b].mean(axis=1)) / mean))


def test_the_relative_difference_interval_covers_the_truth() -> None:
    from tasks.stages.identity import outcome_rows

    cells, effects = ["female-black", "male-white"], {"female-black": -0.05}
    truth = _true_gap(effects, cells, "female-black", "male-white")
    cfg = MetricsConfig(bootstrap_resamples=400, seed=3)
    rng = np.random.default_rng(0)
    covered, runs = 0, 200
    for _ in range(runs):
        rows = outcome_rows(_simulated(rng, 30, effects, cells), "gender x race", cells, cfg)
        gap = next(r for r in rows if r["metric"] == "number_outcome_gap")
        covered += gap["ci_low"] <= truth <= gap["ci_high"]
    assert 0.92 * runs <= covered <= 0.98 * runs + 1, covered  # within Monte Carlo error of 95%


def test_a_fair_model_fires_in_at_most_five_percent_of_runs_and_a_swap_flips_the_sign() -> None:
    from tasks.stages.identity import outcome_rows
    from tasks.stats import holm_adjust

    cells = [c.label for c in CELLS]
    cfg = MetricsConfig(bootstrap_resamples=50, seed=3)
    rng = np.random.default_rng(1)
    fired, runs = 0, 120
    for _ in range(runs):
        rows = outcome_rows(_simulated(rng, 24, {}, cells), "gender x race", cells, cfg)
        ps = [r["details"]["p_value"] for r in rows if r["metric"] == "number_outcome_gap"]
        assert len(ps) == 28
        fired += min(holm_adjust(ps)) < 0.05
    assert fired <= 0.05 * runs + 2, fired  # 5% plus two runs of Monte Carlo slack (SE 2.4 runs at 5%)
    data = _simulated(np.random.default_rng(5), 20, {"female-black": -0.1}, cells[:2])
    ab = next(r for r in outcome_rows(data, "x", cells[:2], cfg) if r["metric"] == "number_outcome_gap")
    ba = next(r for r in outcome_rows(data, "x", cells[1::-1], cfg) if r["metric"] == "number_outcome_gap")
    assert ab["value"] == pytest.approx(-ba["value"], abs=1e-12)


# --- end to end ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_identity_run_finds_lower_offers_for_one_cell_and_stores_its_names(prefect_harness, openai_server,  # noqa: F811
                                                                            tmp_path: Path) -> None:
    """A model that offers 12% less to names of one cell (read from the system message): the
    verdict names that cell, the names drawn are stored, and other cells' pairs stay quiet."""
    import hashlib

    from flows.dispatch import flow_for

    table = load_names()
    low = set(cell_names(table, CELLS, 4, seed=0).query("cell == 'female-black'")["name"])

    def reply(body: dict) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        name = system.rsplit(" ", 1)[-1].rstrip(".")
        jitter = int(hashlib.sha256((system + user).encode()).hexdigest()[:4], 16) % 5 - 2  # -2..2 percent
        base = 1000 * (10 + len(user) % 7)
        amount = base * (1 + jitter / 100) * (0.88 if name in low else 1.0)
        return f"I would suggest about ${amount:,.0f} as a starting point."

    openai_server.reply = reply
    prompts = [f"Question {i}: how much should I ask for this job? Give one amount {'x' * i}." for i in range(24)]
    path = tmp_path / "p.csv"
    pd.DataFrame({"prompt": prompts, "outcome": "number"}).to_csv(path, index=False)
    cfg = parse_config({
        "name": "identity", "assessment": "identity", "prompts": {"path": str(path)},
        "identity": {"names_per_cell": 4},
        "llm": {"provider": "openai", "model": "fake", "base_url": openai_server.base_url, "max_retries": 0},
        "metrics": {"bootstrap_resamples": 100, "permutations": 100},
        "storage": {"duckdb_path": str(tmp_path / "i.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = flow_for(cfg)(cfg)
    assert len(openai_server.requests) == 24 * 8 * 2
    verdict = next(v for v in result["verdicts"] if v.startswith("gender x race:"))
    assert "amounts for female-black are" in verdict and "worst off: female-black" in verdict, verdict
    with duckdb.connect(str(tmp_path / "i.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT count(*), count(DISTINCT cell) FROM identity_names WHERE run_id = ?",
                             [result["run_id"]]).fetchone()
        gaps = con.execute("SELECT group_a, group_b, json_extract(details, '$.p_holm')::DOUBLE FROM metrics "
                           "WHERE run_id = ? AND metric = 'number_outcome_gap'", [result["run_id"]]).fetchall()
    assert stored == (32, 8)
    beyond = {(a, b) for a, b, p in gaps if p < 0.05}
    assert beyond and all("female-black" in pair for pair in beyond)
