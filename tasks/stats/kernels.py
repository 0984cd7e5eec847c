"""Shared pieces of the compiled kernels: a 64-bit mixing function (hash keys and random bits) and a
runner that spreads a GIL-free kernel over chunks of a range, one thread per core."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

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
handing ranges to the pool and waiting on them costs more than the kernel (with the detectable gap's
kernels on threads at 30 prompts and 2,000 realizations, 240,000 cells, a simulated run through the
metric stage took 0.175 s; without, 0.112 s)."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_on_pool = threading.local()


def _mark_pool_thread() -> None:
    _on_pool.inside = True


def _forget_pool() -> None:
    """In a forked child the parent's pool threads do not exist: the child starts its own."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def kernel_pool() -> ThreadPoolExecutor:
    """The process's one pool for kernel ranges, one thread per core, started at first use and kept:
    a pool per call started and joined a thread per range (a simulated 40-prompt run through the
    metric stage spent 18% of its time there)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="kernel",
                                       initializer=_mark_pool_thread)
        return _pool


def run_chunked(kernel: Callable[[int, int], None], n: int, chunk: int, cells_per_item: int | None = None) -> None:
    """``kernel(lo, hi)`` for consecutive ranges of at most ``chunk`` covering 0..n; on the kernel pool
    (:func:`kernel_pool`; the kernels are compiled with ``nogil``, so its threads run at once) when
    there is more than one range, else on this thread, as on a pool thread itself (a range that waited
    on ranges queued behind it could wait forever). Given ``cells_per_item``, a range holds at least
    :data:`THREADED_FROM_CELLS` cells, so small work runs here."""
    chunk = max(1, chunk, -(-THREADED_FROM_CELLS // cells_per_item) if cells_per_item else 1)
    bounds = [(lo, min(lo + chunk, n)) for lo in range(0, n, chunk)]
    if len(bounds) <= 1 or getattr(_on_pool, "inside", False):
        for lo, hi in bounds:
            kernel(lo, hi)
        return
    pool = kernel_pool()
    for done in [pool.submit(kernel, lo, hi) for lo, hi in bounds]:
        done.result()
