"""A tiny random GPT-2 built on the spot, with a chat template and no end-of-text token, so every
answer runs to ``max_tokens``: the local provider under a long generation, without a model download."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def build_endless_lm(path: Path, words: Iterable[str], *, n_layer: int, n_embd: int, n_head: int,
                     n_positions: int) -> str:
    """Save the model and a word-level tokenizer over ``words`` (plus the chat-template words) to ``path``."""
    import torch
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab_words = sorted(set(words) | {"system", "user", "assistant", ":"})
    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "[UNK]", *vocab_words])}
    raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<eos>", pad_token="<pad>")
    tok.chat_template = ("{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}"
                         "{% if add_generation_prompt %}assistant :{% endif %}")
    torch.manual_seed(0)
    lm = GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_layer=n_layer, n_embd=n_embd, n_head=n_head,
                                    n_positions=n_positions, bos_token_id=None, eos_token_id=None))
    lm.generation_config.eos_token_id = None
    lm.generation_config.bos_token_id = None
    lm.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)
