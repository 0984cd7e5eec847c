"""An assessment added by another installed package, through the ``equilens.assessments`` entry-point
group: a throwaway package is built and installed (into a folder of its own, never the project's
environment), and then appears in ``equilens assessments`` and runs from its own config, its results
in DuckDB. The wheel of equilens itself holds every package and shipped file without a hand-kept list."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parent.parent
SHIPPED = (".csv", ".yaml", ".txt", ".md", ".json", ".jsonl", ".j2")

PLUGIN = '''
"""A tenth assessment from another package: classification fairness of brought predictions, under its own name."""
from pathlib import Path
from typing import Any, Literal

from equilens.flows.classification import classification_assessment
from equilens.tasks.assessments.classification.config import ClassificationRunConfig
from equilens.tasks.config import assessment_field
from equilens.tasks.catalog import Assessment
from prefect import flow


class TenthRunConfig(ClassificationRunConfig):
    assessment: Literal["tenth"] = assessment_field("tenth")


@flow(name="tenth-assessment")
def tenth_assessment(config: TenthRunConfig) -> dict[str, Any]:
    return classification_assessment.fn(config)


ASSESSMENT = Assessment(config=TenthRunConfig, default_config=str(Path(__file__).with_name("tenth.yaml")), order=99,
                        card="Do brought loan decisions treat groups alike? A plug-in assessment from its own package.",
                        flow="tenth_assessment:tenth_assessment")
'''


def _wheel(source: Path, out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(source),
                    "-w", str(out)], check=True, capture_output=True, text=True)
    (wheel,) = out.glob("*.whl")
    return wheel


def test_the_wheel_holds_every_package_and_shipped_file(tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(_wheel(REPO, tmp_path)).namelist())
    for top in ("flows", "tasks", "data", "configs"):
        for path in (REPO / top).rglob("*"):
            rel = path.relative_to(REPO)
            if "__pycache__" in rel.parts or rel.parts[:2] == ("data", "runs") or not path.is_file():
                continue
            inside = ("equilens", *rel.parts[2:]) if rel.parts[:2] == ("flows", "api") else ("equilens", *rel.parts)
            if path.suffix == ".py" or (path.suffix in SHIPPED and (path.parent / "__init__.py").is_file()
                                        or path.parent.name in ("templates", "docs")):
                assert "/".join(inside) in names, f"{rel} is not in the wheel"


@pytest.mark.expensive  # builds and installs a package, then starts a Prefect server in a fresh interpreter (~30 s)
def test_an_assessment_from_another_installed_package_is_listed_and_runs(tmp_path: Path) -> None:
    source = tmp_path / "plugin"
    (source / "tenth_assessment").mkdir(parents=True)
    (source / "tenth_assessment" / "__init__.py").write_text(PLUGIN)
    (source / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "equilens-tenth"
        version = "0.1"
        [project.entry-points."equilens.assessments"]
        tenth = "tenth_assessment"
        [tool.setuptools]
        packages = ["tenth_assessment"]
        [tool.setuptools.package-data]
        tenth_assessment = ["*.yaml"]
    '''))
    preds = tmp_path / "preds.csv"
    preds.write_text("group,prediction,label\nA,approve,approve\nA,deny,approve\nB,approve,approve\nB,approve,deny\n")
    db = tmp_path / "e.duckdb"
    (source / "tenth_assessment" / "tenth.yaml").write_text(textwrap.dedent(f'''
        name: tenth-demo
        assessment: tenth
        classification:
          labels: [approve, deny]
          predictions_path: {preds}
        metrics:
          bootstrap_resamples: 20
        storage:
          duckdb_path: {db}
          reports_dir: null
    '''))
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(site), str(_wheel(source, tmp_path / "dist"))], check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    config = site / "tenth_assessment" / "tenth.yaml"
    both = ("import sys; from equilens.flows.cli import main; "  # one interpreter for both commands: Prefect loads once
            f"print('exit', main(['assessments'])); print('exit', main(['run', {str(config)!r}]))")
    out = subprocess.run([sys.executable, "-c", both], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.count("exit 0") == 2, out.stdout[-2000:] + out.stderr[-2000:]
    assert "tenth  (equilens run " in out.stdout and "tenth_assessment:tenth_assessment" in out.stdout
    with duckdb.connect(str(db), read_only=True) as con:
        (assessment,) = con.execute("SELECT json_extract_string(config, '$.assessment') FROM runs").fetchone()
        fnr = dict(con.execute("SELECT group_a, value FROM metrics WHERE metric = 'false_negative_rate'").fetchall())
    assert assessment == "tenth"
    assert fnr == pytest.approx({"A": 0.5, "B": 0.0})  # A: of two truth-approve rows, one predicted deny


def test_a_package_whose_assessment_fails_to_load_is_left_out_with_a_warning(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from equilens.tasks import catalog

    site = tmp_path / "site"
    (site / "equilens_broken-0.1.dist-info").mkdir(parents=True)  # what pip writes for an installed package
    (site / "equilens_broken-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: equilens-broken\n"
                                                                   "Version: 0.1\n")
    (site / "equilens_broken-0.1.dist-info" / "entry_points.txt").write_text(
        "[equilens.assessments]\nbroken = broken_assessment\n")
    (site / "broken_assessment.py").write_text("raise ImportError('needs a package that is not installed')\n")
    monkeypatch.syspath_prepend(str(site))
    with pytest.warns(RuntimeWarning, match="'broken' of broken_assessment .* left out: ImportError: needs a package"):
        catalog._declared()
    assert "broken" not in catalog.ASSESSMENTS
