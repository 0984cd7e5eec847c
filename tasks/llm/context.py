"""Prompts longer than an in-process model's context: refused per row, or truncated with a recorded warning.

Before any generation, each prompt's chat-formatted token count plus ``llm.max_tokens`` is compared
with the model's context length (``max_position_embeddings``). A prompt that does not fit is, by
``llm.long_prompts``, either *refused*: a failed row (``error_class`` ``ContextLengthExceeded``)
that is never sent, or *truncated*: its first tokens are kept, and the answered row says so in
``error_message``. Nothing is spent generating from a prompt the model cannot read.

Counting is cheap for the usual prompt: a byte-level tokenizer never makes more tokens than the
prompt has UTF-8 bytes, so only prompts with more bytes than the room left are tokenized.
Remote providers are left alone: their servers answer an over-long prompt with a 400 per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm.base import LLMRequest, LLMResult, cache_key

TOO_LONG = "ContextLengthExceeded"


@dataclass
class ContextCheck:
    """What to send (some prompts truncated), the refused rows, and a warning per truncated request."""

    requests: list[LLMRequest]
    refused: list[LLMResult] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # cache key of a truncated request -> warning

    def merge(self, results: Sequence[LLMResult]) -> list[LLMResult]:
        """The runner's results with each truncation warning recorded, then the refused rows."""
        out = [replace(r, error_message=self.notes[r.request.cache_key]) if r.request.cache_key in self.notes
               and r.error_message is None else r for r in results]
        return out + self.refused


def model_context(lm: Any, tok: Any) -> int | None:
    """The model's context length in tokens (None when it does not say)."""
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(getattr(lm, "config", None), attr, None)
        if isinstance(value, int) and value > 0:
            return value
    value = getattr(tok, "model_max_length", None)
    return value if isinstance(value, int) and 0 < value < 10**7 else None


def _template_overhead(tok: Any, system_prompt: str) -> int:
    """Tokens the chat template adds around an empty user message (system prompt, role markers)."""
    chat = [{"role": "system", "content": system_prompt}, {"role": "user", "content": ""}]
    try:
        ids = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
    except Exception:  # noqa: BLE001 - no chat template: the prompt goes in as it is
        return len(tok(system_prompt, add_special_tokens=True)["input_ids"])
    if isinstance(ids, dict) or hasattr(ids, "keys"):  # a BatchEncoding in newer transformers
        ids = ids["input_ids"]
    return len(ids)


def fit_to_context(requests: Sequence[LLMRequest], cfg: LLMConfig, loader: Any = None) -> ContextCheck:
    """Refuse or truncate (``cfg.long_prompts``) the requests an in-process model cannot read whole.

    ``loader(model) -> (lm, tokenizer)`` defaults to the local provider's cached loader; the model is
    loaded only when some prompt might not fit.
    """
    if cfg.provider != "local" or not requests:
        return ContextCheck(list(requests))
    budget_guess = 512  # fewer bytes (hence tokens) than this fit any chat model (contexts >= 512): no load
    system = max((cfg.system_prompt if r.system is None else r.system for r in requests), key=len)  # the longest
    if all(len(r.prompt.encode("utf-8")) + len(system.encode("utf-8")) + cfg.max_tokens < budget_guess
           for r in requests):
        return ContextCheck(list(requests))
    if loader is None:
        from equilens.tasks.llm.local import load_causal_lm as loader
    lm, tok = loader(cfg.model)
    context = model_context(lm, tok)
    if context is None:
        return ContextCheck(list(requests))
    room = context - _template_overhead(tok, system) - cfg.max_tokens
    check = ContextCheck([])
    counted: dict[str, list[int]] = {}
    for req in requests:
        if len(req.prompt.encode("utf-8")) <= room:  # cannot be more tokens than bytes
            check.requests.append(req)
            continue
        ids = counted.get(req.prompt)
        if ids is None:
            ids = counted[req.prompt] = tok(req.prompt, add_special_tokens=False)["input_ids"]
        if len(ids) <= room:
            check.requests.append(req)
            continue
        where = (f"the prompt has {len(ids):,} tokens; with llm.max_tokens={cfg.max_tokens} and the chat "
                 f"template it needs more than the model's context of {context:,} tokens")
        if cfg.long_prompts == "truncate" and room > 0:
            text = tok.decode(ids[:room], skip_special_tokens=True)
            short = replace(req, prompt=text, cache_key=cache_key(cfg, text, req.sample_idx, req.system))
            check.requests.append(short)
            check.notes[short.cache_key] = (f"warning: prompt truncated to its first {room:,} tokens ({where}; "
                                            "llm.long_prompts=truncate)")
        else:
            check.refused.append(LLMResult(
                request=req, text=None, ok=False, refusal=False, error_class=TOO_LONG,
                error_message=f"{where}: not sent (llm.long_prompts=refuse; truncate keeps the first tokens)",
                attempts=0, latency_s=0.0))
    return check
