"""The read-only ``equilens`` commands over stored runs and the registries: runs, show, report, compare,
metrics, assessments, options; and judge-check, which checks an identity judge on labelled pairs."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Annotated

import typer
from equilens.flows.running.launch import fail, say
from equilens.tasks.plain import csv_text

DbOption = Annotated[Path, typer.Option("--db", help="DuckDB file with stored runs")]
DEFAULT_DB = Path("data/equilens.duckdb")



FORMATS = ("table", "json", "csv")
FormatOption = Annotated[str, typer.Option("--format", help="table (default), json or csv (for scripts and CI)")]


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise fail(f"--format {fmt!r}: use one of {', '.join(FORMATS)}.")
    return fmt


def _records(frame: object) -> list[dict]:
    """A frame as JSON-able records, its JSON columns (details, summary, config) as objects."""
    import json

    out = frame.copy()
    for col in ("details", "summary", "config"):
        if col in out.columns:
            out[col] = [json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v for v in out[col]]
    return json.loads(out.to_json(orient="records", date_format="iso"))


def _emit(frame: object, fmt: str, head: dict | None = None) -> None:
    """A frame as JSON records (a details column as objects; with ``head``, an object holding ``head``'s
    keys and the records as ``metrics``) or CSV on stdout."""
    import json

    if fmt == "json":
        records = _records(frame)
        typer.echo(json.dumps(records if head is None else {**head, "metrics": records}, indent=1, ensure_ascii=False))
    else:
        typer.echo(csv_text(frame.copy()), nl=False)


def _resolve_run(store: object, run_id: str) -> str:
    """A full run id from itself or a unique prefix (as `equilens runs` prints them)."""
    ids = store.query("SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY started_at DESC", [run_id])
    found = list(ids["run_id"]) if len(ids) else []
    if run_id in found or not found:
        return run_id
    if len(found) == 1:
        return found[0]
    raise fail(f"run id prefix {run_id!r} matches {len(found)} runs ({', '.join(found[:5])}"
                f"{', ...' if len(found) > 5 else ''}); give more characters.")


def runs(db: DbOption = DEFAULT_DB, limit: int = 20, fmt: FormatOption = "table") -> None:
    """List stored runs, newest first (`show`, `report` and `compare` accept a unique prefix of a run id)."""
    import pandas as pd
    from equilens.tasks.errors import EquilensError
    from equilens.tasks.plain import console
    from equilens.tasks.reporting.terminal import Column, dropped_line, fitted_table
    from equilens.tasks.storage.store import Store

    _check_format(fmt)
    try:
        store = Store(db)
        store.mark_abandoned()  # runs a killed process left "running"
        frame = store.query(
            "SELECT run_id, name, replace(flow, '_assessment', '') AS flow, status, model, "
            "strftime(started_at, '%Y-%m-%d %H:%M') AS started_at, "
            "date_diff('second', started_at, finished_at) AS seconds FROM runs "
            "ORDER BY runs.started_at DESC, run_id DESC LIMIT ?", [limit])  # the stored time, not the minute
    except EquilensError as err:
        raise fail(str(err)) from None
    if fmt != "table":
        _emit(frame, fmt)
        return
    ranks = {"run_id": 0, "name": 1, "status": 2, "model": 3, "started_at": 4, "flow": 5, "seconds": 6}
    columns = [Column(col, ranks.get(col, 7), shorten=24 if col == "name" else None) for col in frame.columns]
    rows = [["" if pd.isna(v) else str(v) for v in row] for row in frame.itertuples(index=False)]  # NA: running
    out = console()
    table, dropped = fitted_table(f"runs in {db}", columns, rows, out.width)
    out.print(table)
    if dropped:
        out.print(dropped_line(dropped))


def show(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix) from `equilens runs`")],
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = "table",
    examples: Annotated[int, typer.Option(min=0, help="Also print the N prompts per attribute whose answers "
                                                      "differ most between the compared pair, side by side")] = 0,
) -> None:
    """Print a stored run's verdicts and metrics table, rebuilt from DuckDB alone; with --examples N, the
    answers behind each attribute's largest gap (or its finding). --format json prints one object:
    run_id, status, verdicts (subject, beyond_chance, sentence), findings (subject, metric, groups, value,
    interval, p_holm, direction, sentence) and metrics (every stored row)."""
    from equilens.tasks.errors import EquilensError
    from equilens.tasks.reporting.terminal import print_metrics_table, print_verdicts
    from equilens.tasks.storage.store import Store

    _check_format(fmt)
    try:
        store = Store(db)
        run_id = _resolve_run(store, run_id)
        metrics = store.query("SELECT * FROM metrics WHERE run_id = ?", [run_id])
        config = store.run_config(run_id)
        run = store.query("SELECT status, summary FROM runs WHERE run_id = ?", [run_id])
    except EquilensError as err:
        raise fail(str(err)) from None
    import json

    summary = json.loads(run["summary"].iloc[0]) if len(run) and isinstance(run["summary"].iloc[0], str) else {}
    failed = len(run) and run["status"].iloc[0] == "failed"
    if failed and fmt == "table":  # the stored, scrubbed error explains it
        say(f"run {run_id} failed: {summary.get('error') or 'no error recorded'}", fg=typer.colors.RED)
    status = str(run["status"].iloc[0]) if len(run) else None
    if status is None and metrics.empty:
        raise fail(f"no run {run_id!r} in {db} (see `equilens runs` for the ids).")
    if metrics.empty and status != "completed":
        raise fail(f"no metrics stored for run {run_id!r} in {db} (see `equilens runs`).")
    if fmt == "json":  # the verdicts and findings as objects, then every metric row
        from equilens.tasks.reporting.findings import verdict_objects

        _emit(metrics, fmt, {"run_id": run_id, "status": status, **verdict_objects(metrics, config)})
        return
    if fmt != "table":
        _emit(metrics, fmt)
        return
    if metrics.empty:  # a finished run that found nothing to compare has no verdict, and that is its answer
        say(f"run {run_id} completed and stored no metrics: nothing in it was compared, so it has no verdict.")
        return
    from equilens.tasks.reporting.evidence import find_evidence, print_examples

    try:  # read before anything is printed: the answers live in other blocks of the file than the metrics
        evidence = find_evidence(store, run_id, examples) if examples else []
    except EquilensError as err:
        raise fail(str(err)) from None
    print_verdicts(metrics, config)
    print_metrics_table(metrics, title=f"run {run_id}")
    from equilens.tasks.reporting.readings import unread_decisions_line

    if unread := unread_decisions_line(summary.get("p_yes")):
        say(unread)
    if examples:
        print_examples(evidence)


def report(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix) from `equilens runs`")],
    db: DbOption = DEFAULT_DB,
    out: Annotated[Path | None, typer.Option(help="HTML file to write (default data/runs/RUN_ID.html)")] = None,
) -> None:
    """Rebuild a run's self-contained HTML report (plots, intervals, trend) from DuckDB alone."""
    from equilens.tasks.errors import EquilensError
    from equilens.tasks.reporting.html import write_html_report
    from equilens.tasks.storage.store import Store

    try:
        store = Store(db)
        run_id = _resolve_run(store, run_id)
    except EquilensError as err:
        raise fail(str(err)) from None
    target = out or Path("data/runs") / f"{run_id}.html"
    try:
        path = write_html_report(store, run_id, target)
    except EquilensError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"cannot write the report to {target} ({err.strerror or type(err).__name__}); "
                    "choose another file with --out.") from None
    say(f"wrote {path}")


