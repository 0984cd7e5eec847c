"""Memory between stages: hand the heap a finished stage freed back to the operating system."""

from __future__ import annotations





def release_freed_memory() -> None:
    """Hand the heap pages a finished stage freed back to the operating system. glibc keeps freed
    memory for reuse, so without this a run's resident size stays at the high-water mark of every
    stage before (at 100,000 prompts, gigabytes of answers, requests and result copies no longer
    live) and each stage's peak adds to it. A no-op where the C library has no ``malloc_trim``."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to hand back this way
        pass
