"""The retrieval loop graph: route -> retrieve -> evaluate --sufficient / guard--> END, else rewrite -> retrieve.

``builder`` is the uncompiled graph (add it as a subgraph, or compile it yourself); ``graph`` is compiled without a
checkpointer or store so ``langgraph dev`` can serve it with the ones ``langgraph.json`` configures. In your own
process, compile with ``store=memory.store(project)``.

In a parent graph, ``retrieval_subgraph(State)`` checks that ``State`` has the channels the loop reads and writes
(inherit :class:`z0_memory.state.RetrievalChannels`; with ``MessagesState`` the latest human message is the question)
and returns the compiled subgraph to add as a node: a missing channel is an error naming it, never results that
LangGraph drops because the parent has nowhere to put them.
"""

from __future__ import annotations

from typing import Any, get_type_hints

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from z0_memory.nodes.retrieval import after_evaluate, evaluate, retrieve, rewrite, route
from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.state import RetrievalInput, RetrievalOutput, RetrievalState

MIXIN = "z0_memory.RetrievalChannels"


def build_retrieval_graph() -> StateGraph[RetrievalState, Context, RetrievalInput, RetrievalOutput]:
    builder = StateGraph(RetrievalState, context_schema=Context, input_schema=RetrievalInput,
                         output_schema=RetrievalOutput)
    builder.add_node("route", route)
    builder.add_node("retrieve", retrieve)
    builder.add_node("evaluate", evaluate)
    builder.add_node("rewrite", rewrite)
    builder.add_edge(START, "route")
    builder.add_edge("route", "retrieve")
    builder.add_edge("retrieve", "evaluate")
    builder.add_conditional_edges("evaluate", after_evaluate, {"done": END, "rewrite": "rewrite"})
    builder.add_edge("rewrite", "retrieve")
    return builder


def _channels(schema: type[Any]) -> set[str]:
    if hasattr(schema, "model_fields"):  # pydantic
        return set(schema.model_fields)
    try:
        return set(get_type_hints(schema, include_extras=True))
    except Exception:  # noqa: BLE001  (unresolvable forward references: fall back to the raw annotations)
        names: set[str] = set()
        for cls in getattr(schema, "__mro__", (schema,)):
            names |= set(getattr(cls, "__annotations__", {}))
        return names


def check_parent_state(schema: type[Any]) -> None:
    """Raise a ConfigurationError naming what ``schema`` lacks to host the retrieval loop as a subgraph."""
    channels = _channels(schema)
    name = getattr(schema, "__name__", str(schema))
    if not channels & {"question", "messages"}:
        raise ConfigurationError(
            f"{name} has neither a 'question' nor a 'messages' channel for the retrieval loop to read: add one "
            f"(inherit {MIXIN}, or MessagesState to search by the latest human message)")
    missing = [c for c in ("memories", "verdict", "trace", "stop_reason") if c not in channels]
    if "memories" in missing:
        raise ConfigurationError(
            f"{name} has no 'memories' channel, so the retrieval loop's hits would be dropped: add it "
            f"(inherit {MIXIN}, which also adds {', '.join(repr(c) for c in missing if c != 'memories')})")


def retrieval_subgraph(parent_state: type[Any], *, name: str = "recall"
                       ) -> CompiledStateGraph[RetrievalState, Context, RetrievalInput, RetrievalOutput]:
    """The retrieval loop compiled as a node of a graph whose state is ``parent_state`` (checked first)."""
    check_parent_state(parent_state)
    return build_retrieval_graph().compile(name=name)


builder = build_retrieval_graph()
graph = builder.compile(name="z0-retrieval")
