"""Fast pairwise BLEU and ROUGE-L for counterfactual response pairs.

Both are written here (not taken from nltk / rouge-score) so each pair costs microseconds:
ROUGE-L uses the bit-parallel LCS of Allison & Dix (1986) on Python integers, BLEU counts n-grams
with ``collections.Counter``. Definitions follow the references used by LangFair:

* ROUGE-L F-measure (Lin, 2004) with rouge-score's tokenisation as LangFair configures it:
  lower-case, every run of non-alphanumeric characters is a separator, Porter stemming of tokens
  longer than three characters.
* Sentence BLEU (Papineni et al., 2002) as LangFair computes it with nltk: punkt sentence split
  then Treebank word tokens of the lower-cased text, uniform weights over 1..4-grams, clipped counts, brevity penalty
  exp(1 - r/c) when the candidate is shorter, and Chen & Cherry's smoothing method 1 (a precision
  with no match counts 0.1 matches); a pair sharing no unigram scores 0.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

_ROUGE_SPLIT = re.compile(r"[^a-z0-9]+")
SMOOTHING_EPSILON = 0.1


@lru_cache(maxsize=1)
def _treebank():  # noqa: ANN202 - nltk's tokenizer needs no downloaded data
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


@lru_cache(maxsize=1)
def _porter():  # noqa: ANN202
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    return _porter().stem(token)


def rouge_tokens(text: str) -> list[str]:
    return [_stem(t) if len(t) > 3 else t for t in _ROUGE_SPLIT.split(text.lower()) if t]


@lru_cache(maxsize=1)
def _sentences():  # noqa: ANN202 - punkt's English model when installed, else its data-free default
    import nltk
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        from nltk.tokenize.punkt import PunktTokenizer

        return PunktTokenizer("english")
    except (LookupError, ImportError):
        return PunktSentenceTokenizer()


def bleu_tokens(text: str) -> list[str]:
    """nltk's word_tokenize, as LangFair uses it: punkt sentences, then Treebank words."""
    return [tok for sent in _sentences().tokenize(text.lower()) for tok in _treebank().tokenize(sent)]


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel over ``a``."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    row = 0
    for tok in b:
        x = masks.get(tok, 0) | row
        row = x & ~(x - ((row << 1) | 1))
    return row.bit_count()


def rouge_l_f(a_tokens: Sequence[str], b_tokens: Sequence[str]) -> float:
    lcs = lcs_length(a_tokens, b_tokens)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(b_tokens), lcs / len(a_tokens)
    return 2 * p * r / (p + r)


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def sentence_bleu(reference: Sequence[str], candidate: Sequence[str], max_n: int = 4) -> float:
    """BLEU of ``candidate`` against a single ``reference``."""
    c, r = len(candidate), len(reference)
    if c == 0 or r == 0:
        return 0.0
    log_p = 0.0
    for n in range(1, max_n + 1):
        cand = _ngrams(candidate, n)
        total = max(1, sum(cand.values()))
        ref = _ngrams(reference, n)
        matched = sum(min(cnt, ref[g]) for g, cnt in cand.items())
        if matched == 0:
            if n == 1:
                return 0.0
            matched = SMOOTHING_EPSILON
        log_p += math.log(matched / total) / max_n
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return bp * math.exp(log_p)


def pairwise_rouge_l(texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
    return np.fromiter(
        (rouge_l_f(rouge_tokens(a), rouge_tokens(b)) for a, b in zip(texts1, texts2, strict=True)),
        dtype=np.float64,
        count=len(texts1),
    )


def pairwise_min_bleu(texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
    """min(BLEU(a→b), BLEU(b→a)) per pair, as in LangFair's counterfactual BLEU."""
    out = np.empty(len(texts1), dtype=np.float64)
    for i, (a, b) in enumerate(zip(texts1, texts2, strict=True)):
        ta, tb = bleu_tokens(a), bleu_tokens(b)
        out[i] = min(sentence_bleu(ta, tb), sentence_bleu(tb, ta))
    return out
