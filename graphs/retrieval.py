"""The retrieval loop graph: route -> retrieve -> evaluate --sufficient / guard--> END, else rewrite -> retrieve.

``builder`` is the uncompiled graph (add it as a subgraph, or compile it yourself); ``graph`` is compiled without a
checkpointer or store so ``langgraph dev`` can serve it with the ones ``langgraph.json`` configures. In your own
process, compile with ``store=memory.store()``.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from z0_memory.nodes.retrieval import after_evaluate, evaluate, retrieve, rewrite, route
from z0_memory.config import Context
from z0_memory.state import RetrievalInput, RetrievalOutput, RetrievalState


def build_retrieval_graph() -> StateGraph:
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


builder = build_retrieval_graph()
graph = builder.compile(name="z0-retrieval")
