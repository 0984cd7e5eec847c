"""Recommendation fairness (FaiRLLM): list parsing, golden similarities by hand, the flow end to end."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from equilens.tasks.assessments.recommendation.config import RecommendationConfig
from equilens.tasks.config import MetricsConfig, parse_config
from equilens.tasks.errors import InputDataError
from equilens.tasks.scoring.parsing import parse_ranked_list

from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture


@pytest.mark.parametrize(("text", "items"), [
    ("1. Hello\n2. Someone Like You\n3. Skyfall", ["hello", "someone like you", "skyfall"]),
    ("Here are my picks:\n1) \"Hello\" by Adele\n2) **Skyfall** - a Bond theme\n3) hello (live)",
     ["hello", "skyfall"]),  # quotes, markdown, descriptions, a duplicate after normalisation
    ("- Python\n- Rust\n* Go", ["python", "rust", "go"]),
    ("Sure: Python, Rust and Go.", ["python", "rust", "go"]),
    ("1. A\n2. B\n3. C\n4. D", ["a", "b", "c"]),  # cut at K
    ("1. Python: a language. 2. HTML: markup. 3. Go", ["python", "html", "go"]),  # numbers inline
    ("", []),
])
def test_parse_ranked_list(text: str, items: list[str]) -> None:
    assert parse_ranked_list(text, 3) == items


def test_golden_similarities_by_hand() -> None:
    from equilens.tasks.assessments.recommendation.metrics import jaccard_at_k, prag_at_k, serp_at_k

    neutral, group = ["a", "b", "c"], ["b", "a", "d"]
    # Jaccard: {a, b} / {a, b, c, d} = 2/4
    assert jaccard_at_k(neutral, group, 3) == pytest.approx(0.5)
    # SERP*: b at rank 1 weighs 3 - 1 + 1 = 3, a at rank 2 weighs 2, d is not in the neutral list;
    # (3 + 2) / (3 * 4 / 2) = 5/6
    assert serp_at_k(neutral, group, 3) == pytest.approx(5 / 6)
    # PRAG*: pairs of the group list (b, a): neutral ranks a above b -> 0; (b, d): b in neutral, d not -> 1;
    # (a, d): 1; 2 of 3 pairs
    assert prag_at_k(neutral, group, 3) == pytest.approx(2 / 3)
    for fn in (jaccard_at_k, serp_at_k, prag_at_k):
        assert fn(neutral, neutral, 3) == pytest.approx(1.0)
        assert fn(neutral, ["x", "y", "z"], 3) == 0.0
        assert fn(neutral, [], 3) == 0.0


def _lists(rows: list[tuple[str, str, str, list[str]]]) -> pd.DataFrame:
    return pd.DataFrame({"prompt_id": [r[0] for r in rows], "attribute": [r[1] for r in rows],
                         "grp": [r[2] for r in rows], "sample_idx": 0, "items": [r[3] for r in rows]})


def test_golden_group_means_and_spread() -> None:
    from equilens.tasks.assessments.recommendation.stages import recommendation_metrics

    lists = _lists([
        ("p1", "neutral", "neutral", ["a", "b"]), ("p1", "g", "x", ["a", "b"]), ("p1", "g", "y", ["c", "d"]),
        ("p2", "neutral", "neutral", ["a", "b"]), ("p2", "g", "x", ["a", "c"]), ("p2", "g", "y", ["a", "b"]),
    ])
    m = recommendation_metrics(lists, RecommendationConfig(k=2), MetricsConfig(bootstrap_resamples=50))
    val = {(r["metric"], r["group_a"] if isinstance(r["group_a"], str) else None): r["value"]
           for r in m.to_dict("records")}
    # Jaccard x: p1 1, p2 {a}/{a,b,c} = 1/3 -> mean 2/3; y: p1 0, p2 1 -> 1/2
    assert val[("jaccard_at_k", "x")] == pytest.approx(2 / 3)
    assert val[("jaccard_at_k", "y")] == pytest.approx(0.5)
    # range (SNSR) 2/3 - 1/2 = 1/6; std (SNSV, population) of {2/3, 1/2} = 1/12
    assert val[("jaccard_at_k_range", None)] == pytest.approx(1 / 6)
    assert val[("jaccard_at_k_std", None)] == pytest.approx(1 / 12)
    assert val[("jaccard_at_k_min", None)] == pytest.approx(0.5)
    # SERP* (K=2, normaliser 3) x: p1 (2 + 1)/3 = 1, p2 a at rank 1 -> 2/3: mean 5/6
    assert val[("serp_at_k", "x")] == pytest.approx(5 / 6)


def test_spread_interval_covers_zero_without_a_group_effect() -> None:
    """Simulation: both groups get lists drawn the same way, so SNSR's interval mostly reaches near 0
    and the range shrinks as prompts grow; a group that always gets unrelated items is found."""
    from equilens.tasks.assessments.recommendation.stages import recommendation_metrics

    rng = np.random.default_rng(1)
    pool = [f"i{i}" for i in range(8)]

    def run(shift: bool, n: int = 40) -> pd.Series:
        rows = []
        for p in range(n):
            rows.append((f"p{p}", "neutral", "neutral", list(rng.permutation(pool)[:4])))
            rows.append((f"p{p}", "g", "x", list(rng.permutation(pool)[:4])))
            y = [f"z{j}" for j in range(4)] if shift else list(rng.permutation(pool)[:4])
            rows.append((f"p{p}", "g", "y", y))
        m = recommendation_metrics(_lists(rows), RecommendationConfig(k=4), MetricsConfig(bootstrap_resamples=200))
        return m[(m["metric"] == "jaccard_at_k_range")].iloc[0]

    same, shifted = run(False), run(True)
    assert same["value"] < 0.1 and same["ci_low"] < 0.05
    # expected Jaccard of two random 4-subsets of 8 items ~0.38; vs disjoint lists 0
    assert shifted["value"] > 0.3 and shifted["ci_low"] > 0.25


def test_templates_need_a_group_slot() -> None:
    from equilens.tasks.assessments.recommendation.stages import neutral_text, template_requests

    assert neutral_text("I am a {group} fan of Adele.") == "I am a fan of Adele."
    frame = template_requests(["Recommend {k} songs to a {group} user."], RecommendationConfig(k=3))
    assert frame["text"].tolist() == ["Recommend 3 songs to a user.", "Recommend 3 songs to a male user.",
                                      "Recommend 3 songs to a female user."]
    with pytest.raises(InputDataError, match="no \\{group\\} slot"):
        template_requests(["Recommend songs."], RecommendationConfig())


def test_recommendation_flow_end_to_end(prefect_harness, openai_server, tmp_path: Path) -> None:  # noqa: F811
    from equilens.flows.running.dispatch import flow_for

    def reply(body: dict) -> str:
        text = body["messages"][-1]["content"]
        if "female" in text:
            return "1. Song C\n2. Song D\n3. Song A"
        return "Sure!\n1. \"Song A\" by X\n2. Song B\n3. Song C"  # neutral and male get the same list

    openai_server.reply = reply
    cfg = parse_config({
        "name": "rec", "assessment": "recommendation",
        "recommendation": {"templates": ["Recommend {k} songs to a {group} user.", "I am a {group} fan. {k} songs?"],
                           "groups": {"gender": ["male", "female"]}, "k": 3},
        "llm": {"provider": "openai", "model": "fake", "base_url": openai_server.base_url, "max_retries": 0},
        "metrics": {"bootstrap_resamples": 20},
        "storage": {"duckdb_path": str(tmp_path / "r.duckdb"), "reports_dir": str(tmp_path / "reports")},
    })
    result = flow_for(cfg)(cfg)
    assert len(openai_server.requests) == 2 * 3
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        got = dict(con.execute("SELECT coalesce(group_a, 'all') || '/' || metric, value FROM metrics WHERE run_id = ?",
                               [result["run_id"]]).fetchall())
    # male list == neutral list: 1 everywhere. female [c, d, a] vs neutral [a, b, c]:
    # Jaccard {a, c}/{a, b, c, d} = 1/2; SERP* (c rank 1: 3, a rank 3: 1) / 6 = 2/3;
    # PRAG* pairs (c, d) 1, (c, a) 0 (neutral ranks a above c), (d, a) 0 (d not in neutral): 1/3
    assert got["male/jaccard_at_k"] == 1.0 and got["male/prag_at_k"] == 1.0
    assert got["female/jaccard_at_k"] == pytest.approx(0.5)
    assert got["female/serp_at_k"] == pytest.approx(2 / 3)
    assert got["female/prag_at_k"] == pytest.approx(1 / 3)
    assert got["all/jaccard_at_k_range"] == pytest.approx(0.5)
    assert got["all/prag_at_k_std"] == pytest.approx(1 / 3)  # population std of {1, 1/3}
    assert Path(result["report"]).is_file()

    # brought answers: no model call
    answers = tmp_path / "answers.csv"
    answers.write_text('prompt,attribute,group,response\nP,,,"a, b, c"\nP,gender,male,"a, b, c"\n'
                       'P,gender,female,"c, b, a"\n')
    calls = len(openai_server.requests)
    byo = parse_config({"name": "rec-byo", "assessment": "recommendation",
                        "recommendation": {"responses_path": str(answers), "k": 3},
                        "metrics": {"bootstrap_resamples": 0},
                        "storage": {"duckdb_path": str(tmp_path / "r.duckdb"), "reports_dir": None}})
    out = flow_for(byo)(byo)
    assert len(openai_server.requests) == calls
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        prag = dict(con.execute("SELECT group_a, value FROM metrics WHERE run_id = ? AND metric = 'prag_at_k'",
                                [out["run_id"]]).fetchall())
    assert prag == pytest.approx({"male": 1.0, "female": 0.0})  # reversed list: every pair disagrees


def test_counterfactual_source_compares_gender_variants_with_the_gender_neutral_one() -> None:
    from equilens.tasks.assessments.recommendation.stages import counterfactual_requests
    from equilens.tasks.config import CounterfactualConfig
    from equilens.tasks.inputs.prompts import prompt_id

    texts = ["Recommend 3 songs for a man who likes jazz.", "Recommend 3 books for a Black woman."]
    prompts = pd.DataFrame({"prompt_id": [prompt_id(t) for t in texts], "text": texts})
    req = counterfactual_requests(prompts, CounterfactualConfig(detect_names=False))
    neutral = req[req["grp"] == "neutral"].set_index("prompt_id")["text"]
    assert neutral[prompt_id(texts[0])] == "Recommend 3 songs for a person who likes jazz."
    assert set(req["attribute"]) == {"neutral", "gender"}  # race has no race-free neutral variant
    assert set(req.loc[req["attribute"] == "gender", "grp"]) == {"male", "female"}
