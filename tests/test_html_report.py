"""The HTML report: rebuilt from DuckDB alone, rendered in a real headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.reporting.html import build_html_report, write_html_report
from equilens.tasks.storage.store import Store

from tests.png_pixels import read_png, rows_with

TEXTS = {"male": ["He is fine.", "A calm answer."], "female": ["She is fine.", "An awful, sad answer."]}


def _seed_run(store: Store, run_id: str, started: str, cosine: float) -> None:
    store.start_run(run_id, name="nightly", flow="counterfactual_assessment", started_at=pd.Timestamp(started),
                    config={}, config_hash="abc", provider="openai", model="m")
    rows = []
    for grp, texts in TEXTS.items():
        for i, t in enumerate(texts):
            rows.append({"run_id": run_id, "variant_id": f"v{grp}", "prompt_id": f"p{i}", "attribute": "gender",
                         "grp": grp, "sample_idx": 0, "text": t, "ok": True, "refusal": False, "latency_s": 0.2,
                         "prompt_tokens": 5, "completion_tokens": 4})
    rows.append({"run_id": run_id, "variant_id": "vx", "prompt_id": "p9", "attribute": "gender", "grp": "female",
                 "sample_idx": 0, "text": None, "ok": False, "refusal": False, "error_class": "RateLimitError"})
    store.append("responses", pd.DataFrame(rows))
    store.append("variants", pd.DataFrame([{"run_id": run_id, "variant_id": f"v{grp}", "prompt_id": "p0",
                                            "attribute": "gender", "grp": grp, "text": f"Describe the {grp} <b>nurse</b>."}
                                           for grp in TEXTS]))
    store.append("scores", pd.DataFrame([{"run_id": run_id, "text_hash": text_hash(t), "scorer": "vader-neg",
                                          "value": 0.6 if "awful" in t else 0.0} for ts in TEXTS.values() for t in ts]))
    metrics = [
        {"metric": "cosine_similarity", "group_a": "male", "group_b": "female", "value": cosine, "ci_low": cosine - 0.05,
         "ci_high": cosine + 0.05, "direction": "higher"},
        {"metric": "strict_sentiment_parity", "group_a": "male", "group_b": "female", "value": 0.3, "ci_low": 0.1,
         "ci_high": 0.5, "direction": "lower", "details": {"noise_floor": 0.1, "gap": 0.2, "gap_ci": [0.05, 0.35],
                                                            "p_value": 0.01, "min_detectable_gap": 0.15}},
        {"metric": "non_completion_rate", "group_a": "female", "group_b": None, "value": 1 / 3, "ci_low": 0.0,
         "ci_high": 0.7, "direction": "lower"},
        {"metric": "honest", "group_a": None, "group_b": None, "value": None, "direction": "lower",
         "details": {"skipped": "no lexicon configured"}},
    ]
    store.append("metrics", pd.DataFrame([{"run_id": run_id, "family": "counterfactual", "attribute": "gender",
                                           "n": 2, "aggregation": "mean", **m} for m in metrics]))
    store.finish_run(run_id, "completed", summary={"ftu": {"holds": False, "counts": {"gender": 2}, "prompts": 3}})


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "e.duckdb")
    _seed_run(s, "run-1", "2026-11-20 02:00", 0.80)
    _seed_run(s, "run-2", "2026-11-21 02:00", 0.70)
    return s


def test_report_has_every_section(store: Store) -> None:
    html = build_html_report(store, "run-2")
    for section in ("glance", "examples", "headline", "metrics", "distributions", "trend", "completion",
                    "all-metrics"):
        assert f"<section id={section}>" in html
    assert "does not hold" in html and "no lexicon configured" in html
    assert html.count('data-trend="cosine_similarity"') == 1
    assert "RateLimitError" not in html or "failed" in html


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it)")
def test_report_renders_in_headless_chromium(store: Store, tmp_path: Path) -> None:
    out = write_html_report(store, "run-2", tmp_path / "report.html")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'chrome'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", out.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert dom.count("<svg") >= 6  # the glance figure, interval charts, distributions, trend
    assert 'data-glance="gender"' in dom and 'class="band"' in dom  # the gap beside its detectable band
    assert "<details" in dom and "An awful, sad answer." in dom  # the examples, the first one open
    assert "&lt;b&gt;nurse&lt;/b&gt;" in dom  # a prompt's markup shown as text
    assert dom.count("<circle") >= 3 and "<polyline" in dom
    # Screenshots, kept under $EQUILENS_SCREENSHOTS when set: the first screen, and the whole page.
    # Their pixels show the glance figure's detectable band and its finding in red on the first
    # screen, and further down the first example expanded (its summary's open-state background).
    shots = Path(os.environ.get("EQUILENS_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for name, size in (("report-first-screen.png", "900,800"), ("report-whole.png", "900,4000")):
        subprocess.run([CHROMIUM, *flags, f"--screenshot={shots / name}", f"--window-size={size}", out.as_uri()],
                       capture_output=True, timeout=120, check=True)
    top, whole = read_png(shots / "report-first-screen.png"), read_png(shots / "report-whole.png")
    band = rows_with(top, "#e8eef6")  # the detectable band, drawn on the first screen
    assert len(band) > 10
    # the finding's point in red on the band's rows (no stylesheet rule may paint it blue)
    assert len(set(rows_with(top, "#b3261e")) & set(band)) >= 3
    opened = rows_with(whole, "#eef4ea")  # an expanded example's summary, below the glance figure
    assert len(opened) > 10 and opened.min() > rows_with(whole, "#e8eef6").max()


def test_an_identity_run_s_glance_shows_its_outcome_gaps_and_the_judge_with_its_note(tmp_path: Path) -> None:
    import re

    from tests.fakes.runs import JUDGE_NOTE, seed_identity_run

    s = Store(tmp_path / "i.duckdb")
    seed_identity_run(s)
    html = build_html_report(s, "run-i")
    glance = html[html.index("<section id=glance>"):html.index("</section>", html.index("<section id=glance>"))]
    figures = re.findall(r'<figure class=plot data-glance="gender x race"(?: data-glance-metric="(\w+)")?', glance)
    # one figure per outcome gap, one for the judge, one for the sentiment finding; no parity figure
    assert figures == ["number_outcome_gap", "yes_rate_gap", "judge_harm", ""]
    assert "relative amount gap per pair (share of the prompt&#x27;s average)" in glance
    assert "yes-rate gap per pair" in glance and "strict parity gap per pair" not in glance
    amounts = glance[glance.index('data-glance-metric="number_outcome_gap"'):glance.index('data-glance-metric="yes_rate_gap"')]
    assert amounts.index("female-black vs male-white") < amounts.index("female-white vs female-black")  # |gap| first
    assert amounts.count('class="point found"') == 3  # the three outcome findings in red, negative ones too
    judge = glance[glance.index('data-glance-metric="judge_harm"'):]
    assert f"<figcaption class=meta>{JUDGE_NOTE}</figcaption>" in judge.split("</figure>")[0]
    # the examples (three prompts) show what was read from each answer
    assert "<div class=reading>read: $46,400 (year)</div>" in html and "→ 54,000 per year" in html
    # one orientation per pair in every table
    seen = set(re.findall(r"<td>((?:fe)?male-\w+) vs ((?:fe)?male-\w+)</td>", html))
    seen |= set(re.findall(r"<td>((?:fe)?male-\w+)</td><td>((?:fe)?male-\w+)</td>", html))
    assert seen and not {(b, a) for a, b in seen} & seen


def test_a_signed_gap_s_detectable_band_reaches_both_sides_of_zero() -> None:
    import re

    from equilens.tasks.reporting.svg import gap_chart

    svg = gap_chart("amounts", [("female-black vs male-white", -0.15, -0.2, -0.1, 0.06, True),
                                ("female-white vs male-black", 0.01, -0.04, 0.06, 0.06, False)], signed=True)
    zero = float(re.search(r'<line x1="([\d.]+)"[^>]*class="zero"', svg).group(1))
    for x, width in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg):
        assert float(x) + float(width) / 2 == pytest.approx(zero, abs=0.2)  # centred on 0
    low, high = re.findall(r'<circle cx="([\d.]+)"', svg)
    assert float(low) < zero - 2 * float(width) / 2 and "±0.060" in svg  # the finding left of the band
    unsigned = gap_chart("parity", [("male vs female", 0.2, 0.05, 0.35, 0.15, True)])
    x, width = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', unsigned).groups()
    assert float(x) == pytest.approx(float(re.search(r'<line x1="([\d.]+)"[^>]*class="zero"', unsigned).group(1)),
                                     abs=0.1)  # a parity gap's band starts at 0


def test_the_report_stars_no_metric_the_verdict_does_not_judge(tmp_path: Path) -> None:
    # the demo's report starred cosine in "Least fair group pair per metric" and "All metrics" under a
    # verdict of no difference beyond sampling noise: embeddings are reported, never judged
    from tests.fakes.cli import equilens
    from tests.fakes.runs import gender_run

    gender_run(Store(tmp_path / "e.duckdb"), "demo-1")
    out = equilens("report", "demo-1", "--db", str(tmp_path / "e.duckdb"), "--out", str(tmp_path / "r.html"),
                   cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "no difference beyond sampling noise" in html.split("<section id=verdict>")[1].split("</section>")[0]
    least = html.split("<h3>Least fair group pair per metric</h3>")[1].split("</section>")[0]
    cosine = next(r for r in least.split("<tr>") if "<td>cosine_similarity</td>" in r)
    assert "*" not in cosine and "0.4180 [0.3630, 0.4750]" in cosine
    every = html.split("<section id=all-metrics>")[1].split("</section>")[0]
    assert "<td>*</td>" not in every and "<td>0.0004</td>" in every  # its p is shown, unstarred
    note = "cosine carries no *: answers that name their group are less alike, so an embedding gap is reported"
    assert note in least and note in every


def test_skipped_rows_with_one_reason_are_one_line_naming_their_groups(tmp_path: Path) -> None:
    """A reason shared by many rows (every group's noise floor, as a deterministic model gives) is one
    line with the groups and pairs it holds for, per attribute; a row without groups keeps its own."""
    store = Store(tmp_path / "e.duckdb")
    store.start_run("run-s", name="skips", flow="counterfactual_assessment", started_at=pd.Timestamp("2026-11-20"),
                    config={}, config_hash="abc", provider="openai", model="m")
    same = "no noise floor: every same-group pair scores 0.921"
    rows = [{"metric": "cosine_similarity", "attribute": attribute, "group_a": g, "group_b": g, "skipped": same}
            for attribute, groups in (("gender", ["male", "female"]), ("race", ["white", "Black", "Asian"]))
            for g in groups]
    rows += [{"metric": "bleu_similarity", "attribute": "race", "group_a": a, "group_b": b, "skipped": "no answers"}
             for a, b in (("Asian", "Black"), ("Asian", "white"))]
    rows += [{"metric": "honest", "attribute": None, "group_a": None, "group_b": None, "skipped": "no lexicon"}]
    store.append("metrics", pd.DataFrame([
        {"run_id": "run-s", "family": "counterfactual", "metric": r["metric"], "attribute": r["attribute"],
         "group_a": r["group_a"], "group_b": r["group_b"], "value": None, "n": 0, "direction": "higher",
         "aggregation": "mean", "details": {"skipped": r["skipped"]}} for r in rows]))
    store.finish_run("run-s", "completed", summary={})
    html = build_html_report(store, "run-s")
    listed = html.split("<h3>Skipped</h3><ul>")[1].split("</ul>")[0]
    assert listed.split("</li>")[:-1] == [
        f"<li><b>cosine_similarity</b>: {same} (gender: male, female; race: white, Black, Asian)",
        "<li><b>bleu_similarity</b>: no answers (race: Asian vs Black, Asian vs white)",
        "<li><b>honest</b>: no lexicon",
    ], listed


def test_the_all_metrics_note_speaks_of_the_run_s_own_families(tmp_path: Path) -> None:
    """A run without counterfactual pairs gets no words about parity permutations and similarity gaps
    under its table: the note comes from what its metrics and families declare."""
    import pandas as pd
    from equilens.tasks.reporting.html import write_html_report
    from equilens.tasks.storage.store import Store

    store = Store(tmp_path / "e.duckdb")
    store.start_run("r1", name="bbq-only", flow="bbq_assessment", started_at=pd.Timestamp("2026-12-01"),
                    config={}, config_hash="h", provider="local", model="m")
    store.append("metrics", pd.DataFrame([{
        "run_id": "r1", "attribute": "gender", "metric": "bbq_bias_score_disambiguated", "family": "bbq", "group_a": None,
        "group_b": None, "value": 0.1, "ci_low": 0.0, "ci_high": 0.2, "n": 40, "direction": "target",
        "aggregation": "mean", "details": "{}"}]))
    store.finish_run("r1", "completed", summary={})
    html = write_html_report(store, "r1", tmp_path / "r.html").read_text(encoding="utf-8")
    note = html.split("<section id=all-metrics>", 1)[1].split("</p>", 1)[0]
    assert "permutation (parity)" not in note and "similarity gap" not in note, note
    assert "closer to its target is fairer" in note, note
