"""Process-wide defaults: offline (no hub downloads), a quiet ephemeral Prefect, Arrow's buffers
from the C allocator, and a fixed mmap threshold for that allocator."""

from __future__ import annotations

import os
import sys

DEFAULTS = {
    "HF_HUB_OFFLINE": "1",  # without it a hub name fails only after a minute of retries
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",  # first start migrates a fresh database
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "GX_ANALYTICS_ENABLED": "false",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    # pandas' strings live in Arrow buffers; Arrow's own pool (mimalloc) kept what a stage freed, and
    # the C allocator hands it back when a stage ends (tasks.orchestration.memory.memory_handed_back): at 20,000
    # prompts the run held 250 MB less as the metric stage began (tests/benchmarks/README.md)
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}


MMAP_THRESHOLD = 2 * 1024 * 1024
"""Bytes from which glibc serves an allocation from pages of its own, handed back when it is freed.

glibc starts at 128 KiB but raises the threshold to the size of each such block freed (up to 32 MiB),
so after the first large arrays go, arrays of several MiB (a stage's columns, an attribute's pair
arrays and draws) come from the heap, where any long-lived neighbour pins the pages freed around it.
Fixed at 2 MiB, the 20,000-prompt run peaked at 1.48 GB instead of 1.80-1.97 GB, its stage times
within their noise (tests/benchmarks/README.md); 256 KiB saved as much but cost the LLM and expand
stages 10-20% in page faults. Fixing it also stops the trim threshold moving with it."""

_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def fix_mmap_threshold() -> None:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD` unless ``MALLOC_MMAP_THRESHOLD_`` chose one.
    A no-op where the C library has no ``mallopt`` (macOS)."""
    import ctypes

    if os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        return
    try:
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):
        pass


def apply_offline_defaults() -> None:
    """Set each default unless the environment already chose a value, and fix the mmap threshold."""
    fix_mmap_threshold()
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system" and "pyarrow" in sys.modules:
        import pyarrow  # already imported: its pool may already be chosen, so choose it here

        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
