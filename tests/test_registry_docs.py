"""The metric tables of the docs and `equilens metrics` list the same set as the registry."""

from __future__ import annotations

import re
from pathlib import Path

from equilens.tasks.metrics import METRICS

ROOT = Path(__file__).resolve().parents[1]
METRIC_TABLES = ROOT / "docs" / "assessments.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _documented(path: Path) -> set[str]:
    """Metric names in the first column of every table of ``path`` headed ``| metric | ...``."""
    names: set[str] = set()
    in_table = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.match(r"\|\s*metric\s*\|", line):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
        elif in_table:
            names.update(re.findall(r"`([a-z0-9_]+)`", line.split("|")[1]))
    return names


def test_every_registered_metric_is_in_a_metric_table_and_nothing_else_is() -> None:
    registered = set(METRICS.names())
    documented = _documented(METRIC_TABLES)
    assert registered - documented == set(), f"registered, not in the tables of {METRIC_TABLES.name}"
    for doc in DOCS:  # a metric table anywhere in the README or docs/ names registered metrics only
        assert _documented(doc) - registered == set(), f"in a metric table of {doc.name} but not registered"


def test_every_metric_declares_direction_aggregation_interval_and_inputs() -> None:
    for name, spec in METRICS.items():
        assert spec.direction in ("higher", "lower", "target", "none"), name
        assert spec.direction != "target" or spec.target is not None, name
        assert spec.aggregation and spec.interval and spec.reference, name
