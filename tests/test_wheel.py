"""The wheel works outside the checkout: it installs one import name, ``equilens``, and, run from a
project folder with its own ``flows/`` and ``tasks/`` packages, equilens finds its lexicons, name tables, bias specifications
and configs as package
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
# one metric: the kernels of every metric compile on a first run from a fresh install (25 s), and what
# is checked here is that the installed package finds its files and runs, not each metric again
FAST = "metrics.bootstrap_resamples=50", "metrics.permutations=50", "metrics.names=[strict_sentiment_parity]"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the built wheel, what the build wrote to standard error), built with the test environment's
    setuptools from a copy of the source tree, so no build/ folder left in the checkout can leak stale
    modules in."""
    out = tmp_path_factory.mktemp("wheel")
    source = out / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".venv*", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".equilens", "*.duckdb*", "runs"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            str(source), "-w", str(out)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    return next(out.glob("equilens-*.whl")), build.stderr


@pytest.fixture(scope="module")
def installed(built: tuple[Path, str]) -> tuple[Path, Path]:
    """(the built wheel, the folder it is installed into)."""
    wheel = built[0]
    site = wheel.parent / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                              str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    return wheel, site


def test_the_build_is_warned_of_nothing_setuptools_will_change(built: tuple[Path, str]) -> None:
    """setuptools warns before it changes what a build does: a folder of data it would stop shipping
    (one that Python could import but the package list leaves out), a license table it will refuse."""
    warned = [line.strip() for line in built[1].splitlines() if "Warning" in line and "setuptools" in line]
    assert warned == [], built[1][-3000:]


def _outside(site: Path, cwd: Path, *args: str, api: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Python run from ``cwd`` (no data/ or configs/ there) with only the installed wheel on its path;
    ``api`` (the ``prefect_api_env`` fixture) for a run that reports to the test process's Prefect server."""
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONUNBUFFERED": "1", **(api or {})}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_wheel_installs_one_import_name_with_the_shipped_files(installed: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(installed[0]).namelist())
    for path in ("equilens/data/lexicons/first_names.csv", "equilens/data/lexicons/surnames.csv",
                 "equilens/data/lexicons/gender.yaml", "equilens/data/bias_specs/gender_career.json",
                 "equilens/data/judge/stereotype_pair.txt", "equilens/data/demo_prompts.csv",
                 "equilens/data/decisions/decisions.jsonl", "equilens/data/decisions/scenarios.yaml",
                 "equilens/configs/demo.yaml", "equilens/tasks/shipped.py", "equilens/__init__.py",
                 "equilens/__main__.py", "equilens/flows/cli/__init__.py", "equilens/tasks/reporting/templates/report.html.j2"):
        assert path in names, path
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"equilens"}, tops  # no flows, tasks, equilens_data ... beside it
    assert not any(n.startswith("tests/") or n.endswith(".duckdb") for n in names)
    assert "equilens/tasks/inputs/names/__init__.py" in names and "equilens/tasks/inputs/names.py" not in names
    assert not any(n.startswith("equilens/flows/api/") for n in names)  # the API is the root, once


def _prefect_project(root: Path) -> Path:
    """A folder laid out as a Prefect project usually is: its own flows/ and tasks/ packages, found first
    on the path when Python runs there."""
    for package in ("flows", "tasks"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text(f"MINE = '{package}'\n")
    (root / "tasks" / "errors.py").write_text("raise ImportError('the project\\'s own tasks.errors')\n")
    return root


def test_the_installed_wheel_runs_inside_a_project_with_its_own_flows_and_tasks(
        installed: tuple[Path, Path], tmp_path: Path, openai_server,  # noqa: F811
        prefect_api_env: dict[str, str]) -> None:
    site, cwd = installed[1], _prefect_project(tmp_path / "project")
    where = _outside(site, cwd, "-c", (
        "import equilens, equilens.tasks.shipped as s, tasks, flows\n"
        "print(equilens.__file__, s.DATA_DIR, tasks.MINE, flows.MINE)"))
    assert where.returncode == 0, where.stderr[-3000:]
    assert str(site) in where.stdout and str(REPO) not in where.stdout and "tasks flows" in where.stdout
    llm = (f"llm={{provider: openai, model: fake, base_url: '{openai_server.base_url}', max_retries: 0, "
           "count: 1}")
    run = _outside(site, cwd, "-m", "equilens", "run", "configs/demo.yaml", "--set", llm,
                   "--set", "storage.duckdb_path=e.duckdb", "--set", "storage.reports_dir=null",
                   "--set", "prompts.limit=8", *(a for kv in FAST for a in ("--set", kv)), api=prefect_api_env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "plan: 8 prompts" in run.stdout and "Verdict" in run.stdout and "stored in e.duckdb" in run.stdout
    assert (cwd / "e.duckdb").exists() and not (cwd / "data").exists()  # the shipped prompts were read
    api = _outside(site, cwd, "-c", (
        "import json, equilens, tasks\n"
        f"r = equilens.assess(['Should he get the job?', 'Is she a good nurse?'], model='fake', provider='openai', "
        f"base_url='{openai_server.base_url}', db='api.duckdb', counterfactual__attributes=['gender'], "
        "metrics={'bootstrap_resamples': 50, 'permutations': 50, 'names': ['strict_sentiment_parity']}, "
        "storage__reports_dir=None)\n"
        "print(json.dumps({'status': r.status, 'metrics': len(r.metrics), 'theirs': tasks.MINE}))"),
        api=prefect_api_env)
    assert api.returncode == 0, api.stderr[-3000:]
    result = json.loads(api.stdout.strip().splitlines()[-1])
    assert result["status"] == "completed" and result["metrics"] > 0 and (cwd / "api.duckdb").exists()
    assert result["theirs"] == "tasks"  # the project's own package is untouched


def test_a_file_of_your_own_wins_over_the_shipped_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks.config import load_config
    from equilens.tasks.errors import ConfigError
    from equilens.tasks.shipped import DATA_DIR

    monkeypatch.chdir(tmp_path)
    assert Path(load_config("configs/demo.yaml").prompts.path) == DATA_DIR / "demo_prompts.csv"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "demo_prompts.csv").write_text("prompt\nMine?\n")
    assert load_config("configs/demo.yaml").prompts.path == "data/demo_prompts.csv"  # read from the working dir
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("configs/nope.yaml")
