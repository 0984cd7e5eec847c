"""Tiny dependency-free SVG charts for self-contained HTML reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import numpy as np

PALETTE = ["#3b6ea8", "#d9822b", "#3f9c5a", "#b9474a", "#7d5ba6", "#8c6d46", "#c45fa0", "#6b7b8c"]
W, ROW, LEFT, RIGHT, TOP = 640, 22, 190, 30, 30


def _scale(lo: float, hi: float, a: float, b: float):  # noqa: ANN202
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _axis_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    return list(np.linspace(lo, hi, n))


def axis_range(values: Sequence[float], include: Sequence[float] = (0.0,), pad_share: float = 0.05) -> tuple[float, float]:
    """A readable axis range around ``values`` (and the ``include`` points): padded by ``pad_share``
    of the span, and at least 0.1 wide, so a metric that is 0 everywhere gets -0.05..0.05, not
    an axis of 1e-10 steps."""
    finite = [float(v) for v in (*values, *include) if v is not None and np.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    pad = (hi - lo) * pad_share
    if hi - lo + 2 * pad < 0.1:
        mid = (hi + lo) / 2
        return mid - 0.05, mid + 0.05
    return lo - pad, hi + pad


def interval_chart(title: str, rows: Sequence[tuple[str, float, float | None, float | None]], fairer: str,
                   target: float | None = None) -> str:
    """One row per group pair: point estimate with its interval as a whisker; a dashed line marks
    the fair value of a metric with a target (0.5 for a stereotype score, 0 for an effect size)."""
    vals = [v for _, v, lo, hi in rows for v in (v, lo, hi) if v is not None and np.isfinite(v)]
    lo_, hi_ = axis_range(vals, (0.0,) if target is None else (target,))
    x = _scale(lo_, hi_, LEFT, W - RIGHT)
    h = TOP + ROW * len(rows) + 30
    out = [f'<svg class="chart interval" role="img" aria-label="{escape(title)}" width="{W}" height="{h}" '
           f'viewBox="0 0 {W} {h}" xmlns="http://www.w3.org/2000/svg">',
           f'<text x="{LEFT}" y="16" class="title">{escape(title)} <tspan class="hint">({escape(fairer)})</tspan></text>']
    for t in _axis_ticks(lo_, hi_):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{TOP - 6}" y2="{h - 24}" class="grid"/>'
                   f'<text x="{x(t):.1f}" y="{h - 8}" class="tick" text-anchor="middle">{t:.3g}</text>')
    if target is not None:
        out.append(f'<line x1="{x(target):.1f}" x2="{x(target):.1f}" y1="{TOP - 6}" y2="{h - 24}" class="target" '
                   f'stroke="#b9474a" stroke-dasharray="4 3"><title>fair value {target:g}</title></line>')
    for i, (label, v, lo, hi) in enumerate(rows):
        y = TOP + ROW * i + ROW / 2
        out.append(f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end" class="label">{escape(label)}</text>')
        if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
            out.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" class="whisker"/>')
        if v is not None and np.isfinite(v):
            out.append(f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="4.5" class="point"><title>{escape(label)}: '
                       f'{v:.4f}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def histogram_chart(title: str, groups: Mapping[str, np.ndarray], lo: float = 0.0, hi: float = 1.0, bins: int = 20) -> str:
    """Overlaid step histograms (share of responses per bin), one colour per group."""
    edges = np.linspace(lo, hi, bins + 1)
    shares = {g: np.histogram(np.clip(v, lo, hi), bins=edges)[0] / max(len(v), 1) for g, v in groups.items()}
    top = max((s.max() for s in shares.values() if len(s)), default=1.0) or 1.0
    h = 220
    x = _scale(lo, hi, 50, W - RIGHT)
    y = _scale(0, top, h - 30, TOP)
    out = [f'<svg class="chart histogram" role="img" aria-label="{escape(title)}" width="{W}" height="{h}" '
           f'viewBox="0 0 {W} {h}" xmlns="http://www.w3.org/2000/svg">',
           f'<text x="50" y="16" class="title">{escape(title)}</text>']
    for t in _axis_ticks(lo, hi):
        out.append(f'<text x="{x(t):.1f}" y="{h - 12}" class="tick" text-anchor="middle">{t:.2g}</text>')
    out.append(f'<line x1="50" x2="{W - RIGHT}" y1="{h - 30}" y2="{h - 30}" class="axis"/>')
    for i, (g, s) in enumerate(shares.items()):
        color = PALETTE[i % len(PALETTE)]
        pts = []
        for j, share in enumerate(s):
            pts += [f"{x(edges[j]):.1f},{y(share):.1f}", f"{x(edges[j + 1]):.1f},{y(share):.1f}"]
        out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" stroke-width="2"><title>{escape(g)}'
                   f'</title></polyline>')
        out.append(f'<text x="{W - RIGHT - 4}" y="{TOP + 14 * i}" text-anchor="end" fill="{color}" class="legend">'
                   f'{escape(g)} (n={len(groups[g])})</text>')
    out.append("</svg>")
    return "".join(out)


def line_chart(title: str, xs: Sequence[str], series: Mapping[str, Sequence[float | None]]) -> str:
    """Values across runs (oldest left), one line per series."""
    vals = [v for s in series.values() for v in s if v is not None and np.isfinite(v)]
    lo_, hi_ = axis_range(vals, (), pad_share=0.1)
    h = 220
    x = _scale(0, max(len(xs) - 1, 1), 60, W - RIGHT - 120)
    y = _scale(lo_, hi_, h - 40, TOP)
    out = [f'<svg class="chart trend" role="img" aria-label="{escape(title)}" width="{W}" height="{h}" '
           f'viewBox="0 0 {W} {h}" xmlns="http://www.w3.org/2000/svg">',
           f'<text x="60" y="16" class="title">{escape(title)}</text>']
    for t in _axis_ticks(lo_, hi_, 4):
        out.append(f'<text x="52" y="{y(t) + 4:.1f}" class="tick" text-anchor="end">{t:.3g}</text>'
                   f'<line x1="60" x2="{W - RIGHT - 120}" y1="{y(t):.1f}" y2="{y(t):.1f}" class="grid"/>')
    for i, label in enumerate(xs):
        out.append(f'<text x="{x(i):.1f}" y="{h - 22}" class="tick" text-anchor="middle">{escape(label[-13:])}</text>')
    for k, (name, values) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        pts = [f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values) if v is not None and np.isfinite(v)]
        out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in pts:
            cx, cy = p.split(",")
            out.append(f'<circle cx="{cx}" cy="{cy}" r="3" fill="{color}"/>')
        out.append(f'<text x="{W - RIGHT - 112}" y="{TOP + 14 * k}" fill="{color}" class="legend">{escape(name)}</text>')
    out.append("</svg>")
    return "".join(out)
