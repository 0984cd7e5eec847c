"""Before a stereotype run: what it asks its LLM (for the plan, flows.running.plan). Its prompts warn
of nothing beyond the duplicates every read of them reports (flows.running.preflight): each answer
is scored on its own, so no count of prompts per group limits what the run can show."""

from __future__ import annotations

from typing import Any

from equilens.tasks.assessments.stereotype.config import StereotypeRunConfig


def plan_requests(config: StereotypeRunConfig, prompts: Any) -> Any:  # DataFrames
    """What the LLM stage would be asked (each row ``llm.count`` times), for a plan: every prompt,
    or nothing when the answers are brought."""
    return prompts.iloc[:0] if config.stereotype.responses_path else prompts
