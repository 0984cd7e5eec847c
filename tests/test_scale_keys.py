"""Large runs: no embedding work unless a metric reads embeddings, and cache keys that never pickle
the run's answers (at 100k prompts the pickled keys and score sets broke the 4 GB budget)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from equilens.tasks.config import ScoringConfig
from equilens.tasks.pipeline import needs_embeddings, score_texts
from equilens.tasks.storage.fingerprint import frame_digest, texts_digest


def test_only_cosine_needs_embeddings() -> None:
    assert needs_embeddings(None)  # every counterfactual metric, cosine included
    assert needs_embeddings(["cosine_similarity", "bleu_similarity"])
    assert not needs_embeddings(["strict_sentiment_parity", "weak_sentiment_parity", "bleu_similarity",
                                 "rougel_similarity", "non_completion_rate"])
    assert not needs_embeddings(["cobs", "strict_sentiment_parity"])  # other families do not count


def test_score_stage_without_embeddings_never_builds_the_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks.scoring import SCORERS

    def refuse(*args, **kwargs):
        raise AssertionError("the embedding model was loaded although no metric reads embeddings")

    monkeypatch.setitem(SCORERS._items, "sentence-embedding", refuse)
    scores = score_texts(["A fine answer.", "A terrible answer!", "A fine answer."], ScoringConfig(), embeddings=False)
    assert scores.embeddings == {} and scores.embedding_model == ""
    assert len(scores.scalar) == 2  # each distinct text once
    assert scores.scalar["value"].between(-1, 1).all()


def test_digests_follow_content_not_identity() -> None:
    texts = [f"answer {i}" for i in range(1000)]
    assert texts_digest(texts) == texts_digest(list(texts))
    assert texts_digest(texts) != texts_digest(texts[:-1] + ["answer 999 "])
    assert texts_digest(["ab", "c"]) != texts_digest(["a", "bc"])  # separators count
    frame = pd.DataFrame({"text": texts, "ok": True, "group": ["a", "b"] * 500, "x": np.arange(1000.0)})
    assert frame_digest(frame) == frame_digest(frame.copy().reset_index(drop=True).set_axis(range(5, 1005)))
    changed = frame.copy()
    changed.loc[17, "text"] = "answer 17!"
    assert frame_digest(changed) != frame_digest(frame)
    assert frame_digest(frame.assign(ok=False)) != frame_digest(frame)
    assert frame_digest(frame.iloc[:0]) != frame_digest(frame[["text"]].iloc[:0])  # columns count when empty


def test_cached_stages_leave_the_answers_out_of_their_keys() -> None:
    from equilens.tasks.assessments.counterfactual.stages import metrics_task
    from equilens.tasks.pipeline.prefect_tasks import score_task

    def excluded(task) -> set[str]:
        return {name for p in task.cache_policy.policies for name in getattr(p, "exclude", [])}

    assert excluded(score_task) == {"texts"}
    assert excluded(metrics_task) == {"responses", "texts", "scores"}
