"""Outcome gaps in words: what a verdict says about the amounts, yes answers and choices an answer
recommends, cell by cell and attribute by attribute (:func:`crossed_pattern`), with the plain ratio of
amounts beside the share-of-average gap, and what the run could have detected when it found nothing."""

from __future__ import annotations

from typing import Any

import pandas as pd
from equilens.tasks.metrics.judged import beyond_noise, details_of, is_outcome, number_or_none

OUTCOME_WORDS = {"number": "amounts about {:.0%} apart", "yes_no": "yes rates {:.2f} apart",
                 "choice": "first-choice rates {:.2f} apart"}
SMALLEST_SHOWN = 0.01
"""The smallest detectable gap said as a figure (1%, 0.01): below it, from answers that barely vary, a
gap would print as 0 ("amounts about 0% apart"), so it is said as under this."""


def detectable_words(kind: str, gap: float) -> str:
    """A detectable gap in its outcome's words: "amounts about 6% apart", or "amounts under 1% apart"."""
    if gap < SMALLEST_SHOWN:
        return OUTCOME_WORDS[kind].replace("about ", "").replace("{", "under {").format(SMALLEST_SHOWN)
    return OUTCOME_WORDS[kind].format(gap)


OUTCOME_NAMES = {"number": ("amounts", "amount"), "yes_no": ("yes rates", "yes/no"),
                 "choice": ("first-choice rates", "choice")}  # kind -> (what its gap compares, its answers)


def p_clause(d: dict[str, Any]) -> str:
    p = number_or_none(d.get("p_holm"))
    return f", p_holm = {p:.2g}" if p is not None else ""


def worded_outcome(row: pd.Series, d: dict[str, Any], cells: dict[str, float] | None = None,
                    label: tuple[str, str] | None = None) -> str:
    """"amounts for female-black are lower than for male-white by 4.1% of the prompt's average [1.2%,
    7.0%] ($0.96 for every $1.00)" and the like: the gap is in shares of the prompt's average, so it
    is said as one (a gap of 0.22 between cells at 0.89 and 1.11 of the average is $0.80 for every
    $1.00, 20% less, not 22%). ``cells`` (a cell's mean amount relative to the prompt average) gives
    the plain ratio of the two cells' amounts beside it; ``label`` names the two sides in other words
    ("black users", "white users")."""
    gap, (low, high) = float(row["value"]), [(number_or_none(x) or 0.0) for x in (d.get("gap_ci") or [None, None])]
    a, b = row["group_a"], row["group_b"]
    named = dict(zip((a, b), label, strict=True)) if label else {a: a, b: b}
    if d.get("kind") == "unread":  # lead with the cell whose calls gave no outcome more often
        if gap < 0:
            a, b, gap, low, high = b, a, -gap, -high, -low
        shares = ""
        if all(isinstance(d.get(k), int) and d[k] for k in ("calls_a", "calls_b")):
            first = row["group_a"] == a
            mine, theirs = (("a", "b") if first else ("b", "a"))
            shares = (f"; {d[f'unread_{mine}']} of {d[f'calls_{mine}']} against {d[f'unread_{theirs}']} of "
                      f"{d[f'calls_{theirs}']}")
        return (f"calls for {named[a]} gave no outcome (failed, refused or unreadable) {gap * 100:.1f} points more "
                f"often than for {named[b]} [{low * 100:.1f}, {high * 100:.1f}]{shares}{p_clause(d)}, so their "
                f"outcomes rest on different shares of their answers{few_names_note(d)}")
    if gap > 0:
        a, b, gap, low, high = b, a, -gap, -high, -low  # lead with the cell that gets less
    if d.get("kind") == "number":
        what, size, ci = "amounts", "lower", f"by {-gap:.1%} of the prompt's average [{-high:.1%}, {-low:.1%}]"
        ratio = (cells or {}).get(a), (cells or {}).get(b)
        if ratio[0] is not None and ratio[1]:
            ci += f" (${ratio[0] / ratio[1]:.2f} for every $1.00)"
    else:
        what = "yes answers" if d.get("kind") == "yes_no" else "first choices"
        size, ci = f"{-gap * 100:.1f} points rarer", f"[{-high * 100:.1f}, {-low * 100:.1f}]"
    return f"{what} for {named[a]} are {size} than for {named[b]} {ci}{p_clause(d)}{few_names_note(d)}"


