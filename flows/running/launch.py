"""Running one config from the terminal: the ``equilens run`` command (config and overrides, preflight,
Prefect, the flow, the printed result, exit codes, Ctrl-C and SIGTERM) and ``python flows/<flow>.py CONFIG``.

Below the CLI: the flow modules import it for their ``__main__`` block, so it imports no flow module
(the CLI passes the flow lookup of :mod:`equilens.flows.running.dispatch` in).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from equilens.tasks.plain import visible

FlowPicker = Callable[[Any], Callable[[Any], dict[str, Any]]]  # config -> the flow that runs it (imported)


def _quiet_environment() -> None:
    """Defaults for an ad-hoc local run: offline models, an ephemeral Prefect that starts reliably."""
    from equilens.tasks.environment import apply_offline_defaults

    apply_offline_defaults()


def say(message: str, **style: Any) -> None:  # typer.secho's options
    """Print a line of the CLI's own output; names and errors in it are shown as inert text."""
    typer.secho(visible(message), **style)


def fail(message: str, code: int = 2) -> typer.Exit:
    say(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


DECLINED = 5
"""The exit code of a run declined at the question before it (``llm.confirm_above``): nothing was called."""


def parse_sets(pairs: list[str]) -> dict[str, object]:
    """``--set key.path=value`` pairs as {dotted key: value}, each value read as YAML; a number or a
    boolean keeps its text too, for a key that wants a string (:class:`~equilens.tasks.config.SetText`)."""
    import yaml
    from equilens.tasks.config import SetText

    out: dict[str, object] = {}
    for item in pairs:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise fail(f"--set expects KEY=VALUE (e.g. llm.count=2), got {item!r}.")
        try:
            value = yaml.safe_load(raw) if raw else ""
            out[key.strip()] = SetText(raw.strip(), value) if isinstance(value, (int, float, bool)) else value
        except RecursionError:
            raise fail(f"--set {key.strip()}: the value nests too deeply to read.") from None
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or type(err).__name__
            raise fail(f"--set {item!r}: the value is not valid YAML ({problem}). Quote it, or close the "
                       "brackets: --set 'counterfactual.attributes=[gender, race]'.") from None
    return out


DebugOption = Annotated[bool, typer.Option("--debug", help="Show Prefect's logs and full tracebacks of errors")]


def run_command(pick_flow: FlowPicker, assessment: str | None = None) -> Callable[..., None]:
    """The ``run`` command, running each config on the flow ``pick_flow`` gives for it; with
    ``assessment``, a config of another assessment is an error (exit 2) before anything runs."""

    def run(
        config: Annotated[Path, typer.Argument(help="YAML run config, e.g. configs/demo.yaml")],
        set_: Annotated[list[str], typer.Option("--set", help="Override a config key: --set llm.count=3")] = [],
        db: Annotated[Path | None, typer.Option("--db", help="Override storage.duckdb_path")] = None,
        debug: DebugOption = False,
        plan: Annotated[bool, typer.Option("--plan", help="Print how many prompts, requests and LLM calls the "
                                                          "run would make (and their cost and time), then exit")] = False,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before a run above llm.confirm_above "
                                                              "calls")] = False,
        detect: Annotated[float | None, typer.Option(
            "--detect", help="With --plan: how many prompts this config needs to detect a gap of this size (in "
                             "the metric's own units) with 80% power, from a pilot run of its first prompts")] = None,
        metric: Annotated[str | None, typer.Option(
            "--metric", help="With --detect: the metric planned for (default: the verdict's headline, and the "
                             "identity outcome gaps)")] = None,
        pilot: Annotated[int | None, typer.Option(
            "--pilot", help="With --detect: prompts in the pilot (default a tenth of them, at least 10)")] = None,
        fail_on_finding: Annotated[bool, typer.Option(
            "--fail-on-finding", help="Exit 1 when the verdict reports any difference beyond chance (a fairness "
                                      "gate for CI; the same as execution.fail_on: finding)")] = False,
        junit: Annotated[Path | None, typer.Option(
            "--junit", help="Write JUnit XML here: a test case per verdict, a failure per finding with its "
                            "sentence and an example pair of answers")] = None,
    ) -> None:
        """Run the assessment a config describes and print its metrics per group pair.

        Before the first call the run is planned: prompts, requests, LLM calls, cost at the
        configured prices, time at the configured rate (--plan prints it and exits).
        llm.max_calls and llm.max_cost refuse a larger run; in a terminal, a run of more than
        llm.confirm_above calls asks first unless --yes is given. With --plan --detect GAP a pilot
        of the first prompts runs for real (cached, stored as its own run) and the plan says how many
        prompts, calls and how much money the verdict needs to find a gap of that size: equilens run
        configs/identity.yaml --plan --detect 0.05 --metric number_outcome_gap.

        As a fairness gate in CI: equilens run CONFIG --fail-on-finding --junit results.xml exits 1
        when any verdict reports a difference beyond chance, after the run is stored and its report
        written.

        Exit codes: 0 done, 1 a finding with --fail-on-finding (or execution.fail_on: finding), 2 bad
        config or input (found before anything runs), 3 a validation gate failed, 4 the LLM calls
        failed (every one, or more than llm.max_failed_share), 5 declined at the question before a
        large run (nothing called), 130 interrupted
        (Ctrl-C), 143 stopped by SIGTERM. An interrupted run is stored with status interrupted, its
        finished LLM answers cached, and no child process left behind.
        """
        if (metric is not None or pilot is not None) and detect is None:
            raise fail("--metric and --pilot go with --detect: equilens run CONFIG --plan --detect 0.05.")
        if detect is not None and not plan:
            raise fail("--detect goes with --plan: equilens run CONFIG --plan --detect 0.05 runs a pilot and plans.")
        if junit is not None and (plan or detect is not None):
            raise fail("--junit goes with a run, not with --plan.")
        if junit is not None and junit.is_dir():
            raise fail(f"--junit {junit} is a folder; name the file to write, such as {junit / 'fairness.xml'}.")
        if junit is not None and not junit.parent.resolve().is_dir():
            raise fail(f"--junit {junit}: the folder {junit.parent} does not exist; create it or name a file in an "
                       "existing folder (nothing was run).")
        if fail_on_finding:
            set_ = [*set_, "execution.fail_on=finding"]
        run_config(config, set_, db, debug, pick_flow, assessment, plan_only=plan, yes=yes,
                   detect=None if detect is None else (detect, metric, pilot), junit=junit)

    return run


