"""Judging a verdict after each batch of prompts, and saying when it is settled.

A run with ``execution.stop_when: settled`` answers its prompts in ``execution.looks`` batches of
equal size and, after each, computes its metric rows on every prompt answered so far. This module
turns those rows into the look's verdict and says whether the run may stop:

* **The look's level.** Each attribute's (or identity comparison's) judged rows are one Holm family,
  as in a run that answers everything at once. At look k of K the family is judged by the
  sequentially rejective Holm procedure over O'Brien-Fleming plans
  (:func:`equilens.tasks.stats.sequential.holm_levels`): the level each row's step faced is stored in
  ``details.look.level``, and the verdict compares the row's own p-value with it. Over all the looks
  a fair model is called biased in at most alpha of runs, wherever the run stops.
* **Found.** A pair of groups is found once the verdict calls any of its judged rows beyond noise at
  the look's level.
* **Futile** (only with ``execution.detect``). A pair that is not found is settled as well when
  the gap it shows is too far below the gap the run is meant to detect for it to get there: were
  its true gap ``detect``, a statistic this low would be seen in few runs. The expected statistic
  under that gap comes from the pair's own minimum detectable gap at this look (a gap of
  ``min_detectable_gap`` reaches the verdict's bar z_{1-alpha/(2m)} with 80% power, so one of
  ``detect`` has expected z = (z_{1-alpha/(2m)} + z_0.8) detect / min_detectable_gap). The pair is
  out of reach when its z is below that by more than the look's O'Brien-Fleming boundary at a
  two-sided 2 x (1 - power) = 0.4: the chance of settling a pair whose true gap is ``detect`` this way
  is spent over the looks like alpha, most of it late. p-values map to z two-sided,
  z = Phi^-1(1 - p/2), for every test (an approximation for the one-sided permutation tests). A
  target row must state its minimum detectable gap; the last look settles nothing this way (the run
  ends there anyway). Settling a pair without a finding never raises the false-positive rate; it
  can only give up power, by design little.
* **Settled.** Every judged pair is found or futile. A run without a futility target stops early
  only when every pair is found; a fair model then answers every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from equilens.tasks.metrics.judged import PAIRED_FAMILIES, judged_metric, number_or_none

POWER = 0.8
"""The power at which a row's ``min_detectable_gap`` is stated; 1 - POWER is the chance, spent over
the looks, of settling a pair whose true gap is the target as out of reach."""


@dataclass(frozen=True)
class LookRule:
    """How a run judges its looks: ``looks`` equal batches at two-sided ``alpha``; ``detect`` (in the
    units of ``metrics``) the gap a pair must be able to reach, or None to stop only on findings."""

    looks: int
    alpha: float
    detect: float | None = None
    metrics: tuple[str, ...] = ()

    @property
    def fractions(self) -> tuple[float, ...]:
        from equilens.tasks.stats.sequential import equal_looks

        return equal_looks(self.looks)


@dataclass
class Settlement:
    """What one look decided: the pairs found, futile and still open (``"attribute: a vs b"``)."""

    look: int  # 1-based
    looks: int
    prompts: int
    planned: int
    detect: float | None = None
    found: list[str] = field(default_factory=list)
    futile: list[str] = field(default_factory=list)
    open: list[str] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return bool(self.found or self.futile) and not self.open

    @property
    def last(self) -> bool:
        return self.look >= self.looks or self.prompts >= self.planned

    @property
    def stops(self) -> bool:
        return self.settled or self.last

    def reason(self) -> str:
        """Why the run stops (or goes on) after this look, in words."""
        parts = []
        if self.found:
            parts.append(f"{len(self.found)} pair(s) beyond noise")
        if self.futile:
            parts.append(f"{len(self.futile)} pair(s) that cannot reach a gap of {self.detect:g} with the prompts left")
        if self.open:
            parts.append(f"{len(self.open)} pair(s) still open")
        counted = ", ".join(parts) or "no judged pair yet"
        if self.settled and not self.last:
            return (f"settled after {self.prompts:,} of {self.planned:,} prompts ({counted}); the other "
                    f"{self.planned - self.prompts:,} were not asked")
        if self.last:
            return f"every planned prompt answered ({counted})"
        return f"not settled ({counted})"


def _families(rows: pd.DataFrame, details: list[dict]) -> dict[str, list[int]]:
    """Positions of each attribute's judged rows with a p-value: the family the verdict judges."""
    out: dict[str, list[int]] = {}
    for i, (family, attribute, a, b, metric) in enumerate(zip(
            rows["family"], rows["attribute"], rows["group_a"], rows["group_b"], rows["metric"], strict=True)):
        d = details[i]
        if (family in PAIRED_FAMILIES and isinstance(b, str) and b != a
                and number_or_none(d.get("p_value")) is not None
                and (judged_metric(metric, d) or family == "identity")):
            out.setdefault(str(attribute), []).append(i)
    return out