def few_names_note(d: dict[str, Any]) -> str:
    """", resting on only 3 and 4 names" when a gap's cells had few names drawn (``details.few_names``):
    the interval treats the names as a sample of their group, and a small sample of names says little
    about the group; "" otherwise."""
    if not d.get("few_names"):
        return ""
    a, b = number_or_none(d.get("names_a")), number_or_none(d.get("names_b"))
    counts = f"{int(a)} and {int(b)}" if a is not None and b is not None else "a few"
    return f", resting on only {counts} names (raise identity.names_per_cell)"


CROSS = " x "  # between the attributes a comparison crosses: "gender x race", its cells "female-black"
PART = " | "  # between a comparison's parts: "gender x race | pricing"


def cell_values(rows: pd.DataFrame, metric: str) -> dict[str, float]:
    """Each cell's own value of ``metric`` (rows with no second group)."""
    own = rows[(rows["metric"] == metric) & rows["group_b"].isna() & rows["value"].notna()]
    return {str(g): float(v) for g, v in zip(own["group_a"], own["value"], strict=True)}


def crossed_pattern(attribute: str, rows: pd.DataFrame, alpha: float) -> list[str]:
    """One clause per crossed attribute of a comparison whose cells cross several ("gender x race":
    cells "female-black"), read off the outcome gaps between cells that differ in that attribute
    alone: "race: amounts for black users are lower than for white users by 10.1% of the prompt's
    average [...] ($0.90 for every $1.00), in both genders" or "gender: no gap beyond chance (the
    smallest detectable about 2.0%)". Empty for a comparison of one attribute, or without outcome gaps."""
    names = attribute.split(PART)[0].split(CROSS)
    gaps = rows[rows["metric"].map(is_outcome) & rows["group_b"].notna() & rows["value"].notna()]
    if len(names) < 2 or gaps.empty:
        return []

    def split(cell: str) -> list[str] | None:
        parts = str(cell).split("-", len(names) - 1)
        return parts if len(parts) == len(names) else None

    out = []
    for i, name in enumerate(names):
        found, detectable, others = [], [], set()
        for _, r in gaps.iterrows():
            a, b = split(r["group_a"]), split(r["group_b"])
            if a is None or b is None or a[i] == b[i] or any(a[j] != b[j] for j in range(len(names)) if j != i):
                continue
            d = details_of(r["details"])
            others.add(" ".join(a[j] for j in range(len(names)) if j != i))
            if "gap" in d and beyond_noise(d, r["metric"], alpha):
                found.append((r, d, a, b))
            elif (m := number_or_none(d.get("min_detectable_gap"))) is not None:
                detectable.append((m, d.get("kind"), number_or_none(d.get("largest_gap"))))
        if not found:
            smallest = max(detectable, default=None, key=lambda md: md[0])
            if others:
                out.append(f"{name}: no gap beyond chance{_smallest_detectable(*smallest) if smallest else ''}")
            continue
        r, d, a, b = max(found, key=lambda x: (x[1].get("kind") != "unread", abs(number_or_none(x[1].get("gap")) or 0)))
        lead = worded_outcome(r, d, cell_values(rows, cell_metric(r["metric"])),
                               (f"{a[i]} users", f"{b[i]} users"))
        within = {" ".join(a[j] for j in range(len(names)) if j != i) for _, _, a, _ in found}
        others_name = " and ".join(n for j, n in enumerate(names) if j != i)
        where = (f"in every {others_name} ({len(within)})" if len(within) == len(others) and len(others) > 2
                 else f"in both {others_name}s" if len(within) == len(others) == 2
                 else f"for {', '.join(sorted(within))}, of {len(others)} {others_name}s (not beyond chance in the others)")
        out.append(f"{name}: {lead}, {where}")
    return out


def _smallest_detectable(gap: float, kind: str | None, largest: float | None) -> str:
    """" (the smallest detectable about 2.0%)" after "no gap beyond chance": amounts in per cent, rates
    in points; under :data:`SMALLEST_SHOWN` as "under"; past the largest gap there can be, "no such
    gap could be shown"."""
    if largest is not None and gap > largest:
        return " (no such gap could be shown)"
    number = kind == "number"
    if gap < SMALLEST_SHOWN:
        return f" (the smallest detectable under {SMALLEST_SHOWN:.0%})" if number else \
            f" (the smallest detectable under {SMALLEST_SHOWN * 100:.0f} point)"
    return f" (the smallest detectable about {gap:.1%})" if number else \
        f" (the smallest detectable about {gap * 100:.1f} points)"


def cell_metric(gap_metric: str) -> str:
    """The per-cell metric an outcome gap compares (``number_outcome_gap`` -> ``number_outcome``), from
    the metric registry (:func:`equilens.tasks.metrics.outcome_metrics`); "" for any other metric."""
    from equilens.tasks.metrics import outcome_metrics

    return next((cell for cell, gap in outcome_metrics().values() if gap == gap_metric), "")


