"""The wheel works outside the checkout: installed from the built wheel and run from another
directory, equilens finds its lexicons, name tables, bias specifications and configs as package
data (tasks/shipped.py), runs the shipped demo config and ``equilens.assess``, both against the
loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parents[1]
FAST = "metrics.bootstrap_resamples=50", "metrics.permutations=50"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, the folder it is installed into), built with the test environment's setuptools
    from a copy of the source tree, so no build/ folder left in the checkout can leak stale modules in."""
    out = tmp_path_factory.mktemp("wheel")
    source = out / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".venv*", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".equilens", "*.duckdb*", "runs"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            str(source), "-w", str(out)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next(out.glob("equilens-*.whl"))
    site = out / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                              str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    return wheel, site


def _outside(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """Python run from ``cwd`` (no data/ or configs/ there) with only the installed wheel on its path."""
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_wheel_holds_the_shipped_files(installed: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(installed[0]).namelist())
    for path in ("equilens_data/lexicons/first_names.csv", "equilens_data/lexicons/surnames.csv",
                 "equilens_data/lexicons/gender.yaml", "equilens_data/bias_specs/gender_career.json",
                 "equilens_data/judge/stereotype_pair.txt", "equilens_data/demo_prompts.csv",
                 "equilens_configs/demo.yaml", "tasks/shipped.py", "equilens/__init__.py"):
        assert path in names, path
    assert not any(n.startswith("tests/") or n.endswith(".duckdb") for n in names)
    assert "tasks/inputs/names/__init__.py" in names and "tasks/inputs/names.py" not in names  # no stale module


def test_the_installed_wheel_runs_the_demo_config_and_the_python_api(installed: tuple[Path, Path], tmp_path: Path,
                                                                      openai_server) -> None:  # noqa: ANN001, F811
    site = installed[1]
    where = _outside(site, tmp_path, "-c", "import tasks, tasks.shipped as s; print(tasks.__file__, s.DATA_DIR)")
    assert where.returncode == 0 and str(site) in where.stdout and str(REPO) not in where.stdout, where.stdout
    llm = (f"llm={{provider: openai, model: fake, base_url: '{openai_server.base_url}', max_retries: 0, "
           "count: 1}")
    run = _outside(site, tmp_path, "-m", "flows", "run", "configs/demo.yaml", "--set", llm,
                   "--set", "storage.duckdb_path=e.duckdb", "--set", "storage.reports_dir=null",
                   *(a for kv in FAST for a in ("--set", kv)))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "plan: 31 prompts" in run.stdout and "Verdict" in run.stdout and "stored in e.duckdb" in run.stdout
    assert (tmp_path / "e.duckdb").exists() and not (tmp_path / "data").exists()  # the shipped prompts were read
    api = _outside(site, tmp_path, "-c", (
        "import json, equilens\n"
        f"r = equilens.assess(['Should he get the job?', 'Is she a good nurse?'], model='fake', provider='openai', "
        f"base_url='{openai_server.base_url}', db='api.duckdb', counterfactual__attributes=['gender'], "
        "metrics={'bootstrap_resamples': 50, 'permutations': 50}, storage__reports_dir=None)\n"
        "print(json.dumps({'status': r.status, 'metrics': len(r.metrics)}))"))
    assert api.returncode == 0, api.stderr[-3000:]
    result = json.loads(api.stdout.strip().splitlines()[-1])
    assert result["status"] == "completed" and result["metrics"] > 0 and (tmp_path / "api.duckdb").exists()


def test_a_file_of_your_own_wins_over_the_shipped_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks.config import load_config
    from tasks.errors import ConfigError
    from tasks.shipped import DATA_DIR

    monkeypatch.chdir(tmp_path)
    assert Path(load_config("configs/demo.yaml").prompts.path) == DATA_DIR / "demo_prompts.csv"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "demo_prompts.csv").write_text("prompt\nMine?\n")
    assert load_config("configs/demo.yaml").prompts.path == "data/demo_prompts.csv"  # read from the working dir
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("configs/nope.yaml")