def judge_look(metrics: pd.DataFrame, rule: LookRule, look: int, prompts: int,
               planned: int) -> tuple[pd.DataFrame, Settlement]:
    """The rows of look ``look`` (1-based; ``prompts`` of ``planned`` answered) with ``details.look``
    set on every judged row, and what the look settles (see the module docstring). A look that stops
    the run writes its reason into ``details.look.stop``, where the verdict reads it."""
    from equilens.tasks.metrics.judged import beyond_noise, details_of
    from equilens.tasks.stats.sequential import holm_levels

    rows = metrics.reset_index(drop=True).copy()
    details = [dict(details_of(x)) for x in rows["details"]]
    found, futile, open_ = set(), set(), set()
    stated = {"look": look, "looks": rule.looks, "prompts": prompts, "planned": planned}
    for attribute, family in _families(rows, details).items():
        levels = holm_levels([float(details[i]["p_value"]) for i in family], rule.fractions, look - 1, rule.alpha)
        for i, level in zip(family, levels, strict=True):
            details[i]["look"] = {**stated, "level": level}
        pairs: dict[str, list[int]] = {}
        for i in family:
            pairs.setdefault(f"{attribute}: {rows.at[i, 'group_a']} vs {rows.at[i, 'group_b']}", []).append(i)
        for pair, members in pairs.items():
            if any(beyond_noise(details[i], rows.at[i, "metric"], rule.alpha) for i in members):
                found.add(pair)
            elif _futile([details[i] for i in members if rows.at[i, "metric"] in rule.metrics], rule, look):
                futile.add(pair)
            else:
                open_.add(pair)
    settlement = Settlement(look, rule.looks, prompts, planned, rule.detect, sorted(found), sorted(futile),
                            sorted(open_))
    if settlement.stops:
        for d in details:
            if "look" in d:
                d["look"]["stop"] = settlement.reason()
    rows["details"] = details
    return rows, settlement


def _futile(targets: list[dict], rule: LookRule, look: int) -> bool:
    """Is ``rule.detect`` out of reach for every one of a pair's target rows? False without a
    target, at the last look, or when no target row states its minimum detectable gap (see the
    module docstring)."""
    from equilens.tasks.stats.sequential import obrien_fleming_plan
    from scipy.stats import norm

    if rule.detect is None or look >= rule.looks:
        return False
    stated = [d for d in targets if (number_or_none(d.get("min_detectable_gap")) or 0) > 0]
    if not stated:
        return False
    margin = obrien_fleming_plan(rule.fractions, 2 * (1 - POWER)).boundaries[look - 1]
    for d in stated:
        tests = max(1, int(number_or_none(d.get("min_detectable_gap_tests")) or 1))
        per_unit = (float(norm.isf(rule.alpha / (2 * tests))) + float(norm.ppf(POWER))) / d["min_detectable_gap"]
        z = float(norm.isf(min(max(float(d["p_value"]), 1e-300), 1.0) / 2))
        if z >= per_unit * rule.detect - margin:  # a statistic this high is still likely under the target
            return False
    return True
