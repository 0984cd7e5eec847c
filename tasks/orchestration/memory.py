"""Memory between stages: hand the heap a finished stage freed back to the operating system."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

RELEASE_FROM_BYTES = 64 * 2**20
"""Resident growth over a stage from which its end hands freed memory back. A full garbage collection
walks every live object (about half a second in a process holding torch, Prefect and great-expectations),
so a stage that left the resident size within this of where it began, which has little to hand back,
skips it."""


def resident_bytes() -> int | None:
    """The process's resident size now, or None where ``/proc`` does not say (not Linux)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def release_freed_memory(since: int | None = None) -> None:
    """Hand the heap pages a finished stage freed back to the operating system. glibc keeps freed
    memory for reuse, so without this a run's resident size stays at the high-water mark of every
    stage before (at 100,000 prompts, gigabytes of answers, requests and result copies no longer
    live) and each stage's peak adds to it. ``since``: the resident size (:func:`resident_bytes`)
    as the stage began; when the stage grew it by less than :data:`RELEASE_FROM_BYTES` there is
    little to hand back and nothing is done. A no-op where the C library has no ``malloc_trim``."""
    import ctypes
    import gc

    now = resident_bytes() if since is not None else None
    if now is not None and now - since < RELEASE_FROM_BYTES:
        return
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to hand back this way
        pass


@contextmanager
def memory_handed_back() -> Iterator[None]:
    """Around a stage (or one attribute of one): when it ends, what it freed goes back to the operating
    system (:func:`release_freed_memory`, from the resident size as it began)."""
    since = resident_bytes()
    try:
        yield
    finally:
        release_freed_memory(since)
