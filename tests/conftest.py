"""Test-session settings: offline models, a quiet Prefect, results in a temp dir."""

from __future__ import annotations

import os
import tempfile

from equilens.tasks.environment import apply_offline_defaults

apply_offline_defaults()
_tmp_home = tempfile.mkdtemp(prefix="equilens-test-prefect-")
os.environ.setdefault("PREFECT_HOME", _tmp_home)
os.environ.setdefault("PREFECT_RESULTS_LOCAL_STORAGE_PATH", os.path.join(_tmp_home, "results"))
