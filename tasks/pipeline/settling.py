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
* **Out of reach** (only with ``execution.detect``, in the units of the target metrics ``rule.metrics``),
  for three reasons, the first two at once:

  1. *No value in the target's units*: no planned prompt of the pair's comparison can give a target
     metric a value (a writing task has no amount; a comparison without prompts asking for a figure
     cannot show a gap in amounts). Needs the plan (``LookRule.planned``).
  2. *Not reachable with every planned prompt*: a target row's smallest detectable gap, were all the
     comparison's planned prompts of its kind answered, is above ``detect`` (ten yes/no prompts
     cannot show a difference of 0.1 in yes rates). It is computed as the row's own
     (t_{1-alpha/(2m)} + t_0.8) sd / sqrt(n), at the planned count, from the lower
     :data:`REACH_CONFIDENCE` bound of the per-prompt spread (the chi-square interval of its
     estimate), so a noisy early estimate does not give up a pair that can reach the target. Needs
     the row's ``gap_sd`` (a paired t-test over prompts) and the plan.
  3. *Too far below the target to get there*: were its true gap ``detect``, a statistic this low
     would be seen in few runs. The expected statistic under that gap comes from the pair's own
     minimum detectable gap at this look (a gap of ``min_detectable_gap`` reaches the verdict's bar
     z_{1-alpha/(2m)} with 80% power, so one of ``detect`` has expected z = (z_{1-alpha/(2m)} + z_0.8)
     detect / min_detectable_gap). The pair is out of reach when its z is below that by more than
     the look's O'Brien-Fleming boundary at a two-sided 2 x (1 - power) = 0.4: the chance of settling
     a pair whose true gap is ``detect`` this way is spent over the looks like alpha, most of it late.
     p-values map to z two-sided, z = Phi^-1(1 - p/2), for every test (an approximation for the
     one-sided permutation tests).

  A pair with several target rows (amounts and yes rates) is out of reach when every one that states
  its minimum detectable gap is (and, without any, only by reason 1). The last look settles nothing
  this way (the run ends there anyway). Settling a pair without a finding never raises the
  false-positive rate; it can only give up power, by design little.
