"""Tiny dependency-free SVG charts for self-contained HTML reports."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape

import numpy as np

PALETTE = ["#3b6ea8", "#d9822b", "#3f9c5a", "#b9474a", "#7d5ba6", "#8c6d46", "#c45fa0", "#6b7b8c"]
DASHES = ["", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 2", "3 6"]
TITLE_CHARS = 95  # longer titles wrap onto a second line instead of running off the chart


def _title_lines(title: str) -> list[str]:
    """``title`` in at most two lines of about TITLE_CHARS characters, broken at a space."""
    if len(title) <= TITLE_CHARS:
        return [title]
    cut = title.rfind(" ", 0, TITLE_CHARS)
    cut = cut if cut > 0 else TITLE_CHARS
    rest = title[cut:].strip()
    return [title[:cut], rest if len(rest) <= TITLE_CHARS else rest[: TITLE_CHARS - 1] + "…"]


HINT_CHARS = 85  # a title's last line and its hint longer than this: the hint gets a line of its own


def _title(title: str, x: float, hint: str = "") -> tuple[str, int]:
    """SVG text for a (possibly two-line) title, its hint after it (or under it, where the two would
    run off the chart), and the vertical room it takes."""
    lines = _title_lines(title)
    spans = "".join(f'<tspan x="{x}" dy="{0 if i == 0 else 15}">{escape(line)}</tspan>' for i, line in enumerate(lines))
    below = bool(hint) and len(lines[-1]) + len(hint) + 3 > HINT_CHARS
    extra = (f'<tspan class="hint" x="{x}" dy="15">({escape(hint)})</tspan>' if below
             else f' <tspan class="hint">({escape(hint)})</tspan>' if hint else "")
    return f'<text x="{x}" y="16" class="title">{spans}{extra}</text>', 15 * (len(lines) - 1 + below)
W, ROW, LEFT, RIGHT, TOP = 640, 22, 190, 30, 30
LABEL_CHARS = 29  # a row label this long fits LEFT at the 11 px label font


def _scale(lo: float, hi: float, a: float, b: float):  # noqa: ANN202
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _axis_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round ticks inside [lo, hi]: multiples of a step of 1, 2 or 5 times a power of ten, about
    ``n`` of them (0.05, 0.1, 0.15 rather than 0.0269, 0.0597)."""
    span = hi - lo
    if not np.isfinite(span) or span <= 0:
        return [lo]
    raw = span / max(n, 1)
    power = 10 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = np.ceil(lo / step - 1e-9) * step
    digits = max(0, int(-np.floor(np.log10(step))))
    return [round(float(t), digits) + 0.0 for t in np.arange(first, hi + step * 1e-9, step)]


def axis_range(values: Sequence[float], include: Sequence[float] = (0.0,), pad_share: float = 0.05,
               bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """A readable axis range around ``values`` (and the ``include`` points): padded by ``pad_share``
    of the span, and at least 0.1 wide, so a metric that is 0 everywhere gets -0.05..0.05, not
    an axis of 1e-10 steps; never past ``bounds``, the values the metric can take (a rate: 0..1)."""
    finite = [float(v) for v in (*values, *include) if v is not None and np.isfinite(v)]
    if bounds is not None:
        finite = [min(max(v, bounds[0]), bounds[1]) for v in finite]
    if not finite:
        return bounds or (0.0, 1.0)
    lo, hi = min(finite), max(finite)
    pad = (hi - lo) * pad_share
    if hi - lo + 2 * pad < 0.1:
        mid = (hi + lo) / 2
        lo, hi = mid - 0.05, mid + 0.05
    else:
        lo, hi = lo - pad, hi + pad
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


def _row_frame(kind: str, title: str, hint: str, values: Sequence[float | None], include: Sequence[float],
               rows: int, bounds: tuple[float, float] | None = None) -> tuple[list[str], Callable[[float], float], float, float]:
    """The frame of a chart with one row per pair: the svg head, the title, the grid and round
    ticks of an axis around ``values`` (and ``include``), within ``bounds``; returns (parts, x scale, top, height)."""
    lo_, hi_ = axis_range([v for v in values if v is not None and np.isfinite(v)], include, bounds=bounds)
    x = _scale(lo_, hi_, LEFT, W - RIGHT)
    title_svg, room = _title(title, 8, hint)
    top = TOP + room
    h = top + ROW * rows + 30
    out = [f'<svg class="chart {kind}" role="img" aria-label="{escape(title)}" width="{W}" height="{h}" '
           f'viewBox="0 0 {W} {h}" xmlns="http://www.w3.org/2000/svg">', title_svg]
    for t in _axis_ticks(lo_, hi_):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top - 6}" y2="{h - 24}" class="grid"/>'
                   f'<text x="{x(t):.1f}" y="{h - 8}" class="tick" text-anchor="middle">{t:g}</text>')
    return out, x, top, h


