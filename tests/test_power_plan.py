"""The prompts a verdict needs, planned from a pilot: a count worked out by hand, and by simulation
runs of the planned size find the gap in 70-90% of cases (80% asked)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.stats.power_plan import prompts_to_detect
from scipy.stats import t as student_t

from tests.fakes.mood_config import mood_config, mood_reply
from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture


def test_the_count_is_worked_out_by_hand() -> None:
    # differences with sd exactly 1 (-1, 0, 1 repeated); alpha 0.05 over 2 tests: z 2.2414 + 0.8416
    # = 3.0830; gap 0.5: (3.0830 / 0.5)^2 = 38.02 -> 39, plus one for the t reference: 40
    pilot = [-1.0, 0.0, 1.0] * 10
    sd = np.std(pilot, ddof=1)
    plan = prompts_to_detect(np.asarray(pilot) / sd, gap=0.5, alpha=0.05, tests=2)
    assert plan.prompts == 40 and plan.alpha == 0.025 and plan.spread == pytest.approx(1.0)
    assert plan.low < plan.prompts < plan.high
    with pytest.raises(ValueError):
        prompts_to_detect([0.1, 0.2], gap=0.5)


def test_runs_of_the_planned_size_find_the_gap_in_70_to_90_percent() -> None:
    """Pilots of 20 prompts from a model whose per-prompt differences have sd 0.3 and a true gap of
    0.1; each plan's run (its planned count of fresh prompts) is judged by the paired t-test at
    alpha / 3. Over 1,000 plans the gap is found in 70-90% of runs, and the stated range holds the
    count the true spread needs in about 90% of plans."""
    rng = np.random.default_rng(2024)
    gap, sd, tests = 0.1, 0.3, 3
    truth = prompts_to_detect(np.r_[-sd, sd].repeat(5000), gap, tests=tests)  # the spread known: sd 0.3
    found = held = 0
    for _ in range(1000):
        plan = prompts_to_detect(rng.normal(gap, sd, 20), gap, tests=tests)
        run = rng.normal(gap, sd, plan.prompts)
        t = run.mean() / (run.std(ddof=1) / math.sqrt(len(run)))
        found += 2 * student_t.sf(abs(t), len(run) - 1) <= 0.05 / tests
        held += plan.low <= truth.prompts <= plan.high
    assert 0.70 <= found / 1000 <= 0.90, found / 1000
    assert 0.85 <= held / 1000 <= 0.95, held / 1000


def test_a_plan_from_the_detectable_gap_finds_the_gap_in_70_to_90_percent_of_runs_of_its_size() -> None:
    """The pilot's minimum detectable gap, as the identity verdict states it (a paired t-test over
    prompts at alpha / family, 80% power: (t + t) sd / sqrt(n)), scaled to the gap asked for: over
    1,000 pilots of 15 prompts, runs of the planned size find a true gap of 0.1 (sd 0.3, 3 tests) in
    70-90% of cases. The stated range holds the count the true spread needs in at least 80% (83% here):
    the pilot's t quantiles at 14 degrees of freedom make the plan about 8% larger than the normal
    approximation the true count uses, so the range misses on the safe side (more prompts)."""
    from equilens.tasks.assessments.identity.stages import detectable_outcome_gaps
    from equilens.tasks.stats.power_plan import prompts_from_detectable_gap

    rng = np.random.default_rng(47)
    gap, sd, tests, pilot = 0.1, 0.3, 3, 15
    truth = prompts_to_detect(np.r_[-sd, sd].repeat(5000), gap, tests=tests).prompts
    found = held = 0
    for _ in range(1000):
        d = rng.normal(gap, sd, pilot)
        record = {"metric": "number_outcome_gap", "details": {"gap_sd": float(d.std(ddof=1)), "prompts": pilot}}
        detectable_outcome_gaps([record], tests, 0.05)
        planned, low, high = prompts_from_detectable_gap(record["details"]["min_detectable_gap"], pilot, gap)
        run = rng.normal(gap, sd, planned)
        t = run.mean() / (run.std(ddof=1) / math.sqrt(len(run)))
        found += 2 * student_t.sf(abs(t), len(run) - 1) <= 0.05 / tests
        held += low <= truth <= high
    assert 0.70 <= found / 1000 <= 0.90, found / 1000
    assert 0.80 <= held / 1000 <= 0.97, held / 1000


def test_the_plan_scales_the_pilots_detectable_gap_by_hand() -> None:
    from equilens.tasks.stats.power_plan import prompts_from_detectable_gap

    prompts, low, high = prompts_from_detectable_gap(0.2, 16, 0.05)  # 16 x (0.2 / 0.05)^2 = 256
    assert prompts == 256 and low < 256 < high
    with pytest.raises(ValueError):
        prompts_from_detectable_gap(0.2, 2, 0.05)


def test_detect_runs_a_cached_pilot_and_plans_every_pair_of_an_identity_config(
        prefect_harness, openai_server, tmp_path) -> None:  # noqa: F811
    """``--plan --detect`` on an identity config: the pilot's first 8 prompts run for real and are
    stored as their own run; the plan names the pair that needs the most prompts; the full run
    afterwards asks only for the prompts the pilot did not answer."""
    import hashlib

    import pandas as pd
    from equilens.flows.running.dispatch import flow_for
    from equilens.flows.running.power import power_plan
    from equilens.tasks.config import parse_config

    def reply(body: dict) -> str:
        text = body["messages"][0]["content"] + body["messages"][-1]["content"]
        jitter = int(hashlib.sha256(text.encode()).hexdigest()[:4], 16) % 11 - 5  # -5..5 percent
        return f"Ask for about ${1000 * (50 + jitter):,}."

    openai_server.reply = reply
    path = tmp_path / "p.csv"
    pd.DataFrame({"prompt": [f"Job {i}: what salary should I ask for? Give one amount." for i in range(20)],
                  "outcome": "number"}).to_csv(path, index=False)
    cfg = parse_config({
        "name": "plan", "assessment": "identity", "prompts": {"path": str(path)},
        "identity": {"names_per_cell": 2, "attributes": ["gender"]},
        "llm": {"provider": "openai", "model": "fake", "base_url": openai_server.base_url, "max_retries": 0,
                "price_input_per_1k": 1.0, "price_output_per_1k": 1.0},
        "metrics": {"bootstrap_resamples": 50, "permutations": 50},
        "storage": {"duckdb_path": str(tmp_path / "p.duckdb"), "reports_dir": None},
    })
    plan = power_plan(cfg, 0.01, metric="number_outcome_gap", pilot=8)
    assert plan.pilot_prompts == 8 and plan.total_prompts == 20 and plan.calls_per_prompt == 4.0
    assert openai_server.calls == 8 * 2 * 2  # 8 prompts x 2 cells x (variant + control)
    worst = plan.worst
    assert worst is not None and worst.metric == "number_outcome_gap" and worst.pair == "female vs male"
    assert worst.low <= worst.prompts <= worst.high and worst.detectable > 0.01
    lines = "\n".join(plan.lines())
    assert f"prompts needed: {worst.prompts:,}" in lines and "LLM calls: about" in lines and "at most" in lines
    flow_for(cfg)(cfg)
    assert openai_server.calls == 20 * 2 * 2  # the full run paid only for the 12 prompts the pilot did not ask
    with pytest.raises(Exception, match="must be positive"):
        power_plan(cfg, 0.0)


def test_detect_on_the_command_line_plans_a_counterfactual_config_and_refuses_misuse(
        prefect_harness, openai_server, tmp_path) -> None:  # noqa: F811
    from equilens.flows.cli import app
    from typer.testing import CliRunner

    openai_server.reply = mood_reply(hash)
    prompts = [f"Write a note {i} about how he did at work today." for i in range(30)]
    cfg = mood_config(tmp_path, openai_server.base_url, prompts, permutations=1000)
    runner = CliRunner()
    misuse = runner.invoke(app, ["run", str(cfg), "--detect", "0.1"])
    assert misuse.exit_code == 2 and "--detect goes with --plan" in misuse.output
    unknown = runner.invoke(app, ["run", str(cfg), "--plan", "--detect", "0.1", "--metric", "nope"])
    assert unknown.exit_code == 2 and "Unknown metric 'nope'" in unknown.output and openai_server.calls == 0
    few = runner.invoke(app, ["run", str(cfg), "--plan", "--detect", "0.02", "--pilot", "12",
                              "--set", "metrics.permutations=200"])
    assert few.exit_code == 0 and "no plan: the pilot's pairs state no detectable gap: the permutation test's 200 " \
        "resamples cannot reach" in few.output, few.output
    out = runner.invoke(app, ["run", str(cfg), "--plan", "--detect", "0.02", "--pilot", "12"])
    assert out.exit_code == 0, out.output
    assert "pilot: the first 12 prompts" in out.output and "prompts needed:" in out.output, out.output
    assert "strict_sentiment_parity" in out.output and "the config has 30 prompts" in out.output


@pytest.mark.parametrize(("detect", "words"), [
    ("1e-300", "--detect 1e-300: the gap to detect is below 0.001, the precision every metric is reported at"),
    ("1e-12", "--detect 1e-12: the gap to detect is below 0.001"),
    ("0.0004", "--detect 0.0004: the gap to detect is below 0.001"),
    ("inf", "--detect inf: the gap to detect must be a finite number"),
    ("nan", "--detect nan: the gap to detect must be a finite number"),
    ("-0.1", "--detect -0.1: the gap to detect must be positive"),
])
def test_a_gap_no_metric_resolves_is_refused_in_one_sentence_before_the_pilot(
        openai_server, tmp_path, detect: str, words: str) -> None:  # noqa: F811
    from tests.fakes.cli import equilens

    cfg = mood_config(tmp_path, openai_server.base_url, [f"Write a note {i} about his day." for i in range(12)], 100)
    out = equilens("run", str(cfg), "--plan", f"--detect={detect}", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith(f"error: {words}") and out.stderr.count(". ") == 0, out.stderr
    assert "Traceback" not in out.stdout + out.stderr and openai_server.calls == 0
    assert not (tmp_path / "e.duckdb").exists()  # no pilot run was stored
