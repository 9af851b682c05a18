"""``Z0MemoryMiddleware`` in a real ``langchain.agents.create_agent`` agent, with a scripted tool-calling model.

Two threads each time: the first settles a decision (extraction after the agent), the second builds on it, by
injection (chat mode) or through the middleware's ``recall_memory`` tool (code mode).
"""

from __future__ import annotations

import pytest
from fakes import ScriptedChatModel, thread, tool_call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.middleware import Z0MemoryMiddleware
from z0_memory.rendering import BLOCK_OPEN

pytestmark = pytest.mark.asyncio(loop_scope="session")

DECISION = "For the backend we'll use Hono, not Express"
QUESTION = "Which backend framework do we use?"
KEY = "acme:stack:backend_framework"


def chat_agent(memory, model, **kwargs):
    return create_agent(model, tools=[], system_prompt="You help the acme team.", context_schema=Context,
                        middleware=[Z0MemoryMiddleware(memory, mode="chat", **kwargs)],
                        checkpointer=memory.checkpointer("acme"))


async def test_chat_mode_injects_what_an_earlier_thread_settled(memory):
    def answer(call):
        return "You use Hono." if "Hono" in call.system else "Noted."

    model = ScriptedChatModel([answer])
    agent = chat_agent(memory, model)
    ctx = Context(project="acme")

    first = await agent.ainvoke({"messages": [("user", DECISION)]}, thread(), context=ctx)
    assert [o.action for o in first["extraction"]] == ["fact_created"]
    fact = await memory.scope("acme").facts.get(KEY)
    assert fact.value == "Hono" and fact.provenance.thread_id  # written with the run's thread as provenance

    second_thread = thread()
    second = await agent.ainvoke({"messages": [("user", QUESTION)]}, second_thread, context=ctx)
    assert second["messages"][-1].content == "You use Hono."
    assert second["memories"][0].key == KEY
    last_call = model.calls[-1]
    assert last_call.system.startswith("You help the acme team.")  # the agent's own prompt is kept, block appended
    assert BLOCK_OPEN in last_call.system and "Hono" in last_call.system
    assert all(BLOCK_OPEN not in m.content for m in second["messages"])  # injected, never stored in the thread
    assert second["extraction"] == []  # a question settles nothing


async def test_code_mode_recalls_through_its_tools_across_threads(memory):
    def step(call):
        tool_results = [m for m in call.messages if isinstance(m, ToolMessage)]
        if call.request == QUESTION and not tool_results:
            return AIMessage("", tool_calls=[tool_call("recall_memory", query="backend framework")])
        if tool_results:
            return "From memory: Hono." if "Hono" in tool_results[-1].content else "Nothing settled."
        return "Noted."

    model = ScriptedChatModel([step])
    agent = create_agent(model, tools=[], context_schema=Context,
                         middleware=[Z0MemoryMiddleware(memory, mode="code")], checkpointer=memory.checkpointer("acme"))
    ctx = Context(project="acme")

    first = await agent.ainvoke({"messages": [("user", DECISION)]}, thread(), context=ctx)
    assert [o.action for o in first["extraction"]] == ["fact_created"]
    second = await agent.ainvoke({"messages": [("user", QUESTION)]}, thread(), context=ctx)
    assert second["messages"][-1].content == "From memory: Hono."
    tool_message = next(m for m in second["messages"] if isinstance(m, ToolMessage))
    assert tool_message.name == "recall_memory" and "Hono" in tool_message.content
    assert sorted(model.calls[-1].tools) == ["recall_memory", "search_session"]
    assert all(BLOCK_OPEN not in c.system for c in model.calls)  # code mode injects nothing
    # the model only ever names a query: no project, no user, no store
    recall = next(t for t in Z0MemoryMiddleware(memory, mode="code").tools if t.name == "recall_memory")
    assert list(recall.tool_call_schema.model_json_schema()["properties"]) == ["query"]

    # the same agent run for another project finds nothing of acme's
    other = await agent.ainvoke({"messages": [("user", QUESTION)]}, thread(), context=Context(project="other"))
    assert other["messages"][-1].content == "Nothing settled."


async def test_project_from_the_middleware_argument_or_a_plain_dict_context(memory):
    await memory.scope("acme").facts.put(KEY, "Hono")
    model = ScriptedChatModel([lambda call: "Hono it is." if "Hono" in call.system else "No idea."])
    bound = create_agent(model, tools=[], middleware=[Z0MemoryMiddleware(memory, project="acme")])
    out = await bound.ainvoke({"messages": [("user", QUESTION)]})
    assert out["messages"][-1].content == "Hono it is."
    unbound = create_agent(model, tools=[], middleware=[Z0MemoryMiddleware(memory)])
    out = await unbound.ainvoke({"messages": [("user", QUESTION)]}, context={"project": "acme"})
    assert out["messages"][-1].content == "Hono it is."
    with pytest.raises(ConfigurationError, match="bound to project 'acme'"):
        await bound.ainvoke({"messages": [("user", QUESTION)]}, context={"project": "other"})


@pytest.mark.parametrize("mode", ["chat", "code"])
async def test_no_project_anywhere_names_the_fix(memory, mode, monkeypatch):
    monkeypatch.delenv("Z0_PROJECT", raising=False)
    model = ScriptedChatModel(["never called"])
    agent = create_agent(model, tools=[], middleware=[Z0MemoryMiddleware(memory, mode=mode)])
    with pytest.raises(ConfigurationError, match=r"context=Context\(project="):
        await agent.ainvoke({"messages": [("user", DECISION)]})
    assert model.calls == [] and await memory.scope("default").facts.list() == []


async def test_code_mode_search_session_reads_this_thread(memory):
    def step(call):
        results = [m for m in call.messages if isinstance(m, ToolMessage)]
        if call.request.startswith("What did I say") and not results:
            return AIMessage("", tool_calls=[tool_call("search_session", query="backend")])
        return f"Earlier: {results[-1].content}" if results else "Noted."

    agent = create_agent(ScriptedChatModel([step]), tools=[], context_schema=Context,
                         middleware=[Z0MemoryMiddleware(memory, mode="code")], checkpointer=memory.checkpointer("acme"))
    config, ctx = thread(), Context(project="acme")
    await agent.ainvoke({"messages": [("user", DECISION)]}, config, context=ctx)
    out = await agent.ainvoke({"messages": [("user", "What did I say about the backend?")]}, config, context=ctx)
    answer = out["messages"][-1].content
    assert answer.startswith("Earlier: <session>") and "turn 1 (user): For the backend we'll use Hono" in answer
