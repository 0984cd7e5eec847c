"""The run configuration: pydantic models, loaded from YAML, that are also the flow parameter.

:class:`RunConfig` holds the sections every assessment shares; each assessment has a subclass
adding only its own sections, registered with :func:`equilens.tasks.config.assessments.assessment` (the registry
every list of assessments reads; :data:`CONFIG_CLASSES` is derived from it), and
:func:`load_config` returns the one that ``assessment`` names. Because the subclass is its flow's
parameter, the Prefect UI renders it as a form for ad-hoc runs showing only the sections that flow
reads, and a deployment's YAML carries it as plain data. Unknown keys are refused everywhere so a
typo never silently falls back to a default.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from equilens.tasks.config.assessment_sections import (  # noqa: F401 - re-exported, as above
    BBQConfig,
    BiasTestConfig,
    ClassificationConfig,
    DecisionsConfig,
    IdentityConfig,
    JudgeConfig,
    RecommendationConfig,
    SignalConfig,
    StereotypeConfig,
)
from equilens.tasks.config.assessments import ASSESSMENTS, assessment
from equilens.tasks.config.sections import (  # noqa: F401 - re-exported: the sections are part of the config API
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
from equilens.tasks.errors import ConfigError
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
            cls = CONFIG_CLASSES.get(assessment, RunConfig)  # an unknown assessment: the base refuses it
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


def _assessment(name: str) -> Any:
    return Field(name, description=f"Which flow runs: {name} (the flow this config belongs to)",
                 json_schema_extra={"enum": [name]})  # a one-item dropdown in the Prefect UI form, not a bare const


class _WithCounterfactual(RunConfig):
    counterfactual: CounterfactualConfig = Field(default_factory=CounterfactualConfig)


class _WithStereotype(RunConfig):
    stereotype: StereotypeConfig = Field(default_factory=StereotypeConfig)


@assessment(
    flow="equilens.flows.counterfactual:counterfactual_assessment", default_config="configs/demo.yaml",
    card="Does the model answer differently when a prompt names another group? Prompts that mention "
         "gender, race or your own groups get counterfactual variants (he -> she, white -> Black, names "
         "swapped by gender and race), the model answers every variant, and LangFair's counterfactual "
         "metrics (sentiment parity, cosine, ROUGE-L and BLEU similarity) compare each pair of groups "
         "against a same-group noise floor, with a verdict in words.",
)
class CounterfactualRunConfig(_WithCounterfactual):
    """A counterfactual fairness run (flows/counterfactual.py)."""

    assessment: Literal["counterfactual"] = _assessment("counterfactual")
    stops_early = True

    @model_validator(mode="after")
    def _something_to_compare(self) -> CounterfactualRunConfig:
        cf = self.counterfactual
        if not cf.attributes and not cf.custom:
            raise ValueError("counterfactual.attributes is empty and counterfactual.custom names no attribute: "
                             "nothing to compare. List attributes (e.g. [gender, race]) or define custom groups")
        return self


@assessment(
    flow="equilens.flows.identity:identity_assessment", default_config="configs/identity.yaml",
    card="Does the model treat users differently by the identity their name or profile signals, when "
         "the prompt names no group? Each prompt is asked as users of different groups (first-person "
         "fairness), and the answers are compared by outcome (numbers, yes rates, first choices), by the "
         "counterfactual metrics and by a judge model.",
)
class IdentityRunConfig(RunConfig):
    """Identity through names and profiles, for prompts that name no group (flows/identity.py)."""

    file_keys = ("judge.instructions", "judge.check_path")
    stops_early = True
    assessment: Literal["identity"] = _assessment("identity")
    identity: IdentityConfig = Field(default_factory=IdentityConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)

    def reader_llm(self) -> LLMConfig:
        """The outcome reader model's LLM settings: ``identity.reader_llm``, or the tested model's at
        temperature 0, one sample, a short reply."""
        base = self.identity.reader_llm or self.llm.model_copy(update={"temperature": 0.0})
        return base.model_copy(update={"max_tokens": 60, "count": 1, "logprobs": 0})

    def judge_llm(self) -> LLMConfig:
        """The judge's LLM settings: its own section, or the tested model's at temperature 0, with
        the judge's length cap, one sample and the first token's log-probabilities when asked."""
        base = self.judge.llm or self.llm.model_copy(update={"temperature": 0.0})
        return base.model_copy(update={"max_tokens": self.judge.max_tokens, "count": 1,
                                       "logprobs": 5 if self.judge.logprobs else 0})


@assessment(
    flow="equilens.flows.stereotype:stereotype_assessment", default_config="configs/stereotype.yaml",
    card="Do the answers carry stereotypes or toxicity? The model's answers (or a file of your own) "
         "are scored with LangFair's stereotype metrics (co-occurrence bias, stereotypical associations, "
         "demographic representation) and toxicity metrics.",
)
class StereotypeRunConfig(_WithStereotype):
    """A stereotype and toxicity run (flows/stereotype.py)."""

    answers_key = "stereotype.responses_path"
    file_keys = ("stereotype.responses_path", "stereotype.honest_lexicon", "stereotype.cobs_targets")
    assessment: Literal["stereotype"] = _assessment("stereotype")


@assessment(
    flow="equilens.flows.bias_test:bias_test", default_config="configs/bias_test.yaml",
    card="Does a language model itself prefer stereotyped sentences? After BiasTestGPT, an LLM writes "
         "test sentences for a bias specification, you may review them, and the model under test scores "
         "stereotype against anti-stereotype versions by their likelihoods.",
)
class BiasTestRunConfig(RunConfig):
    """A bias test of a language model's own likelihoods (flows/bias_test.py)."""

    assessment: Literal["bias_test"] = _assessment("bias_test")
    bias_test: BiasTestConfig = Field(default_factory=BiasTestConfig)
    answers_key = "bias_test.reviewed_csv"
    file_keys = ("bias_test.spec_path", "bias_test.reviewed_csv")
    needs_prompts = False


