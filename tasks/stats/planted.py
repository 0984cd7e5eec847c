"""Planted realizations of a parity gap on one sorted grid (the minimum detectable gap,
:func:`equilens.tasks.stats.detectable_gap.parity_detectable_gap`): their draws, computed where read, and their
running sums, a base running sum plus the planted answers in one compiled pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from equilens.tasks.stats.kernels import cell_word, cell_words
from equilens.tasks.stats.resampling import Grid, Running
from numba import njit


@dataclass(frozen=True)
class Plants:
    """The random draws of planted realizations (the minimum detectable parity gap), computed where
    they are read from two keys instead of held as (realizations, prompts) arrays (at 72,000 prompts
    and 500 realizations those were 108 MB per pair): per realization and prompt two coin flips, the
    top two bits of a cell's word (bit 0: the prompt's sides exchanged; bit 1: exchanged again for
    the null), and per realization and answer unit a uniform draw on the 2^-16 grid, the top 16
    bits of a cell's word of the second key (:func:`equilens.tasks.stats.kernels.cell_word`)."""

    swap_key: np.uint64
    turn_key: np.uint64

    @classmethod
    def draw(cls, rng: np.random.Generator) -> Plants:
        swap_key, turn_key = rng.integers(0, 2**63, 2)
        return cls(np.uint64(swap_key), np.uint64(turn_key))

    def swaps(self, realizations: slice, prompts: np.ndarray) -> np.ndarray:
        """(realizations, prompts) bytes: bit 0 the flip, bit 1 the second flip."""
        return self._cells(self.swap_key, realizations, prompts, 62, np.uint8)

    def turns(self, realizations: slice, units: np.ndarray) -> np.ndarray:
        """(realizations, units) draws on the 2^-16 grid: a unit is planted where below the share."""
        return self._cells(self.turn_key, realizations, units, 48, np.uint16)

    @staticmethod
    def _cells(key: np.uint64, rows: slice, cols: np.ndarray, shift: int, dtype: type) -> np.ndarray:
        out = np.empty((rows.stop - rows.start, len(cols)), dtype)
        cell_words(key, rows.start, np.asarray(cols, np.int64), shift, out)
        return out


def planted(grid: Grid, total: np.ndarray, found_base: np.ndarray, null_base: np.ndarray, plants: Plants,
            realizations: slice, threshold: float, block: np.ndarray, unit: np.ndarray) -> tuple[Running, Running]:
    """Two blocks of reweightings (``realizations`` of ``plants``) known as base running sums
    (distinct scores x reweightings) plus answers moved up to the grid's last point. Row i belongs
    to prompt ``block[i]`` and answer unit ``unit[i]``; no (rows, reweightings) matrix is built, and
    no draw is held: row i's side-b answer (its x where the flip of (r, ``block[i]``) is set, else
    its y) moves when the turn of (r, ``unit[i]``) is below ``threshold``, by +1 of signed mass in
    the first block (``found_base``) and by -1 where the second flip is set, else +1, in the second
    (``null_base``). One compiled pass per reweighting serves both (:func:`_planted_running`)."""
    n = len(grid.x)
    found, null = np.empty(found_base.shape), np.empty(null_base.shape)
    _planted_running(found_base, null_base, plants.swap_key, plants.turn_key, realizations.start, threshold,
                     np.asarray(block, np.int64), np.asarray(unit, np.int64), grid.place[:n], grid.place[n:2 * n],
                     found, null)
    return Running(grid, total, found), Running(grid, total, null)


@njit(cache=True, nogil=True)
def _planted_running(found_base: np.ndarray, null_base: np.ndarray, swap_key: np.uint64, turn_key: np.uint64,
                     first: int, threshold: float, block: np.ndarray, unit: np.ndarray,
                     place_x: np.ndarray, place_y: np.ndarray, found: np.ndarray, null: np.ndarray) -> None:
    points, m = found_base.shape
    moved_found, moved_null = np.zeros(points), np.zeros(points)
    for r in range(m):
        moved_found[:] = 0.0
        moved_null[:] = 0.0
        for i in range(len(block)):
            if (cell_word(turn_key, first + r, unit[i]) >> np.uint64(48)) < threshold:
                swap = cell_word(swap_key, first + r, block[i]) >> np.uint64(62)
                at = place_x[i] if swap & np.uint64(1) else place_y[i]
                sign = -1.0 if swap & np.uint64(2) else 1.0
                moved_found[at] += 1.0
                moved_found[points - 1] -= 1.0
                moved_null[at] += sign
                moved_null[points - 1] -= sign
        acc_found, acc_null = 0.0, 0.0  # integer counts: the sums are exact in any order
        for d in range(points):
            acc_found += moved_found[d]
            acc_null += moved_null[d]
            found[d, r] = acc_found + found_base[d, r]
            null[d, r] = acc_null + null_base[d, r]
