"""What a stereotype run asks its LLM, for the plan before the run (flows.running.plan)."""

from __future__ import annotations

from typing import Any

from equilens.tasks.assessments.stereotype.config import StereotypeRunConfig


def plan_requests(config: StereotypeRunConfig, prompts: Any) -> Any:  # noqa: ANN401 - DataFrames
    """What the LLM stage would be asked (each row ``llm.count`` times), for a plan: every prompt,
    or nothing when the answers are brought."""
    return prompts.iloc[:0] if config.stereotype.responses_path else prompts
