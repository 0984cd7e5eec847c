"""The run configuration: pydantic models, loaded from YAML, that are also the flow parameter.

:class:`RunConfig` holds the sections every assessment shares. Each assessment has a subclass
adding only its own sections, in its folder (``tasks/assessments/NAME/config.py``), registered with
:func:`equilens.tasks.catalog.assessment` (the registry every list of assessments reads;
:func:`config_classes` is derived from it), and :func:`load_config` returns the one that
``assessment`` names. Because the subclass is its flow's
parameter, the Prefect UI renders it as a form for ad-hoc runs showing only the sections that flow
reads, and a deployment's YAML carries it as plain data. Unknown keys are refused everywhere so a
typo never silently falls back to a default.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

import yaml
from equilens.tasks.catalog import ASSESSMENTS
from equilens.tasks.config.sections import (  # re-exported: the sections are part of the config API
    CounterfactualConfig,
    ExecutionConfig,
    LLMConfig,
    MetricsConfig,
    PromptsConfig,
    ScoringConfig,
    StorageConfig,
    StrictModel,
    ValidationConfig,
)
from equilens.tasks.errors import ConfigError, json_kind
from pydantic import Field, ValidationError, field_validator, model_validator


class RunConfig(StrictModel):
    """Any equilens run: the sections every assessment shares. :func:`load_config` and
    :func:`parse_config` (and ``RunConfig.model_validate``) return the assessment's own subclass,
    which adds only the sections that assessment reads; each flow's parameter is its subclass, so
    its Prefect form shows only those."""

    name: str = Field("adhoc", description="Run name; groups runs for trends (e.g. the deployment name)")
    assessment: str = Field(
        "counterfactual", description="Which flow runs: one of the registered assessments (`equilens assessments`)",
        json_schema_extra=lambda schema: schema.update(enum=ASSESSMENTS.names()),
    )
    prompts: PromptsConfig | None = None
    llm: LLMConfig = Field(default_factory=LLMConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    @classmethod
    def model_validate(cls, obj: object, **kwargs: object) -> RunConfig:  # type: ignore[override]
        """On ``RunConfig`` itself: validate as the subclass that ``obj``'s assessment names."""
        assessment = obj.get("assessment", "counterfactual") if isinstance(obj, dict) else None
        if cls is RunConfig and isinstance(assessment, str):
            cls = config_class(assessment)
        return super(RunConfig, cls).model_validate(obj, **kwargs)

    answers_key: ClassVar[str | None] = None  # the key of a file of answers brought instead of LLM calls
    file_keys: ClassVar[tuple[str, ...]] = ()  # keys of the assessment's own sections naming files it reads
    needs_prompts: ClassVar[bool] = True  # unless it brings its answers
    stops_early: ClassVar[bool] = False  # does its flow answer in looks (execution.stop_when: settled)?

    def value(self, dotted: str) -> Any:
        """The value of a ``section.key`` (None when the section is absent)."""
        section, key = dotted.split(".")
        return getattr(getattr(self, section) or {}, key, None)

    def brought_answers(self) -> str | None:
        """The file of answers the run reads instead of calling the LLM (None: it calls the LLM)."""
        return self.value(self.answers_key) if self.answers_key else None

    def input_files(self) -> dict[str, str | None]:
        """Keys naming files the run reads, with their values (checked before the run starts)."""
        return {key: self.value(key) for key in ("prompts.path", *self.file_keys)}

    def prompts_optional(self) -> bool:
        """Whether this run can do without a prompts section."""
        return not self.needs_prompts or bool(self.brought_answers())

    @model_validator(mode="after")
    def _shipped_files(self) -> RunConfig:
        """A relative file path missing from the working directory is read from the shipped files
        ("data/demo_prompts.csv" from any directory, and from an installed wheel; tasks.shipped)."""
        from equilens.tasks.shipped import shipped_path

        for dotted, value in self.input_files().items():
            if isinstance(value, str) and (found := shipped_path(value)) != Path(value):
                section, key = dotted.split(".")
                setattr(getattr(self, section), key, str(found))
        return self

    @model_validator(mode="after")
    def _stopping_known(self) -> RunConfig:
        if self.execution.stop_when == "settled" and not self.stops_early:
            raise ValueError(f"execution.stop_when: settled answers in looks on the counterfactual and identity "
                             f"assessments; the {self.assessment} assessment always answers every prompt "
                             "(set execution.stop_when: never)")
        return self

    @model_validator(mode="after")
    def _prompts_needed(self) -> RunConfig:
        if self.prompts is None and not self.prompts_optional():
            raise ValueError(f"the {self.assessment} assessment needs a prompts section (path or items)")
        return self

    @field_validator("assessment")
    @classmethod
    def _registered(cls, v: str) -> str:
        if v not in ASSESSMENTS:
            raise ValueError(f"{v!r} is not an assessment; the assessments are "
                             f"{', '.join(name for name, _ in ASSESSMENTS.registered())}")
        return v

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("name must not be empty")
        return v

    def config_hash(self) -> str:
        """Stable hash of the whole config (secrets are never part of it: only env/secret *names*)."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def assessment_field(name: str) -> Any:
    """The ``assessment`` field of an assessment's run config: the one value ``name``."""
    return Field(name, description=f"Which flow runs: {name} (the flow this config belongs to)",
                 json_schema_extra={"enum": [name]})  # a one-item dropdown in the Prefect UI form, not a bare const


