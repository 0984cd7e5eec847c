"""Answering a run's prompts in looks, and stopping once its verdict is settled.

With ``execution.stop_when: settled`` the counterfactual and identity flows answer their prompts in
``execution.looks`` batches. The order is drawn at random (``metrics.seed``), spread so that every
look holds an equal share of each kind of prompt (:func:`interleave`: an identity prompt's outcome
kind and task, a counterfactual prompt's attributes; a comparison's information then grows with the
looks as the plan assumes), and stored in the ``prompt_order`` table; a later run of the same name
keeps the order of the prompts it shares with the newest earlier sequence and appends new prompts
after them, so resuming a stopped run with more prompts continues the same sequence (and its
answered prompts come from the response cache).

After each batch the flow computes its metric rows on every prompt answered so far and hands them
to :meth:`Looks.judge`, which judges them at the alpha spent by that look
(:mod:`equilens.tasks.pipeline.settling`), stores the look in the ``looks`` table, and says whether to
stop. The rule knows the plan (:func:`with_plan`): how many prompts can give each comparison's
target metric a value, and which comparisons are breakdowns (an identity run's per-task ones),
reported at the look where the run stops but never waited for. The decision is taken in the flow,
between batches, whatever the task runner (threads or Dask: a batch's shards are all awaited before
its look). With ``stop_when: never`` (the default) there is one batch of every prompt and the rows
are returned unjudged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.catalog import ASSESSMENTS
from equilens.tasks.config import RunConfig
from equilens.tasks.pipeline.settling import LookRule, Settlement, judge_look


def look_rule(config: RunConfig) -> LookRule | None:
    """The rule a run judges its looks by, or None when it answers every prompt at once. A gap to
    detect is measured in ``execution.detect_metric``, else in the headline's units: the counterfactual
    verdict's headline metric, or an identity run's outcome gaps (amounts, yes rates, first choices)."""
    from equilens.tasks.metrics.judged import HEADLINE

    exe = config.execution
    if exe.stop_when != "settled":
        return None
    own = ASSESSMENTS.get(config.assessment).load_hooks().stop_targets
    if exe.detect_metric:
        targets: tuple[str, ...] = (exe.detect_metric,)
    elif own is not None:
        targets = own(config)
    else:
        targets = (HEADLINE,)
    return LookRule(exe.looks, 1 - config.metrics.confidence, exe.detect, targets)


def with_plan(rule: LookRule, config: RunConfig, variants: pd.DataFrame, log: Any) -> LookRule:
    """``rule`` with what the run plans to ask: per comparison (an attribute, an identity signal and,
    per task, its breakdown), how many prompts can give each target metric a value (an outcome gap
    only the prompts asking for that outcome, any other metric every prompt), and which comparisons
    are breakdowns (reported, never waited for). A headline comparison none of whose planned prompts
    can give a target a value keeps no plan (its pairs settle only when found), with a warning."""
    from equilens.tasks.metrics import outcome_metrics

    outcome_metric = {pair: kind for kind, (_, pair) in outcome_metrics().items()}
    prompts = variants.drop_duplicates(["attribute", "prompt_id"])
    kinds = pd.Series([None] * len(prompts), index=prompts.index, dtype=object)
    groups: list[tuple[str, pd.Index, bool]] = [(str(a), part.index, False)
                                                for a, part in prompts.groupby("attribute", sort=True)]
    own = ASSESSMENTS.get(config.assessment).load_hooks().look_groups
    if own is not None:  # identity: each prompt's outcome kind, and its per-task breakdowns
        kinds, more = own(config, prompts)
        groups += more
    planned, breakdowns = [], set()
    for label, index, breakdown in groups:
        counts = {m: int(kinds[index].eq(outcome_metric[m]).sum()) if m in outcome_metric else len(index)
                  for m in rule.metrics}
        if breakdown:
            breakdowns.add(label)
        elif rule.detect is not None and all(n < 2 for n in counts.values()):
            log.warning("execution.detect: no two prompts of %s can give %s a value, so no gap of %g can be "
                        "measured there: its pairs settle only when found", label, " or ".join(rule.metrics),
                        rule.detect)
            continue
        planned += [(label, m, n) for m, n in counts.items()]
    return replace(rule, planned=tuple(planned), breakdowns=frozenset(breakdowns))


def sequence_order(store: Any, config: RunConfig, run_id: str, prompt_ids: list[str],
                   strata: dict[str, tuple] | None = None) -> list[str]:
    """The order the run answers ``prompt_ids`` in: the newest earlier sequence of a run of this name
    and flow first (the prompts it shares, in its order), then the others in an order drawn with
    ``metrics.seed`` and spread over ``strata`` (prompt id -> its stratum, outermost level first; see
    :func:`interleave`)."""
    earlier = store.query(
        "SELECT o.prompt_id FROM prompt_order o WHERE o.run_id = (SELECT r.run_id FROM runs r WHERE r.name = ? "
        "AND r.flow = (SELECT flow FROM runs WHERE run_id = ?) AND r.run_id <> ? AND r.run_id IN "
        "(SELECT run_id FROM prompt_order) ORDER BY r.started_at DESC LIMIT 1) ORDER BY o.position",
        [config.name, run_id, run_id])
    wanted = set(prompt_ids)
    kept = [p for p in earlier["prompt_id"] if p in wanted] if len(earlier) else []
    seen = set(kept)
    rest = sorted(p for p in wanted if p not in seen)
    drawn = [rest[i] for i in np.random.default_rng(config.metrics.seed).permutation(len(rest))]
    return kept + interleave(drawn, strata or {})


def interleave(order: list[str], strata: dict[str, tuple]) -> list[str]:
    """``order`` rearranged so that every prefix of it (every look) holds each stratum's share of the
    prompts as nearly as whole prompts can, level by level: the outermost level of ``strata`` first
    (an identity prompt's outcome kind), then within it the next (its task). Each stratum of n keeps
    its prompts in their order in ``order`` and places its j-th at (j + 1/2) / n of the sequence
    (Webster's rounding); strata at the same place go in the order they first appear in ``order``, so
    a single stratum keeps ``order`` as it is. Prompts without a stratum form one of their own."""
    if not order or not any(strata.get(p) for p in order):
        return list(order)
    groups: dict[object, list[str]] = {}
    for p in order:
        groups.setdefault((strata.get(p) or (None,))[0], []).append(p)
    placed = []
    for rank, members in enumerate(groups.values()):
        inner = interleave(members, {p: strata[p][1:] for p in members if strata.get(p)})
        placed += [((j + 0.5) / len(inner), rank, p) for j, p in enumerate(inner)]
    return [p for *_, p in sorted(placed)]


def prompt_strata(config: RunConfig, variants: pd.DataFrame) -> dict[str, tuple]:
    """Each prompt's stratum for :func:`interleave`: the assessment's own (``prompt_strata``: an
    identity prompt's outcome kind and task), else a prompt's attributes, so every look holds an
    equal share of each attribute's prompts."""
    own = ASSESSMENTS.get(config.assessment).load_hooks().prompt_strata
    if own is not None:
        return own(config, variants)
    ids = variants["prompt_id"].astype(str)
    return {p: (tuple(sorted(set(map(str, part)))),) for p, part in variants["attribute"].groupby(ids)}


@dataclass
class Looks:
    """The looks of one run: the batches to answer, each look's judgement, and the stop."""

    rule: LookRule | None
    order: list[str]
    run_id: str
    store: Any
    log: Any
    planned_calls: int = 0
    settlements: list[Settlement] = field(default_factory=list)
    answered: list[pd.DataFrame] = field(default_factory=list)  # each look's answers
    stopped: bool = False

    @classmethod
    def start(cls, run: Any, config: RunConfig, variants: pd.DataFrame) -> Looks:  # an AssessmentRun
        """The looks of ``run`` over the distinct prompts of ``variants`` (in order of first appearance),
        each variant asked ``llm.count`` times."""
        rule = look_rule(config)
        ids = list(dict.fromkeys(str(p) for p in variants["prompt_id"]))
        calls = len(variants) * config.llm.count
        if rule is None:
            return cls(None, ids, run.run_id, run.store, run.log, calls)
        if len(ids) < rule.looks:  # a look of no prompt would judge nothing new
            run.log.warning("execution.looks: %d looks but only %d prompt(s) to answer: %d look(s) of one prompt each",
                            rule.looks, len(ids), len(ids))
            rule = replace(rule, looks=max(1, len(ids)))
        rule = with_plan(rule, config, variants, run.log)
        order = sequence_order(run.store, config, run.run_id, ids, prompt_strata(config, variants))
        ends = [_upto(len(order), k, rule.looks) for k in range(1, rule.looks + 1)]
        run.store.append("prompt_order", pd.DataFrame({
            "run_id": run.run_id, "prompt_id": order, "position": range(len(order)),
            "look": np.searchsorted(ends, np.arange(len(order)), side="right") + 1}))
        _warn_unreachable(run.log, config, rule)
        return cls(rule, order, run.run_id, run.store, run.log, calls)

    @property
    def planned(self) -> int:
        return len(self.order)

    def batches(self) -> Iterator[list[str]]:
        """The prompt ids each look adds, until a look stops the run."""
        if self.rule is None:
            yield self.order
            return
        done = 0
        for look in range(1, self.rule.looks + 1):
            if self.stopped:
                return
            upto = _upto(self.planned, look, self.rule.looks)
            batch, done = self.order[done:upto], upto
            yield batch

    def answer(self, rec: Any, config: RunConfig, variants: pd.DataFrame, batch: list[str], summary: dict,
               **kwargs: Any) -> pd.DataFrame:  # a RunRecorder
        """Every answer so far: the ``llm`` stage on the variants of ``batch``'s prompts, added to the
        answers of the looks before (all of ``variants`` in a run without looks). The first look
        checks the whole run's budget before any call."""
        from equilens.tasks.orchestration.run_record import response_counts
        from equilens.tasks.pipeline.prefect_tasks import answer_stage, check_variants_budget

        if self.rule is None:
            return answer_stage(rec, config, variants, summary, **kwargs)
        if not self.answered:
            check_variants_budget(variants, config.llm)
        wanted = set(batch)
        self.answered.append(answer_stage(rec, config, variants[variants["prompt_id"].astype(str).isin(wanted)],
                                          summary, **kwargs))
        responses = pd.concat(self.answered, ignore_index=True)
        summary["responses"] = response_counts(responses)
        return responses

    def asked(self, variants: pd.DataFrame) -> pd.DataFrame:
        """The variants of the prompts answered so far."""
        if self.rule is None:
            return variants
        done = _upto(self.planned, len(self.answered), self.rule.looks)
        return variants[variants["prompt_id"].astype(str).isin(set(self.order[:done]))]

    def judge(self, metrics: pd.DataFrame, calls: int) -> pd.DataFrame:
        """The rows of the look just answered, judged at the alpha it spends (``calls`` of the planned
        calls made so far); sets :attr:`stopped` when the run may stop."""
        if self.rule is None:
            self.stopped = True
            return metrics
        look = len(self.settlements) + 1
        prompts = _upto(self.planned, look, self.rule.looks)
        rows, settlement = judge_look(metrics, self.rule, look, prompts, self.planned)
        self.settlements.append(settlement)
        self.stopped = settlement.stops
        self.store.append("looks", pd.DataFrame([{
            "run_id": self.run_id, "look": look, "looks": self.rule.looks, "prompts": prompts, "planned": self.planned,
            "calls": calls, "planned_calls": self.planned_calls, "found": len(settlement.found),
            "futile": len(settlement.futile), "still_open": len(settlement.open), "stopped": self.stopped,
            "reason": settlement.reason()}]))
        self.log.info("look %d of %d (%d of %d prompts, %d of %d calls): %s", look, self.rule.looks, prompts,
                      self.planned, calls, self.planned_calls, settlement.reason())
        return rows

    def finish(self, rec: Any, scores: Any, summary: dict) -> None:  # a RunRecorder, a ScoreSet
        """After the last look of a run in looks: its scores stored (each look's were not) and the
        summary's ``looks`` entry; nothing for a run in one go (its score stage stored them)."""
        if self.rule is None:
            return
        rec.save("scores", scores.scalar)
        summary["looks"] = self.summary()

    def summary(self) -> dict[str, Any] | None:
        """The run summary's ``looks`` entry: where it stopped and why; None for a run in one go."""
        if self.rule is None or not self.settlements:
            return None
        last = self.settlements[-1]
        return {"look": last.look, "looks": last.looks, "prompts": last.prompts, "planned": last.planned,
                "settled": last.settled, "reason": last.reason(), "found": last.found, "futile": last.futile,
                "open": last.open, "breakdowns_found": last.breakdowns_found, "detect": self.rule.detect}


def _upto(planned: int, look: int, looks: int) -> int:
    """Prompts answered by look ``look`` of ``looks``: an equal share, rounded up (the last takes all)."""
    return -(-planned * look // looks)


def _warn_unreachable(log: Any, config: RunConfig, rule: LookRule) -> None:
    """A warning when the permutation tests' resolution cannot reach the first looks' levels: a
    parity gap cannot be found there, however large."""
    from equilens.tasks.config import MetricsConfig
    from equilens.tasks.stats.sequential import obrien_fleming_plan

    most = next(m.le for m in MetricsConfig.model_fields["permutations"].metadata if getattr(m, "le", None))
    perms = config.metrics.permutations
    if not perms:
        return
    plan = obrien_fleming_plan(rule.fractions, rule.alpha)
    blind = [k + 1 for k in range(rule.looks) if plan.nominal_alpha(k) <= 1 / (perms + 1)]
    if blind:
        need = int(np.ceil(1 / plan.nominal_alpha(blind[-1] - 1)))
        more = (f"metrics.permutations >= {need:,} reaches look {blind[-1]} for one pair; a Holm family of "
                "several needs more" if need <= most else f"look {blind[-1]}'s level is below "
                f"what {most:,} permutations, the most allowed, can reach")
        log.warning("with metrics.permutations = %d the permutation tests cannot reach the level of look(s) %s: "
                    "parity gaps can be found from look %d on (%s)", perms, ", ".join(map(str, blind)),
                    blind[-1] + 1, more)
