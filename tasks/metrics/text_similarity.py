"""Fast pairwise BLEU and ROUGE-L for counterfactual response pairs.

Both are written here (not taken from nltk / rouge-score) so a pair costs about a microsecond:
each text is tokenised once (Python, nltk's patterns), its tokens numbered, and the pairs are
scored by compiled kernels over the numbers (:mod:`equilens.tasks.metrics.token_kernels`): ROUGE-L by the
bit-parallel LCS of Allison & Dix (1986), BLEU by merging sorted n-gram keys. The readable
definitions (:func:`lcs_length`, :func:`sentence_bleu`) stay here as the reference the tests hold the
kernels to. Definitions follow the references used by LangFair:

* ROUGE-L F-measure (Lin, 2004) with rouge-score's tokenisation as LangFair configures it:
  lower-case, every run of non-alphanumeric characters is a separator, Porter stemming of tokens
  longer than three characters.
* Sentence BLEU (Papineni et al., 2002) as LangFair computes it with nltk: punkt sentence split
  then Treebank word tokens of the lower-cased text, uniform weights over 1..4-grams, clipped counts, brevity penalty
  exp(1 - r/c) when the candidate is shorter, and Chen & Cherry's smoothing method 1 (a precision
  with no match counts 0.1 matches); a pair sharing no unigram scores 0.

Speed: each call scores every distinct pair once, tokenises every distinct text once (its token
ids in one CSR, :func:`token_csr`), and spreads chunks of pairs over one thread per core (the
kernels hold no GIL; a chunk builds the n-gram tables of its own texts only). The clipped n-gram
matches of a pair are counted once for both BLEU directions (sum of min(count_a, count_b) is
symmetric), and the Treebank tokenizer runs nltk's own patterns compiled by the stdlib ``re``
instead of nltk 3.10's time-limited ``regex`` wrapper, which costs ~5 ms per text (the tokens are
the same; :func:`treebank_patterns_match_nltk` checks it).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
from equilens.tasks.stats.importing import IMPORTING

_ROUGE_SPLIT = re.compile(r"[^a-z0-9]+")
SMOOTHING_EPSILON = 0.1


_RE_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.UNICODE | re.VERBOSE | re.ASCII
_PATTERN_LISTS = ("STARTING_QUOTES", "PUNCTUATION", "ENDING_QUOTES", "CONVERT_PARENTHESES")
_PATTERN_PAIRS = ("PARENS_BRACKETS", "DOUBLE_DASHES")


def _stdlib(pattern):  # noqa: ANN001, ANN202 - nltk's fixed pattern, compiled without the timeout wrapper
    if isinstance(pattern, re.Pattern):
        return pattern
    try:
        return re.compile(pattern.pattern, pattern.flags & _RE_FLAGS)
    except (re.error, AttributeError, TypeError):
        return pattern


def _nltk_treebank():  # noqa: ANN202
    with IMPORTING:
        from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


@lru_cache(maxsize=1)
def _treebank():  # noqa: ANN202 - nltk's tokenizer needs no downloaded data
    tok = _nltk_treebank()
    for name in _PATTERN_LISTS:
        if hasattr(tok, name):
            setattr(tok, name, [(_stdlib(p), repl) for p, repl in getattr(tok, name)])
    for name in _PATTERN_PAIRS:
        if hasattr(tok, name):
            p, repl = getattr(tok, name)
            setattr(tok, name, (_stdlib(p), repl))
    return tok


@lru_cache(maxsize=1)
def _quick_treebank():  # noqa: ANN202 - the same tokens, substitutions that cannot match skipped
    from equilens.tasks.metrics.quick_treebank import QuickTreebank

    return QuickTreebank(_treebank())


def treebank_patterns_match_nltk(texts: Sequence[str]) -> bool:
    """True when the Treebank tokenizer used here (stdlib-compiled patterns, substitutions that cannot
    match skipped) and the punkt split give nltk's on every text."""
    fast, ref = _quick_treebank(), _nltk_treebank()
    split, ref_split = _sentences(), _nltk_sentences()
    return all(fast.tokenize(t) == ref.tokenize(t) and split.tokenize(t) == ref_split.tokenize(t) for t in texts)


@lru_cache(maxsize=1)
def _porter():  # noqa: ANN202
    with IMPORTING:
        from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    return _porter().stem(token)


def rouge_tokens(text: str) -> list[str]:
    """rouge-score's tokens as LangFair configures it (lower-case, alphanumeric runs, Porter stems)."""
    return [_stem(t) if len(t) > 3 else t for t in _ROUGE_SPLIT.split(text.lower()) if t]


def _nltk_sentences():  # noqa: ANN202 - punkt's English model when installed, else its data-free default
    with IMPORTING:
        import nltk
        from nltk.tokenize.punkt import PunktSentenceTokenizer

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        with IMPORTING:
            from nltk.tokenize.punkt import PunktTokenizer

        return PunktTokenizer("english")
    except (LookupError, ImportError):
        return PunktSentenceTokenizer()


