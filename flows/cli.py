"""The ``equilens`` command line.

Kept light at import time: Prefect, torch and great-expectations load only when a command needs
them, so ``equilens --help`` answers at once.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path
from typing import Annotated

import typer

HELP = """Measure bias and fairness of an LLM application, run after run.

A run loads your prompts, checks which mention protected groups (fairness through unawareness),
builds counterfactual variants (he -> she, white -> black ...), asks the model, scores the
answers, and stores every metric with its confidence interval in a DuckDB file.

\b
Start with the shipped demo (local SmolLM2 model, no API key):
    equilens run configs/demo.yaml

\b
Your own prompts (a CSV with a `prompt` column) against an OpenAI-compatible endpoint:
    export OPENAI_API_KEY=...
    equilens run configs/openai.yaml --set prompts.path=my.csv

\b
Then look at what is stored:
    equilens runs              list runs in data/equilens.duckdb
    equilens show RUN_ID       metrics of one run, with intervals
    equilens options           every config key, its default and meaning
    equilens metrics           every metric and which direction is fairer
"""

app = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode=None, add_completion=False,
                  pretty_exceptions_enable=False)

DbOption = Annotated[Path, typer.Option("--db", help="DuckDB file with stored runs")]
DEFAULT_DB = Path("data/equilens.duckdb")


def _quiet_environment() -> None:
    """Defaults for an ad-hoc local run: offline models, an ephemeral Prefect that starts reliably."""
    from tasks.environment import apply_offline_defaults

    apply_offline_defaults()


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def _parse_sets(pairs: list[str]) -> dict[str, object]:
    import yaml

    out: dict[str, object] = {}
    for item in pairs:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise _fail(f"--set expects KEY=VALUE (e.g. llm.count=2), got {item!r}.")
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or type(err).__name__
            raise _fail(f"--set {item!r}: the value is not valid YAML ({problem}). Quote it, or close the "
                        "brackets: --set 'counterfactual.attributes=[gender, race]'.") from None
    return out


DebugOption = Annotated[bool, typer.Option("--debug", help="Show Prefect's logs and full tracebacks of errors")]


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="YAML run config, e.g. configs/demo.yaml")],
    set_: Annotated[list[str], typer.Option("--set", help="Override a config key: --set llm.count=3")] = [],  # noqa: B006
    db: Annotated[Path | None, typer.Option("--db", help="Override storage.duckdb_path")] = None,
    debug: DebugOption = False,
) -> None:
    """Run the assessment a config describes and print its metrics per group pair.

    Exit codes: 0 done, 2 bad config or input (found before anything runs), 3 a validation gate
    failed, 4 the LLM calls failed (every one, or more than llm.max_failed_share), 130 interrupted
    (Ctrl-C), 143 stopped by SIGTERM. An interrupted run is stored with status interrupted, its
    finished LLM answers cached, and no child process left behind.
    """
    if debug:
        import os

        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO")
    _quiet_environment()
    from flows.interrupt import stop_on_signals
    from tasks.config import load_config
    from tasks.errors import EquilensError

    overrides = _parse_sets(set_)
    if db is not None:
        overrides["storage.duckdb_path"] = str(db)
    with stop_on_signals():  # SIGINT/SIGTERM: stages stop, answers flushed, run marked interrupted
        try:
            cfg = load_config(config, overrides)
            for warning in _preflight(cfg):  # on stdout: stderr holds only an error paragraph
                typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW)
            from flows.common import start_prefect_api
            from flows.registry import flow_for

            _quiet_logs(debug)
            start_prefect_api()  # retried once; a PrefectStartupError says what to raise or where to point
            result = flow_for(cfg)(cfg)
        except KeyboardInterrupt:
            raise _interrupted() from None
        except EquilensError as err:
            from flows.interrupt import signal_received

            if signal_received():  # a stage stopped on the signal and said so
                raise _interrupted() from None
            if debug:
                import traceback

                traceback.print_exc()
            raise _fail(str(err), err.exit_code) from None
    _print_result(result, cfg.storage.duckdb_path)


def _interrupted() -> typer.Exit:
    """After Ctrl-C or SIGTERM: the run marked interrupted, every child process stopped, exit 130 or 143."""
    from flows.interrupt import exit_code, finish_interrupted, leave, signal_received

    finish_interrupted(stop_processes=signal_received())  # a bare KeyboardInterrupt (in-process) kills nothing
    code = exit_code()
    typer.secho("error: interrupted. Finished LLM calls are cached: run the same command to resume.",
                fg=typer.colors.RED, err=True)
    if signal_received():  # a real signal: do not wait for abandoned worker threads or Prefect's exit hooks
        leave(code)
    return typer.Exit(code)


def _quiet_logs(debug: bool) -> None:
    """Without --debug: no Prefect traceback for an error the CLI reports itself, no library INFO lines."""
    if debug:
        return
    from flows.quiet_logs import quiet_known_errors

    quiet_known_errors()


def _preflight(cfg: object) -> list[str]:
    """Checks that take seconds, before Prefect starts (flows/preflight.py); returns warnings."""
    from flows.preflight import preflight

    return preflight(cfg)


def _print_result(result: dict, db: str) -> None:
    import pandas as pd

    from tasks.reporting.terminal import print_metrics_table, print_verdicts

    metrics = pd.DataFrame(result.get("metrics", []))
    config: dict = {}
    if not metrics.empty:  # re-read with details (gaps, p-values, skip reasons, caveats) from the store
        from tasks.storage.store import Store

        store = Store(db)
        metrics = store.query("SELECT * FROM metrics WHERE run_id = ?", [result["run_id"]])
        config = store.run_config(result["run_id"])
    typer.echo(f"\nrun {result['run_id']}")
    if not metrics.empty:
        print_verdicts(metrics, config)
    ftu = result.get("ftu")
    if ftu:
        counts = ", ".join(f"{k} in {v}" for k, v in ftu.get("counts", {}).items())
        typer.echo(f"fairness through unawareness {'holds' if ftu.get('holds') else 'does not hold'}: "
                   f"attribute words found ({counts or 'none'}) of {ftu.get('prompts', 0)} prompts")
    if "sentences" in result:
        s = result["sentences"]
        typer.echo(f"test sentences: {s['kept']} kept of {s['total']} (review: {s['csv']})")
    for name, reason in (result.get("skipped") or {}).items():
        typer.echo(f"skipped {name}: {reason}")
    if "responses" in result:
        r = result["responses"]
        typer.echo(f"responses: {r['ok']} ok, {r['failed']} failed, {r['refusals']} refusals, "
                   f"{r['cached']} from cache")
    if not metrics.empty:
        print_metrics_table(metrics)
    typer.echo(f"stored in {db} (equilens show {result['run_id']} --db {db})")
    if result.get("report"):
        typer.echo(f"report: {result['report']}")


FORMATS = ("table", "json", "csv")
FormatOption = Annotated[str, typer.Option("--format", help="table (default), json or csv (for scripts and CI)")]


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise _fail(f"--format {fmt!r}: use one of {', '.join(FORMATS)}.")
    return fmt


def _emit(frame: object, fmt: str) -> None:
    """A frame as JSON records (a details column as objects) or CSV on stdout."""
    import json

    out = frame.copy()
    if fmt == "json":
        for col in ("details", "summary", "config"):
            if col in out.columns:
                out[col] = [json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v for v in out[col]]
        records = json.loads(out.to_json(orient="records", date_format="iso"))
        typer.echo(json.dumps(records, indent=1, ensure_ascii=False))
    else:
        typer.echo(out.to_csv(index=False), nl=False)


def _resolve_run(store: object, run_id: str) -> str:
    """A full run id from itself or a unique prefix (as `equilens runs` prints them)."""
    ids = store.query("SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY started_at DESC", [run_id])
    found = list(ids["run_id"]) if len(ids) else []
    if run_id in found or not found:
        return run_id
    if len(found) == 1:
        return found[0]
    raise _fail(f"run id prefix {run_id!r} matches {len(found)} runs ({', '.join(found[:5])}"
                f"{', ...' if len(found) > 5 else ''}); give more characters.")


@app.command()
def runs(db: DbOption = DEFAULT_DB, limit: int = 20, fmt: FormatOption = "table") -> None:
    """List stored runs, newest first (`show` and `report` accept a unique prefix of a run id)."""
    from rich.console import Console
    from rich.table import Table

    from tasks.errors import EquilensError
    from tasks.storage.store import Store

    _check_format(fmt)
    try:
        frame = Store(db).query(
            "SELECT run_id, name, replace(flow, '_assessment', '') AS flow, status, model, "
            "strftime(started_at, '%Y-%m-%d %H:%M') AS started_at, "
            "date_diff('second', started_at, finished_at) AS seconds FROM runs "
            "ORDER BY started_at DESC LIMIT ?", [limit])
    except EquilensError as err:
        raise _fail(str(err)) from None
    if fmt != "table":
        _emit(frame, fmt)
        return
    table = Table(title=f"runs in {db}", title_justify="left")
    for col in frame.columns:
        table.add_column(col, no_wrap=col in ("run_id", "seconds"), overflow="fold")
    for row in frame.itertuples(index=False):
        table.add_row(*["" if v is None or v != v else str(v) for v in row])
    Console().print(table)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix) from `equilens runs`")],
    db: DbOption = DEFAULT_DB,
    fmt: FormatOption = "table",
) -> None:
    """Print a stored run's verdicts and metrics table, rebuilt from DuckDB alone."""
    from tasks.errors import EquilensError
    from tasks.reporting.terminal import print_metrics_table, print_verdicts
    from tasks.storage.store import Store

    _check_format(fmt)
    try:
        store = Store(db)
        run_id = _resolve_run(store, run_id)
        metrics = store.query("SELECT * FROM metrics WHERE run_id = ?", [run_id])
        config = store.run_config(run_id)
        run = store.query("SELECT status, summary FROM runs WHERE run_id = ?", [run_id])
    except EquilensError as err:
        raise _fail(str(err)) from None
    failed = len(run) and run["status"].iloc[0] == "failed"
    if failed and fmt == "table":  # the stored, scrubbed error explains it
        import json

        summary = json.loads(run["summary"].iloc[0]) if isinstance(run["summary"].iloc[0], str) else {}
        typer.secho(f"run {run_id} failed: {summary.get('error') or 'no error recorded'}", fg=typer.colors.RED)
    if metrics.empty:
        raise _fail(f"no metrics stored for run {run_id!r} in {db} (see `equilens runs`).")
    if fmt != "table":
        _emit(metrics, fmt)
        return
    print_verdicts(metrics, config)
    print_metrics_table(metrics, title=f"run {run_id}")


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix) from `equilens runs`")],
    db: DbOption = DEFAULT_DB,
    out: Annotated[Path | None, typer.Option(help="HTML file to write (default data/runs/RUN_ID.html)")] = None,
) -> None:
    """Rebuild a run's self-contained HTML report (plots, intervals, trend) from DuckDB alone."""
    from tasks.errors import EquilensError
    from tasks.reporting.html import write_html_report
    from tasks.storage.store import Store

    try:
        store = Store(db)
        run_id = _resolve_run(store, run_id)
    except EquilensError as err:
        raise _fail(str(err)) from None
    target = out or Path("data/runs") / f"{run_id}.html"
    try:
        path = write_html_report(store, run_id, target)
    except EquilensError as err:
        raise _fail(str(err)) from None
    except OSError as err:
        raise _fail(f"cannot write the report to {target} ({err.strerror or type(err).__name__}); "
                    "choose another file with --out.") from None
    typer.echo(f"wrote {path}")


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id")],
    run_b: Annotated[str, typer.Argument(help="Run id to compare against the baseline")],
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
    from rich.console import Console
    from rich.table import Table

    from tasks.reporting.compare import compare_runs, config_differences
    from tasks.errors import EquilensError
    from tasks.storage.store import Store

    try:
        store = Store(db)
        diff = compare_runs(store, run_a, run_b)
        changes = config_differences(store, run_a, run_b)
    except EquilensError as err:
        raise _fail(str(err)) from None
    if diff.empty:
        raise _fail(f"runs {run_a} and {run_b} share no metric (see `equilens runs`).")
    worse = diff[diff["changed"] & (diff["fairer"] == "no")]
    if _check_format(fmt) != "table":  # same exit codes; config differences go to stderr
        for key, va, vb in changes:
            typer.echo(f"config difference: {key}: {va!r} -> {vb!r}", err=True)
        _emit(diff, fmt)
        raise typer.Exit(1 if len(worse) else 0)
    console = Console()
    if changes:
        typer.echo("config differences (A -> B):")
        for key, va, vb in changes:
            typer.echo(f"  {key}: {va!r} -> {vb!r}")
    table = Table(title=f"{run_a} -> {run_b}")
    for col in ("metric", "attribute", "groups", "A", "B", "judged on", "changed", "fairer"):
        table.add_column(col, overflow="fold")
    for _, r in diff.iterrows():
        groups = f"{r['group_a']} vs {r['group_b']}" if r["group_b"] else str(r["group_a"])
        table.add_row(r["metric"], r["attribute"], groups, f"{r['value_a']:.4f}", f"{r['value_b']:.4f}",
                      r["basis_b"], "CHANGED" if r["changed"] else "", r["fairer"])
    console.print(table)
    worse = diff[diff["changed"] & (diff["fairer"] == "no")]
    typer.echo(f"{int(diff['changed'].sum())} of {len(diff)} metrics changed beyond their intervals; "
               f"{len(worse)} moved in the less fair direction.")
    if len(worse):
        raise typer.Exit(1)


