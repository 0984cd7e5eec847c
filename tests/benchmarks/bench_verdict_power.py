"""The verdict against a known truth, with more runs than the test suite can afford (a script, not a test).

Run: .venv/bin/python tests/benchmarks/bench_verdict_power.py [--runs 100] [--fair-runs 200]

Prints, for simulated runs (:mod:`tests.simulate`) that go through the metric stage and the
verdict's own rule (strict parity and neutralised BLEU judged, one Holm family):

* the false-finding rate of a fair model, deterministic and sampling, on 20 prompts;
* the power at the stated minimum detectable gap, for parity and for BLEU, with a sampling and a
  deterministic model: fair runs give the median stated gap; planted effects of several sizes give
  the median observed gap and the share of runs that fire; the power at the stated gap is read off
  between the two sizes that bracket it. The target is 80% (75-85% is in band).

Each line shows its Monte Carlo standard error, sqrt(p (1 - p) / runs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.simulate import Model, judge, power_at_stated_gap

POWER_CASES = [
    # name, metric, prompts, planted model of size d, sizes
    ("parity, sampling, negative rate raised", "strict_sentiment_parity", 40,
     lambda d: Model(deterministic=False, binary=True, shift=d), [0.14, 0.17, 0.2, 0.23, 0.26, 0.3]),
    ("parity, deterministic, answers turned negative", "strict_sentiment_parity", 30,
     lambda d: Model(deterministic=True, turn=d), [0.22, 0.26, 0.3, 0.34, 0.38]),
    ("BLEU, deterministic, content", "bleu_similarity", 30,
     lambda d: Model(deterministic=True, content=d), [0.06, 0.09, 0.12, 0.15, 0.18, 0.21]),
    ("BLEU, sampling, content", "bleu_similarity", 30,
     lambda d: Model(deterministic=False, content=d), [0.06, 0.09, 0.12, 0.15, 0.18]),
]


def _se(p: float, runs: int) -> float:
    return float(np.sqrt(p * (1 - p) / runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="simulated runs per planted size (default 100)")
    parser.add_argument("--fair-runs", type=int, default=200, help="fair runs per false-finding rate (default 200)")
    parser.add_argument("--only", choices=["fpr", "power"], help="print one part only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.only != "power":
        print(f"False findings of a fair model, 20 prompts, {args.fair_runs} runs each (target <= 5%):")
        for deterministic in (True, False):
            outs = [judge(20, Model(deterministic=deterministic), seed) for seed in range(args.fair_runs)]
            rate = float(np.mean([o.fired for o in outs]))
            kind = "deterministic" if deterministic else "sampling"
            print(f"  {kind:13s} fired {rate:6.1%} (+/- {_se(rate, args.fair_runs):.1%})  "
                  f"parity {sum(o.parity_fired for o in outs)}, BLEU {sum(o.similarity_fired for o in outs)}",
                  flush=True)
    if args.only != "fpr":
        print(f"Power at the stated minimum detectable gap, {args.runs} runs per size (target 80%):")
        for name, metric, prompts, planted, sizes in POWER_CASES:
            got = power_at_stated_gap(prompts, planted, sizes, metric, args.runs, planted(0.0))
            bracketed = got["gaps"][0] < got["stated"] < got["gaps"][-1]
            note = "" if bracketed else "  (sizes do not bracket the stated gap: widen them)"
            print(f"  {name:48s} {prompts} prompts: stated {got['stated']:.3f}, power {got['power']:6.1%} "
                  f"(+/- {_se(got['power'], args.runs):.1%}){note}", flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
