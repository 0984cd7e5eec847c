"""A plan before a run: how many prompts, requests and LLM calls it will make, roughly what they
cost at the configured prices and how long they take at the configured rate, known before the
first call and in seconds even for a file of millions of prompts.

* **Counting.** The prompts are scanned in bounded memory (:mod:`equilens.tasks.inputs.prompt_scan`). Each
  assessment's plan hook says what its LLM stage would be asked for a set of prompts
  (``plan_requests(config, prompts)`` in its hooks module, ``tasks/assessments/NAME/hooks.py``:
  variants and controls, identity variants, questions); the
  plan runs it on the prompts, or on a sample of :data:`PLAN_SAMPLE` of them scaled to the whole
  ("about"). Calls are requests x ``llm.count``; answers already in the response cache are counted
  too, so a resumed run costs less than its plan says. An assessment without ``plan_requests``
  gets no call count. The run that follows in the same process reuses the plan's expansion of the
  same prompts (:mod:`equilens.tasks.pipeline.memo`): its prompts are expanded once.
* **Calls beside the model's.** An assessment may also say which other calls a run makes
  (``plan_extra_calls(config, prompts) -> list[ExtraCalls]``): the identity judge's, up to 4 per
  pair of cells per prompt and answer (identical answers skip theirs), and its check's. They are
  scaled like the requests when they grow with the prompts, priced at their own LLM section's
  prices, and held to its caps: to the ``llm`` section's together with the model's calls when they
  share it (a judge without ``judge.llm``), else to their own section's.
* **Cost.** An upper bound at the configured prices (:mod:`equilens.tasks.llm.budget` says how).
* **Time.** At ``llm.rate_limit`` requests a second when it is set; otherwise at
  ``llm.max_concurrency`` calls in flight of :data:`ASSUMED_CALL_S` seconds each, said as an assumption.
* **Caps.** ``llm.max_calls`` and ``llm.max_cost`` refuse a larger run before Prefect starts
  (:class:`equilens.tasks.llm.budget.BudgetExceeded`, exit 2), with the numbers; the LLM stage checks its
  exact requests again. ``llm.confirm_above`` calls is where an
  interactive run asks first (``--yes`` skips the question; a run without a terminal never asks).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from equilens.tasks.config import RunConfig
from equilens.tasks.llm.budget import BudgetExceeded, ExtraCalls, check_budget, cost_of, prompt_tokens_of
from equilens.tasks.pipeline.memo import PLAN_SAMPLE

ASSUMED_CALL_S = 2.0


@dataclass
class Plan:
    assessment: str
    prompts: int | None  # None: the assessment reads no prompts section
    requests: int | None  # None: not estimated for this assessment
    calls: int | None
    exact: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    seconds: float | None = None
    timing: str = ""
    extra: list[ExtraCalls] = field(default_factory=list)
    looks: int | None = None  # execution.stop_when: settled: the calls are the most the run makes

    @property
    def total_calls(self) -> int | None:
        """The model's calls and every extra call (a judge's, at most)."""
        return None if self.calls is None else self.calls + sum(e.calls for e in self.extra)

    def summary(self) -> str:
        """One line for the start of every run."""
        about = "" if self.exact else "about "
        head = f"{about}{self.prompts:,} prompts" if self.prompts is not None else self.assessment
        if self.calls is None:
            return f"plan: {head}"
        cost = f", at most {self.cost:,.2f} at the configured prices" if self.cost is not None else ""
        extra = "".join(f" + {e.phrase(about)}" + (f" (at most {e.cost:,.2f})" if e.cost is not None else "")
                        for e in self.extra)
        looks = f" in up to {self.looks} looks, stopping once settled" if self.looks else ""
        return f"plan: {head}, {about}{self.calls:,} LLM calls{cost}{extra}{looks} (--plan for more)"

    def lines(self) -> list[str]:
        about = "" if self.exact else "about "
        out = [f"plan ({self.assessment}):"]
        if self.prompts is not None:
            out.append(f"  prompts: {about}{self.prompts:,}")
        if self.calls is None:
            out.append("  LLM calls: not estimated for this assessment")
            return out
        out.append(f"  requests: {about}{self.requests:,}, LLM calls: {about}{self.calls:,} (cached answers "
                   "are not called again)")
        if self.calls and self.prompt_tokens is not None:
            out.append(f"  tokens: about {self.prompt_tokens:,} prompt, at most {self.completion_tokens:,} completion")
        if self.cost is not None:
            out.append(f"  cost: at most {self.cost:,.2f} at the configured prices")
        if self.timing:
            out.append(f"  time: {self.timing}")
        if self.looks:
            out.append(f"  stopping: {self.looks} looks at equal shares of the prompts (execution.stop_when: "
                       "settled); the run stops once its verdict is settled, so these are the most it spends")
        for e in self.extra:
            cost = f", at most {e.cost:,.2f} at the configured prices" if e.cost is not None else ""
            why = f" ({e.why})" if e.why else ""
            out.append(f"  {e.what}: {e.phrase(about, named=False)}{why}, "
                       f"about {round(e.prompt_tokens):,} prompt tokens{cost}")
        if self.extra:
            out.append(f"  all calls: {'up to ' if any(e.up_to for e in self.extra) else about}"
                       f"{self.total_calls:,}")
        return out


def turn_calls(texts: list[str], systems: list) -> tuple[list[str], list, int]:
    """The calls the texts make: a conversation one per turn, each sending the turns before it (and
    the answers to them: the third value counts those answers, each at most ``max_tokens``)."""
    from equilens.tasks.turns import join_turns, split_turns

    out, out_systems, answers = [], [], 0
    for text, system in zip(texts, systems, strict=True):
        turns = split_turns(text)
        for k in range(1, len(turns) + 1):
            out.append(join_turns(turns[:k]))
            out_systems.append(system)
            answers += k - 1
    return out, out_systems, answers


def make_plan(cfg: RunConfig) -> Plan:
    """The plan of ``cfg`` (see the module docstring); reads the prompts but calls nothing."""
    from equilens.flows.running.preflight import uses_llm
    from equilens.tasks.catalog import ASSESSMENTS

    prompts = sample = None
    exact = True
    if cfg.prompts is not None and cfg.needs_prompts:  # an assessment that asks its own questions reads none
        from equilens.tasks.inputs.prompt_scan import scan_prompts

        scan = scan_prompts(cfg.prompts, PLAN_SAMPLE, seed=cfg.metrics.seed)
        prompts, sample, exact = scan.total, scan.sample, scan.exact and scan.total <= PLAN_SAMPLE
    entry = ASSESSMENTS.get(cfg.assessment)
    planner = entry.load_hooks().plan_requests
    if planner is None:
        return Plan(cfg.assessment, prompts, None, None, exact)
    asked = planner(cfg, sample)
    scale = prompts / max(len(sample), 1) if sample is not None and prompts else 1.0
    requests = round(len(asked) * scale)
    texts, systems, earlier = [], [], 0  # nothing to ask: an empty frame, which may have no columns
    if len(asked):
        texts, systems, earlier = turn_calls(asked["text"].tolist(),
                                             asked["system"].tolist() if "system" in asked else [None] * len(asked))
    calls = round(len(texts) * scale) * cfg.llm.count if uses_llm(cfg) else 0  # a conversation: one call a turn
    if calls and earlier and cfg.llm.provider != "local":  # conversations: refused now if the target cannot carry them
        from equilens.tasks.llm.calls import make_provider
        from equilens.tasks.llm.conversation import check_takes_history

        check_takes_history(make_provider(cfg.llm))
    tokens = ((prompt_tokens_of(texts, systems, cfg.llm) + earlier * cfg.llm.max_tokens) * scale * cfg.llm.count
              if calls else 0.0)
    plan = Plan(cfg.assessment, prompts, requests, calls, exact, prompt_tokens=round(tokens),
                completion_tokens=calls * cfg.llm.max_tokens, cost=cost_of(cfg.llm, calls, tokens) if calls else None,
                looks=cfg.execution.looks if cfg.execution.stop_when == "settled" else None)
    if calls and cfg.llm.provider != "local":
        if cfg.llm.rate_limit:
            plan.seconds = calls / cfg.llm.rate_limit
            plan.timing = f"at least {_duration(plan.seconds)} at llm.rate_limit {cfg.llm.rate_limit:g}/s"
        else:
            plan.seconds = calls * ASSUMED_CALL_S / cfg.llm.max_concurrency
            plan.timing = (f"about {_duration(plan.seconds)} if a call takes {ASSUMED_CALL_S:g} s with "
                           f"llm.max_concurrency {cfg.llm.max_concurrency} (no llm.rate_limit set)")
    elif calls:
        plan.timing = "the embedded model answers in batches on this machine (the progress line says how fast)"
    extra = entry.load_hooks().plan_extra_calls
    for e in extra(cfg, sample) if extra is not None else ():
        if e.per_prompt:
            e = replace(e, calls=round(e.calls * scale), prompt_tokens=e.prompt_tokens * scale)
        plan.extra.append(replace(e, cost=cost_of(e.llm, e.calls, e.prompt_tokens) if e.calls else None))
    return plan


def enforce(cfg: RunConfig, plan: Plan) -> None:
    """Refuse a run whose plan passes ``llm.max_calls`` or ``llm.max_cost``, with the numbers."""
    if plan.calls is None:
        return
    about = "" if plan.exact else "about "
    check_budget(cfg.llm, plan.calls, plan.prompt_tokens or 0,
                 f"{about}{plan.prompts or 0:,} prompts, {about}{plan.requests:,} requests x llm.count {cfg.llm.count}")
    for caps in dict.fromkeys(e.caps for e in plan.extra):
        mine = [e for e in plan.extra if e.caps == caps]
        shared = caps == "llm"
        llm = cfg.llm if shared else mine[0].llm
        calls = sum(e.calls for e in mine) + (plan.calls if shared else 0)
        parts = ([f"{about}{plan.calls:,} LLM calls"] if shared else []) + [e.phrase(about) for e in mine]
        if llm.max_calls is not None and calls > llm.max_calls:
            raise BudgetExceeded(f"this run would make {' + '.join(parts)} ({calls:,} in all), more than "
                                 f"{caps}.max_calls {llm.max_calls:,}. Nothing was called. Raise {caps}.max_calls, "
                                 "or use fewer prompts (prompts.limit) or fewer cells.")
        costs = [e.cost for e in mine] + ([plan.cost] if shared else [])
        if llm.max_cost is not None and all(c is not None for c in costs) and sum(costs) > llm.max_cost:
            raise BudgetExceeded(f"this run could cost up to {sum(costs):,.2f} ({' + '.join(parts)} at the "
                                 f"configured prices), more than {caps}.max_cost {llm.max_cost:,.2f}. Nothing was "
                                 f"called. Raise {caps}.max_cost, or use fewer prompts or fewer cells.")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
