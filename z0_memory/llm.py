"""Calling chat models on purpose: a timeout, bounded retries with backoff, validated structured output.

Every model call of z0-memory goes through :func:`invoke_structured` or :func:`invoke_text`. A call that times out,
raises (HTTP errors, connection resets) or returns output that does not validate is retried ``model_retries``
times with exponential backoff, then raises :class:`ModelCallError`; callers decide the degraded path (the offline
algorithm, or recording the turn for a later retry) and say so in their trace.

No model is shown a secret: both functions send the messages through ``redaction.redact_value`` first (message
text, tool-call arguments; ids kept), whoever built them (extractor, judge, chat responder, code agent).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import BaseGenerationOutputParser, BaseOutputParser
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import Runnable, RunnableSequence
from pydantic import BaseModel, ValidationError

from z0_memory.config import Context
from z0_memory.errors import Z0Error
from z0_memory.redaction import redact_value

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
BACKOFF_S = 0.2


class ModelCallError(Z0Error, RuntimeError):
    """A model call failed after its retries."""


async def _with_retries(call: Any, ctx: Context, what: str) -> Any:
    attempts = int(ctx.model_retries) + 1
    last: BaseException | None = None
    for attempt in range(attempts):
        try:
            async with asyncio.timeout(float(ctx.model_timeout_s)):  # unlike wait_for, no extra task per call
                return await call()
        except (asyncio.TimeoutError, ValidationError, ValueError, KeyError, TypeError) as exc:
            last = exc
        except Exception as exc:  # noqa: BLE001 - provider SDKs raise their own hierarchy (HTTP, network)
            last = exc
        log.warning("%s failed (attempt %d/%d): %s", what, attempt + 1, attempts, last)
        if attempt + 1 < attempts:
            await asyncio.sleep(BACKOFF_S * (2**attempt))
    kind = "timed out" if isinstance(last, asyncio.TimeoutError) else f"failed: {type(last).__name__}: {last}"
    raise ModelCallError(f"{what} {kind} after {attempts} attempt(s)") from last


async def _ainvoke_parsing_inline(runnable: Runnable, messages: list[BaseMessage]) -> Any:
    """``runnable.ainvoke(messages)``, with a structured-output sequence's parsing steps run inline.

    ``with_structured_output`` returns ``model | parser`` (OpenAI: ``model | refusal check | parser``). Awaited as a
    sequence, LangChain runs each sync parser through ``run_in_executor``: a thread hop per step (two per judge
    call), which costs milliseconds on a busy machine, for microseconds of parsing. Here the model step is awaited
    and the parsing steps, pure CPU, run in place: the same model call (and its callbacks: token usage, tracing)
    and the same parsers. A LangChain output parser is asked for ``parse_result`` directly, which is all its
    ``invoke`` does with a message besides reporting a "parser" run to the callbacks.
    """
    if not isinstance(runnable, RunnableSequence):
        return await runnable.ainvoke(messages)
    value = await runnable.first.ainvoke(messages)
    for step in runnable.steps[1:]:
        if isinstance(value, BaseMessage) and type(step).invoke in _PARSER_INVOKES:
            value = step.parse_result([ChatGeneration(message=value)])
        else:
            value = step.invoke(value)
    return value


_PARSER_INVOKES = (BaseOutputParser.invoke, BaseGenerationOutputParser.invoke)


async def invoke_structured(model: BaseChatModel, schema: type[T], messages: list[BaseMessage], ctx: Context,
                            *, what: str, runnable: Runnable | None = None) -> T:
    """Ask ``model`` for an instance of ``schema``; raise ModelCallError when it cannot deliver one.

    ``runnable``: the model's structured-output runnable when the caller keeps one (``Providers.structured``).
    """
    runnable = runnable or model.with_structured_output(schema, method=ctx.structured_output_method)
    messages = redact_value(list(messages))  # before any model sees them

    async def call() -> T:
        out = await _ainvoke_parsing_inline(runnable, messages)
        if isinstance(out, schema):
            return out
        if isinstance(out, dict):
            return schema.model_validate(out)
        raise TypeError(f"expected {schema.__name__}, got {type(out).__name__}")

    return await _with_retries(call, ctx, what)


async def invoke_messages(model: BaseChatModel, messages: list[BaseMessage], ctx: Context, *, what: str,
                          tools: list[Any] | None = None) -> AIMessage:
    """A plain chat call (optionally with tools bound)."""
    runnable = model.bind_tools(tools) if tools else model
    messages = redact_value(list(messages))  # before any model sees them

    async def call() -> AIMessage:
        out = await runnable.ainvoke(messages)
        if not isinstance(out, AIMessage):
            raise TypeError(f"expected an AIMessage, got {type(out).__name__}")
        return out

    return await _with_retries(call, ctx, what)
