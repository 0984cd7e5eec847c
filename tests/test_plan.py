"""A plan before a run: `run --plan` counts prompts, requests and calls by hand-checkable rules,
llm.max_calls / llm.max_cost refuse before any call, a file of hundreds of thousands of prompts is
planned by streaming, and an interactive run past llm.confirm_above asks first."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.fakes.cli import ROOT, equilens
from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

PROMPTS = "['Is he a good nurse?', 'Should she get the loan?', 'What is two plus two?']"


def _config(tmp_path: Path, base_url: str, prompts: str = f"{{items: {PROMPTS}}}", **llm: object) -> Path:
    extra = "".join(f", {k}: {v}" for k, v in llm.items())
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"prompts: {prompts}\ncounterfactual: {{attributes: [gender], detect_names: false}}\n"
                   f"llm: {{provider: openai, model: fake, base_url: '{base_url}', count: 2, max_tokens: 50{extra}}}\n"
                   f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    return cfg


def test_plan_counts_requests_and_calls_and_calls_nothing(openai_server, tmp_path: Path) -> None:  # noqa: F811
    cfg = _config(tmp_path, openai_server.base_url, price_input_per_1k=1.0, price_output_per_1k=2.0,
                  rate_limit=4)
    out = equilens("run", str(cfg), "--plan", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # two prompts mention gender: 3 variants each (male, female, neutral), each with its control = 12
    # requests; the third prompt mentions nothing. 12 x llm.count 2 = 24 calls
    assert "prompts: 3" in out.stdout and "requests: 12, LLM calls: 24" in out.stdout
    # completion: 24 x 50 = 1,200 tokens at most, 2.40 at 2.0 per 1k; at 4 calls a second: 6 s
    assert "at most 1,200 completion" in out.stdout and "at llm.rate_limit 4/s" in out.stdout
    assert openai_server.calls == 0 and not (tmp_path / "e.duckdb").exists()


def test_a_plan_of_prompts_that_name_no_group_is_zero_calls(openai_server, tmp_path: Path) -> None:  # noqa: F811
    cfg = _config(tmp_path, openai_server.base_url, prompts="{items: ['What is two plus two?']}")
    out = equilens("run", str(cfg), "--plan", cwd=tmp_path)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "prompts: 1" in out.stdout and "requests: 0, LLM calls: 0" in out.stdout, out.stdout


def test_caps_refuse_the_run_before_any_call(openai_server, tmp_path: Path) -> None:  # noqa: F811
    calls = equilens("run", str(_config(tmp_path, openai_server.base_url, max_calls=20)), cwd=tmp_path)
    assert calls.returncode == 2 and "Traceback" not in calls.stderr, calls.stderr
    assert "would make 24 LLM calls (3 prompts, 12 requests x llm.count 2), more than llm.max_calls 20" in calls.stderr
    cost = equilens("run", str(_config(tmp_path, openai_server.base_url, price_output_per_1k=10.0, max_cost=1)),
                    cwd=tmp_path)
    assert cost.returncode == 2 and "could cost up to 12.0" in cost.stderr, cost.stderr  # 1,200 tokens x 10 / 1k
    assert openai_server.calls == 0


def test_a_large_prompt_file_is_planned_by_streaming_and_refused_before_loading(openai_server,  # noqa: F811
                                                                                 tmp_path: Path) -> None:
    """A 25 MB file (300,000 prompts) is refused by the plan before it is loaded or expanded."""
    big = tmp_path / "big.csv"
    with big.open("w") as fh:
        fh.write("prompt\n")
        for i in range(300_000):
            fh.write(f'"Should {"he" if i % 2 else "she"} get loan number {i:07d}? Answer in one short sentence."\n')
    assert big.stat().st_size > 20_000_000  # past the size read whole
    cfg = _config(tmp_path, openai_server.base_url, prompts=f"{{path: '{big}'}}", max_calls=1_000_000)
    out = equilens("run", str(cfg), cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    # every prompt mentions gender: 6 requests each, 1,800,000 requests, 3,600,000 calls (a sample, scaled)
    assert "would make about 3,600,000 LLM calls (about 300,000 prompts, about 1,800,000 requests" in out.stderr
    assert openai_server.calls == 0


DECLINED = 5


def test_run_help_lists_the_exit_code_of_a_declined_run() -> None:
    from tests.fakes.cli import equilens

    out = equilens("run", "--help", columns=200)
    assert f"{DECLINED} declined at the question" in " ".join(out.stdout.split()), out.stdout


@pytest.mark.parametrize("answer", [b"n\n", b"\x04"], ids=["no", "end of input"])
def test_an_interactive_run_past_the_threshold_asks_first(openai_server, tmp_path: Path,  # noqa: F811
                                                          answer: bytes) -> None:
    """No, or end of input (Ctrl-D), at the question: nothing is called, exit 5 (the code `run --help`
    lists for it: 1 is a finding), no traceback."""
    cfg = _config(tmp_path, openai_server.base_url, confirm_above=10)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "equilens", "run", str(cfg)], cwd=tmp_path, stdin=follower,
                            stdout=follower, stderr=follower, env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(follower)
    seen = b""
    while b"Run it?" not in seen:
        chunk = os.read(leader, 4096)
        assert chunk, seen
        seen += chunk
    os.write(leader, answer)
    assert proc.wait(timeout=120) == DECLINED
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert b"LLM calls: 24" in seen and openai_server.calls == 0
    assert b"not run: nothing was called" in seen and b"Traceback" not in seen and b"Abort" not in seen, seen


def test_the_llm_stage_holds_any_run_to_the_caps(openai_server, tmp_path: Path) -> None:  # noqa: F811
    """A run from the Prefect UI, a schedule or the Python API never passes through the CLI's plan."""
    import pandas as pd
    import pytest
    from equilens.tasks.config import LLMConfig
    from equilens.tasks.llm.budget import BudgetExceeded
    from equilens.tasks.pipeline.prefect_tasks import call_llm_task

    variants = pd.DataFrame({"variant_id": ["a", "b"], "prompt_id": ["p", "p"], "attribute": "gender",
                             "grp": ["male", "female"], "text": ["Is he kind?", "Is she kind?"]})
    cfg = LLMConfig(provider="openai", model="fake", base_url=openai_server.base_url, count=3, max_calls=5)
    with pytest.raises(BudgetExceeded, match="would make 6 LLM calls, more than llm.max_calls 5"):
        call_llm_task.fn(variants, cfg, str(tmp_path / "e.duckdb"), 10.0)
    assert openai_server.calls == 0


