"""The watcher of the stage's call loops (:class:`equilens.tasks.llm.loops.Loops`): it wakes at its
beat, at once when a loop ends or raises, and at once when woken, and it registers on each loop once."""

from __future__ import annotations

import asyncio
import time

import pytest
from equilens.tasks.llm.loops import Loops


def test_a_loop_that_raises_wakes_the_watcher_before_its_beat() -> None:
    async def main() -> float:
        async def fails() -> None:
            await asyncio.sleep(0.05)
            raise ValueError("a loop's error")

        loops = Loops([asyncio.ensure_future(fails()), asyncio.ensure_future(asyncio.sleep(60))])
        t0 = time.monotonic()
        ended = await loops.ended(60.0)
        took = time.monotonic() - t0
        with pytest.raises(ValueError, match="a loop's error"):
            ended[0].result()
        assert len(loops.running) == 1
        for fut in loops.running:
            fut.cancel()
        return took

    assert asyncio.run(main()) < 30  # not the 60 s beat


def test_the_beat_hands_over_nothing_and_wake_ends_a_wait() -> None:
    async def main() -> None:
        sleeper = asyncio.ensure_future(asyncio.sleep(60))
        loops = Loops([sleeper])
        assert await loops.ended(0.01) == [] and loops.running == {sleeper}  # the beat: nothing ended
        asyncio.get_running_loop().call_later(0.05, loops.wake)
        t0 = time.monotonic()
        assert await loops.ended(60.0) == []
        assert time.monotonic() - t0 < 30  # woken, not the 60 s beat
        sleeper.cancel()
        assert [f is sleeper for f in await loops.ended(60.0)] == [True] and not loops.running

    asyncio.run(main())


def test_each_loop_gets_one_callback_however_many_beats() -> None:
    async def main() -> int:
        sleeper = asyncio.ensure_future(asyncio.sleep(60))
        seen: list[int] = []
        added = sleeper.add_done_callback

        class Counting:  # a future that counts the callbacks put on it
            def add_done_callback(self, fn: object) -> None:
                seen.append(1)
                added(fn)  # type: ignore[arg-type]

        loops = Loops([Counting()])  # type: ignore[list-item]
        for _ in range(20):
            await loops.ended(0.001)
        sleeper.cancel()
        return len(seen)

    assert asyncio.run(main()) == 1
