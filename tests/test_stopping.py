"""Runs that stop once the verdict is settled (``execution.stop_when: settled``): the rule's levels
worked out by hand, simulated runs against a known truth (false positives, power, calls saved),
and the counterfactual and identity flows end to end against the loopback server, from the
command line and from Python."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from equilens.tasks.config import parse_config
from equilens.tasks.errors import ConfigError
from equilens.tasks.pipeline.settling import LookRule, judge_look, reachable_gap
from equilens.tasks.reporting.verdict import attribute_verdict
from equilens.tasks.stats.sequential import holm_levels, obrien_fleming_plan

from tests.fakes.mood_config import mood_config, mood_reply
from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture
from tests.simulate_looks import LABEL, Model, outcome_rows, simulate, stated_gap

FIVE = (0.2, 0.4, 0.6, 0.8, 1.0)


# --- the rule -------------------------------------------------------------------------------------
def test_the_holm_step_down_over_looks_is_worked_out_by_hand() -> None:
    """At look 3 of 5 the smallest of three p-values faces the look's level of a plan at 0.05/3, the
    next one of a plan at 0.05/2, the last the plan at 0.05; the step-down stops at the first p
    at or above its level, and the ones after that face nothing (0)."""
    third, half, whole = (obrien_fleming_plan(FIVE, a).nominal_alpha(2) for a in (0.05 / 3, 0.025, 0.05))
    assert whole == pytest.approx(0.01065, abs=2e-5) and third < half < whole
    assert holm_levels([0.0001, 0.2, 0.001], FIVE, 2) == [third, whole, half]
    assert holm_levels([0.0001, 0.2, 0.3], FIVE, 2) == [third, half, 0.0]
    assert holm_levels([0.5, 0.6], FIVE, 0)[1] == 0.0


def test_a_look_judges_its_rows_at_the_spent_level_not_at_alpha() -> None:
    """A pair with p = 0.0446 is beyond noise in a run judged once (0.0446 < 0.05) but not at look 1
    of 5, whose level is about 1e-5, nor at the last (0.0389: alpha 0.05 spent over five looks, the
    plan at 0.05 for a family of one pair); the rows say so, and the last look states its reason."""
    a = [1.0, -0.4, 0.9, 0.2, -0.3, 0.8, 0.4, -0.1, 0.7, 0.1, 0.6, -0.1]
    rows = outcome_rows(pd.DataFrame({"a": a, "b": [0.0] * 12}).to_numpy())
    p = rows["details"][0]["p_value"]
    assert p == pytest.approx(0.044579, abs=1e-5) and attribute_verdict("gender x race", rows).beyond_noise
    rule = LookRule(5, 0.05)
    early, settled = judge_look(rows, rule, 1, 12, 60)
    assert not settled.stops and settled.open == ["gender x race: cell0 vs cell1"]
    assert early["details"][0]["look"]["level"] == pytest.approx(obrien_fleming_plan(FIVE).nominal_alpha(0))
    assert attribute_verdict("gender x race", early).beyond_noise is False
    last, settled = judge_look(rows, rule, 5, 60, 60)
    assert last["details"][0]["look"]["level"] == pytest.approx(0.0389, abs=2e-4)
    assert settled.stops and settled.found == [] and settled.open == ["gender x race: cell0 vs cell1"]
    sentence = attribute_verdict("gender x race", last).sentence
    assert "Judged at look 5 of 5, on 60 of 60 prompts, at the alpha spent by then: every planned prompt" in sentence


# --- what settles a run: the headline, breakdowns, targets out of reach ---------------------------
ADVICE = f"{LABEL} | advice"
YES_NO = ("number_outcome_gap", "yes_rate_gap")


def _rows(values: object, label: str = LABEL, metric: str = "number_outcome_gap") -> pd.DataFrame:
    """One comparison's pair rows (cell0 vs cell1) over per-prompt values (prompts x 2 cells)."""
    return outcome_rows(np.asarray(values, float)).assign(attribute=label, metric=metric)


