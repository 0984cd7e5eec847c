"""One ``equilens run CONFIG`` for ``bench_scale.py``, in its own process so its memory is measured alone.

The run is the CLI's (``flows.cli.main(["run", CONFIG])``): preflight, Prefect's API, the
counterfactual flow, the result table. One thing differs when ``EQUILENS_BENCH_EMBEDDINGS=stub``:
the MiniLM sentence encoder, which the score stage always runs, is replaced by a stub that returns
unit vectors of the same shape (384 float32 per text) at no model cost. At 100,000 prompts the
stage would encode ~600,000 distinct answers, hours on two shared cores; the stub keeps the
stage's memory (the vectors, the ``ScoreSet`` Prefect persists) as in a real run and leaves out only
the model's compute. The benchmark's config does not ask for ``cosine_similarity``, so no metric
reads the stub's vectors.

With ``EQUILENS_BENCH_STAGE_LOG=FILE`` it also appends ``STAGE enter|exit TIME`` lines around each of
the flow's recorded stages, so the benchmark can tell which stage a memory sample falls in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


class StubEmbedder:
    """Same interface and output shape as ``SentenceEmbeddingScorer``; random unit vectors."""

    kind = "vector"
    value_range = None
    dim = 384  # all-MiniLM-L6-v2

    def __init__(self, model: str = "all-MiniLM-L6-v2", batch_size: int = 64, device: str | None = None,
                 backend: str = "torch", threads: int | None = None) -> None:
        self.model_name = model
        self.name = f"embedding:{model}"

    def score(self, texts: Sequence[str]) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        out = rng.standard_normal((len(texts), self.dim), dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def install_stub() -> None:
    from tasks.scoring import SCORERS

    # The registry refuses a second "sentence-embedding"; a benchmark may swap the entry in place.
    SCORERS._items["sentence-embedding"] = StubEmbedder  # noqa: SLF001


def log_stages(path: str) -> None:
    """Append ``stage enter|exit wall-clock`` lines to ``path`` around each ``RunRecorder.stage``, so the
    benchmark can tell which stage its memory samples fall in (the flow itself is unchanged)."""
    import time
    from contextlib import contextmanager

    from flows.common import RunRecorder

    plain = RunRecorder.stage

    @contextmanager
    def stage(self, name: str):  # noqa: ANN001, ANN202
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
    if os.environ.get("EQUILENS_BENCH_EMBEDDINGS", "stub") == "stub":
        install_stub()
    if os.environ.get("EQUILENS_BENCH_STAGE_LOG"):
        log_stages(os.environ["EQUILENS_BENCH_STAGE_LOG"])
    from flows.cli import main as cli

    return cli(["run", *argv])


if __name__ == "__main__":  # spawned LLM client processes import this module without running it
    sys.exit(main(sys.argv[1:]))
