"""Calls a verdict needs: runs that stop when settled against the fixed design, side by side.

    .venv/bin/python tests/benchmarks/bench_stopping.py [--runs 1000] [--prompts 200] [--looks 5]

Every scenario simulates ``--runs`` identity runs of ``--prompts`` planned prompts whose true
outcome gaps are known (:mod:`tests.simulate_looks`: the real outcome rows, Holm family, look
rule and verdict), once answered in full and once with ``execution.stop_when: settled``. "stated
gap" is the smallest gap a fixed run of that size states it detects with 80% power. For each it
prints how often the verdict finds a gap, and the average share of the planned calls a stopping
run makes (the fixed design always makes them all).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.simulate_looks import Model, simulate, stated_gap  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--looks", type=int, default=5)
    args = parser.parse_args()
    n, runs, looks = args.prompts, args.runs, args.looks
    two = stated_gap(n, 2, Model((0.0, 0.0)).sd)
    three = stated_gap(n, 3, Model((0.0, 0.0, 0.0), deterministic=True).sd)
    scenarios = [
        ("fair, one pair, no futility target", Model((0.0, 0.0)), None),
        ("fair, three cells, deterministic, target = stated gap", Model((0.0,) * 3, deterministic=True), three),
        ("fair, one pair, target = stated gap", Model((0.0, 0.0)), two),
        ("fair, one pair, target = 1.5x stated gap", Model((0.0, 0.0)), 1.5 * two),
        ("true gap = stated gap, no target", Model((two, 0.0)), None),
        ("true gap = stated gap, target = stated gap", Model((two, 0.0)), two),
        ("true gap = 3x stated gap, target = stated gap", Model((3 * two, 0.0)), two),
    ]
    print(f"{runs} simulated runs per scenario, {n} planned prompts, {looks} looks (O'Brien-Fleming)\n")
    print(f"{'scenario':<55} {'found fixed':>11} {'found stop':>10} {'calls used':>10}")
    started = time.perf_counter()
    for i, (label, model, detect) in enumerate(scenarios):
        fixed = simulate(model, n, runs, looks, seed=100 + i, fixed=True)
        stop = simulate(model, n, runs, looks, detect=detect, seed=100 + i)
        print(f"{label:<55} {fixed.fired:>11.1%} {stop.fired:>10.1%} {stop.used:>10.1%}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
