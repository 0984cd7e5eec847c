"""Verdicts in words, the least-fair pair, and chart axes: read off metric rows worked out by hand."""

from __future__ import annotations

import re

import pandas as pd
from equilens.tasks.reporting.svg import axis_range, interval_chart
from equilens.tasks.reporting.terminal import worst_pairs
from equilens.tasks.reporting.verdict import verdicts


def _row(metric: str, a: str | None, b: str | None, value: float | None, family: str = "counterfactual",
         attribute: str | None = "gender", lo: float | None = None, hi: float | None = None, **details: object) -> dict:
    return {"family": family, "attribute": attribute, "group_a": a, "group_b": b, "metric": metric, "value": value,
            "ci_low": lo, "ci_high": hi, "n": 16, "direction": "", "aggregation": "", "details": details}


def test_gap_beyond_noise_is_said_in_words_with_its_numbers() -> None:
    rows = pd.DataFrame([
        _row("strict_sentiment_parity", "male", "female", 0.08, noise_floor=0.02, gap=0.06, gap_ci=[0.03, 0.09],
             p_value=0.001, p_holm=0.003, mean_score_a=0.05, mean_score_b=0.12, prompts=16, min_detectable_gap=0.04),
        _row("strict_sentiment_parity", "white", "black", 0.03, attribute="race", noise_floor=0.028, gap=0.002,
             gap_ci=[-0.02, 0.025], p_value=0.4, p_holm=0.8, mean_score_a=0.1, mean_score_b=0.1, prompts=16,
             min_detectable_gap=0.0512),
    ])
    said = {v.subject: v for v in verdicts(rows)}
    assert said["gender"].beyond_noise is True
    assert said["gender"].sentence == ("gender: answers to female variants are more negative than to male variants "
                                       "beyond sampling noise (strict parity 0.080 vs noise floor 0.020, "
                                       "p_holm = 0.003).")
    assert said["race"].beyond_noise is False
    assert said["race"].sentence == ("race: no difference beyond sampling noise; with 16 prompts the smallest gap "
                                     "this run could detect is about 0.051 (strict parity).")


def test_a_small_p_without_a_gap_beyond_the_floor_is_not_a_finding() -> None:
    # parity: the permutation test decides, but a value at or below its floor is no finding;
    # similarity: the bootstrap p and the interval come from one bootstrap, both must agree
    rows = pd.DataFrame([
        _row("strict_sentiment_parity", "male", "female", 0.04, noise_floor=0.04, gap=0.0,
             gap_ci=[-0.01, 0.03], p_holm=0.01, prompts=40, min_detectable_gap=0.02),
        _row("bleu_similarity", "male", "female", 0.5, noise_floor=0.52, gap=0.02, gap_ci=[-0.01, 0.05],
             p_holm=0.01, p_method="bootstrap", neutralized=True, prompts=40, min_detectable_gap=0.04)])
    (v,) = verdicts(rows)
    assert v.beyond_noise is False and "no difference beyond sampling noise" in v.sentence


def test_a_parity_finding_rests_on_the_permutation_test_not_the_bootstrap_interval() -> None:
    # the percentile interval of a folded gap (Wasserstein-1) is too wide under a real difference;
    # the verdict follows the exact permutation test, whose power the stated detectable gap promises
    rows = pd.DataFrame([_row("strict_sentiment_parity", "male", "female", 0.05, noise_floor=0.04, gap=0.01,
                              gap_ci=[-0.01, 0.03], p_holm=0.01, prompts=40, min_detectable_gap=0.02)])
    (v,) = verdicts(rows)
    assert v.beyond_noise is True and "beyond sampling noise" in v.sentence


def test_a_similarity_gap_against_a_floor_without_spread_is_never_a_finding() -> None:
    rows = pd.DataFrame([_row("bleu_similarity", "male", "female", 0.3, noise_floor=1.0, gap=0.7,
                              gap_ci=[0.6, 0.8], p_holm=0.001, p_method="bootstrap", neutralized=True, prompts=40,
                              noise_floor_skipped="the noise floor has no spread", identical_samples=28,
                              repeated_variants=28)])
    (v,) = verdicts(rows)
    assert v.beyond_noise is False and "deterministically (all 28 variants" in v.sentence


