"""The counterfactual metric stage on synthetic responses: missing data, refusals, noise floors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.pipeline import ScoreSet
from equilens.tasks.pipeline.metric_stage import metric_stage

RACE = ["white", "black", "asian", "hispanic"]


def synthetic(prompts: int, groups: list[str], count: int, sentiment, attribute: str = "race",
              ok=lambda p, g, i: True, refusal=lambda p, g, i: False) -> tuple[pd.DataFrame, ScoreSet]:
    """Responses with a known sentiment per (prompt, group, sample) and random unit embeddings."""
    rows, scalar, emb = [], [], {}
    rng = np.random.default_rng(0)
    for p in range(prompts):
        for g in groups:
            for i in range(count):
                text = f"answer {p} {g} {i} word{p % 7} word{i}"
                good = ok(p, g, i)
                rows.append({"variant_id": f"{p}{g}", "prompt_id": f"p{p}", "attribute": attribute, "grp": g,
                             "sample_idx": i, "text": text if good else None, "ok": good,
                             "refusal": refusal(p, g, i), "error_class": None if good else "ConnectionError"})
                if good:
                    h = text_hash(text)
                    scalar.append({"text_hash": h, "scorer": "vader-neg", "value": sentiment(p, g, i)})
                    v = rng.normal(size=8)
                    emb[h] = v / np.linalg.norm(v)
    scores = ScoreSet(pd.DataFrame(scalar, columns=["text_hash", "scorer", "value"]), {"vader-neg": (0.0, 1.0)},
                      emb, "test")
    return pd.DataFrame(rows), scores


def _cfg(**kw: object) -> MetricsConfig:
    return MetricsConfig(**{"bootstrap_resamples": 50, "permutations": 50, **kw})


def test_no_row_with_every_group_answered_completes_with_skipped_omnibus() -> None:
    # the server died; each (prompt, sample) lost at least one race group, so the omnibus
    # matrix is empty: the omnibus is skipped with its reason, the stage does not raise.
    rng = np.random.default_rng(1)
    lost = {p: RACE[p % 4] for p in range(8)}
    responses, scores = synthetic(8, RACE, 2, lambda p, g, i: float(rng.random()), ok=lambda p, g, i: g != lost[p])
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["race"]), _cfg())
    parity = out[(out["metric"] == "strict_sentiment_parity") & out["value"].notna()]
    assert len(parity) == 6  # every pair still has prompts where both of its groups answered
    details = [d for d in parity["details"] if "omnibus_skipped" in d]
    assert len(details) == 1 and "no prompt where white and black and asian and hispanic" in details[0]["omnibus_skipped"]


def test_a_group_that_never_answered_is_skipped_with_the_reason() -> None:
    # every call about "asian" failed: its pairs are skipped with the reason, no KeyError
    responses, scores = synthetic(6, RACE, 2, lambda p, g, i: 0.1 * (p % 3), ok=lambda p, g, i: g != "asian")
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["race"]), _cfg())
    nc = out[out["metric"] == "non_completion_rate"].set_index("group_a")["value"]
    assert nc["asian"] == 1.0 and nc["white"] == 0.0
    asian = out[(out["group_a"] == "asian") | (out["group_b"] == "asian")]
    asian_pairs = asian[asian["group_b"].notna() & (asian["group_a"] != asian["group_b"])]
    assert len(asian_pairs) == 3 * 5  # 3 pairs x 5 pair metrics, all skipped with a reason
    assert asian_pairs["value"].isna().all()
    assert all("were all answered (12 of 24 calls answered" in d["skipped"] for d in asian_pairs["details"])
    others = out[(out["group_b"].notna()) & ~out.index.isin(asian.index)]
    assert others["value"].notna().all()


def test_refusals_are_non_completions_and_never_enter_pair_metrics() -> None:
    # a refusal gets sentiment 0.9 here; the other answers 0.1. Were refusals paired, female vs male
    # strict parity would be > 0; excluded, both sides are 0.1 everywhere -> exactly 0.
    refused = lambda p, g, i: g == "female" and i == 0  # noqa: E731
    responses, scores = synthetic(6, ["male", "female"], 2, lambda p, g, i: 0.9 if refused(p, g, i) else 0.1,
                                  attribute="gender", refusal=refused)
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"]), _cfg())
    row = out[(out["metric"] == "strict_sentiment_parity") & (out["group_a"] == "male")].iloc[0]
    assert row["value"] == 0.0 and row["n"] == 6  # sample 1 of each of the 6 prompts
    nc = out[out["metric"] == "non_completion_rate"].set_index("group_a")
    assert nc.loc["female", "value"] == 0.5 and nc.loc["female", "details"]["refusals"] == 6


def test_parity_noise_floor_and_cross_group_value_agree_under_identical_groups() -> None:
    # with identical groups (count=2) the floor has the cross-group value's expectation (a floor of
    # sample 2k vs 2k+1, half the rows, would read 0.0376 against 0.0280); averaged over 200
    # simulated runs the two agree within Monte Carlo error.
    values, floors = [], []
    for sim in range(200):
        rng = np.random.default_rng(100 + sim)
        table = {(p, g, i): float(rng.beta(2, 8)) for p in range(20) for g in ("male", "female") for i in range(2)}
        responses, scores = synthetic(20, ["male", "female"], 2, lambda p, g, i: table[(p, g, i)], attribute="gender")
        out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"]),
                           _cfg(bootstrap_resamples=0, permutations=0, names=["strict_sentiment_parity"]))
        row = out.iloc[0]
        values.append(row["value"])
        floors.append(row["details"]["noise_floor"])
    diff = np.asarray(values) - np.asarray(floors)
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    assert abs(diff.mean()) < 3 * se
    assert np.mean(floors) == pytest.approx(np.mean(values), rel=0.06)


def test_a_real_gap_reads_beyond_the_floor_with_a_small_holm_p() -> None:
    responses, scores = synthetic(30, ["male", "female"], 2,
                                  lambda p, g, i: 0.1 + 0.01 * ((p * 7 + i) % 5) + (0.2 if g == "female" else 0),
                                  attribute="gender")
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"]),
                       _cfg(bootstrap_resamples=200, permutations=200))
    d = out[out["metric"] == "strict_sentiment_parity"].iloc[0]["details"]
    assert d["gap"] > 0.15 and d["gap_ci"][0] > 0.1 and d["p_holm"] < 0.01
    assert d["mean_score_b"] - d["mean_score_a"] == pytest.approx(0.2)


def test_similarity_gap_test_rejects_about_five_percent_under_identical_groups() -> None:
    # Answers to one prompt resemble each other (a shared prompt vector plus noise) and the group
    # changes nothing. A gap interval above 0 with a Holm-adjusted bootstrap p < 0.05 (the verdict's
    # rule for similarity, on 20 prompts) should happen in about 5% of runs or fewer.
    fired = []
    for sim in range(120):
        rng = np.random.default_rng(900 + sim)
        base = rng.normal(size=(20, 8))
        responses, scores = synthetic(20, ["male", "female"], 2, lambda p, g, i: 0.1, attribute="gender")
        for row in responses.itertuples():
            v = base[int(row.prompt_id[1:])] + rng.normal(scale=1.0, size=8)
            scores.embeddings[text_hash(row.text)] = v / np.linalg.norm(v)
        out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"], noise_floor="samples"),
                           _cfg(bootstrap_resamples=200, permutations=0, names=["cosine_similarity"]))
        d = out[out["group_a"] != out["group_b"]].iloc[0]["details"]
        fired.append(d["gap_ci"][0] > 0 and d["p_holm"] < 0.05)
        assert d["prompts"] == 20
    assert np.mean(fired) <= 0.08


def test_an_attribute_without_a_lexicon_is_compared_without_neutralisation() -> None:
    # brought groups ("team_a"/"team_b") have no lexicon: the texts are compared as they are
    from equilens.tasks.pipeline.metric_stage import metric_stage as stage

    responses, scores = synthetic(4, ["team_a", "team_b"], 1, lambda p, g, i: 0.1, attribute="team")
    out = stage(responses, scores, CounterfactualConfig(attributes=["gender"]),
                _cfg(names=["bleu_similarity"], neutralize=True))
    row = out[out["metric"] == "bleu_similarity"].iloc[0]
    assert row["value"] > 0 and row["details"]["neutralized"] is False


def test_each_attribute_alone_gives_the_rows_of_one_pass_over_all() -> None:
    """The flow runs the metric stage as one task per attribute, each with only its own answers'
    scores: attributes share no draws, floors or Holm families, so the rows equal one pass."""
    from equilens.tasks.config import CounterfactualConfig as Cf

    race, race_scores = synthetic(12, RACE, 2, lambda p, g, i: 0.05 * (p % 5) + 0.1 * (g == "black"))
    gender, gender_scores = synthetic(12, ["male", "female"], 2, lambda p, g, i: 0.07 * (p % 4), attribute="gender")
    gender["text"] = gender["text"].str.replace("answer", "reply")  # its own texts
    gender_scores = ScoreSet(pd.DataFrame({"text_hash": [text_hash(t) for t in gender["text"]], "scorer": "vader-neg",
                                           "value": gender_scores.scalar["value"].to_numpy()}),
                             gender_scores.ranges, {}, "test")
    both = pd.concat([race, gender], ignore_index=True)
    scores = ScoreSet(pd.concat([race_scores.scalar, gender_scores.scalar], ignore_index=True),
                      race_scores.ranges, {}, "test")
    cf, cfg = Cf(attributes=["race", "gender"]), _cfg(names=["strict_sentiment_parity", "rougel_similarity"])
    whole = metric_stage(both, scores, cf, cfg)
    parts = pd.concat([metric_stage(part, scores.subset(part["text"]), cf, cfg)
                       for _, part in both.groupby("attribute", sort=True)], ignore_index=True)
    assert set(whole["attribute"]) == {"race", "gender"} and whole["value"].notna().sum() > 10
    pd.testing.assert_frame_equal(whole, parts)
    from equilens.tasks.assessments.counterfactual.stages import (
        metric_inputs,  # numbered per attribute before the tasks, as the flow does
    )

    numbered = pd.concat([metric_stage(part, own, cf, cfg, texts=texts) for part, texts, own
                          in metric_inputs(both, scores)], ignore_index=True)
    pd.testing.assert_frame_equal(whole, numbered)
    with pytest.raises(ValueError, match="one attribute at a time"):
        metric_stage(both, scores, cf, cfg, texts=np.array(["x"], dtype=object))
    assert len(scores.subset(race["text"]).scalar) == len(race_scores.scalar)  # only its own texts' scores


def test_prompt_codes_sort_like_their_ids_so_the_draws_are_the_same() -> None:
    """The stage numbers prompt ids in their text order ("p10" before "p9"), so every cluster step on
    the integer codes finds the order, the bootstrap draws and the rows the ids would give."""
    from equilens.tasks.pipeline.pairs import number_answers
    from equilens.tasks.stats import cluster_codes, distinct_count
    from equilens.tasks.stats.resampling import Draws

    ids = pd.Series(["p9", "p10", "p2", "p10", "p9", "p100"])
    frame, texts = number_answers(pd.DataFrame({"prompt_id": ids, "text": ["b", "a", None, "b", "c", "a"]}))
    assert frame["prompt_id"].tolist() == [3, 0, 2, 0, 3, 1]  # p10 < p100 < p2 < p9, as text
    assert list(texts) == ["b", "a", "c"] and frame["text"].tolist() == [0, 1, -1, 0, 2, 1]  # -1: no answer
    codes = frame["prompt_id"].to_numpy()
    assert cluster_codes(codes)[0][0].tolist() == cluster_codes(ids)[0][0].tolist()
    by_id, by_code = Draws.draw(ids, 30, seed=4), Draws.draw(codes, 30, seed=4)
    np.testing.assert_array_equal(by_id.counts, by_code.counts)
    np.testing.assert_array_equal(by_id.rows(ids), by_code.rows(codes))
    assert distinct_count(codes) == distinct_count(ids) == 4


def test_other_content_pairs_each_answer_with_the_next_prompts_answer_at_its_place() -> None:
    """Worked by hand: prompts 3, 5, 7 in order; prompt 3's rows (1, 3) take prompt 5's second answers
    at their places (rows 0, 2), prompt 5's rows take prompt 7's only one (row 4, both), and the
    last prompt wraps round to the first (row 1)."""
    from equilens.tasks.pipeline.pairs import other_content
    from equilens.tasks.pipeline.parity import PairData

    pair = PairData(np.arange(5), np.array([10, 11, 12, 13, 14]), np.array([5, 3, 5, 3, 7]))
    other = other_content(pair)
    assert other.right.tolist() == [14, 10, 14, 12, 11]
    assert other.left.tolist() == pair.left.tolist() and other.clusters is pair.clusters


def test_the_similarity_batch_holds_a_few_bytes_per_pair_not_copies_of_every_pair_list() -> None:
    """At 100,000 prompts one attribute compares about 4 million answer pairs (floor, cross-group and
    other-content lists). The batch joined the lists into three int64 arrays beside a second array of
    places, and each text metric sorted every pair again to find the distinct ones: 114 bytes per
    pair traced here. The two sides are now one int32 array and the distinct pairs are found once,
    by a hash table, for every metric (54 bytes, 16 of them the two metrics' values)."""
    import tracemalloc

    from equilens.tasks.metrics.text_similarity import numbered_min_bleu, numbered_rouge_l
    from equilens.tasks.pipeline.parity import PairData
    from equilens.tasks.pipeline.stage_context import MetricContext

    rng = np.random.default_rng(0)
    texts = np.array([f"answer {i} says word{i % 13} and word{i % 7}." for i in range(300)], dtype=object)
    scalar = pd.DataFrame({"text_hash": [text_hash(t) for t in texts], "scorer": "vader-neg", "value": 0.5})
    names = ["bleu_similarity", "rougel_similarity"]
    ctx = MetricContext(ScoreSet(scalar, {"vader-neg": (0.0, 1.0)}, {}, ""), _cfg(), names)
    ctx.use_texts(texts)

    def lists(n: int) -> dict[str, PairData]:
        return {k: PairData(rng.integers(0, 300, n), rng.integers(0, 300, n), np.arange(n) // 4)
                for k in ("floor", "cross", "changed")}

    ctx.similarity_batch(names, lists(1000), None)  # compiled kernels and token ids: once per process
    pairs, n = lists(200_000), 3 * 200_000
    tracemalloc.start()
    try:
        out = ctx.similarity_batch(names, pairs, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n < 75, f"{peak / n:.0f} bytes per pair"
    cross = pairs["cross"]
    assert np.array_equal(out["bleu_similarity"]["cross"], numbered_min_bleu(texts, cross.left, cross.right))
    assert np.array_equal(out["rougel_similarity"]["cross"], numbered_rouge_l(texts, cross.left, cross.right))


def test_answers_that_differ_only_in_the_groups_words_share_one_masked_text_across_chunks() -> None:
    from equilens.tasks.inputs.lexicon import load_lexicon
    from equilens.tasks.pipeline.pairs import distinct_pairs, neutral_codes

    texts = np.array(["He is kind.", "She is kind.", "It rained.", "he is kind."], dtype=object)
    codes, masked = neutral_codes(texts, load_lexicon("gender"), chunk=2)  # "She is kind." ends the first chunk
    assert codes.tolist() == [0, 0, 1, 0] and masked[1] == "It rained."
    assert masked[0].endswith(" is kind.") and "He" not in masked[0]
    first, second, each = distinct_pairs(np.array([0, 1, 0, 2]), np.array([1, 1, 1, 0]), 3)
    assert list(zip(first.tolist(), second.tolist(), strict=True)) == [(0, 1), (1, 1), (2, 0)]
    assert each.tolist() == [0, 1, 0, 2]


def test_a_groups_non_completion_interval_from_the_attributes_shared_draws_covers_the_true_rate() -> None:
    """Non-completion is bootstrapped with the draws every pair of the attribute shares (no draws of
    its own per group: 1,000 x 67,000 integers each, 6 s per race attribute at 100,000 prompts). A
    group's prompts may be fewer than the drawn ones (a prompt no other group answered is left out of
    them); its interval must still cover the true failure rate about 95% of the time."""
    from equilens.tasks.pipeline.stage_context import MetricContext

    rng = np.random.default_rng(3)
    scalar = pd.DataFrame({"text_hash": ["x"], "scorer": "vader-neg", "value": [0.5]})
    ctx = MetricContext(ScoreSet(scalar, {"vader-neg": (0.0, 1.0)}, {}, ""), _cfg(bootstrap_resamples=400),
                         ["non_completion_rate"])
    covered, runs, rate = 0, 200, 0.2
    for run in range(runs):
        ctx.cfg = _cfg(bootstrap_resamples=400, seed=run)
        ctx.draw_for(np.arange(120))
        prompts = np.sort(rng.choice(120, 90, replace=False)).repeat(2)  # a group's prompts, two calls each
        failed = (rng.random(len(prompts)) < rate).astype(float)
        est = ctx.mean_estimate(failed, prompts)
        covered += est.ci_low <= rate <= est.ci_high
    assert 0.90 <= covered / runs <= 0.99, covered / runs