def test_a_breakdown_is_reported_at_the_stopping_look_but_never_holds_the_run_open() -> None:
    """The headline pair differs (found at look 3 of 5); the advice breakdown, six prompts of a fair
    model, is still open. Counted as a comparison of its own it holds the run open; as a breakdown
    it is judged at the same look, at its level, and reported where the run stops."""
    rng = np.random.default_rng(1)
    level = rng.normal(0, 2, (30, 1))
    rows = pd.concat([_rows(level + [1.0, 0.0] + rng.normal(0, 0.5, (30, 2))),
                      _rows(level[:6] + rng.normal(0, 0.5, (6, 2)), ADVICE)], ignore_index=True)
    rule = LookRule(5, 0.05, None, ("number_outcome_gap",))
    _, waited = judge_look(rows, rule, 3, 30, 50)
    assert not waited.stops and waited.open == [f"{ADVICE}: cell0 vs cell1"], waited
    judged, settled = judge_look(rows, replace(rule, breakdowns=frozenset({ADVICE})), 3, 30, 50)
    assert settled.stops and settled.settled and settled.found == [f"{LABEL}: cell0 vs cell1"] and not settled.open
    assert settled.breakdowns == [f"{ADVICE}: cell0 vs cell1"] and settled.breakdowns_found == []
    assert "breakdowns, reported at this look and not waited for: 0 of 1 pair(s) beyond noise" in settled.reason()
    advice = judged[judged["attribute"] == ADVICE]
    assert advice["details"].iloc[0]["look"]["level"] > 0
    assert "Judged at look 3 of 5, on 30 of 50 prompts" in attribute_verdict(ADVICE, advice).sentence


def test_a_pair_with_no_value_in_the_targets_units_is_out_of_reach_at_once() -> None:
    """A writing task's pair has parity rows but no amount or yes rate: with a plan that gives its
    comparison no prompt of either, it is out of reach of a gap of 0.1 at look 1. Without a plan, or
    with amounts still to come, it stays open."""
    rows = pd.DataFrame([{"family": "identity", "attribute": f"{LABEL} | writing", "group_a": "cell0",
                          "group_b": "cell1", "metric": "strict_sentiment_parity", "value": 0.1,
                          "details": {"gap": 0.0, "p_value": 0.5, "p_method": "permutation", "prompts": 4,
                                      "noise_floor": 0.1}}])
    rule = LookRule(5, 0.05, 0.1, YES_NO)
    writing = f"{LABEL} | writing"
    _, none = judge_look(rows, replace(rule, planned=((writing, YES_NO[0], 0), (writing, YES_NO[1], 0))), 1, 8, 40)
    assert none.futile == [f"{writing}: cell0 vs cell1"] and none.settled, none
    _, unknown = judge_look(rows, rule, 1, 8, 40)
    _, waiting = judge_look(rows, replace(rule, planned=((writing, YES_NO[0], 16), (writing, YES_NO[1], 0))), 1, 8, 40)
    assert unknown.open == waiting.open == [f"{writing}: cell0 vs cell1"]


def test_a_pair_that_cannot_reach_the_target_with_every_planned_prompt_is_out_of_reach_at_once() -> None:
    """Yes rates over three answered prompts, per-prompt differences 0.5, -0.5 and 0 (sd 0.5). Were
    all 10 planned prompts answered, the smallest gap the paired t-test could detect with 80% power,
    from the lower 99.9% bound of that spread (0.5 x sqrt(2 / 13.8155) = 0.1902), is (t_9(0.975) +
    t_9(0.8)) x 0.1902 / sqrt(10) = 0.189: above 0.1, so the pair is given up at look 1. With 400
    planned prompts it could get there (0.027) and stays open."""
    rows = _rows([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0]], metric="yes_rate_gap")
    assert reachable_gap(rows["details"][0], 10, 0.05) == pytest.approx(0.18923, abs=1e-4)
    assert reachable_gap(rows["details"][0], 400, 0.05) == pytest.approx(0.02671, abs=1e-4)
    rule = LookRule(5, 0.05, 0.1, YES_NO)
    _, few = judge_look(rows, replace(rule, planned=((LABEL, YES_NO[0], 16), (LABEL, YES_NO[1], 10))), 1, 8, 40)
    _, many = judge_look(rows, replace(rule, planned=((LABEL, YES_NO[0], 16), (LABEL, YES_NO[1], 400))), 1, 8, 40)
    assert few.futile == [f"{LABEL}: cell0 vs cell1"] and many.open == [f"{LABEL}: cell0 vs cell1"], (few, many)


