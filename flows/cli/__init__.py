"""The ``equilens`` command line.

Kept light at import time: Prefect, torch and great-expectations load only when a command needs
them, so ``equilens --help`` answers at once.
"""

from __future__ import annotations

import sys

import typer
from equilens.flows.cli.commands import assessments, compare, judge_check, metrics, options, report, runs, show
from equilens.flows.running.launch import invoke, run_command

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
    equilens assessments       what each assessment answers, and its shipped config
    equilens options           every config key, its default and meaning
    equilens metrics           every metric and which direction is fairer
    equilens judge-check CONFIG   how often the configured judge model is right on labelled pairs
"""

app = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode=None, add_completion=False,
                  pretty_exceptions_enable=False)


def _flow_for(config: object):  # noqa: ANN202 - the flow the config's assessment names
    from equilens.flows.running.dispatch import flow_for

    return flow_for(config)


# --help lists them so
for _command in (run_command(_flow_for), runs, show, report, compare, judge_check, metrics, assessments, options):
    app.command()(_command)


def main(argv: list[str] | None = None) -> int:
    return invoke(app, argv)


if __name__ == "__main__":
    sys.exit(main())
