"""Chart details a reader relies on: legend keys, visible overlapping groups, whole titles, config marks."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from equilens.tasks.reporting.svg import histogram_chart, interval_chart, line_chart


def test_histogram_legend_has_a_key_per_group_and_identical_groups_stay_visible() -> None:
    same = np.array([0.1, 0.2, 0.2, 0.3])
    svg = histogram_chart("vader-neg by group · race", {g: same for g in ("white", "black", "asian", "hispanic")})
    assert svg.count('class="key"') == 4
    lines = re.findall(r'<polyline points="([^"]+)"[^>]*stroke="(#[0-9a-f]{6})"([^>]*)>', svg)
    assert len({pts for pts, _, _ in lines}) == 4  # nudged: four distinct paths although the data are equal
    assert len({color for _, color, _ in lines}) == 4
    assert len({dash for _, _, dash in lines}) == 4  # and four dash patterns


def test_long_titles_wrap_instead_of_running_off_the_chart() -> None:
    title = "stereotype_score · Career_Family_vs_Male_Female_with_a_very_long_bias_name " + "x" * 60
    svg = interval_chart(title, [("all", 0.6, 0.5, 0.7)], "closer to 0.5", target=0.5)
    spans = re.findall(r"<tspan x=\"8\" dy=\"\d+\">([^<]*)</tspan>", svg)
    assert len(spans) == 2 and all(len(s) <= 95 for s in spans)


def test_trend_marks_a_config_change() -> None:
    svg = line_chart("cosine", ["run-1", "run-2", "run-3"], {"gender": [0.8, 0.79, 0.6]}, ["A", "A", "B"])
    assert svg.count('class="config-change"') == 1 and "[B]" in svg


def test_trend_in_the_report_leaves_noise_floors_out_and_names_configs(tmp_path) -> None:
    from equilens.tasks.reporting.html import build_html_report
    from equilens.tasks.storage.store import Store

    store = Store(tmp_path / "e.duckdb")
    for i, (run, cfg_hash, cross, floor) in enumerate((("r1", "h1", 0.8, 0.2), ("r2", "h2", 0.6, 0.2))):
        store.start_run(run, name="nightly", flow="counterfactual_assessment", config={}, config_hash=cfg_hash,
                        provider="openai", model="m", started_at=pd.Timestamp(f"2026-11-0{i + 1}"))
        store.append("metrics", pd.DataFrame([
            {"run_id": run, "family": "counterfactual", "attribute": "gender", "group_a": "male", "group_b": "female",
             "metric": "cosine_similarity", "value": cross, "direction": "higher"},
            {"run_id": run, "family": "counterfactual", "attribute": "gender", "group_a": "male", "group_b": "male",
             "metric": "cosine_similarity", "value": floor, "direction": "higher"}]))
        store.finish_run(run, "completed", summary={})
    html = build_html_report(store, "r2")
    trend = html[html.index("<section id=trend>"):]
    # the plotted means are 0.8 and 0.6 (floors left out), not 0.5 and 0.4
    ticks = [float(t) for t in re.findall(r'class="tick" text-anchor="end">([^<]+)<', trend)]
    assert min(ticks) > 0.5 and max(ticks) < 0.9
    assert "h1" in trend and "h2" in trend and 'class="config-change"' in trend


def test_a_long_pair_label_is_shortened_to_fit_and_kept_whole_on_hover() -> None:
    from equilens.tasks.reporting.svg import gap_chart

    label = "native_american vs middle_eastern"  # 33 characters: must not run off the chart's left edge
    svg = gap_chart("race", [(label, 0.01, -0.02, 0.03, 0.6, False)])
    assert f"<title>{label}</title>native_american vs middle_ea…</text>" in svg


def test_a_rate_s_axis_stays_within_what_it_can_take_and_has_no_fair_line() -> None:
    import re

    from equilens.tasks.metrics import METRICS
    from equilens.tasks.reporting.svg import interval_chart

    spec = METRICS.get("yes_rate")
    assert spec.direction == "none" and spec.target is None and spec.value_range() == (0.0, 1.0)
    # a cell's rate with a wild interval (a tiny sample's bootstrap) must not stretch the axis past 0..1
    svg = interval_chart("yes_rate", [("female-black", 0.4, -2.8, 3.1), ("male-white", 0.6, 0.5, 0.7)], "",
                         None, spec.value_range())
    ticks = [float(t) for t in re.findall(r'class="tick" text-anchor="middle">([-0-9.e]+)<', svg)]
    assert ticks and min(ticks) >= 0.0 and max(ticks) <= 1.0, ticks
    assert 'class="target"' not in svg
    assert METRICS.get("yes_rate_gap").value_range() == (-1.0, 1.0)