def test_giving_up_at_once_spares_pairs_that_can_reach_the_target_and_not_those_that_cannot() -> None:
    """A pair planned with exactly 80% power for its true gap (the stated gap of 200 prompts) is
    never given up as unreachable at looks 1-4 in 400 simulated runs; a yes rate over 10 yes/no
    prompts whose answers flip for one name in six is given up by look 2 (4 prompts answered) in
    every run where its spread shows (most runs: with no flip at all it has no test to judge)."""
    rng = np.random.default_rng(3)
    gap = stated_gap(PROMPTS, 2, Model((0.0, 0.0)).sd)
    model = Model((gap, 0.0))
    reachable = [reachable_gap(outcome_rows(values[:n])["details"][0], PROMPTS, 0.05) for values in
                 (model.answers(rng, PROMPTS) for _ in range(400)) for n in (40, 80, 120, 160)]
    assert max(reachable) <= gap, max(reachable)
    flips = [(rng.random((10, 2, 2)) >= 1 / 6).astype(float).mean(axis=2) for _ in range(1000)]
    reach = [reachable_gap(outcome_rows(yes[:4])["details"][0], 10, 0.05) for yes in flips]
    shown = [r for r in reach if r is not None]
    assert len(shown) >= 800 and min(shown) > 0.1, (len(shown), min(shown))


def test_the_plan_of_the_shipped_identity_prompts() -> None:
    """configs/identity.yaml's 40 prompts: the headline comparison plans 16 amounts and 10 yes/no
    decisions; its five task breakdowns are breakdowns, writing and advice with no value in the
    outcome units; the order puts 10 amounts, 6 decisions and 8 other prompts in the first 24
    (look 3 of 5) whatever the seed. A gap to detect is measured in the outcome gaps by default
    (the counterfactual headline in a counterfactual run); an identity run with no outcome prompt
    is warned that its pairs settle only when found."""
    from equilens.flows.running.looks import interleave, look_rule, prompt_strata, with_plan
    from equilens.tasks.assessments.identity import stages as identity
    from equilens.tasks.config import load_config

    cfg = load_config("configs/identity.yaml", {"identity.races": ["white", "black"],
                                                "execution.stop_when": "settled", "execution.detect": 0.1})
    prompts = pd.read_csv("data/identity_prompts.csv").rename(columns={"prompt": "text"})
    prompts = prompts.assign(prompt_id=[f"p{i}" for i in range(40)], source_line=range(2, 42))
    variants, _ = identity.expand_identities(prompts, cfg.identity, cfg.llm.system_prompt)
    said: list[str] = []

    class Log:
        def warning(self, message: str, *args: object) -> None:
            said.append(message % args)

    rule = with_plan(look_rule(cfg), cfg, variants, Log())
    assert rule.metrics == ("number_outcome_gap", "yes_rate_gap", "first_choice_rate_gap") and not said
    assert rule.planned_for(LABEL) == {"number_outcome_gap": 16, "yes_rate_gap": 10, "first_choice_rate_gap": 0}
    assert rule.breakdowns == {f"{LABEL} | {t}" for t in ("salary", "pricing", "decision", "writing", "advice")}
    assert set(rule.planned_for(f"{LABEL} | writing").values()) == {0}
    strata = prompt_strata(cfg, variants)
    for seed in range(5):
        drawn = [f"p{i}" for i in np.random.default_rng(seed).permutation(40)]
        first = pd.Series([strata[p][0] for p in interleave(drawn, strata)[:24]]).value_counts().to_dict()
        assert first == {"number": 10, "yes_no": 6, "none": 8}, first
    counterfactual = parse_config({"prompts": {"items": ["he works"]}, "execution": {"stop_when": "settled"}})
    assert look_rule(counterfactual).metrics == ("strict_sentiment_parity",)
    writing = variants[variants["task"].isin(["writing", "advice"])]
    assert with_plan(look_rule(cfg), cfg, writing, Log()).planned_for(LABEL) is None
    assert said == [f"execution.detect: no two prompts of {LABEL} can give number_outcome_gap or yes_rate_gap or "
                    "first_choice_rate_gap a value, so no gap of 0.1 can be measured there: its pairs settle only "
                    "when found"], said


