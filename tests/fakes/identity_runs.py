"""One small identity run against a Python application, for the tests of how its outcomes are
compared: the app is told each person's identity (placement ``app``, ``user={"identity": ...}``)."""

from __future__ import annotations

import json
from pathlib import Path

from equilens.tasks.config import parse_config
from equilens.tasks.storage.store import Store

JOBS = ("nurse", "welder", "teacher", "chef", "pilot", "baker", "judge", "coach")


def told_a_woman(user: dict | None) -> bool:
    """Was the app told it answers a woman (or a lady, in a same-group control)?"""
    told = (user or {}).get("identity", "")
    return "woman" in told or "lady" in told


def identity_run(tmp_path: Path, target: str, question: str, outcome: str, prompts: int = 8) -> tuple[Store, str]:
    """(the store, the run id) of an identity run comparing gender over ``prompts`` questions
    (``question`` with ``{job}``) whose answers carry an ``outcome``, answered by ``target``."""
    from equilens.flows.running.dispatch import flow_for

    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"prompt": question.format(job=job), "outcome": outcome}) + "\n"
                            for job in JOBS[:prompts]))
    cfg = parse_config({
        "name": "outcomes", "assessment": "identity", "prompts": {"path": str(path)},
        "identity": {"attributes": ["gender"], "names_per_cell": 2,
                     "signals": [{"name": "app", "placement": "app", "template": "{identity}"}]},
        "llm": {"provider": "python", "target": target, "max_retries": 0},
        "metrics": {"bootstrap_resamples": 50, "permutations": 50},
        "storage": {"duckdb_path": str(tmp_path / "o.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    return Store(tmp_path / "o.duckdb"), flow_for(cfg)(cfg)["run_id"]
