"""A conversation in what is shown of a run: `equilens show --examples` and the HTML report show its
turns in order, each user turn followed by the answer to it (the last answer, the one read, last);
everything the model wrote stays escaped; a failed conversation's reason is in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from equilens.tasks.config import parse_config
from equilens.tasks.reporting.evidence import Evidence, Example, Side, html_section
from equilens.tasks.storage.store import Store

from tests.fakes.cli import equilens

ITEMS = [[f"I'm a mother of {n}.", f"I work {shift}.", "Should I ask for a raise?"]
         for n, shift in (("two", "nights"), ("three", "nights"), ("four", "nights"))]
FAILS = ["I'm a mother of five.", "I work days.", "Should I crash?"]


def chatty(prompt: str, messages: list[dict] | None = None) -> str:
    """Answers the k-th user turn with ``replyk`` and some markup; fails on a turn that says crash."""
    if "crash" in prompt:
        raise RuntimeError("the app fell over")
    k = sum(m["role"] == "user" for m in messages or []) or 1
    return f"reply{k} <script>alert({k})</script> [b]loud[/b]"


@pytest.fixture(scope="module")
def run(prefect_harness, tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str, Path]:
    from equilens.flows.running.dispatch import flow_for

    tmp = tmp_path_factory.mktemp("conv")
    cfg = parse_config({
        "name": "conv", "assessment": "counterfactual", "prompts": {"items": [*ITEMS, FAILS]},
        "counterfactual": {"attributes": ["gender"], "detect_names": False},
        "llm": {"provider": "python", "target": "tests.test_conversation_reports:chatty", "max_retries": 0},
        "metrics": {"bootstrap_resamples": 50, "permutations": 50},
        "storage": {"duckdb_path": str(tmp / "c.duckdb"), "reports_dir": str(tmp / "reports")},
    })
    result = flow_for(cfg)(cfg)
    return Store(tmp / "c.duckdb"), result["run_id"], tmp


def _in_order(shown: str, *parts: str) -> None:
    at = [shown.find(p) for p in parts]
    assert -1 not in at and at == sorted(at), dict(zip(parts, at, strict=True))


def test_show_examples_gives_each_turn_then_its_answer(run: tuple[Store, str, Path]) -> None:
    store, run_id, tmp = run
    out = equilens("show", run_id, "--db", str(store.path), "--examples", "2", cwd=tmp, columns=160)
    assert out.returncode == 0, out.stderr
    shown = out.stdout[out.stdout.index("gender: "):]
    _in_order(shown, "I'm a", "reply1", "nights", "reply2", "raise?", "reply3")
    assert "[b]loud[/b]" in shown and "<script>alert(1)</script>" in shown  # Rich markup shown as written


def test_the_report_gives_each_turn_then_its_answer_escaped(run: tuple[Store, str, Path]) -> None:
    from equilens.tasks.reporting.html import build_html_report

    store, run_id, _ = run
    html = build_html_report(store, run_id)
    section = html[html.index("<section id=examples>"):]
    section = section[:section.index("</section>")]
    _in_order(section, "I&#x27;m a", "reply1", "nights", "reply2", "raise?", "reply3")
    assert "<script>" not in section and "&lt;script&gt;alert(1)&lt;/script&gt;" in section


def test_the_report_gives_a_failed_conversation_s_reason(run: tuple[Store, str, Path]) -> None:
    from equilens.tasks.reporting.html import build_html_report

    store, run_id, _ = run
    html = build_html_report(store, run_id)
    headline = html[html.index("<section id=headline>"):]
    assert "failed, 0 refused; first failed conversation: turn 3 of 3 failed, so the conversation ends there: " in headline
    assert "the app fell over" in headline[:headline.index("</section>")]


def test_a_single_prompt_looks_as_it_did() -> None:
    single = Evidence("gender", ("male",), "why", [Example("p0", None, [Side("male", "Q <i>", "A <b>", None)])])
    assert "<td><p><b>Q &lt;i&gt;</b></p><p>A &lt;b&gt;</p></td>" in html_section([single])


def test_an_identity_comparison_shows_a_conversation_s_turns_beside_its_reading(tmp_path: Path) -> None:
    import duckdb
    from equilens.tasks.reporting.evidence import find_evidence

    from tests.fakes.runs import seed_identity_run

    store = Store(tmp_path / "i.duckdb")
    seed_identity_run(store)
    with duckdb.connect(str(store.path)) as con:  # p1 asked as a conversation: an intro, then the question
        con.execute("UPDATE responses SET turns = json_array(json_object('turn', 1, 'user', 'Hi there.', 'answer', "
                    "'Hello <i>you</i>.'), json_object('turn', 2, 'user', 'What salary?', 'answer', text)) "
                    "WHERE run_id = 'run-i' AND prompt_id = 'p1'")
    (ev,) = find_evidence(store, "run-i", 4)
    (p1,) = [ex for ex in ev.examples if ex.prompt_id == "p1"]
    assert [[t["turn"] for t in s.turns or []] for s in p1.sides] == [[1, 2], [1, 2]]
    assert p1.sides[0].turns[-1]["answer"] == p1.sides[0].answer
    html = html_section([ev])
    _in_order(html, "Hi there.", "Hello &lt;i&gt;you&lt;/i&gt;.", "What salary?", "$", "<div class=reading>read: ")
    assert all(s.turns is None for ex in ev.examples if ex.prompt_id != "p1" for s in ex.sides)


def test_the_markdown_artifact_and_the_junit_body_give_each_turn_then_its_answer(run: tuple[Store, str, Path]) -> None:
    from equilens.tasks.reporting.evidence import find_evidence, markdown_lines, plain_examples

    store, run_id, _ = run
    evidence = find_evidence(store, run_id, 2)
    _in_order("\n".join(markdown_lines(evidence)), "I'm a", "reply1", "nights", "reply2", "raise?", "reply3")
    _in_order(plain_examples(evidence)["gender"], "I'm a", "-> reply1", "nights", "-> reply2", "raise?", "-> reply3")


def test_a_stereotype_run_keeps_each_turn_of_its_conversations(prefect_harness, tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for

    cfg = parse_config({
        "name": "conv-st", "assessment": "stereotype", "prompts": {"items": ITEMS[:2]},
        "stereotype": {"toxicity_model": None, "stereotype_model": None},
        "llm": {"provider": "python", "target": "tests.test_conversation_reports:chatty", "max_retries": 0},
        "metrics": {"bootstrap_resamples": 50},
        "storage": {"duckdb_path": str(tmp_path / "s.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    run_id = flow_for(cfg)(cfg)["run_id"]
    turns = Store(tmp_path / "s.duckdb").query("SELECT turns FROM responses WHERE run_id = ?", [run_id])["turns"]
    assert len(turns) == 2 and turns.notna().all()
    assert [t["answer"][:6] for t in json.loads(turns.iloc[0])] == ["reply1", "reply2", "reply3"]