# --- simulated runs against a known truth ---------------------------------------------------------
PROMPTS = 200


@pytest.mark.parametrize("deterministic", [False, True])
def test_a_fair_model_fires_in_at_most_five_percent_of_runs_with_stopping_on(deterministic: bool) -> None:
    """Three cells (a Holm family of three pairs), a sampling model without a futility target and a
    deterministic one (amounts rounded, many ties) with one: the looks do not inflate the error."""
    model = Model((0.0, 0.0, 0.0), deterministic=deterministic)
    detect = stated_gap(PROMPTS, 3, model.sd) if deterministic else None
    found = simulate(model, PROMPTS, 400, detect=detect, seed=11 + deterministic)
    assert found.fired <= 0.05, found


def test_a_gap_of_the_stated_detectable_size_is_found_in_75_to_85_percent_of_runs() -> None:
    """One pair of cells whose true gap is the one a fixed run of the planned size states it detects
    with 80% power: with five looks the power stays near it."""
    model = Model((0.0, 0.0))
    model = Model((stated_gap(PROMPTS, 2, model.sd), 0.0))
    found = simulate(model, PROMPTS, 600, seed=5)
    assert 0.75 <= found.fired <= 0.85, found


def test_a_large_gap_is_found_on_at_most_40_percent_of_the_calls() -> None:
    """A true gap 3x the stated detectable gap, with that gap as the futility target: found in every
    run, stopping on average by 40% of the planned prompts."""
    gap = stated_gap(PROMPTS, 2, Model((0.0, 0.0)).sd)
    found = simulate(Model((3 * gap, 0.0)), PROMPTS, 300, detect=gap, seed=7)
    assert found.fired >= 0.99 and found.used <= 0.40, found


def test_a_fair_model_with_a_futility_target_stops_early() -> None:
    """A fair model whose futility target is 1.5x the gap the planned run states stops by 60% of the
    calls on average; one whose target is the stated gap itself (a run planned with exactly 80% power
    for it) needs more, by 70%."""
    gap = stated_gap(PROMPTS, 2, Model((0.0, 0.0)).sd)
    margin = simulate(Model((0.0, 0.0)), PROMPTS, 300, detect=1.5 * gap, seed=8)
    exact = simulate(Model((0.0, 0.0)), PROMPTS, 300, detect=gap, seed=9)
    assert margin.used <= 0.60 and exact.used <= 0.70, (margin, exact)


# --- end to end -----------------------------------------------------------------------------------
def _identity_config(server, tmp_path: Path, prompts: int, **execution: object) -> object:
    path = tmp_path / "p.csv"
    pd.DataFrame({"prompt": [f"Question {i}: how much should I ask for this job? {'x' * i}" for i in range(prompts)],
                  "outcome": "number"}).to_csv(path, index=False)
    return parse_config({
        "name": "stopping", "assessment": "identity", "prompts": {"path": str(path)},
        # ten names per cell, the default (a prompt is asked with two per cell either way): the outcome
        # gaps take the names as a sample, and two per cell would leave their part one degree of freedom
        "identity": {"names_per_cell": 10, "races": ["white", "black"]},
        "llm": {"provider": "openai", "model": "fake", "base_url": server.base_url, "max_retries": 0},
        "metrics": {"bootstrap_resamples": 50, "permutations": 100},
        "execution": {"stop_when": "settled", "looks": 4, **execution},
        "storage": {"duckdb_path": str(tmp_path / "s.duckdb"), "reports_dir": None},
    })


