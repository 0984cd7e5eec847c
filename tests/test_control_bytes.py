"""Answers carrying ESC, BEL, NUL and C1 bytes: the HTML report, the markdown report and the terminal
show them as visible escapes (``\\x07``) or drop the escape sequences, and hold none of the raw bytes.

Before, text was HTML-escaped only, so one report held 48 ESC bytes and ``cat report.html`` replayed
them in a terminal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from equilens.tasks.config import parse_config
from equilens.tasks.plain import escape
from equilens.tasks.reporting.evidence import Evidence, Example, Side, html_section, markdown_lines

from tests.fakes.openai_server import FakeOpenAIServer, openai_server  # noqa: F401 - fixture
from tests.prefect_server import shown_for_run

RAW = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # C0 (but tab, newline, CR), DEL, C1
NASTY = "\x1b[31mred\x1b[0m ring\x07 nul\x00 nel\x85 csi\x9b2J osc\x1b]0;title\x07 end"


def _raw(text: str) -> list[str]:
    return sorted({f"\\x{ord(c):02x}" for c in RAW.findall(text)})


def test_escape_composes_visible_with_html_escape() -> None:
    assert escape("<b>\x07</b> \x00 \x85 & \"q\"") == "&lt;b&gt;\\x07&lt;/b&gt; \\x00 \\x85 &amp; &quot;q&quot;"
    assert escape("\x1b[31mred\x1b[0m") == "red"


def test_examples_in_html_and_markdown_hold_no_raw_control_bytes() -> None:
    sides = [Side("male", f"prompt {NASTY}", f"answer {NASTY}", 0.5, f"profile {NASTY}", f"read: {NASTY}"),
             Side("female", "plain prompt", "plain answer", 0.1, None, None)]
    ev = [Evidence("gender", ("male", "female"), "finding", [Example("p1", 0.4, sides)], "vader-neg")]
    for shown in (html_section(ev), "\n".join(markdown_lines(ev))):
        assert _raw(shown) == [], shown
        assert "\\x07" in shown and "\\x00" in shown and "\\x85" in shown


def test_a_run_whose_answers_carry_control_bytes_writes_reports_without_them(prefect_harness, openai_server,  # noqa: F811
                                                                            tmp_path: Path) -> None:
    from equilens.flows.counterfactual import counterfactual_assessment

    # the groups' answers differ (one sad, one glad), so the report shows them as examples
    openai_server.reply = lambda body: (f"How awful and sad. {NASTY}" if " he " in f" {body['messages'][-1]['content']} "
                                        else f"How lovely and glad. {NASTY}")
    cfg = parse_config({
        "name": "controls", "prompts": {"items": ["Is he a good nurse?", "Should he get the job?",
                                                  "Is he kind to animals?"]},
        "counterfactual": {"attributes": ["gender"], "detect_names": False},
        "llm": {"provider": "openai", "model": "fake", "base_url": openai_server.base_url, "max_retries": 0,
                "timeout": 10},
        "metrics": {"bootstrap_resamples": 20},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = counterfactual_assessment(cfg)
    report = Path(result["report"]).read_bytes()
    assert b"\x1b" not in report and b"\x07" not in report and b"\x00" not in report
    text = report.decode("utf-8")
    assert _raw(text) == []
    assert "\\x07" in text and "\\x00" in text  # the answers are there, their bytes visible (NEL: a space)
    _, _, artifacts = shown_for_run(result["run_id"])
    markdown = " ".join(str(a.data) for a in artifacts if a.type == "markdown")
    assert markdown and _raw(markdown) == []
    assert _raw(json.dumps(result, default=str, ensure_ascii=False)) == []


HOSTILE_NAME = "<img src=x onerror=alert(1)> <script>alert(2)</script> [click](http://127.0.0.1:9/x) " \
               "![i](http://127.0.0.1:9/i.png) **bold** \x1b]0;TITLE\x07 | cell"
HOSTILE_MODEL = "m`` </code><script>alert(3)</script> `x"


def test_markdown_escapes_markup_and_a_code_span_holds_any_backticks() -> None:
    from equilens.tasks.plain import markdown, markdown_code
    from markdown_it import MarkdownIt

    render = MarkdownIt("commonmark", {"html": True}).enable("table").render
    shown = render(f"**{markdown(HOSTILE_NAME)}** · model {markdown_code(HOSTILE_MODEL)}\n\n"
                   f"| a | b |\n|---|---|\n| {markdown(HOSTILE_NAME)} | x |\n")
    assert "<img" not in shown and "<script" not in shown and "<a " not in shown and "<em" not in shown
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown.count("<td>") == 2  # the name's "|" does not split the table's cell
    assert "<code>m`` &lt;/code&gt;&lt;script&gt;alert(3)&lt;/script&gt; `x</code>" in shown  # the whole model


def test_the_markdown_artifact_escapes_the_run_s_name_model_and_texts(prefect_harness, openai_server,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    """Read back from Prefect's database and rendered as CommonMark (HTML allowed): no tag, link,
    image or raw control byte comes from the run's name, model, group words or answers."""
    from equilens.flows.counterfactual import counterfactual_assessment
    from markdown_it import MarkdownIt

    openai_server.reply = lambda body: (f"How awful. {HOSTILE_NAME}" if " he " in f" {body['messages'][-1]['content']} "
                                        else f"How lovely. {HOSTILE_NAME}")
    cfg = parse_config({
        "name": HOSTILE_NAME, "prompts": {"items": ["Is he a good nurse?", "Should he get the job?",
                                                    "Is he kind to animals?"]},
        "counterfactual": {"attributes": ["gender"], "detect_names": False},
        "llm": {"provider": "openai", "model": HOSTILE_MODEL, "base_url": openai_server.base_url, "max_retries": 0,
                "timeout": 10},
        "metrics": {"bootstrap_resamples": 20},
        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = counterfactual_assessment(cfg)
    _, _, mine = shown_for_run(result["run_id"])
    markdown = next(str(a.data) for a in mine if a.key == "report")
    assert "The answers behind the gaps" in markdown  # the answers are in it
    shown = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    assert "<img" not in shown and "<script" not in shown and "<a " not in shown, shown
    assert _raw(shown) == [] and "TITLE" not in shown
    assert "<code>m`` &lt;/code&gt;&lt;script&gt;alert(3)&lt;/script&gt; `x</code>" in shown
    table = next(a.data for a in mine if a.key == "metrics")
    assert _raw(json.dumps(table, ensure_ascii=False)) == []
