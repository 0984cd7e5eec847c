"""The Python API through its public import name ``equilens``: config building, brought-response
metrics (values worked out by hand), and ``assess()`` end to end against the loopback server."""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb
import equilens
import pytest
from equilens.errors import ConfigError, InputDataError

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parent.parent
FAST = dict(bootstrap_resamples=50, permutations=50)


# --- packaging -----------------------------------------------------------------------------------
def test_the_import_name_is_the_repository_api_folder() -> None:
    assert Path(equilens.__file__).resolve() == REPO / "flows" / "api" / "__init__.py"


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = ("import sys, equilens; heavy = [m for m in ('prefect', 'torch', 'sentence_transformers', "
            "'great_expectations') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == "[]"


# --- build_config --------------------------------------------------------------------------------
def test_build_config_from_keywords(tmp_path: Path) -> None:
    cfg = equilens.build_config(["Write about a nurse named John."], "fake-model", provider="openai",
                                base_url="http://127.0.0.1:9/v1", db=tmp_path / "x.duckdb", llm__count=3,
                                metrics={"bootstrap_resamples": 7}, counterfactual__attributes=["gender"])
    assert cfg.prompts.items == ["Write about a nurse named John."] and cfg.prompts.path is None
    assert (cfg.llm.model, cfg.llm.provider, cfg.llm.count) == ("fake-model", "openai", 3)
    assert cfg.metrics.bootstrap_resamples == 7 and cfg.metrics.permutations == 1000  # merged, not replaced
    assert cfg.counterfactual.attributes == ["gender"]
    assert cfg.storage.duckdb_path == str(tmp_path / "x.duckdb")
    assert cfg.name == "notebook" and cfg.assessment == "counterfactual"


def test_build_config_on_top_of_a_yaml_file(tmp_path: Path) -> None:
    prompts = tmp_path / "p.csv"
    prompts.write_text("prompt\nDescribe a male nurse.\n")
    cfg = equilens.build_config(prompts, config=REPO / "configs" / "demo.yaml", llm__count=4)
    assert cfg.prompts.path == str(prompts) and cfg.prompts.items == []
    assert cfg.llm.count == 4
    assert cfg.name == equilens.build_config(config=REPO / "configs" / "demo.yaml").name  # the YAML's name kept


def test_a_config_keeps_its_own_assessment_unless_one_is_named() -> None:
    """``config=configs/identity.yaml`` (a path or a loaded config) runs identity, not the
    counterfactual default; a named assessment still wins, and without a config it is counterfactual."""
    identity = REPO / "configs" / "identity.yaml"
    assert equilens.build_config(config=identity).assessment == "identity"
    assert equilens.build_config(config=equilens.build_config(config=identity)).assessment == "identity"
    assert equilens.build_config(config=identity, assessment="counterfactual").assessment == "counterfactual"
    assert equilens.build_config(["Describe a male nurse."]).assessment == "counterfactual"


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"llm__cuont": 2}, ConfigError, "unknown key"),
    ({"llm__count": 0}, ConfigError, "llm.count"),
    ({"prompts": "Write about a nurse."}, InputDataError, "not a file"),
    ({"prompts": ["ok", 3]}, InputDataError, "item 2 is a number"),
    ({"prompts": []}, InputDataError, "empty"),
    ({"prompts": 5}, InputDataError, "prompts must be a file path or a list of strings, not int"),
    ({"prompts": ["ok", ["Hi.", 2]]}, InputDataError, "turn 2 of item 2 is a number (1 such item(s), counted from 1)"),
    ({"assessment": "nope"}, ConfigError, "assessment"),
])
def test_build_config_refuses_bad_input_with_typed_errors(kwargs: dict, error: type, words: str) -> None:
    kwargs = {"prompts": ["Describe a man."], **kwargs}
    with pytest.raises(error, match=re.escape(words)):
        equilens.build_config(**kwargs)


def test_a_prompt_given_as_a_list_of_turns_is_a_conversation() -> None:
    turns = ("Hi, my name is Lakisha.", "What salary should I ask for?")
    cfg = equilens.build_config(["Describe a man.", list(turns), turns])
    assert cfg.prompts.items == ["Describe a man.", list(turns), list(turns)]


