"""Calling chat models on purpose: a timeout, bounded retries with backoff, validated structured output.

Every model call of z0-memory goes through :func:`invoke_structured` or :func:`invoke_messages` (and every remote
embedding call through :func:`call_with_retries`, see ``providers.ResilientEmbeddings``). A call that times out,
raises (HTTP 5xx, 408, 409, connection resets, a truncated stream) or returns output that does not validate
(malformed JSON, an empty tool call) is retried ``model_retries`` times with exponential backoff, then raises
:class:`ModelCallError`; callers decide the degraded path (the offline algorithm, or recording the turn for a later
retry) and say so in their trace.

What is not retried, because asking again cannot help: a refusal (``message.refusal``, a content filter) and an
HTTP 4xx other than 408, 409 and 429 (a bad request, a wrong key, an unknown model). A 429 is retried after the
server's ``Retry-After`` (or ``retry-after-ms``) when that is longer than the backoff, as long as the waits of one
call stay within :data:`RETRY_WAIT_MAX_S`; a server asking for more makes the call fail at once (the caller
degrades) instead of holding the turn.

Structured output from OpenAI chat models (``openai/`` and ``compatible/``) is requested in strict mode with a schema
that meets OpenAI's strict structured-output rules (:func:`strict_json_schema`), for ``json_schema`` and
``function_calling`` alike; the answer is validated into the project's pydantic schema here.

No model is shown a secret: both functions send the messages through ``redaction.redact_value`` first (message
text, tool-call arguments; ids kept), whoever built them (extractor, judge, chat responder, code agent).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from langchain_core.exceptions import ModelRefusalError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import BaseGenerationOutputParser, BaseOutputParser
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import Runnable, RunnableSequence
from langchain_core.tools import BaseTool
from langchain_core.utils.json_schema import dereference_refs
from langgraph.constants import TAG_NOSTREAM
from pydantic import BaseModel

from z0_memory.errors import Z0Error
from z0_memory.redaction import redact_value
from z0_memory.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
BACKOFF_S = 0.2
RETRY_WAIT_MAX_S = 10.0  # the most one call waits in total between its attempts (backoff and Retry-After)
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx
ERROR_CHARS = 300  # of a provider's error text kept in a ModelCallError


class ModelCallError(Z0Error, RuntimeError):
    """A model call failed after its retries (or at once, when retrying cannot help: a refusal, a 4xx)."""


def http_status(exc: BaseException) -> int | None:
    """The HTTP status of a provider error (openai's ``APIStatusError``, httpx's ``HTTPStatusError``), if any."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms``, else ``Retry-After`` in seconds or as an HTTP date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = parsedate_to_datetime(value)
            return max(0.0, (when - datetime.now(when.tzinfo or UTC)).total_seconds())
    except (TypeError, ValueError, OverflowError):
        return None


def _refused(exc: BaseException) -> bool:
    return isinstance(exc, ModelRefusalError)


def retryable(exc: BaseException) -> bool:
    """Whether asking again can help: not for a refusal, nor for a 4xx other than 408, 409 and 429."""
    if _refused(exc):
        return False
    status = http_status(exc)
    return status is None or status >= 500 or status in RETRYABLE_STATUS


def _timed_out(exc: BaseException | None) -> bool:
    """Our own timeout, or the client's (``openai.APITimeoutError``, httpx's ``TimeoutException``, LangChain's
    ``ModelTimeoutError``): whichever fires first, the call timed out."""
    return exc is not None and any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _describe(exc: BaseException | None) -> str:
    if isinstance(exc, asyncio.TimeoutError) or _timed_out(exc):
        return "timed out"
    if exc is not None and _refused(exc):
        return f"was refused by the model: {str(exc)[:ERROR_CHARS]}"
    status = http_status(exc) if exc is not None else None
    prefix = f"HTTP {status} " if status is not None else ""
    return f"failed: {prefix}{type(exc).__name__}: {str(exc)[:ERROR_CHARS]}"


