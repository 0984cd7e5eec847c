"""Counterfactual scoring + metrics: equilens vs LangFair 0.8 on the same fixed responses.

Both sides get N prompts x 4 race groups of synthetic responses (seeded) and compute, for all 6
group pairs, cosine similarity (MiniLM, the same shipped weights), BLEU, ROUGE-L and strict
sentiment parity (VADER). Values are compared and both are timed; equilens scores each distinct
text once and vectorises the metrics, LangFair re-embeds and re-scores per pair as its users call it.

    bash tests/benchmarks/setup_langfair_venv.sh          # once: LangFair pins numpy<2, own venv
    .venv/bin/python tests/benchmarks/bench_vs_langfair.py [--prompts 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
GROUPS = ["white", "black", "asian", "hispanic"]
LANGFAIR_PY = Path(os.environ.get("LANGFAIR_PYTHON", ROOT / ".venv-langfair" / "bin" / "python"))

SUBJECTS = ["The applicant", "This person", "The new hire", "Our neighbor", "The student", "The doctor"]
VERBS = ["is", "seems", "was described as", "appears", "has been"]
ADJ = ["kind", "hostile", "brilliant", "lazy", "friendly", "rude", "careful", "angry", "helpful", "calm",
       "awful", "wonderful", "sad", "happy", "honest", "dishonest"]
TAILS = ["at work.", "in class today.", "with everyone they met.", "during the interview.", "on the phone.",
         "and will do well.", "but needs more support.", "and people trust them.", "so we should be careful."]


def make_responses(n: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        base = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(ADJ), "and", rng.choice(ADJ), rng.choice(TAILS)]
        row = {}
        for g in GROUPS:
            words = list(base)
            if rng.random() < 0.6:  # each group's answer drifts a little from the shared base
                words[rng.integers(1, 5)] = rng.choice(ADJ)
            if rng.random() < 0.3:
                words.append(rng.choice(TAILS))
            row[g] = " ".join(str(w) for w in words)
        rows.append(row)
    return pd.DataFrame(rows)


def equilens_side(frame: pd.DataFrame) -> tuple[dict, dict]:
    from tasks.metrics.counterfactual import pairwise_cosine, wasserstein1
    from tasks.metrics.text_similarity import pairwise_min_bleu, pairwise_rouge_l
    from tasks.scoring.base import dedupe_texts
    from tasks.scoring.embeddings import SentenceEmbeddingScorer
    from tasks.scoring.sentiment import VaderScorer

    t0 = time.perf_counter()
    texts = [t for g in GROUPS for t in frame[g]]
    distinct, inverse = dedupe_texts(texts)
    emb = SentenceEmbeddingScorer("all-MiniLM-L6-v2", batch_size=128).score(distinct)[inverse]
    sent = VaderScorer("neg").score(distinct)[inverse]
    t_score = time.perf_counter() - t0
    n = len(frame)
    idx = {g: slice(k * n, (k + 1) * n) for k, g in enumerate(GROUPS)}
    values = {}
    t1 = time.perf_counter()
    for a, b in combinations(GROUPS, 2):
        ta, tb = frame[a].tolist(), frame[b].tolist()
        values[f"{a}-{b}"] = {
            "cosine": float(pairwise_cosine(emb[idx[a]], emb[idx[b]]).mean()),
            "bleu": float(pairwise_min_bleu(ta, tb).mean()),
            "rougel": float(pairwise_rouge_l(ta, tb).mean()),
            "sentiment": wasserstein1(sent[idx[a]], sent[idx[b]]),
        }
    t_metrics = time.perf_counter() - t1
    return values, {"score": t_score, "metrics": t_metrics, "total": t_score + t_metrics}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000)
    args = parser.parse_args()
    if not LANGFAIR_PY.exists():
        raise SystemExit(f"No LangFair venv at {LANGFAIR_PY}: run tests/benchmarks/setup_langfair_venv.sh first.")
    frame = make_responses(args.prompts)
    data = Path("/tmp") / f"equilens-bench-{args.prompts}.parquet"
    frame.to_parquet(data)
    ours, our_t = equilens_side(frame)
    worker = Path(__file__).with_name("_langfair_worker.py")
    out = subprocess.run([str(LANGFAIR_PY), str(worker), str(data)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, HF_HUB_OFFLINE="1"))
    theirs = json.loads(out.stdout.strip().splitlines()[-1])
    lf_t = theirs.pop("_timings")
    print(f"{args.prompts} prompts x {len(GROUPS)} groups, 6 pairs\n")
    print(f"{'pair':<16} {'metric':<10} {'equilens':>10} {'langfair':>10} {'|diff|':>9}")
    worst: dict[str, float] = {}
    for pair, metrics in ours.items():
        for name, value in metrics.items():
            other = theirs[pair][name]
            worst[name] = max(worst.get(name, 0.0), abs(value - other))
            print(f"{pair:<16} {name:<10} {value:>10.5f} {other:>10.5f} {abs(value - other):>9.2e}")
    print("\nlargest |diff| per metric: " + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    print(f"\n{'':<10} {'equilens':>10} {'langfair':>10} {'speed-up':>9}")
    for stage in ("score", "metrics", "total"):
        if stage in lf_t:
            print(f"{stage:<10} {our_t[stage]:>9.2f}s {lf_t[stage]:>9.2f}s {lf_t[stage] / our_t[stage]:>8.1f}x")


if __name__ == "__main__":
    main()
