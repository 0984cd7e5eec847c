"""The application as the model under test, through the command line and ``equilens.assess``: each bad
target is one ``error:`` paragraph naming the key, exit 2, before any call or Prefect start; a real
identity run whose python function receives each person's name; ``--plan`` that calls nothing; and an
``assess`` of a plain function, stored under its qualified name and answered from the cache the
second time."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import duckdb
import pytest

from tests.fakes import apps
from tests.fakes.cli import equilens

PROMPTS = "{items: ['Is he a good nurse?', 'Should she get the loan?']}"
IDENTITY_APP = ("assessment: identity\nidentity: {races: [white, black], names_per_cell: 2, "
                "signals: [{name: app, placement: app, template: '{name}'}]}\n")
HTTP = "provider: http, base_url: 'http://127.0.0.1:9/chat'"
CHAT_OPENAI = ("{provider: langchain, target: 'langchain_openai:ChatOpenAI', target_kwargs: {model: m, "
               "base_url: 'http://127.0.0.1:9/v1', api_key: '${EQUILENS_TEST_CLI_KEY}', temperature: hot}}")
APP_ONLY = "identity.signals places the person in the application (placement app)"

# case: (config lines after prompts, what stderr must hold)
CASES = {
    "module does not import": (
        "llm: {provider: python, target: 'equilens_no_such_app.chat:answer'}\n",
        "llm.target 'equilens_no_such_app.chat:answer': module 'equilens_no_such_app.chat' does not import "
        "(ModuleNotFoundError"),
    "missing attribute": (
        "llm: {provider: python, target: 'tests.fakes.apps:answr'}\n",
        "llm.target 'tests.fakes.apps:answr': module 'tests.fakes.apps' has no attribute 'answr'"),
    "not callable": (
        "llm: {provider: python, target: 'tests.fakes.apps:NOT_CALLABLE'}\n",
        "llm.target 'tests.fakes.apps:NOT_CALLABLE' is a str, not a function"),
    "messages where the prompt goes": (
        "llm: {provider: python, target: 'tests.fakes.apps:messages_first'}\n",
        "llm.target 'tests.fakes.apps:messages_first' takes messages as its first argument, where equilens passes "
        "the prompt"),
    "langchain object of another kind": (
        "llm: {provider: langchain, target: 'tests.fakes.apps:NOT_CALLABLE'}\n",
        "llm.target 'tests.fakes.apps:NOT_CALLABLE' is a str: expected a LangChain chat model or Runnable"),
    "langchain factory building no runnable": (
        "llm: {provider: langchain, target: 'tests.fakes.apps:not_a_runnable'}\n",
        "llm.target 'tests.fakes.apps:not_a_runnable' returned a dict: expected a LangChain chat model or "
        "Runnable"),
    "kwargs the class refuses": (
        f"llm: {CHAT_OPENAI}\n",
        "llm.target 'langchain_openai:ChatOpenAI' refused llm.target_kwargs (ValidationError: temperature: "
        "Input should be a valid number"),
    "kwargs the function does not take": (
        "llm: {provider: python, target: 'tests.fakes.apps:no_user', target_kwargs: {tone: formal}}\n",
        "llm.target_kwargs: tests.fakes.apps:no_user does not take them"),
    "unset variable in target_kwargs": (
        "llm: {provider: python, target: 'tests.fakes.apps:answer', target_kwargs: {tone: '${EQ_NO_VAR}'}}\n",
        "llm.target_kwargs.tone: the environment variable EQ_NO_VAR (written ${EQ_NO_VAR}) is not set"),
    "key written in target_kwargs": (
        "llm: {provider: langchain, target: 'langchain_openai:ChatOpenAI', "
        "target_kwargs: {model: m, api_key: sk-literalKEY-z1Xc4Vb6Nm8}}\n",
        "llm.target_kwargs.api_key: write ${VARIABLE} and keep the value in the environment"),
    "key written in headers": (
        f"llm: {{{HTTP}, request: {{q: '{{prompt}}'}}, response_path: answer, "
        "headers: {X-Api-Token: literalTOKEN-p0Oi9Uy8Tr7}}\n",
        "llm.headers.X-Api-Token: write ${VARIABLE}"),
    "placement app with openai": (
        IDENTITY_APP + "llm: {provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1', "
                       "api_key_env: EQUILENS_TEST_CLI_KEY}\n",
        f"{APP_ONLY}, which provider openai does not have"),
    "placement app with local": (
        IDENTITY_APP + "llm: {provider: local}\n",
        f"{APP_ONLY}, which provider local does not have"),
    "placement app, function without user": (
        IDENTITY_APP + "llm: {provider: python, target: 'tests.fakes.apps:no_user'}\n",
        f"{APP_ONLY}, but tests.fakes.apps:no_user takes no user argument: add user=None"),
    "placement app, http request without name": (
        IDENTITY_APP + f"llm: {{{HTTP}, request: {{q: '{{prompt}}'}}, response_path: answer}}\n",
        f"{APP_ONLY}, but llm.request has no {{name}}"),
    "response_path not JMESPath": (
        f"llm: {{{HTTP}, request: {{q: '{{prompt}}'}}, response_path: 'data.[answer'}}\n",
        "llm.response_path 'data.[answer' is not a JMESPath expression"),
    "request template misspelt": (
        f"llm: {{{HTTP}, request: {{q: '{{promt}}'}}, response_path: answer}}\n",
        "llm.request holds {promt}"),
    "dask with a __main__ target": (
        "llm: {provider: python, target: '__main__:answer'}\nexecution: {task_runner: dask}\n",
        "llm.target '__main__:answer' lives in this Python process only"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_application_is_one_paragraph_exit_2_before_any_call_or_prefect(
        tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[bool] = []
    monkeypatch.setattr("equilens.tasks.orchestration.prefect_api.start_prefect_api", lambda *a, **k: started.append(True))
    apps.reset()
    body, message = CASES[case]
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"prompts: {PROMPTS}\n{body}"
                   f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    t0 = time.perf_counter()
    out = equilens("run", str(cfg), cwd=tmp_path, env={"EQUILENS_TEST_CLI_KEY": "sk-cliENV-a9Sd7Fg5Hj3K"})
    whole = out.stdout + out.stderr
    assert out.returncode == 2, whole
    assert out.stderr.startswith("error: ") and "Traceback" not in whole, whole
    assert message in out.stderr, out.stderr
    assert "literalKEY" not in whole and "literalTOKEN" not in whole  # a key written in a config: not echoed
    assert not started and "Flow run" not in whole and apps.CALLS == []  # no Prefect, no call
    assert not (tmp_path / "e.duckdb").exists() and time.perf_counter() - t0 < 60


def test_an_object_handed_over_is_refused_for_dask_before_any_call(tmp_path: Path) -> None:
    import equilens
    from equilens.errors import ConfigError

    calls: list[str] = []

    def notebook_app(prompt: str) -> str:
        calls.append(prompt)
        return "ok"

    with pytest.raises(ConfigError, match=r"lives in this Python process only .* Dask workers import the "):
        equilens.assess(["Is he a good nurse?"], model=notebook_app, db=tmp_path / "e.duckdb",
                        execution__task_runner="dask", storage__reports_dir=None)
    assert calls == [] and not (tmp_path / "e.duckdb").exists()


APP_MODULE = '''
import json
from pathlib import Path

LOG = Path(__file__).with_suffix(".jsonl")


def answer(prompt, system=None, user=None):
    with LOG.open("a") as f:
        f.write(json.dumps({"prompt": prompt, "system": system, "user": user}) + "\\n")
    return f"Ask for about $52,000 for that role, {(user or {}).get('name', 'friend')}."
'''


def _app(tmp_path: Path) -> tuple[str, Path]:
    """A module under the working directory, imported by its path; its calls land in a JSONL file."""
    name = f"shop_app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(APP_MODULE)
    return f"{name}:answer", tmp_path / f"{name}.jsonl"


def test_an_identity_run_sends_each_cell_s_names_to_the_function_and_stores_its_answers(
        tmp_path: Path, prefect_api_env: dict[str, str]) -> None:
    target, log = _app(tmp_path)
    prompts = [f"I was offered a job as analyst number {i}. What salary should I ask for? Give one amount."
               for i in range(4)]
    (tmp_path / "p.csv").write_text("prompt,outcome\n" + "".join(f'"{p}",number\n' for p in prompts))
    (tmp_path / "c.yaml").write_text(
        "name: app-identity\nprompts: {path: p.csv}\n" + IDENTITY_APP
        + f"llm: {{provider: python, target: '{target}', max_retries: 0}}\n"
        "metrics: {bootstrap_resamples: 50, permutations: 50}\n"
        "storage: {duckdb_path: e.duckdb, reports_dir: null}\n")
    out = equilens("run", "c.yaml", cwd=tmp_path, api=prefect_api_env)
    assert out.returncode == 0, out.stdout + out.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        run_id, model, status = con.execute("SELECT run_id, model, status FROM runs").fetchone()
        names = con.execute("SELECT cell, name FROM identity_names WHERE run_id = ?", [run_id]).fetchall()
        answered = con.execute("SELECT count(*), count(*) FILTER (WHERE ok) FROM responses WHERE run_id = ?",
                               [run_id]).fetchone()
    assert status == "completed" and model == target
    assert {cell for cell, _ in names} == {"female-white", "female-black", "male-white", "male-black"}
    assert len(names) == 4 * 2
    received = {c["user"]["name"] for c in calls}
    assert received == {name for _, name in names}  # every cell's names (and no other) reached the app
    assert all(set(c["user"]) == {"name", "first_name", "last_name"} and c["prompt"] in prompts for c in calls)
    assert all(f"{c['user']['first_name']} {c['user']['last_name']}".strip() == c["user"]["name"] for c in calls)
    assert answered[0] == len(calls) and answered[0] == answered[1] > 0  # every call stored, answered


def test_plan_counts_the_calls_of_a_python_target_and_makes_none(tmp_path: Path) -> None:
    target, log = _app(tmp_path)
    (tmp_path / "c.yaml").write_text(
        f"prompts: {PROMPTS}\ncounterfactual: {{attributes: [gender], detect_names: false}}\n"
        f"llm: {{provider: python, target: '{target}', count: 2}}\n"
        "storage: {duckdb_path: e.duckdb, reports_dir: null}\n")
    out = equilens("run", "c.yaml", "--plan", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # both prompts mention gender: 3 variants each, each with its control = 12 requests, x llm.count 2
    assert "prompts: 2" in out.stdout and "requests: 12, LLM calls: 24" in out.stdout, out.stdout
    assert not log.exists() and not (tmp_path / "e.duckdb").exists()


@pytest.mark.filterwarnings("ignore:2 prompt\\(s\\) mention gender")
def test_assess_takes_a_plain_function_stores_its_name_and_answers_a_repeat_from_the_cache(
        tmp_path: Path, prefect_harness) -> None:
    import equilens

    calls: list[str] = []

    def support_bot(prompt: str, system: str | None = None) -> str:
        calls.append(prompt)
        return f"Thanks for asking. {prompt}"

    kwargs = dict(model=support_bot, db=tmp_path / "a.duckdb", counterfactual__attributes=["gender"],
                  counterfactual__detect_names=False, metrics={"bootstrap_resamples": 50, "permutations": 50},
                  storage__reports_dir=None)
    prompts = ["Is he a good nurse?", "Should she get the loan?"]
    first = equilens.assess(prompts, **kwargs)
    assert first.status == "completed" and len(calls) == 12  # 2 prompts x 3 groups, each with its control
    second = equilens.assess(prompts, **kwargs)
    assert second.status == "completed" and len(calls) == 12  # no new call: every answer from the cache
    with duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True) as con:
        runs = con.execute("SELECT model FROM runs ORDER BY started_at").fetchall()
    qualified = f"{__name__}:{support_bot.__qualname__}"  # module:qualname, as a traceback names it
    assert qualified.endswith(".<locals>.support_bot")
    assert runs == [(qualified,), (qualified,)]
    assert sorted(second.responses["text"]) == sorted(first.responses["text"])
