"""The full-text GIN index keeps no pending list (schema migration 5): new memories' entries are in the index
itself at once, so a keyword search never scans a list of unsorted recent entries (at 100k memories that list cost
2-5 ms per index scan, and a BM25 search runs a dozen scans). Checked on the real database, fresh and upgraded."""

from __future__ import annotations

import pytest
from test_database import fresh_database  # noqa: F401  (the fixture: a new empty database, dropped afterwards)
from test_memory_stats import sentences
from z0_memory.stores import schema
from z0_memory.stores.recipes import bm25_search
from z0_memory.stores.schema import SEMANTIC_TSV_INDEX
from z0_memory.stores.semantic import NewMemory

from z0_memory.config import Context
from z0_memory.memory import Z0Memory

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def index_options(memory) -> list[str]:
    async with memory.db.connection() as conn:
        row = await (await conn.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass",
                                        [SEMANTIC_TSV_INDEX])).fetchone()
    return row["reloptions"] or []


async def pending_pages(memory) -> int:
    """Pages of the index's pending list, flushed by the call (0: every entry was already in the index)."""
    async with memory.db.connection() as conn:
        row = await (await conn.execute("SELECT gin_clean_pending_list(%s::regclass) AS pages",
                                        [SEMANTIC_TSV_INDEX])).fetchone()
    return row["pages"]


async def test_new_memories_go_straight_into_the_index(memory):
    assert "fastupdate=off" in await index_options(memory)
    pm = memory.scope("acme")
    await pm.semantic.add_many([NewMemory(t) for t in sentences(40)])
    await pm.semantic.add("Erin owns the zeppelin hangar lease")
    assert await pending_pages(memory) == 0
    hits = await bm25_search(pm, "Who owns the zeppelin lease?", 5)
    assert hits[0].content == "Erin owns the zeppelin hangar lease"


async def test_migration_from_version_4_turns_fast_update_off_and_flushes_the_list(fresh_database, monkeypatch):  # noqa: F811
    ctx = Context(project="acme", database_url=fresh_database, embedding_model="hash")
    # a database at version 4, plus the column today's insert writes (migration 6: search context)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS[:4], schema.MIGRATIONS[5]))
    queries = ("Which cache does Alice use for billing?", "kafka queue latency alert", "Who restores the backup?")
    async with Z0Memory(ctx) as old:
        assert await index_options(old) == []  # GIN's default: fast update, entries wait in the pending list
        await old.scope().semantic.add_many([NewMemory(t) for t in sentences(60)])
        before = {q: [(h.id, h.score) for h in await bm25_search(old.scope(), q, 10)] for q in queries}
    monkeypatch.undo()

    async with Z0Memory(ctx) as upgraded:
        assert "fastupdate=off" in await index_options(upgraded)
        assert await pending_pages(upgraded) == 0  # the migration flushed what the old version left pending
        for q in queries:  # the same index content, so the same results
            assert [(h.id, h.score) for h in await bm25_search(upgraded.scope(), q, 10)] == before[q]
        await upgraded.scope().semantic.add("Dmitri watches the latency dashboard")
        assert await pending_pages(upgraded) == 0
