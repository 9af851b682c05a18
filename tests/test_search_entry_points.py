"""One search engine: the same question gets the same first-round ranking whatever the entry point (the retrieval
loop, the ``recall_memory`` tool, the LangGraph store's ``search`` and the engine's first round)."""

from __future__ import annotations

import pytest
from langgraph.prebuilt import ToolRuntime

from z0_memory.config import Context
from z0_memory.graphs.retrieval import builder as retrieval_builder
from z0_memory.nodes.retrieval import first_round
from z0_memory.schemas import Provenance
from z0_memory.stores.semantic import NewMemory
from z0_memory.tools import recall_memory

pytestmark = pytest.mark.asyncio(loop_scope="session")

NOTES = [
    "We deploy the API on Fly.io in the Frankfurt region.",
    "Alice owns the frontend and prefers pnpm over npm.",
    "The billing service retries webhooks three times with exponential backoff.",
    "Money amounts are stored as integer cents.",
    "Redis is only a cache here, never the source of truth.",
    "前端用 Vue 3，组件库选了 Naive UI。",
    "Release notes go out every Friday on the docs site.",
    "Bob reviews every database migration before it merges.",
]
QUESTIONS = ["which backend framework do we use and why?", "where is the API deployed?", "who owns the frontend?",
             "how are money amounts stored?", "前端用的是什么框架？", "who reviews migrations?"]


async def test_every_entry_point_returns_the_first_rounds_ranking(memory):
    acme = memory.scope("acme")
    await acme.facts.put("acme:stack:backend_framework", "Express", Provenance(extractor="test"))
    await acme.facts.put("acme:stack:backend_framework", "Hono",
                         Provenance(extractor="test", rationale="cold starts were slow on our VMs"))
    await acme.semantic.add_many([NewMemory(n) for n in NOTES])
    await memory.scope("other").semantic.add("Other deploys its API on Render.")
    ctx = Context(project="acme", max_rounds=1, top_k=10)
    loop = retrieval_builder.compile(store=memory.store("acme"))
    store = memory.store("acme")
    for question in QUESTIONS:
        expected = [(h.id, round(h.score, 6)) for h in (await first_round(acme, question, top_k=10))[:10]]
        assert expected, question
        out = await loop.ainvoke({"question": question}, context=ctx)
        assert [(h.id, round(h.score, 6)) for h in out["memories"][:10]] == expected, question
        runtime = ToolRuntime(state={}, context=ctx, config={}, stream_writer=lambda _: None,
                              tool_call_id="call-1", store=store)
        message = await recall_memory.ainvoke({"type": "tool_call", "name": "recall_memory", "id": "call-1",
                                               "args": {"query": question, "runtime": runtime}})
        assert [(h.id, round(h.score, 6)) for h in message.artifact[:10]] == expected, question
        items = await store.asearch(("acme",), query=question, limit=10)
        assert [round(i.score, 6) for i in items] == [score for _, score in expected], question
        assert [i.key for i in items] == [h.key.rsplit(":", 1)[1] if h.key else h.id  # an item key, as get takes it
                                          for h in (await first_round(acme, question))[:10]]


async def test_store_items_are_ranked_by_the_same_hybrid_search(memory):
    """A query in a namespace of store items runs the memory's hybrid search over those items: when the namespace
    holds everything the scope has, the ranking and the scores are ``hybrid_search``'s."""
    store = memory.store("solo")
    for n, note in enumerate(NOTES):
        await store.aput(("notes", "team"), f"n{n}", {"text": note})
    solo = memory.scope("solo")
    for question in QUESTIONS:
        expected = await solo.semantic.hybrid_search(question, 5)
        items = await store.asearch(("notes", "team"), query=question, limit=5)
        assert [(i.value["text"], round(i.score, 6)) for i in items] == \
            [(h.content, round(h.score, 6)) for h in expected], question
        assert [i.key for i in items] == [h.metadata["z0_store"]["key"] for h in expected]


async def test_a_namespace_filter_ranks_only_its_items_however_many_memories_the_scope_has(memory):
    """The namespace and the value filter apply inside both halves of the search (the dense half exactly), so a
    few items are found among many memories that would outrank them."""
    store = memory.store("crowd")
    crowd = memory.scope("crowd")
    await crowd.semantic.add_many([NewMemory(f"We deploy service {n} on Fly.io in the Frankfurt region.")
                                   for n in range(200)])
    await store.aput(("runbooks", "ops"), "deploy", {"text": "How we deploy: Render, from the main branch."})
    await store.aput(("runbooks", "ops"), "old", {"text": "How we deployed before: Heroku.", "retired": True})
    await store.aput(("runbooks", "other"), "deploy", {"text": "Deploy on Fly.io in the Frankfurt region."})
    found = await store.asearch(("runbooks", "ops"), query="where do we deploy on Fly.io in Frankfurt?")
    assert sorted(i.key for i in found) == ["deploy", "old"]  # not the other namespace's closer match
    assert [tuple(i.namespace)[-2:] for i in found] == [("runbooks", "ops")] * 2
    found = await store.asearch(("runbooks", "ops"), query="deploy on Fly.io", filter={"retired": True})
    assert [i.key for i in found] == ["old"]
    assert await store.asearch(("runbooks", "ops"), query="deploy", offset=2) == []