def _offers(low: set[str]):
    import hashlib

    def reply(body: dict) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        name = system.rsplit(" ", 1)[-1].rstrip(".")
        jitter = int(hashlib.sha256((system + user).encode()).hexdigest()[:4], 16) % 5 - 2
        amount = 1000 * (10 + len(user) % 7) * (1 + jitter / 100) * (0.6 if name in low else 1.0)
        return f"I would suggest about ${amount:,.0f}."

    return reply


def test_an_identity_run_stops_once_settled_and_a_resumed_run_continues_its_sequence(
        prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    """Offers 40% lower for one cell's names: every pair is found or out of reach of a 10% gap
    before the last look, so the run stops early, says where and why, and keeps its order. Run again
    with more prompts (from Python), it answers the same prompts first (from the cache) and the new
    ones after."""
    import equilens
    from equilens.flows.running.dispatch import flow_for
    from equilens.tasks.inputs.names import load_names
    from equilens.tasks.inputs.personas import cell_names, cells_of

    cells = cells_of(["gender", "race"], ["female", "male"], ["white", "black"])
    low = set(cell_names(load_names(), cells, 10, seed=0).query("cell == 'female-black'")["name"])
    openai_server.reply = _offers(low)
    cfg = _identity_config(openai_server, tmp_path, 40, detect=0.1)
    result = flow_for(cfg)(cfg)
    planned = 40 * 4 * 2
    assert result["looks"]["look"] < 4 and result["looks"]["settled"], result["looks"]
    assert len(openai_server.requests) == result["looks"]["prompts"] * 4 * 2 < planned
    verdict = next(v for v in result["verdicts"] if v.startswith("gender x race:"))
    assert "female-black" in verdict and f"Judged at look {result['looks']['look']} of 4" in verdict, verdict
    assert "were not asked" in verdict
    db = tmp_path / "s.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        order = [r[0] for r in con.execute("SELECT prompt_id FROM prompt_order WHERE run_id = ? ORDER BY position",
                                           [result["run_id"]]).fetchall()]
        looks = con.execute("SELECT look, stopped, calls, planned_calls FROM looks WHERE run_id = ? ORDER BY look",
                            [result["run_id"]]).fetchall()
        answered = con.execute("SELECT count(DISTINCT prompt_id) FROM responses WHERE run_id = ?",
                               [result["run_id"]]).fetchone()[0]
    assert len(order) == 40 and looks[-1][1] and not any(s for _, s, _, _ in looks[:-1])
    assert looks[-1][2:] == (len(openai_server.requests), planned) and answered == result["looks"]["prompts"]

    before = len(openai_server.requests)
    again = equilens.assess(config=_identity_config(openai_server, tmp_path, 60, detect=0.1), db=db)  # from Python
    with duckdb.connect(str(db), read_only=True) as con:
        resumed = [r[0] for r in con.execute("SELECT prompt_id FROM prompt_order WHERE run_id = ? ORDER BY position",
                                             [again.run_id]).fetchall()]
    assert resumed[:40] == order and len(resumed) == 60
    new_calls = len(openai_server.requests) - before
    assert new_calls == max(0, again.summary["looks"]["prompts"] - result["looks"]["prompts"]) * 4 * 2, new_calls
    assert any("Judged at look" in v for v in again.verdicts), again.verdicts
    from equilens.tasks.reporting.html import report_context
    from equilens.tasks.storage.store import Store

    card = next(c for c in report_context(Store(db), result["run_id"])["cards"] if c["label"] == "stopped at look")
    assert card["value"] == f"{result['looks']['look']} of 4" and "of 40 prompts asked, settled" in card["text"]


