"""A run's metrics in the terminal: the verdict, a table of every group pair that fits the screen, and
the formatting they share with the other views (intervals, pair labels, significance marks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from equilens.tasks.reporting.verdict import p_is_trusted

ARROW = {"higher": "↑ higher is fairer", "lower": "↓ lower is fairer", "target": "◎ closer to target",
         "none": "○ no fair value (compare by its gap)"}


def _fmt(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and v != v) else f"{v:.4f}"


def format_interval(row: pd.Series) -> str:
    if row.get("ci_low") is None or pd.isna(row.get("ci_low")):
        return _fmt(row["value"])
    return f"{_fmt(row['value'])} [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]"


def pair_label(row: pd.Series) -> str:
    a, b = row.get("group_a"), row.get("group_b")
    if not isinstance(a, str) or not a:
        return "–"
    if a == b:
        return f"{a} (noise floor)"
    return f"{a} vs {b}" if isinstance(b, str) and b else a


def worst_pairs(metrics: pd.DataFrame) -> pd.DataFrame:
    """For each (attribute, metric) the least fair group pair: the one farthest from the metric's
    fair value by its registered direction or target. Noise-floor rows (a group against itself)
    are a baseline, never a candidate."""
    from equilens.tasks.metrics import METRICS

    pairs = metrics[metrics["group_b"].notna() & (metrics["group_a"] != metrics["group_b"])
                    & metrics["value"].notna()].copy()
    if pairs.empty:
        return pairs
    pairs["_unfairness"] = [METRICS.get(m).distance_from_fair(v) if m in METRICS else v
                            for m, v in zip(pairs["metric"], pairs["value"], strict=True)]
    idx = pairs.groupby(["attribute", "metric"])["_unfairness"].idxmax()
    return pairs.loc[idx].drop(columns="_unfairness")


def _note(details: Any) -> str:
    import json

    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            return ""
    if not isinstance(details, dict):
        return ""
    if details.get("skipped"):
        return str(details["skipped"])[:90]
    return str(details.get("caveat") or "")[:90]


def _compact(row: pd.Series) -> str:
    v = row["value"]
    if v is None or pd.isna(v):
        return "skipped"
    if row.get("ci_low") is None or pd.isna(row.get("ci_low")):
        return f"{v:.3f}"
    return f"{v:.3f} ({row['ci_low']:.3f}–{row['ci_high']:.3f})"


SHORT = {"strict_sentiment_parity": "strict parity", "weak_sentiment_parity": "weak parity",
         "cosine_similarity": "cosine", "bleu_similarity": "BLEU", "rougel_similarity": "ROUGE-L",
         "non_completion_rate": "non-completion"}


def print_verdicts(metrics: pd.DataFrame, config: dict[str, Any] | None = None) -> None:
    """The answer first: one sentence per attribute or family."""
    from equilens.tasks.plain import console as plain_console
    from equilens.tasks.plain import text
    from equilens.tasks.reporting.verdict import verdict_lines

    said = verdict_lines(metrics, config)
    if said:
        console = plain_console(soft_wrap=False) if plain_console().is_terminal else plain_console(width=100)
        console.print(text("Verdict", "bold"))
        for line in said:
            console.print(f"  {line}", highlight=False)
        console.print()


def _details(details: Any) -> dict[str, Any]:
    import json

    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            return {}
    return details if isinstance(details, dict) else {}


def p_of(details: Any) -> float | None:
    """The Holm-adjusted p-value of a row, else its raw permutation p-value (None when not tested)."""
    d = _details(details)
    for key in ("p_holm", "p_value"):
        p = d.get(key)
        if isinstance(p, (int, float)) and p == p:
            return float(p)
    return None


def reported_only(metric: str, details: Any, family: Any = None) -> bool:
    """Is this a group-pair metric the verdict reports but never judges? In a paired family
    (counterfactual, identity; without ``family``, the metric's registered one) a metric that
    :func:`equilens.tasks.reporting.verdict.judged_metric` rejects: an embedding similarity, or a
    text similarity on answers whose group words were left in."""
    from equilens.tasks.metrics import METRICS
    from equilens.tasks.reporting.verdict import judged_metric, paired_families

    if not isinstance(family, str) or not family:
        family = METRICS.get(metric).family if metric in METRICS else None
    return family in paired_families() and not judged_metric(metric, _details(details))


def significance_mark(details: Any, alpha: float = 0.05, metric: str | None = None,
                      family: Any = None) -> str:
    """``*`` when the row's (Holm-adjusted) p-value is below ``alpha``, is one the verdict would
    trust (:func:`equilens.tasks.reporting.verdict.p_is_trusted`: a bootstrap p only on enough
    prompts) and, given its ``metric``, belongs to a metric the verdict judges (:func:`reported_only`
    rows get none). Without the mark the table never claims what the verdict above it denies."""
    d = _details(details)
    p = p_of(d)
    if metric is not None and reported_only(metric, d, family):
        return ""
    return "*" if p is not None and p < alpha and p_is_trusted(d, metric) else ""


def unjudged_note(metrics: pd.DataFrame) -> str:
    """Why some rows of ``metrics`` with a p-value carry no ``*`` (their metric is
    :func:`reported_only`); "" when none do."""
    from equilens.tasks.metrics import METRICS

    kinds: dict[str, set[str]] = {"embeddings": set(), "texts": set(), "other": set()}
    families = metrics["family"] if "family" in metrics else [None] * len(metrics)
    details = metrics["details"] if "details" in metrics else [None] * len(metrics)
    for metric, d, family in zip(metrics["metric"], details, families, strict=True):
        if p_of(d) is None or not reported_only(metric, d, family):
            continue
        inputs = METRICS.get(metric).inputs if metric in METRICS else None
        kinds[inputs if inputs in kinds else "other"].add(SHORT.get(metric, metric))
    why = {"embeddings": "answers that name their group are less alike, so an embedding gap is reported, "
                         "not judged",
           "texts": "scored with the group words left in (metrics.neutralize: false), so answers that name "
                    "their group are less alike and the gap is reported, not judged",
           "other": "reported, not judged by the verdict"}
    said = [f"{', '.join(sorted(names))} {'carries' if len(names) == 1 else 'carry'} no *: {why[kind]}"
            for kind, names in kinds.items() if names]
    return "; ".join(said)


def _fits(widths: list[int], console_width: int) -> bool:
    return sum(w + 3 for w in widths) + 1 <= console_width  # each column: padding and a border, plus the edge


@dataclass(frozen=True)
class Column:
    """A column of a table fitted to the terminal by :func:`fitted_table`. ``rank`` 0 is always shown;
    a higher rank is dropped before a lower one when the table is too wide. A ``shorten`` column is
    free text, cut with an ellipsis down to that many characters; a ``wrap`` column breaks onto
    more lines between words (a pair "a vs b"), never inside one. Any other cell (an id, a metric
    or model name, a number) is shown whole on one line."""

    name: str
    rank: int = 0
    shorten: int | None = None
    wrap: bool = False


def _fit(columns: list[Column], rows: list[list[str]], width: int) -> tuple[list[int], list[int]]:
    """The indices of the columns shown and their widths: every column at its natural width when
    they fit; else the ``shorten`` and ``wrap`` columns narrowed (never below their header or
    longest word); else the highest-ranked column dropped, and again."""
    from rich.cells import cell_len

    natural = [max([cell_len(c.name), *(cell_len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    least = []
    for i, c in enumerate(columns):
        words = [cell_len(w) for r in rows for w in r[i].split()]
        floor = max([cell_len(c.name), *words]) if c.wrap else natural[i]
        least.append(min(natural[i], max(cell_len(c.name), c.shorten)) if c.shorten is not None else floor)
    kept = list(range(len(columns)))
    while True:
        if _fits([natural[i] for i in kept], width):
            return kept, [natural[i] for i in kept]
        widths = [least[i] for i in kept]
        if _fits(widths, width) or all(columns[i].rank == 0 for i in kept):
            spare = width - sum(w + 3 for w in widths) - 1
            for k, i in enumerate(kept):  # the room left goes back to the narrowed columns, in order
                grow = max(0, min(spare, natural[i] - widths[k]))
                widths[k] += grow
                spare -= grow
            return kept, widths
        kept.remove(max((i for i in kept if columns[i].rank), key=lambda i: (columns[i].rank, i)))


def fitted_table(title: str, columns: list[Column], rows: list[list[str]],
                 width: int) -> tuple[Any, list[str]]:
    """A Rich table of ``rows`` no wider than ``width`` (see :class:`Column`), and the names of the
    columns left out to fit. Cells are measured as they are shown: made visible first."""
    from equilens.tasks.plain import visible
    from rich.cells import cell_len, set_cell_size
    from rich.table import Table

    rows = [[visible(cell) for cell in row] for row in rows]
    kept, widths = _fit(columns, rows, width)
    table = Table(title=title, title_justify="left")
    for i, w in zip(kept, widths, strict=True):
        table.add_column(columns[i].name, width=w, no_wrap=not columns[i].wrap, overflow="ellipsis")
    for row in rows:
        cells = []
        for i, w in zip(kept, widths, strict=True):
            cell = row[i]
            if columns[i].shorten is not None and cell_len(cell) > w:
                cell = set_cell_size(cell, w - 1) + "…"
            cells.append(cell)
        table.add_row(*cells)
    return table, [c.name for i, c in enumerate(columns) if i not in kept]


def dropped_line(dropped: list[str]) -> str:
    """The line under a fitted table that names the columns it left out ("" when none)."""
    if not dropped:
        return ""
    return f"hidden to fit: {', '.join(dropped)} (--format csv|json has them all)"


def print_metrics_table(metrics: pd.DataFrame, title: str = "Metrics per group pair") -> None:
    """One table per attribute: a row per group pair, a column per metric (value (95% CI), ``*`` when
    its Holm-adjusted p < 0.05 and the verdict judges the metric; a line under the tables says which
    metrics it only reports). When that table is wider than the terminal it is stacked instead (a
    row per group pair and metric), so no number is ever cut off and no name split."""
    import os

    from equilens.tasks.plain import console as plain_console
    from rich.table import Table

    console = plain_console()
    if not console.is_terminal and not os.environ.get("COLUMNS"):  # a log file: wide, unless COLUMNS says
        console = plain_console(width=180)
    frame = metrics.copy()
    frame["attribute"] = frame["attribute"].fillna("–")
    frame["pair"] = frame.apply(pair_label, axis=1)
    details = frame["details"] if "details" in frame else [None] * len(frame)
    families = frame["family"] if "family" in frame else [None] * len(frame)
    frame["cell"] = [c + significance_mark(d, metric=m, family=f) for c, d, m, f in
                     zip(frame.apply(_compact, axis=1), details, frame["metric"], families, strict=True)]
    for attribute, sub in frame.groupby("attribute", sort=True):
        heading = f"{title} · {attribute}" if attribute != "–" else title
        if (sub["pair"] == "–").all():  # no groups: one row per metric reads better
            table = Table(title=heading, title_justify="left")
            for col in ("metric", "value (95% CI)", "n", "fairer", "note"):  # the note wraps between words
                table.add_column(col, no_wrap=col != "note", overflow="ellipsis")
            for _, r in sub.iterrows():
                note = _note(r.get("details"))
                table.add_row(str(r["metric"]), r["cell"], str(int(r["n"])) if pd.notna(r["n"]) else "–",
                              ARROW.get(r["direction"], "")[:1], note)
            console.print(table)
            continue
        names = list(dict.fromkeys(sub["metric"]))
        arrows = {n: ARROW.get(sub.loc[sub["metric"] == n, "direction"].iloc[0], "")[:1] for n in names}
        order = sorted(dict.fromkeys(sub["pair"]), key=lambda p: ("noise floor" in p, " vs " not in p, p))
        cells = sub.set_index(["pair", "metric"])["cell"]
        cells = cells[~cells.index.duplicated()]
        widths = [max(len("groups"), *(len(p) for p in order))]
        widths += [max(len(f"{SHORT.get(n, n)} {arrows[n]}"), *(len(cells.get((p, n), "")) for p in order)) for n in names]
        if _fits(widths, console.width):
            table = Table(title=heading, title_justify="left")
            table.add_column("groups", no_wrap=True)
            for name in names:
                table.add_column(f"{SHORT.get(name, name)} {arrows[name]}", no_wrap=True)
            for pair in order:
                table.add_row(pair, *[cells.get((pair, n), "") for n in names])
        else:  # stacked: never hides a number, whatever the width
            table = Table(title=heading, title_justify="left")
            table.add_column("groups", overflow="ellipsis")  # "a vs b" wraps between words, never inside one
            table.add_column("metric", no_wrap=True)
            table.add_column("value (95% CI)", no_wrap=True)
            for pair in order:
                for name in names:
                    if (pair, name) in cells.index:
                        table.add_row(pair, f"{SHORT.get(name, name)} {arrows[name]}", cells[(pair, name)])
        console.print(table)
    console.print(table_legend(frame), overflow="fold")
    if note := unjudged_note(frame):
        console.print(note + ".")


LEGEND_ARROWS = {"higher": "↑ higher is fairer", "lower": "↓ lower is fairer",
                 "target": "◎ closer to its target is fairer", "none": "○ no fair value (compared by its gap)"}


def table_legend(metrics: pd.DataFrame) -> str:
    """The line under the metric tables of ``metrics``, from what their metrics declare: the arrow of
    each direction they use, the * when a row has a p-value, and the legend of each family with rows
    there (:data:`equilens.tasks.metrics.LEGENDS`, in the order the families declared them)."""
    from equilens.tasks.metrics import LEGENDS, METRICS

    directions = set(metrics["direction"]) if "direction" in metrics else set()
    parts = [" · ".join(words for d, words in LEGEND_ARROWS.items() if d in directions)]
    details = metrics["details"] if "details" in metrics else [None] * len(metrics)
    if any(p_of(d) is not None for d in details):
        parts.append("* Holm-adjusted p < 0.05")
    families = set(metrics["family"]) if "family" in metrics else \
        {METRICS.get(m).family for m in metrics["metric"] if m in METRICS}
    parts += [text for family, text in LEGENDS.registered() if family in families]
    return "; ".join(p for p in parts if p)


def usage_summary(responses: pd.DataFrame) -> dict[str, Any]:
    """Latency, tokens and cost per run and per (attribute, group)."""
    if responses.empty:
        return {}

    def one(frame: pd.DataFrame) -> dict[str, Any]:
        lat = frame["latency_s"].dropna() if "latency_s" in frame else pd.Series(dtype=float)
        cost = frame["cost"].dropna() if "cost" in frame else pd.Series(dtype=float)
        return {
            "calls": int(len(frame)),
            "latency_p50_s": float(lat.median()) if len(lat) else None,
            "latency_p95_s": float(lat.quantile(0.95)) if len(lat) else None,
            "prompt_tokens": int(frame["prompt_tokens"].fillna(0).sum()) if "prompt_tokens" in frame else None,
            "completion_tokens": int(frame["completion_tokens"].fillna(0).sum()) if "completion_tokens" in frame else None,
            "cost": float(cost.sum()) if len(cost) else None,
        }

    out = one(responses)
    out["by_group"] = {f"{a}/{g}": one(sub) for (a, g), sub in responses.groupby(["attribute", "grp"], sort=True)}
    return out