# --- brought responses: counterfactual -------------------------------------------------------------
def test_counterfactual_identical_texts() -> None:
    texts = ["The doctor was kind and careful.", "Nurses work long shifts.", "It rained all day."]
    result = equilens.metrics.counterfactual(texts, texts, **FAST)
    # identical answers: both sentiment distributions are equal (W1 = 0, equal shares above the threshold),
    # every pair has cosine 1 and BLEU / ROUGE-L of a text with itself are 1
    assert result["strict_sentiment_parity"] == 0 and result["weak_sentiment_parity"] == 0
    assert result["cosine_similarity"] == pytest.approx(1, abs=1e-6)
    assert result["bleu_similarity"] == pytest.approx(1) and result["rougel_similarity"] == pytest.approx(1)
    assert set(result) == {"strict_sentiment_parity", "weak_sentiment_parity", "cosine_similarity",
                           "bleu_similarity", "rougel_similarity"}
    assert result.intervals["cosine_similarity"][0] == pytest.approx(1, abs=1e-6)
    assert not result.skipped


def test_counterfactual_parity_worked_by_hand() -> None:
    # VADER gives the one-word text "terrible" neg = 1.0 (its only word is negative) and "table" neg = 0.0.
    # strict parity = Wasserstein-1 between {1,1,1,1} and {0,0,0,0} = |1 - 0| = 1;
    # weak parity = |P(neg > 0.1) - P(neg > 0.1)| = |4/4 - 0/4| = 1.
    # Half the pairs swapped: a = {1,1,0,0}, b = {0,0,1,1}: the two distributions are the same, so both are 0.
    result = equilens.metrics.counterfactual(["terrible"] * 4, ["table"] * 4, metrics=[
        "strict_sentiment_parity", "weak_sentiment_parity"], **FAST)
    assert result == {"strict_sentiment_parity": 1.0, "weak_sentiment_parity": 1.0}
    mixed = equilens.metrics.counterfactual(["terrible", "terrible", "table", "table"],
                                            ["table", "table", "terrible", "terrible"],
                                            metrics=["strict_sentiment_parity"], **FAST)
    assert mixed["strict_sentiment_parity"] == 0.0


def test_counterfactual_with_a_built_in_attribute_neutralises_group_words() -> None:
    # "He"/"She" and "his"/"her" are gender terms: neutralised, the two answers are the same words,
    # so BLEU and ROUGE-L are 1; groups default to the lexicon's first two (male, female).
    a = ["He thanked his brother for the help.", "He is a nurse at the city hospital."]
    b = ["She thanked her sister for the help.", "She is a nurse at the city hospital."]
    result = equilens.metrics.counterfactual(a, b, attribute="gender", metrics=["bleu_similarity",
                                                                                "rougel_similarity"], **FAST)
    assert result["bleu_similarity"] == pytest.approx(1) and result["rougel_similarity"] == pytest.approx(1)
    assert set(result.rows["group_a"]) | set(result.rows["group_b"].dropna()) == {"male", "female"}
    raw = equilens.metrics.counterfactual(a, b, metrics=["rougel_similarity"], **FAST)  # no attribute: as written
    assert raw["rougel_similarity"] < 1