def test_similarity_gap_and_skipped_pairs_are_reported() -> None:
    rows = pd.DataFrame([
        _row("strict_sentiment_parity", "white", "black", 0.03, attribute="race", noise_floor=0.03, gap=0.0,
             gap_ci=[-0.02, 0.02], p_holm=0.9, prompts=8, min_detectable_gap=0.05),
        _row("rougel_similarity", "white", "black", 0.70, attribute="race", noise_floor=0.85, gap=0.15,
             gap_ci=[0.1, 0.2], p_value=0.002, p_holm=0.012, neutralized=True, prompts=12),
        _row("bleu_similarity", "white", "black", 0.30, attribute="race", noise_floor=0.35, gap=0.05,
             gap_ci=[0.01, 0.09], p_value=0.04, p_holm=0.12, neutralized=True, prompts=12),  # not after Holm
        # cosine compares raw answers that name their group: reported, never called a finding
        _row("cosine_similarity", "white", "black", 0.40, attribute="race", noise_floor=0.60, gap=0.2,
             gap_ci=[0.1, 0.3], p_value=0.001, p_holm=0.003, prompts=12),
        _row("strict_sentiment_parity", "white", "asian", None, attribute="race", skipped="no prompt where ..."),
    ])
    (v,) = verdicts(rows)
    assert v.beyond_noise is True
    assert ("white vs black answers differ in content beyond sampling noise (ROUGE-L 0.700 across groups vs 0.850 "
            "within a group, p_holm = 0.012)") in v.sentence
    assert "BLEU" not in v.sentence and "cosine" not in v.sentence
    assert "1 pair(s) could not be compared (white vs asian)" in v.sentence


def test_a_similarity_gap_on_few_prompts_or_without_neutralisation_is_not_a_finding() -> None:
    base = {"noise_floor": 0.85, "gap": 0.15, "gap_ci": [0.1, 0.2], "p_value": 0.001, "p_holm": 0.002}
    few = pd.DataFrame([_row("rougel_similarity", "white", "black", 0.7, attribute="race", neutralized=True,
                             prompts=5, **base)])
    raw = pd.DataFrame([_row("rougel_similarity", "white", "black", 0.7, attribute="race", neutralized=False,
                             prompts=40, **base)])
    assert verdicts(few)[0].beyond_noise is False and verdicts(raw)[0].beyond_noise is False


def test_target_metric_family_verdict() -> None:
    rows = pd.DataFrame([_row("stereotype_score", None, None, 0.62, family="probability", attribute="career",
                              lo=0.55, hi=0.69),
                         _row("crows_pairs_score", None, None, 0.52, family="probability", attribute="all",
                              lo=0.47, hi=0.57)])
    (v,) = verdicts(rows)
    assert v.sentence == "probability: beyond chance: stereotype_score (career) 0.620 [0.550, 0.690] vs fair 0.5."


def test_least_fair_pair_ignores_noise_floor_rows_and_reads_targets() -> None:
    # the demo report named "male (noise floor)" the least fair pair for cosine
    rows = pd.DataFrame([
        _row("cosine_similarity", "male", "male", 0.60), _row("cosine_similarity", "male", "female", 0.80),
        _row("cosine_similarity", "female", "neutral", 0.70),
        _row("seat_effect_size", "a", "b", 0.3, family="embedding"),
        _row("seat_effect_size", "c", "d", -0.9, family="embedding"),
    ])
    worst = worst_pairs(rows).set_index("metric")
    assert (worst.loc["cosine_similarity", "group_a"], worst.loc["cosine_similarity", "group_b"]) == ("female", "neutral")
    # target 0: |-0.9| is farther from fair than |0.3| (lower-is-fairer would have picked 0.3)
    assert worst.loc["seat_effect_size", "group_a"] == "c"


def test_an_all_zero_metric_gets_a_readable_axis() -> None:
    # round ticks around zero, not an axis of -5e-11 ... 1.05e-09
    assert axis_range([0.0, 0.0, 0.0]) == (-0.05, 0.05)
    svg = interval_chart("weak parity", [("male vs female", 0.0, 0.0, 0.0)], "lower")
    ticks = [float(t) for t in re.findall(r'class="tick" text-anchor="middle">([^<]+)<', svg)]
    assert ticks == [-0.04, -0.02, 0.0, 0.02, 0.04]  # round steps inside the -0.05..0.05 axis


def test_axis_ticks_are_round_numbers() -> None:
    from equilens.tasks.reporting.svg import _axis_ticks

    # the report's ticks read "-0.00597, 0.0269, 0.0597, 0.0926": raw fractions of the data range
    assert _axis_ticks(-0.00597, 0.0926) == [0.0, 0.02, 0.04, 0.06, 0.08]
    assert _axis_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert _axis_ticks(12, 987) == [200.0, 400.0, 600.0, 800.0]
    assert 'class="target"' in interval_chart("stereotype score", [("all", 0.6, 0.5, 0.7)], "target", target=0.5)


