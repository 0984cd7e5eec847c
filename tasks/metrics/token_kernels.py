"""Compiled per-pair kernels of the text similarities: BLEU's clipped n-gram matches and ROUGE-L's
longest common subsequence over integer token ids, many pairs per call, without the GIL.

Texts are held in CSR form: ``tokens[offsets[t]:offsets[t + 1]]`` are text ``t``'s token ids. For
BLEU each order n = 1..4 holds every text's n-gram keys sorted (``grams[n - 1]``, offsets
``gram_offsets[n - 1]``, from :func:`gram_tables`), so a pair's clipped matches
sum(min(count_a, count_b)) are one merge of two sorted runs.

The formulas are those of :mod:`equilens.tasks.metrics.text_similarity` (which holds the readable reference,
``sentence_bleu`` and ``lcs_length``); the float operations run in the same order, so the values are
the same to the last bit on the tests' texts.
"""

from __future__ import annotations

import math

import numpy as np
from equilens.tasks.stats.kernels import GOLDEN, mix64
from numba import njit

SMOOTHING_EPSILON = 0.1
MAX_N = 4


@njit(cache=True, nogil=True)
def gram_tables(tokens: np.ndarray, offsets: np.ndarray, max_n: int = MAX_N) -> tuple[np.ndarray, np.ndarray]:
    """Every text's n-gram keys for n = 1..max_n, each text's keys sorted: (grams, gram_offsets) with
    ``grams[n - 1, gram_offsets[n - 1, t]:gram_offsets[n - 1, t + 1]]`` text t's n-grams (one row per
    order, as long as the unigrams). A unigram's key is its token id; an n-gram's key mixes its
    (n-1)-gram's key with its last token, so two distinct n-grams share a key with odds of about 2^-64."""
    n_text, n_tok = len(offsets) - 1, len(tokens)
    grams = np.zeros((max_n, n_tok), dtype=np.uint64)
    gram_offsets = np.zeros((max_n, n_text + 1), dtype=np.int64)
    rolling = np.empty(n_tok, dtype=np.uint64)  # at position i: the key of the current order's n-gram starting there
    for n in range(1, max_n + 1):
        filled = 0
        for t in range(n_text):
            lo, hi = offsets[t], offsets[t + 1]
            count = max(0, hi - lo - n + 1)
            for i in range(lo, lo + count):
                if n == 1:
                    rolling[i] = np.uint64(tokens[i])
                else:
                    rolling[i] = mix64(rolling[i] + np.uint64(tokens[i + n - 1] + 1) * GOLDEN)
                grams[n - 1, filled + i - lo] = rolling[i]
            grams[n - 1, filled:filled + count].sort()
            filled += count
            gram_offsets[n - 1, t + 1] = filled
    return grams, gram_offsets


@njit(cache=True, nogil=True)
def _clipped_matches(grams: np.ndarray, lo_a: int, hi_a: int, lo_b: int, hi_b: int) -> int:
    """sum over n-grams of min(count in a, count in b), both runs sorted."""
    i, j, matched = lo_a, lo_b, 0
    while i < hi_a and j < hi_b:
        ga, gb = grams[i], grams[j]
        if ga < gb:
            i += 1
        elif gb < ga:
            j += 1
        else:
            ra = i
            while i < hi_a and grams[i] == ga:
                i += 1
            rb = j
            while j < hi_b and grams[j] == ga:
                j += 1
            matched += min(i - ra, j - rb)
    return matched


@njit(cache=True, nogil=True)
def min_bleu_pairs(offsets: np.ndarray, grams: np.ndarray, gram_offsets: np.ndarray,
                   left: np.ndarray, right: np.ndarray, out: np.ndarray) -> None:
    """out[k] = min(BLEU(a -> b), BLEU(b -> a)) for a = left[k], b = right[k]: uniform weights over
    1..4-grams, clipped counts, brevity penalty, smoothing method 1, 0 without a shared unigram."""
    max_n = grams.shape[0]
    for k in range(len(left)):
        a, b = left[k], right[k]
        la, lb = offsets[a + 1] - offsets[a], offsets[b + 1] - offsets[b]
        if la == 0 or lb == 0:
            out[k] = 0.0
            continue
        log_a = 0.0
        log_b = 0.0
        zero = False
        for n in range(1, max_n + 1):
            row = grams[n - 1]
            go = gram_offsets[n - 1]
            matched = float(_clipped_matches(row, go[a], go[a + 1], go[b], go[b + 1]))
            if matched == 0.0:
                if n == 1:
                    zero = True
                    break
                matched = SMOOTHING_EPSILON
            log_a += math.log(matched / max(1, la - n + 1)) / max_n
            log_b += math.log(matched / max(1, lb - n + 1)) / max_n
        if zero:
            out[k] = 0.0
            continue
        bp_a = 1.0 if la > lb else math.exp(1 - lb / la)
        bp_b = 1.0 if lb > la else math.exp(1 - la / lb)
        out[k] = min(bp_a * math.exp(log_a), bp_b * math.exp(log_b))


@njit(cache=True, nogil=True)
def rouge_l_pairs(tokens: np.ndarray, offsets: np.ndarray, vocabulary: int,
                  left: np.ndarray, right: np.ndarray, out: np.ndarray) -> None:
    """out[k] = ROUGE-L F-measure of a = left[k] (reference) and b = right[k]: the longest common
    subsequence by the bit-parallel rule of Allison & Dix (1986) over 64-bit words."""
    slot = np.full(vocabulary, -1, dtype=np.int64)  # token id -> row of its position mask in a
    masks = np.zeros(0, dtype=np.uint64)
    for k in range(len(left)):
        a, b = left[k], right[k]
        lo_a, hi_a, lo_b, hi_b = offsets[a], offsets[a + 1], offsets[b], offsets[b + 1]
        la, lb = hi_a - lo_a, hi_b - lo_b
        if la == 0 or lb == 0:
            out[k] = 0.0
            continue
        words = (la + 63) // 64
        if masks.shape[0] < (la + 1) * words:
            masks = np.zeros((la + 1) * words, dtype=np.uint64)
        used = 0
        for i in range(la):
            tok = tokens[lo_a + i]
            if slot[tok] < 0:
                slot[tok] = used
                for w in range(words):
                    masks[used * words + w] = 0
                used += 1
            masks[slot[tok] * words + i // 64] |= np.uint64(1) << np.uint64(i % 64)
        row = np.zeros(words, dtype=np.uint64)
        for j in range(lb):
            s = slot[tokens[lo_b + j]]
            carry = np.uint64(1)  # ((row << 1) | 1), shifted across words
            borrow = np.uint64(0)
            for w in range(words):
                m = masks[s * words + w] if s >= 0 else np.uint64(0)
                x = m | row[w]
                shifted = (row[w] << np.uint64(1)) | carry
                carry = row[w] >> np.uint64(63)
                diff = x - shifted - borrow
                borrow = np.uint64(1) if (x < shifted or (x == shifted and borrow == 1)) else np.uint64(0)
                row[w] = x & ~diff
        lcs = 0
        for w in range(words):
            v = row[w]
            while v:
                v &= v - np.uint64(1)
                lcs += 1
        for i in range(la):
            slot[tokens[lo_a + i]] = -1
        if lcs == 0:
            out[k] = 0.0
            continue
        p, r = lcs / lb, lcs / la
        out[k] = 2 * p * r / (p + r)
