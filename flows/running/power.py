"""A power plan before the run: how many prompts a config needs to detect a gap of a given size.

``equilens run CONFIG --plan --detect 0.05 [--metric M] [--pilot N]`` (and :func:`equilens.power_plan`)
answers from a **pilot**: the config's first N prompts (default a tenth, at least 10) run for real
through the same flow and stored as a run of its own. Its calls are cached, so the full run does
not pay for them again (an http target's only with ``llm.target_version`` set). Every judged pair
of the pilot states its minimum detectable gap: the smallest true gap the verdict's own rule (its
test, Holm family and alpha) finds with 80% power, found by planting gaps in the pilot's answers
(parity, similarity) or from the spread of the per-prompt differences (outcome gaps). That gap
shrinks as 1 / sqrt(prompts), so a pair needs ``pilot x (detectable / gap)^2`` prompts, with a range
from the uncertainty of the pilot's spread
(:func:`equilens.tasks.stats.power_plan.prompts_from_detectable_gap`). The plan is the largest
count over the pairs, so that every pair reaches the gap; calls and cost scale from the config's
own plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from equilens.tasks.errors import ConfigError
from equilens.tasks.metrics.judged import planned_metrics

PILOT_SHARE, PILOT_MIN = 0.1, 10


@dataclass
class PairNeed:
    attribute: str
    pair: str
    metric: str
    detectable: float  # at the pilot's size
    prompts: int
    low: int
    high: int


@dataclass
class PowerPlan:
    gap: float
    pilot_run: str
    pilot_prompts: int
    total_prompts: int | None
    calls_per_prompt: float | None
    cost_per_prompt: float | None
    needs: list[PairNeed] = field(default_factory=list)
    skipped: str = ""
    reused: bool = True
    """Whether the full run reads the pilot's answers from the cache (not for an http target without
    ``llm.target_version``: :mod:`equilens.tasks.llm.reuse`)."""

    @property
    def worst(self) -> PairNeed | None:
        return max(self.needs, key=lambda n: n.prompts) if self.needs else None

    def lines(self) -> list[str]:
        cached = ("its calls are cached: the full run does not pay for them again" if self.reused else
                  "an http target's answers are reused by another run only with llm.target_version set")
        out = [f"power plan: detect a gap of {self.gap:g} with 80% power at the verdict's own rule",
               f"  pilot: the first {self.pilot_prompts:,} prompts, run {self.pilot_run} ({cached})"]
        worst = self.worst
        if worst is None:
            out.append(f"  no plan: {self.skipped}")
            return out
        out.append(f"  prompts needed: {worst.prompts:,} (range {worst.low:,}-{worst.high:,} from the pilot's "
                   f"spread), set by {worst.metric} {worst.pair} ({worst.attribute}), whose smallest detectable "
                   f"gap at {self.pilot_prompts:,} prompts is {worst.detectable:.3g}")
        if self.calls_per_prompt is not None:
            calls = math.ceil(worst.prompts * self.calls_per_prompt)
            cost = (f", at most {worst.prompts * self.cost_per_prompt:,.2f} at the configured prices"
                    if self.cost_per_prompt is not None else "")
            out.append(f"  LLM calls: about {calls:,} ({self.calls_per_prompt:g} per prompt){cost}")
        if self.total_prompts is not None:
            enough = worst.prompts <= self.total_prompts
            out.append(f"  the config has {self.total_prompts:,} prompts: "
                       + ("enough" if enough else f"{worst.prompts - self.total_prompts:,} too few for this gap"))
        for n in sorted(self.needs, key=lambda n: -n.prompts)[1:6]:
            out.append(f"    {n.metric} {n.pair} ({n.attribute}): {n.prompts:,} ({n.low:,}-{n.high:,})")
        return out


def pilot_size(total: int | None, pilot: int | None) -> int:
    if pilot is not None:
        if pilot < 3:
            raise ConfigError(f"--pilot {pilot}: a pilot needs at least 3 prompts to state a spread.")
        return pilot if total is None else min(pilot, total)
    wanted = max(PILOT_MIN, math.ceil(PILOT_SHARE * (total or 0)))
    return wanted if total is None else min(wanted, total)


def needs_from(metrics: pd.DataFrame, gap: float, pilot_prompts: int, metric: str | None = None) -> list[PairNeed]:
    """Prompts each judged pair of a pilot's metric rows needs to detect ``gap`` (see the module docstring)."""
    from equilens.tasks.reporting.verdict import details_of
    from equilens.tasks.stats.power_plan import prompts_from_detectable_gap

    wanted = planned_metrics(metric)
    out = []
    for _, r in metrics[metrics["metric"].isin(wanted)].iterrows():
        d = details_of(r["details"])
        detectable = d.get("min_detectable_gap")
        if not isinstance(detectable, (int, float)) or not detectable > 0:
            continue
        n = int(d.get("prompts") or pilot_prompts)
        if n < 3:
            continue
        prompts, low, high = prompts_from_detectable_gap(float(detectable), n, gap)
        out.append(PairNeed(str(r["attribute"]), f"{r['group_a']} vs {r['group_b']}", str(r["metric"]),
                            float(detectable), prompts, low, high))
    return out


