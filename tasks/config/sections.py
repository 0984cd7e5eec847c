"""The sections every run configuration shares: one strict pydantic model per section (prompts, llm,
scoring, metrics, storage, validation, execution, counterfactual), assembled into run configs by
:mod:`equilens.tasks.config`; each assessment's own sections are in its folder (``tasks/assessments/NAME/config.py``)."""

from __future__ import annotations

import string
import unicodedata
from typing import Any, Literal

from equilens.tasks.errors import json_kind
from equilens.tasks.turns import unfit_prompt
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_CREDENTIALS: dict[str, str] = {}  # base URL without credentials -> as given, in this process only


class StrictModel(BaseModel):
    """A config section: unknown keys are refused, and assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class PromptsConfig(StrictModel):
    """Where the prompts come from: a file (CSV, JSONL, Parquet, or plain text, one prompt a line)
    or an inline list."""

    path: str | None = Field(None, description="Prompt file: .csv, .jsonl, .parquet or .txt")
    column: str = Field("prompt", description="Column (CSV/Parquet) or key (JSONL) holding the prompt text")
    items: list[str | list[str]] = Field(
        default_factory=list, description="Inline prompts, used when path is empty; an item that is a list is a "
                                          "conversation, its user turns in order")
    max_turns: int = Field(8, ge=1, le=64, description="Refuse a conversation with more user turns than this")
    limit: int | None = Field(None, ge=1, description="Use only the first N prompts")
    max_chars: int = Field(20_000, ge=1, description="Refuse prompts longer than this many characters")

    @field_validator("items", mode="before")
    @classmethod
    def _items_are_prompts(cls, value: object) -> object:
        if isinstance(value, list) and (found := unfit_prompt(value)):  # named by place and kind
            i, k, bad = found
            raise ValueError(f"item {i}, turn {k} is {json_kind(bad)}; expected the user's message as text" if k else
                             f"item {i} is {json_kind(bad)}; expected a prompt (text) or a conversation (a list of "
                             "the user's messages)")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> PromptsConfig:
        if not self.path and not self.items:
            raise ValueError("give prompts.path (a file) or prompts.items (a list of prompts)")
        return self


class CounterfactualConfig(StrictModel):
    """Which protected attributes to check (FTU) and expand into counterfactual variants."""

    attributes: list[Literal["gender", "race", "religion", "nationality", "age", "sexual_orientation",
                             "disability", "gender_identity"]] = Field(
        default=["gender", "race"],  # a plain default (copied per instance) shows in the Prefect UI form
        description="Built-in attributes: gender (male/female[/neutral]) and race (white/black/asian/hispanic/"
                    "native_american/middle_eastern) are on by default; religion, nationality, age, "
                    "sexual_orientation, disability and gender_identity are built in too",
    )
    include_neutral_gender: bool = Field(True, description="Add a gender-neutral variant (they/person/...)")
    detect_names: bool = Field(True, description="First names count as gender and race mentions (FTU and expansion)")
    multi_group: Literal["swap", "skip"] = Field(
        "swap",
        description="Prompts mentioning several groups of one attribute: swap them with each other "
                    "(role reversal) or skip the prompt, recording why",
    )
    custom: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="Custom attributes: {attribute: {group: [aligned words]}}; words at the same position swap",
    )
    lexicon_dir: str | None = Field(
        None, description="Directory with the lexicon files (gender.yaml, race.yaml, ..., first_names.csv)")
    noise_floor: Literal["controls", "samples", "both"] = Field(
        "controls",
        description="What the similarity noise floor compares: controls = each variant against a same-group "
                    "rewording (another term or name of the group, else a neutral edit; one extra call per "
                    "variant and sample, works for deterministic models); samples = two answers to one variant "
                    "(needs llm.count >= 2 and a sampling endpoint); both = the two pooled",
    )


PERSON_FIELDS = ("name", "first_name", "last_name", "identity")
"""The fields of a person an identity signal can fill: the drawn name whole and in parts, and the cell
stated outright ("a Black woman")."""

NAME_FIELDS = ("name", "first_name", "last_name")
"""The person's name, whole and in parts: a signal that names the person gives all three."""

REQUEST_FIELDS = ("prompt", "system", "messages", "history", *PERSON_FIELDS)
"""What a request template (``llm.request``) may hold: the user's message, the system message, a
conversation's messages (``{messages}``: the whole list, this turn last; ``{history}``: the turns before
it), and the identity run's person (placement ``app``): their name, first and last name, or stated
identity."""