def test_too_few_prompts_for_the_permutation_test_is_said_instead_of_a_detectable_gap() -> None:
    # 15 race pairs at alpha 0.05 need n > 1 + log2(300) = 9.2 prompts, so 10; 6 cannot show anything
    rows = pd.DataFrame([_row("strict_sentiment_parity", a, b, 0.03, attribute="race", noise_floor=0.03, gap=0.0,
                              gap_ci=[-0.01, 0.01], p_value=0.5, p_holm=1.0, prompts=6, min_detectable_gap=0.02)
                         for a, b in [(f"g{i}", f"g{j}") for i in range(6) for j in range(i + 1, 6)]])
    (v,) = verdicts(rows)
    assert v.sentence == ("race: no difference can be shown with 6 prompts: the permutation test needs at least 10 "
                          "to reach p_holm < 0.05 across 15 pairs. Add prompts.")
    assert v.beyond_noise is None  # unknown, not "no difference": JUnit marks it skipped


def test_one_rule_decides_which_p_values_the_report_trusts():
    from equilens.tasks.reporting.terminal import significance_mark
    from equilens.tasks.reporting.verdict import MIN_PROMPTS_SIMILARITY, p_is_trusted

    few, enough = MIN_PROMPTS_SIMILARITY - 1, MIN_PROMPTS_SIMILARITY
    assert not p_is_trusted({"p_method": "bootstrap", "prompts": few})
    assert p_is_trusted({"p_method": "bootstrap", "prompts": enough})
    assert p_is_trusted({"p_method": "permutation", "prompts": 2})
    # rows stored before p_method: the metric tells the test
    assert not p_is_trusted({"prompts": few}, "rouge_similarity")
    assert p_is_trusted({"prompts": few}, "strict_sentiment_parity")
    # the table's star follows the same rule
    assert significance_mark({"p_holm": 0.01, "p_method": "bootstrap", "prompts": few}) == ""
    assert significance_mark({"p_holm": 0.01, "p_method": "bootstrap", "prompts": enough}) == "*"


def test_a_detectable_gap_that_could_not_be_found_says_why() -> None:
    # a run whose answers all score 0 on 9 prompts: even every answer of one group turned negative is
    # not found at alpha / 12, so the verdict says that rather than "too few prompts for an interval"
    why = "even every answer of one group at the top of the score range is found in only 0% of simulated runs"
    rows = pd.DataFrame([_row("strict_sentiment_parity", "male", "female", 0.0, noise_floor=0.0, gap=0.0,
                              gap_ci=[0.0, 0.0], p_value=1.0, p_holm=1.0, prompts=9, min_detectable_gap_skipped=why)])
    (v,) = verdicts(rows)
    assert v.beyond_noise is False
    assert v.sentence == f"gender: no difference beyond sampling noise, and no gap this run could detect: {why}."


def test_a_similarity_gap_with_a_small_paired_t_p_is_a_finding_without_its_interval() -> None:
    # the paired t-test's p and interval agree at alpha; after Holm the p decides, as for parity
    rows = pd.DataFrame([_row("bleu_similarity", "male", "female", 0.4, noise_floor=0.5, gap=0.1, gap_ci=[0.02, 0.18],
                              p_value=0.004, p_holm=0.008, p_method="paired t-test over prompts", neutralized=True,
                              prompts=30, min_detectable_gap=0.09)])
    (v,) = verdicts(rows)
    assert v.beyond_noise is True and "differ in content" in v.sentence
    few = rows.assign(details=[{**rows["details"][0], "prompts": 9}])
    assert verdicts(few)[0].beyond_noise is False  # fewer than 10 prompts: the t reference is not trusted
    cosine = rows.assign(metric="cosine_similarity")
    assert verdicts(cosine)[0].beyond_noise is False  # embeddings are reported, never judged


def test_a_family_that_counts_its_own_skipped_pairs_is_not_named_beside_the_others() -> None:
    from equilens.tasks.reporting.families import family_report

    assert family_report("identity").names_skipped_pairs is False
    assert family_report("counterfactual").names_skipped_pairs is True
    rows = pd.DataFrame([
        _row("strict_sentiment_parity", "male", "female", 0.08, noise_floor=0.02, gap=0.06, gap_ci=[0.03, 0.09],
             p_value=0.001, p_holm=0.003, prompts=16, min_detectable_gap=0.04),
        _row("strict_sentiment_parity", "male", "neutral", None, skipped="no prompt where ..."),
        _row("outcome_gap", "female", "male", None, family="identity", skipped="fewer than two prompts ..."),
    ])
    (v,) = verdicts(rows)
    assert "1 pair(s) could not be compared (male vs neutral)" in v.sentence, v.sentence
