"""One ``equilens run CONFIG`` for ``bench_scale.py``, in its own process so its memory is measured alone.

The run is the CLI's (``equilens.flows.cli.main(["run", CONFIG])``): preflight, Prefect's API, the
counterfactual flow, the result table, unchanged.

With ``EQUILENS_BENCH_STAGE_LOG=FILE`` it also appends ``STAGE enter|exit TIME`` lines around each of
the flow's recorded stages, so the benchmark can tell which stage a memory sample falls in.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def log_stages(path: str) -> None:
    """Append ``stage enter|exit wall-clock`` lines to ``path`` around each ``RunRecorder.stage``, so the
    benchmark can tell which stage its memory samples fall in (the flow itself is unchanged)."""
    import time
    from contextlib import contextmanager

    from equilens.tasks.orchestration.run_record import RunRecorder

    plain = RunRecorder.stage

    @contextmanager
    def stage(self, name: str):
        with open(path, "a") as f:
            f.write(f"{name} enter {time.time():.3f}\n")
        try:
            with plain(self, name):
                yield
        finally:
            with open(path, "a") as f:
                f.write(f"{name} exit {time.time():.3f}\n")

    RunRecorder.stage = stage


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    if os.environ.get("EQUILENS_BENCH_STAGE_LOG"):
        log_stages(os.environ["EQUILENS_BENCH_STAGE_LOG"])
    from equilens.flows.cli import main as cli

    return cli(["run", *argv])


if __name__ == "__main__":  # spawned LLM client processes import this module without running it
    sys.exit(main(sys.argv[1:]))
