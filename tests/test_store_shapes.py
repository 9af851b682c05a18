"""``Z0Store`` returns one shape per item whichever call finds it: get, search with and without a query, and
list_namespaces agree (before, search with a query returned full fact keys and another value shape than get, and
search without a query and list_namespaces ignored semantic memories)."""

from __future__ import annotations

import pytest

from z0_memory.errors import ConfigurationError

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_get_and_both_searches_return_the_same_items(memory):
    store = memory.store("acme")
    await store.aput(("stack",), "backend_framework", {"value": "Hono", "rationale": "it runs on the edge"})
    record = await memory.scope("acme").semantic.add("Alice prefers pnpm over npm", category="people",
                                                     kind="preference")

    listed = await store.asearch(("acme",))
    assert [(i.namespace, i.key) for i in listed] == [(("acme", "stack"), "backend_framework"),
                                                      (("acme", "people"), record.id)]
    for item in listed:
        got = await store.aget(item.namespace, item.key)
        assert (got.namespace, got.key, got.value) == (item.namespace, item.key, item.value)
    fact_value, memory_value = listed[0].value, listed[1].value
    assert fact_value["value"] == "Hono" and memory_value["content"] == "Alice prefers pnpm over npm"

    found = await store.asearch(("acme",), query="which backend framework do we use?")
    assert (found[0].namespace, found[0].key, found[0].value) == (("acme", "stack"), "backend_framework",
                                                                  fact_value)
    found = await store.asearch(("acme", "people"), query="which package manager does Alice prefer?")
    assert (found[0].namespace, found[0].key, found[0].value) == (("acme", "people"), record.id, memory_value)
    assert await store.alist_namespaces() == [("acme", "people"), ("acme", "stack")]
    assert await memory.operator_store().alist_namespaces(prefix=("acme",)) == [("acme", "people"), ("acme", "stack")]
    assert await store.aget(("acme", "stack"), record.id) is None  # a memory lives under its own category


async def test_a_ttl_is_refused_naming_the_fix(memory):
    with pytest.raises(ConfigurationError, match="does not expire items"):
        await memory.store("acme").aput(("stack",), "cache", {"value": "Redis"}, ttl=5)
