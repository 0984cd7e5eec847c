"""Identity gaps with the drawn names as a sample of their group (:mod:`equilens.tasks.stats.name_sampling`):
a model that reacts to one drawn name is not reported as treating the name's group differently, a
gap planted for a whole group is still found, and each gap says how many names it rests on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from equilens.tasks.config import MetricsConfig
from equilens.tasks.inputs.personas import cells_of, slots_for
from equilens.tasks.stats import holm_adjust
from scipy.stats import t as student
from scipy.stats import ttest_1samp

CELLS = [c.label for c in cells_of(["gender", "race"], ["female", "male"], ["white", "black"])]


def readings(seed: int, prompts: int, effects: dict[str, float] | None = None, never: str | None = None,
             names: int = 10) -> pd.DataFrame:
    """Yes/no readings as the identity stage hands them to ``outcome_rows``: each prompt asked of
    every cell with the names of two slots (:func:`slots_for`, as a run draws them), a yes rate per
    prompt (uniform 0.6-0.9) plus the cell's effect; the name ``never`` always gets no."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(prompts):
        base = rng.uniform(0.6, 0.9)
        for role, slot in zip(("variant", "control"), slots_for(f"p{p}", "profile", names, 0), strict=True):
            for c in CELLS:
                name = f"{c} {slot}"
                yes = 0.0 if name == never else float(rng.random() < base + (effects or {}).get(c, 0.0))
                rows.append({"prompt_id": f"p{p}", "grp": c, "role": role, "name": name, "outcome_kind": "yes_no",
                             "outcome_value": yes})
    return pd.DataFrame(rows)


def gaps(frame: pd.DataFrame) -> dict[tuple[str, str], dict]:
    """The yes-rate gap rows of ``outcome_rows``, Holm-adjusted over the comparison's pairs that have
    a p-value, as the identity stage does (``p_holm`` set in the details)."""
    from equilens.tasks.assessments.identity.gaps import outcome_rows

    rows = [r for r in outcome_rows(frame, "gender x race", CELLS, MetricsConfig(bootstrap_resamples=20))
            if r["metric"] == "yes_rate_gap"]
    tested = [r for r in rows if "p_value" in r["details"]]
    for r, adjusted in zip(tested, holm_adjust([r["details"]["p_value"] for r in tested]), strict=True):
        r["details"]["p_holm"] = adjusted
    return {(r["group_a"], r["group_b"]): r for r in rows}


def test_a_model_that_says_no_to_one_drawn_name_is_no_finding_about_its_group() -> None:
    """One of the ten female-black names always gets no (a fair model otherwise). Prompts as the only
    sample (the same rows without names: a paired t-test over prompts) call female-black's yes rate
    lower than every other cell's; with the names as a sample of their cell the gap is the same and
    is no finding, since one name of ten carries it."""
    frame = readings(seed=3, prompts=300, never="female-black 3")
    with_names, prompts_only = gaps(frame), gaps(frame.drop(columns=["name"]))
    fb = [pair for pair in with_names if "female-black" in pair]
    assert all(prompts_only[pair]["details"]["p_method"] == "paired t over prompts" for pair in fb)
    assert min(prompts_only[pair]["details"]["p_holm"] for pair in fb) < 0.01  # the old method's false finding
    for pair in fb:
        d = with_names[pair]["details"]
        assert d["gap"] == pytest.approx(prompts_only[pair]["details"]["gap"], abs=1e-12)
        assert d["p_method"].startswith("t over prompts and names")
        assert d["p_holm"] > 0.05, (pair, d)
        assert d["name_share"] > 0.5 and d["gap_df"] < 20  # the names carry the variance, on few df
    assert all(r["details"]["p_holm"] > 0.05 for r in with_names.values())


def test_a_gap_planted_for_every_name_of_a_group_is_still_found() -> None:
    """Yes 20 points less often for every Black name: the four pairs across races are found, with
    the sign of the planted gap, and the two pairs within a race are not."""
    found = gaps(readings(seed=3, prompts=100, effects={"female-black": -0.2, "male-black": -0.2}))
    for (a, b), row in found.items():
        d = row["details"]
        across = ("black" in a) != ("black" in b)
        assert (d["p_holm"] < 0.05) == across, (a, b, d)
        if across:
            assert (row["value"] < 0) == ("black" in a) and row["ci_low"] <= (-0.2 if "black" in a else 0.2) <= \
                row["ci_high"]


