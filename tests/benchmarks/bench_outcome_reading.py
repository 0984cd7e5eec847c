"""How often the outcome reader reads an answer as a person does, on the labelled answers in
``data/outcome_readings.csv`` (each with the reading a careful person gives, or "unreadable").

    .venv/bin/python tests/benchmarks/bench_outcome_reading.py [--split all|tuning|holdout|fresh] [--misses]

Prints the share read right per kind of difficulty and per outcome type, for the rule reader. A
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
    parser.add_argument("--split", choices=("all", "tuning", "holdout", "fresh"), default="all")
    parser.add_argument("--misses", action="store_true", help="print every answer read wrong")
    parser.add_argument("--csv", default=str(ROOT / "data" / "outcome_readings.csv"))
    args = parser.parse_args(argv)
    rows = load_labelled(args.csv, args.split)
    judged = judge_readings(rows)
    if args.split == "all":
        for split, part in judged.groupby("split", sort=False):
            print(f"{split}: {part['right'].mean():.1%} read right ({int(part['right'].sum())}/{len(part)})")
    print(f"rule reader on {len(judged)} labelled answers ({args.split} split of {Path(args.csv).name})")
    for by in ("kind", "type"):
        table = judged.groupby(by)["right"].agg(["mean", "sum", "count"]).sort_values("count", ascending=False)
        print(f"\nread right by {by}:")
        for name, r in table.iterrows():
            print(f"  {name:<12} {r['mean']:6.1%}  ({int(r['sum'])}/{int(r['count'])})")
    print(f"\noverall: {judged['right'].mean():.1%} ({int(judged['right'].sum())}/{len(judged)})")
    if args.misses:
        for r in judged[~judged["right"]].itertuples():
            print(f"\n#{r.id} [{r.kind}] {r.answer!r}\n   label {r.label!r}  read {r.read!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