@assessment(
    flow="equilens.flows.classification:classification_assessment", default_config="configs/classification.yaml",
    card="Does an LLM that labels or decides treat groups alike? Each answer is read as a label, and "
         "the groups of a column are compared on predicted prevalence and, with a ground truth, on false "
         "positive, false negative, false omission and false discovery rates.",
)
class ClassificationRunConfig(RunConfig):
    """An LLM used as a classifier (flows/classification.py)."""

    assessment: Literal["classification"] = _assessment("classification")
    classification: ClassificationConfig = Field(default_factory=ClassificationConfig)
    answers_key = "classification.predictions_path"
    file_keys = (answers_key,)


@assessment(
    flow="equilens.flows.decisions:decisions_assessment", default_config="configs/decisions.yaml",
    card="Does the model say yes less often to some people when it decides about them (a loan, a job, a "
         "lease, a treatment)? After discrim-eval, each decision is asked about people of every age, gender "
         "and race, P(yes) is read from the first token's probabilities, and each group's mixed-effects "
         "discrimination score against a baseline person is tested.",
)
class DecisionsRunConfig(RunConfig):
    """Yes/no decisions about people, discrim-eval style (flows/decisions.py)."""

    assessment: Literal["decisions"] = _assessment("decisions")
    decisions: DecisionsConfig = Field(default_factory=DecisionsConfig)
    file_keys = ("decisions.path",)
    needs_prompts = False

    def decision_llm(self) -> LLMConfig:
        """The tested model's settings with the first token's log-probabilities asked for."""
        return self.llm.model_copy(update={"logprobs": max(self.llm.logprobs, self.decisions.top_logprobs)})


@assessment(
    flow="equilens.flows.recommendation:recommendation_assessment", default_config="configs/recommendation.yaml",
    card="Do an LLM's recommendations change with the user's group? After FaiRLLM, each group's top-K "
         "list is compared with the list the neutral request gets (Jaccard, SERP* and PRAG* similarity).",
)
class RecommendationRunConfig(_WithCounterfactual):
    """An LLM used as a recommender (flows/recommendation.py); ``counterfactual`` expands the prompts
    when ``recommendation.source`` is counterfactual."""

    assessment: Literal["recommendation"] = _assessment("recommendation")
    recommendation: RecommendationConfig = Field(default_factory=RecommendationConfig)
    answers_key = "recommendation.responses_path"
    file_keys = (answers_key,)

    def prompts_optional(self) -> bool:
        return super().prompts_optional() or bool(self.recommendation.templates)


@assessment(
    flow="equilens.flows.bbq:bbq_assessment", default_config="configs/bbq.yaml",
    card="Does the model fall back on stereotypes when a question cannot be answered from its context? "
         "The BBQ benchmark's multiple-choice questions give accuracy and bias scores per category, on "
         "ambiguous and disambiguated contexts.",
)
class BBQRunConfig(RunConfig):
    """BBQ multiple-choice questions (flows/bbq.py)."""

    assessment: Literal["bbq"] = _assessment("bbq")
    bbq: BBQConfig = Field(default_factory=BBQConfig)
    answers_key = "bbq.responses_path"
    file_keys = (answers_key,)
    needs_prompts = False


