"""The MCP tools in a LangGraph agent through ``langchain-mcp-adapters``: the agent recalls instead of asking.

The server is the real ``z0-memory mcp`` subprocess over stdio; the agent is LangChain's ``create_agent`` with a
scripted tool-calling model whose policy is the behaviour we want from a coding agent: ask memory first, answer from
its evidence, and only ask the user when memory has nothing. In the project where the decision was recorded the
agent answers from memory; in another project the same agent has to ask.
"""

from __future__ import annotations

import sys

import pytest
from fakes import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp_support import REPO, TOOLS, call, mcp_env, server_args, stdio_session  # noqa: F401

from z0_memory.tokens import message_text

pytestmark = pytest.mark.asyncio(loop_scope="session")

QUESTION = "which backend framework did we choose and why?"


def recall_first(call_):
    """Ask memory first; answer from its evidence; ask the user only when memory has nothing."""
    results = call_.tool_results("recall")
    if not results:
        return AIMessage("", tool_calls=[tool_call("recall", query=QUESTION)])
    if "Hono" in results[-1]:
        return AIMessage("The backend uses Hono [1] (it runs on the edge); adding /health to the Hono app.")
    return AIMessage("Which backend framework should the /health endpoint use?")


async def run_agent(env, project: str):
    client = MultiServerMCPClient({"z0": {"transport": "stdio", "command": sys.executable,
                                          "args": server_args("--project", project), "env": env, "cwd": str(REPO)}})
    async with client.session("z0") as session:
        tools = await load_mcp_tools(session)
        assert {t.name for t in tools} == TOOLS
        model = ScriptedChatModel([recall_first])
        agent = create_agent(model, tools)
        out = await agent.ainvoke({"messages": [("user", "Add a /health endpoint to the backend.")]})
    return model, out["messages"]


async def test_a_langgraph_agent_recalls_through_the_mcp_tools_instead_of_asking(mcp_env):
    async with stdio_session(mcp_env, "--project", "acme") as session:  # an earlier session settled it
        await call(session, "remember", text="We decided to use Hono for the backend framework because it runs on "
                                              "the edge.")

    model, messages = await run_agent(mcp_env, "acme")
    assert "recall" in model.calls[0].tools and "remember" in model.calls[0].tools
    recalled = [message_text(m) for m in messages if isinstance(m, ToolMessage) and m.name == "recall"]
    assert len(recalled) == 1 and "Hono" in recalled[0] and "<memory>" in recalled[0]
    assert "project acme" in recalled[0]
    answer = message_text(messages[-1])
    assert "Hono" in answer and "?" not in answer

    _, elsewhere = await run_agent(mcp_env, "beta")  # the same agent where nothing was decided: it must ask
    assert "Hono" not in " ".join(message_text(m) for m in elsewhere)
    assert message_text(elsewhere[-1]).endswith("?")
