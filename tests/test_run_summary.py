"""The run summary's keys are declared once (:class:`RunSummary`): every key a flow or stage writes
is there, so a reader of ``runs.summary`` finds each one's type and meaning in one place."""

from __future__ import annotations

import ast
from pathlib import Path

from equilens.tasks.orchestration.summary import RunResult, RunSummary

ROOT = Path(__file__).resolve().parent.parent


def _written_keys() -> dict[str, str]:
    """Key -> where it is written: ``summary["key"] = ...``, ``summary.setdefault("key", ...)``,
    ``{**summary, "key": ...}`` and ``RunResult(key=...)`` in flows/ and tasks/."""
    found: dict[str, str] = {}
    for path in sorted([*(ROOT / "flows").rglob("*.py"), *(ROOT / "tasks").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = [t for t in (node.targets if isinstance(node, ast.Assign) else [])
                       for t in (t.elts if isinstance(t, ast.Tuple) else [t])]  # "readings, summary['reader'] = ..."
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and \
                        getattr(target.value, "id", getattr(target.value, "attr", "")) == "summary":
                    found.setdefault(str(target.slice.value), f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault" \
                    and getattr(node.func.value, "id", getattr(node.func.value, "attr", "")) == "summary" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.setdefault(str(node.args[0].value), f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("RunResult", "RunSummary"):
                for kw in node.keywords:
                    if kw.arg:
                        found.setdefault(kw.arg, f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Dict) and any(k is None and getattr(v, "id", "") == "summary"
                                                  for k, v in zip(node.keys, node.values, strict=True)):
                for k in node.keys:
                    if isinstance(k, ast.Constant):
                        found.setdefault(str(k.value), f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_key_written_to_a_summary_is_declared() -> None:
    written = _written_keys()
    assert len(written) >= 20  # the scan sees the stages' writes
    declared = {**RunSummary.__annotations__, **RunResult.__annotations__}  # the flow returns the summary and more
    undeclared = {k: where for k, where in written.items() if k not in declared}
    assert not undeclared, f"declare these keys in RunSummary: {undeclared}"


def test_every_declared_key_is_written_somewhere() -> None:
    declared = {**RunSummary.__annotations__, **RunResult.__annotations__}
    assert set(declared) <= set(_written_keys()), sorted(set(declared) - set(_written_keys()))


def test_the_markdown_artifact_of_a_run_without_an_unawareness_check_says_nothing_of_it() -> None:
    """An identity run gives every prompt a group, so it checks no fairness through unawareness; its
    artifact said "Does not hold: ... (0 prompts): none"."""
    import pandas as pd
    from equilens.tasks.config import parse_config
    from equilens.tasks.reporting.closing import markdown_report

    cfg = parse_config({"name": "id", "assessment": "identity", "prompts": {"items": ["How much should I ask for?"]}})
    text = markdown_report("r1", cfg, {}, pd.DataFrame(), pd.DataFrame(columns=["ok", "refusal", "grp"]))
    assert "unawareness" not in text.lower()
    with_check = markdown_report("r1", cfg, {"ftu": {"holds": True, "counts": {}, "prompts": 3}}, pd.DataFrame(),
                                 pd.DataFrame(columns=["ok", "refusal", "grp"]))
    assert "Holds: prompts mentioning each attribute (3 prompts): none." in with_check
