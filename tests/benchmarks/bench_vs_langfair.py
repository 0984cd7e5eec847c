"""Counterfactual scoring + metrics: equilens vs LangFair 0.8 on the same fixed responses.

    bash tests/benchmarks/setup_langfair_venv.sh                       # once (~1.5 min, ~1.9 GB)
    .venv/bin/pip install -e '.[onnx]'                                 # optional: the onnx backend
    .venv/bin/python tests/benchmarks/bench_vs_langfair.py --full-stats               # 2,000 prompts
    .venv/bin/python tests/benchmarks/bench_vs_langfair.py --prompts 2000 10000       # both sizes, one run

A seeded synthetic set of N prompts x 4 race groups of responses (2-4 sentences, 15-40 words; the
four answers to one prompt share a plan but differ in word choices, sentences and the group
mention) is written to a parquet file in /tmp and read by both sides. For all 6 group pairs both
compute cosine similarity (the same shipped MiniLM weights), BLEU, ROUGE-L and strict sentiment
parity (Wasserstein-1 of VADER ``neg``), with no neutralisation on either side.

* equilens, in this process, once per backend (torch, and onnx when the extra is installed):
  ``score_texts`` as the flow runs it (each distinct text scored once, VADER in a side thread while
  the model encodes), then the metric functions per pair. Token caches start cold for each backend.
* LangFair, in .venv-langfair (it pins numpy<2) through ``_langfair_worker.py``: one
  ``CounterfactualMetrics(neutralize_tokens=False)`` evaluated per pair, as its users call it, so
  it embeds and scores each text again for every pair the text is in (3 pairs per group).

Printed per size: values per metric and pair with each backend's absolute difference to LangFair
(tolerance 1e-6), timings per stage with LangFair/equilens ratios, the share of equilens' time in
MiniLM encoding against a bare forward pass on pre-tokenised batches, with ``--full-stats`` the
metric stage's extra statistics (bootstrap, permutation tests, noise floors) timed separately,
and at the end one summary table of all sizes and backends.
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
TOLERANCE = 1e-6
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


def equilens_side(frame: pd.DataFrame, backend: str, threads: int | None) -> tuple[dict, dict, dict, object]:
    """The score stage as the flow runs it (``score_texts``: distinct texts, VADER in a side thread
    while the model encodes), then the four metric values per pair, as LangFair computes them."""
    t0 = time.perf_counter()
    from equilens.tasks.config import ScoringConfig
    from equilens.tasks.inputs.prompts import text_hash
    from equilens.tasks.metrics import text_similarity
    from equilens.tasks.metrics.counterfactual import pairwise_cosine, strict_sentiment_parity
    from equilens.tasks.metrics.text_similarity import pairwise_min_bleu, pairwise_rouge_l
    from equilens.tasks.pipeline import score_texts
    from equilens.tasks.scoring.embeddings import SentenceEmbeddingScorer

    text_similarity._stem.cache_clear()  # each side starts cold: no stems left from another backend's run
    cfg = ScoringConfig(backend=backend, threads=threads)
    SentenceEmbeddingScorer(cfg.embedding_model, backend=backend, threads=threads).score(["warm up"])  # load
    t = {"load": time.perf_counter() - t0}

    encode = SentenceEmbeddingScorer.score
    def timed_encode(self, texts):  # instrumentation: time spent encoding
        t1 = time.perf_counter()
        try:
            return encode(self, texts)
        finally:
            t["embed"] = time.perf_counter() - t1

    SentenceEmbeddingScorer.score = timed_encode
    try:
        t1 = time.perf_counter()
        scores = score_texts([x for g in GROUPS for x in frame[g]], cfg)
        t["scoring"] = time.perf_counter() - t1
    finally:
        SentenceEmbeddingScorer.score = encode
    sentiment = scores.scalar.set_index("text_hash")["value"]

    values: dict[str, dict[str, float]] = {}
    mt = dict.fromkeys(METRICS, 0.0)
    def timed(name: str, fn, *args) -> float:
        t1 = time.perf_counter()
        value = float(fn(*args))
        mt[name] += time.perf_counter() - t1
        return value

    def cosine(ta: list[str], tb: list[str]) -> float:
        emb = scores.embeddings
        return pairwise_cosine(np.stack([emb[text_hash(x)] for x in ta]), np.stack([emb[text_hash(x)] for x in tb])).mean()

    def parity(ta: list[str], tb: list[str]) -> float:
        return strict_sentiment_parity(sentiment.reindex([text_hash(x) for x in ta]).to_numpy(),
                                       sentiment.reindex([text_hash(x) for x in tb]).to_numpy())

    for a, b in combinations(GROUPS, 2):
        ta, tb = frame[a].tolist(), frame[b].tolist()
        values[f"{a}-{b}"] = {
            "cosine": timed("cosine", cosine, ta, tb),
            "bleu": timed("bleu", lambda x, y: pairwise_min_bleu(x, y).mean(), ta, tb),
            "rougel": timed("rougel", lambda x, y: pairwise_rouge_l(x, y).mean(), ta, tb),
            "sentiment": timed("sentiment", parity, ta, tb),
        }
    t.update({f"m_{k}": v for k, v in mt.items()})
    t["metrics"] = sum(mt.values())
    t["compute"] = t["scoring"] + t["metrics"]
    return values, t, {"distinct": len(scores.embeddings), "texts": 4 * len(frame)}, scores


def full_statistics_seconds(frame: pd.DataFrame, scores) -> float:  # a ScoreSet
    """The metric stage as a run computes it (bootstrap intervals, noise floors, gaps, permutation
    tests, Holm, omnibus) on the same responses and scores: the cost beyond LangFair's point values.
    The BLEU/ROUGE-L token caches are warm from the point values just computed."""
    from equilens.tasks.config import CounterfactualConfig, MetricsConfig
    from equilens.tasks.pipeline.metric_stage import metric_stage

    rows = [{"attribute": "race", "grp": g, "prompt_id": f"p{i}", "sample_idx": 0, "text": x, "ok": True,
             "refusal": False, "error_class": None} for g in GROUPS for i, x in enumerate(frame[g])]
    cfg = MetricsConfig(names=["strict_sentiment_parity", "cosine_similarity", "bleu_similarity",
                               "rougel_similarity"], neutralize=False)
    t0 = time.perf_counter()
    metric_stage(pd.DataFrame(rows), scores, CounterfactualConfig(attributes=["race"]), cfg)
    return time.perf_counter() - t0


def raw_encode_rate(texts: list[str], backend: str, threads: int | None) -> float:
    """Texts/s of the bare model forward pass on pre-tokenised, length-sorted batches of 64."""
    import torch
    from equilens.tasks.scoring.embeddings import load_sentence_transformer, torch_threads

    model = load_sentence_transformer("all-MiniLM-L6-v2", "cpu")
    order = sorted(texts, key=len, reverse=True)
    batches = [model[0].preprocess(order[k : k + 64]) for k in range(0, len(order), 64)]
    if backend == "onnx":
        from equilens.tasks.scoring.onnx_backend import load_onnx_encoder

        enc = load_onnx_encoder("all-MiniLM-L6-v2", threads)
        feeds = [{n: b[n].numpy() for n in enc.input_names} for b in batches]
        t0 = time.perf_counter()
        for f in feeds:
            enc.session.run(None, f)
        return len(texts) / (time.perf_counter() - t0)
    bert = model[0].auto_model
    names = ("input_ids", "attention_mask", "token_type_ids")
    with torch_threads(threads), torch.inference_mode():
        t0 = time.perf_counter()
        for b in batches:
            bert(**{n: b[n] for n in names if n in b})
        return len(texts) / (time.perf_counter() - t0)


def sentence_split_bleu(frame: pd.DataFrame) -> dict[str, float]:
    """Diagnostic: equilens' sentence_bleu on word_tokenize-style tokens (punkt split, then Treebank)."""
    from equilens.tasks.metrics.text_similarity import sentence_bleu
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    splitter, treebank = PunktSentenceTokenizer(), NLTKWordTokenizer()  # punkt without parameters

    def tokens(text: str) -> list[str]:
        return [tok for s in splitter.tokenize(text.lower()) for tok in treebank.tokenize(s)]

    out = {}
    for a, b in combinations(GROUPS, 2):
        ta, tb = [tokens(x) for x in frame[a]], [tokens(x) for x in frame[b]]
        out[f"{a}-{b}"] = float(np.mean([min(sentence_bleu(x, y), sentence_bleu(y, x))
                                         for x, y in zip(ta, tb)]))
    return out


