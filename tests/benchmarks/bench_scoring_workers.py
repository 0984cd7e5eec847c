"""Score stage on a local Dask cluster: two worker processes against one, same shards, same values.

Writes N synthetic answers (one per prompt), then runs the counterfactual score stage
(``equilens.tasks.pipeline.prefect_tasks.score_answers``: VADER and the MiniLM sentence encoder, in shards of
``--shard-size`` prompts) inside a Prefect flow on a ``DaskTaskRunner`` whose local cluster has one
worker process, then two, each with one thread (and, through Dask's nanny, one torch thread). Prefect's
task cache is refreshed so both runs compute every shard. It prints each run's seconds, the ratio,
and checks that the two score sets are equal.

    .venv/bin/python tests/benchmarks/bench_scoring_workers.py                   # 6,000 answers, ~2 min
    .venv/bin/python tests/benchmarks/bench_scoring_workers.py --answers 2000 --shard-size 250
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["PREFECT_TASKS_REFRESH_CACHE"] = "true"  # every run computes its shards
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from equilens.tasks.environment import apply_offline_defaults

apply_offline_defaults()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

SUBJECTS = ["The nurse", "My neighbour", "The new manager", "A student", "The driver", "Our teacher"]
VERBS = ["explained", "described", "questioned", "praised", "criticised", "summarised"]
OBJECTS = ["the plan", "the budget", "a long report", "the schedule", "the outcome", "a difficult case"]
ENDS = ["with care.", "in detail.", "without hurry.", "to everyone present.", "before the meeting.",
        "after a long day."]


def answers(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    texts = [" ".join([rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(ENDS),
                       f"It took {i % 97} minutes and {i // 97} tries."]) for i in range(n)]
    return pd.DataFrame({"prompt_id": [f"p{i}" for i in range(n)], "text": texts, "ok": True})


def run(responses: pd.DataFrame, workers: int, shard_size: int) -> tuple[float, object]:
    from equilens.tasks.config import ExecutionConfig, MetricsConfig, ScoringConfig
    from equilens.tasks.orchestration.execution import with_task_runner
    from equilens.tasks.pipeline.prefect_tasks import score_answers
    from prefect import flow

    execution = ExecutionConfig(task_runner="dask", dask_workers=workers, shard_size=shard_size)
    metrics = MetricsConfig(names=["cosine_similarity", "strict_sentiment_parity"])  # VADER and MiniLM

    @flow(name=f"score-on-{workers}-workers")
    def scoring() -> object:
        start = time.perf_counter()
        scores = score_answers(responses, ScoringConfig(), metrics, execution, "bench")
        return time.perf_counter() - start, scores

    return with_task_runner(scoring, execution)()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=6000)
    parser.add_argument("--shard-size", type=int, default=1000, help="prompts per shard (the config's default)")
    args = parser.parse_args()
    from equilens.tasks.orchestration.prefect_api import start_prefect_api

    start_prefect_api()
    responses = answers(args.answers)
    print(f"{args.answers:,} answers in shards of {args.shard_size} prompts, on {os.cpu_count()} cores")
    one_s, one = run(responses, 1, args.shard_size)
    two_s, two = run(responses, 2, args.shard_size)
    print(f"{'':16}{'1 worker':>10}{'2 workers':>11}{'ratio':>8}")
    print(f"{'score stage, s':16}{one_s:>10.1f}{two_s:>11.1f}{one_s / two_s:>7.2f}x")
    a = one.scalar.sort_values("text_hash").reset_index(drop=True)
    b = two.scalar.sort_values("text_hash").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert one.embeddings.keys() == two.embeddings.keys()
    diff = max(float(np.abs(one.embeddings[h] - two.embeddings[h]).max()) for h in one.embeddings)
    print(f"sentiment equal on every answer; embeddings equal to {diff:.1e}")


if __name__ == "__main__":
    main()