def test_stopping_from_the_command_line_and_from_python_on_a_fair_counterfactual_model(
        prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    """A fair model (its answer does not depend on the group words) without a futility target runs
    every look to the end; with --set on the command line the stop reason is printed; the Python API
    takes the same keys; an assessment that cannot stop early refuses the setting."""
    import equilens
    from equilens.flows.cli import app
    from typer.testing import CliRunner

    openai_server.reply = mood_reply(len)
    prompts = [f"Write a note {i} about how he did at work today{'.' * (i % 3)}" for i in range(20)]
    cfg = mood_config(tmp_path, openai_server.base_url, prompts, permutations=200)
    settled = ["--set", "execution.stop_when=settled", "--set", "execution.looks=2"]
    plan = CliRunner().invoke(app, ["run", str(cfg), "--plan", *settled])
    assert plan.exit_code == 0 and "stopping: 2 looks at equal shares of the prompts" in plan.output, plan.output
    out = CliRunner().invoke(app, ["run", str(cfg), *settled])
    assert out.exit_code == 0, out.output
    assert "in up to 2 looks, stopping once settled" in out.output, out.output
    assert "Judged at look 2 of 2, on 20 of 20 prompts" in out.output, out.output
    with pytest.raises(ConfigError, match="answers in looks on the counterfactual and identity assessments"):
        parse_config({"assessment": "bbq", "execution": {"stop_when": "settled"}})
    with pytest.raises(ConfigError, match="execution.detect_metric: 'judge_harm' states no detectable gap"):
        parse_config({"prompts": {"items": prompts}, "execution": {"detect_metric": "judge_harm"}})

    result = equilens.assess(prompts[:12], model="fake", provider="openai", base_url=openai_server.base_url,
                             db=tmp_path / "a.duckdb", counterfactual={"attributes": ["gender"], "detect_names": False},
                             metrics={"bootstrap_resamples": 50, "permutations": 200},
                             execution={"stop_when": "settled", "looks": 3}, storage__reports_dir=None)
    assert result.status == "completed"
    assert any("Judged at look 3 of 3, on 12 of 12 prompts" in v for v in result.verdicts), result.verdicts


def test_a_run_is_warned_which_looks_its_permutation_tests_cannot_reach() -> None:
    """Five looks at 0.05: look 1's level is 2 (1 - Phi(4.383)) = 1.17e-5, beyond 2,000 permutations
    (their smallest p is 1/2,001) and within reach of 85,324; three looks' first level (0.00069) is
    reached by 1,457."""
    from equilens.flows.running.looks import _warn_unreachable, look_rule

    said: list[str] = []

    class Log:
        def warning(self, message: str, *args: object) -> None:
            said.append(message % args)

    for looks, perms in ((5, 2000), (3, 200), (3, 2000)):
        cfg = parse_config({"prompts": {"items": ["he works"]}, "metrics": {"permutations": perms},
                            "execution": {"stop_when": "settled", "looks": looks}})
        _warn_unreachable(Log(), cfg, look_rule(cfg))
    assert len(said) == 2, said
    assert "look(s) 1: parity gaps can be found from look 2 on (metrics.permutations >= 85,324" in said[0]
    assert "metrics.permutations >= 1,457 reaches look 1" in said[1]


def test_too_few_prompts_for_a_look_names_that_looks_bar() -> None:
    """Six prompts of one parity pair: the permutation test's smallest p is 2^(1-6) = 0.031, below
    0.05 but not below look 1 of 5's level (about 1.2e-5, which needs 2^(1-n) < 1.2e-5: n >= 18)."""
    rows = pd.DataFrame([{"family": "counterfactual", "attribute": "gender", "group_a": "female", "group_b": "male",
                          "metric": "strict_sentiment_parity", "value": 0.2,
                          "details": {"gap": 0.1, "p_value": 0.5, "p_method": "permutation", "prompts": 6,
                                      "noise_floor": 0.1}}])
    once = attribute_verdict("gender", rows).sentence
    assert "no difference can be shown" not in once, once  # one pair at 0.05 needs 6 prompts: 2^-5 < 0.05
    judged, _ = judge_look(rows, LookRule(5, 0.05), 1, 6, 30)
    sentence = attribute_verdict("gender", judged).sentence
    level = obrien_fleming_plan(FIVE).nominal_alpha(0)
    assert f"needs at least 18 to reach p < {level:.2g} (Holm's first step at look 1 of 5)" in sentence, sentence
