"""langmem's memory tools, unchanged, on ``Z0Store``: they write and search ``("memories", "{langgraph_user_id}")``
namespaces with ``{"content": ...}`` values (before, such namespaces and values were refused)."""

from __future__ import annotations

import json
import re

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langmem import create_manage_memory_tool, create_search_memory_tool
from pydantic import BaseModel

from fakes import ScriptedChatModel, tool_call

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAMESPACE = ("memories", "{langgraph_user_id}")


class Profile(BaseModel):
    name: str
    editor: str | None = None

ALICE = {"configurable": {"langgraph_user_id": "alice"}}


def created_id(answer: str) -> str:
    found = re.fullmatch(r"created memory ([0-9a-f-]{36})", answer)
    assert found, answer
    return found.group(1)


async def test_langmem_tools_manage_and_search_memories_on_a_bound_store(memory):
    store = memory.store("acme", "alice")
    manage = create_manage_memory_tool(namespace=NAMESPACE, store=store)
    search = create_search_memory_tool(namespace=NAMESPACE, store=store)

    pnpm = created_id(await manage.ainvoke({"content": "Alice prefers pnpm over npm"}, config=ALICE))
    berlin = created_id(await manage.ainvoke({"content": "Alice works from the Berlin office"}, config=ALICE))
    profiles = create_manage_memory_tool(namespace=(*NAMESPACE, "profile"), schema=Profile, store=store)
    await profiles.ainvoke({"content": {"name": "Alice", "editor": "Helix"}}, config=ALICE)  # a structured memory
    item = await store.aget(("memories", "alice"), pnpm)
    assert (tuple(item.namespace), item.value) == (("memories", "alice"), {"content": "Alice prefers pnpm over npm"})

    found = json.loads(await search.ainvoke({"query": "does Alice prefer pnpm or npm?"}, config=ALICE))
    assert found[0]["key"] == pnpm and found[0]["value"] == {"content": "Alice prefers pnpm over npm"}
    assert found[0]["namespace"] == ["memories", "alice"] and isinstance(found[0]["score"], float)
    found = json.loads(await search.ainvoke({"query": "which editor?", "filter": {"content": {"name": "Alice",
                                                                                             "editor": "Helix"}}},
                                            config=ALICE))
    assert [(m["namespace"], m["value"]["content"]["editor"]) for m in found] == [
        (["memories", "alice", "profile"], "Helix")]  # the profile's namespace is under the searched one

    assert await manage.ainvoke({"id": pnpm, "content": "Alice switched to yarn", "action": "update"},
                                config=ALICE) == f"updated memory {pnpm}"
    assert (await store.aget(("memories", "alice"), pnpm)).value == {"content": "Alice switched to yarn"}
    assert await manage.ainvoke({"id": berlin, "action": "delete"}, config=ALICE) == f"Deleted memory {berlin}"
    assert await store.aget(("memories", "alice"), berlin) is None
    listed = json.loads(await search.ainvoke({"query": "Alice"}, config=ALICE))
    assert [m["value"]["content"] for m in listed if m["key"] != pnpm] == [{"name": "Alice", "editor": "Helix"}]
    assert pnpm in {m["key"] for m in listed} and berlin not in {m["key"] for m in listed}

    # they are memories of the store's scope: the retrieval loop's recall finds them too
    hits = await store.asearch(("acme",), query="which package manager does Alice use now? yarn")
    assert hits[0].key == pnpm and tuple(hits[0].namespace) == ("memories", "alice")
    # and another user's tools, on another user's store, see none of them
    bob = {"configurable": {"langgraph_user_id": "alice"}}  # even asking for alice's namespace
    other = create_search_memory_tool(namespace=NAMESPACE, store=memory.store("acme", "bob"))
    assert json.loads(await other.ainvoke({"query": "package manager"}, config=bob)) == []


async def test_langmem_tools_in_an_agent_use_the_graph_store(memory):
    """The tools without ``store=``: they take the agent's store (``get_store()``), as langmem's examples do."""
    def answer(call):
        return AIMessage(content="Noted. " + call.tool_results("search_memory")[-1])

    model = ScriptedChatModel([
        AIMessage(content="", tool_calls=[tool_call("manage_memory", content="Alice deploys on Fridays",
                                                    action="create")]),
        AIMessage(content="", tool_calls=[tool_call("search_memory", query="when does Alice deploy?")]),
        answer,
    ])
    agent = create_agent(model, tools=[create_manage_memory_tool(namespace=NAMESPACE),
                                       create_search_memory_tool(namespace=NAMESPACE)],
                         store=memory.store("acme", "alice"))
    out = await agent.ainvoke({"messages": [{"role": "user", "content": "I deploy on Fridays, remember it"}]},
                              config=ALICE)
    assert "Alice deploys on Fridays" in out["messages"][-1].content
    [item] = await memory.store("acme", "alice").asearch(("memories", "alice"))
    assert item.value == {"content": "Alice deploys on Fridays"}
    assert await memory.store("acme").asearch(("memories",)) == []  # the project's shared memory holds nothing
