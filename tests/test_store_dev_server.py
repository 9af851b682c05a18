"""The store through ``langgraph dev``'s API as a ``langgraph-sdk`` client uses it: langmem-style namespaces and
dict values are kept (the server has the operator's store: namespaces start with the project), searched, filtered,
listed and deleted, and they are the same items this process's bound store reads."""

from __future__ import annotations

import pytest
from langgraph_sdk import get_client
from test_langgraph_dev import PROJECT, server  # noqa: F401  (the dev-server fixture)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_items_of_any_namespace_through_the_dev_server(memory, server):  # noqa: F811
    store = get_client(url=server).store
    alice = [PROJECT, "memories", "alice"]
    await store.put_item(alice, "m1", {"content": "Alice prefers pnpm over npm", "topic": "tools"})
    await store.put_item(alice, "m2", {"content": "Alice works from the Berlin office", "topic": "place"})
    await store.put_item(alice, "m3", {"content": "Alice's badge number is 4411"}, index=False)
    got = await store.get_item(alice, "m1")
    assert (got["namespace"], got["key"], got["value"]) == (
        alice, "m1", {"content": "Alice prefers pnpm over npm", "topic": "tools"})

    found = (await store.search_items([PROJECT, "memories"], query="does Alice prefer pnpm or npm?"))["items"]
    assert found[0]["key"] == "m1" and isinstance(found[0]["score"], float) and "m3" not in [i["key"] for i in found]
    listed = (await store.search_items([PROJECT, "memories"], filter={"topic": "place"}))["items"]
    assert [i["key"] for i in listed] == ["m2"]
    assert [i["key"] for i in (await store.search_items(alice, limit=2, offset=1))["items"]] == ["m2", "m1"]
    assert (await store.list_namespaces(prefix=[PROJECT, "memories"]))["namespaces"] == [alice]

    # the same items as this process's store bound to the project reads them
    bound = memory.store(PROJECT)
    assert (await bound.aget(("memories", "alice"), "m2")).value["content"] == "Alice works from the Berlin office"
    await store.delete_item(alice, "m2")
    assert await bound.aget(("memories", "alice"), "m2") is None
    assert [i["key"] for i in (await store.search_items(alice))["items"]] == ["m3", "m1"]
