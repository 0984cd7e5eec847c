"""What a BBQ run asks its LLM, for the plan before the run (flows.running.plan)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from equilens.tasks.assessments.bbq import stages as stage
from equilens.tasks.assessments.bbq.config import BBQRunConfig


def plan_requests(config: BBQRunConfig, prompts: Any) -> Any:  # DataFrames
    """What the LLM stage would be asked, for a plan: one call per sampled question when answers are
    generated; none when options are scored by a local model or the answers are brought."""
    if stage.resolve_method(config) != "generate":
        return pd.DataFrame({"text": []})
    return stage.generation_frame(stage.load_questions(config.bbq))
