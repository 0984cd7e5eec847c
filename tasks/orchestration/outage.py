"""The LLM outage rule: a run whose calls all failed, or more than ``llm.max_failed_share`` of them,
measured an outage, not the model, and fails with the endpoint and the errors named."""

from __future__ import annotations

import pandas as pd
from equilens.tasks.config import LLMConfig, RunConfig
from equilens.tasks.errors import EquilensError, clipped


class LLMOutageError(EquilensError):
    """Every LLM call failed, or more than ``llm.max_failed_share`` of them: the run measured an outage."""

    exit_code = 4


def endpoint_label(cfg: LLMConfig) -> str:
    """Where the calls went, for a person (credentials scrubbed)."""
    from equilens.tasks.llm.base import scrub_secrets

    if cfg.provider == "azure" and cfg.azure_endpoint:
        return scrub_secrets(cfg.azure_endpoint)
    if cfg.base_url:
        return scrub_secrets(cfg.base_url)
    return "the OpenAI API" if cfg.provider == "openai" else f"the {cfg.provider} model {cfg.model}"


def _what(cfg: LLMConfig) -> str:
    """What answered the calls, in a message's words: an application (``python``, ``langchain``,
    ``http``), the embedded model, or an endpoint."""
    from equilens.tasks.config.sections import APPLICATION_PROVIDERS

    return "application" if cfg.provider in APPLICATION_PROVIDERS else "model" if cfg.provider == "local" else "endpoint"


def _unit(responses: pd.DataFrame) -> str:
    """What a row of ``responses`` stands for: an LLM call, or a conversation (all its turns' calls:
    answered, it keeps its turns; failed, its message names the turn)."""
    from equilens.tasks.llm.conversation import FAILED_TURN

    told = pd.Series(False, index=responses.index)
    if "turns" in responses.columns:
        told |= responses["turns"].notna()
    if "error_message" in responses.columns:
        told |= responses["error_message"].fillna("").astype(str).str.match(FAILED_TURN)
    return "LLM calls" if not told.any() else "conversations" if told.all() else "LLM calls and conversations"


def check_llm_failures(config: RunConfig, responses: pd.DataFrame) -> None:
    """Fail the run when every LLM call failed, or more than ``llm.max_failed_share`` of them.

    Refusals are answers (a finding), not failures. Cached and brought answers count as answered.
    """
    if responses is None or responses.empty or "ok" not in responses.columns:
        return
    ok = responses["ok"].astype(bool)
    refused = responses["refusal"].astype(bool) if "refusal" in responses.columns else False
    failed = responses[~ok & ~refused]
    total, n_failed = len(responses), len(failed)
    share = n_failed / total
    limit = config.llm.max_failed_share
    if n_failed == 0 or (n_failed < total and share <= limit):
        return
    where = endpoint_label(config.llm)
    kinds = (failed["error_class"].fillna("Error") if "error_class" in failed.columns
             else pd.Series("Error", index=failed.index))
    classes = kinds.value_counts()
    top = str(classes.index[0])
    messages = failed.loc[kinds == top, "error_message"].dropna() if "error_message" in failed.columns else []
    message = str(messages.iloc[0]) if len(messages) else ""
    cause = {"ConnectionError": f"could not connect to {where}", "Timeout": f"no answer from {where} within "
             f"llm.timeout={config.llm.timeout:g} s"}.get(top, f"{top} from {where}")
    unit = _unit(responses)
    head = (f"all {total} {unit} failed" if n_failed == total else
            f"{n_failed} of {total} {unit} failed ({share:.0%}, more than llm.max_failed_share={limit:g})")
    by_class = ", ".join(f"{k} ({v})" for k, v in classes.items())
    raise LLMOutageError(f"{head}: {cause}. Failures by class: {by_class}."
                         + (f" First {top}: {clipped(message)}" if message else "")
                         + f" The run is recorded as failed; fix the {_what(config.llm)} and run the same command "
                           "again (answers that did arrive are cached).")
