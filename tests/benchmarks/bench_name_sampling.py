"""Identity outcome gaps with the drawn names as a sample of their group, against a known truth (a
script, not a test).

Run: .venv/bin/python tests/benchmarks/bench_name_sampling.py [--runs 400]

Every simulated run builds the readings an identity run hands its metric stage: ``--prompts``
prompts asked of four cells (gender x race, white and black), each with the names of two of the
cell's 10 slots (:func:`equilens.tasks.inputs.personas.slots_for`, drawn with the run's own seed,
so each run draws its names anew), as variant and control. Yes/no answers are Bernoulli draws at
the prompt's yes rate (uniform 0.3-0.9) plus the cell's and the name's effects; amounts are a
prompt's scale (lognormal) times the cell's and the name's effects times 10% noise per answer. The
comparison's six pairs go through :func:`equilens.tasks.assessments.identity.stages.outcome_rows`,
one Holm family over them and :func:`~equilens.tasks.assessments.identity.stages.detectable_outcome_gaps`,
as in a run. A *finding* is a pair with p_holm < 0.05.

* **new**: the rows as stored, prompts and names as samples
  (:mod:`equilens.tasks.stats.name_sampling`);
* **old**: the same readings without their names, which gives exactly the paired t-test over
  prompts that treated prompts as the only sample.

For a planted gap, **stated** is the power each run's row states at the true gap, averaged over
runs and the four pairs across races: T_df(gap / SE - t_{1 - alpha / (2 m)}) on the row's own SE
and df at Bonferroni's alpha / m over the family (the bar ``min_detectable_gap`` is stated at), and
**at a/m** the share of those pairs found at that bar; **verdict** is the share found by Holm. Each
figure shows its Monte Carlo standard error, sqrt(p (1 - p) / runs).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from equilens.tasks.assessments.identity.stages import detectable_outcome_gaps, outcome_rows
from equilens.tasks.config import MetricsConfig
from equilens.tasks.inputs.personas import slots_for
from equilens.tasks.stats import holm_adjust

CELLS = ["female-white", "female-black", "male-white", "male-black"]
NAMES, ALPHA = 10, 0.05
CFG = MetricsConfig(bootstrap_resamples=0)  # the cells' own rows need no interval here


@dataclass(frozen=True)
class Scenario:
    """A model: ``kind`` (yes_no or number), each cell's effect (a yes rate added, or a share of the
    amount), names with an effect of their own (``(cell, slot) -> effect``; ``never``: that name
    always gets no), and names that differ at random (sd of each name's own effect)."""

    label: str
    kind: str
    prompts: int
    cells: dict[str, float] = field(default_factory=dict)
    names: dict[tuple[str, int], float] = field(default_factory=dict)
    never: tuple[str, int] | None = None
    name_sd: float = 0.0

    @property
    def planted(self) -> bool:
        return bool(self.cells)


SCENARIOS = [
    Scenario("fair, yes/no", "yes_no", 200),
    Scenario("one name always told no, yes/no", "yes_no", 200, never=("female-black", 0)),
    Scenario("names differ at random (sd 0.1 of the yes rate)", "yes_no", 200, name_sd=0.1),
    Scenario("fair, amounts", "number", 40),
    Scenario("one name offered 30% less, amounts", "number", 40, names={("female-black", 0): -0.3}),
    Scenario("names differ at random (sd 5% of the amount)", "number", 40, name_sd=0.05),
    Scenario("yes 20 points rarer for every Black name", "yes_no", 40, cells={"female-black": -0.2, "male-black": -0.2}),
    Scenario("amounts 10% lower for every Black name", "number", 10, cells={"female-black": -0.1, "male-black": -0.1}),
]


def readings(s: Scenario, seed: int) -> pd.DataFrame:
    """One simulated run's readings (the columns ``outcome_rows`` reads)."""
    rng = np.random.default_rng(seed)
    n, per = s.prompts, 2 * len(CELLS)  # variant and control per cell
    slots = np.array([slots_for(f"p{p}", "profile", NAMES, seed) for p in range(n)])
    prompt = np.repeat(np.arange(n), per)
    cell = np.tile(np.repeat(np.arange(len(CELLS)), 2), n)
    slot = slots[prompt, np.tile([0, 1], n * len(CELLS))]
    own = rng.normal(0.0, s.name_sd, (len(CELLS), NAMES)) if s.name_sd else np.zeros((len(CELLS), NAMES))
    for (c, k), effect in s.names.items():
        own[CELLS.index(c), k] += effect
    effect = np.array([s.cells.get(c, 0.0) for c in CELLS])[cell] + own[cell, slot]
    if s.kind == "yes_no":
        value = (rng.random(len(prompt)) < rng.uniform(0.3, 0.9, n)[prompt] + effect).astype(float)
    else:
        value = np.exp(rng.normal(10, 1, n))[prompt] * (1 + effect) * np.exp(rng.normal(0, 0.1, len(prompt)))
    if s.never is not None:
        value[(cell == CELLS.index(s.never[0])) & (slot == s.never[1])] = 0.0
    labels = np.array(CELLS, dtype=object)[cell]
    return pd.DataFrame({"prompt_id": np.char.add("p", prompt.astype(str)), "grp": labels,
                         "role": np.tile(["variant", "control"], n * len(CELLS)),
                         "name": labels + " " + slot.astype(str), "outcome_kind": s.kind, "outcome_value": value})


def judged(frame: pd.DataFrame) -> list[dict]:
    """The comparison's outcome gap rows, Holm-adjusted as one family, with their detectable gaps."""
    rows = [r for r in outcome_rows(frame, "gender x race", CELLS, CFG) if r["group_b"] is not None]
    tested = [r for r in rows if "p_value" in r["details"]]
    for r, adjusted in zip(tested, holm_adjust([r["details"]["p_value"] for r in tested]), strict=True):
        r["details"]["p_holm"] = adjusted
    detectable_outcome_gaps(rows, len(tested), ALPHA)
    return rows


def stated_power(d: dict, gap: float, tests: int) -> float:
    """The power a row states at ``gap``: the inverse of its minimum detectable gap's formula."""
    from scipy.stats import t

    df = float(d["gap_df"])
    return float(t.cdf(abs(gap) / d["gap_se"] - t.ppf(1 - ALPHA / (2 * tests), df), df))


@dataclass
class Tally:
    runs: int = 0
    any_finding: int = 0
    across: int = 0  # pairs across races found by Holm, with the planted sign
    at_bar: int = 0  # the same at Bonferroni's alpha / m
    stated: float = 0.0
    pairs: int = 0
    names_share: float = 0.0


def tally(s: Scenario, rows: list[dict], t: Tally) -> None:
    t.runs += 1
    t.any_finding += any(r["details"].get("p_holm", 1.0) < ALPHA for r in rows)
    t.names_share += float(np.mean([r["details"].get("name_share", 0.0) for r in rows]))
    if not s.planted:
        return
    m = sum("p_value" in r["details"] for r in rows)
    for r in rows:
        a, b, d = r["group_a"], r["group_b"], r["details"]
        if ("black" in a) == ("black" in b):
            continue
        true = s.cells.get(a, 0.0) - s.cells.get(b, 0.0)
        if s.kind == "number":  # relative to the prompt's mean over the four cells
            true /= 1 + np.mean(list(s.cells.values())) / 2
        right = np.sign(r["value"]) == np.sign(true)
        t.pairs += 1
        t.across += bool(right and d.get("p_holm", 1.0) < ALPHA)
        t.at_bar += bool(right and d.get("p_value", 1.0) < ALPHA / m)
        t.stated += stated_power(d, true, m)


def _pct(k: float, n: int) -> str:
    p = k / max(n, 1)
    return f"{p:6.1%} +/- {np.sqrt(p * (1 - p) / max(n, 1)):.1%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400, help="simulated runs per scenario (default 400)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(f"{args.runs} simulated runs per scenario; 4 cells (6 pairs, one Holm family), {NAMES} names per cell\n")
    print(f"{'scenario':<50} {'prompts':>7}  {'new: any finding':>17}  {'old: any finding':>17}  {'names share':>11}")
    planted = []
    for i, s in enumerate(SCENARIOS):
        new, old = Tally(), Tally()
        for run in range(args.runs):
            frame = readings(s, seed=1000 * i + run)
            tally(s, judged(frame), new)
            tally(s, judged(frame.drop(columns=["name"])), old)
        print(f"{s.label:<50} {s.prompts:>7}  {_pct(new.any_finding, new.runs):>17}  "
              f"{_pct(old.any_finding, old.runs):>17}  {new.names_share / new.runs:>11.0%}")
        if s.planted:
            planted.append((s, new, old))
    print("\nPlanted group gaps: the four pairs across races (per pair, over runs)")
    print(f"{'scenario':<50} {'stated':>7}  {'new at a/m':>15}  {'new verdict':>15}  {'old verdict':>15}")
    for s, new, old in planted:
        print(f"{s.label:<50} {new.stated / new.pairs:>7.1%}  {_pct(new.at_bar, new.pairs):>15}  "
              f"{_pct(new.across, new.pairs):>15}  {_pct(old.across, old.pairs):>15}")
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