@assessment(
    flow="equilens.flows.auto:auto_assessment", default_config="configs/auto.yaml",
    card="Every family on the same prompts in one run, as LangFair's AutoEval: the FTU check, "
         "counterfactual fairness, stereotypes and toxicity, and, when asked, an identity for the prompts "
         "that name no group.",
)
class AutoRunConfig(_WithStereotype, _WithCounterfactual):  # counterfactual first in the form
    """AutoEval: the counterfactual, stereotype and toxicity families on the same prompts (flows/auto.py)."""

    assessment: Literal["auto"] = _assessment("auto")
    identity: IdentityConfig | None = Field(
        None, description="Give the prompts that name no group an identity through names, as the identity "
                          "assessment does (prompts x signals x cells x 2 more calls); none: off")


CONFIG_CLASSES: dict[str, type[RunConfig]] = {name: entry.config for name, entry in ASSESSMENTS.registered()}


def every_field() -> dict[str, Any]:
    """Every top-level key of any run config (shared sections first), as pydantic FieldInfos."""
    fields = dict(RunConfig.model_fields)
    for cls in CONFIG_CLASSES.values():
        fields.update({k: v for k, v in cls.model_fields.items() if k not in fields})
    return fields


def _section_owners() -> dict[str, list[str]]:
    """Section -> the assessments that read it, for sections not every assessment has."""
    owners: dict[str, list[str]] = {}
    for name, cls in CONFIG_CLASSES.items():
        for key in cls.model_fields.keys() - RunConfig.model_fields.keys():
            owners.setdefault(key, []).append(name)
    return owners


def _format_pydantic(err: ValidationError, source: str, assessment: object = None) -> str:
    lines = []
    owners = _section_owners()
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if e["type"] == "extra_forbidden" and len(e["loc"]) == 1 and e["loc"][0] in owners:
            if assessment not in CONFIG_CLASSES:
                continue  # the assessment itself is wrong (reported): which sections it reads is unknown
            *others, last = owners[str(e["loc"][0])]
            readers = f"the {', '.join(others)} and {last} assessments do" if others else f"the {last} assessment does"
            msg = f"the {assessment} assessment does not read this section ({readers}); remove it or change `assessment`"
        elif e["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; `equilens options` lists every key)"
        elif e["type"] == "value_error":
            msg = str(e.get("ctx", {}).get("error", msg))  # our own sentence, without pydantic's "Value error, " prefix
        lines.append(f"  - {loc}: {msg}")
    return f"Invalid config {source}:\n" + "\n".join(lines)


def parse_config(data: object, source: str = "(inline)") -> RunConfig:
    """A checked config of the subclass for ``data``'s assessment (default counterfactual)."""
    if not isinstance(data, dict):
        raise ConfigError(f"Invalid config {source}: expected a mapping at the top level, got {type(data).__name__}.")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_pydantic(err, source, data.get("assessment", "counterfactual"))) from None


def load_yaml(text: str, what: str) -> Any:  # noqa: ANN401 - whatever the YAML holds
    """``text`` parsed as YAML; a syntax error or nesting too deep to read is a ConfigError naming ``what``."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"{what} is not valid YAML: {err}") from None
    except RecursionError:
        raise ConfigError(f"{what} nests lists or mappings too deeply to read (hundreds of levels); a config "
                          "needs a few.") from None


def load_config(path: str | Path, overrides: dict | None = None) -> RunConfig:
    """Read a YAML config; ``overrides`` are dotted keys (``{"llm.count": 2}``) applied on top."""
    from equilens.tasks.inputs.files import file_problem
    from equilens.tasks.shipped import shipped_path

    p = shipped_path(path)  # "configs/demo.yaml" from any directory: the shipped one, unless yours is there
    if problem := file_problem(p):
        raise ConfigError(f"Config file {p} {problem}; give a YAML file such as configs/demo.yaml.")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"Config file {p} is not UTF-8 text ({err.reason} at byte {err.start}).") from None
    data = load_yaml(text, f"Config file {p}")
    data = data or {}
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ConfigError(f"Override {dotted}: {key} is not a section.")
        node[leaf] = value
    return parse_config(data, str(p))