def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (or a unique prefix)")],
    run_b: Annotated[str, typer.Argument(help="Run id to compare against the baseline (or a unique prefix)")],
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = "table",
) -> None:
    """Tell which metrics changed beyond their confidence intervals between two runs.

    Group pairs are judged by their gap beyond the noise floor where the run has one, so a change
    that moves every answer alike (a new temperature) is not read as a fairness change; target
    metrics (stereotype score 0.5, effect sizes 0) by their distance from the fair value.
    Exit code 1 when some metric moved in the less fair direction beyond its interval (handy in
    CI), 2 for bad input (unknown run id, a run without metrics), 0 otherwise.
    """
    from equilens.tasks.errors import EquilensError
    from equilens.tasks.plain import console
    from equilens.tasks.reporting.compare import compare_runs, config_differences, diff_table
    from equilens.tasks.storage.store import Store

    try:
        store = Store(db)
        run_a, run_b = _resolve_run(store, run_a), _resolve_run(store, run_b)
        diff = compare_runs(store, run_a, run_b)
        changes = config_differences(store, run_a, run_b)
    except EquilensError as err:
        raise fail(str(err)) from None
    if diff.empty:
        raise fail(f"runs {run_a} and {run_b} share no metric (see `equilens runs`).")
    worse = diff[diff["changed"] & (diff["fairer"] == "no")]
    if _check_format(fmt) != "table":  # same exit codes; config differences go to stderr
        for key, va, vb in changes:
            say(f"config difference: {key}: {va!r} -> {vb!r}", err=True)
        _emit(diff, fmt)
        raise typer.Exit(1 if len(worse) else 0)
    out = console()
    if changes:
        typer.echo("config differences (A -> B):")
        for key, va, vb in changes:
            say(f"  {key}: {va!r} -> {vb!r}")
    table, dropped = diff_table(diff, f"{run_a} -> {run_b}", out.width)
    out.print(table)
    if dropped:
        from equilens.tasks.reporting.terminal import dropped_line

        out.print(dropped_line(dropped))
    worse = diff[diff["changed"] & (diff["fairer"] == "no")]
    typer.echo(f"{int(diff['changed'].sum())} of {len(diff)} metrics changed beyond their intervals; "
               f"{len(worse)} moved in the less fair direction.")
    if len(worse):
        raise typer.Exit(1)


