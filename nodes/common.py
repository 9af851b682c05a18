"""What every node needs from its runtime: the call's context and the memory behind ``runtime.store``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from langgraph.store.base import BaseStore

from z0_memory.config import NO_PROJECT, Context
from z0_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory, Z0Memory
    from z0_memory.stores.langgraph_store import Z0Store


class RunScope(Protocol):
    """What the helpers below read from a run: LangGraph's ``Runtime`` (nodes, middleware hooks) and ``ToolRuntime``
    (tools) both carry it. ``context`` is whatever the run was given (a Context, a dict from the API, or nothing)."""

    @property
    def context(self) -> object: ...

    @property
    def store(self) -> BaseStore | None: ...


def context_of(runtime: RunScope) -> Context:
    """The call's Context: what the run's context names, then the operator's ``Z0_*`` run settings, then the defaults
    (a dict is validated into one; LangGraph builds an API run's JSON context as ``Context(**json)``).

    The project is never defaulted: a run with no context, or a context without a project (and no Z0_PROJECT),
    raises a ConfigurationError naming ``context=Context(project=...)``, instead of writing to a project nobody chose.
    """
    ctx = runtime.context
    if ctx is None:
        ctx = Context.from_env()
    elif isinstance(ctx, dict):
        ctx = Context.from_env(**ctx)
    elif isinstance(ctx, Context):
        ctx = ctx.with_env()
    else:
        raise ConfigurationError(f"the run's context must be a z0_memory Context, got {type(ctx).__name__}; "
                                 "pass context=Context(project=...)")
    if ctx.project is None:
        raise ConfigurationError(NO_PROJECT)
    return ctx


def z0_store(store: BaseStore | None) -> Z0Store:
    """``store`` as z0-memory's store, with a clear error when a graph was compiled with another one (or none)."""
    from z0_memory.stores.langgraph_store import Z0Store

    if isinstance(store, Z0Store):
        return store
    raise ConfigurationError(
        "this graph needs z0-memory's store: compile it with store=memory.store(project) "
        "(or serve it with the langgraph.json of z0-memory, which configures the store)"
    )


def memory_of(runtime: RunScope) -> Z0Memory:
    """The Z0Memory behind the graph's store, with a clear error when the graph was compiled without one."""
    return z0_store(runtime.store).memory


def scope_of(runtime: RunScope) -> tuple[Context, Z0Memory, ProjectMemory]:
    """The run's context, the memory, and the stores of the run's scope.

    A store bound to a scope (``memory.store(project)``) only serves runs in that scope: a run whose context names
    another project or user is refused, never served from the store's project.
    """
    ctx = context_of(runtime)
    store = z0_store(runtime.store)
    bound = store.scope
    if bound is not None and (ctx.project, ctx.user_id) != (bound.project, bound.user_id):
        raise ConfigurationError(
            f"this graph's store is bound to project {bound.project!r} (user {bound.user_id!r}) but the run's context "
            f"names project {ctx.project!r} (user {ctx.user_id!r}): compile the graph with "
            "store=memory.store(project=..., user_id=...) for that scope"
        )
    return ctx, store.memory, store.memory.scope(ctx.project, ctx.user_id, pending_ttl_days=ctx.pending_ttl_days)
