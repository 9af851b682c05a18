"""The extraction graph: one post-turn node, runnable on its own (give it ``messages``: one turn or a whole
conversation, whose user turns are extracted in order) or after any agent.

To use the node in your own graph, add ``z0_memory.nodes.extraction.extract`` after your agent node; it reads
``messages`` (only the turns this scope has not extracted yet, by message id) and writes the ``extraction`` channel
(what it did with each candidate). Give messages ids to re-run it idempotently: LangGraph gives an id-less message
a random one.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from z0_memory.config import Context
from z0_memory.nodes.extraction import extract
from z0_memory.state import ExtractionState


def build_extraction_graph() -> StateGraph[ExtractionState, Context, ExtractionState, ExtractionState]:
    builder = StateGraph(ExtractionState, context_schema=Context)
    builder.add_node("extract", extract)
    builder.add_edge(START, "extract")
    builder.add_edge("extract", END)
    return builder


builder = build_extraction_graph()
graph = builder.compile(name="z0-extraction")