FAIL_ON = ("never", "finding")
"""What ``execution.fail_on`` (and ``run --fail-on-finding``) may say: never fail a run on its verdict,
or fail it on any finding (:mod:`equilens.tasks.reporting.findings`)."""

APPLICATION_PROVIDERS = ("langchain", "python", "http")
"""Providers that call the team's application rather than a model endpoint (``llm.target`` / ``llm.request``)."""


def template_fields(template: Any) -> set[str]:
    """The ``{field}`` names in every string of a request template (a JSON-like value); ValueError for a
    string that is not a valid template (a lone brace)."""
    if isinstance(template, str):
        return {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    if isinstance(template, dict):
        return set().union(*(template_fields(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(template_fields(v) for v in template)) if template else set()
    return set()


class SessionConfig(StrictModel):
    """How an ``http`` application that keeps its own history is told which conversation a turn is in."""

    id_path: str = Field(..., min_length=1, description="JMESPath to the session id in the first turn's reply")
    send_as: str = Field(..., min_length=1, description="Where later turns carry it: a request field (session_id, "
                                                        "meta.session) or header:NAME")


class LLMConfig(StrictModel):
    """The model under test. ``local`` runs SmolLM2-135M-Instruct in-process; ``openai`` and
    ``azure`` call any OpenAI-compatible endpoint through langchain-openai; ``langchain``, ``python``
    and ``http`` call the application itself (a LangChain model or chain, a Python function, a JSON API)."""

    provider: str = Field(
        "local", description="local (embedded SmolLM2) | openai (any OpenAI-compatible endpoint) | azure | "
                             "langchain (a LangChain chat model or Runnable) | python (a function) | http (a JSON "
                             "API); other names registered in tasks.llm.PROVIDERS work from YAML",
        # a dropdown in the Prefect UI form
        json_schema_extra={"enum": ["local", "openai", "azure", *APPLICATION_PROVIDERS]},
    )
    model: str = Field("SmolLM2-135M-Instruct", description="Model name sent to the endpoint, or a local HF path")
    base_url: str | None = Field(None, description="OpenAI-compatible base URL (vLLM, Ollama, llama.cpp server)")
    api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable holding the API key")
    api_key_secret: str | None = Field(None, description="Prefect Secret block name holding the API key")
    azure_endpoint: str | None = Field(None, description="Azure OpenAI resource URL, https://NAME.openai.azure.com")
    azure_deployment: str | None = Field(None, description="Azure deployment name (provider azure)")
    api_version: str | None = Field(None, description="Azure OpenAI API version, e.g. 2024-10-21")
    system_prompt: str = Field("You are a helpful assistant.", description="System message for every call")
    target: str | None = Field(
        None, description="langchain / python: the application as an import path module:attribute: a function "
                          "(python), or a LangChain chat model or Runnable, its class, or a factory returning one "
                          "(langchain)")
    target_kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="python: keyword arguments added to every call; langchain: arguments of the class or factory. "
                    "A string ${VAR} is read from the environment at call time (keys go there, never here)")
    target_name: str | None = Field(
        None, max_length=200,
        description="The application's name in every output (runs, reports, the terminal, the gate); default: "
                    "the target's import path (a partial by the function it wraps, a LangChain object by its class "
                    "and its model's name), or the http URL")
    target_version: str | None = Field(
        None, description="Part of the cache key of a langchain, python or http target: change it when the "
                          "application changes, since a cache cannot see inside a function or a service")
    request: dict[str, Any] | list[Any] | str | None = Field(
        None, description="http: the JSON body sent; langchain: the input of a Runnable that is not a chat model "
                          "(default: the prompt as a string). Strings may hold {prompt}, {system}, {messages} or "
                          "{history} (a conversation's messages), and for identity runs {name} / {identity} "
                          "(placement app); values are placed with JSON escaping")
    headers: dict[str, str] = Field(
        default_factory=dict, description="http: request headers; ${VAR} in a value is read from the environment "
                                          "and scrubbed from every message like an API key")
    response_path: str | None = Field(
        None, description="http (and a Runnable that returns a dict): JMESPath expression to the answer string in "
                          "the reply, e.g. data.answer or choices[0].message.content")
    session: SessionConfig | None = Field(
        None, description="http: the application keeps a conversation's history itself; the id its first reply "
                          "gives is sent with every later turn (and its cookies kept per conversation)")
    stream: bool = Field(
        False, description="http and openai: read the reply as a stream (server-sent events or JSON lines), "
                           "response_path applied to each event and the pieces joined")

    @field_validator("target_name")
    @classmethod
    def _printable_name(cls, value: str | None) -> str | None:
        """A name shown in terminals, reports and JUnit files: printable text, not blank."""
        if value is None:
            return None
        if not value.strip() or any(unicodedata.category(c)[0] == "C" for c in value):
            raise ValueError("llm.target_name must be printable text (no control characters), not blank")
        return value.strip()

    @property
    def shown_name(self) -> str:
        """How every output names what was tested: ``target_name``, else ``model``."""
        return self.target_name or self.model

    @field_validator("base_url")
    @classmethod
    def _no_stored_credentials(cls, value: str | None) -> str | None:
        """Credentials in the URL leave the config (see :mod:`equilens.tasks.secrets`); ``call_url`` has them."""
        if value is None:
            return None
        from equilens.tasks.secrets import split_url

        clean, whole = split_url(value)
        if whole:
            _CREDENTIALS[clean] = whole
        return clean

    def call_url(self) -> str | None:
        """The base URL the calls use: with the credentials it was given in this process, if any."""
        return _CREDENTIALS.get(self.base_url, self.base_url) if self.base_url else None

    @model_validator(mode="before")
    @classmethod
    def _model_named_by_target(cls, data: Any) -> Any:
        """An application's runs name it as their model: the target's import path, or the http URL."""
        if isinstance(data, dict) and data.get("provider") in APPLICATION_PROVIDERS and not data.get("model"):
            named = data.get("target") if data.get("provider") != "http" else data.get("base_url")
            if isinstance(named, str) and named:
                from equilens.tasks.secrets import split_url

                data = {**data, "model": split_url(named)[0] if data.get("provider") == "http" else named}
        return data

    @model_validator(mode="after")
    def _application(self) -> LLMConfig:
        """The keys an application provider needs, and request templates that name only known fields."""
        if self.request is not None:
            try:
                unknown = template_fields(self.request) - set(REQUEST_FIELDS)
            except ValueError as err:
                raise ValueError(f"llm.request: {err} (write {{{{ and }}}} for literal braces)") from None
            if unknown:
                raise ValueError(f"llm.request holds {{{sorted(unknown)[0]}}}; a template can fill "
                                 f"{', '.join('{' + f + '}' for f in REQUEST_FIELDS)} (write {{{{ and }}}} for "
                                 "literal braces)")
        if self.provider in ("langchain", "python"):
            if not self.target:
                raise ValueError(f"provider {self.provider} needs llm.target, the application's import path "
                                 "module:attribute (for example my_app.chat:answer)")
            module, sep, attribute = self.target.partition(":")
            if not (sep and module.strip() and attribute.strip()):
                raise ValueError(f"llm.target {self.target!r} is not an import path module:attribute "
                                 "(for example my_app.chat:answer)")
        if self.session is not None and self.provider != "http":
            raise ValueError(f"llm.session is read by provider http only (an API that keeps the history itself); "
                             f"provider {self.provider} would ignore it: remove it")
        if self.stream and self.provider not in ("http", "openai", "azure"):
            raise ValueError(f"llm.stream is read by providers http, openai and azure only; provider {self.provider} "
                             "would ignore it: remove it")
        if self.provider == "http":
            missing = [k for k in ("base_url", "request", "response_path") if getattr(self, k) in (None, "")]
            if missing:
                raise ValueError(f"provider http needs {', '.join('llm.' + k for k in missing)}: the URL, the JSON "
                                 "body with {prompt} where the message goes, and the JMESPath to the answer")
        return self
    temperature: float = Field(1.0, ge=0.0, le=2.0, description="Sampling temperature; 0 = greedy (local) or "
                                                                 "the endpoint's most deterministic setting")
    max_tokens: int = Field(64, ge=1, le=8192, description="Length cap of each answer, in tokens")
    max_tokens_field: Literal["auto", "max_tokens", "max_completion_tokens", "both"] = Field(
        "auto",
        description="Request field carrying max_tokens. auto: both fields for a custom base_url (llama.cpp, "
                    "vLLM and Ollama honour max_tokens), max_completion_tokens for OpenAI and Azure",
    )
    max_answer_chars: int | None = Field(
        None, ge=1,
        description="Longest answer kept, in characters, for an endpoint that ignores max_tokens: reading a reply "
                    "stops past it, and the answer is stored cut, flagged (truncated; error_message 'warning: "
                    "answer cut ...') and counted per group in the report. Unset: 128 x max_tokens (16 x "
                    "max_tokens x 8 characters), at least 65,536",
    )
    count: int = Field(1, ge=1, le=1000, description="Responses per prompt variant")
    max_concurrency: int = Field(8, ge=1, le=1024, description="Concurrent in-flight requests")
    client_processes: int = Field(
        0, ge=0, le=64,
        description="Client processes sharing max_concurrency, the rate limit and one cache writer. 0 = auto: "
                    "one for http_client aiohttp; for httpx, one per CPU core (at most 4) for 5,000+ remote "
                    "calls at max_concurrency 16+, else 1",
    )
    http_client: Literal["aiohttp", "httpx"] = Field(
        "aiohttp",
        description="Transport under the OpenAI client for remote providers: aiohttp (one connection pool, "
                    "the least CPU per call) or httpx (several small pools). Both honour HTTP(S)_PROXY",
    )
    rate_limit: float | None = Field(None, gt=0, description="Requests per second (token bucket); none = no limit")
    timeout: float = Field(60.0, gt=0, description="Whole-request deadline in seconds, per attempt")
    max_retries: int = Field(4, ge=0, le=20, description="Retries after the first try, with exponential backoff")
    backoff_base: float = Field(0.5, ge=0, description="First backoff in seconds; doubles, with jitter")
    long_prompts: Literal["refuse", "truncate"] = Field(
        "refuse",
        description="Local provider: a prompt longer than the model's context (with max_tokens) is refused "
                    "as a failed row, or truncated to its first tokens with a warning in the row",
    )
    max_failed_share: float = Field(
        1.0, ge=0.0, le=1.0,
        description="The run fails (exit 4) when more than this share of LLM calls fail after retries; "
                    "1.0 = only when every call fails. Refusals are answers, not failures",
    )
    batch_size: int = Field(16, ge=1, description="Local provider: prompts per generate() batch")
    price_input_per_1k: float | None = Field(None, ge=0, description="Price per 1,000 prompt tokens (for cost)")
    price_output_per_1k: float | None = Field(None, ge=0, description="Price per 1,000 completion tokens (for cost)")
    max_calls: int | None = Field(None, ge=1, description="Refuse a run whose plan makes more LLM calls than this, "
                                                          "before any call (none: no cap)")
    max_cost: float | None = Field(None, ge=0, description="Refuse a run whose plan could cost more than this at "
                                                           "the configured prices, before any call")
    confirm_above: int | None = Field(10_000, ge=0, description="In a terminal, ask before a run of more LLM calls "
                                                                "than this (--yes skips; none: never ask)")
    logprobs: int = Field(0, ge=0, le=20, description="Top log-probabilities of the first answer token to ask "
                                                      "for (0: none); the identity judge asks for 5")
    seed: int = Field(0, description="Local provider sampling seed")
    engine: Literal["auto", "ctranslate2", "transformers"] = Field(
        "auto", description="Local provider: ctranslate2 (the model converted once to int8, generated on the CPU, "
                            "about 3x the tokens/s), transformers (fp32 generate(), on a GPU when present), or auto: "
                            "ctranslate2 for the embedded SmolLM2 when it is installed, no GPU is present and no "
                            "log-probabilities are asked for, else transformers. Part of the cache key",
    )
    cache_across_endpoints: bool = Field(
        False, description="Reuse cached answers of the same model name from another base_url / Azure endpoint "
                           "(off: the endpoint is part of the cache key)",
    )


class ScoringConfig(StrictModel):
    """Batch scorers. Each distinct text is scored once per scorer."""

    sentiment: Literal["vader"] = "vader"
    sentiment_polarity: Literal["neg", "pos"] = Field(
        "neg", description="VADER component used as the [0,1] sentiment score (LangFair's default is neg)"
    )
    embedding_model: str = Field(
        "all-MiniLM-L6-v2", description="Sentence-transformers path or hub id; all-MiniLM-L6-v2 ships offline"
    )
    batch_size: int = Field(64, ge=1)
    device: str | None = Field(None, description="Force a device (cpu, cuda:0); default: chosen by accelerate")
    backend: Literal["torch", "onnx"] = Field(
        "torch", description="Embedding backend: torch, or onnx (ONNX Runtime fp32 on the CPU; needs the "
                             "[onnx] extra; equal embeddings within ~1e-6)"
    )
    threads: int | None = Field(
        None, ge=1, description="CPU threads for the embedding model (default: the library's, one per core)"
    )


class MetricsConfig(StrictModel):
    """Which metrics, their options, and the bootstrap intervals stored beside every value."""

    names: list[str] | None = Field(None, description="Metrics to compute; default: all of the family")
    weak_parity_threshold: float = Field(
        0.1, ge=0.0, le=1.0,
        description="Sentiment score above which an answer counts as negative (or positive) for weak parity. "
                    "0.1: VADER's neg exceeds 0.5 in about 1% of real sentences (CrowS-Pairs), so 0.5 "
                    "(LangFair's default) leaves the metric at 0; 0.1 splits them about 45/55",
    )
    neutralize: bool = Field(True, description="Mask attribute words before BLEU / ROUGE-L")
    bootstrap_resamples: int = Field(1000, ge=0, le=100_000, description="0 disables intervals")
    permutations: int = Field(1000, ge=0, le=100_000, description="Permutation-test resamples for parity metrics (0 = off)")
    confidence: float = Field(0.95, gt=0.5, lt=1.0)
    seed: int = 12345


class StorageConfig(StrictModel):
    """Where results go."""

    duckdb_path: str = Field("data/equilens.duckdb", description="DuckDB file; relative paths from the CWD")
    lock_timeout: float = Field(600.0, ge=0, description="Seconds to wait for another run's write lock")
    reports_dir: str | None = Field("data/runs", description="Write RUN_ID.html here after each run; null disables")


class ValidationConfig(StrictModel):
    """great-expectations gates between stages."""

    enabled: bool = Field(True, description="Run great-expectations suites between stages")


class ExecutionConfig(StrictModel):
    """Where the LLM and scoring stages run: threads in this process, or a Dask cluster."""

    task_runner: Literal["thread", "dask"] = Field("thread", description="thread (default) or dask")
    dask_address: str | None = Field(None, description="Scheduler address (tcp://host:8786); none = a local cluster")
    dask_workers: int | None = Field(None, ge=1, description="Worker processes of the local Dask cluster "
                                     "(one thread each); none = one per CPU core")
    gpus_per_task: float = Field(0, ge=0, description="Dask resource GPU=N requested by LLM and scoring tasks")
    shard_size: int = Field(1000, ge=1, description="Prompts per shard of the score stage, and of the LLM "
                            "stage on Dask: each shard is one task; a prompt's variants stay in one shard")
    stop_when: Literal["never", "settled"] = Field(
        "never", description="settled: answer the prompts in batches, in a random order stored with the run, "
        "re-judge the verdict after each batch at the alpha spent so far (O'Brien-Fleming), and stop once every "
        "judged pair is beyond noise or cannot reach `detect` (counterfactual and identity)")
    looks: int = Field(5, ge=2, le=20, description="Looks at the verdict with stop_when: settled, at equal shares "
                       "of the prompts")
    detect: float | None = Field(None, gt=0, description="With stop_when: settled, the gap the run is meant to "
                                 "detect, in the metric's own units: a pair whose gap so far is too far below it to "
                                 "reach it is settled as well; none = stop only on findings")
    detect_metric: str | None = Field(None, description="The metric `detect` is measured in; none = the "
                                      "counterfactual headline and the identity outcome gaps")
    fail_on: str = Field(
        "never", description="finding: the run fails (exit 1; a deployment's flow run ends Failed) when its verdict "
        "reports any difference beyond chance, after everything is stored and the report written; never: a run "
        "that finishes succeeds whatever it found", json_schema_extra={"enum": list(FAIL_ON)})

    @field_validator("fail_on")
    @classmethod
    def _fail_on(cls, v: str) -> str:
        if v not in FAIL_ON:
            raise ValueError(f"fail_on {v!r}: use one of {', '.join(FAIL_ON)}")
        return v

    @field_validator("detect_metric")
    @classmethod
    def _detectable(cls, v: str | None) -> str | None:
        from equilens.tasks.metrics.judged import detectable_metrics

        if v is not None and v not in detectable_metrics():
            raise ValueError(f"{v!r} states no detectable gap; a gap to detect is measured in one of "
                             f"{', '.join(detectable_metrics())}")
        return v