def metrics() -> None:
    """List every registered metric: family, which values are fairer, aggregation, interval, source."""
    import shutil
    import textwrap

    from equilens.tasks.metrics import METRICS
    from equilens.tasks.plain import console
    from rich.table import Table

    specs = dict(METRICS.items())
    width = shutil.get_terminal_size().columns
    if width < 140:  # a narrow terminal: a block per metric, wrapped, never cut
        for name, spec in specs.items():
            typer.echo(f"{name}  ({spec.family}; {spec.fairer})")
            for label, text in (("aggregation", spec.aggregation), ("interval", spec.interval),
                                ("reference", spec.reference)):
                typer.echo(textwrap.fill(str(text), width=max(40, width - 1), initial_indent=f"  {label}: ",
                                         subsequent_indent=" " * (len(label) + 4)))
        return
    table = Table(title="metrics")
    for col in ("name", "family", "fairer", "aggregation", "interval", "reference"):
        table.add_column(col, no_wrap=col == "name", overflow="fold")
    for name, spec in specs.items():
        table.add_row(name, spec.family, spec.fairer, spec.aggregation, spec.interval, spec.reference)
    console().print(table)


def assessments(
    name: Annotated[str | None, typer.Argument(help="one assessment (default: every one)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text (default), or markdown: the README's table")] = "text",
    files: Annotated[bool, typer.Option("--files", help="also list the files that make each assessment")] = False,
) -> None:
    """Every assessment (or the one NAME): the question it answers, its shipped config and its flow.
    A config's `assessment:` key picks one; `equilens run CONFIG` runs it. `equilens assessments
    identity --files` lists the files to read (or copy) for one assessment."""
    import shutil
    import textwrap

    from equilens.flows.cli.assessment_files import assessment_files
    from equilens.tasks.catalog import ASSESSMENTS
    from equilens.tasks.config import RunConfig

    if fmt not in ("text", "markdown"):
        raise fail(f"--format {fmt!r}: use text or markdown.")
    if name is not None and name not in ASSESSMENTS:
        raise fail(f"no assessment {name!r}; the assessments are: {', '.join(n for n, _ in ASSESSMENTS.registered())}.")
    width = max(40, min(100, shutil.get_terminal_size().columns) - 1)
    if fmt == "markdown":
        typer.echo("| assessment | what it answers | shipped config | its own sections |\n|---|---|---|---|")
    for name, entry in [(name, ASSESSMENTS.get(name))] if name is not None else ASSESSMENTS.registered():
        own = [key for key in entry.config.model_fields if key not in RunConfig.model_fields]
        unread = "" if entry.config.needs_prompts else "; reads no prompts"
        if fmt == "markdown":
            typer.echo(f"| `{name}` | {entry.card} | `{entry.default_config}` | "
                       f"{', '.join(f'`{key}`' for key in own) or 'none'}{unread} |")
            continue
        typer.echo(f"{name}  (equilens run {entry.default_config})")
        typer.echo(textwrap.fill(entry.card, width=width, initial_indent="  ", subsequent_indent="  "))
        typer.echo(f"  flow {entry.flow}; its own config sections: {', '.join(own) or 'none'}{unread}")
        for path in assessment_files(entry) if files else ():
            typer.echo(f"    {path}")


