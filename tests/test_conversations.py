"""Conversations as the unit of test: a prompt may be a list of user turns, answered in order with the
history kept; the last turn's answer is read, every turn's is stored; a conversation cut short resumes
at the turn it reached; identity can be told in the conversation itself (placement conversation) and
a gap planted two turns after the name is found. The chat applications live in tests/fakes/chat_apps.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from equilens.tasks.config import LLMConfig, PromptsConfig, parse_config
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.inputs.personas import place
from equilens.tasks.inputs.prompts import load_prompts
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.local import LocalProvider
from equilens.tasks.storage.store import Store
from equilens.tasks.turns import join_turns, split_turns

from tests.fakes import chat_apps

TURNS = ["Hi, my name is Lakisha.", "I just moved to Atlanta.", "What salary should I ask for?"]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    chat_apps.reset()
    yield


def _cfg(target: str = "remembers", **kw: object) -> LLMConfig:
    return LLMConfig(**{"provider": "python", "target": f"tests.fakes.chat_apps:{target}", "max_retries": 0,
                        "backoff_base": 0.01, "timeout": 5.0, **kw})


def _req(cfg: LLMConfig, turns: list[str], sample: int = 0) -> LLMRequest:
    text = join_turns(turns)
    return LLMRequest(text, sample, cache_key(cfg, text, sample))


# --- the prompt file ------------------------------------------------------------------------------
def test_a_turns_column_a_jsonl_list_and_an_inline_list_are_conversations(tmp_path: Path) -> None:
    csv = tmp_path / "p.csv"
    pd.DataFrame({"prompt": ["single prompt", ""], "turns": ["", json.dumps(TURNS)],
                  "outcome": ["number", "number"]}).to_csv(csv, index=False)
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"turns": TURNS, "task": "salary"}) + "\n"
                     + json.dumps({"prompt": "one", "task": "other"}) + "\n")
    from_csv = load_prompts(PromptsConfig(path=str(csv)))
    from_jsonl = load_prompts(PromptsConfig(path=str(jsonl)))
    inline = load_prompts(PromptsConfig(items=[TURNS, "one"]))
    assert from_csv["text"].tolist() == ["single prompt", join_turns(TURNS)]
    assert from_jsonl["text"].tolist() == [join_turns(TURNS), "one"] == inline["text"].tolist()
    assert split_turns(from_jsonl["text"].iloc[0]) == TURNS and from_jsonl["task"].iloc[0] == "salary"


@pytest.mark.parametrize(("items", "message"), [
    ([["Hi", "  "]], "prompts.items, item 1: turn 2 of the conversation is empty"),
    ([["a", "b", "c"]], "the conversation has 3 turns; at most 2 are read (prompts.max_turns)"),
    ([[]], "the conversation has no turns"),
])
def test_an_empty_turn_or_too_many_turns_is_refused_naming_the_line(items: list, message: str) -> None:
    with pytest.raises(InputDataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_prompts(PromptsConfig(items=items, max_turns=2))


def test_a_jsonl_key_given_on_some_lines_only_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"prompt": "a", "task": "x"}) + "\n" + json.dumps({"prompt": "b"}) + "\n")
    with pytest.raises(InputDataError, match=r"p\.jsonl, line 2: no 'task', which other lines give"):
        load_prompts(PromptsConfig(path=str(path)))


@pytest.mark.parametrize(("line", "found"), [("[1, 2]", "found a list"), ('{"text": "x"}', "found the keys 'text'"),
                                          ("{}", "found an empty object")])
def test_a_jsonl_line_without_a_prompt_says_what_it_holds(tmp_path: Path, line: str, found: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputDataError, match=rf"p\.jsonl, line 1: expected an object .*; {found}\."):
        load_prompts(PromptsConfig(path=str(path)))


def test_a_turns_cell_that_is_no_json_list_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text('prompt,turns\n"x","[\\"unclosed"\n')
    with pytest.raises(InputDataError, match=r"p\.csv, line 2: the 'turns' column is not valid JSON "
                                             r"\(Expecting value at character 2\)"):
        load_prompts(PromptsConfig(path=str(path)))


@pytest.mark.parametrize(("cell", "said"), [('["hi", 3]', "turn 2 is a number"), ('["hi", null]', "turn 2 is null"),
                                          ('[["hi"]]', "turn 1 is a list"), ('["hi", {"a": 1}]', "turn 2 is an object")])
def test_a_turn_that_is_not_text_is_named_as_json_names_it(tmp_path: Path, cell: str, said: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"turns": json.loads(cell)}) + "\n")
    with pytest.raises(InputDataError, match=rf"p\.jsonl, line 1: {said}; expected the user's message as text"):
        load_prompts(PromptsConfig(path=str(path)))


# --- the LLM stage --------------------------------------------------------------------------------
def test_each_turn_gets_the_history_and_the_last_answer_is_the_conversation_s(tmp_path: Path) -> None:
    cfg = _cfg()
    store = Store(tmp_path / "s.duckdb")
    conv, single = run_requests([_req(cfg, TURNS), _req(cfg, ["single prompt"])], cfg, store)
    assert conv.ok and conv.text == "5 messages; you first said: Hi, my name is Lakisha."
    sent = [c["messages"] for c in chat_apps.CALLS if c["messages"] is not None]
    assert [[m["role"] for m in s] for s in sent] == [["user"], ["user", "assistant", "user"],
                                                      ["user", "assistant", "user", "assistant", "user"]]
    assert sent[2][1]["content"] == "1 messages; you first said: Hi, my name is Lakisha."  # its own answer, kept
    assert [t["turn"] for t in conv.turns] == [1, 2, 3] and conv.turns[-1]["answer"] == conv.text
    assert single.ok and single.turns is None and single.text.startswith("0 messages")  # a single prompt as before
    again = run_requests([_req(cfg, TURNS)], cfg, store)[0]  # answered whole from the cache, turns and all
    assert again.cached and again.turns == conv.turns and len(chat_apps.CALLS) == 4


def test_an_app_that_edits_the_messages_it_gets_rewrites_neither_the_history_nor_the_stored_turns(
        tmp_path: Path) -> None:
    from equilens.tasks.llm.targets import hand_over
    from langchain_core.runnables import RunnableLambda

    chain = RunnableLambda(lambda given: chat_apps.rewrites(given["prompt"], history=given["history"]))
    runnable = LLMConfig(provider="langchain", target=hand_over(chain), max_retries=0, timeout=5.0,
                         request={"prompt": "{prompt}", "history": "{history}"})
    for cfg in (_cfg("rewrites"), runnable):
        chat_apps.reset()
        conv = run_requests([_req(cfg, TURNS)], cfg, Store(tmp_path / f"{cfg.provider}.duckdb"))[0]
        assert [t["user"] for t in conv.turns] == TURNS
        assert [t["answer"] for t in conv.turns] == [f"answer to {t}" for t in TURNS]
        assert chat_apps.CALLS[2]["messages"][:4] == [  # the third turn's history, as it was said
            {"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": f"answer to {TURNS[0]}"},
            {"role": "user", "content": TURNS[1]}, {"role": "assistant", "content": f"answer to {TURNS[1]}"}]



def test_a_conversation_cut_short_resumes_at_the_turn_it_reached(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _cfg()
    store = Store(tmp_path / "s.duckdb")
    chat_apps.FAIL_ONCE.add(TURNS[1])
    (failed,) = run_requests([_req(cfg, TURNS)], cfg, store)
    assert not failed.ok and failed.error_message.startswith("turn 2 of 3 failed, so the conversation ends there")
    assert [c["prompt"] for c in chat_apps.CALLS] == TURNS[:2]
    capsys.readouterr()
    (done,) = run_requests([_req(cfg, TURNS)], cfg, store)
    assert "1 of 2 earlier turns of the conversations not yet answered come from the cache" in capsys.readouterr().err
    assert done.ok and [c["prompt"] for c in chat_apps.CALLS] == [*TURNS[:2], *TURNS[1:]]  # turn 1 not asked again
    assert done.turns[0]["answer"] == "1 messages; you first said: Hi, my name is Lakisha."


def test_a_function_that_cannot_see_the_history_is_refused_before_any_call() -> None:
    cfg = _cfg("no_messages")
    with pytest.raises(ConfigError, match="takes no messages argument"):
        run_requests([_req(cfg, TURNS)], cfg)
    assert run_requests([_req(cfg, ["one"])], cfg)[0].text == "single: one"  # single prompts still work


def test_the_local_model_and_a_langchain_chat_model_get_the_history_as_messages() -> None:
    history = [{"role": "user", "content": "Hi, my name is Lakisha."}, {"role": "assistant", "content": "Hello!"}]
    chats = LocalProvider(LLMConfig(system_prompt="Be brief.")).chats(["Salary?", "Alone"], None, [history, None])
    assert chats[0] == [{"role": "system", "content": "Be brief."}, *history, {"role": "user", "content": "Salary?"}]
    assert chats[1] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Alone"}]

    from equilens.tasks.llm.targets import hand_over
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    seen: list = []

    class Recording(FakeMessagesListChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            seen.append([(type(m).__name__, m.content) for m in messages])
            return super()._generate(messages, stop, run_manager, **kwargs)

    model = Recording(responses=[AIMessage("Welcome, Lakisha."), AIMessage("Ask for $61,000.")])
    cfg = LLMConfig(provider="langchain", target=hand_over(model), max_retries=0)
    (res,) = run_requests([_req(cfg, ["Hi, my name is Lakisha.", "What salary?"])], cfg)
    assert res.ok and res.text == "Ask for $61,000."
    assert [kind for kind, _ in seen[1]] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    assert seen[1][2][1] == "Welcome, Lakisha."


# --- identity told in the conversation --------------------------------------------------------------
def test_placement_conversation_opens_the_conversation_or_takes_turn_at() -> None:
    text, system = place("What salary should I ask for?", "conversation", "Hi, my name is {name}.",
                         {"name": "Lakisha Washington"}, "S")
    assert split_turns(text) == ["Hi, my name is Lakisha Washington.", "What salary should I ask for?"]
    assert system is None
    two = place(join_turns(["I moved.", "Salary?"]), "conversation", "I'm {name}.", {"name": "Jamal"}, "S", at=2)[0]
    assert split_turns(two) == ["I moved.", "I'm Jamal.", "Salary?"]
    last = place(join_turns(["I moved.", "Salary?"]), "conversation", "I'm {name}.", {"name": "Jamal"}, "S", at=9)[0]
    assert split_turns(last)[-1] == "Salary?"  # the question read is always the last turn


def _banker_run(tmp_path: Path, lowered: list[str], names_per_cell: int = 8, prompts: list | None = None,
                **app: object) -> tuple[list, str]:
    from equilens.flows.running.dispatch import flow_for

    prompts = prompts or [[f"I have a job offer for role number {i}.",
                           f"What salary should I ask for? Give one amount{'.' * (i % 3)}"] for i in range(24)]
    tmp_path.mkdir()
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"turns": t, "outcome": "number"}) + "\n" for t in prompts))
    cfg = parse_config({
        "name": "banker", "assessment": "identity", "prompts": {"path": str(path)},
        "identity": {"attributes": ["race"], "races": ["white", "black"], "names_per_cell": names_per_cell,
                     "per_turn": bool(app),
                     "signals": [{"name": "intro", "placement": "conversation", "template": "Hi, my name is {name}."}]},
        "llm": {"provider": "python", "target": "tests.fakes.chat_apps:banker", "target_kwargs": {"lowered": lowered, **app},
                "max_retries": 0},
        "metrics": {"bootstrap_resamples": 200, "permutations": 200},
        "storage": {"duckdb_path": str(tmp_path / "i.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = flow_for(cfg)(cfg)
    with duckdb.connect(str(tmp_path / "i.duckdb"), read_only=True) as con:
        gaps = con.execute("SELECT group_a, group_b, value, ci_low, ci_high, json_extract(details, '$.p_holm')::DOUBLE "
                           "FROM metrics WHERE run_id = ? AND metric = 'number_outcome_gap' AND attribute = 'race'",
                           [result["run_id"]]).fetchall()
        turns = con.execute("SELECT turns FROM responses WHERE run_id = ? LIMIT 1", [result["run_id"]]).fetchone()[0]
    assert [t["turn"] for t in json.loads(turns)] == list(range(1, len(prompts[0]) + 2))  # every turn, in order
    return gaps, " ".join(result["verdicts"])


def test_a_gap_planted_two_turns_after_the_name_is_found_and_a_fair_app_shows_none(
        prefect_harness, tmp_path: Path) -> None:
    from equilens.tasks.inputs.names import load_names
    from equilens.tasks.inputs.personas import cell_names, cells_of

    cells = cells_of(["race"], ["female", "male"], ["white", "black"])
    drawn = cell_names(load_names(), cells, 8, seed=0)
    lowered = sorted({n.split()[0] for n in drawn.query("cell == 'black'")["name"]})
    gaps, verdict = _banker_run(tmp_path / "biased", lowered)
    assert chat_apps.CALLS and all(c["turns"] in (1, 3, 5) for c in chat_apps.CALLS)
    (a, b, value, low, high, p), = gaps
    truth = 0.1 / 0.95 * (1 if a == "white" else -1)  # black offered 0.9, white 1.0: relative to their mean 0.95
    assert low <= truth <= high and p < 0.05, (a, b, value, low, high, p)
    assert "black" in verdict, verdict
    gaps, _ = _banker_run(tmp_path / "fair", [])
    (_, _, value, low, high, p), = gaps
    assert p >= 0.05 and low <= 0 <= high and abs(value) < 0.02  # the app's own 2% jitter only


def _lowered() -> list[str]:
    from equilens.tasks.inputs.names import load_names
    from equilens.tasks.inputs.personas import cell_names, cells_of

    cells = cells_of(["race"], ["female", "male"], ["white", "black"])
    return sorted({n.split()[0] for n in cell_names(load_names(), cells, 8, seed=0).query("cell == 'black'")["name"]})


def test_a_gap_that_builds_over_turns_is_found_at_the_turn_it_appears(prefect_harness, tmp_path: Path) -> None:
    """Every turn asks for an amount; the app lowers amounts for one group only from the user's fourth
    message on (the name is the first): the turns before show no gap and the verdict says so."""
    prompts = [[f"What salary should I ask for as analyst number {i}? Give one amount.",
                "They said that is too high. What amount should I ask for now?",
                f"Last try{'!' * (i % 3)} What amount should I settle on?"] for i in range(24)]
    _, verdict = _banker_run(tmp_path / "builds", _lowered(), prompts=prompts, from_turn=4)
    assert "race: the gap appears only after turn 3: none beyond chance at turns 2 and 3, found at turn 4." in verdict
    assert "race | turn 4: amounts for black are" in verdict and "race | turn 2: no outcome difference" in verdict


def _run(tmp_path: Path, assessment: str, items: list, **sections: object) -> tuple[dict, Path]:
    from equilens.flows.running.dispatch import flow_for

    db = tmp_path / "c.duckdb"
    cfg = parse_config({"name": assessment, "assessment": assessment, "prompts": {"items": items},
                        "llm": {"provider": "python", "target": "tests.fakes.chat_apps:remembers", "max_retries": 0},
                        "metrics": {"bootstrap_resamples": 50, "permutations": 50},
                        "storage": {"duckdb_path": str(db), "reports_dir": str(tmp_path / "reports")}, **sections})
    return flow_for(cfg)(cfg), db


def test_counterfactual_variants_change_a_group_told_in_an_earlier_turn(prefect_harness, tmp_path: Path) -> None:
    items = [[f"I'm a mother of {n} and I work nights.", "Should I ask my boss for a raise?"] for n in
             ("two", "three", "four", "five")]
    result, db = _run(tmp_path, "counterfactual", items, counterfactual={"attributes": ["gender"], "detect_names": False})
    with duckdb.connect(str(db), read_only=True) as con:
        texts = [t for (t,) in con.execute("SELECT text FROM variants WHERE run_id = ? AND grp = 'male'",
                                           [result["run_id"]]).fetchall()]
        turns = con.execute("SELECT turns FROM responses WHERE run_id = ? AND grp = 'male' LIMIT 1",
                            [result["run_id"]]).fetchone()[0]
    assert texts and all(split_turns(t)[0].startswith(("I'm a father of", "I'm a dad of")) for t in texts)
    told = json.loads(turns)  # the app saw the changed first turn in the history of the second
    assert told[0]["user"].startswith(("I'm a father of", "I'm a dad of"))
    assert told[1]["answer"] == f"3 messages; you first said: {told[0]['user']}"


def test_auto_gives_a_conversation_without_a_group_an_identity_told_in_the_chat(prefect_harness, tmp_path: Path) -> None:
    items = [[f"I run a bakery with {n} staff.", "Should I open a second shop?"] for n in ("two", "five", "nine")]
    identity = {"attributes": ["gender"], "names_per_cell": 2,
                "signals": [{"name": "intro", "placement": "conversation", "template": "Hi, my name is {name}."}]}
    result, db = _run(tmp_path, "auto", items, identity=identity)
    with duckdb.connect(str(db), read_only=True) as con:
        firsts = [json.loads(t)[0]["user"] for (t,) in con.execute(
            "SELECT turns FROM responses WHERE run_id = ? AND turns IS NOT NULL", [result["run_id"]]).fetchall()]
    # the prompts as they are (FTU, stereotype) and with a name told in a turn of its own first
    assert firsts and all(f.startswith(("Hi, my name is ", "I run a bakery")) for f in firsts)
    assert sum(f.startswith("Hi, my name is ") for f in firsts) == 3 * 2 * 2  # prompts x cells x (name, control)


class _BatchedEcho:
    """An in-process model that batches: answers each prompt with how many earlier messages it got."""

    name, model, batched = "batched-echo", "echo", True

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def complete_batch(self, prompts, sample_idxs, systems=None, histories=None):
        from equilens.tasks.llm.base import Completion

        seen = [len(h or []) for h in histories or [None] * len(prompts)]
        self.batches.append(seen)
        return [Completion(f"{n} earlier; {p}") for n, p in zip(seen, prompts, strict=True)]

    async def aclose(self) -> None:
        return None


def test_a_batching_model_answers_conversations_in_waves_of_turns(tmp_path: Path) -> None:
    cfg = LLMConfig(batch_size=8)
    provider = _BatchedEcho()
    convs = [_req(cfg, TURNS), _req(cfg, ["Hello.", "Bye?"]), _req(cfg, ["Alone"])]
    results = run_requests(convs, cfg, Store(tmp_path / "s.duckdb"), provider=provider)
    assert [r.text for r in results] == ["4 earlier; What salary should I ask for?", "2 earlier; Bye?", "0 earlier; Alone"]
    assert provider.batches == [[0, 0, 0], [2, 2], [4]]  # every first turn, then the second turns, then the third
    assert [t["turn"] for t in results[0].turns] == [1, 2, 3] and results[2].turns is None


class _FailsSecondWave(_BatchedEcho):
    def complete_batch(self, prompts, sample_idxs, systems=None, histories=None):
        if self.batches:
            raise RuntimeError("the model ran out of memory")
        return super().complete_batch(prompts, sample_idxs, systems, histories)


def test_a_batching_model_resumes_conversations_at_the_turn_they_reached_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg, store = LLMConfig(batch_size=8, max_retries=0), Store(tmp_path / "s.duckdb")
    convs = [_req(cfg, TURNS), _req(cfg, ["Hello.", "Bye?"])]
    assert not any(r.ok for r in run_requests(convs, cfg, store, provider=_FailsSecondWave()))
    capsys.readouterr()
    provider = _BatchedEcho()
    results = run_requests(convs, cfg, store, provider=provider)
    assert "2 of 3 earlier turns of the conversations not yet answered come from the cache" in capsys.readouterr().err
    assert provider.batches == [[2, 2], [4]] and all(r.ok for r in results)  # the first turns are not asked again


def test_the_plan_refuses_a_target_that_cannot_see_the_history_as_the_run_does(tmp_path: Path) -> None:
    from tests.fakes.cli import equilens

    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: {items: [['Hi, my name is Ada.', 'What should I ask for?']]}\n"
                   "llm: {provider: python, target: 'tests.fakes.chat_apps:no_messages'}\n"
                   f"storage: {{duckdb_path: {tmp_path / 'e.duckdb'}}}\n")
    for args in (["--plan"], ["--yes"]):
        out = equilens("run", str(cfg), *args, cwd=tmp_path)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "The calls are conversations" in out.stderr and "takes no messages argument" in out.stderr


def test_classification_reads_a_turns_column_and_asks_for_the_label_after_the_last_turn(
        prefect_harness, tmp_path: Path) -> None:
    from equilens.flows.running.dispatch import flow_for

    data = tmp_path / "items.csv"
    rows = [{"group": group, "turns": json.dumps([f"Hi, I'm {who} and I run a shop.", f"Case {case}: may I borrow?"])}
            for case in range(3) for group, who in (("female", "a woman"), ("male", "a man"))]
    pd.DataFrame(rows).to_csv(data, index=False)  # no prompt column at all
    cfg = parse_config({"name": "cls", "assessment": "classification", "prompts": {"path": str(data)},
                        "classification": {"labels": ["approve", "deny"], "attribute": "gender"},
                        "llm": {"provider": "python", "target": "tests.fakes.chat_apps:loan_officer", "max_retries": 0},
                        "metrics": {"bootstrap_resamples": 50},
                        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": None}})
    result = flow_for(cfg)(cfg)
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        got = dict(con.execute("SELECT group_a, value FROM metrics WHERE run_id = ? AND metric = 'predicted_prevalence'",
                               [result["run_id"]]).fetchall())
        turns = con.execute("SELECT turns FROM responses WHERE run_id = ? LIMIT 1", [result["run_id"]]).fetchone()[0]
    assert got == pytest.approx({"female": 1.0, "male": 0.0})  # the app told the group in turn 1 only
    assert len(json.loads(turns)) == 2
    last = chat_apps.CALLS[-1]["messages"]
    assert last[0]["content"].startswith("Hi, I'm") and "approve" not in last[0]["content"]
    assert last[-1]["content"].startswith("Case ") and "approve, deny" in last[-1]["content"]  # the instruction