def run_config(config: Path, set_: list[str], db: Path | None, debug: bool, pick_flow: FlowPicker,
               assessment: str | None = None, plan_only: bool = False, yes: bool = False,
               detect: tuple[float, str | None, int | None] | None = None, junit: Path | None = None) -> None:
    """What ``run`` does (see :func:`run_command`)."""
    if debug:
        import os

        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO")
    _quiet_environment()
    from equilens.flows.running.interrupt import stop_on_signals
    from equilens.tasks.config import load_config
    from equilens.tasks.errors import EquilensError
    from equilens.tasks.reporting.findings import FindingsFound

    overrides = parse_sets(set_)
    if db is not None:
        overrides["storage.duckdb_path"] = str(db)
    with stop_on_signals():  # SIGINT/SIGTERM: stages stop, answers flushed, run marked interrupted
        try:
            cfg = load_config(config, overrides)
            if assessment is not None and cfg.assessment != assessment:
                raise fail(f"{config} is a {cfg.assessment} config; this script runs {assessment} configs "
                           f"(`equilens run {config}` runs any).")
            from equilens.flows.running.preflight import check_inputs, check_storage, prompt_warnings

            check_inputs(cfg)  # seconds, before Prefect starts; reads no prompt
            if detect is not None:
                from equilens.flows.running.power import check_request

                check_request(cfg, detect[0], detect[1])
            elif not _planned(cfg, plan_only, yes):  # counts calls in bounded memory
                return
            check_storage(cfg)  # a damaged DuckDB file is refused here
            for warning in prompt_warnings(cfg):  # on stdout: stderr holds only an error paragraph
                say(f"warning: {warning}", fg=typer.colors.YELLOW)
            from equilens.tasks.orchestration.prefect_api import start_prefect_api

            flow = pick_flow(cfg)  # imported, and Prefect's logging set up, before its server starts
            _quiet_logs(debug)
            start_prefect_api()  # retried once; a PrefectStartupError says what to raise or where to point
            if detect is not None:
                from equilens.flows.running.power import power_plan

                gap, metric, pilot = detect
                for line in power_plan(cfg, gap, metric, pilot, run=lambda c: pick_flow(c)(c)).lines():
                    say(line)
                return
            result = flow(cfg)
        except FindingsFound as found:  # stored, reported: print it all, then fail the gate
            _finish(found.result, cfg.storage.duckdb_path, junit)
            say(str(found), fg=typer.colors.RED)
            raise typer.Exit(found.exit_code) from None
        except KeyboardInterrupt:
            raise _interrupted() from None
        except Exception as err:
            from equilens.flows.running.interrupt import signal_received

            # After Ctrl-C or SIGTERM any error is the interruption: a stage that stopped on the signal
            # says so, and an interrupt raised while a wait re-takes its lock surfaces as another error
            # (threading.Condition then raises "release unlocked lock").
            if signal_received():
                raise _interrupted() from None
            if not isinstance(err, EquilensError):
                raise
            if debug:
                import traceback

                traceback.print_exc()
            if junit is not None:  # a CI reporter shows why there is no verdict
                from equilens.tasks.reporting.findings import junit_error_xml

                junit.write_text(junit_error_xml(config.stem, str(err)), encoding="utf-8")
            raise fail(str(err), err.exit_code) from None
    _finish(result, cfg.storage.duckdb_path, junit)