def test_a_run_expands_its_prompts_once_for_the_plan_and_the_flow(openai_server, prefect_api_env,  # noqa: F811
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``equilens run`` plans (what the LLM stage will be asked), then runs the flow in the same process:
    the flow's expansion of the prompts is the plan's, not a second one."""
    from equilens.tasks.inputs import expansion

    expanded: list[int] = []
    real = expansion.expand_prompts
    monkeypatch.setattr(expansion, "expand_prompts", lambda *a, **k: (expanded.append(1), real(*a, **k))[1])
    prompts = f"{{items: ['Is he a good nurse for {tmp_path.name}?', 'Should she get the loan?']}}"  # never cached
    cfg = _config(tmp_path, openai_server.base_url, prompts=prompts)
    cfg.write_text(cfg.read_text() + "metrics: {bootstrap_resamples: 20, permutations: 20, "
                                     "names: [strict_sentiment_parity]}\nvalidation: {enabled: false}\n")
    out = equilens("run", str(cfg), cwd=tmp_path, api=prefect_api_env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "plan: 2 prompts" in out.stdout and openai_server.calls > 0
    assert len(expanded) == 1  # one attribute (gender), expanded once: by the plan, for the flow too


def test_what_the_plan_computed_is_handed_on_as_a_copy_and_only_for_the_same_input() -> None:
    from equilens.tasks.pipeline.memo import PLAN_SAMPLE, computed_once

    calls: list[int] = []

    @computed_once
    def expand(prompts: pd.DataFrame, times: int) -> pd.DataFrame:
        calls.append(1)
        return prompts.assign(text=prompts["text"] * times)

    prompts = pd.DataFrame({"prompt_id": ["a", "b"], "text": ["x", "y"]})
    first = expand(prompts, 2)
    first.loc[0, "text"] = "changed by its caller"
    again = expand(prompts.copy(), 2)
    assert calls == [1] and again["text"].tolist() == ["xx", "yy"]  # the same content: not computed again
    expand(prompts, 3)
    expand(prompts.assign(text=["x", "z"]), 3)
    assert len(calls) == 3  # other settings, other prompts: computed
    large = pd.DataFrame({"prompt_id": range(PLAN_SAMPLE + 1), "text": "x"})
    expand(large, 1), expand(large, 1)
    listed = pd.DataFrame({"prompt_id": ["a"], "text": ["x"], "tags": [["t"]]})  # a cell that cannot be hashed
    expand(listed, 1), expand(listed, 1)
    assert len(calls) == 7  # neither is kept


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_streamed_prompt_file_reads_conversations_as_the_loader_does(tmp_path: Path, suffix: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A file past the size read whole is streamed for the plan: its `turns` give conversations there
    too, in a file without a `prompt` column, and `prompts.max_turns` holds."""
    import json

    from equilens.tasks.config import PromptsConfig
    from equilens.tasks.errors import InputDataError
    from equilens.tasks.inputs import prompt_scan
    from equilens.tasks.turns import split_turns

    monkeypatch.setattr(prompt_scan, "WHOLE_BELOW", 0)  # stream every file
    turns = [["Hi, I'm Sam.", f"How much should I save, case {i}?"] for i in range(5)]
    path = tmp_path / f"p{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps({"turns": t}) + "\n" for t in turns))
    else:
        frame = pd.DataFrame({"turns": [json.dumps(t) for t in turns]})
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    scan = prompt_scan.scan_prompts(PromptsConfig(path=str(path)), size=3)
    assert scan.total == 5 and not scan.exact and len(scan.sample) == 3
    assert all(len(split_turns(text)) == 2 for text in scan.sample["text"]), scan.sample
    with pytest.raises(InputDataError, match=r"has 2 turns; at most 1 are read \(prompts.max_turns\)"):
        prompt_scan.scan_prompts(PromptsConfig(path=str(path), max_turns=1), size=3)


def test_an_empty_outcome_cell_is_named_with_its_article(tmp_path: Path) -> None:
    from equilens.tasks.config import PromptsConfig
    from equilens.tasks.errors import InputDataError
    from equilens.tasks.inputs.prompts import load_prompts

    path = tmp_path / "p.csv"
    path.write_text("prompt,outcome,task\nHow much?,number,pay\nShould I?,,pay\n")
    with pytest.raises(InputDataError, match=r"line 3: the 'outcome' column is empty. Give every prompt an outcome,"):
        load_prompts(PromptsConfig(path=str(path)))


def test_an_unknown_outcome_names_its_file_and_line_and_says_none_is_allowed(tmp_path: Path) -> None:
    from equilens.tasks.assessments.identity.stages import check_outcomes
    from equilens.tasks.config import PromptsConfig
    from equilens.tasks.errors import InputDataError
    from equilens.tasks.inputs.prompts import load_prompts

    path = tmp_path / "p.csv"
    path.write_text("prompt,outcome\nHow much?,number\nShould I?,amount\n")
    with pytest.raises(InputDataError, match=rf"{path}, line 3: unknown outcome 'amount'.*none, or empty, for a prompt"):
        check_outcomes(load_prompts(PromptsConfig(path=str(path))))
