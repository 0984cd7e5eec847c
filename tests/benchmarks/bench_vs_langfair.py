"""Counterfactual scoring + metrics: equilens vs LangFair 0.8 on the same fixed responses.

    bash tests/benchmarks/setup_langfair_venv.sh                       # once (~1.5 min, ~1.9 GB)
    .venv/bin/python tests/benchmarks/bench_vs_langfair.py             # 2,000 prompts, ~4 min on 2 cores
    .venv/bin/python tests/benchmarks/bench_vs_langfair.py --prompts 10000   # the full run, ~20 min

A seeded synthetic set of N prompts x 4 race groups of responses (2-4 sentences, 15-40 words; the
four answers to one prompt share a plan but differ in word choices, sentences and the group
mention) is written to a parquet file in /tmp and read by both sides. For all 6 group pairs both
compute cosine similarity (the same shipped MiniLM weights), BLEU, ROUGE-L and strict sentiment
parity (Wasserstein-1 of VADER ``neg``), with no neutralisation on either side.

* equilens, in this process: each distinct text is scored once (``VaderScorer("neg")``,
  ``SentenceEmbeddingScorer("all-MiniLM-L6-v2")``), then the metric functions run per pair.
* LangFair, in .venv-langfair (it pins numpy<2) through ``_langfair_worker.py``: one
  ``CounterfactualMetrics(neutralize_tokens=False)`` evaluated per pair, as its users call it, so
  it embeds and scores each text again for every pair the text is in (3 pairs per group).

Printed: values per metric and pair with their absolute differences, a BLEU tokenisation check
(LangFair's ``word_tokenize`` splits sentences with punkt before the Treebank tokenizer; see the
worker's docstring for the offline punkt data), and timings per stage with LangFair/equilens ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import string
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
PAIRS = [f"{a}-{b}" for a, b in combinations(GROUPS, 2)]
METRICS = ["cosine", "bleu", "rougel", "sentiment"]
TOLERANCE = 1e-3
WORKER = Path(__file__).with_name("_langfair_worker.py")
DEFAULT_LANGFAIR_PY = ROOT / ".venv-langfair" / "bin" / "python"

# Response templates. No abbreviations, initials or numbers: punkt's sentence split is then the
# same with or without its trained English parameters (see _langfair_worker.py).
VOCAB = {
    "subj": ["the applicant", "this candidate", "the new hire", "the student", "the tenant", "the patient",
             "this person", "the volunteer"],
    "gsubj": ["applicant", "candidate", "employee", "student", "tenant", "neighbor", "customer", "nurse"],
    "adj": ["kind", "hostile", "brilliant", "lazy", "friendly", "rude", "careful", "angry", "helpful", "calm",
            "awful", "wonderful", "honest", "dishonest", "reliable", "careless", "patient", "aggressive",
            "capable", "nervous", "confident", "polite", "difficult", "cheerful"],
    "noun": ["judgment", "leadership", "attention to detail", "patience", "creativity",
             "communication skills", "work ethic", "honesty", "reliability", "focus"],
    "adv": ["well", "poorly", "calmly", "quickly", "carefully", "badly", "professionally", "nervously",
            "confidently", "slowly"],
    "task": ["interview", "assignment", "complaint", "project", "negotiation", "presentation", "exam",
             "review", "conflict", "deadline"],
    "people": ["colleagues", "neighbors", "teachers", "managers", "customers", "classmates", "friends",
               "reviewers"],
    "role": ["worker", "leader", "teammate", "tenant", "partner", "employee", "mentor", "manager"],
    "rec": ["strongly recommend", "recommend", "not recommend", "hesitate before", "consider",
            "definitely avoid"],
    "amount": ["strong", "some", "little", "no", "clear", "mixed", "limited", "growing"],
    "challenge": ["barriers", "bias", "scrutiny", "obstacles", "pressure", "doubt", "criticism",
                  "support"],
    "place": ["work", "school", "home", "the office", "the clinic", "interviews"],
    "answer": ["Probably", "Yes", "Maybe", "Not really", "Absolutely", "Hard to say"],
    "verb": ["learns", "works", "responds", "communicates", "adapts", "improves", "behaves", "argues"],
    "showed": ["showed", "lacked", "demonstrated", "questioned", "ignored", "valued"],
    "excl": ["smoothly", "badly", "better than expected", "worse than expected", "fine"],
}
TEMPLATES = [
    "{subj} seems {adj} and {adj2} in most situations.",
    "I would {rec} hiring them because they {showed} {adj} {noun}.",
    "they handled the {task} {adv}, although some {people} found them {adj}.",
    "overall, {subj} is a {adj} {role} who {verb} {adv}.",
    "there is {amount} evidence that they would be a {adj} {role}.",
    "{people} described them as {adj}, {adj2} and {adj3}.",
    "would they fit the team? {answer}, they seem {adj} and {adj2}.",
    "the {task} went {excl}!",
    "as a {group} {gsubj}, they may face {amount} {challenge} at {place}.",
    "the {group} {gsubj} {verb} {adv} and shows {adj} {noun}.",
]
SLOTS = [[name for _, name, _, _ in string.Formatter().parse(t) if name] for t in TEMPLATES]


def _vocab(slot: str) -> list[str]:
    return VOCAB[slot.rstrip("0123456789")]


def _sentence(k: int, fill: dict[str, str], group: str) -> str:
    s = TEMPLATES[k].format(**fill, group=group)
    return s[0].upper() + s[1:]


def make_responses(n: int, seed: int = 20240611) -> pd.DataFrame:
    """``n`` rows x 4 group columns of similar, not identical, responses of 15-40 words."""
    rng = np.random.default_rng(seed)

    def pick(slot: str) -> str:
        words = _vocab(slot)
        return words[rng.integers(len(words))]

    def fill(k: int) -> tuple[int, dict[str, str]]:
        return k, {s: pick(s) for s in SLOTS[k] if s != "group"}

    def plan() -> list[tuple[int, dict[str, str]]]:
        return [fill(int(k)) for k in rng.choice(len(TEMPLATES), size=rng.integers(2, 5), replace=False)]

    rows = []
    while len(rows) < n:
        base = plan()
        row = {}
        for g in GROUPS:
            sents = [(k, {s: (pick(s) if rng.random() < 0.2 else w) for s, w in f.items()}) for k, f in base]
            if len(sents) > 2 and rng.random() < 0.15:
                del sents[rng.integers(len(sents))]
            if rng.random() < 0.15:
                extra = fill(int(rng.integers(len(TEMPLATES))))
                sents.insert(int(rng.integers(len(sents) + 1)), extra)
            row[g] = " ".join(_sentence(k, f, g) for k, f in sents)
        if len(set(row.values())) == len(GROUPS) and all(15 <= len(t.split()) <= 40 for t in row.values()):
            rows.append(row)
    return pd.DataFrame(rows, columns=GROUPS)


def equilens_side(frame: pd.DataFrame) -> tuple[dict, dict, dict]:
    t0 = time.perf_counter()
    from tasks.metrics.counterfactual import pairwise_cosine, strict_sentiment_parity
    from tasks.metrics.text_similarity import pairwise_min_bleu, pairwise_rouge_l
    from tasks.scoring.base import dedupe_texts
    from tasks.scoring.embeddings import SentenceEmbeddingScorer, load_sentence_transformer
    from tasks.scoring.sentiment import VaderScorer

    embedder = SentenceEmbeddingScorer("all-MiniLM-L6-v2")
    load_sentence_transformer(embedder.model_name, embedder.device)  # what score() loads (cached)
    vader = VaderScorer("neg")
    t = {"load": time.perf_counter() - t0}

    n = len(frame)
    t1 = time.perf_counter()
    distinct, inverse = dedupe_texts([x for g in GROUPS for x in frame[g]])
    t["dedupe"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    emb = embedder.score(distinct)[inverse]
    t["embed"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    sent = vader.score(distinct)[inverse]
    t["vader"] = time.perf_counter() - t1

    rows = {g: slice(k * n, (k + 1) * n) for k, g in enumerate(GROUPS)}
    values: dict[str, dict[str, float]] = {}
    mt = dict.fromkeys(METRICS, 0.0)
    def timed(name: str, fn, *args) -> float:  # noqa: ANN001
        t1 = time.perf_counter()
        value = float(fn(*args))
        mt[name] += time.perf_counter() - t1
        return value

    for a, b in combinations(GROUPS, 2):
        ta, tb, ea, eb = frame[a].tolist(), frame[b].tolist(), emb[rows[a]], emb[rows[b]]
        values[f"{a}-{b}"] = {
            "cosine": timed("cosine", lambda x, y: pairwise_cosine(x, y).mean(), ea, eb),
            "bleu": timed("bleu", lambda x, y: pairwise_min_bleu(x, y).mean(), ta, tb),
            "rougel": timed("rougel", lambda x, y: pairwise_rouge_l(x, y).mean(), ta, tb),
            "sentiment": timed("sentiment", strict_sentiment_parity, sent[rows[a]], sent[rows[b]]),
        }
    t.update({f"m_{k}": s for k, s in mt.items()})
    t["scoring"] = t["dedupe"] + t["embed"] + t["vader"]
    t["metrics"] = sum(mt.values())
    t["compute"] = t["scoring"] + t["metrics"]
    # per metric, as LangFair's classes do it: scoring included
    t["cosine"] = t["dedupe"] + t["embed"] + mt["cosine"]
    t["sentiment"] = t["vader"] + mt["sentiment"]
    t["bleu"], t["rougel"] = mt["bleu"], mt["rougel"]
    return values, t, {"distinct": len(distinct), "texts": len(inverse)}


def sentence_split_bleu(frame: pd.DataFrame) -> dict[str, float]:
    """Diagnostic: equilens' sentence_bleu on word_tokenize-style tokens (punkt split, then Treebank)."""
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from tasks.metrics.text_similarity import sentence_bleu

    splitter, treebank = PunktSentenceTokenizer(), NLTKWordTokenizer()  # punkt without parameters

    def tokens(text: str) -> list[str]:
        return [tok for s in splitter.tokenize(text.lower()) for tok in treebank.tokenize(s)]

    out = {}
    for a, b in combinations(GROUPS, 2):
        ta, tb = [tokens(x) for x in frame[a]], [tokens(x) for x in frame[b]]
        out[f"{a}-{b}"] = float(np.mean([min(sentence_bleu(x, y), sentence_bleu(y, x))
                                         for x, y in zip(ta, tb)]))
    return out


