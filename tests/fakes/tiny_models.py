"""Models a test builds on the spot (nothing comes from a hub)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def tiny_embedder(path: Path, words: Iterable[str]) -> str:
    """A small random BERT over ``words`` that sentence-transformers loads with mean pooling, saved
    under ``path`` (created): a stand-in for MiniLM where only the plumbing is tested."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tok = BertTokenizer(str(path / "vocab.txt"))
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=128)).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def tiny_llama(path: Path, words: Iterable[str], *, endless: bool = False, hidden: int = 64, layers: int = 2) -> str:
    """A small random Llama (SmolLM2's architecture, which CTranslate2 converts) with a word-level
    tokenizer over ``words`` and SmolLM2's chat markers (``<|im_start|>``, ``<|im_end|>`` as the end
    token), saved under ``path``. ``endless``: no end token in the generation config, so every answer
    runs to ``max_tokens``. The weights are drawn wide enough that greedy choices are clear-cut."""
    import torch
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<|im_start|>", "<|im_end|>"]
    vocab_words = sorted(set(words) | {"system", "user", "assistant"})
    vocab = {w: i for i, w in enumerate([*specials, *vocab_words])}
    raw = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    raw.pre_tokenizer = Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", bos_token="<|im_start|>",
                                  eos_token="<|im_end|>", pad_token="<|im_end|>")
    tok.chat_template = ("{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
                         "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16384,
                      initializer_range=0.2, bos_token_id=1, eos_token_id=None if endless else 2, pad_token_id=2,
                      tie_word_embeddings=True)
    lm = LlamaForCausalLM(cfg)
    lm.generation_config.eos_token_id = None if endless else 2
    lm.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


# The words of the tiny language models (``tiny_gpt2`` and ``tiny_bert`` in conftest): sentences of the
# likelihood and bias-test tests are written in them.
LM_WORDS = "the a man woman doctor nurse is was here good bad kind smart and he she works at home".split()


def tiny_causal_lm(path: Path, words: Iterable[str]) -> str:
    """A small random GPT-2 with a word-level tokenizer over ``words``, saved under ``path``."""
    import torch
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<|endoftext|>", "[UNK]", *words])}
    raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=raw, unk_token="[UNK]", eos_token="<|endoftext|>", bos_token="<|endoftext|>"
    )
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(vocab), n_layer=1, n_embd=16, n_head=2, n_positions=32)
    GPT2LMHeadModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def tiny_masked_lm(path: Path, words: Iterable[str]) -> str:
    """A small random BERT masked LM with a WordPiece vocabulary of ``words``, saved under ``path`` (created)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    words = list(words)
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tok = BertTokenizer.from_pretrained(str(path))  # a WordPiece vocab file, read offline
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(words) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    )
    BertForMaskedLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


# The words of the tiny toxicity classifier (``tiny_classifier``).
CLASSIFIER_WORDS = (
    "you are a the is and not very good bad nice kind awful idiot stupid hate love people day "
    "this that it was he she they we great terrible movie food weather today"
).split()


def tiny_classifier(path: Path, problem_type: str | None = None) -> Path:
    """A small random BERT sequence classifier with the labels ``non_toxic`` and ``toxic`` over
    ``CLASSIFIER_WORDS``, saved under ``path`` (created). ``problem_type``: as ``BertConfig`` takes it
    (``"multi_label_classification"`` for sigmoid scores)."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CLASSIFIER_WORDS]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
        id2label={0: "non_toxic", 1: "toxic"}, label2id={"non_toxic": 0, "toxic": 1},
        problem_type=problem_type,
    )
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    return path
