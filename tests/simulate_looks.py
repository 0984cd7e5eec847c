"""Runs that stop when settled, simulated against a known truth.

Each simulated run asks ``prompts`` prompts of a model whose amounts for each cell are known: a
per-prompt level shared by every cell, the cell's own effect (0 for a fair model), and noise. At
each look the identity assessment's outcome rows are built from the prompts answered so far (the
paired t-test over prompts, the Holm family of the comparison's pairs, each pair's minimum
detectable gap by :func:`equilens.tasks.assessments.identity.gaps.detectable_outcome_gaps`) and judged by
the same :func:`equilens.tasks.pipeline.settling.judge_look` and verdict a real run uses. A fixed
design is the same run judged once, on every prompt. Used by ``tests/test_stopping.py`` and
``tests/benchmarks/bench_stopping.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from equilens.tasks.assessments.identity.gaps import detectable_outcome_gaps
from equilens.tasks.pipeline.settling import LookRule, judge_look
from equilens.tasks.reporting.verdict import attribute_verdict
from equilens.tasks.stats import holm_adjust
from scipy.stats import t as student_t

ALPHA, LABEL = 0.05, "gender x race"


def stated_gap(prompts: int, cells: int, sd: float, alpha: float = ALPHA) -> float:
    """The smallest gap a fixed run of ``prompts`` states it can detect for one pair, for per-prompt
    differences of spread ``sd`` (the formula of the outcome rows, over the comparison's pairs)."""
    tests = cells * (cells - 1) // 2
    return float((student_t.ppf(1 - alpha / (2 * tests), prompts - 1) + student_t.ppf(0.8, prompts - 1))
                 * sd / np.sqrt(prompts))


def outcome_rows(values: np.ndarray, alpha: float = ALPHA) -> pd.DataFrame:
    """The comparison's pair rows over the prompts of ``values`` (prompts x cells)."""
    records = []
    for a, b in combinations(range(values.shape[1]), 2):
        d = values[:, a] - values[:, b]
        n, sd = len(d), float(np.std(d, ddof=1))
        details = {"prompts": n, "gap": float(d.mean()), "gap_sd": sd, "noise_floor": 0.0, "kind": "number",
                   "gap_ci": [float(d.mean()), float(d.mean())]}
        if sd > 0:
            t = d.mean() / (sd / np.sqrt(n))
            details |= {"p_value": float(2 * student_t.sf(abs(t), n - 1)), "p_method": "paired t over prompts"}
        records.append({"family": "identity", "attribute": LABEL, "group_a": f"cell{a}", "group_b": f"cell{b}",
                        "metric": "number_outcome_gap", "value": float(d.mean()), "details": details})
    tested = [r for r in records if "p_value" in r["details"]]
    for r, adjusted in zip(tested, holm_adjust([r["details"]["p_value"] for r in tested]), strict=True):
        r["details"]["p_holm"] = adjusted
    detectable_outcome_gaps(records, len(tested), alpha)
    return pd.DataFrame(records)


@dataclass(frozen=True)
class Model:
    """A model's amounts: each cell's effect, the spread of a prompt's level and of its noise; a
    deterministic one answers each (prompt, cell) once, rounded to ``step`` (many ties)."""

    effects: tuple[float, ...]
    noise: float = 1.0
    level: float = 2.0
    deterministic: bool = False
    step: float = 0.5

    @property
    def sd(self) -> float:
        """The spread of a pair's per-prompt difference."""
        samples = 1 if self.deterministic else 2  # a sampling model's two answers are averaged
        return float(np.sqrt(2 / samples) * self.noise)

    def answers(self, rng: np.random.Generator, prompts: int) -> np.ndarray:
        cells = len(self.effects)
        level = rng.normal(0, self.level, (prompts, 1))
        if self.deterministic:
            raw = level + np.array(self.effects) + rng.normal(0, self.noise, (prompts, cells))
            return np.round(raw / self.step) * self.step
        return level + np.array(self.effects) + rng.normal(0, self.noise, (prompts, cells, 2)).mean(axis=2)


@dataclass
class Outcome:
    fired: float  # share of runs whose verdict found a gap
    used: float  # mean share of the planned prompts (and calls) answered
    looks: float  # mean look the runs stopped at


def simulate(model: Model, prompts: int, runs: int, looks: int = 5, detect: float | None = None,
             seed: int = 0, fixed: bool = False) -> Outcome:
    """``runs`` runs of ``prompts`` planned prompts with ``execution.stop_when: settled`` (or the
    fixed design, ``fixed``)."""
    rng = np.random.default_rng(seed)
    rule = LookRule(looks, ALPHA, detect, ("number_outcome_gap",), planned=((LABEL, "number_outcome_gap", prompts),))
    fired = used = stopped_at = 0.0
    for _ in range(runs):
        values = model.answers(rng, prompts)
        if fixed:
            verdict = attribute_verdict(LABEL, outcome_rows(values), ALPHA)
            fired += bool(verdict.beyond_noise)
            used += 1.0
            stopped_at += 1
            continue
        for look in range(1, looks + 1):
            n = -(-prompts * look // looks)
            rows, settlement = judge_look(outcome_rows(values[:n]), rule, look, n, prompts)
            if settlement.stops:
                fired += bool(attribute_verdict(LABEL, rows, ALPHA).beyond_noise)
                used += n / prompts
                stopped_at += look
                break
    return Outcome(fired / runs, used / runs, stopped_at / runs)
