"""Set-up mistakes found by the first calls, not by the last: a wrong token, a wrong URL path or a
misspelt ``llm.response_path`` fails every call the same way, and sending all of them only repeats it.

:class:`FirstCalls` watches the results as they come in. When the first :data:`FIRST_CALLS` have all
failed for the same set-up cause and none has answered, the stage stops sending and raises
:class:`SetupFailed` (exit 4), one paragraph naming the cause and the key to fix. A set-up cause is a
client error that no retry can mend (HTTP 400, 401, 403, 404, 405, 410, 415, 422) with the same status,
or a reply path that finds no answer (the same path). Timeouts, dropped connections, 429 and 5xx are
outages, not set-up: they are retried per row and judged at the end by ``llm.max_failed_share``. A
single success anywhere among the first calls turns the watch off: a partly working application is
measured, its failures recorded per row.
"""

from __future__ import annotations

import re

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import EquilensError
from equilens.tasks.llm.base import LLMResult

FIRST_CALLS = 6
"""How many first results, all failed the same way with none answered, stop a stage."""

SETUP_STATUSES = {400: "the request body (llm.request) is not what the API expects",
                  401: "the API refused the credentials: check the key or token in llm.headers (or llm.api_key_env)",
                  403: "the API refused the credentials: check the key or token in llm.headers (or llm.api_key_env)",
                  404: "nothing answers at that address: check llm.base_url (its path)",
                  405: "the address does not take a POST: check llm.base_url (its path)",
                  410: "nothing answers at that address any more: check llm.base_url",
                  415: "the API does not take JSON there: check llm.base_url and llm.headers",
                  422: "the request body (llm.request) is not what the API expects"}
_STATUS = re.compile(r"^\w*Error: HTTP (\d{3})\b")
_PATH = re.compile(r"llm\.response_path ('(?:[^'\\]|\\.)*') finds")


class SetupFailed(EquilensError):
    """The first calls all failed for one set-up cause (a wrong key, URL or reply path): exit 4."""

    exit_code = 4


def setup_cause(res: LLMResult) -> tuple[str, str] | None:
    """(a key for the cause, what to fix) when a failed row's cause is the application's set-up; None
    for an answer, a refusal, or a failure that may pass (a timeout, an outage)."""
    if res.ok or res.refusal:
        return None
    message = res.error_message or ""
    if (found := _STATUS.match(message)) and int(found.group(1)) in SETUP_STATUSES:
        return f"HTTP {found.group(1)}", SETUP_STATUSES[int(found.group(1))]
    if found := _PATH.search(message):
        return f"response_path {found.group(1)}", "fix llm.response_path: the replies' keys are in the message below"
    return None


class FirstCalls:
    """Watches a stage's first results (see the module docstring)."""

    def __init__(self, cfg: LLMConfig, total: int) -> None:
        self.cfg, self.total = cfg, total
        self.seen: list[LLMResult] = []
        self.watching = total > FIRST_CALLS
        self.failed = False  # set as the stage is stopped: no call loop starts another call

    def add(self, res: LLMResult) -> None:
        """Record one result; raise :class:`SetupFailed` once the first :data:`FIRST_CALLS` failed alike."""
        if not self.watching:
            return
        cause = setup_cause(res)
        if cause is None or (self.seen and setup_cause(self.seen[0]) != cause):
            self.watching = False  # an answer, an outage, or two causes: measure, record per row
            return
        self.seen.append(res)
        if len(self.seen) >= FIRST_CALLS:
            self.watching, self.failed = False, True
            key, fix = cause
            where = self.cfg.base_url or self.cfg.target or self.cfg.model
            raise SetupFailed(
                f"the first {len(self.seen)} calls to {where} all failed the same way ({key}) and none was answered, "
                f"so the other {self.total - len(self.seen):,} were not sent: {fix}. The first failure: "
                f"{(res.error_message or '')[:400]} Fix it and run the same command again.")
