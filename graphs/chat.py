"""Chat mode: rules -> question -> retrieval loop (subgraph, at most 3 rounds) -> respond -> extraction.

Relevant memory is injected automatically as a cited, delimited block; the thread's history stays in context,
trimmed to ``history_tokens``. Compile with ``store=memory.store(project)``,
``checkpointer=memory.checkpointer(project)``; a thread is a session.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from z0_memory.config import Context
from z0_memory.graphs.retrieval import build_retrieval_graph
from z0_memory.nodes.chat import take_question
from z0_memory.nodes.extraction import extract
from z0_memory.nodes.respond import respond
from z0_memory.nodes.rules import load_rules
from z0_memory.state import ChatState


def build_chat_graph() -> StateGraph[ChatState, Context, ChatState, ChatState]:
    builder = StateGraph(ChatState, context_schema=Context)
    builder.add_node("load_rules", load_rules)
    builder.add_node("take_question", take_question)
    builder.add_node("recall", build_retrieval_graph().compile(name="recall"))
    builder.add_node("respond", respond)
    builder.add_node("extract", extract)
    builder.add_edge(START, "load_rules")
    builder.add_edge("load_rules", "take_question")
    builder.add_edge("take_question", "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "extract")
    builder.add_edge("extract", END)
    return builder


builder = build_chat_graph()
graph = builder.compile(name="z0-chat")
