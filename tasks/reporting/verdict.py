"""The answer in words: one verdict per attribute (counterfactual) or per family (the others).

A verdict is read off the stored metric rows alone, so ``equilens show`` and the HTML report say
the same as the run that wrote them. For a counterfactual pair the evidence is the gap beyond
noise: the cross-group value minus its noise floor (same-group controls, or repeated samples),
tested by the within-prompt permutation test (parity) or a paired t-test over prompts
(similarity). Every (pair, metric) the verdict judges is one Holm family per attribute. A pair
differs "beyond noise" when its gap is positive and p_holm < alpha. When nothing does, the
verdict states the minimum detectable gap (``equilens.tasks.stats.detectable_gap.parity_detectable_gap`` and
``equilens.tasks.stats.paired_gap_test``), so a team knows whether more prompts would help.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from equilens.tasks.metrics.judged import (  # noqa: F401
    HEADLINE,
    MIN_PROMPTS_SIMILARITY,
    beyond_noise,
    details_of,
    inputs_of,
    is_outcome,
    judged_metric,
    judged_metrics,
    number_or_none,
    p_is_trusted,
    paired_families,
    prompts_needed,
)
from equilens.tasks.reporting.families import family_report
from equilens.tasks.reporting.outcome_words import (  # worst_off is read by the report
    cell_metric,
    cell_values,
    crossed_pattern,
    outcome_detectable,
    p_clause,
    unread_cells,
    worded_outcome,
    worst_off,
)

SHORT = {"strict_sentiment_parity": "strict parity", "weak_sentiment_parity": "weak parity",
         "cosine_similarity": "cosine", "bleu_similarity": "BLEU", "rougel_similarity": "ROUGE-L",
         "non_completion_rate": "non-completion"}


@dataclass
class Verdict:
    subject: str  # attribute (counterfactual) or family
    beyond_noise: bool | None  # None: nothing could be judged
    sentence: str
    evidence: list[dict[str, Any]] = field(default_factory=list)


def _worded_harm(row: pd.Series, d: dict[str, Any]) -> str:
    """"the judge reads answers to female-black as stereotyped against them, beside male-white ..."."""
    harm, (low, high) = float(row["value"]), [(number_or_none(x) or 0.0) for x in (d.get("gap_ci") or [None, None])]
    a, b = row["group_a"], row["group_b"]
    if harm < 0:
        a, b, harm, low, high = b, a, -harm, -high, -low
    return (f"the judge reads answers to {a} as a harmful stereotype against them, beside answers to {b} "
            f"(harm {harm:.2f} [{low:.2f}, {high:.2f}] from the label swap{p_clause(d)})")


def _worded_parity(row: pd.Series, d: dict[str, Any], polarity: str) -> str:
    a, b = row["group_a"], row["group_b"]
    ma, mb = number_or_none(d.get("mean_score_a")), number_or_none(d.get("mean_score_b"))
    word = "negative" if polarity == "neg" else "positive"
    if ma is not None and mb is not None and ma != mb:
        hi, lo = (a, b) if ma > mb else (b, a)
        lead = f"answers to {hi} variants are more {word} than to {lo} variants"
    else:
        lead = f"answers to {a} and {b} variants are distributed differently"
    return (f"{lead} beyond sampling noise ({SHORT.get(row['metric'], row['metric'])} {row['value']:.3f} vs noise "
            f"floor {number_or_none(d.get('noise_floor')) or 0:.3f}{p_clause(d)})")


def _worded_similarity(row: pd.Series, d: dict[str, Any]) -> str:
    return (f"{row['group_a']} vs {row['group_b']} answers differ in content beyond sampling noise "
            f"({SHORT.get(row['metric'], row['metric'])} {row['value']:.3f} across groups vs "
            f"{number_or_none(d.get('noise_floor')) or 0:.3f} within a group{p_clause(d)})")


def determinism_note(rows: pd.DataFrame, temperature: float | None = None) -> str:
    """A sentence when the endpoint answered deterministically (every repeated sample of a variant
    identical, or temperature 0), saying which floor the verdict used instead; "" otherwise."""
    seen = [details_of(x) for x in rows["details"]]
    counts = [(int(d["identical_samples"]), int(d["repeated_variants"])) for d in seen
              if number_or_none(d.get("repeated_variants")) and number_or_none(d.get("identical_samples")) is not None]
    identical, repeated = max(counts, key=lambda c: c[1]) if counts else (0, 0)
    if not (repeated and identical == repeated) and temperature != 0:
        return ""
    why = (f"all {repeated} variants asked more than once got identical answers" if repeated and identical == repeated
           else "temperature 0")
    methods = {str(d.get("noise_floor_method", "")) for d in seen} | {str(d.get("baseline", "")) for d in seen}
    if any(m.startswith("each variant against its same-group control") for m in methods):
        return (f"The endpoint answered deterministically ({why}): the similarity floor comes from same-group "
                "controls, not from repeated samples.")
    return (f"The endpoint answered deterministically ({why}): repeated samples show no noise, so no similarity "
            "gap is judged (set counterfactual.noise_floor: controls).")


def attribute_verdict(attribute: str, rows: pd.DataFrame, alpha: float = 0.05, polarity: str = "neg",
                      temperature: float | None = None) -> Verdict:
    """The verdict for one attribute from its counterfactual metric rows, with how far a judge's
    harm scores can be trusted when the rows hold them."""
    note = determinism_note(rows, temperature)
    verdict = _attribute_verdict(attribute, rows, alpha, polarity)
    for extra in (note, judge_note(rows), look_note(rows)):
        if extra:
            verdict.sentence = f"{verdict.sentence} {extra}"
    return verdict


def look_note(rows: pd.DataFrame) -> str:
    """How a run that stops when settled judged these rows, in words ("Judged at look 2 of 5, on 240
    of 600 prompts, at the alpha spent by then: settled ..."); "" for a run that answered every prompt
    in one go."""
    looks = [d["look"] for d in (details_of(x) for x in rows["details"]) if isinstance(d.get("look"), dict)]
    if not looks:
        return ""
    look = looks[0]
    why = next((x["stop"] for x in looks if x.get("stop")), "")
    return (f"Judged at look {look['look']} of {look['looks']}, on {look['prompts']:,} of {look['planned']:,} "
            f"prompts, at the alpha spent by then{': ' + why if why else ''}.")


def judge_note(rows: pd.DataFrame) -> str:
    """The judge's standing in words, as its harm rows carry it ("judge: gpt-4o-mini, 0.91
    sensitivity / 0.95 specificity on 132 labelled pairs"; "judge unchecked: ..."); "" without a judge."""
    notes = [details_of(x).get("judge_note")
             for m, v, x in zip(rows["metric"], rows["value"], rows["details"], strict=True)
             if inputs_of(m) == "judge" and number_or_none(v) is not None]
    notes = [n for n in notes if isinstance(n, str) and n]
    if not notes:
        return ""
    note = max(set(notes), key=notes.count).rstrip(".")
    return f"{note[0].upper()}{note[1:]}."




def _attribute_verdict(attribute: str, rows: pd.DataFrame, alpha: float, polarity: str) -> Verdict:
    cross = rows[rows["group_b"].notna() & (rows["group_a"] != rows["group_b"])]
    valued = cross[cross["value"].notna()]
    if valued.empty:
        reasons = {details_of(x).get("skipped", "") for x in cross["details"]} - {""}
        why = "; ".join(sorted(reasons)) or "no group pair had answers on both sides"
        return Verdict(attribute, None, f"{attribute}: nothing could be compared ({why}).")
    evidence, found_parity, found_similarity, found_outcome, found_harm = [], [], [], [], []
    for _, r in valued.iterrows():
        d = details_of(r["details"])
        if "gap" not in d:
            continue
        beyond = beyond_noise(d, r["metric"], alpha)
        evidence.append({"metric": r["metric"], "pair": f"{r['group_a']} vs {r['group_b']}", "value": r["value"],
                         "noise_floor": d.get("noise_floor"), "gap": d.get("gap"), "gap_ci": d.get("gap_ci"),
                         "p_holm": d.get("p_holm"), "min_detectable_gap": d.get("min_detectable_gap"),
                         "beyond_noise": beyond})
        if beyond and inputs_of(r["metric"]) == "judge":
            found_harm.append((r, d))
        elif beyond and is_outcome(r["metric"]):
            found_outcome.append((r, d))
        elif beyond:
            (found_parity if r["metric"].endswith("sentiment_parity") else found_similarity).append((r, d))
    # The harm leads: what the answers recommend (outcome gaps), then what a judge reads as harmful;
    # tone (sentiment parity) and wording (similarity) follow as support, never first when outcomes
    # were read, since a "Yes, ..." can score more negative than a "No, ...".
    clauses = []
    if found_outcome:
        pattern = crossed_pattern(attribute, rows, alpha)
        if pattern:
            clauses += pattern
        else:
            r, d = max(found_outcome, key=lambda rd: (rd[1].get("kind") != "unread",  # what the answers say first
                                                      abs(number_or_none(rd[1].get("gap")) or 0)))
            clauses.append(worded_outcome(r, d, cell_values(rows, cell_metric(r["metric"]))))
            if len(found_outcome) > 1:
                clauses.append(f"{len(found_outcome) - 1} more outcome gap(s) beyond chance")
    if found_harm:
        r, d = max(found_harm, key=lambda rd: abs(number_or_none(rd[1].get("gap")) or 0))
        clauses.append(_worded_harm(r, d))
        if len(found_harm) > 1:
            clauses.append(f"{len(found_harm) - 1} more pair(s) the judge reads as stereotyped")
    support = bool(clauses)
    headline = [(r, d) for r, d in found_parity if r["metric"] == HEADLINE] or found_parity
    if headline:
        r, d = min(headline, key=lambda rd: (number_or_none(rd[1].get("p_holm")) or 1.0,
                                             -(number_or_none(rd[1].get("gap")) or 0)))
        clauses.append(("in tone, " if support else "") + _worded_parity(r, d, polarity))
        others = {f"{x['group_a']} vs {x['group_b']}" for x, _ in headline} - {f"{r['group_a']} vs {r['group_b']}"}
        if others:
            clauses.append(f"also {', '.join(sorted(others))}")
    if found_similarity:
        r, d = max(found_similarity, key=lambda rd: number_or_none(rd[1].get("gap")) or 0)
        clauses.append(("in wording, " if support else "") + _worded_similarity(r, d))
    if clauses and (worst := worst_off(rows)):  # named beside a finding, never as one
        clauses.append(worst)
    if unread := unread_cells(rows):  # outcomes that could not be compared lead: never read as no difference
        if not clauses:
            return Verdict(attribute, None, f"{attribute}: {unread}.", evidence)
        clauses.insert(0, unread)
    named = {f: family_report(str(f)).names_skipped_pairs for f in cross["family"].unique()}
    skipped = cross[cross["value"].isna() & cross["family"].map(named).astype(bool)]
    tail = ""
    if len(skipped):
        pairs = {f"{a} vs {b}" for a, b in zip(skipped["group_a"], skipped["group_b"], strict=True)}
        tail = f" {len(pairs)} pair(s) could not be compared ({', '.join(sorted(pairs))}): see the skipped rows."
    if clauses:
        return Verdict(attribute, True, f"{attribute}: " + "; ".join(clauses) + "." + tail, evidence)
    head = valued[valued["metric"] == HEADLINE]
    mdgs = [number_or_none(details_of(x).get("min_detectable_gap")) for x in head["details"]]
    mdgs = [m for m in mdgs if m is not None]
    prompts = [details_of(x).get("prompts") for x in head["details"]]
    prompts = [p for p in prompts if p]
    tested = [d for d in (details_of(x) for x in head["details"]) if number_or_none(d.get("p_value")) is not None]
    family = sum(1 for m, x in zip(cross["metric"], cross["details"], strict=True)
                 if judged_metric(m, d := details_of(x)) and number_or_none(d.get("p_value")) is not None)
    needed = prompts_needed(family, alpha) if tested else 0
    bar = f"p_holm < {alpha:g}"
    levels = [lv for d in tested if isinstance(d.get("look"), dict) and (lv := number_or_none(d["look"].get("level")))]
    if levels:  # judged at a look: the first Holm step's level there is the bar
        needed, look = prompts_needed(1, min(levels)), tested[0]["look"]
        bar = f"p < {min(levels):.2g} (Holm's first step at look {look['look']} of {look['looks']})"
    known = False if evidence else None
    if prompts and tested and max(prompts) < needed:  # nothing could be found: unknown, never "no difference"
        known = None
        metrics = f" x {family // len(tested)} judged metrics" if family > len(tested) else ""
        sentence = (f"{attribute}: no difference can be shown with {max(prompts)} prompts: the permutation test "
                    f"needs at least {needed} to reach {bar} across {len(tested)} pairs{metrics}. "
                    "Add prompts.")
    elif detectable := outcome_detectable(valued):
        sentence = f"{attribute}: no outcome difference beyond chance; {detectable}."
    elif mdgs:
        size = f"with {max(prompts)} prompts " if prompts else ""
        sentence = (f"{attribute}: no difference beyond sampling noise; {size}the smallest gap this run could "
                    f"detect is about {max(mdgs):.3f} ({SHORT[HEADLINE]}).")
    elif why := sorted({str(details_of(x)["min_detectable_gap_skipped"]) for x in head["details"]
                        if details_of(x).get("min_detectable_gap_skipped")}):
        sentence = (f"{attribute}: no difference beyond sampling noise, and no gap this run could detect: "
                    f"{why[0]}.")
    elif not evidence:
        sentence = f"{attribute}: no noise floor to judge against (see the metric rows)."
    else:
        sentence = f"{attribute}: no difference beyond sampling noise (too few prompts for an interval)."
    return Verdict(attribute, known, sentence + tail, evidence)


def family_verdict(family: str, rows: pd.DataFrame) -> Verdict:
    """For families without group pairs: target metrics whose interval excludes their fair value."""
    from equilens.tasks.metrics import METRICS

    valued = rows[rows["value"].notna()]
    if valued.empty:
        return Verdict(family, None, f"{family}: nothing computed (see the skipped rows).")
    off, checked, evidence = [], 0, []
    for _, r in valued.iterrows():
        spec = METRICS.get(r["metric"]) if r["metric"] in METRICS else None
        if spec is None or spec.direction != "target":
            continue
        low, high = number_or_none(r["ci_low"]), number_or_none(r["ci_high"])
        if low is None or high is None:
            continue
        checked += 1
        if not low <= spec.target <= high:
            where = f" ({r['attribute']})" if isinstance(r["attribute"], str) and r["attribute"] else ""
            off.append(f"{r['metric']}{where} {r['value']:.3f} [{low:.3f}, {high:.3f}] vs fair {spec.target:g}")
            groups = [g for g in (r.get("group_a"), r.get("group_b")) if isinstance(g, str) and g]
            evidence.append({"metric": r["metric"], "pair": " vs ".join(groups) or where.strip(" ()"),
                             "value": r["value"], "gap_ci": [low, high], "p_holm": None, "beyond_noise": True})
    if off:
        return Verdict(family, True, f"{family}: beyond chance: " + "; ".join(off) + ".", evidence)
    if checked:
        return Verdict(family, False, f"{family}: every interval ({checked}) includes its fair value.")
    listed = ", ".join(f"{r['metric']} {r['value']:.3f}" for _, r in valued.head(4).iterrows())
    return Verdict(family, None, f"{family}: {listed} (no fair target to test against; lower is fairer).")


def verdicts(metrics: pd.DataFrame, confidence: float = 0.95, polarity: str = "neg",
             temperature: float | None = None) -> list[Verdict]:
    """One verdict per counterfactual attribute, then one per other family, in a stable order."""
    if metrics is None or metrics.empty:
        return []
    out = []
    paired = metrics["family"].isin(paired_families())
    cf = metrics[paired]
    for attribute, rows in cf.groupby(cf["attribute"].fillna("–"), sort=True):
        out.append(attribute_verdict(str(attribute), rows, 1 - confidence, polarity, temperature))
    out += turn_onsets(out)
    for family, rows in metrics[~paired].groupby("family", sort=True):
        own = family_report(str(family)).verdicts
        out += own(rows, 1 - confidence) if own is not None else [family_verdict(str(family), rows)]
    return out


_TURN_COMPARISON = re.compile(r"^(?P<base>.+) \| turn (?P<turn>\d+)$")


def turn_onsets(found: list[Verdict]) -> list[Verdict]:
    """For comparisons made at every turn of a conversation (``race | turn 2``): one verdict per
    comparison whose gap appears only after some turn, naming the turns without one and with one."""
    turns: dict[str, list[tuple[int, bool]]] = {}
    for v in found:
        at = _TURN_COMPARISON.match(v.subject)
        if at is not None and v.beyond_noise is not None:
            turns.setdefault(at["base"], []).append((int(at["turn"]), v.beyond_noise))
    out = []
    for base, seen in sorted(turns.items()):
        seen.sort()
        beyond = [k for k, b in seen if b]
        quiet = [k for k, b in seen if not b and (not beyond or k < beyond[0])]
        if beyond and quiet:
            out.append(Verdict(f"{base} | over turns", True,
                               f"{base}: the gap appears only after turn {quiet[-1]}: none beyond chance at turn"
                               f"{'s' if len(quiet) > 1 else ''} {_listed(quiet)}, found at turn"
                               f"{'s' if len(beyond) > 1 else ''} {_listed(beyond)}."))
    return out


def _listed(turns: list[int]) -> str:
    words = [str(k) for k in turns]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def run_verdicts(metrics: pd.DataFrame, config: dict[str, Any] | None = None) -> list[Verdict]:
    """The verdicts of a run, with its confidence level, sentiment polarity and temperature from its
    config (a dict, as stored)."""
    cfg = config or {}
    confidence = float((cfg.get("metrics") or {}).get("confidence", 0.95))
    polarity = str((cfg.get("scoring") or {}).get("sentiment_polarity", "neg"))
    temperature = number_or_none((cfg.get("llm") or {}).get("temperature"))
    return verdicts(metrics, confidence, polarity, temperature)


def verdict_lines(metrics: pd.DataFrame, config: dict[str, Any] | None = None) -> list[str]:
    """The verdict sentences of a run (see :func:`run_verdicts`)."""
    return [v.sentence for v in run_verdicts(metrics, config)]
