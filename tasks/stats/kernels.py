"""Shared pieces of the compiled kernels: a 64-bit mixing function (hash keys and random bits) and a
runner that spreads a GIL-free kernel over chunks of a range, one thread per core."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def mix64(z: np.uint64) -> np.uint64:
    """splitmix64's finaliser (Steele et al., 2014): a bijection of 64-bit words that spreads every
    input bit; ``mix64(seed + i * GOLDEN)`` for i = 1, 2, ... is splitmix64's stream of random words."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def cell_word(key: np.uint64, row: int, col: int) -> np.uint64:
    """The random word of cell (row, col) of a virtual matrix seeded by ``key``: splitmix64's word at
    position row * 2^32 + col + 1 of its stream from ``key`` (columns below 2^32), so any cell is
    computed where it is read and no matrix is held."""
    return mix64(key + (np.uint64(row) * np.uint64(1 << 32) + np.uint64(col) + np.uint64(1)) * GOLDEN)


@njit(cache=True, nogil=True)
def cell_words(key: np.uint64, first_row: int, cols: np.ndarray, shift: int, out: np.ndarray) -> None:
    """out[r, j] = the top bits of cell (first_row + r, cols[j])'s word (``cell_word`` >> ``shift``)."""
    for r in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[r, j] = cell_word(key, first_row + r, cols[j]) >> np.uint64(shift)


@njit(cache=True, nogil=True, inline="always")
def popcount64(x: np.uint64) -> int:
    """The number of set bits of a 64-bit word (the SWAR sum of bit counts in parallel fields)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


THREADED_FROM_CELLS = 1 << 18
"""The least work (items times cells per item) a range of a kernel gets its own thread for: below it,
starting a pool and waiting on it costs more than the kernel (with the detectable gap's kernels on
threads at 30 prompts and 2,000 realizations, 240,000 cells, a simulated run through the metric
stage took 0.175 s; without, 0.112 s)."""


def run_chunked(kernel: Callable[[int, int], None], n: int, chunk: int, cells_per_item: int | None = None) -> None:
    """``kernel(lo, hi)`` for consecutive ranges of at most ``chunk`` covering 0..n; on a thread pool
    of one thread per core when there is more than one range (the kernels are compiled with
    ``nogil``, so the threads run at once), else on this thread. Given ``cells_per_item``, a range
    holds at least :data:`THREADED_FROM_CELLS` cells, so small work runs here."""
    chunk = max(1, chunk, -(-THREADED_FROM_CELLS // cells_per_item) if cells_per_item else 1)
    bounds = [(lo, min(lo + chunk, n)) for lo in range(0, n, chunk)]
    if len(bounds) <= 1:
        for lo, hi in bounds:
            kernel(lo, hi)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(bounds), os.cpu_count() or 1), thread_name_prefix="kernel") as pool:
        for done in [pool.submit(kernel, lo, hi) for lo, hi in bounds]:
            done.result()
