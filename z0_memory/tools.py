"""LangChain tools that agents call to reach z0-memory.

``recall_memory`` runs the adversarial retrieval loop (``z0_memory.graphs.retrieval``) on the agent's query and
returns the delimited memory block the loop found, plus one line saying how the search went. The store and the
project are injected (``ToolRuntime``): the model only ever sees the ``query`` argument, so it cannot read another
project's memory by naming it. Put it in a ``ToolNode`` (or ``create_agent``) of a graph compiled with
``store=memory.store(project)`` and run it with ``context=Context(project=..., mode="code")``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from z0_memory.config import Context
from z0_memory.nodes.common import context_of, z0_store
from z0_memory.rendering import memory_block
from z0_memory.schemas import Hit


def round_summary(out: dict[str, Any]) -> str:
    """One line: how many rounds ran, why the loop stopped, the queries it ran and the judge's last word."""
    trace = out.get("trace") or []
    verdict = out.get("verdict")
    queries = " | ".join(t.query for t in trace)
    stop = out.get("stop_reason") or "unknown"
    judged = "sufficient" if verdict is not None and verdict.sufficient else "insufficient"
    errors = sum(1 for t in trace if t.error)
    line = f"Memory search: {len(trace)} round(s), stopped: {stop}, judge: {judged}; queries: {queries}"
    if errors:
        line += f"; judge errors in {errors} round(s) (offline judge used)"
    if verdict is not None and not verdict.sufficient and verdict.missing:
        line += f"; still missing: {verdict.missing}"
    return " ".join(line.split())


async def run_recall(query: str, store: BaseStore | None, ctx: Context) -> dict[str, Any]:
    """Run the retrieval loop once on z0-memory's ``store`` (any other store: a ConfigurationError saying so); the
    graph's output state."""
    from z0_memory.graphs.retrieval import builder

    graph = builder.compile(store=z0_store(store))
    return await graph.ainvoke({"question": query, "max_rounds": int(ctx.max_rounds)}, context=ctx)


@tool(response_format="content_and_artifact")
async def recall_memory(query: str, runtime: ToolRuntime[Context]) -> tuple[str, list[Hit]]:
    """Search this project's long-term memory (settled facts, decisions, preferences, earlier context).

    Use it before asking the user something an earlier session may have settled, or when the task depends on
    a past decision. Ask a specific question, e.g. "which backend framework did we choose and why?".
    """
    ctx = context_of(runtime)
    out = await run_recall(query, runtime.store, ctx)
    hits = (out.get("memories") or [])[: int(ctx.top_k)]
    # The model reads the block; the hits themselves ride along as the ToolMessage's artifact (for code, not the model).
    return f"{memory_block(hits)}\n{round_summary(out)}", hits