@app.command()
def metrics() -> None:
    """List every registered metric: family, which values are fairer, aggregation, interval, source."""
    import shutil
    import textwrap

    from rich.console import Console
    from rich.table import Table

    from flows.registry import load_all_metrics

    specs = load_all_metrics()
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
    Console().print(table)


@app.command()
def options() -> None:
    """Every config option with its default and meaning (the YAML keys of a run config)."""
    from tasks.config import every_field

    def walk(fields: dict, prefix: str) -> None:
        for name, field in fields.items():
            candidates = [field.annotation, *typing.get_args(field.annotation)]
            sub = next((a for a in candidates if isinstance(a, type) and hasattr(a, "model_fields")), None)
            if sub is not None:
                doc = " ".join((sub.__doc__ or "").split())
                typer.echo(f"\n[{prefix}{name}]  {doc}")
                walk(sub.model_fields, f"{prefix}{name}.")
                continue
            default = "required" if field.is_required() else _yaml_value(
                field.default_factory() if field.default_factory else field.default)
            typer.echo(f"  {prefix}{name} = {default}" + (f"  # {field.description}" if field.description else ""))

    walk(every_field(), "")  # the shared sections, then each assessment's own


def _yaml_value(value: object) -> str:
    """A default as it is written in a YAML config (null, true, [gender, race]), on one line."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def main(argv: list[str] | None = None) -> int:
    try:
        rc = app(args=argv, standalone_mode=False)
        if isinstance(rc, int):  # click returns the code of a typer.Exit in non-standalone mode
            return rc
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            return exc.exit_code
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
