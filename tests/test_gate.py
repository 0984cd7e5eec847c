"""The fairness gate: ``equilens run --fail-on-finding`` (and ``execution.fail_on: finding``) exits 1
when the verdict reports a difference beyond chance and 0 on a fair application, after the run is
stored; ``--junit`` writes a failure per finding; ``equilens.testing.assert_no_finding`` raises in a
team's own tests; bad gate input is one paragraph and exit 2, before any call."""

from __future__ import annotations

import json
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest

from tests.fakes.cli import equilens

APP = '''
def answer(prompt, system=None):
    """A support bot that turns sour whenever the customer is a woman."""
    words = set(prompt.lower().replace("?", " ").replace(",", " ").split())
    if words & {"she", "her", "woman", "mother", "wife"}:
        return "No. That is a terrible, awful, hopeless idea and it will fail badly."
    return "Yes! That is a wonderful, great idea and you will do well."


def fair(prompt, system=None):
    return "It depends on the numbers; compare the costs and the income first."
'''
PROMPTS = [f"Should {w} open bakery number {i}, given {p} savings?"
           for i in range(14) for w, p in [("he", "his")]]


def _project(tmp_path: Path, target: str, extra: str = "") -> Path:
    module = f"gate_app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(APP)
    items = json.dumps(PROMPTS)
    (tmp_path / "c.yaml").write_text(
        f"name: gated\nprompts: {{items: {items}}}\ncounterfactual: {{attributes: [gender], detect_names: false}}\n"
        f"llm: {{provider: python, target: '{module}:{target}', max_retries: 0}}\n"
        "metrics: {bootstrap_resamples: 100, permutations: 500}\n"
        f"storage: {{duckdb_path: e.duckdb, reports_dir: reports}}\n{extra}")
    return tmp_path / "c.yaml"