def _finish(result: dict, db: str, junit: Path | None) -> None:
    """The run's result printed, and its JUnit XML written when asked."""
    from equilens.tasks.reporting.closing import print_run_result, write_junit

    print_run_result(result, db, say)
    if junit is not None and result.get("run_id"):
        write_junit(db, result["run_id"], junit)
        say(f"JUnit XML: {junit}")


def _interrupted() -> typer.Exit:
    """After Ctrl-C or SIGTERM: the run marked interrupted, every child process stopped, exit 130 or 143."""
    from equilens.flows.running.interrupt import exit_code, finish_interrupted, leave, signal_received

    finish_interrupted(stop_processes=signal_received())  # a bare KeyboardInterrupt (in-process) kills nothing
    code = exit_code()
    say("error: interrupted. Finished LLM calls are cached: run the same command to resume.",
                fg=typer.colors.RED, err=True)
    if signal_received():  # a real signal: do not wait for abandoned worker threads or Prefect's exit hooks
        leave(code)
    return typer.Exit(code)


def _quiet_logs(debug: bool) -> None:
    """Without --debug: no Prefect traceback for an error the CLI reports itself, no library INFO lines."""
    if debug:
        return
    from equilens.flows.running.quiet_logs import quiet_known_errors

    quiet_known_errors()


def _planned(cfg: Any, plan_only: bool, yes: bool) -> bool:  # a RunConfig
    """Plan the run (flows/running/plan.py): print it with --plan and stop; refuse it past llm.max_calls or
    llm.max_cost; in a terminal, ask before more than llm.confirm_above calls. True: go on."""
    import sys

    from equilens.flows.running.plan import enforce, make_plan

    plan = make_plan(cfg)
    if plan_only:
        for line in plan.lines():
            say(line)
        enforce(cfg, plan)  # a plan past a cap says so, with exit 2
        return False
    enforce(cfg, plan)
    limit = cfg.llm.confirm_above
    if not yes and limit is not None and (plan.total_calls or 0) > limit and sys.stdin.isatty() and sys.stdout.isatty():
        for line in plan.lines():
            say(line)
        if not _confirmed(f"More than llm.confirm_above={limit:,} LLM calls. Run it?"):
            raise fail("not run: nothing was called (--yes skips this question).", DECLINED)
    else:
        say(plan.summary())
    return True


def _confirmed(question: str) -> bool:
    """The answer to a [y/N] question; end of input (Ctrl-D) is no. Ctrl-C stays the interruption."""
    try:
        return typer.confirm(question, default=False)
    except typer.Abort:  # typer's answer to both end of input and an interrupt
        from equilens.flows.running.interrupt import signal_received

        if signal_received():
            raise KeyboardInterrupt from None
        say("")  # the line the question left open
        return False


def invoke(app: typer.Typer, argv: Sequence[str] | None = None) -> int:
    """Run a typer ``app`` on ``argv`` (default: the process's arguments) and return its exit code."""
    try:
        rc = app(args=None if argv is None else list(argv), standalone_mode=False)
        if isinstance(rc, int):  # click returns the code of a typer.Exit in non-standalone mode
            return rc
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    except Exception as exc:  # click usage errors; an equilens error a command did not report itself
        import click
        from equilens.tasks.errors import EquilensError

        usage = (click.ClickException, *_vendored_click_errors())
        if isinstance(exc, usage):
            exc.show()
            return exc.exit_code
        if isinstance(exc, EquilensError):  # one paragraph, as every command reports its own
            return fail(str(exc), exc.exit_code).exit_code
        raise
    return 0


def _vendored_click_errors() -> tuple[type[Exception], ...]:
    """Typer's own copy of click's usage errors (typer 0.29 vendors click as ``typer._click``), which
    the click package's ``ClickException`` does not catch."""
    try:
        from typer._click.exceptions import ClickException
    except ImportError:
        return ()
    return (ClickException,)


def run_flow_script(flow: Callable[[Any], dict[str, Any]], assessment: str,
                    argv: Sequence[str] | None = None) -> int:
    """``python flows/<flow>.py CONFIG [--set KEY=VALUE] [--db PATH] [--debug]``: ``equilens run`` for the
    configs of ``assessment``, on ``flow`` (the module's own) and the task runner the config asks for."""
    from equilens.flows.running.dispatch import on_task_runner

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command()(run_command(lambda cfg: on_task_runner(flow), assessment))
    return invoke(app, argv)
