"""What every node needs from its runtime: the call's context and the memory behind ``runtime.store``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory, Z0Memory


def context_of(runtime: Any) -> Context:
    """The call's Context (a dict from the API server is validated into one); defaults when none was given."""
    ctx = getattr(runtime, "context", None)
    if ctx is None:
        return Context()
    if isinstance(ctx, dict):
        return Context(**ctx)
    return ctx


def memory_of(runtime: Any) -> Z0Memory:
    """The Z0Memory behind the graph's store, with a clear error when the graph was compiled without one."""
    from z0_memory.stores.langgraph_store import Z0Store

    store = getattr(runtime, "store", None)
    if isinstance(store, Z0Store):
        return store.memory
    raise ConfigurationError(
        "this graph needs z0-memory's store: compile it with store=memory.store() "
        "(or serve it with the langgraph.json of z0-memory, which configures the store)"
    )


def scope_of(runtime: Any) -> tuple[Context, Z0Memory, ProjectMemory]:
    ctx = context_of(runtime)
    memory = memory_of(runtime)
    return ctx, memory, memory.scope(ctx.project, ctx.user_id)