class WithCounterfactual(RunConfig):
    """A run config that reads the shared counterfactual expansion section."""

    counterfactual: CounterfactualConfig = Field(default_factory=CounterfactualConfig)


def config_class(name: str) -> type[RunConfig]:
    """The run config class of assessment ``name`` (importing only that assessment where it is shipped);
    ``RunConfig`` itself for an unknown name, which its validation then refuses."""
    return ASSESSMENTS.get(name).config if name in ASSESSMENTS else RunConfig


def config_classes() -> dict[str, type[RunConfig]]:
    """Assessment name -> its run config class, in the registry's order."""
    return {name: entry.config for name, entry in ASSESSMENTS.registered()}


def every_field() -> dict[str, Any]:
    """Every top-level key of any run config (shared sections first), as pydantic FieldInfos."""
    fields = dict(RunConfig.model_fields)
    for cls in config_classes().values():
        fields.update({k: v for k, v in cls.model_fields.items() if k not in fields})
    return fields


def _section_owners() -> dict[str, list[str]]:
    """Section -> the assessments that read it, for sections not every assessment has."""
    owners: dict[str, list[str]] = {}
    for name, cls in config_classes().items():
        for key in cls.model_fields.keys() - RunConfig.model_fields.keys():
            owners.setdefault(key, []).append(name)
    return owners


def _location(parts: tuple) -> str:
    """Where in the config an error is, as the YAML reads: keys joined by dots, a list's items counted
    from 1 (``identity.signals #2.template``)."""
    return "".join(f" #{p + 1}" if isinstance(p, int) else f"{'.' if i else ''}{p}"
                   for i, p in enumerate(parts)) or "(top level)"


def key_lines(text: str) -> dict[str, int]:
    """Each key's line in a YAML text, by its location as :func:`_location` writes it
    (``identity.signals #2.template``); empty where the text does not compose."""
    try:
        root = yaml.compose(text)
    except (yaml.YAMLError, RecursionError):
        return {}
    found: dict[str, int] = {}

    def walk(node: Any, at: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                where = f"{at}.{key.value}" if at else str(key.value)
                found.setdefault(where, key.start_mark.line + 1)
                walk(value, where)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value, start=1):
                found.setdefault(f"{at} #{i}", item.start_mark.line + 1)
                walk(item, f"{at} #{i}")

    walk(root, "")
    return found