async def call_with_retries(call: Callable[[], Awaitable[R]], settings: Settings, what: str) -> R:
    """``await call()`` under the settings' timeout, retried as the module docstring says; ModelCallError at last."""
    attempts = int(settings.model_retries) + 1
    last: BaseException | None = None
    waited = 0.0
    note = ""
    attempt = 0
    for attempt in range(attempts):
        try:
            async with asyncio.timeout(float(settings.model_timeout_s)):  # unlike wait_for, no extra task per call
                return await call()
        except Exception as exc:  # noqa: BLE001 - provider SDKs raise their own hierarchy (HTTP, network, parsing)
            last = exc
        log.warning("%s failed (attempt %d/%d): %s", what, attempt + 1, attempts, _describe(last))
        if attempt + 1 >= attempts:
            break
        if not retryable(last):
            note = " (not retried: asking again cannot help)"
            break
        delay = BACKOFF_S * (2**attempt)
        asked = retry_after(last)
        if asked is not None and asked > delay:
            delay = asked
        if waited + delay > RETRY_WAIT_MAX_S:
            note = (f" (not retried: the server asked to wait {asked:g} s, beyond the {RETRY_WAIT_MAX_S:g} s this call "
                    "may wait)" if asked is not None else "")
            break
        await asyncio.sleep(delay)
        waited += delay
    raise ModelCallError(f"{what} {_describe(last)} after {attempt + 1} attempt(s){note}") from last


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema as OpenAI's strict structured outputs accept it.

    References are inlined; every object gets ``additionalProperties: false`` and lists every property in
    ``required`` (optional fields stay nullable: ``anyOf [..., null]``); ``default`` and ``title`` are dropped (strict
    mode rejects ``default``: the model must give every field, and pydantic fills nothing in). The root keeps the
    model's name as ``title`` (the schema's name on the wire) and its description.
    """
    raw = dereference_refs(model.model_json_schema())
    raw.pop("$defs", None)
    out = _strict(raw)
    out["title"] = model.__name__
    if model.__doc__ and "description" not in out:
        out["description"] = model.__doc__.strip()
    return out


_DROPPED = frozenset({"default", "title", "$defs", "definitions"})


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties" and isinstance(value, dict):  # property names are data, not keywords
            out[key] = {name: _strict(prop) for name, prop in value.items()}
        else:
            out[key] = _strict(value)
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
        out.setdefault("properties", {})
    return out


def _is_openai(model: BaseChatModel) -> bool:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return False
    return isinstance(model, BaseChatOpenAI)


def structured_runnable(model: BaseChatModel, schema: type[BaseModel], method: str) -> Runnable:
    """``model.with_structured_output`` for ``schema``: strict and with :func:`strict_json_schema` for OpenAI chat
    models (``json_schema`` and ``function_calling``; ``json_mode`` has no schema), as given for any other model."""
    if method != "json_mode" and _is_openai(model):
        return model.with_structured_output(strict_json_schema(schema), method=method, strict=True)
    return model.with_structured_output(schema, method=method)


# A structured call (the judge's verdict, the extractor's candidates) is the graph's own work, read from its state
# channels: tagged so that LangGraph's ``stream_mode="messages"`` leaves its JSON out of the user's token stream,
# which carries the replies (chat responder, code agent) only.
INTERNAL_CALL = {"tags": [TAG_NOSTREAM]}


async def _ainvoke_parsing_inline(runnable: Runnable, messages: Sequence[BaseMessage]) -> Any:
    """``runnable.ainvoke(messages)``, with a structured-output sequence's parsing steps run inline.

    ``with_structured_output`` returns ``model | parser`` (OpenAI: ``model | refusal check | parser``). Awaited as a
    sequence, LangChain runs each sync parser through ``run_in_executor``: a thread hop per step (two per judge
    call), which costs milliseconds on a busy machine, for microseconds of parsing. Here the model step is awaited
    and the parsing steps, pure CPU, run in place: the same model call (and its callbacks: token usage, tracing)
    and the same parsers. A LangChain output parser is asked for ``parse_result`` directly, which is all its
    ``invoke`` does with a message besides reporting a "parser" run to the callbacks.
    """
    if not isinstance(runnable, RunnableSequence):
        return await runnable.ainvoke(messages, INTERNAL_CALL)
    value = await runnable.first.ainvoke(messages, INTERNAL_CALL)
    if isinstance(value, AIMessage):
        check_complete(value)
    for step in runnable.steps[1:]:
        if isinstance(value, BaseMessage) and type(step).invoke in _PARSER_INVOKES:
            value = step.parse_result([ChatGeneration(message=value)])
        else:
            value = step.invoke(value)
    return value


def check_complete(message: AIMessage) -> None:
    """Raise when an OpenAI answer ended before its ``finish_reason``: a stream cut off (the connection closed
    without the last chunk and ``[DONE]``). The SDK returns what arrived so far without an error, which would make
    a partial reply look like a whole one."""
    meta = message.response_metadata or {}
    # Chat Completions end with a finish_reason; the Responses API (``use_responses_api``) with a status instead
    if meta.get("model_provider") == "openai" and not meta.get("finish_reason") and not meta.get("status"):
        raise ValueError("the model's response ended before its finish_reason (a truncated stream)")


_PARSER_INVOKES = (BaseOutputParser.invoke, BaseGenerationOutputParser.invoke)


async def invoke_structured(model: BaseChatModel, schema: type[T], messages: Sequence[BaseMessage], settings: Settings,
                            *, what: str, runnable: Runnable | None = None) -> T:
    """Ask ``model`` for an instance of ``schema``; raise ModelCallError when it cannot deliver one.

    ``runnable``: the model's structured-output runnable when the caller keeps one (``Providers.structured``).
    The call is tagged :data:`INTERNAL_CALL`: it never reaches a ``stream_mode="messages"`` consumer.
    """
    runnable = runnable or structured_runnable(model, schema, settings.structured_output_method)
    messages = redact_value(list(messages))  # before any model sees them

    async def call() -> T:
        out = await _ainvoke_parsing_inline(runnable, messages)
        if isinstance(out, schema):
            return out
        if isinstance(out, dict):
            return schema.model_validate(out)
        if out is None:  # no tool call (function calling) or no content: nothing to validate
            raise ValueError(f"the model returned no {schema.__name__} (an empty tool call or empty content)")
        raise TypeError(f"expected {schema.__name__}, got {type(out).__name__}")

    return await call_with_retries(call, settings, what)


async def invoke_messages(model: BaseChatModel, messages: Sequence[BaseMessage], settings: Settings, *, what: str,
                          tools: Sequence[BaseTool] | None = None) -> AIMessage:
    """A plain chat call (optionally with tools bound)."""
    runnable = model.bind_tools(tools) if tools else model
    messages = redact_value(list(messages))  # before any model sees them

    async def call() -> AIMessage:
        out = await runnable.ainvoke(messages)
        if not isinstance(out, AIMessage):
            raise TypeError(f"expected an AIMessage, got {type(out).__name__}")
        check_complete(out)
        return out

    return await call_with_retries(call, settings, what)
