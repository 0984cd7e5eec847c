"""What a decisions run asks its LLM, for the plan before the run (flows.running.plan)."""

from __future__ import annotations

from typing import Any

from equilens.tasks.assessments.decisions import stages as stage
from equilens.tasks.assessments.decisions.config import DecisionsRunConfig


def plan_requests(config: DecisionsRunConfig, prompts: Any) -> Any:  # DataFrames
    """What the LLM stage would be asked, for a plan: every decision of the configured fills (each
    ``llm.count`` times)."""
    items = stage.load_items(config.decisions, config.prompts and config.prompts.max_chars)
    return items.rename(columns={"prompt": "text", "item_id": "variant_id"})
