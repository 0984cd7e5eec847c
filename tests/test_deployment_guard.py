"""A deployment's run cannot change what code or endpoint it calls, nor point a file outside the project
(the rule of :mod:`equilens.tasks.orchestration.deployed`); the real deployment round trip is in
``test_deployment.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from equilens.tasks.config import parse_config
from equilens.tasks.orchestration import deployed
from equilens.tasks.orchestration.deployed import DeploymentRunRefused, check_deployment_run, refused_fields

DEPLOYED = {"name": "nightly", "assessment": "identity", "prompts": {"path": "data/demo_prompts.csv"},
            "llm": {"provider": "http", "base_url": "https://app.example/api", "request": {"q": "{prompt}"},
                    "response_path": "answer"}}


def _run(**changes: object) -> object:
    import copy

    data = copy.deepcopy(DEPLOYED)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        at = data
        for p in parents:
            at = at.setdefault(p, {})
        at[last] = value
    return parse_config(data)


@pytest.mark.parametrize(("change", "field"), [
    ({"llm__provider": "python", "llm__target": "os:system"}, "llm.provider"),
    ({"llm__headers": {"X-Leak": "${AWS_SECRET_ACCESS_KEY}"}}, "llm.headers"),
    ({"llm__base_url": "https://attacker.example/collect"}, "llm.base_url"),
    ({"llm__request": {"q": "{prompt}", "also": "{system}"}}, "llm.request"),
    ({"llm__api_key_env": "AWS_SECRET_ACCESS_KEY"}, "llm.api_key_env"),
    ({"judge": {"enabled": True, "llm": {"provider": "python", "target": "builtins:eval"}}}, "judge.llm"),
    ({"identity": {"reader_llm": {"provider": "openai", "base_url": "http://evil/v1"}}}, "identity.reader_llm"),
    ({"prompts__path": "/etc/passwd"}, "prompts.path"),
    ({"storage__duckdb_path": "../../outside.duckdb"}, "storage.duckdb_path"),
    ({"judge": {"instructions": "/root/.ssh/id_rsa"}}, "judge.instructions"),
])
def test_a_run_that_changes_what_it_calls_is_refused(change: dict, field: str, tmp_path: Path) -> None:
    refused = refused_fields(_run(**change), {"config": DEPLOYED}, [], tmp_path)
    assert any(f == field or f.startswith(field + ".") for f in refused), refused


def test_what_a_form_is_for_stays_open(tmp_path: Path) -> None:
    run = _run(name="tried-from-the-ui", llm__temperature=0.2, llm__model="other-model", llm__max_tokens=20,
               prompts__path="data/other_prompts.csv", storage__reports_dir=str(tmp_path / "reports"),
               identity={"names_per_cell": 3})
    assert refused_fields(run, {"config": DEPLOYED}, [], tmp_path) == []


def test_a_deployment_opens_a_field_in_its_own_tags(tmp_path: Path) -> None:
    run = _run(llm__base_url="https://staging.example/api")
    assert refused_fields(run, {"config": DEPLOYED}, [], tmp_path) == ["llm.base_url"]
    assert refused_fields(run, {"config": DEPLOYED}, ["equilens-open:llm.base_url"], tmp_path) == []
    assert refused_fields(run, {"config": DEPLOYED}, ["equilens-open:llm"], tmp_path) == []
    assert refused_fields(run, {"config": DEPLOYED}, ["equilens-open:llm.base"], tmp_path) == ["llm.base_url"]


def test_a_path_inside_the_project_through_a_link_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "escape").symlink_to("/etc")
    run = _run(prompts__path="escape/hosts")
    assert refused_fields(run, {"config": DEPLOYED}, [], tmp_path) == ["prompts.path"]


def test_refusal_is_one_sentence_naming_the_fields(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(deployed, "deployment_of_this_run", lambda: ({"config": DEPLOYED}, ["nightly"]))
    with pytest.raises(DeploymentRunRefused) as err:
        check_deployment_run(_run(llm__provider="python", llm__target="os:system"), tmp_path)
    assert "llm.provider, llm.target" in str(err.value) and "before any call" in str(err.value)
    check_deployment_run(_run(), tmp_path)  # the deployment's own parameters run
    monkeypatch.setattr(deployed, "deployment_of_this_run", lambda: None)
    check_deployment_run(_run(llm__provider="python", llm__target="os:system"), tmp_path)  # ad hoc: the user's own