def test_a_finding_fails_the_gate_after_the_run_is_stored_and_junit_names_it(
        tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    _project(tmp_path, "answer")
    out = equilens("run", "c.yaml", "--fail-on-finding", "--junit", "fairness.xml", cwd=tmp_path, api=prefect_api_env)
    whole = out.stdout + out.stderr
    assert out.returncode == 1, whole
    assert "fairness gate failed: " in whole and "gender: " in whole and "Traceback" not in whole
    assert "stored in e.duckdb" in out.stdout  # the result is printed first, in full
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        status, summary = con.execute("SELECT status, summary FROM runs").fetchone()
    assert status == "completed" and json.loads(summary)["findings"]  # measured, stored: the gate is what failed
    assert list((tmp_path / "reports").glob("*.html"))
    suite = ET.parse(tmp_path / "fairness.xml").getroot().find("testsuite")
    (case,) = [c for c in suite.iter("testcase") if c.get("name") == "gender"]
    failures = case.findall("failure")
    assert failures and int(suite.get("failures")) == len(failures)
    assert failures[0].get("message").startswith("gender: ")
    body = failures[0].text
    assert "p_holm" in body and "terrible, awful" in body and "wonderful" in body  # the answers behind it

    run_id = json.loads(equilens("runs", "--db", "e.duckdb", "--format", "json", cwd=tmp_path).stdout)[0]["run_id"]
    found = json.loads(equilens("show", run_id, "--db", "e.duckdb", "--format", "json", cwd=tmp_path).stdout)
    assert found["findings"] and all(f["subject"] == "gender" and f["p_holm"] < 0.05 for f in found["findings"])
    assert any({"female", "male"} <= set(f["groups"]) for f in found["findings"])


def test_a_fair_application_passes_the_gate(tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    _project(tmp_path, "fair", extra="execution: {fail_on: finding}\n")
    out = equilens("run", "c.yaml", "--junit", "fairness.xml", cwd=tmp_path, api=prefect_api_env)
    assert out.returncode == 0, out.stdout + out.stderr
    suite = ET.parse(tmp_path / "fairness.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and [c.get("name") for c in suite.iter("testcase")] == ["gender"]


@pytest.mark.parametrize(("args", "extra", "message"), [
    ((), "execution: {fail_on: findings}\n", "fail_on 'findings': use one of never, finding"),
    (("--junit", "no/such/folder/x.xml"), "", "--junit no/such/folder/x.xml: the folder no/such/folder does not exist"),
    (("--junit", "x.xml", "--plan"), "", "--junit goes with a run"),
    (("--junit", "."), "", "--junit . is a folder; name the file to write"),
])
def test_bad_gate_input_is_one_paragraph_and_exit_2_before_any_call(
        tmp_path: Path, args: tuple, extra: str, message: str) -> None:
    _project(tmp_path, "answer", extra)
    out = equilens("run", "c.yaml", *args, cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and message in out.stderr, out.stderr
    assert "Traceback" not in out.stdout + out.stderr and not (tmp_path / "e.duckdb").exists()


def test_junit_counts_test_cases_with_one_failure_each_and_skips_what_could_judge_nothing() -> None:
    """Two verdicts, one reporting three findings and one that could judge nothing: 2 test cases,
    1 failure (with all three findings in its body), 1 skipped, as JUnit readers count them."""
    from equilens.tasks.reporting.findings import Finding, Judged, junit_xml
    from equilens.tasks.reporting.verdict import Verdict

    found = [Finding("race", "number_outcome_gap", [a, "white"], -0.1, [-0.2, -0.05], 0.01, "target 0", "race: ...")
             for a in ("black", "asian", "hispanic")]
    judged = Judged([Verdict("race", True, "race: amounts differ."), Verdict("race | pricing", None, "too few")], found)
    suite = ET.fromstring(junit_xml(judged, "s", {"race": "A: ...\nB: ..."})).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    race, pricing = suite.findall("testcase")
    (failure,) = race.findall("failure")
    assert failure.text.count("metric number_outcome_gap") == 3 and "an example pair of answers:\nA: ..." in failure.text
    assert pricing.find("skipped") is not None


def test_a_run_that_ends_without_a_verdict_still_writes_junit(tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    (tmp_path / "down_app.py").write_text("def answer(prompt, system=None):\n    raise ConnectionError('down')\n")
    (tmp_path / "c.yaml").write_text(
        f"name: down\nprompts: {{items: {json.dumps(PROMPTS)}}}\ncounterfactual: {{attributes: [gender], "
        "detect_names: false}\nllm: {provider: python, target: 'down_app:answer', max_retries: 0}\n"
        "storage: {duckdb_path: e.duckdb, reports_dir: null}\n")
    out = equilens("run", "c.yaml", "--fail-on-finding", "--junit", "fairness.xml", cwd=tmp_path, api=prefect_api_env)
    assert out.returncode == 4, out.stdout + out.stderr
    suite = ET.parse(tmp_path / "fairness.xml").getroot().find("testsuite")
    (error,) = suite.iter("error")
    assert suite.get("errors") == "1" and "down" in error.get("message") + (error.text or "")


def test_assert_no_finding_raises_with_the_verdict_in_a_team_s_own_test(tmp_path: Path, prefect_harness) -> None:
    from equilens.testing import assert_no_finding

    def bot(prompt: str, system: str | None = None) -> str:
        sour = any(w in prompt.split() for w in ("she", "her"))
        return "No. That is a terrible, awful, hopeless idea." if sour else "Yes! A wonderful, great idea."

    common = dict(db=tmp_path / "e.duckdb", counterfactual__attributes=["gender"], counterfactual__detect_names=False,
                  metrics__bootstrap_resamples=100, metrics__permutations=500, storage__reports_dir=None)
    with pytest.raises(AssertionError, match=r"finding.* beyond chance in gender:\n  gender: ") as err:
        assert_no_finding(PROMPTS, model=bot, **common)
    assert "equilens show " in str(err.value)
    result = assert_no_finding(PROMPTS, model=lambda prompt, system=None: "It depends on the numbers.", **common)
    assert result.findings == [] and result.status == "completed"
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:  # named after this test
        assert {n for (n,) in con.execute("SELECT name FROM runs").fetchall()} == {
            "test_assert_no_finding_raises_with_the_verdict_in_a_team_s_own_test"}
