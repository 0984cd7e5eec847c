"""Process-wide defaults for running offline: no hub downloads, a quiet ephemeral Prefect."""

from __future__ import annotations

import os

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
}


def apply_offline_defaults() -> None:
    """Set each default unless the environment already chose a value."""
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
