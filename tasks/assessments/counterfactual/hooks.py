"""Before a counterfactual run: what it asks its LLM (for the plan, flows.running.plan) and its own
checks (for the preflight, flows.running.preflight): its lexicons load, and each attribute is
mentioned by enough prompts for its permutation test to find anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from equilens.tasks.assessments.counterfactual.config import CounterfactualRunConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.metrics import wanted_metrics
from equilens.tasks.metrics.judged import judged_metrics, prompts_needed
from equilens.tasks.pipeline import check_ftu_stage, expand_stage, lexicons_for, names_lexicon


def plan_requests(config: CounterfactualRunConfig, prompts: Any) -> Any:  # DataFrames
    """What the LLM stage would be asked for ``prompts`` (each row ``llm.count`` times), for a plan:
    the valid variants and their controls."""
    variants = expand_stage(prompts, config.counterfactual)
    return variants[variants["valid"]]


def check_inputs(config: CounterfactualRunConfig) -> None:
    """The lexicons the expansion reads: a ``counterfactual.lexicon_dir`` that is a folder, and every
    lexicon and the names table loading without error."""
    folder = config.counterfactual.lexicon_dir
    if folder and not Path(folder).is_dir():
        raise InputDataError(f"counterfactual.lexicon_dir: {folder} is not a directory.")
    lexicons_for(config.counterfactual)
    names_lexicon(config.counterfactual)


def prompt_warnings(config: CounterfactualRunConfig, prompts: Any) -> list[str]:  # a DataFrame
    """A warning per attribute mentioned by too few prompts for a permutation test to find anything."""
    mentions = check_ftu_stage(prompts, config.counterfactual).mentions
    alpha = 1 - config.metrics.confidence
    judged = judged_metrics(wanted_metrics(config.metrics.names, "counterfactual"), config.metrics.neutralize)
    out = []
    for attribute, lexicon in lexicons_for(config.counterfactual).items():
        groups = len(getattr(lexicon, "target_groups", ()) or ())
        pairs = groups * (groups - 1) // 2
        # a prompt naming a person (a first name) is expanded for gender and race as well
        n = sum(1 for m in mentions if m.get(attribute) or (m.get("name") and attribute in ("gender", "race")))
        need = prompts_needed(max(1, pairs * max(len(judged), 1)), alpha)
        if n == 0:
            out.append(f"no prompt mentions {attribute}: it gets no metrics.")
        elif n < need:
            out.append(f"{n} prompt(s) mention {attribute}; with {pairs} group pairs and {len(judged)} judged "
                       f"metrics its permutation test needs at least {need} to reach p < {alpha:g} after Holm, so "
                       f"no {attribute} difference can be called significant. Add prompts.")
    return out