def _row(out: list[str], x: Callable[[float], float], top: float, i: int, label: str, lo: float | None,
         hi: float | None) -> float:
    """Row ``i``'s label and interval whisker; returns the row's y."""
    y = top + ROW * i + ROW / 2
    shown = label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"  # the whole on hover
    out.append(f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end" class="label"><title>{escape(label)}</title>'
               f'{escape(shown)}</text>')
    if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
        out.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" class="whisker"/>')
    return y


def interval_chart(title: str, rows: Sequence[tuple[str, float, float | None, float | None]], fairer: str,
                   target: float | None = None, bounds: tuple[float, float] | None = None) -> str:
    """One row per group pair: point estimate with its interval as a whisker; a dashed line marks
    the fair value of a metric with a target (0.5 for a stereotype score, 0 for an effect size); the
    axis stays within ``bounds``, the values the metric can take."""
    vals = [v for _, v, lo, hi in rows for v in (v, lo, hi)]
    include = (0.0,) if target is None else (target,)
    out, x, top, h = _row_frame("interval", title, fairer, vals, include, len(rows), bounds)
    if target is not None:
        out.append(f'<line x1="{x(target):.1f}" x2="{x(target):.1f}" y1="{top - 6}" y2="{h - 24}" class="target" '
                   f'stroke="#b9474a" stroke-dasharray="4 3"><title>fair value {target:g}</title></line>')
    for i, (label, v, lo, hi) in enumerate(rows):
        y = _row(out, x, top, i, label, lo, hi)
        if v is not None and np.isfinite(v):
            out.append(f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="4.5" class="point"><title>{escape(label)}: '
                       f'{v:.4f}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def histogram_chart(title: str, groups: Mapping[str, np.ndarray], lo: float = 0.0, hi: float = 1.0, bins: int = 20) -> str:
    """Overlaid step histograms (share of responses per bin), one colour and dash pattern per group,
    each line nudged by a pixel so identical distributions stay visible; the legend shows each key."""
    edges = np.linspace(lo, hi, bins + 1)
    shares = {g: np.histogram(np.clip(v, lo, hi), bins=edges)[0] / max(len(v), 1) for g, v in groups.items()}
    top = max((s.max() for s in shares.values() if len(s)), default=1.0) or 1.0
    title_svg, room = _title(title, 50)
    legend_h = 14 * len(shares)
    h = 220 + room
    x = _scale(lo, hi, 50, W - RIGHT - 150)
    y = _scale(0, top, h - 30, TOP + room)
    out = [f'<svg class="chart histogram" role="img" aria-label="{escape(title)}" width="{W}" height="{max(h, legend_h + 40)}" '
           f'viewBox="0 0 {W} {max(h, legend_h + 40)}" xmlns="http://www.w3.org/2000/svg">', title_svg]
    for t in _axis_ticks(lo, hi):
        out.append(f'<text x="{x(t):.1f}" y="{h - 12}" class="tick" text-anchor="middle">{t:g}</text>')
    out.append(f'<line x1="50" x2="{W - RIGHT - 150}" y1="{h - 30}" y2="{h - 30}" class="axis"/>')
    for i, (g, s) in enumerate(shares.items()):
        color, dash = PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)]
        nudge = i - (len(shares) - 1) / 2  # pixels: overlapping steps sit side by side
        pts = []
        for j, share in enumerate(s):
            pts += [f"{x(edges[j]) + nudge:.1f},{y(share) - nudge:.1f}", f"{x(edges[j + 1]) + nudge:.1f},{y(share) - nudge:.1f}"]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" stroke-width="2"{dash_attr}>'
                   f'<title>{escape(g)}</title></polyline>')
        ly = TOP + room + 14 * i
        out.append(f'<line x1="{W - RIGHT - 140}" x2="{W - RIGHT - 116}" y1="{ly - 4}" y2="{ly - 4}" stroke="{color}" '
                   f'stroke-width="3"{dash_attr} class="key"/>'
                   f'<text x="{W - RIGHT - 110}" y="{ly}" fill="{color}" class="legend">{escape(g)} (n={len(groups[g])})</text>')
    out.append("</svg>")
    return "".join(out)


