"""What the plan before a run computed, handed to the run itself.

``equilens run`` plans first (:mod:`equilens.flows.running.plan`: what the LLM stage will be asked)
and then runs the flow in the same process; both expand the same prompts with the same settings.
:func:`computed_once` keeps the last expansion of a function, keyed by the content of its prompts
and the values of its settings, so the flow's expansion of those prompts is the plan's, not a second
one. Only small inputs are kept (the plan expands at most :data:`PLAN_SAMPLE` prompts),
so a large run never holds a copy of its variants here; a caller always gets its own copy, which
it may change freely.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd

PLAN_SAMPLE = 2_000  # prompts the plan expands at most: all of a smaller set, a uniform sample of a larger

R = TypeVar("R")


def _content_key(prompts: pd.DataFrame, settings: tuple[Any, ...]) -> str | None:
    """A digest of the prompts' content (columns, index and values) and of the settings' values; None
    when a cell cannot be hashed (a list or a dict in a column): such input is never kept."""
    try:
        rows = pd.util.hash_pandas_object(prompts, index=True).to_numpy().tobytes()
    except TypeError:
        return None
    digest = hashlib.sha256(rows)
    digest.update(repr(list(prompts.columns)).encode())
    for value in settings:
        digest.update((value.model_dump_json() if hasattr(value, "model_dump_json") else repr(value)).encode())
    return digest.hexdigest()


def _copied(value: Any) -> Any:  # a DataFrame or a tuple of them
    if isinstance(value, pd.DataFrame):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value


def computed_once(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn(prompts, *settings)``, computed once for the same prompts and settings in a row (the plan,
    then the run): the second call gets a copy of the first's result."""
    last: dict[str, Any] = {}

    @functools.wraps(fn)
    def remembered(prompts: pd.DataFrame, *settings: Any) -> R:  # fn's own settings
        key = _content_key(prompts, settings) if len(prompts) <= PLAN_SAMPLE else None
        if key is not None and last.get("key") == key:
            return _copied(last["value"])
        value = fn(prompts, *settings)
        last.clear()
        if key is not None:
            last.update(key=key, value=_copied(value))
        return value

    return remembered
