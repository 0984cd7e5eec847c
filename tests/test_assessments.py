"""The assessment registry drives every list of assessments, the README's table among them."""

from __future__ import annotations

from pathlib import Path

from equilens.flows.cli import app
from equilens.flows.cli.assessment_files import assessment_files
from equilens.flows.running.dispatch import load_flows
from equilens.tasks.assessments.identity.config import IdentityRunConfig
from equilens.tasks.catalog import ASSESSMENTS
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_table_of_assessments_is_the_registrys() -> None:
    out = CliRunner().invoke(app, ["assessments", "--format", "markdown"])
    assert out.exit_code == 0, out.output
    assert out.output.count("\n| `") == len(ASSESSMENTS.names())
    assert out.output in (ROOT / "README.md").read_text(encoding="utf-8"), \
        "README's table of assessments is out of date: paste `equilens assessments --format markdown`"


def test_an_assessments_files_are_listed_from_its_entry() -> None:
    load_flows()
    files = assessment_files(ASSESSMENTS.get("bias_test"))
    assert files[:2] == ["flows/bias_tests.py", "configs/bias_test.yaml"]
    assert "tasks/assessments/bias_test/generation.py" in files and files[-1] == "tests/assessments/bias_test"
    assert all((ROOT / f).is_file() for f in files[:-1]) and (ROOT / files[-1] / "test_bias_test_flow.py").is_file()
    identity_tests = assessment_files(ASSESSMENTS.get("identity"))[-1]  # every test of one assessment, in one folder
    assert {p.name for p in (ROOT / identity_tests).glob("test_*.py")} >= {"test_identity.py", "test_judge_check.py",
                                                                          "test_outcome_reading.py"}
    # a stage package comes whole, and the metric modules of the families a stage asks the registry
    # for (by family, not by import) are found too; the shared pipeline is no assessment's own
    identity = assessment_files(ASSESSMENTS.get("identity"))
    for own in ("tasks/assessments/identity/metrics.py", "tasks/assessments/identity/judge/__init__.py"):
        assert own in identity
    assert "tasks/metrics/base.py" not in identity and "tasks/assessments/bbq/metrics.py" not in identity
    counterfactual = assessment_files(ASSESSMENTS.get("counterfactual"))
    assert counterfactual[2:5] == [f"tasks/assessments/counterfactual/{m}.py" for m in ("__init__", "config", "hooks")]
    assert "tasks/metrics/counterfactual.py" in counterfactual
    out = CliRunner().invoke(app, ["assessments", "--files"])
    assert out.exit_code == 0 and "    tasks/assessments/bias_test/generation.py" in out.output


