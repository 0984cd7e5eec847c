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
