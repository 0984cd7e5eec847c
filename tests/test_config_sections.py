"""Each assessment's config carries only its own sections, so each flow's Prefect form shows only those."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml
from equilens.tasks.assessments.auto.config import AutoRunConfig
from equilens.tasks.assessments.counterfactual.config import CounterfactualRunConfig
from equilens.tasks.assessments.stereotype.config import StereotypeRunConfig
from equilens.tasks.catalog import ASSESSMENTS
from equilens.tasks.config import RunConfig, config_classes, load_config, parse_config
from equilens.tasks.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SHARED = {"name", "assessment", "prompts", "llm", "scoring", "metrics", "storage", "validation", "execution"}
OWN = {  # the sections each assessment adds to the shared ones, as its Prefect form must show them
    "counterfactual": {"counterfactual"},
    "stereotype": {"stereotype"},
    "bias_test": {"bias_test"},
    "classification": {"classification"},
    "recommendation": {"recommendation", "counterfactual"},
    "bbq": {"bbq"},
    "decisions": {"decisions"},
    "identity": {"identity", "judge"},
    "auto": {"counterfactual", "stereotype", "identity"},
}


def _form(assessment: str) -> dict:
    """The config model's schema in the flow's Prefect parameter schema (what the UI renders as a form)."""
    from equilens.tasks.catalog import ASSESSMENTS
    from prefect.utilities.callables import parameter_schema

    schema = parameter_schema(ASSESSMENTS.get(assessment).load_flow().fn).model_dump()
    ref = schema["properties"]["config"]["$ref"].rsplit("/", 1)[1]
    return schema["definitions"][ref]


@pytest.mark.parametrize("assessment", list(OWN))
def test_each_flow_form_shows_only_its_own_sections(assessment: str) -> None:
    form = _form(assessment)
    assert set(form["properties"]) == SHARED | OWN[assessment]
    assert form["properties"]["assessment"]["default"] == assessment
    assert form["properties"]["assessment"]["enum"] == [assessment]


def test_counterfactual_form_has_no_other_assessment_section() -> None:
    props = _form("counterfactual")["properties"]
    assert "counterfactual" in props
    assert not {"bbq", "classification", "stereotype", "bias_test", "recommendation"} & set(props)


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads_as_its_assessment_class(path: Path) -> None:
    assessment = (yaml.safe_load(path.read_text()) or {}).get("assessment", "counterfactual")
    cfg = load_config(path)
    assert type(cfg) is config_classes()[assessment] and isinstance(cfg, RunConfig)


def test_deployment_parameters_validate_against_their_flow() -> None:
    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    for dep in spec["deployments"]:
        path, name = dep["entrypoint"].split(":")
        flow = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)
        flow.validate_parameters(dep["parameters"])  # raises when a key is not in the flow's form


def test_run_config_validates_as_the_assessment_subclass() -> None:
    assert type(RunConfig.model_validate({"prompts": {"items": ["hi"]}})) is CounterfactualRunConfig
    auto = parse_config({"assessment": "auto", "prompts": {"items": ["hi"]}, "stereotype": {"threshold": 0.3}})
    assert type(auto) is AutoRunConfig and auto.stereotype.threshold == 0.3 and auto.counterfactual.attributes
    brought = parse_config({"assessment": "stereotype", "stereotype": {"responses_path": "r.csv"}})
    assert type(brought) is StereotypeRunConfig and brought.brought_answers() == "r.csv"


def test_a_section_of_another_assessment_is_refused_with_who_reads_it() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"prompts": {"items": ["hi"]}, "bbq": {}, "stereotype": {}})
    text = str(err.value)
    assert "bbq: the counterfactual assessment does not read this section (the bbq assessment does)" in text
    assert "stereotype: the counterfactual assessment does not read this section (the stereotype and auto " \
           "assessments do)" in text
    with pytest.raises(ConfigError, match=r"assessment: 'nope' is not an assessment; the assessments are counterf") as err:
        parse_config({"assessment": "nope", "bbq": {}})
    assert "bbq:" not in str(err.value)  # no second guess about sections of an unknown assessment


def test_cli_override_of_another_assessments_section_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"bbq: the counterfactual assessment does not read this section"):
        load_config(ROOT / "configs" / "demo.yaml", {"bbq.per_category": 4})
    cfg = load_config(ROOT / "configs" / "bbq.yaml", {"bbq.per_category": 4})
    assert cfg.bbq.per_category == 4


def test_build_config_keeps_only_the_sections_of_the_asked_assessment() -> None:
    from equilens.config_builder import build_config

    cfg = build_config(["Is he a nurse?"], config=ROOT / "configs" / "auto.yaml", assessment="stereotype")
    assert type(cfg) is StereotypeRunConfig and cfg.name == "auto-demo"


def test_every_assessment_has_a_flow_that_takes_its_config() -> None:
    import typing

    from equilens.flows.running.dispatch import load_flows

    load_flows()
    assert set(ASSESSMENTS) == set(OWN) == set(config_classes())
    for name, entry in ASSESSMENTS.items():
        hints = typing.get_type_hints(entry.load_flow().fn)
        assert hints["config"] is entry.config is config_classes()[name], name
        assert load_config(ROOT / entry.default_config).assessment == name  # its shipped config runs it


def test_the_demo_uses_the_documented_weak_parity_threshold() -> None:
    # at 0.5 every weak parity value of the demo read 0.000: VADER's neg rarely exceeds 0.5
    from equilens.tasks.config import MetricsConfig

    assert load_config(ROOT / "configs" / "demo.yaml").metrics.weak_parity_threshold == \
        MetricsConfig().weak_parity_threshold