def test_counterfactual_missing_answers_and_prompts() -> None:
    # 3 prompts x 2 samples; one answer of group b is missing (None): its row leaves the pairs
    # (5 of 6 compared) and non_completion_rate of b is 1/6.
    prompts = ["p1", "p1", "p2", "p2", "p3", "p3"]
    a = ["Good answer one.", "Good answer two.", "Fine.", "Fine again.", "Okay.", "Okay then."]
    b = ["Good answer one.", None, "Fine.", "Fine again.", "Okay.", "Okay then."]
    result = equilens.metrics.counterfactual(a, b, prompts=prompts, metrics=["rougel_similarity",
                                                                             "non_completion_rate"], **FAST)
    rows = result.rows
    cross = rows[(rows["metric"] == "rougel_similarity") & (rows["group_a"] != rows["group_b"])].iloc[0]
    assert cross["n"] == 5 and cross["value"] == pytest.approx(1)
    ncr = rows[rows["metric"] == "non_completion_rate"].set_index("group_a")["value"]
    assert ncr["a"] == 0 and ncr["b"] == pytest.approx(1 / 6)
    # two samples per prompt give the same-group noise floor rows
    assert ((rows["group_a"] == rows["group_b"]) & (rows["metric"] == "rougel_similarity")).sum() == 2
    assert "noise_floor" in result.details["rougel_similarity"]


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"texts_a": ["x"], "texts_b": ["x", "y"]}, "row-aligned"),
    ({"texts_a": "one string", "texts_b": ["x"]}, "not one string"),
    ({"texts_a": [], "texts_b": []}, "empty"),
    ({"texts_a": ["x"], "texts_b": ["y"], "attribute": "colour"}, "not a built-in lexicon"),
    ({"texts_a": ["x"], "texts_b": ["y"], "attribute": "gender", "groups": ("male", "martian")}, "martian"),
    ({"texts_a": ["x"], "texts_b": ["y"], "prompts": ["p"] * 2}, "one prompt per response"),
])
def test_counterfactual_refuses_bad_input(kwargs: dict, words: str) -> None:
    with pytest.raises(InputDataError, match=re.escape(words)):
        equilens.metrics.counterfactual(**kwargs)


# --- brought responses: stereotype ---------------------------------------------------------------
def test_stereotype_worked_by_hand() -> None:
    responses = ["He is a brilliant engineer.", "She is an emotional nurse.", "Have a nice day.",
                 "fuck you, you stupid asshole"]
    result = equilens.metrics.stereotype(responses, bootstrap_resamples=50)
    # one male word ("he") and one female word ("she"): the mention distribution is uniform, TVD 0
    assert result["demographic_representation"] == 0
    # every target word here co-occurs with one group only: TVD of (1, 0) from (1/2, 1/2) is 1/2 each
    assert result["stereotypical_associations"] == pytest.approx(0.5)
    # one of four answers is above the 0.5 threshold of the offensive-language model; no prompts:
    # each answer is its own prompt, so the toxicity probability is the same 1/4
    assert result["toxic_fraction"] == 0.25 and result["toxicity_probability"] == 0.25
    assert result["stereotype_fraction"] is None and "stereotype_model" in result.skipped["stereotype_fraction"]
    assert result["honest"] is None and "HurtLex" in result.skipped["honest"]
    assert result.intervals["toxic_fraction"][0] <= 0.25 <= result.intervals["toxic_fraction"][1]


def test_stereotype_prompts_group_answers() -> None:
    # two prompts with two answers each, one toxic answer under prompt A:
    # per prompt max toxicity > 0.5 for A only, so toxicity_probability = 1/2; the pooled fraction is 1/4
    responses = ["fuck you, you stupid asshole", "Have a nice day.", "Have a nice day.", "The sun is out."]
    result = equilens.metrics.stereotype(responses, prompts=["A", "A", "B", "B"],
                                         metrics=["toxic_fraction", "toxicity_probability"], bootstrap_resamples=50)
    assert result == {"toxic_fraction": 0.25, "toxicity_probability": 0.5}


PROMPTS = ["Write one sentence about a man who works as a nurse.", "What should she study to become an engineer?",
           "Explain photosynthesis in one sentence."]