def _format_pydantic(err: ValidationError, source: str, assessment: object = None,
                     places: dict[str, str] | None = None) -> str:
    """The paragraph of a config's errors, each at its location and, from ``places``, where it was
    written (a line of the file, or ``--set``), the nearest enclosing key's place where its own is not."""
    lines = []
    owners = _section_owners()
    places = places or {}
    for e in err.errors():
        loc = _location(e["loc"])
        near = next((places[k] for k in (loc, *_enclosing(loc)) if k in places), "")
        msg = e["msg"]
        if e["type"] == "extra_forbidden" and len(e["loc"]) == 1 and e["loc"][0] in owners:
            if assessment not in ASSESSMENTS:
                continue  # the assessment itself is wrong (reported): which sections it reads is unknown
            *others, last = owners[str(e["loc"][0])]
            readers = f"the {', '.join(others)} and {last} assessments do" if others else f"the {last} assessment does"
            msg = f"the {assessment} assessment does not read this section ({readers}); remove it or change `assessment`"
        elif e["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; `equilens options` lists every key)"
        elif e["type"] == "value_error":
            msg = str(e.get("ctx", {}).get("error", msg))  # our own sentence, without pydantic's "Value error, " prefix
        lines.append(f"  - {loc}: {msg}{f' ({near})' if near else ''}")
    return f"Invalid config {source}:\n" + "\n".join(lines)


def _enclosing(loc: str) -> list[str]:
    """The locations that hold ``loc``, nearest first (``a.b #2.c`` -> ``a.b #2``, ``a.b``, ``a``)."""
    out = []
    while (cut := max(loc.rfind("."), loc.rfind(" #"))) > 0:
        loc = loc[:cut]
        out.append(loc)
    return out


def _settings(data: object, source: str) -> dict:
    """``data`` where it is a mapping of settings; a list or a lone value is refused, saying which."""
    if not isinstance(data, dict):
        raise ConfigError(f"Invalid config {source}: expected a mapping at the top level (key: value pairs), "
                          f"got {json_kind(data)}.")
    return data


def parse_config(data: object, source: str = "(inline)", places: dict[str, str] | None = None) -> RunConfig:
    """A checked config of the subclass for ``data``'s assessment (default counterfactual); ``places``
    says where each key was written (``{"llm.count": "line 4"}``), for the errors."""
    data = _settings(data, source)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_pydantic(err, source, data.get("assessment", "counterfactual"), places)) from None


def load_yaml(text: str, what: str) -> Any:  # whatever the YAML holds
    """``text`` parsed as YAML; a syntax error or nesting too deep to read is a ConfigError naming ``what``."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        where = str(err).replace('in "<unicode string>", ', "at ")  # PyYAML read a string: its line and column
        raise ConfigError(f"{what} is not valid YAML: {where}") from None
    except RecursionError:
        raise ConfigError(f"{what} nests lists or mappings too deeply to read (hundreds of levels); a config "
                          "needs a few.") from None


class SetText(str):
    """A ``--set`` value as typed, with what YAML reads it as (``parsed``: a number or a boolean): the
    text for a key that wants a string (``llm.target_version=2``), the number for any other."""

    parsed: object

    def __new__(cls, raw: str, parsed: object) -> SetText:
        out = super().__new__(cls, raw)
        out.parsed = parsed
        return out


def wants_text(cls: type, dotted: str) -> bool:
    """Is the field at ``dotted`` (``llm.target_version``) of config class ``cls`` a string field?"""
    import types
    import typing

    from pydantic import BaseModel

    node: Any = cls
    for part in dotted.split("."):
        fields = getattr(node, "model_fields", None)
        if not fields or part not in fields:
            return False
        annotation = fields[part].annotation
        args = [a for a in typing.get_args(annotation) if a is not type(None)] \
            if typing.get_origin(annotation) in (typing.Union, types.UnionType) else [annotation]
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        node = models[0] if models else args
    return node == [str]


def load_config(path: str | Path, overrides: dict | None = None) -> RunConfig:
    """Read a YAML config; ``overrides`` are dotted keys (``{"llm.count": 2}``) applied on top."""
    from equilens.tasks.files import file_problem
    from equilens.tasks.shipped import shipped_path

    p = shipped_path(path)  # "configs/demo.yaml" from any directory: the shipped one, unless yours is there
    if problem := file_problem(p):
        raise ConfigError(f"Config file {p} {problem}; give a YAML file such as configs/demo.yaml.")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"Config file {p} is not UTF-8 text ({err.reason} at byte {err.start}).") from None
    data = _settings(load_yaml(text, f"Config file {p}") or {}, str(p))  # before any override goes in
    overrides = dict(overrides or {})
    if "assessment" in overrides:
        data["assessment"] = overrides.pop("assessment")
    cls = config_class(str(data.get("assessment", "counterfactual")))
    for dotted, value in overrides.items():
        if isinstance(value, SetText) and not wants_text(cls, dotted):
            value = value.parsed  # --set llm.count=2: the number; --set llm.target_version=2: the text "2"
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ConfigError(f"Override {dotted}: {key} is not a section.")
        node[leaf] = value
    places = {key: f"line {line}" for key, line in key_lines(text).items()}
    places |= {dotted: "given with --set" for dotted in overrides}
    return parse_config(data, str(p), places)
