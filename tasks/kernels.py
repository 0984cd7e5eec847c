"""Run a GIL-free kernel over chunks of a range on one thread per core."""

from __future__ import annotations

import os
from collections.abc import Callable


def run_chunked(kernel: Callable[[int, int], None], n: int, chunk: int) -> None:
    """``kernel(lo, hi)`` for consecutive ranges of at most ``chunk`` covering 0..n; on a thread pool
    of one thread per core when there is more than one range (the kernels are compiled with
    ``nogil``, so the threads run at once), else on this thread."""
    bounds = [(lo, min(lo + chunk, n)) for lo in range(0, n, max(1, chunk))]
    if len(bounds) <= 1:
        for lo, hi in bounds:
            kernel(lo, hi)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(bounds), os.cpu_count() or 1), thread_name_prefix="kernel") as pool:
        for done in [pool.submit(kernel, lo, hi) for lo, hi in bounds]:
            done.result()