* **Settled.** Every pair of the headline comparisons is found or out of reach. *Breakdowns*
  (``LookRule.breakdowns``: an identity run's per-task comparisons) are judged at every look like the
  rest, at the same levels, and reported at the look where the run stops, but never hold it open: a
  user reads the headline judgement first, and a task with a handful of prompts would otherwise keep
  every run going to its last prompt. A run without a futility target stops early only when every
  headline pair is found; a fair model then answers every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from equilens.tasks.metrics.judged import every_pair_judged, judged_metric, number_or_none, paired_families
from equilens.tasks.stats.importing import IMPORTING

POWER = 0.8
"""The power at which a row's ``min_detectable_gap`` is stated; 1 - POWER is the chance, spent over
the looks, of settling a pair whose true gap is the target as out of reach."""
REACH_CONFIDENCE = 0.999
"""A row's gap is unreachable with the planned prompts only when it is even at this one-sided lower
confidence bound of its per-prompt spread."""


@dataclass(frozen=True)
class LookRule:
    """How a run judges its looks: ``looks`` equal batches at two-sided ``alpha``; ``detect`` (in the
    units of ``metrics``) the gap a pair must be able to reach, or None to stop only on findings.
    ``planned``: (comparison, target metric, prompts planned that can give it a value), for each
    comparison whose plan is known (None: no plan at all; see the module docstring); ``breakdowns``:
    the comparisons reported but never waited for."""

    looks: int
    alpha: float
    detect: float | None = None
    metrics: tuple[str, ...] = ()
    planned: tuple[tuple[str, str, int], ...] | None = None
    breakdowns: frozenset[str] = frozenset()

    def planned_for(self, comparison: str) -> dict[str, int] | None:
        """Target metric -> planned prompts of ``comparison``; None where its plan is not known."""
        known = {metric: n for c, metric, n in self.planned or () if c == comparison}
        return known or None

    @property
    def fractions(self) -> tuple[float, ...]:
        from equilens.tasks.stats.sequential import equal_looks

        return equal_looks(self.looks)


@dataclass
class Settlement:
    """What one look decided: the headline pairs found, futile (out of reach) and still open
    (``"attribute: a vs b"``), and the breakdowns' pairs, all of them and those found, which are
    reported but decide nothing."""

    look: int  # 1-based
    looks: int
    prompts: int
    planned: int
    detect: float | None = None
    found: list[str] = field(default_factory=list)
    futile: list[str] = field(default_factory=list)
    open: list[str] = field(default_factory=list)
    breakdowns: list[str] = field(default_factory=list)
    breakdowns_found: list[str] = field(default_factory=list)

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
        if self.breakdowns:
            counted += (f"; breakdowns, reported at this look and not waited for: {len(self.breakdowns_found)} of "
                        f"{len(self.breakdowns)} pair(s) beyond noise")
        if self.settled and not self.last:
            return (f"settled after {self.prompts:,} of {self.planned:,} prompts ({counted}); the other "
                    f"{self.planned - self.prompts:,} were not asked")
        if self.last:
            return f"every planned prompt answered ({counted})"
        return f"not settled ({counted})"


def _families(rows: pd.DataFrame, details: list[dict]) -> dict[str, list[int]]:
    """Positions of each attribute's judged rows with a p-value: the family the verdict judges."""
    out: dict[str, list[int]] = {}
    paired = paired_families()
    whole = {family for family in paired if every_pair_judged(family)}  # read once, not per row
    for i, (family, attribute, a, b, metric) in enumerate(zip(
            rows["family"], rows["attribute"], rows["group_a"], rows["group_b"], rows["metric"], strict=True)):
        d = details[i]
        if (family in paired and isinstance(b, str) and b != a
                and number_or_none(d.get("p_value")) is not None
                and (judged_metric(metric, d) or family in whole)):
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
    found, futile, open_, reported, reported_found = set(), set(), set(), set(), set()
    stated = {"look": look, "looks": rule.looks, "prompts": prompts, "planned": planned}
    for attribute, family in _families(rows, details).items():
        levels = holm_levels([float(details[i]["p_value"]) for i in family], rule.fractions, look - 1, rule.alpha)
        for i, level in zip(family, levels, strict=True):
            details[i]["look"] = {**stated, "level": level}
        pairs: dict[str, list[int]] = {}
        for i in family:
            pairs.setdefault(f"{attribute}: {rows.at[i, 'group_a']} vs {rows.at[i, 'group_b']}", []).append(i)
        plan = rule.planned_for(attribute)
        for pair, members in pairs.items():
            hit = any(beyond_noise(details[i], rows.at[i, "metric"], rule.alpha) for i in members)
            if attribute in rule.breakdowns:
                reported.add(pair)
                if hit:
                    reported_found.add(pair)
            elif hit:
                found.add(pair)
            elif _futile({rows.at[i, "metric"]: details[i] for i in members if rows.at[i, "metric"] in rule.metrics},
                         plan, rule, look):
                futile.add(pair)
            else:
                open_.add(pair)
    settlement = Settlement(look, rule.looks, prompts, planned, rule.detect, sorted(found), sorted(futile),
                            sorted(open_), sorted(reported), sorted(reported_found))
    if settlement.stops:
        for d in details:
            if "look" in d:
                d["look"]["stop"] = settlement.reason()
    rows["details"] = details
    return rows, settlement


def _futile(targets: dict[str, dict], plan: dict[str, int] | None, rule: LookRule, look: int) -> bool:
    """Is ``rule.detect`` out of reach for a pair, given its judged target rows (metric -> details)
    and its comparison's plan (target metric -> planned prompts; None: unknown)? False without a
    target and at the last look (see the module docstring)."""
    from equilens.tasks.stats.sequential import obrien_fleming_plan
    with IMPORTING:
        from scipy.stats import norm

    if rule.detect is None or look >= rule.looks:
        return False
    if plan is not None and all(n < 2 for n in plan.values()):
        return True  # no planned prompt can give the pair a value in the target's units
    stated = {m: d for m, d in targets.items() if (number_or_none(d.get("min_detectable_gap")) or 0) > 0}
    if not stated:
        return False
    margin = obrien_fleming_plan(rule.fractions, 2 * (1 - POWER)).boundaries[look - 1]
    for metric, d in stated.items():
        reach = reachable_gap(d, plan.get(metric, 0), rule.alpha) if plan is not None else None
        if reach is not None and reach > rule.detect:
            continue  # even every planned prompt could not show a gap of ``detect``
        tests = max(1, int(number_or_none(d.get("min_detectable_gap_tests")) or 1))
        per_unit = (float(norm.isf(rule.alpha / (2 * tests))) + float(norm.ppf(POWER))) / d["min_detectable_gap"]
        z = float(norm.isf(min(max(float(d["p_value"]), 1e-300), 1.0) / 2))
        if z >= per_unit * rule.detect - margin:  # a statistic this high is still likely under the target
            return False
    return True


def reachable_gap(d: dict, planned: int, alpha: float, power: float = POWER,
                  confidence: float = REACH_CONFIDENCE) -> float | None:
    """The smallest gap a paired t-test row (``details`` with ``gap_sd`` over ``prompts``) could detect
    with ``power`` were ``planned`` prompts answered (at least the ones it has), at its Holm family's
    first bar alpha / (2 m), from the lower ``confidence`` bound of its spread: (t_{1-alpha/(2m)} +
    t_power) sd_low / sqrt(planned) on planned - 1 degrees of freedom. None without a spread."""
    import math

    with IMPORTING:
        from scipy.stats import chi2, t

    sd, n = number_or_none(d.get("gap_sd")), int(number_or_none(d.get("prompts")) or 0)
    if sd is None or sd <= 0 or n < 2:
        return None
    tests = max(1, int(number_or_none(d.get("min_detectable_gap_tests")) or 1))
    total = max(int(planned), n)
    low = sd * math.sqrt((n - 1) / float(chi2.ppf(confidence, n - 1)))
    step = float(t.ppf(1 - alpha / (2 * tests), total - 1)) + float(t.ppf(power, total - 1))
    return step * low / math.sqrt(total)