def test_each_gap_stores_the_names_it_rests_on_and_flags_few_names() -> None:
    from equilens.tasks.assessments.identity.stages import one_orientation

    ten = gaps(readings(seed=6, prompts=40))[("female-white", "female-black")]["details"]
    assert (ten["names_a"], ten["names_b"], ten["few_names"], ten["name_clusters"]) == (10, 10, False, 10)
    three = gaps(readings(seed=6, prompts=40, names=3))[("female-white", "female-black")]["details"]
    assert (three["names_a"], three["names_b"], three["few_names"]) == (3, 3, True)
    slots = {s for p in range(2) for s in slots_for(f"p{p}", "profile", 10, 0)}  # two prompts: 2 to 4 names
    few = gaps(readings(seed=6, prompts=2))[("female-white", "female-black")]["details"]
    assert (few["names_a"], few["names_b"], few["few_names"]) == (len(slots), len(slots), True)
    row = {"metric": "yes_rate_gap", "group_a": "male-white", "group_b": "female-black", "value": 0.1,
           "ci_low": 0.0, "ci_high": 0.2, "details": {"gap": 0.1, "gap_ci": [0.0, 0.2], "names_a": 4, "names_b": 7}}
    flipped = one_orientation([row])[0]
    assert (flipped["group_a"], flipped["details"]["names_a"], flipped["details"]["names_b"]) == ("female-black", 7, 4)


def test_without_names_the_gap_is_the_paired_t_test_over_prompts() -> None:
    from equilens.tasks.stats.name_sampling import two_way_gap

    rng = np.random.default_rng(0)
    a, b = rng.normal(0.1, 1, 12), rng.normal(0, 1, 12)
    prompts = np.r_[np.arange(12), np.arange(12)]
    gap = two_way_gap(np.r_[a, b], prompts, np.r_[np.ones(12), -np.ones(12)], np.full(24, -1), 0.95)
    d = a - b
    half = student.ppf(0.975, 11) * d.std(ddof=1) / np.sqrt(12)
    assert gap.p_value == pytest.approx(ttest_1samp(d, 0.0).pvalue, rel=1e-12)
    assert (gap.ci_low, gap.ci_high, gap.df) == pytest.approx((d.mean() - half, d.mean() + half, 11), rel=1e-12)
    assert gap.method == "paired t over prompts" and gap.clusters == 0


def test_a_gap_made_by_one_name_worked_by_hand() -> None:
    """Four prompts, two slots (names a0, a1 of cell a; b0, b1 of cell b), each prompt asked with
    both slots. Cell a's name a0 always gets 1, every other answer 0; so each prompt's difference is
    (1 + 0) / 2 - 0 = 0.5, the gap is 0.5, and prompts alone see no spread at all.

    By hand: an answer's score is side / (n m) x (residual + side x delta / 2) with n = 4 prompts,
    m = 2 answers per prompt and cell, delta = 0. For a0's answers the residual is 1 - 0.5, for
    a1's 0 - 0.5, for b's 0: so a prompt's slot-0 total is 0.5 / 8 = 1/16 and its slot-1 total
    -1/16. Slot 0's total over four prompts is S = 1/4, slot 1's -1/4: V_names = 2/16 = 1/8, and
    V_(prompt, name) = 8 x (1/16)^2 = 1/32. The two clusters weigh alike (w = 1/2, c = 2), so the
    names add 2 x (1/8 - 1/32) = 3/16, V_prompts = 0, and SE = sqrt(3/16) = 0.4330. Each cluster's
    E[S^2] is its share of the names' part, (1/4) x (3/16) / (1/2) / 2 = 3/64, plus its noise 4 x
    (1/16)^2 = 1/64: 1/16. The variance's half is the larger of (3/16)^2 / (G* - 1 = 1) = 9/256 and
    2 x 2^2 x ((1/16)^2 - 4 x (1/16)^4 / 3) = 7.96/256, so df = (3/16)^2 / (9/256) = 1, and
    p = 2 P(t_1 > 0.5 / 0.4330) = 0.4544: one name of two is no finding about its cell."""
    from equilens.tasks.stats.name_sampling import name_clusters, two_way_gap

    rows = [(p, role, cell, f"{cell}{slot}", 1.0 if (cell, slot) == ("a", 0) else 0.0)
            for p in range(4) for role, slot in (("variant", p % 2), ("control", 1 - p % 2)) for cell in "ab"]
    prompts, roles, cells, names, values = (np.array(c, dtype=object) for c in zip(*rows, strict=True))
    sides = np.where(cells == "a", 1, -1)
    clusters = name_clusters(prompts, roles, sides, names)
    assert len(set(clusters)) == 2 and clusters[names == "a0"][0] == clusters[names == "b0"][0]
    gap = two_way_gap(values.astype(float), prompts, sides, clusters, 0.95)
    assert (gap.value, gap.prompt_var, gap.name_var, gap.df) == pytest.approx((0.5, 0.0, 3 / 16, 1.0), abs=1e-12)
    assert gap.p_value == pytest.approx(2 * student.sf(0.5 / np.sqrt(3 / 16), 1), rel=1e-12)
    assert gap.p_value == pytest.approx(0.4544, abs=1e-4)