def test_one_assessment_is_listed_by_its_name() -> None:
    out = CliRunner().invoke(app, ["assessments", "decisions", "--files"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("decisions  (equilens run configs/decisions.yaml)")
    assert "its own config sections: decisions; reads no prompts" in out.output  # it asks its own questions
    listed = [line.strip() for line in out.output.splitlines() if line.startswith("    ")]
    assert listed == assessment_files(ASSESSMENTS.get("decisions")) and "identity" not in out.output
    out = CliRunner().invoke(app, ["assessments", "decision"])
    assert out.exit_code == 2 and "no assessment 'decision'; the assessments are: counterfactual, " in out.output


def test_an_unknown_format_is_refused_in_one_line() -> None:
    out = CliRunner().invoke(app, ["assessments", "--format", "html"])
    assert out.exit_code != 0 and "use text or markdown" in out.output


def test_no_assessment_lists_another_assessments_module_for_shared_machinery() -> None:
    """Shared machinery (the pipeline, the statistics, the metric registry) lives outside
    tasks/assessments/, so an assessment's files hold only its own stage modules; only ``auto``,
    which runs the others, lists theirs."""
    load_flows()
    for name, entry in ASSESSMENTS.registered():
        if name == "auto":
            continue
        stages = {f for f in assessment_files(entry) if f.startswith("tasks/assessments/")}
        foreign = {f for f in stages if not f.removeprefix("tasks/assessments/").startswith(name)}
        assert not foreign, (name, sorted(foreign))


def test_an_assessment_is_one_declared_value_whose_flow_and_hooks_load_when_needed() -> None:
    """Each folder declares one ``ASSESSMENT``; its flow (``module:function``) and hooks (the functions of
    its hooks module) are imported when a run needs them. A flow that takes another config, a hooks
    module with a function that is no hook, and a folder that declares another name are refused."""
    import types

    import pytest
    from equilens.tasks.assessments import identity
    from equilens.tasks.assessments.identity import hooks
    from equilens.tasks.catalog import Assessment
    from equilens.tasks.errors import RegistryError

    entry = ASSESSMENTS.get("identity")
    assert entry is identity.ASSESSMENT and entry.name == "identity"
    assert entry.load_flow().fn.__module__ == "equilens.flows.identity"
    found = entry.load_hooks()
    assert found.plan_requests is hooks.plan_requests and found.plan_extra_calls is hooks.plan_extra_calls
    assert ASSESSMENTS.get("bias_test").load_hooks().plan_requests is None  # no call count in its plan

    wrong_flow = Assessment(config=IdentityRunConfig, default_config="configs/identity.yaml", card="c", order=99,
                            flow="equilens.flows.bbq:bbq_assessment")
    with pytest.raises(RegistryError, match="takes `config: BBQRunConfig`, not its config IdentityRunConfig"):
        wrong_flow.load_flow()
    with pytest.raises(RegistryError, match="must be written module:function"):
        Assessment(config=IdentityRunConfig, default_config="x", card="c", order=99, flow="equilens.flows.identity")
    stray = types.ModuleType("stray_hooks")
    exec("def plan_request(config, prompts):\n    return prompts\n", stray.__dict__)  # a misspelt hook
    import sys

    sys.modules["stray_hooks"] = stray
    try:
        with pytest.raises(RegistryError, match="defines plan_request, which are not hooks"):
            Assessment(config=IdentityRunConfig, default_config="x", card="c", order=99,
                       flow="equilens.flows.identity:identity_assessment", hooks="stray_hooks").load_hooks()
    finally:
        del sys.modules["stray_hooks"]
    with pytest.raises(RegistryError, match="declares the assessment 'identity', but is named 'judge'"):
        ASSESSMENTS.declare(identity, "judge", "tasks/assessments/judge")
    ASSESSMENTS.declare(identity, "identity", "tasks/assessments/identity")  # the same value again: kept once


def test_loading_one_config_imports_only_its_assessment() -> None:
    import subprocess
    import sys

    code = ("import sys; from equilens.tasks.config import load_config; load_config('configs/identity.yaml'); "
            "print(sorted({m.split('.')[3] for m in sys.modules if m.startswith('equilens.tasks.assessments.')}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['identity']", out.stdout + out.stderr


def test_every_metric_report_and_table_module_of_a_folder_is_declared_by_its_assessment() -> None:
    """The registries of metrics, report sections and tables import what each ``ASSESSMENT`` names;
    a module in a folder that its value does not name would never load."""
    for name, entry in ASSESSMENTS.registered():
        folder = ROOT / "tasks" / "assessments" / name
        on_disk = {p.stem for p in folder.glob("*.py") if p.stem.endswith("metrics") or p.stem in ("report", "tables")}
        declared = {m.rsplit(".", 1)[1] for m in (*entry.metrics, entry.report, entry.tables) if m}
        assert declared == on_disk, (name, sorted(on_disk - declared), sorted(declared - on_disk))


def test_a_hook_that_takes_other_parameters_than_its_protocol_is_refused() -> None:
    import sys
    import types

    import pytest
    from equilens.tasks.catalog import Assessment
    from equilens.tasks.errors import RegistryError

    module = types.ModuleType("narrow_hooks")
    exec("def plan_requests(config):\n    return None\n", module.__dict__)  # the prompts are missing
    sys.modules["narrow_hooks"] = module
    try:
        with pytest.raises(RegistryError, match=r"narrow_hooks.plan_requests takes \(config\); the hook takes "
                                                r"\(config, prompts\)"):
            Assessment(config=IdentityRunConfig, default_config="x", card="c", order=99,
                       flow="equilens.flows.identity:identity_assessment", hooks="narrow_hooks").load_hooks()
    finally:
        del sys.modules["narrow_hooks"]
