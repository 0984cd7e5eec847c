"""How often the outcome reader reads an answer as a person does, on the labelled answers in
``data/outcome_readings.csv`` (each with the reading a careful person gives, or "unreadable").

    .venv/bin/python tests/benchmarks/bench_outcome_reading.py [--split all|tuning|holdout|fresh] [--misses]
    .venv/bin/python tests/benchmarks/bench_outcome_reading.py --reader-model NAME --reader-base-url URL \
        [--reader-mode model|both] [--cache FILE.duckdb]

Prints the share read right per kind of difficulty and per outcome type, for the rule reader, and
with ``--reader-model`` also for the rules with a model reader as a run uses them
(``identity.outcome_reader``: ``model`` asks it about the answers the rules leave unreadable,
``both`` about every answer), through the same runner (the key from ``--reader-api-key-env``;
answers cached in ``--cache``, so a rerun pays nothing). A
readable answer is read right when the value is within 0.5% (or one cent) of the label; an
unreadable one when the reader also calls it unreadable. The ``split`` column says which answers the
rules were written against (``tuning``) and which were written afterwards, each set by someone who
had not seen the rules and measured once before any change (``holdout``, then ``fresh``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.outcome_labels import judge_readings, load_labelled  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="all",
                        help="all, or one value of the csv's split column (tuning, holdout, fresh, third)")
    parser.add_argument("--misses", action="store_true", help="print every answer read wrong")
    parser.add_argument("--csv", default=str(ROOT / "data" / "outcome_readings.csv"))
    parser.add_argument("--reader-model", help="also measure a model reader: the model name at the endpoint")
    parser.add_argument("--reader-base-url", help="the reader's OpenAI-compatible base URL")
    parser.add_argument("--reader-api-key-env", default="OPENAI_API_KEY", help="variable holding its key")
    parser.add_argument("--reader-mode", choices=("model", "both"), default="both")
    parser.add_argument("--cache", default=str(ROOT / "data" / "outcome_reader_bench.duckdb"),
                        help="DuckDB file caching the reader's answers")
    args = parser.parse_args(argv)
    rows = load_labelled(args.csv, args.split)
    judged = judge_readings(rows)
    _print(judged, f"rule reader on {len(judged)} labelled answers ({args.split} split of {Path(args.csv).name})",
           args)
    if args.reader_model:
        readings, summary = model_readings(rows, args)
        print(f"\nmodel reader {args.reader_model} ({args.reader_mode}): asked about {summary['asked']} answers, "
              f"{summary['read_by_model']} read by it, {summary['failed']} failed calls"
              + (f", {summary['disagreements']} disagreements with the rules" if args.reader_mode == "both" else ""))
        _print(judge_readings(rows, readings), f"rules with the model reader on {len(rows)} labelled answers", args)
    return 0


def model_readings(rows: pd.DataFrame, args: argparse.Namespace) -> tuple[list, dict]:
    """The readings a run makes with a model reader: the identity stage's own rule and model steps."""
    from equilens.tasks.assessments.identity.stages import model_read_stage, read_stage
    from equilens.tasks.config import LLMConfig
    from equilens.tasks.scoring.outcomes import Reading
    from equilens.tasks.storage.store import Store

    ids = rows["id"].astype(str)
    variants = pd.DataFrame({"variant_id": ids, "text": rows["prompt"], "outcome": rows["outcome"]})
    responses = pd.DataFrame({"variant_id": ids, "sample_idx": 0, "text": rows["answer"], "ok": True,
                              "refusal": False})
    llm = LLMConfig(provider="openai", model=args.reader_model, base_url=args.reader_base_url,
                    api_key_env=args.reader_api_key_env, temperature=0.0, max_tokens=60)
    out, summary = model_read_stage(read_stage(responses, variants), responses, variants, args.reader_mode, llm,
                                    Store(Path(args.cache)))
    by_id = out.set_index("variant_id")
    return [Reading(None if pd.isna(by_id.at[i, "value"]) else float(by_id.at[i, "value"]), by_id.at[i, "reason"])
            for i in ids], summary


def _print(judged: pd.DataFrame, title: str, args: argparse.Namespace) -> None:
    if args.split == "all":
        for split, part in judged.groupby("split", sort=False):
            print(f"{split}: {part['right'].mean():.1%} read right ({int(part['right'].sum())}/{len(part)})")
    print(title)
    for by in ("kind", "type"):
        table = judged.groupby(by)["right"].agg(["mean", "sum", "count"]).sort_values("count", ascending=False)
        print(f"\nread right by {by}:")
        for name, r in table.iterrows():
            print(f"  {name:<12} {r['mean']:6.1%}  ({int(r['sum'])}/{int(r['count'])})")
    print(f"\noverall: {judged['right'].mean():.1%} ({int(judged['right'].sum())}/{len(judged)})")
    wrong = judged[~judged["right"] & judged["read"].map(lambda v: not str(v).startswith("unreadable"))]
    print(f"wrong values (a reading given and not the label's): {len(wrong) / max(len(judged), 1):.1%} ({len(wrong)}); "
          f"left unreadable where a person reads one: {int((~judged['right']).sum()) - len(wrong)}")
    first = judged[judged.get("first_read", pd.Series("", index=judged.index)).astype(str).isin(["0", "1"])]
    if len(first) and title.startswith("rule reader"):
        print("\nfirst reading of the blind splits, recorded when each was measured, before any mend (first_read):")
        for split, part in first.groupby("split", sort=False):
            hits = part["first_read"].astype(str).eq("1")
            by_kind = part.assign(hit=hits).groupby("kind")["hit"].mean().sort_values()
            hardest = ", ".join(f"{k} {v:.0%}" for k, v in by_kind.head(2).items())
            print(f"  {split}: {hits.mean():.1%} ({int(hits.sum())}/{len(part)}); hardest kinds: {hardest}")
    if args.misses:
        for r in judged[~judged["right"]].itertuples():
            print(f"\n#{r.id} [{r.kind}] {r.answer!r}\n   label {r.label!r}  read {r.read!r}")


if __name__ == "__main__":
    raise SystemExit(main())
