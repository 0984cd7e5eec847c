"""A prompt longer than a local model's context is refused per row, or truncated with a warning, in seconds."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm.base import LLMRequest, cache_key
from equilens.tasks.llm.context import TOO_LONG, fit_to_context

WORDS = ["he", "she", "is", "a", "nurse", "doctor", "be", "kind", "system", "user", "assistant", ":"]
TEMPLATE = ("{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}"
            "{% if add_generation_prompt %}assistant :{% endif %}")


@pytest.fixture(scope="module")
def tiny_chat_lm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 1-layer GPT-2 with a 64-token context, a word-level tokenizer and a chat template."""
    import torch
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("chat-gpt2")
    vocab = {w: i for i, w in enumerate(["<|endoftext|>", "[UNK]", *WORDS])}
    raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<|endoftext|>",
                                  bos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tok.chat_template = TEMPLATE
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_layer=1, n_embd=16, n_head=2, n_positions=64)).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def _cfg(model: str, **kw: object) -> LLMConfig:
    return LLMConfig(provider="local", model=model, system_prompt="be kind", max_tokens=4, temperature=0.0, **kw)


def _variants(texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"variant_id": [f"v{i}" for i in range(len(texts))], "prompt_id": [f"p{i}" for i in range(len(texts))],
                         "attribute": "gender", "grp": "male", "text": texts})


def test_a_1mb_prompt_is_refused_per_row_within_seconds(tiny_chat_lm: str, tmp_path: Path) -> None:
    from equilens.tasks.pipeline.prefect_tasks import call_llm_task

    huge = "he is a nurse " * 75_000  # 1.05 MB, 300,000 tokens
    cfg = _cfg(tiny_chat_lm)
    t0 = time.perf_counter()
    frame = call_llm_task.fn(_variants(["he is a nurse", huge.strip()]), cfg, str(tmp_path / "e.duckdb"), 10.0)
    seconds = time.perf_counter() - t0
    assert seconds < 30, seconds
    short, long = frame.set_index("variant_id").loc["v0"], frame.set_index("variant_id").loc["v1"]
    assert bool(short["ok"]) and pd.isna(short["error_class"])
    assert not bool(long["ok"]) and long["error_class"] == TOO_LONG and long["attempts"] == 0
    assert "the prompt has 300,000 tokens" in long["error_message"]
    assert "context of 64 tokens" in long["error_message"] and "llm.long_prompts=refuse" in long["error_message"]


def test_truncate_keeps_the_first_tokens_and_says_so(tiny_chat_lm: str) -> None:
    from equilens.tasks.llm.runner import run_requests

    cfg = _cfg(tiny_chat_lm, long_prompts="truncate")
    prompt = " ".join(["she", "is", "a", "doctor"] * 40)  # 160 tokens, 639 bytes
    reqs = [LLMRequest(prompt, 0, cache_key(cfg, prompt, 0), meta={"variant_id": "v"})]
    fit = fit_to_context(reqs, cfg)
    # room = 64 (context) - 8 (template around an empty user message: "system : be kind user : assistant :")
    #        - 4 (max_tokens) = 52 tokens of the prompt
    assert fit.requests[0].prompt.split() == prompt.split()[:52]
    assert fit.requests[0].cache_key == cache_key(cfg, fit.requests[0].prompt, 0) != reqs[0].cache_key
    [res] = fit.merge(run_requests(fit.requests, cfg))
    assert res.ok and res.prompt_tokens == 8 + 52
    assert res.error_message.startswith("warning: prompt truncated to its first 52 tokens (the prompt has 160 tokens")
    assert res.request.meta == {"variant_id": "v"}


def test_prompts_that_fit_are_untouched_and_load_nothing() -> None:
    def loader(model: str):
        raise AssertionError("short prompts never load the model")

    cfg = _cfg("unused")
    reqs = [LLMRequest("he is a nurse", i, cache_key(cfg, "he is a nurse", i)) for i in range(3)]
    fit = fit_to_context(reqs, cfg, loader=loader)
    assert fit.requests == reqs and not fit.refused and not fit.notes


def test_exactly_the_room_fits(tiny_chat_lm: str) -> None:
    # trailing spaces add no token but defeat the byte shortcut, so both prompts are counted
    cfg = _cfg(tiny_chat_lm).model_copy(update={"system_prompt": "be kind" + " " * 600})
    fits, over = " ".join(["nurse"] * 52), " ".join(["nurse"] * 53)  # room is 52 tokens, as above
    fit = fit_to_context([LLMRequest(fits, 0, "k1"), LLMRequest(over, 0, "k2")], cfg)
    assert [r.cache_key for r in fit.requests] == ["k1"] and [r.request.cache_key for r in fit.refused] == ["k2"]


def test_remote_providers_are_left_to_their_server() -> None:
    cfg = LLMConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
    reqs = [LLMRequest("x" * 100_000, 0, "k")]
    assert fit_to_context(reqs, cfg).requests == reqs