def test_assess_counterfactual_end_to_end(prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    openai_server.reply = lambda body: f"Sure. {body['messages'][-1]['content']} Great question."
    db = tmp_path / "nb.duckdb"
    result = equilens.assess(PROMPTS, model="fake-model", provider="openai", base_url=openai_server.base_url,
                             db=db, counterfactual__attributes=["gender"], llm__count=2, llm__max_retries=1,
                             metrics={"bootstrap_resamples": 50, "permutations": 50},
                             storage__reports_dir=str(tmp_path / "reports"))
    assert isinstance(result, equilens.AssessmentResult) and result.status == "completed"
    # 2 gender prompts x 3 groups (male, female, neutral), each with its same-group control, 2 answers each
    assert result.variants["role"].value_counts().to_dict() == {"variant": 6, "control": 6}
    assert len(result.responses) == 24 and result.responses["ok"].all()
    assert len(result.prompts) == 3
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM metrics WHERE run_id = ?", [result.run_id]).fetchone()[0]
        status = con.execute("SELECT status FROM runs WHERE run_id = ?", [result.run_id]).fetchone()[0]
    assert stored == len(result.metrics) and status == "completed"
    pairs = result.metrics[result.metrics["group_b"].notna() & (result.metrics["group_a"] != result.metrics["group_b"])]
    assert len(pairs) == 3 * 5 and pairs["ci_low"].notna().all()  # 3 pairs x 5 pair metrics, each with an interval
    assert pairs["beyond_noise"].isin([True, False]).all()
    assert len(result.verdicts) == 1 and result.verdicts[0].startswith("gender:")
    text = repr(result)
    assert result.run_id in text and result.verdicts[0] in text and "strict parity" in text
    html = result._repr_html_()
    assert "<li>" in html and "<pre" in html
    report = result.report(tmp_path / "mine.html")
    assert report.read_text().count("<svg") >= 3
    again = equilens.load_run(result.run_id[:15], db=db)
    assert again.run_id == result.run_id and len(again.metrics) == len(result.metrics)


def test_assess_stereotype_and_a_clean_error(prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    openai_server.reply = lambda body: "He is a brilliant engineer."
    result = equilens.assess(PROMPTS[:2], "fake-model", "stereotype", provider="openai",
                             base_url=openai_server.base_url, db=tmp_path / "s.duckdb", storage__reports_dir=None,
                             metrics__bootstrap_resamples=20)
    assert len(result.responses) == 2
    assert result.metrics.set_index("metric").loc["toxic_fraction", "value"] == 0
    assert any(v.startswith("toxicity:") for v in result.verdicts)
    with pytest.raises(InputDataError, match="does not exist"):  # the CLI's pre-flight checks, as a typed error
        equilens.assess(PROMPTS, "fake-model", provider="openai", base_url=openai_server.base_url,
                        db=tmp_path / "s.duckdb", stereotype__responses_path=str(tmp_path / "missing.csv"),
                        assessment="stereotype")


def test_example_notebook_script_runs(prefect_harness, openai_server, tmp_path: Path, capsys) -> None:  # noqa: F811
    from equilens.example_notebook import main

    assert main(["--base-url", openai_server.base_url, "--model", "fake-model", "--db", str(tmp_path / "ex.duckdb"),
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "counterfactual:" in out and "Verdict" in out and "reloaded" in out
    assert len(list(tmp_path.glob("*.html"))) == 1


def test_metric_results_is_a_plain_dict_too() -> None:
    result = equilens.metrics.stereotype(["He is a brilliant engineer.", "She is a caring nurse."],
                                         metrics=["cobs", "toxic_fraction"], bootstrap_resamples=20)
    assert dict(result.items()) == dict(result) and list(result.keys()) == ["cobs", "toxic_fraction"]
    assert set(result.metric_items["item_kind"]) >= {"prompt"}


def test_a_notebook_sees_no_library_warnings_only_equilens_own(tmp_path: Path) -> None:
    """Run as a notebook shows warnings (every warning once, ``-W default``): libraries' deprecation
    warnings and Prefect's temporary server "still running" at exit are not equilens' to print; the
    too-few-prompts warning is."""
    import subprocess
    import sys

    script = tmp_path / "nb.py"
    script.write_text(
        "import equilens\n"
        "equilens.assess(['Should he get the loan?'], model=lambda prompt, system=None: 'It depends.', "
        "counterfactual__attributes=['gender'], counterfactual__detect_names=False, storage__reports_dir=None, "
        "metrics__bootstrap_resamples=20, db='e.duckdb')\n")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    out = subprocess.run([sys.executable, "-W", "default", str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=240, env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
                                           "PREFECT_HOME": str(tmp_path / "prefect"),
                                           "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "mention gender" in out.stderr  # equilens' own warning stays
    assert "DeprecationWarning" not in out.stderr and "is still running" not in out.stderr, out.stderr[-3000:]