def run_langfair(python: Path, data: Path, diagnostic: bool) -> tuple[dict, float]:
    t0 = time.perf_counter()
    out = subprocess.run([str(python), str(WORKER), str(data), *(["--diagnostic"] if diagnostic else [])],
                         capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    wall = time.perf_counter() - t0
    if out.returncode:
        sys.stderr.write(out.stderr[-4000:])
        raise SystemExit(f"LangFair worker failed (exit {out.returncode})")
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def _row(label: str, ours_s: float | None, theirs_s: float | None) -> None:
    o = f"{ours_s:>9.2f}" if ours_s is not None else f"{'-':>9}"
    th = f"{theirs_s:>9.2f}" if theirs_s is not None else f"{'-':>9}"
    r = f"{theirs_s / ours_s:>11.1f}x" if ours_s and theirs_s is not None else f"{'-':>12}"
    print(f"{label:<40} {o} {th} {r}")


def one_size(n: int, args: argparse.Namespace) -> list[dict]:
    frame = make_responses(n, args.seed)
    data = Path("/tmp") / f"equilens-bench-vs-langfair-{n}-{args.seed}.parquet"
    frame.to_parquet(data, index=False)
    words = np.array([len(x.split()) for g in GROUPS for x in frame[g]])
    texts = [x for g in GROUPS for x in frame[g]]

    ours = {b: equilens_side(frame, b, args.threads) for b in args.backends}
    lf, lf_wall = run_langfair(args.langfair_python, data, args.bleu_check)
    theirs, lf_t = lf["values"], lf["timings"]
    counts = next(iter(ours.values()))[2]

    print(f"\n=== {n:,} prompts x {len(GROUPS)} race groups = {counts['texts']:,} responses "
          f"({counts['distinct']:,} distinct), 6 pairs; words per response min {words.min()}, "
          f"mean {words.mean():.1f}, max {words.max()}; LangFair punkt_tab: {lf['punkt']}")
    print(f"{'metric':<10} {'pair':<15} {'langfair':>10} " + " ".join(f"{'|diff| ' + b:>13}" for b in ours))
    worst = {b: dict.fromkeys(METRICS, 0.0) for b in ours}
    for name in METRICS:
        for pair in PAIRS:
            ref = theirs[pair][name]
            diffs = []
            for b, (vals, _, _, _) in ours.items():
                d = abs(vals[pair][name] - ref)
                worst[b][name] = max(worst[b][name], d)
                diffs.append(f"{d:>13.2e}")
            print(f"{name:<10} {pair:<15} {ref:>10.6f} " + " ".join(diffs))
    for b in ours:
        print(f"largest |diff| ({b}): " + ", ".join(
            f"{k} {v:.1e} ({'ok' if v <= TOLERANCE else 'DIFFERS'})" for k, v in worst[b].items()))
    if args.bleu_check:
        split = sentence_split_bleu(frame)
        print("BLEU tokenisation check (equilens on punkt + Treebank tokens vs LangFair as is): largest |diff| "
              f"{max(abs(split[p] - theirs[p]['bleu']) for p in PAIRS):.1e}")

    summary = []
    for b, (vals, t, _, scores) in ours.items():
        rate = raw_encode_rate(texts[: min(len(texts), 2000)], b, args.threads)
        ideal = counts["distinct"] / rate
        stats_s = full_statistics_seconds(frame, scores) if args.full_stats else None
        print(f"\n{'seconds (' + b + ' backend)':<40} {'equilens':>9} {'langfair':>9} {'LF/equilens':>12}")
        _row("import + model load", t["load"], lf_t["import"] + lf_t["load"])
        _row("cosine (embedding + metric)", t["embed"] + t["m_cosine"], lf_t["cosine"])
        _row("sentiment (VADER + W1; VADER overlapped)", t["scoring"] - t["embed"] + t["m_sentiment"], lf_t["sentiment"])
        _row("bleu", t["m_bleu"], lf_t["bleu"])
        _row("rougel", t["m_rougel"], lf_t["rougel"])
        _row("  score stage (distinct texts)", t["scoring"], None)
        _row("    of which MiniLM encoding", t["embed"], None)
        _row("  metric values (6 pairs)", t["metrics"], None)
        _row("compute total (scoring + metrics)", t["compute"], lf_t["compute"])
        _row("total incl. import + load", t["load"] + t["compute"], lf_t["import"] + lf_t["load"] + lf_t["compute"])
        print(f"MiniLM encoding: {t['embed'] / t['compute']:.0%} of equilens compute; "
              f"{counts['distinct'] / t['embed']:.0f} texts/s in the stage against {rate:.0f} texts/s of a bare "
              f"forward pass on pre-tokenised batches ({ideal / t['embed']:.0%} of raw)")
        if stats_s is not None:
            print(f"extra: the metric stage with its statistics (bootstrap 1000, permutations 1000, noise floors, "
                  f"gaps, Holm, omnibus) on the same 4 metrics: {stats_s:.2f} s (LangFair computes none of these)")
        summary.append({"prompts": n, "backend": b, "ours": t["compute"], "theirs": lf_t["compute"],
                        "worst": max(worst[b].values()), "stats": stats_s})
    print(f"(LangFair worker process wall time {lf_wall:.1f} s, interpreter start and parquet read included)")
    return summary


def main() -> None:
    from equilens.tasks.scoring.onnx_backend import onnx_available

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, nargs="+", default=[2000],
                        help="prompts (rows) per run, 4 responses each; several sizes run one after the other")
    parser.add_argument("--backends", nargs="+", choices=["torch", "onnx"],
                        default=["torch", "onnx"] if onnx_available() else ["torch"])
    parser.add_argument("--threads", type=int, default=None, help="scoring.threads (default: library's)")
    parser.add_argument("--full-stats", action="store_true",
                        help="also time the metric stage with its statistics (reported separately)")
    parser.add_argument("--bleu-check", action="store_true",
                        help="diagnostic: BLEU on word_tokenize-style tokens, slow (nltk's own tokenizer)")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--langfair-python", type=Path,
                        default=Path(os.environ.get("LANGFAIR_PYTHON", DEFAULT_LANGFAIR_PY)))
    args = parser.parse_args()
    if not args.langfair_python.exists():
        raise SystemExit(f"No LangFair venv at {args.langfair_python}: "
                         "run tests/benchmarks/setup_langfair_venv.sh")
    print(f"equilens vs LangFair 0.8, backends {', '.join(args.backends)}, threads {args.threads or 'default'}, "
          f"{os.cpu_count()} CPUs")
    summary = [row for n in args.prompts for row in one_size(n, args)]
    print(f"\n{'prompts':>8} {'backend':>8} {'equilens s':>11} {'LangFair s':>11} {'ratio':>7} {'max |diff|':>11}"
          f" {'+stats s':>9}")
    for r in summary:
        st = f"{r['stats']:>9.2f}" if r["stats"] is not None else f"{'-':>9}"
        print(f"{r['prompts']:>8,} {r['backend']:>8} {r['ours']:>11.2f} {r['theirs']:>11.2f} "
              f"{r['theirs'] / r['ours']:>6.1f}x {r['worst']:>11.1e} {st}")


if __name__ == "__main__":
    main()
