"""The full-text index on the real database, fresh and upgraded.

* It keeps no pending list (schema migration 5): new memories' entries are in the index itself at once, so a keyword
  search never scans a list of unsorted recent entries (at 100k memories that list cost 2-5 ms per index scan, and a
  BM25 search runs a dozen scans).
* It weighs a memory's search context below its content (migration 7): content lexemes carry weight A, context
  lexemes D, and BM25 counts a context term at ``CONTEXT_TERM_WEIGHT``.
"""

from __future__ import annotations

import pytest
from test_database import fresh_database  # noqa: F401  (the fixture: a new empty database, dropped afterwards)
from test_memory_stats import assert_stats_exact, sentences
from z0_memory.stores import schema
from z0_memory.stores.schema import CONTEXT_TERM_WEIGHT, SEMANTIC_TABLE, SEMANTIC_TSV_INDEX
from z0_memory.stores.semantic import NewMemory, row_params

from z0_memory.settings import Settings
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
    hits = await pm.semantic.search_engine.bm25("Who owns the zeppelin lease?", 5)
    assert hits[0].content == "Erin owns the zeppelin hangar lease"


async def test_migration_from_version_4_turns_fast_update_off_and_flushes_the_list(fresh_database, monkeypatch):  # noqa: F811
    ctx = Settings(database_url=fresh_database, embedding_model="hash")
    # a database at version 4, plus the columns today's insert writes (migrations 6 and 7: search context)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS[:4], *schema.MIGRATIONS[5:7]))
    queries = ("Which cache does Alice use for billing?", "kafka queue latency alert", "Who restores the backup?")
    async with Z0Memory(ctx) as old:
        assert await index_options(old) == []  # GIN's default: fast update, entries wait in the pending list
        await old.scope("acme").semantic.add_many([NewMemory(t) for t in sentences(60)])
        before = {q: [(h.id, h.score) for h in await old.scope("acme").semantic.search_engine.bm25(q, 10)] for q in queries}
    monkeypatch.undo()

    async with Z0Memory(ctx) as upgraded:
        assert "fastupdate=off" in await index_options(upgraded)
        assert await pending_pages(upgraded) == 0  # the migration flushed what the old version left pending
        for q in queries:  # the same index content, so the same results
            assert [(h.id, h.score) for h in await upgraded.scope("acme").semantic.search_engine.bm25(q, 10)] == before[q]
        await upgraded.scope("acme").semantic.add("Dmitri watches the latency dashboard")
        assert await pending_pages(upgraded) == 0


async def lexeme_weights(memory, memory_id: str) -> dict[str, set[str]]:
    """Each lexeme of a memory's tsvector with the weights of its positions ({'A'}: content, {'D'}: context)."""
    async with memory.db.connection() as conn:
        rows = await (await conn.execute(
            f"SELECT u.lexeme, u.weights FROM {SEMANTIC_TABLE}, unnest(content_tsv) u WHERE id = %s",
            [memory_id])).fetchall()
    return {r["lexeme"]: set(r["weights"]) for r in rows}


# One memory says it; the other only has it in its context, twice (the turns before and after both name it).
SAYS_IT = NewMemory("Erin: the zeppelin hangar lease is signed", context="Bo: any news on paperwork?")
NEIGHBOUR = NewMemory("Bo: great, thanks for the update", context="Erin: the zeppelin arrived. The zeppelin is big.")


async def test_context_terms_count_below_content_terms(memory):
    assert 0 < CONTEXT_TERM_WEIGHT < 1
    pm = memory.scope("acme")
    says, neighbour, *_ = await pm.semantic.add_many([SAYS_IT, NEIGHBOUR, *(NewMemory(t) for t in sentences(30))])
    weights = await lexeme_weights(memory, neighbour)
    assert weights["zeppelin"] == {"D"} and weights["thank"] == {"A"}
    assert (await lexeme_weights(memory, says))["zeppelin"] == {"A"}
    # BM25: at equal weights the neighbour's two context mentions would outrank the memory that says it once
    assert [h.id for h in await pm.semantic.search_engine.bm25("zeppelin", 5)] == [says, neighbour]
    # the store's keyword search is the same engine's BM25 (one search stack, whatever the entry point)
    assert [h.id for h in await pm.semantic.keyword_search("zeppelin", 5)] == [says, neighbour]


async def test_migration_from_version_6_moves_the_context_to_weight_d(fresh_database, monkeypatch):  # noqa: F811
    ctx = Settings(database_url=fresh_database, embedding_model="hash")
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:6])
    async with Z0Memory(ctx) as old:  # rows as version 6 wrote them: the context inside search_text, no column
        pm = old.scope("acme")
        vector = await pm.semantic.embeddings.aembed_query("a note")
        rows = [row_params(pm.scope, m, vector) for m in (SAYS_IT, NEIGHBOUR, NewMemory("Dmitri: 监控 dashboard"))]
        for row in rows:
            old_text = row.pop("search_context") or ""
            row["search_text"] = f"{row['search_text']}\n{old_text}".strip()
        async with old.db.connection() as conn, conn.cursor() as cur:
            await cur.executemany(
                f"INSERT INTO {SEMANTIC_TABLE} (id, content, embedding, project, user_id, category, kind, confidence,"
                " created_at, superseded_at, fact_key, fact_version, source_ids, search_text, context, metadata)"
                " VALUES (%(id)s, %(content)s, %(embedding)s::vector, %(project)s, %(user_id)s, %(category)s,"
                " %(kind)s, %(confidence)s, %(created_at)s, %(superseded_at)s, %(fact_key)s, %(fact_version)s,"
                " %(source_ids)s, %(search_text)s, %(context)s, %(metadata)s::json)", rows)
        says, neighbour, plain = (r["id"] for r in rows)
        assert (await lexeme_weights(old, neighbour))["zeppelin"] == {"D"}  # version 6: every lexeme at D
        assert (await lexeme_weights(old, says))["zeppelin"] == {"D"}
    monkeypatch.undo()

    async with Z0Memory(ctx) as upgraded:
        pm = upgraded.scope("acme")
        async with upgraded.db.connection() as conn:
            split = {r["id"]: (r["search_text"], r["search_context"]) for r in await (await conn.execute(
                f"SELECT id::text, search_text, search_context FROM {SEMANTIC_TABLE}")).fetchall()}
        assert split[neighbour] == ("general Bo: great, thanks for the update",
                                    "Erin: the zeppelin arrived. The zeppelin is big.")
        assert split[plain][1] is None and "监控" in split[plain][0]
        assert (await lexeme_weights(upgraded, neighbour))["zeppelin"] == {"D"}
        assert (await lexeme_weights(upgraded, neighbour))["thank"] == {"A"}
        assert (await lexeme_weights(upgraded, plain))["监控"] == {"A"}  # re-indexed: all content
        await assert_stats_exact(upgraded)
        hits = await pm.semantic.search_engine.bm25("zeppelin", 5)
        assert [h.id for h in hits] == [says, neighbour]
        assert (await pm.semantic.keyword_search("监控", 5))[0].id == plain
        assert await schema.setup(upgraded.db, schema.EmbeddingSpec("hash", 256), checkpointer_setup=False) == []
