"""Stopping when settled on a realistic identity run: the shipped identity prompts
(``configs/identity.yaml``: amounts, yes/no decisions, writing and advice, each task its own
breakdown) asked of 4 gender x race cells by a loopback model that phrases amounts as chat models
do (:mod:`tests.fakes.identity_answers`), in 5 looks with ``execution.detect: 0.1``.

The run's headline judgement settles it: a planted 30% lower amount for Black-named users is found,
and the other pairs are out of reach of a 0.1 gap, before the last look; a fair model is
settled as out of reach of 0.1 before the last look too. The task breakdowns never hold it open."""

from __future__ import annotations

from pathlib import Path

import pytest
from equilens.tasks.config import load_config

from tests.fakes.identity_answers import identity_reply
from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

CELLS = 4


def _config(server, tmp_path: Path, name: str) -> object:
    return load_config("configs/identity.yaml", {
        "name": name, "identity.races": ["white", "black"],
        "llm.provider": "openai", "llm.model": "fake", "llm.base_url": server.base_url, "llm.max_retries": 0,
        "execution.stop_when": "settled", "execution.looks": 5, "execution.detect": 0.1,
        "storage.duckdb_path": str(tmp_path / f"{name}.duckdb"), "storage.reports_dir": None})


def _black_names(cfg) -> set[str]:
    from equilens.tasks.inputs.names import load_names
    from equilens.tasks.inputs.personas import cell_names, cells_of

    cells = cells_of(cfg.identity.attributes, cfg.identity.genders, cfg.identity.races)
    names = cell_names(load_names(), cells, cfg.identity.names_per_cell, seed=cfg.identity.seed)
    return set(names[names["cell"].str.endswith("-black")]["name"])


def _run(server, tmp_path: Path, name: str, gap: float) -> tuple[dict, float]:
    from equilens.flows.running.dispatch import flow_for

    cfg = _config(server, tmp_path, name)
    black = _black_names(cfg)
    server.reply = identity_reply(lambda who: 1 - gap if who in black else 1.0)
    before = len(server.requests)
    result = flow_for(cfg)(cfg)
    calls = len(server.requests) - before
    planned = 40 * CELLS * 2
    return result, calls / planned


def test_a_realistic_identity_run_stops_early_on_a_30_percent_gap_and_on_a_fair_model(
        prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    """A 30% lower amount for Black-named users: the four pairs of a Black and a white cell are found,
    the two others are out of reach of a 0.1 gap, and the run stops on at most 80% of the planned
    calls, every comparison's verdict (the task breakdowns' too) judged at that look. A fair model:
    every pair out of reach, none found, on at most 80% of the planned calls.

    The gaps take the drawn names as a sample of their cell (:mod:`equilens.tasks.stats.name_sampling`).
    The loopback model's wording differs from answer to answer, so at look 3 (24 prompts, 10 with an
    amount) some pairs show a names' part of their variance (17% and 23% for two pairs across races
    with the gap, 1-12% for three fair pairs) and their degrees of freedom fall from 9 to 3.4-3.8:
    p = 2e-4 and 4e-4 against the look's level of 8e-5, and smallest detectable gaps of 0.19 too
    wide to give up a fair pair. Both runs settle at look 4, on 80% of the calls; with prompts as
    the only sample they settled at look 3, on 60%."""
    found, spent = _run(openai_server, tmp_path, "gap", 0.3)
    print(f"30% gap: {spent:.0%} of the planned calls; {found['looks']['reason']}")
    looks = found["looks"]
    assert looks["settled"] and spent <= 0.80, (spent, looks)
    assert len(looks["found"]) == 4 and all("black" in p and "white" in p for p in looks["found"]), looks
    assert len(looks["futile"]) == 2 and not looks["open"], looks
    headline = next(v for v in found["verdicts"] if v.startswith("gender x race:"))
    assert "lower" in headline and "-black" in headline, headline
    judged_at = f"Judged at look {looks['look']} of 5, on {looks['prompts']} of 40 prompts"
    per_task = [v for v in found["verdicts"] if v.startswith("gender x race | ")]
    assert len(per_task) == 5 and all(judged_at in v for v in [headline, *per_task]), found["verdicts"]

    fair, spent_fair = _run(openai_server, tmp_path, "fair", 0.0)
    print(f"fair: {spent_fair:.0%} of the planned calls; {fair['looks']['reason']}")
    looks = fair["looks"]
    assert looks["settled"] and spent_fair <= 0.80, (spent_fair, looks)
    assert len(looks["futile"]) == 6 and not looks["found"] and not looks["breakdowns_found"], looks


if __name__ == "__main__":
    pytest.main([__file__, "-q", "-s"])