def line_chart(title: str, xs: Sequence[str], series: Mapping[str, Sequence[float | None]],
               x_marks: Sequence[str] | None = None) -> str:
    """Values across runs (oldest left), one line per series. ``x_marks`` labels each run (e.g. the
    letter of its config); a dashed vertical line marks where the mark changes."""
    vals = [v for s in series.values() for v in s if v is not None and np.isfinite(v)]
    lo_, hi_ = axis_range(vals, (), pad_share=0.1)
    title_svg, room = _title(title, 60)
    h = 220 + room
    x = _scale(0, max(len(xs) - 1, 1), 60, W - RIGHT - 120)
    y = _scale(lo_, hi_, h - 40, TOP + room)
    out = [f'<svg class="chart trend" role="img" aria-label="{escape(title)}" width="{W}" height="{h}" '
           f'viewBox="0 0 {W} {h}" xmlns="http://www.w3.org/2000/svg">', title_svg]
    for t in _axis_ticks(lo_, hi_, 4):
        out.append(f'<text x="52" y="{y(t) + 4:.1f}" class="tick" text-anchor="end">{t:.3g}</text>'
                   f'<line x1="60" x2="{W - RIGHT - 120}" y1="{y(t):.1f}" y2="{y(t):.1f}" class="grid"/>')
    for i, label in enumerate(xs):
        mark = f" [{x_marks[i]}]" if x_marks else ""
        out.append(f'<text x="{x(i):.1f}" y="{h - 22}" class="tick" text-anchor="middle">{escape(label[-13:] + mark)}</text>')
        if x_marks and i and x_marks[i] != x_marks[i - 1]:
            mid = (x(i) + x(i - 1)) / 2
            out.append(f'<line x1="{mid:.1f}" x2="{mid:.1f}" y1="{TOP + room - 6}" y2="{h - 36}" class="config-change" '
                       f'stroke="#999" stroke-dasharray="3 3"><title>config changed</title></line>')
    for k, (name, values) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        pts = [f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None and np.isfinite(v)]
        out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in pts:
            cx, cy = p.split(",")
            out.append(f'<circle cx="{cx}" cy="{cy}" r="3" fill="{color}"/>')
        out.append(f'<text x="{W - RIGHT - 112}" y="{TOP + room + 14 * k}" fill="{color}" class="legend">{escape(name)}</text>')
    out.append("</svg>")
    return "".join(out)


GLANCE_ROWS = 12  # pairs shown before "show all"


def gap_chart(title: str, rows: Sequence[tuple[str, float, float | None, float | None, float | None, bool]],
              signed: bool = False) -> str:
    """The verdict at a glance: one row per pair, its gap beyond noise (positive = less fair) with its
    interval, the zero line, and the minimum detectable gap as a shaded band from 0 (a gap inside
    the band could not have been told from noise); findings in red. A ``signed`` gap (an outcome
    gap, a judge's harm score) is unfair in either direction: its band reaches the detectable gap
    on both sides of 0. Rows are drawn in the order given."""
    vals = [v for _, g, lo, hi, m, _ in rows for v in (g, lo, hi, m, -m if signed and m is not None else None)]
    out, x, top, h = _row_frame("glance", title, "band: detectable gap", vals, (0.0,), len(rows))
    for i, (label, gap, lo, hi, mdg, found) in enumerate(rows):
        y = top + ROW * i + ROW / 2
        if mdg is not None and np.isfinite(mdg):  # drawn first, under the whisker and the point
            left, right = (x(-abs(mdg)), x(abs(mdg))) if signed else sorted((x(0), x(mdg)))
            out.append(f'<rect x="{left:.1f}" y="{y - 7:.1f}" width="{right - left:.1f}" height="14" '
                       f'class="band" fill="#e8eef6"><title>smallest detectable gap {"±" if signed else ""}'
                       f'{abs(mdg) if signed else mdg:.3f}</title></rect>')
        _row(out, x, top, i, label, lo, hi)
        if gap is not None and np.isfinite(gap):
            color = "#b3261e" if found else "#3b6ea8"
            out.append(f'<circle cx="{x(gap):.1f}" cy="{y:.1f}" r="4.5" fill="{color}" class="point{" found" if found else ""}">'
                       f'<title>{escape(label)}: gap {gap:.4f}{" (finding)" if found else ""}</title></circle>')
    out.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top - 6}" y2="{h - 24}" class="zero" stroke="#444"/>')
    out.append("</svg>")
    return "".join(out)
