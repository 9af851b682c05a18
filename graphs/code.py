"""Code mode: rules -> agent <-> tools (recall_memory: the loop, up to 5 rounds; search_session) -> extraction.

Nothing is injected: the agent sees the rules, the current request and this turn's tool exchanges, and fetches
memory or earlier turns when it decides to. Compile with ``store=memory.store(project)``,
``checkpointer=memory.checkpointer(project)``
and run with ``context=Context(project=..., mode="code")``.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode

from z0_memory.config import Context
from z0_memory.nodes.agent import TOOLS, agent, route_after_agent
from z0_memory.nodes.extraction import extract
from z0_memory.nodes.rules import load_rules
from z0_memory.state import CodeState


def build_code_graph() -> StateGraph[CodeState, Context, CodeState, CodeState]:
    builder = StateGraph(CodeState, context_schema=Context)
    builder.add_node("load_rules", load_rules)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_node("extract", extract)
    builder.add_edge(START, "load_rules")
    builder.add_edge("load_rules", "agent")
    builder.add_conditional_edges("agent", route_after_agent, {"tools": "tools", "extract": "extract"})
    builder.add_edge("tools", "agent")
    builder.add_edge("extract", END)
    return builder


builder = build_code_graph()
graph = builder.compile(name="z0-code")
