"""What an AutoEval run asks its LLM, for the plan before the run (flows.running.plan)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from equilens.tasks.assessments.auto.config import AutoRunConfig
from equilens.tasks.assessments.identity import stages as identity_stages
from equilens.tasks.pipeline import check_ftu_stage, expand_stage


def plan_requests(config: AutoRunConfig, prompts: Any) -> Any:  # DataFrames
    """What the LLM stage would be asked (each row ``llm.count`` times), for a plan: the original
    prompts (unless their answers are brought), the counterfactual variants, and identity variants
    for prompts that name no group; a text asked twice is one call."""
    variants = expand_stage(prompts, config.counterfactual)
    parts = [variants[variants["valid"]], prompts.iloc[:0] if config.stereotype.responses_path else prompts]
    if config.identity is not None:
        mentions = check_ftu_stage(prompts, config.counterfactual).mentions
        unnamed = prompts[[not any(m.values()) for m in mentions]]
        if len(unnamed):
            parts.append(identity_stages.expand_identities(unnamed, config.identity, config.llm.system_prompt)[0])
    return pd.concat([p[[c for c in ("text", "system") if c in p]] for p in parts], ignore_index=True).drop_duplicates()
