"""Process-wide defaults: offline (no hub downloads), a quiet ephemeral Prefect, and Arrow's buffers
from the C allocator."""

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
    # the C allocator hands it back when a stage ends (flows.common.release_freed_memory): at 20,000
    # prompts the run held 250 MB less as the metric stage began (tests/benchmarks/README.md)
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}


def apply_offline_defaults() -> None:
    """Set each default unless the environment already chose a value."""
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system" and "pyarrow" in sys.modules:
        import pyarrow  # already imported: its pool may already be chosen, so choose it here

        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