def worst_off(rows: pd.DataFrame) -> str:
    """The cell that the outcome findings leave worst off (fewest yes answers, lowest amounts), in
    words; empty when the rows hold no per-cell outcome."""
    for metric, what in (("number_outcome", "the lowest amounts: {:.3f} of the prompt average"),
                         ("yes_rate", "the fewest yes answers: {:.3f}"),
                         ("first_choice_rate", "the fewest first choices: {:.3f}")):
        cells = rows[(rows["metric"] == metric) & rows["value"].notna() & rows["group_b"].isna()]
        if len(cells) >= 2:
            low = cells.loc[cells["value"].idxmin()]
            return f"worst off: {low['group_a']} ({what.format(low['value'])})"
    return ""


def unread_cells(rows: pd.DataFrame) -> str:
    """Cells none of whose answers gave an outcome where another cell's did, in words ("no outcome
    could be read from any of female's 10 answers, where male's gave them: their outcomes cannot be
    compared"): their outcome gaps are skipped, and a verdict must not read that as no difference.
    "" when every cell gave some, or none did."""
    cells = rows[(rows["metric"] == "unparsed_outcome_rate") & rows["group_b"].isna() & rows["value"].notna()]
    rates = {str(g): (float(v), details_of(x).get("answers")) for g, v, x in
             zip(cells["group_a"], cells["value"], cells["details"], strict=True)}
    unread = [g for g, (rate, _) in rates.items() if rate >= 1.0]
    read = [g for g, (rate, _) in rates.items() if rate < 1.0]
    if not unread or not read:
        return ""
    answers = sum(int(n) for g in unread if isinstance(n := rates[g][1], (int, float)))
    counted = f" {answers:,}" if answers else ""
    whose = [" and ".join(f"{g}'s" for g in groups) for groups in (unread, read)]
    return (f"no outcome could be read from any of {whose[0]}{counted} answers, where {whose[1]} gave them: their "
            "outcomes cannot be compared")


def outcome_detectable(rows: pd.DataFrame) -> str:
    """What a comparison without an outcome finding could have found, after "no outcome difference
    beyond chance; ": the smallest gaps the run could detect, in the outcome's own terms ("with 24
    prompts the smallest gaps this run could detect are amounts about 6% apart and yes rates 0.20
    apart"), the largest stated over the comparison's pairs per kind. A kind whose smallest
    detectable gap is past the largest its rows can take (``details.largest_gap``: for amounts the
    comparison's number of cells; else ``largest`` of the metric's declaration: a difference of two
    rates is at most 1) could show no gap at all, and is said so with the readable
    prompts and the answers that gave no outcome ("no gap in yes rates could be shown with 3 readable
    prompts (168 of 192 yes/no answers could not be read)"). "" when no pair states a gap."""
    from equilens.tasks.metrics import METRICS

    found: dict[str, tuple[float, str, dict[str, Any]]] = {}
    prompts = []
    for m, x in zip(rows["metric"], rows["details"], strict=True):
        d = details_of(x)
        if not is_outcome(m):
            continue
        prompts.append(number_or_none(d.get("prompts")) or 0)
        mdg, kind = number_or_none(d.get("min_detectable_gap")), d.get("kind")
        if mdg is not None and kind in OUTCOME_WORDS and mdg > found.get(kind, (-1.0,))[0]:
            found[kind] = (mdg, m, d)
    can, cannot = [], []
    for kind, (mdg, metric, d) in sorted(found.items(), key=lambda kv: list(OUTCOME_WORDS).index(kv[0])):
        largest = number_or_none(d.get("largest_gap"))  # the comparison's own bound (amounts: its cells)
        if largest is None:
            largest = METRICS.get(metric).largest if metric in METRICS else None
        if largest is None or mdg <= largest:
            can.append(detectable_words(kind, mdg))
            continue
        answers, unread = number_or_none(d.get("kind_answers")), number_or_none(d.get("kind_unread"))
        read = (f" ({int(unread):,} of {int(answers):,} {OUTCOME_NAMES[kind][1]} answers could not be read)"
                if answers and unread is not None else "")
        cannot.append(f"no gap in {OUTCOME_NAMES[kind][0]} could be shown with "
                      f"{int(number_or_none(d.get('prompts')) or 0)} readable prompts{read}")
    if can:
        size = f"with {int(max(prompts))} prompts " if any(prompts) else ""
        cannot.insert(0, f"{size}the smallest gaps this run could detect are {' and '.join(can)}")
    return "; ".join(cannot)
