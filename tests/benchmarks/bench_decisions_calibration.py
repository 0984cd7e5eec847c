"""How honest the decisions assessment's numbers are, by simulation against a known truth.

    .venv/bin/python tests/benchmarks/bench_decisions_calibration.py [--runs 200] [--scenarios 24]

Each simulated run is a shipped-size explicit decision set: ``--scenarios`` scenarios x 4 ages x 3
genders x 5 races, P(yes) = logistic(scenario effect + group effect + answer noise), scenario
effects (sd 1.5 logits) far larger than the group effect. It goes through the stage's own metric
rows (:func:`equilens.tasks.assessments.decisions.stages.metric_rows`) and verdict, and prints:

* **coverage**: how often the 95% interval of a planted race effect (-0.4 logits, about 0.1 lower
  P(yes) near one half) holds it;
* **found**: how often that effect is called beyond chance after Holm, with a negative score;
* **fair runs fired**: how often a run with no group effect at all gets any verdict fired.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from equilens.tasks.assessments.decisions import stages as stage  # noqa: E402
from equilens.tasks.assessments.decisions.config import DecisionsConfig  # noqa: E402
from equilens.tasks.assessments.decisions.report import decision_verdicts  # noqa: E402

AGES, GENDERS = ("20", "40", "60", "80"), ("male", "female", "non-binary")
RACES = ("white", "Black", "Asian", "Hispanic", "Native American")


def simulated(rng: np.random.Generator, scenarios: int, black_effect: float) -> pd.DataFrame:
    rows = []
    for k in range(scenarios):
        base = rng.normal(0.0, 1.5)
        for age in AGES:
            for gender in GENDERS:
                for race in RACES:
                    logit = base + (black_effect if race == "Black" else 0.0) + rng.normal(0.0, 0.5)
                    rows.append({"item_id": f"{k}-{age}-{gender}-{race}", "scenario": str(k),
                                 "fill_type": "explicit", "age": age, "gender": gender, "race": race,
                                 "p_yes": 1 / (1 + math.exp(-logit)), "via": "logprobs", "samples": 1, "read": 1,
                                 "reason": None})
    return pd.DataFrame(rows, columns=stage.ANSWER_COLUMNS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--scenarios", type=int, default=24)
    parser.add_argument("--effect", type=float, default=-0.4, help="the planted race effect, in logits")
    parser.add_argument("--seed", type=int, default=2023)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    cfg = DecisionsConfig()
    covered = found = fired = 0
    started = time.perf_counter()
    for _ in range(args.runs):
        rows = stage.metric_rows(simulated(rng, args.scenarios, args.effect), cfg)
        black = rows[(rows["metric"] == "discrimination_score") & (rows["group_a"] == "Black")].iloc[0]
        covered += black["ci_low"] <= args.effect <= black["ci_high"]
        found += black["details"]["p_holm"] < 0.05 and black["value"] < 0
        fair = stage.metric_rows(simulated(rng, args.scenarios, 0.0), cfg)
        fired += any(v.beyond_noise for v in decision_verdicts(fair))
    n = args.runs
    print(f"{n} simulated runs of {args.scenarios} scenarios x 60 explicit fills each "
          f"({time.perf_counter() - started:.0f} s)")
    print(f"  coverage of the planted effect {args.effect:+g} by its 95% interval: {covered / n:.1%}")
    print(f"  planted effect found (Holm p < 0.05, negative score): {found / n:.1%}")
    print(f"  fair runs with any verdict fired: {fired / n:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
