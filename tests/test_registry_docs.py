"""The README's metric tables and `equilens metrics` list the same set as the registry."""

from __future__ import annotations

import re
from pathlib import Path

from equilens.tasks.metrics import METRICS

README = Path(__file__).resolve().parents[1] / "README.md"


def _documented() -> set[str]:
    """Metric names in the first column of every README table headed ``| metric | ...``."""
    names: set[str] = set()
    in_table = False
    for line in README.read_text(encoding="utf-8").splitlines():
        if re.match(r"\|\s*metric\s*\|", line):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
        elif in_table:
            names.update(re.findall(r"`([a-z0-9_]+)`", line.split("|")[1]))
    return names


def test_every_registered_metric_is_in_a_readme_table_and_nothing_else_is() -> None:
    documented, registered = _documented(), set(METRICS.names())
    assert registered - documented == set(), "registered but missing from the README metric tables"
    assert documented - registered == set(), "in a README metric table but not registered"


def test_every_metric_declares_direction_aggregation_interval_and_inputs() -> None:
    for name, spec in METRICS.items():
        assert spec.direction in ("higher", "lower", "target"), name
        assert spec.direction != "target" or spec.target is not None, name
        assert spec.aggregation and spec.interval and spec.reference, name
