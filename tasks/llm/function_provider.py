"""``llm.provider: python``: the application is a Python function.

``llm.target: my_app.chat:answer`` names a function (sync or async) that is called as
``answer(prompt, system=..., user=..., **llm.target_kwargs)`` and returns the answer: a string, or a
dict with ``text`` and, optionally, ``prompt_tokens`` and ``completion_tokens``. ``system`` is passed
when the function takes it (a parameter of that name, or ``**kwargs``); ``user`` (the person's fields,
``{"name": ...}``) only for identity runs with the ``app`` placement, which need the function to take it.
A conversation's turns reach a function that takes ``messages``: the whole conversation so far, a list
of ``{"role": "user" | "assistant", "content": ...}`` dicts ending with this turn (``prompt`` is this
turn too); a function without it cannot be given a conversation, which is refused before any call.

Async functions run on an event loop of their own, in a daemon thread (:class:`TargetLoop`),
``max_concurrency`` at a time; sync ones on ``max_concurrency`` worker threads (``max_concurrency: 1``
for a function that is not thread-safe). What the function raises is retried with backoff like an
endpoint's error, then recorded on its row; ``sys.exit()`` in the function is a failed row naming it
(:class:`TargetExited`), never the end of the run; a return value of another kind is a failed row
naming the type. The per-attempt deadline (``llm.timeout``) holds for every kind of function: it
stops waiting for a call that hangs, though its thread cannot be killed (it holds one worker until it
returns), and an async function that blocks its loop (``time.sleep`` where ``await asyncio.sleep``
belongs) is a failed row saying so, since its loop is not the stage's. Workers are daemon threads, so
a hung call never keeps the process from exiting after Ctrl-C or at the end of a run. (``os._exit``
ends the process at once, past any handler: the next run marks that run abandoned.)
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError
from equilens.tasks.llm.base import PROVIDERS, Completion, TargetReplyError, answer_char_cap, capped
from equilens.tasks.llm.targets import accepts, expand_env, first_positional, resolve


class FunctionProvider:
    """Calls the function ``llm.target`` names, one prompt at a time."""

    batched = False
    name = "python"

    def __init__(self, cfg: LLMConfig) -> None:
        self.cfg, self.model = cfg, cfg.model
        self.fn = resolve(cfg.target or "")
        if not callable(self.fn):
            raise ProviderError(f"llm.target {cfg.target!r} is a {type(self.fn).__name__}, not a function: expected a "
                                "callable answer(prompt, system=..., **kwargs) returning a string.")
        self.is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
            getattr(self.fn, "__call__", None))
        self.takes_system, self.takes_user = accepts(self.fn, "system"), accepts(self.fn, "user")
        self.takes_messages = accepts(self.fn, "messages")
        first = first_positional(self.fn)
        if first in ("system", "user", "messages"):  # the prompt is passed first: that name would get two values
            raise ProviderError(f"llm.target {cfg.target!r} takes {first} as its first argument, where equilens passes "
                                f"the prompt: it calls answer(prompt, {first}=...), so give it a prompt parameter "
                                f"first (def answer(prompt, {first}=None, ...)).")
        # read now, so the values are registered as secrets before the run's scrubber lists them
        self._kwargs: dict[str, Any] | None = expand_env(cfg.target_kwargs, "llm.target_kwargs")
        self._pool: WorkerThreads | None = None
        self._loop: TargetLoop | None = None
        self._cap = answer_char_cap(cfg)

    async def aopen(self) -> None:
        if self._kwargs is None:
            self._kwargs = expand_env(self.cfg.target_kwargs, "llm.target_kwargs")
        if not self.is_async and self._pool is None:
            self._pool = WorkerThreads(self.cfg.max_concurrency)
        if self.is_async and self._loop is None:
            self._loop = TargetLoop()

    def conversation_problem(self) -> str | None:
        """Why this function cannot be given a conversation (None: it takes ``messages``)."""
        if self.takes_messages:
            return None
        return (f"{self.cfg.target} takes no messages argument, so it cannot see the earlier turns: add messages=None "
                "to its parameters (it receives the conversation as a list of {'role', 'content'} dicts).")

    async def acomplete(self, prompt: str, sample_idx: int, system: str | None = None,
                        user: dict[str, str] | None = None, history: list[dict[str, str]] | None = None,
                        conversation: str | None = None) -> Completion:
        if self._kwargs is None or (self._pool is None and self._loop is None):
            await self.aopen()
        kwargs = dict(self._kwargs or {})
        if self.takes_system:
            kwargs["system"] = self.cfg.system_prompt if system is None else system
        if user is not None:
            kwargs["user"] = user
        if history is not None:
            # copies: a function that edits what it was given must not rewrite the stored turns
            kwargs["messages"] = [*map(dict, history), {"role": "user", "content": prompt}]
        try:
            if self._loop is not None:
                out = await self._loop.call(self.fn(prompt, **kwargs), self.cfg.timeout, self.cfg.target or "")
            else:
                out = await asyncio.wrap_future(self._pool.submit(self.fn, prompt, **kwargs))  # type: ignore[union-attr]
        except (SystemExit, _Exited) as err:
            raise TargetExited(f"{self.cfg.target} called sys.exit({err.code!r}); the call is recorded as failed and "
                               "the run goes on") from None
        return answer_of(out, self._cap)

    @staticmethod
    def preflight(cfg: LLMConfig, user_fields: set[str]) -> None:
        """The function imports, is callable, takes ``target_kwargs`` and, when an identity signal is
        placed in the application (``user_fields``), a ``user`` argument."""
        import inspect

        provider = FunctionProvider(cfg)
        try:
            inspect.signature(provider.fn).bind_partial("prompt", **cfg.target_kwargs)
        except TypeError as err:
            raise ProviderError(f"llm.target_kwargs: {cfg.target} does not take them ({err}).") from None
        except ValueError:
            pass  # no signature to read
        if user_fields and not provider.takes_user:
            raise ProviderError(f"identity.signals places the person in the application (placement app), but "
                                f"{cfg.target} takes no user argument: add user=None to its parameters (it receives "
                                f"{{{', '.join(repr(f) + ': ...' for f in sorted(user_fields))}}}).")

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        raise NotImplementedError("a python target is called one prompt at a time")

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.close()  # a hung call keeps its thread, not the run
            self._pool = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None


class TargetExited(RuntimeError):
    """The application called ``sys.exit()``: a failed row, not the end of the run; not retried."""

    retryable = False


class TargetBlockedLoop(TimeoutError):
    """An async application blocked its event loop past the deadline; not retried (it would again)."""

    retryable = False


class _Exited(Exception):  # SystemExit carried across the loop's thread as an ordinary error
    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


async def _no_exit(coroutine: Any) -> Any:  # the app's answer
    """``coroutine``'s result; its ``sys.exit()`` as :class:`_Exited`, which ends neither its loop nor the run."""
    try:
        return await coroutine
    except SystemExit as err:
        raise _Exited(err.code) from None