@lru_cache(maxsize=1)
def _sentences():  # noqa: ANN202 - the same splitter, its two hot patterns compiled by the stdlib
    splitter = _nltk_sentences()
    lang = getattr(splitter, "_lang_vars", None)
    if lang is not None and hasattr(lang, "period_context_re"):
        try:
            if type(lang).__name__ == "PunktLanguageVars" and hasattr(type(lang), "re_boundary_realignment"):
                fast = type("StdlibPunktLanguageVars", (type(lang),),
                            {"re_boundary_realignment": _stdlib(type(lang).re_boundary_realignment)})
                splitter._lang_vars = lang = fast()
            lang._re_period_context = _stdlib(lang.period_context_re())
            lang._re_word_tokenizer = _stdlib(lang._word_tokenizer_re())
        except (AttributeError, TypeError):
            pass
    token_cls = getattr(splitter, "_Token", None)
    if token_cls is not None:
        names = [n for n in ("_RE_ELLIPSIS", "_RE_NUMERIC", "_RE_INITIAL", "_RE_ALPHA") if hasattr(token_cls, n)]
        try:
            splitter._Token = type("StdlibPunktToken", (token_cls,),
                                   {n: _stdlib(getattr(token_cls, n)) for n in names})
        except (AttributeError, TypeError):
            pass
    return splitter


def bleu_tokens(text: str) -> list[str]:
    """nltk's word_tokenize, as LangFair uses it: punkt sentences, then Treebank words."""
    return [tok for sent in _sentences().tokenize(text.lower()) for tok in _sentence_words(sent)]


@lru_cache(maxsize=4096)
def _sentence_words(sentence: str) -> tuple[str, ...]:
    """Treebank's words of one sentence, the recent few thousand kept: answers share sentences (a
    template's, boilerplate), so at 100,000 prompts about 40% of them were tokenised before."""
    return tuple(_quick_treebank().tokenize(sentence))


_VOCABULARY: dict[str, int] = {}  # token -> id, shared by both tokenizations; grows with distinct tokens
_NEXT_ID = itertools.count()


def _token_ids(tokens: list[str]) -> np.ndarray:
    """The tokens' ids (thread-safe: a token two threads add at once keeps the first id stored)."""
    get, out = _VOCABULARY.get, np.empty(len(tokens), dtype=np.int32)
    for i, tok in enumerate(tokens):
        found = get(tok)
        out[i] = found if found is not None else _VOCABULARY.setdefault(tok, next(_NEXT_ID))
    return out


def _bleu_ids(text: str) -> np.ndarray:
    return _token_ids(bleu_tokens(text))


