"""The stage's call loops, watched at a steady beat for as long as they run.

The LLM stage runs ``max_concurrency`` call loops and, beside them, one watcher that wakes at a
beat (to hand answers to the cache writer and the progress bar, or send a client process's answers
home), at once when a loop ends (so an error raised in a loop surfaces at once), and at once when
asked to (:meth:`Loops.wake`: a stop request). Each wake of an idle process costs CPU of its own
(about 0.2 ms on a small VM), and ``asyncio.wait(loops, timeout=...)`` adds a callback on every loop
and removes it again each time: against an endpoint that takes seconds to answer, a watcher that
wakes ten times a second that way costs about as much client CPU as the calls
(``tests/benchmarks/bench_llm_stage.py --latency 2``). :class:`Loops` registers one callback per
loop, once, and lets the beat be slow because a stop does not wait for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable


class Loops:
    """Tasks to watch until every one has ended: :meth:`ended` waits for the next beat or the next
    loop to end, whichever comes first, and hands over the loops that ended since it last returned."""

    def __init__(self, loops: Iterable[asyncio.Future]) -> None:
        self.running: set[asyncio.Future] = set(loops)
        self._ended: list[asyncio.Future] = []
        self._woken = asyncio.Event()
        for loop in self.running:
            loop.add_done_callback(self._end)

    def _end(self, loop: asyncio.Future) -> None:
        self._ended.append(loop)
        self._woken.set()

    def wake(self) -> None:
        """End the current wait now (from the loop's own thread: ``loop.call_soon_threadsafe(loops.wake)``)."""
        self._woken.set()

    async def ended(self, beat: float) -> list[asyncio.Future]:
        """The loops that ended since the last call, after waiting up to ``beat`` seconds for one
        (or for :meth:`wake`); the caller reads each one's ``result()``, which raises what the loop
        raised."""
        if not self._ended:
            try:
                async with asyncio.timeout(beat):
                    await self._woken.wait()
            except TimeoutError:
                pass
        self._woken.clear()
        ended, self._ended = self._ended, []
        self.running.difference_update(ended)
        return ended