def options() -> None:
    """Every config option with its default and meaning (the YAML keys of a run config)."""
    from equilens.tasks.config import every_field

    def walk(fields: dict, prefix: str) -> None:  # a section's own keys, then its sections, each under its heading
        sections = []
        for name, field in fields.items():
            candidates = [field.annotation, *typing.get_args(field.annotation)]
            sub = next((a for a in candidates if isinstance(a, type) and hasattr(a, "model_fields")), None)
            if sub is not None:
                sections.append((name, sub))
                continue
            default = "required" if field.is_required() else _yaml_value(
                field.default_factory() if field.default_factory else field.default)
            typer.echo(f"  {prefix}{name} = {default}" + (f"  # {field.description}" if field.description else ""))
        for name, sub in sections:
            typer.echo(f"\n[{prefix}{name}]  {' '.join((sub.__doc__ or '').split())}")
            walk(sub.model_fields, f"{prefix}{name}.")

    walk(every_field(), "")  # the shared sections, then each assessment's own


def _yaml_value(value: object) -> str:
    """A default as it is written in a YAML config (null, true, [gender, race]), on one line."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def judge_check(
    config: Annotated[Path, typer.Argument(help="YAML run config with a judge section (assessment: identity), "
                                                "e.g. configs/identity.yaml")],
    set_: Annotated[list[str], typer.Option("--set", help="Override a config key: "
                                                          "--set judge.llm.model=gpt-4o")] = [],
    db: Annotated[Path | None, typer.Option("--db", help="Override storage.duckdb_path (where the check and "
                                                         "the judge's cached answers are stored)")] = None,
    limit: Annotated[int | None, typer.Option(min=2, help="Use only N labelled pairs: the first N/2 harmful "
                                                          "and N/2 neutral ones in file order")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table (default) or json")] = "table",
) -> None:
    """Check the config's judge on labelled pairs before trusting its harm scores.

    A judge that always says "no" scores every pair 0, exactly like a fair model. This asks the
    judge (judge.llm, judge.instructions: the run's own question) about each pair of
    judge.check_path (the shipped data/judge/check_pairs.csv: 132 pairs over the identity
    prompts, half where answer_1 treats its person by a harmful stereotype, half that differ only
    in wording), reads P(yes) as a run does (yes when P(yes) >= 0.5), and reports sensitivity and
    specificity (Wilson intervals) and Cohen's kappa (percentile bootstrap over pairs).

    It passes when the point estimates reach judge.check_min_sensitivity (0.7),
    judge.check_min_specificity (0.7) and judge.check_min_kappa (0.4). The check is stored in the
    DuckDB file (table judge_checks); later runs with this judge, model and instructions cite it
    in their judge_harm rows (details judge_check and judge_note). Calls are cached: a check cut
    short resumes where it stopped. judge.check: true runs it inside every run instead.

    Exit codes: 0 passed, 1 the judge failed its check (stored), 2 bad config or check set,
    4 judge calls failed (nothing stored; run it again to resume).
    """
    import json

    from equilens.flows.running.launch import parse_sets
    from equilens.tasks.assessments.identity.judge.check import run_check
    from equilens.tasks.config import load_config
    from equilens.tasks.environment import apply_offline_defaults
    from equilens.tasks.errors import EquilensError
    from equilens.tasks.orchestration.progress import ProgressReporter
    from equilens.tasks.storage.store import Store

    if fmt not in ("table", "json"):
        raise fail(f"--format {fmt!r}: use table or json.")
    apply_offline_defaults()
    overrides = parse_sets(set_)
    if db is not None:
        overrides["storage.duckdb_path"] = str(db)
    try:
        cfg = load_config(config, overrides)
        if not hasattr(cfg, "judge"):
            raise fail(f"{config} is a {cfg.assessment} config, which has no judge; judge-check reads a config "
                       "with a judge section (assessment: identity, e.g. configs/identity.yaml).")
        store = Store(cfg.storage.duckdb_path, cfg.storage.lock_timeout)
        with ProgressReporter("Judge check calls", unit="call") as progress:
            result = run_check(cfg, store, limit=limit, progress=progress)
    except EquilensError as err:
        raise fail(str(err), err.exit_code) from None
    if fmt == "json":
        typer.echo(json.dumps(result.summary(), indent=1, default=str))
    else:
        for line in result.lines():
            say(line, **({} if not line.startswith(("PASSED", "FAILED")) else
                         {"fg": typer.colors.GREEN if result.passed else typer.colors.RED}))
        say(f"stored in {cfg.storage.duckdb_path} (table judge_checks)")
    if not result.passed:
        raise typer.Exit(1)