def _rouge_ids(text: str) -> np.ndarray:
    return _token_ids(rouge_tokens(text))


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
    """{n-gram's hash: count}: pairs compare ints instead of re-hashing tuples of words (two distinct
    n-grams of one order share a 64-bit hash with odds of about 2^-64)."""
    tokens = tuple(tokens)
    return Counter(hash(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


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


def _min_bleu(a: Sequence[str], b: Sequence[str], max_n: int = 4) -> float:
    """min(BLEU(a→b), BLEU(b→a)) of two token lists, by the compiled kernel."""
    tokens, offsets = token_csr(_token_ids, [list(a), list(b)], np.arange(2))
    return float(_min_bleu_of_ids(tokens, offsets, np.array([0]), np.array([1]), max_n)[0])


def token_csr(ids_of: Callable[..., np.ndarray], texts: Sequence,
              read: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The token ids ``ids_of(texts[t])`` for each ``t`` of ``read`` (texts, or lists of tokens) as
    one CSR: text ``i``'s ids are ``tokens[offsets[i]:offsets[i + 1]]``. Built in one growing buffer,
    not an array per text (at a million answers the arrays' headers alone were ~100 MB)."""
    offsets = np.zeros(len(read) + 1, dtype=np.int64)
    tokens, end = np.empty(max(1024, 32 * len(read)), dtype=np.int32), 0
    for i, t in enumerate(read):
        ids = ids_of(texts[t])
        if end + len(ids) > len(tokens):
            tokens = np.concatenate([tokens[:end], np.empty(max(end, len(ids)), dtype=np.int32)])
        tokens[end:end + len(ids)] = ids
        end += len(ids)
        offsets[i + 1] = end
    return tokens[:end].copy(), offsets


def csr_rows(tokens: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR of only ``rows`` (in that order), gathered in one vectorised step."""
    starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
    out = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return tokens[np.repeat(starts - out[:-1], lengths) + np.arange(out[-1])], out


def _min_bleu_of_ids(tokens: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray,
                     max_n: int = 4) -> np.ndarray:
    from equilens.tasks.metrics.token_kernels import gram_tables, min_bleu_pairs

    def kernel(tokens: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        min_bleu_pairs(offsets, *gram_tables(tokens, offsets, max_n), a, b, out)

    return _in_chunks(kernel, tokens, offsets, left, right)


def _rouge_l_of_ids(tokens: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    from equilens.tasks.metrics.token_kernels import rouge_l_pairs

    vocabulary = int(tokens.max()) + 1 if len(tokens) else 1
    return _in_chunks(lambda toks, offs, a, b, out: rouge_l_pairs(toks, offs, vocabulary, a, b, out),
                      tokens, offsets, left, right)


PAIRS_PER_CHUNK = 20_000


def _in_chunks(kernel: Callable, tokens: np.ndarray, offsets: np.ndarray, left: np.ndarray,
               right: np.ndarray) -> np.ndarray:
    """``kernel(tokens, offsets, left, right, out)`` over chunks of pairs, one thread per core
    (:func:`equilens.tasks.stats.kernels.run_chunked`), each chunk on a CSR of only its own texts' token ids: the
    memory of a chunk's n-gram tables is bounded by the chunk, not by every text of the call."""
    from equilens.tasks.stats.kernels import run_chunked

    out = np.empty(len(left))

    def chunk(lo: int, hi: int) -> None:
        texts, local = np.unique(np.concatenate([left[lo:hi], right[lo:hi]]), return_inverse=True)
        kernel(*csr_rows(tokens, offsets, texts), local[:hi - lo], local[hi - lo:], out[lo:hi])

    run_chunked(chunk, len(left), PAIRS_PER_CHUNK)
    return out


def per_distinct_pair(score: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray],
                      ids_of: Callable[[str], np.ndarray], texts: Sequence[str], left: np.ndarray,
                      right: np.ndarray) -> np.ndarray:
    """``score(tokens, offsets, left, right)`` for each pair ``(texts[left[i]], texts[right[i]])``,
    computed once per distinct pair (answers recur across the floor, the cross-group pairs and their
    other-content pairs; a deterministic endpoint repeats them): ``tokens`` and ``offsets`` hold the
    token ids of each text a pair reads, once (:func:`token_csr`)."""
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    if len(left) != len(right):
        raise ValueError(f"{len(left)} texts on one side and {len(right)} on the other")
    if not len(left):
        return np.empty(0)
    read, places = used_places(np.concatenate([left, right]), len(texts))
    n = len(read)
    pairs, inverse = np.unique(places[:len(left)].astype(np.int64) * n + places[len(left):], return_inverse=True)
    values = score(*token_csr(ids_of, texts, read), pairs // n, pairs % n)
    return values[inverse.reshape(-1)]


def used_places(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``codes`` (each in ``0..n-1``), sorted, and each code's place among them
    (int32 below 2^31 codes): ``np.unique(codes, return_inverse=True)`` without the sort."""
    present = np.zeros(n, bool)
    present[codes] = True
    rank = np.cumsum(present, dtype=np.int32 if n < 2**31 else np.int64)
    rank -= 1
    return np.flatnonzero(present), rank[codes]


def number_pairs(texts1: Sequence[str], texts2: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct texts of two row-aligned lists (in order of first appearance) and each row's two
    places among them."""
    import pandas as pd

    if len(texts1) != len(texts2):
        raise ValueError(f"{len(texts1)} texts on one side and {len(texts2)} on the other")
    both = np.empty(len(texts1) + len(texts2), dtype=object)
    both[:len(texts1)], both[len(texts1):] = texts1, texts2
    codes, distinct = pd.factorize(both, use_na_sentinel=False)
    return list(distinct), codes[:len(texts1)].astype(np.int64), codes[len(texts1):].astype(np.int64)


def numbered_rouge_l(texts: Sequence[str], left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """ROUGE-L F-measure of each pair ``(texts[left[i]], texts[right[i]])`` (the first text the reference)."""
    return per_distinct_pair(_rouge_l_of_ids, _rouge_ids, texts, left, right)


def numbered_min_bleu(texts: Sequence[str], left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """min(BLEU(a→b), BLEU(b→a)) of each pair ``(texts[left[i]], texts[right[i]])``."""
    return per_distinct_pair(_min_bleu_of_ids, _bleu_ids, texts, left, right)


def pairwise_rouge_l(texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
    """ROUGE-L F-measure per pair (the first text the reference), as in LangFair's counterfactual ROUGE-L."""
    return numbered_rouge_l(*number_pairs(texts1, texts2))


def pairwise_min_bleu(texts1: Sequence[str], texts2: Sequence[str]) -> np.ndarray:
    """min(BLEU(a→b), BLEU(b→a)) per pair, as in LangFair's counterfactual BLEU."""
    return numbered_min_bleu(*number_pairs(texts1, texts2))
