"""``llm.provider: langchain``: the application is a LangChain chat model or Runnable (a chain, an agent).

``llm.target`` is an import path ``module:attribute`` of a chat model class (``langchain_anthropic:
ChatAnthropic``), of any Runnable, or of a factory function returning one; a class or a factory is
called with ``llm.target_kwargs`` (``${VAR}`` read from the environment: keys stay there, in
LangChain's own variables such as ``ANTHROPIC_API_KEY``). ``equilens.assess(model=...)`` takes the
object itself.

* A **chat model** gets the system message, a conversation's earlier turns and the prompt as LangChain
  messages. ``temperature`` and
  ``max_tokens`` are set where the class declares them and ``target_kwargs`` leaves them unset, and
  ``llm.logprobs`` asks for log-probabilities where the class has a ``logprobs`` field. Token usage is
  read from the message's ``usage_metadata``, the first token's log-probabilities from its
  ``response_metadata`` (OpenAI's layout), so decisions can read P(yes) through LangChain.
* Any other **Runnable** gets ``llm.request`` filled (default: the prompt as a string), for example
  ``{"question": "{prompt}", "customer": "{name}"}``, so an identity run reaches the chain's own
  fields; a conversation's earlier turns reach it as ``{history}`` (a list of ``{"role", "content"}``
  dicts, which a ``MessagesPlaceholder`` takes) or ``{messages}`` (the same with this turn last).
  Its output is read as a message's content, a string, or the string at ``llm.response_path`` in a
  dict.

Calls go through ``ainvoke``, ``max_concurrency`` at a time (``invoke`` in a thread for a Runnable
without async support). An object built from an import path is
built inside each run's event loop (:meth:`aopen`): LangChain clients hold connections bound to the
loop that opened them; a factory that loads a model should keep it between calls (``functools.cache``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ProviderError
from equilens.tasks.llm.base import PROVIDERS, Completion, TargetReplyError, answer_char_cap, capped
from equilens.tasks.llm.targets import OBJECT_MARK, call_values, check_request_fields, expand_env, fill, resolve


def build(cfg: LLMConfig) -> Any:
    """The Runnable ``llm.target`` names: the object itself, or what its class or factory returns when
    called with ``target_kwargs`` (and the generation settings the class declares)."""
    from langchain_core.runnables import Runnable

    found = resolve(cfg.target or "")
    if isinstance(found, Runnable):
        if cfg.target_kwargs and OBJECT_MARK not in (cfg.target or ""):
            raise ProviderError(f"llm.target {cfg.target!r} is a LangChain object, not a class or factory: "
                                "llm.target_kwargs cannot be passed to it (leave them out, or name its class).")
        return found
    if not callable(found):
        raise ProviderError(f"llm.target {cfg.target!r} is a {type(found).__name__}: expected a LangChain chat model "
                            "or Runnable, its class, or a factory function returning one.")
    kwargs = dict(expand_env(cfg.target_kwargs, "llm.target_kwargs"))
    if inspect.isclass(found):
        fields = getattr(found, "model_fields", {})
        for key, value in generation_settings(cfg).items():
            if key in fields and key not in kwargs:
                kwargs[key] = value
    try:
        built = found(**kwargs)
    except Exception as err:  # noqa: BLE001 - a class that refuses its arguments is a config problem
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        try:  # a pydantic model's first line names no field: "1 validation error for ChatOpenAI"
            first = err.errors()[0]  # type: ignore[attr-defined]
            message = f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
        except Exception:  # noqa: BLE001 - not a validation error: its first line says it
            pass
        raise ProviderError(f"llm.target {cfg.target!r} refused llm.target_kwargs ({type(err).__name__}: "
                            f"{message[:300]}).") from None
    if not isinstance(built, Runnable):
        raise ProviderError(f"llm.target {cfg.target!r} returned a {type(built).__name__}: expected a LangChain "
                            "chat model or Runnable.")
    return built


def generation_settings(cfg: LLMConfig) -> dict[str, Any]:
    """The fields a chat model class is given when it declares them and ``target_kwargs`` does not."""
    out: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
    if cfg.logprobs:
        out |= {"logprobs": True, "top_logprobs": cfg.logprobs}
    return out


def is_chat_model(obj: Any) -> bool:
    from langchain_core.language_models import BaseChatModel

    return isinstance(obj, BaseChatModel)


class LangChainProvider:
    """``ainvoke`` on the Runnable ``llm.target`` names, one prompt at a time."""

    batched = False
    name = "langchain"

    def __init__(self, cfg: LLMConfig) -> None:
        self.cfg, self.model = cfg, cfg.model
        self.runnable: Any = None
        self.chat = False
        self._sync_only = False
        self._cap = answer_char_cap(cfg)
        expand_env(cfg.target_kwargs, "llm.target_kwargs")  # registers the ${VAR} values as secrets before
        # the run's scrubber lists them; the object itself is built in aopen, inside the run's loop

    async def aopen(self) -> None:
        """Build the Runnable (a class or factory) inside this event loop, whose clients it may hold."""
        if self.runnable is None:
            self.runnable = build(self.cfg)
            self.chat = is_chat_model(self.runnable)

    def conversation_problem(self) -> str | None:
        """Why this target cannot be given a conversation: a Runnable whose input has no place for it."""
        from equilens.tasks.config.sections import template_fields

        built = self.runnable if self.runnable is not None else build(self.cfg)  # the run's own is built in its loop
        if is_chat_model(built) or template_fields(self.cfg.request or "{prompt}") & {"history", "messages"}:
            return None
        return (f"{self.cfg.target} is a Runnable whose input (llm.request) has no {{history}} or {{messages}}, so it "
                "cannot see the earlier turns: put {history} where the chain takes its chat history.")

    async def acomplete(self, prompt: str, sample_idx: int, system: str | None = None,
                        user: dict[str, str] | None = None, history: list[dict[str, str]] | None = None,
                        conversation: str | None = None) -> Completion:
        if self.runnable is None:
            await self.aopen()
        if self.chat:
            from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

            sys_text = self.cfg.system_prompt if system is None else system
            earlier = [AIMessage(m["content"]) if m["role"] == "assistant" else HumanMessage(m["content"])
                       for m in history or []]
            messages = ([SystemMessage(sys_text)] if sys_text else []) + earlier + [HumanMessage(prompt)]
            return self.message_answer(await self._invoke(messages))
        template = self.cfg.request if self.cfg.request is not None else "{prompt}"
        out = await self._invoke(fill(template, call_values(self.cfg, prompt, system, user, history)))
        return self.output_answer(out)

    async def _invoke(self, value: Any) -> Any:
        """``ainvoke``; a Runnable without async support (``NotImplementedError``, as
        ``ChatHuggingFace`` over a local ``HuggingFacePipeline`` raises) runs ``invoke`` in a thread,
        from then on for this run."""
        if not self._sync_only:
            try:
                return await self.runnable.ainvoke(value)
            except NotImplementedError:
                self._sync_only = True
        import asyncio

        return await asyncio.to_thread(self.runnable.invoke, value)

    def message_answer(self, message: Any) -> Completion:
        """A chat model's message: its text, token usage and first-token log-probabilities."""
        from equilens.tasks.llm.openai_provider import first_token_logprobs

        text = _text_of(getattr(message, "content", message))
        usage = getattr(message, "usage_metadata", None) or {}
        meta = getattr(message, "response_metadata", None) or {}
        completion = capped(text, self._cap, prompt_tokens=usage.get("input_tokens"),
                            completion_tokens=usage.get("output_tokens"),
                            top_logprobs=first_token_logprobs(meta.get("logprobs")))
        return completion

    def output_answer(self, out: Any) -> Completion:
        """A Runnable's output: a message, a string, or the string at ``llm.response_path`` in a dict."""
        from langchain_core.messages import BaseMessage

        if isinstance(out, BaseMessage):
            return self.message_answer(out)
        if isinstance(out, str):
            return capped(out, self._cap)
        if isinstance(out, dict) and self.cfg.response_path:
            import jmespath

            found = jmespath.search(self.cfg.response_path, out)
            if isinstance(found, str):
                return capped(found, self._cap)
            raise TargetReplyError(f"llm.response_path {self.cfg.response_path!r} finds "
                                   f"{'nothing' if found is None else type(found).__name__}, not a string, in the "
                                   f"output (keys: {', '.join(map(str, list(out)[:10]))})")
        hint = " (set llm.response_path to the answer's key)" if isinstance(out, dict) else ""
        raise TargetReplyError(f"the Runnable returned a {type(out).__name__}; expected a message or a string{hint}")

    @staticmethod
    def preflight(cfg: LLMConfig, user_fields: set[str]) -> None:
        """The target builds into a chat model or Runnable; an identity signal placed in the application
        needs a Runnable whose input (``llm.request``) has a place for the person's fields."""
        built = build(cfg)
        if user_fields and is_chat_model(built):
            raise ProviderError(f"identity.signals places the person in the application (placement app), but "
                                f"{cfg.target} is a chat model, which takes only messages: use placement system, "
                                "or test the chain that owns the user's fields.")
        check_request_fields(cfg, user_fields)

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int]) -> list[Completion]:
        raise NotImplementedError("a langchain target is called one prompt at a time")

    async def aclose(self) -> None:
        if self.runnable is not None:
            await _drop_connections(self.runnable)
        self.runnable = None  # the next run's loop builds its own


