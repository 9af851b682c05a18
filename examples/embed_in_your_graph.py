"""Embed z0-memory in your own LangGraph graph: the retrieval loop as a subgraph, extraction as a post-turn node.

Your graph keeps its own responder (here a tiny deterministic one; in real life your LLM call). Around it:

    START -> ask_memory -> recall (z0's retrieval graph, a subgraph) -> my_responder -> extract (z0's node) -> END

* ``recall`` is ``z0_memory.graphs.retrieval.builder`` compiled and added as a node: it reads ``question`` from your
  state and writes ``memories`` (cited evidence), ``verdict``, ``trace`` (every round) and ``stop_reason``;
* ``extract`` is ``z0_memory.nodes.extraction.extract``: it reads the turns of ``messages`` not extracted yet (after a
  live turn, that turn) and writes what
  it remembered (or held as pending) to ``extraction``.

Both reach memory through ``runtime.store``: compile with ``store=memory.store(project)``. Run it on the embedded
defaults (no key, no server to install), or point it at your Postgres with ``DATABASE_URL``:

    python examples/embed_in_your_graph.py
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from z0_memory.config import Context
from z0_memory.graphs.retrieval import builder as retrieval_builder
from z0_memory.memory import Z0Memory
from z0_memory.nodes.extraction import extract
from z0_memory.schemas import Hit, RoundTrace, Verdict, WriteOutcome

PROJECT = "embed-example"
SESSION_1 = ["For the backend we'll use Hono, not Express", "We'll use Supabase Postgres as the database"]
SESSION_2 = "Write the users API endpoint and its database schema"


class MyState(TypedDict, total=False):
    """Your graph's state: your messages, plus the channels z0's subgraph and node read and write."""

    messages: Annotated[list[AnyMessage], add_messages]
    question: str  # the retrieval subgraph's input
    memories: list[Hit]  # its outputs
    verdict: Verdict | None
    trace: list[RoundTrace]
    stop_reason: str
    extraction: list[WriteOutcome]  # what the extraction node did with this turn


def ask_memory(state: MyState) -> dict[str, Any]:
    """Your glue: the user's latest message is what the retrieval loop looks up."""
    last = next(m for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
    return {"question": str(last.content)}


def my_responder(state: MyState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Your own responder: builds on settled decisions instead of asking about them again."""
    settled = [h for h in state.get("memories", []) if h.key and not h.superseded]
    request = state["question"]
    if request.lower().startswith(("write", "build", "implement", "add")) and settled:
        uses = ", ".join(f"{h.metadata.get('value', h.content)} ({h.category})" for h in settled)
        return {"messages": [AIMessage(f"On it, building on what the project settled: {uses}.")]}
    if request.lower().startswith(("write", "build", "implement", "add")):
        return {"messages": [AIMessage("Which backend framework and database should I use?")]}
    return {"messages": [AIMessage("Noted.")]}


def build_graph() -> StateGraph:
    builder = StateGraph(MyState, context_schema=Context)
    builder.add_node("ask_memory", ask_memory)
    builder.add_node("recall", retrieval_builder.compile(name="recall"))  # z0's retrieval loop as a subgraph
    builder.add_node("my_responder", my_responder)
    builder.add_node("extract", extract)  # z0's post-turn extraction node
    builder.add_edge(START, "ask_memory")
    builder.add_edge("ask_memory", "recall")
    builder.add_edge("recall", "my_responder")
    builder.add_edge("my_responder", "extract")
    builder.add_edge("extract", END)
    return builder


def report(out: dict[str, Any]) -> None:
    print(f"  user:      {out['messages'][-2].content}")
    for t in out.get("trace", []):
        verdict = "sufficient" if t.verdict else "insufficient"
        print(f"  recall:    round {t.round} {'+'.join(t.strategies)} {t.query!r} -> {len(t.hits)} hit(s), {verdict}")
    print(f"  assistant: {out['messages'][-1].content}")
    for o in out.get("extraction", []):
        print(f"  memory:    {o.action} {o.target} {o.content!r}")


async def main() -> None:
    ctx = Context(project=PROJECT)  # the run's settings; the process's come from the environment:
    async with Z0Memory() as memory:  # embedded Postgres unless DATABASE_URL is set; offline models without a key
        graph = build_graph().compile(store=memory.store(PROJECT), checkpointer=memory.checkpointer(PROJECT))
        session_1 = {"configurable": {"thread_id": f"example-{uuid.uuid4().hex[:8]}"}}
        print(f"session 1 (thread {session_1['configurable']['thread_id']}, project {PROJECT}):")
        for text in SESSION_1:
            report(await graph.ainvoke({"messages": [HumanMessage(text)]}, session_1, context=ctx))
        session_2 = {"configurable": {"thread_id": f"example-{uuid.uuid4().hex[:8]}"}}
        print(f"session 2 (a new thread {session_2['configurable']['thread_id']}, same project):")
        report(await graph.ainvoke({"messages": [HumanMessage(SESSION_2)]}, session_2, context=ctx))
        facts = await memory.scope(PROJECT).facts.list()
        print("settled facts: " + "; ".join(f"{f.key} = {f.value}" for f in facts))


if __name__ == "__main__":
    asyncio.run(main())
