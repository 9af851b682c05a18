"""z0-memory for LangChain 1.x agents: ``Z0MemoryMiddleware`` for ``langchain.agents.create_agent``.

    from langchain.agents import create_agent
    from z0_memory import Context, Z0MemoryMiddleware

    agent = create_agent(model, tools=[...], middleware=[Z0MemoryMiddleware(memory, mode="chat")],
                         checkpointer=memory.checkpointer("acme"))
    await agent.ainvoke({"messages": [("user", "...")]}, {"configurable": {"thread_id": "t1"}},
                        context=Context(project="acme"))

* ``mode="chat"``: before the agent runs, the retrieval loop (at most 3 rounds) searches memory for the user's latest
  message; the recalled memories (``memories`` in the agent's state) are appended to the system prompt of every
  model call of that turn as the same delimited, escaped ``<memory>`` block the chat graph injects.
* ``mode="code"``: nothing is injected; the middleware adds two tools, ``recall_memory`` (the loop, at most 5
  rounds) and ``search_session`` (this thread's earlier turns).
* Both: after the agent, the extraction node runs on the turn (same gate, same thresholds, the run's thread id as
  provenance); its outcome is the ``extraction`` channel of the agent's state.

The project (and user) come from the run's context (``context=Context(project=...)``, or any context object or dict
with a ``project`` field), or from the middleware's ``project=`` argument; never from the model, whose tools only
take a ``query``. With neither, the run fails naming ``context=Context(project=...)``. Requires ``langchain>=1``
(``pip install "z0-memory[agents]"``).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import OmitFromInput
from langchain_core.messages import SystemMessage
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime

from z0_memory.config import NO_PROJECT, Context
from z0_memory.errors import ConfigurationError
from z0_memory.memory import Z0Memory
from z0_memory.nodes.common import RunScope
from z0_memory.nodes.respond import INJECTED_MEMORIES, last_request
from z0_memory.rendering import memory_block
from z0_memory.schemas import Hit, WriteOutcome
from z0_memory.session_tools import search_session
from z0_memory.tools import recall_memory, round_summary, run_recall

if TYPE_CHECKING:
    from z0_memory.stores.langgraph_store import Z0Store

QUESTION_MAX_CHARS = 4000


async def recall_in_scope(memory: Z0Memory, query: str, ctx: Context) -> dict[str, Any]:
    """The retrieval loop on the context's scope, as a run of its own.

    Inside an agent's node a nested graph inherits the agent's store and checkpointer (the agent may have neither,
    or another store); clearing the parent config makes the loop run on z0-memory's store and write no checkpoints
    into the agent's thread.
    """
    isolated = contextvars.copy_context()
    isolated.run(var_child_runnable_config.set, None)
    store = memory.store(ctx.project, ctx.user_id)
    return await asyncio.create_task(run_recall(query, store, ctx), context=isolated)


class Z0MemoryState(AgentState):
    """The agent's state plus what the middleware recalled (chat mode) and what extraction did with the turn."""

    memories: NotRequired[Annotated[list[Hit], OmitFromInput]]
    extraction: NotRequired[Annotated[list[WriteOutcome], OmitFromInput]]


def _field(context: Any, name: str) -> Any:
    if isinstance(context, dict):
        return context.get(name)
    return getattr(context, name, None)


class Z0MemoryMiddleware(AgentMiddleware[Z0MemoryState, Any]):
    """Layered memory for a ``create_agent`` agent (see the module docstring)."""

    state_schema = Z0MemoryState

    def __init__(self, memory: Z0Memory, mode: Literal["chat", "code"] = "chat", *, project: str | None = None,
                 user_id: str | None = None) -> None:
        super().__init__()
        if mode not in ("chat", "code"):
            raise ConfigurationError(f"Z0MemoryMiddleware mode must be 'chat' or 'code', got {mode!r}")
        if not isinstance(memory, Z0Memory):
            raise ConfigurationError("Z0MemoryMiddleware needs an open Z0Memory: `async with Z0Memory(...) as memory`")
        self.memory = memory
        self.mode = mode
        self.project = project
        self.user_id = user_id
        self.tools: list[BaseTool] = [self._recall_tool(), search_session] if mode == "code" else []

    # --- identity --------------------------------------------------------------------------------------------------

    def context_for(self, runtime: RunScope) -> Context:
        """The run's z0 Context: project/user from the run's context, else the middleware's; mode is the middleware's."""
        given = runtime.context
        project = _field(given, "project")
        if project is not None and self.project is not None and project != self.project:
            raise ConfigurationError(
                f"this Z0MemoryMiddleware is bound to project {self.project!r} but the run's context names "
                f"{project!r}: use one middleware (agent) per project, or leave project= unset")
        project = project if project is not None else self.project
        if project is None:
            raise ConfigurationError(NO_PROJECT)
        user_id = _field(given, "user_id")
        user_id = user_id if user_id is not None else (self.user_id or "")
        # the run's Context (its named fields, then Z0_*), else the operator's Z0_* run settings
        base = given.with_env() if isinstance(given, Context) else Context.from_env()
        if base.mode == self.mode:
            return base.replace(project=project, user_id=user_id)
        return base.replace(project=project, user_id=user_id, mode=self.mode)

    def _store(self, ctx: Context) -> Z0Store:
        return self.memory.store(ctx.project, ctx.user_id)

    # --- code mode: tools ------------------------------------------------------------------------------------------

    def _recall_tool(self) -> BaseTool:
        middleware = self

        @tool("recall_memory", description=recall_memory.description, response_format="content_and_artifact")
        async def recall(query: str, runtime: ToolRuntime[Any, Any]) -> tuple[str, list[Hit]]:
            ctx = middleware.context_for(runtime)
            out = await recall_in_scope(middleware.memory, query, ctx)
            hits = (out.get("memories") or [])[: int(ctx.top_k)]
            return f"{memory_block(hits)}\n{round_summary(out)}", hits

        return recall

    # --- chat mode: recall before the agent, inject into every model call of the turn -------------------------------

    async def abefore_agent(self, state: Z0MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        ctx = self.context_for(runtime)  # fail before the model runs when no project was given (both modes)
        if self.mode != "chat":
            return None
        question = last_request(state.get("messages", []))[:QUESTION_MAX_CHARS]
        if not question:
            return {"memories": []}
        out = await recall_in_scope(self.memory, question, ctx)
        return {"memories": (out.get("memories") or [])[: int(ctx.top_k)]}

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        hits = request.state.get("memories") if self.mode == "chat" else None
        if hits is None:
            return await handler(request)
        block = memory_block(list(hits), limit=INJECTED_MEMORIES)
        system = request.system_prompt
        text = f"{system}\n\n{block}" if system else block
        return await handler(request.override(system_message=SystemMessage(text)))

    # --- both: extraction after the agent ---------------------------------------------------------------------------

    async def aafter_agent(self, state: Z0MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        from z0_memory.nodes.extraction import extract

        ctx = self.context_for(runtime)
        # the extraction node itself (same gate, same provenance: it reads the thread id from the run's config)
        update = await extract({"messages": state["messages"]}, Runtime(context=ctx, store=self._store(ctx)))
        return {"extraction": update.get("extraction", [])}


__all__ = ["Z0MemoryMiddleware", "Z0MemoryState"]