def check_request(cfg: Any, gap: float, metric: str | None) -> None:  # a RunConfig
    """A plan request that cannot be answered is refused before anything starts: a gap that is not
    finite, not positive or below what a metric resolves
    (:func:`~equilens.tasks.stats.power_plan.gap_problem`), an unknown metric, a config without prompts."""
    from equilens.tasks.metrics import METRICS
    from equilens.tasks.stats.power_plan import gap_problem

    problem = gap_problem(gap)
    if problem:
        raise ConfigError(f"--detect {gap:g}: {problem}")
    if metric is not None:
        METRICS.get(metric)  # an unknown name lists the known ones
    if cfg.prompts is None:
        raise ConfigError(f"a {cfg.assessment} run reads no prompts section: --detect plans prompts, for the "
                          "counterfactual and identity assessments.")


def power_plan(cfg: Any, gap: float, metric: str | None = None, pilot: int | None = None,
               run: Any = None) -> PowerPlan:  # a RunConfig; the flow runner
    """The plan of ``cfg`` for detecting ``gap`` (see the module docstring). ``run(config) -> summary``
    runs the pilot (default: the config's own flow)."""
    from equilens.flows.running.plan import make_plan
    from equilens.tasks.storage.store import Store

    check_request(cfg, gap, metric)
    full = make_plan(cfg)
    n = pilot_size(full.prompts, pilot)
    pilot_cfg = cfg.model_copy(update={"name": f"{cfg.name}-pilot",
                                       "prompts": cfg.prompts.model_copy(update={"limit": n})})
    if run is None:
        from equilens.flows.running.dispatch import flow_for

        def run(c: Any) -> dict:
            return flow_for(c)(c)

    summary = run(pilot_cfg)
    metrics = Store(cfg.storage.duckdb_path).query("SELECT * FROM metrics WHERE run_id = ?", [summary["run_id"]])
    per_prompt = (full.total_calls / full.prompts) if full.total_calls is not None and full.prompts else None
    cost = full.cost / full.prompts if full.cost is not None and full.prompts else None
    needs = needs_from(metrics, gap, n, metric)
    skipped = "" if needs else _why_none(metrics, metric)
    reused = cfg.llm.provider != "http" or cfg.llm.target_version is not None
    return PowerPlan(gap, summary["run_id"], n, full.prompts, per_prompt, cost, needs, skipped, reused)


def _why_none(metrics: pd.DataFrame, metric: str | None) -> str:
    """Why a pilot's pairs state no detectable gap: their own reason where they give one."""
    from equilens.tasks.reporting.verdict import details_of

    wanted = planned_metrics(metric)
    reasons = sorted({str(details_of(d).get("min_detectable_gap_skipped")) for d in
                      metrics.loc[metrics["metric"].isin(wanted), "details"]
                      if details_of(d).get("min_detectable_gap_skipped")})
    if reasons:
        return f"the pilot's pairs state no detectable gap: {reasons[0]}"
    return (f"the pilot's pairs state no detectable gap for {', '.join(wanted)} (too few "
            "prompts with answers to judge, or a metric the verdict does not judge): try a larger --pilot")