def run_langfair(python: Path, data: Path) -> tuple[dict, float]:
    t0 = time.perf_counter()
    out = subprocess.run([str(python), str(WORKER), str(data)], capture_output=True, text=True,
                         env=dict(os.environ, HF_HUB_OFFLINE="1"))
    wall = time.perf_counter() - t0
    if out.returncode:
        sys.stderr.write(out.stderr[-4000:])
        raise SystemExit(f"LangFair worker failed (exit {out.returncode})")
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000, help="prompts (rows); 4 responses each")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--langfair-python", type=Path,
                        default=Path(os.environ.get("LANGFAIR_PYTHON", DEFAULT_LANGFAIR_PY)))
    args = parser.parse_args()
    if not args.langfair_python.exists():
        raise SystemExit(f"No LangFair venv at {args.langfair_python}: "
                         "run tests/benchmarks/setup_langfair_venv.sh")

    frame = make_responses(args.prompts, args.seed)
    data = Path("/tmp") / f"equilens-bench-vs-langfair-{args.prompts}-{args.seed}.parquet"
    frame.to_parquet(data, index=False)
    words = np.array([len(x.split()) for g in GROUPS for x in frame[g]])

    ours, our_t, counts = equilens_side(frame)
    lf, lf_wall = run_langfair(args.langfair_python, data)
    theirs, lf_t = lf["values"], lf["timings"]

    print(f"equilens vs LangFair 0.8: {args.prompts:,} prompts x {len(GROUPS)} race groups = "
          f"{counts['texts']:,} responses ({counts['distinct']:,} distinct), 6 pairs")
    print(f"words per response: min {words.min()}, mean {words.mean():.1f}, max {words.max()}; data {data}")
    print(f"LangFair punkt_tab: {lf['punkt']}\n")
    print(f"{'metric':<10} {'pair':<15} {'equilens':>10} {'langfair':>10} {'|diff|':>9}")
    worst = dict.fromkeys(METRICS, 0.0)
    for name in METRICS:
        for pair in PAIRS:
            a, b = ours[pair][name], theirs[pair][name]
            worst[name] = max(worst[name], abs(a - b))
            print(f"{name:<10} {pair:<15} {a:>10.6f} {b:>10.6f} {abs(a - b):>9.2e}")
    print("\nlargest |diff|: " + ", ".join(
        f"{k} {v:.2e} ({'ok' if v < TOLERANCE else 'DIFFERS'})" for k, v in worst.items()))

    split = sentence_split_bleu(frame)
    print("\nBLEU tokenisation check. LangFair: word_tokenize = punkt sentence split, then Treebank;")
    print("equilens' bleu_tokens: Treebank on the whole text (a period inside the text stays on its word).")
    print(f"{'pair':<15} {'eq as is':>9} {'LF no split':>11} {'|diff|':>9}   "
          f"{'eq + split':>10} {'LF as is':>9} {'|diff|':>9}")
    for pair in PAIRS:
        e, ln = ours[pair]["bleu"], lf["diagnostic"][pair]["bleu_no_sentence_split"]
        es, lr = split[pair], theirs[pair]["bleu"]
        print(f"{pair:<15} {e:>9.6f} {ln:>11.6f} {abs(e - ln):>9.2e}   "
              f"{es:>10.6f} {lr:>9.6f} {abs(es - lr):>9.2e}")

    print(f"\n{'seconds':<34} {'equilens':>9} {'langfair':>9} {'LF/equilens':>12}")

    def row(label: str, ours_s: float | None, theirs_s: float | None) -> None:
        o = f"{ours_s:>9.2f}" if ours_s is not None else f"{'-':>9}"
        th = f"{theirs_s:>9.2f}" if theirs_s is not None else f"{'-':>9}"
        r = f"{theirs_s / ours_s:>11.1f}x" if ours_s and theirs_s is not None else f"{'-':>12}"
        print(f"{label:<34} {o} {th} {r}")

    row("import + model load", our_t["load"], lf_t["import"] + lf_t["load"])
    row("cosine (embedding + metric)", our_t["cosine"], lf_t["cosine"])
    row("sentiment (VADER + W1)", our_t["sentiment"], lf_t["sentiment"])
    row("bleu", our_t["bleu"], lf_t["bleu"])
    row("rougel", our_t["rougel"], lf_t["rougel"])
    row("  equilens scoring (distinct texts)", our_t["scoring"], None)
    row("  equilens metrics (6 pairs)", our_t["metrics"], None)
    row("compute total (scoring + metrics)", our_t["compute"], lf_t["compute"])
    row("total incl. import + load", our_t["load"] + our_t["compute"],
        lf_t["import"] + lf_t["load"] + lf_t["compute"])
    print(f"(LangFair worker process wall time {lf_wall:.1f} s, interpreter start and parquet read included)")


if __name__ == "__main__":
    main()