class TargetLoop:
    """An event loop in a daemon thread for an async application, so that a coroutine that blocks its
    loop cannot stop the stage's deadlines; a heartbeat every :data:`BEAT` seconds tells a call that is
    slow from a loop that is blocked."""

    BEAT = 0.1

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self.beat = time.monotonic()
        threading.Thread(target=self._run, name="equilens-target-loop", daemon=True).start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._tick)
        self._loop.run_forever()

    def _tick(self) -> None:
        self.beat = time.monotonic()
        self._loop.call_later(self.BEAT, self._tick)

    def blocked_for(self) -> float:
        """Seconds since the loop last ran its heartbeat (about :data:`BEAT` while it is free)."""
        return time.monotonic() - self.beat

    async def call(self, coroutine: Any, timeout: float, name: str) -> Any:  # the app's answer
        """``coroutine``'s result, run on this loop; past ``timeout`` a :class:`TargetBlockedLoop` when the
        loop is blocked (the stage's own deadline fires for a call that is only slow)."""
        future = asyncio.run_coroutine_threadsafe(_no_exit(coroutine), self._loop)
        wrapped = asyncio.wrap_future(future)
        done, _ = await asyncio.wait({wrapped}, timeout=max(0.0, timeout - 0.05))
        if done:
            return wrapped.result()
        if (blocked := self.blocked_for()) > min(5 * self.BEAT, 0.8 * timeout):  # a free loop beats every BEAT
            future.cancel()
            raise TargetBlockedLoop(f"{name} blocked its event loop ({blocked:.1f} s without yielding, at llm.timeout "
                                    f"{timeout:g} s): an async function must await (asyncio.sleep, an async "
                                    "client), or be a plain function, which runs in worker threads")
        return await wrapped  # only slow: the stage's deadline ends it

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)


class WorkerThreads:
    """``size`` daemon threads that run submitted calls in turn. Unlike the standard thread pool, whose
    threads the interpreter joins at exit, a call that never returns does not hold the process; a
    call cancelled before it starts (its deadline passed while it waited) is skipped."""

    def __init__(self, size: int) -> None:
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, name=f"equilens-target-{i}", daemon=True)
                         for i in range(size)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        self._todo.put((future, fn, args, kwargs))
        return future

    def _work(self) -> None:
        while (item := self._todo.get()) is not None:
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as err:  # noqa: BLE001 - handed to the caller, which records it
                future.set_exception(err)

    def close(self) -> None:
        """Each thread ends after its current call; calls still waiting are cancelled."""
        while True:
            try:
                future, *_ = self._todo.get_nowait()
            except queue.Empty:
                break
            future.cancel()
        for _ in self._threads:
            self._todo.put(None)


def answer_of(out: Any, cap: int) -> Completion:
    """A function's return value as an answer: a string, or a dict with ``text`` and optional token counts."""
    if isinstance(out, str):
        return capped(out, cap)
    if isinstance(out, dict) and isinstance(out.get("text"), str):
        usage = {k: out[k] if isinstance(out.get(k), int) and not isinstance(out.get(k), bool) else None
                 for k in ("prompt_tokens", "completion_tokens")}
        return capped(out["text"], cap, **usage)
    what = f"a dict whose 'text' is {type(out.get('text')).__name__}" if isinstance(out, dict) else type(out).__name__
    raise TargetReplyError(f"the target returned {what}; expected a string, or a dict with a string 'text' "
                           "(and optional prompt_tokens, completion_tokens)")


PROVIDERS.add("python", FunctionProvider)
