"""The per-scope BM25 statistics the triggers keep on the real database: every write path (insert, supersede,
confirm, fact versions, delete, forget, TRUNCATE, multi-scope updates) and the upgrade from schema version 3."""

from __future__ import annotations

import random

import pytest
from test_database import fresh_database  # noqa: F401  (the fixture: a new empty database, dropped afterwards)
from z0_memory.stores import schema
from z0_memory.stores.schema import SEMANTIC_TABLE, STATS_TABLE
from z0_memory.stores.semantic import NewMemory

from z0_memory.memory import Z0Memory
from z0_memory.schemas import Provenance
from z0_memory.settings import Settings

pytestmark = pytest.mark.asyncio(loop_scope="session")

ACTUAL_STATS = f"""
SELECT project, user_id, count(*) AS docs, coalesce(sum(length(content_tsv)), 0) AS doc_len,
       count(*) FILTER (WHERE superseded_at IS NULL) AS current_docs,
       coalesce(sum(length(content_tsv)) FILTER (WHERE superseded_at IS NULL), 0) AS current_len
FROM {SEMANTIC_TABLE} GROUP BY project, user_id
"""

WORDS = ("deploy", "cache", "queue", "billing", "invoice", "staging", "kafka", "redis", "postgres", "review",
         "release", "rollback", "alert", "dashboard", "tenant", "quota", "migration", "schema", "backup", "restore",
         "token", "login", "session", "latency")
NAMES = ("Alice", "Bob", "Carol", "Dmitri", "Erin")


async def stats_rows(memory) -> list[dict]:
    async with memory.db.connection() as conn:
        rows = await (await conn.execute(f"SELECT * FROM {STATS_TABLE}")).fetchall()
    return sorted((r for r in rows if (r["docs"], r["doc_len"], r["current_docs"], r["current_len"]) != (0, 0, 0, 0)),
                  key=lambda r: (r["project"], r["user_id"]))


async def assert_stats_exact(memory) -> list[dict]:
    """The statistics table equals a full recount of the semantic table (scopes with nothing left may keep 0 rows)."""
    async with memory.db.connection() as conn:
        actual = await (await conn.execute(ACTUAL_STATS)).fetchall()
    kept = await stats_rows(memory)
    assert kept == sorted(actual, key=lambda r: (r["project"], r["user_id"]))
    return kept


def sentences(n: int, seed: int = 3) -> list[str]:
    rnd = random.Random(seed)
    return [f"{rnd.choice(NAMES)} {' '.join(rnd.sample(WORDS, rnd.randint(2, 6)))} note {i}" for i in range(n)]


async def test_stats_follow_every_write_path(memory):
    acme, other = memory.scope("acme"), memory.scope("acme", user_id="u1")
    assert await stats_rows(memory) == []  # the fixture's TRUNCATE cleared them
    ids = await acme.semantic.add_many([NewMemory(t) for t in sentences(12)])
    await other.semantic.add("Bob reviews every release on Friday")
    first = await assert_stats_exact(memory)
    assert [r["docs"] for r in first] == [12, 1]

    assert await acme.semantic.supersede(ids[0])
    await acme.semantic.confirm(ids[1])  # a metadata update changes nothing
    after = await assert_stats_exact(memory)
    assert after[0]["docs"] == 12 and after[0]["current_docs"] == 11

    await acme.facts.put("acme:stack:db", "Postgres", Provenance(extractor="test"))
    await acme.facts.put("acme:stack:db", "MySQL", Provenance(extractor="test"))  # supersedes the mirror row
    await assert_stats_exact(memory)
    assert await acme.facts.forget("acme:stack:db", include_history=True) == 2
    await assert_stats_exact(memory)

    assert await acme.semantic.delete(ids[:3]) == 3
    await assert_stats_exact(memory)
    await acme.forget_everything()
    assert [(r["project"], r["user_id"]) for r in await assert_stats_exact(memory)] == [("acme", "u1")]

    async with memory.db.connection() as conn:
        await conn.execute(f"TRUNCATE {SEMANTIC_TABLE}")
    assert await stats_rows(memory) == []


async def test_stats_follow_a_text_edit_and_a_multi_scope_statement(memory):
    acme, other = memory.scope("acme"), memory.scope("other")
    await acme.semantic.add("short note")
    await other.semantic.add("a somewhat longer note about the billing dashboard")
    async with memory.db.connection() as conn:
        await conn.execute(f"UPDATE {SEMANTIC_TABLE} SET content = content || ' with quota alerts', "
                           "search_text = search_text || ' with quota alerts'")
        await conn.execute(f"UPDATE {SEMANTIC_TABLE} SET superseded_at = now() WHERE project = 'other'")
    rows = await assert_stats_exact(memory)
    assert [r["current_docs"] for r in rows] == [1, 0]


async def test_migration_from_version_3_backfills_the_stats(fresh_database, monkeypatch):  # noqa: F811
    ctx = Settings(database_url=fresh_database, embedding_model="hash")
    # a database at version 3, plus the columns today's insert writes (migrations 6 and 7: search context)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS[:3], *schema.MIGRATIONS[5:7]))
    async with Z0Memory(ctx) as old:
        acme = old.scope("acme")
        ids = await acme.semantic.add_many([NewMemory(t) for t in sentences(9)])
        await acme.semantic.supersede(ids[0])
        await old.scope("acme", user_id="u1").semantic.add("Erin owns the backup restore drill")
        await acme.facts.put("acme:stack:cache", "Redis", Provenance(extractor="test"))
        await acme.facts.put("acme:stack:cache", "Valkey", Provenance(extractor="test"))
        async with old.db.connection() as conn:
            assert (await (await conn.execute("SELECT to_regclass(%s) AS t", [STATS_TABLE])).fetchone())["t"] is None
    monkeypatch.undo()

    async with Z0Memory(ctx) as upgraded:
        async with upgraded.db.connection() as conn:
            versions = await (await conn.execute("SELECT version FROM z0_schema_version ORDER BY version")).fetchall()
        assert [v["version"] for v in versions] == list(range(1, schema.SCHEMA_VERSION + 1))
        rows = await assert_stats_exact(upgraded)
        assert [(r["docs"], r["current_docs"]) for r in rows] == [(11, 9), (1, 1)]
        await upgraded.scope("acme").semantic.add("Dmitri watches the latency dashboard")  # the triggers now run
        await assert_stats_exact(upgraded)
        assert await schema.setup(upgraded.db, schema.EmbeddingSpec("hash", 256), checkpointer_setup=False) == []
        await assert_stats_exact(upgraded)
