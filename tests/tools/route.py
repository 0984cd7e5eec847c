"""The route of one run: the files a reader walks from the command to the run's rows in DuckDB.

Runs ``equilens run CONFIG`` in this process under a profiler, with a Prefect result store and a
DuckDB file of its own (so no stage is answered from an earlier run's cache), and prints the files
on the run's route, in the order the walk first reaches them, and how often the walk comes back to
a file it had left::

    .venv/bin/python tests/tools/route.py                     # configs/identity.yaml, 2 prompts
    .venv/bin/python tests/tools/route.py configs/demo.yaml --set prompts.limit=3

**What is on the route.** A reader follows a run the way it goes: the command's entry
(``flows/cli``, ``flows/running/launch.py``), then the flow and each of its Prefect tasks read top
to bottom, opening each function they call, then down the calls from there to each row the run
reads from or writes to DuckDB and each call of the model. So the route is every project file on
the call stack at each of these moments:

* a call made by the entry, by a Prefect flow or task function, or by a helper that one of those
  calls in its own module (which reads as part of it);
* a call of a public method of the store (``Store``) and of a provider's ``acomplete`` or
  ``complete_batch`` (the seam of every model call).

A helper below those (a lexicon, a statistic, a scorer's model, the engine under the local
provider) is a leaf the reader can leave closed; module code run on import is not on the route.

**Returns.** The walk visits the route's call stacks in the order they happen; from one to the next
it climbs back to their common caller and descends into the new one. A return is an arrival in a
file the walk had been in before: the flow's file each time a task hands back, a stage module each
time the flow calls it again.
"""

from __future__ import annotations

import argparse
import collections
import inspect
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LINKS = f"{os.sep}equilens-links{os.sep}equilens{os.sep}"  # tests/tools/link_package.py's tree
ENTRY = ("flows/cli/__init__.py", "flows/running/launch.py")
DEFAULT = ["configs/identity.yaml", "--set", "prompts.limit=2", "--set", "identity.names_per_cell=2"]


def project_file(filename: str) -> str | None:
    """The repository path of a code file of the project (flows/ or tasks/), else None."""
    if LINKS in filename:
        filename = str(ROOT / filename.split(LINKS, 1)[1])
    path = Path(filename)
    if not path.is_relative_to(ROOT):
        return None
    rel = path.relative_to(ROOT).as_posix()
    return rel if rel.startswith(("flows/", "tasks/")) else None


STEPS: set[Any] = set()  # the code of every Prefect flow and task function, as each is declared


def watch_steps() -> None:
    """Note the function of every Prefect flow and task declared from now on (in :data:`STEPS`)."""
    from prefect.flows import Flow
    from prefect.tasks import Task

    for kind in (Flow, Task):
        declare = kind.__init__

        def noted(self: Any, *args: Any, _declare: Any = declare, **kwargs: Any) -> None:
            _declare(self, *args, **kwargs)
            STEPS.add(inspect.unwrap(self.fn).__code__)

        kind.__init__ = noted  # type: ignore[method-assign]


class Tracer:
    """Collects the route's call stacks as the run makes them (every thread)."""

    def __init__(self) -> None:
        self.stacks: list[list[tuple[str, str]]] = []  # (file, function) from the entry down
        self._steps: set[Any] = set()  # code objects whose calls are on the route
        self._lock = threading.Lock()

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        here = project_file(code.co_filename)
        if here is None or not code.co_flags & inspect.CO_OPTIMIZED:
            return  # not the project's, or module or class code run on import
        caller = frame.f_back
        caller_file = caller.f_code.co_filename if caller is not None else ""
        if code in STEPS or here in ENTRY:
            self._steps.add(code)  # the entry, a flow or a task: what it calls is on the route
            if here not in ENTRY:
                self._record(frame)
            return
        if caller is not None and caller.f_code in self._steps:
            if project_file(caller_file) == here:
                self._steps.add(code)  # a helper in the step's own module reads as part of the step
            self._record(frame)
        elif self._is_sink(frame, here):
            self._record(frame)

    @staticmethod
    def _is_sink(frame: FrameType, here: str) -> bool:
        name = frame.f_code.co_name
        if name in ("acomplete", "complete_batch"):  # a provider's, not the engine's below it
            provider = frame.f_locals.get("self")
            return all(hasattr(provider, a) for a in ("batched", "acomplete", "complete_batch"))
        owner = frame.f_code.co_qualname.split(".")[0]
        return here == "tasks/storage/store.py" and owner == "Store" and not name.startswith("_")

    def _record(self, frame: FrameType) -> None:
        stack: list[tuple[str, str]] = []
        at: FrameType | None = frame
        while at is not None:
            rel = project_file(at.f_code.co_filename)
            if rel is not None and at.f_code.co_flags & inspect.CO_OPTIMIZED:
                stack.append((rel, at.f_code.co_qualname))
            at = at.f_back
        with self._lock:
            self.stacks.append(stack[::-1])


def walk(stacks: list[list[tuple[str, str]]]) -> list[str]:
    """The files the walk arrives in, in order: from each stack to the next it climbs to their common
    caller's file, then descends through the new stack's files (a move within one file is no arrival)."""
    arrivals: list[str] = []
    before: list[tuple[str, str]] = []
    for stack in stacks:
        shared = 0
        while shared < min(len(before), len(stack)) and before[shared] == stack[shared]:
            shared += 1
        path = ([stack[shared - 1][0]] if shared else []) + [f for f, _ in stack[shared:]]
        for f in path:
            if not arrivals or arrivals[-1] != f:
                arrivals.append(f)
        before = stack
    return arrivals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_args", nargs="*", metavar="RUN_ARGS",
                        help=f"what follows `equilens run` (default: {' '.join(DEFAULT)})")
    parser.add_argument("--walk", action="store_true", help="also print the walk: every arrival in a file, in order")
    args, more = parser.parse_known_args()  # what follows `equilens run`, its options too
    run_args = [*args.run_args, *more] or DEFAULT
    scratch = Path(tempfile.mkdtemp(prefix="equilens-route-"))
    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(scratch / "results")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    watch_steps()
    from equilens.flows.cli import main as cli

    tracer = Tracer()
    threading.setprofile(tracer)
    sys.setprofile(tracer)
    try:
        code = cli(["run", *run_args, "--db", str(scratch / "route.duckdb"), "--yes",
                    "--set", f"storage.reports_dir={scratch / 'runs'}"])
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    arrivals = walk(tracer.stacks)
    first = list(dict.fromkeys(arrivals))
    returns = collections.Counter(arrivals)
    print(f"\nroute of `equilens run {' '.join(run_args)}` (exit {code}): {len(first)} files, "
          f"{len(arrivals) - len(first)} returns to a file the walk had left")
    functions: dict[str, set[str]] = collections.defaultdict(set)
    for stack in tracer.stacks:
        for f, fn in stack:
            functions[f].add(fn)
    for f in first:
        shown = sorted(functions[f])
        more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
        print(f"{returns[f] - 1:3d}  {f}: {', '.join(shown[:4])}{more}")
    if args.walk:
        print("\nthe walk:", " > ".join(arrivals))
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