async def _drop_connections(obj: Any, depth: int = 0) -> None:
    """Close the pooled connections of the async HTTP clients a Runnable's SDK clients hold, while this
    run's loop still runs: langchain-openai and langchain-anthropic share one async HTTP client per base
    URL across instances (lru-cached), so a socket left in its pool would reach the next run's loop and
    fail there ("Event loop is closed"). The client stays usable; the next run opens new connections.
    Duck-typed: the SDKs' HTTP client (httpx or its successor) keeps ``_transport`` and ``_mounts``."""
    if depth > 4:
        return
    for value in list(getattr(obj, "__dict__", {}).values()):
        for item in value if isinstance(value, (list, tuple)) else [value]:
            client = getattr(item, "_client", None)
            mounts = getattr(client, "_mounts", None)
            if mounts is not None and hasattr(client, "_transport"):
                for transport in [client._transport, *mounts.values()]:
                    closing = getattr(transport, "aclose", None)
                    if inspect.iscoroutinefunction(closing):  # an async pool, of this loop
                        try:
                            await closing()
                        except Exception:  # noqa: BLE001 - a connection already gone needs no closing
                            pass
            elif _is_runnable(item):
                await _drop_connections(item, depth + 1)


def _is_runnable(obj: Any) -> bool:
    from langchain_core.runnables import Runnable

    return isinstance(obj, Runnable)


def _text_of(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, dict) else "" for p in content)
    raise TargetReplyError(f"the message content is a {type(content).__name__}, not text")


PROVIDERS.add("langchain", LangChainProvider)
