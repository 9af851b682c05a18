"""Behind a real PgBouncer in transaction mode (consecutive transactions of one client connection may run on
different server connections): the search and write paths work, session settings hold per transaction, no
prepared statement is relied on, and the results equal those of a direct connection."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
import pytest
import pytest_asyncio
from pgbouncer_support import pgbouncer_url  # noqa: F401  (the fixture)
from reliability_support import record

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.graphs.retrieval import builder as retrieval_builder
from z0_memory.memory import Z0Memory
from z0_memory.schemas import Provenance
from z0_memory.stores.database import uses_transaction_pooler
from z0_memory.stores.scope import Scope
from z0_memory.settings import Settings
from z0_memory.stores.semantic import NewMemory

pytestmark = pytest.mark.asyncio(loop_scope="session")

NOTES = [
    "We deploy the API on Fly.io in the Frankfurt region.",
    "Alice owns the frontend and prefers pnpm.",
    "The billing service retries webhooks three times with exponential backoff.",
    "Cold starts on the old VMs were slow, which is why we moved off Express.",
    "Money amounts are stored as integer cents in Postgres.",
    "We use Redis only as a cache, never as the source of truth.",
    "数据库定了用 PostgreSQL，缓存用 Redis。",
    "Release notes are written in the docs site every Friday.",
]
QUESTIONS = ["where do we deploy the API?", "who owns the frontend?", "why did we move off Express?",
             "how are money amounts stored?", "数据库用什么？", "which backend framework do we use?"]


@pytest_asyncio.fixture(loop_scope="session")
async def pooled(memory: Z0Memory, pgbouncer_url: str) -> AsyncIterator[Z0Memory]:  # noqa: F811
    """A second owner of the same database, through PgBouncer (the direct one set it up)."""
    ctx = memory.settings.replace(database_url=pgbouncer_url, database_pooler="transaction")
    async with Z0Memory(ctx, embeddings=memory.providers.embeddings,
                        embedding_name=memory.providers.embedding_name) as through_pooler:
        yield through_pooler


def ranking(hits, digits: int = 9) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, digits)) for h in hits]


async def test_writes_and_searches_through_the_pooler_equal_the_direct_connection(memory, pooled):
    assert pooled.db.pooler and pooled.db.app_role == "z0_app"
    acme = pooled.scope("acme")
    await acme.facts.put("acme:stack:backend_framework", "Express", Provenance(extractor="test"))
    await acme.facts.put("acme:stack:backend_framework", "Hono",
                         Provenance(extractor="test", rationale="cold starts were slow on the old VMs"))
    ids = await acme.semantic.add_many([NewMemory(n) for n in NOTES])
    assert len(ids) == len(NOTES)
    await acme.pending.add(acme_candidate := _candidate(), Provenance(extractor="test", confidence=0.4))
    direct = memory.scope("acme")
    assert [v.value for v in await direct.facts.history("acme:stack:backend_framework")] == ["Express", "Hono"]
    assert sorted(r.id for r in await direct.semantic.list(limit=50)) == sorted(
        r.id for r in await acme.semantic.list(limit=50))
    assert [p.candidate.content for p in await direct.pending.list()] == [acme_candidate.content]
    for question in QUESTIONS:
        for method in ("hybrid", "bm25", "dense"):
            ours = await getattr(acme.semantic.search_engine, method)(question, 10)
            assert ranking(ours) == ranking(await getattr(direct.semantic.search_engine, method)(question, 10)), (
                method, question)
    graph_direct = retrieval_builder.compile(store=memory.store("acme"))
    graph_pooled = retrieval_builder.compile(store=pooled.store("acme"))
    for question in QUESTIONS:
        a = await graph_direct.ainvoke({"question": question}, context=Context(project="acme"))
        b = await graph_pooled.ainvoke({"question": question}, context=Context(project="acme"))
        # the loop weighs memories by recency at the moment it runs: equal to the microsecond, not the nanosecond
        assert ranking(a["memories"], 6) == ranking(b["memories"], 6) and len(a["trace"]) == len(b["trace"]), question
    record("pooler.parity", operations=len(NOTES) + 3 + 4 * len(QUESTIONS) * 2, lost=0, cross_project=0)


def _candidate():
    from z0_memory.schemas import Candidate

    return Candidate(kind="decision", key="acme:database:cache", value="Redis",
                     content="maybe we could try Redis for caching", confidence=0.4, hedged=True)


async def test_session_settings_hold_per_transaction_and_do_not_leak(pooled):
    for _ in range(3):
        async with pooled.db.connection(Scope("acme")) as conn:
            row = await (await conn.execute(
                "SELECT current_setting('hnsw.iterative_scan') AS scan, current_setting('hnsw.ef_search') AS ef, "
                "current_setting('plan_cache_mode') AS plans, current_user AS role")).fetchone()
        assert (row["scan"], row["ef"], row["plans"], row["role"]) == (
            "relaxed_order", "64", "force_custom_plan", "z0_app")
    for _ in range(5):  # whatever server connection an unscoped statement gets, nothing of a scope stayed on it
        async with pooled.db.connection() as conn:
            row = await (await conn.execute(
                "SELECT current_user AS role, coalesce(current_setting('z0.project', true), '') AS project, "
                "current_setting('hnsw.ef_search') AS ef")).fetchone()
        assert row["role"] != "z0_app" and row["project"] == "" and row["ef"] == "40"


async def test_repeated_statements_need_no_prepared_statements(pooled):
    acme = pooled.scope("acme")
    await acme.semantic.add_many([NewMemory(n) for n in NOTES])
    for i in range(12):  # a prepared statement from one transaction would be missing in the next server connection
        assert await acme.semantic.search_engine.hybrid(QUESTIONS[i % len(QUESTIONS)], 5)
        assert await acme.facts.get("acme:stack:db") is None


async def test_set_up_behind_the_pooler_asks_for_a_direct_connection(database_url, pgbouncer_url):  # noqa: F811
    name = "z0_pooler_fresh"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        url = pgbouncer_url.rsplit("/", 1)[0] + "/" + name
        with pytest.raises(ConfigurationError, match="direct connection"):
            async with Z0Memory(Settings(database_url=url, database_pooler="transaction", embedding_model="hash")):
                pass
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_the_pooler_setting():
    assert uses_transaction_pooler("postgresql://u@db.example.com:6543/postgres", "auto")
    assert not uses_transaction_pooler("postgresql://u@db.example.com:5432/postgres", "auto")
    assert uses_transaction_pooler("postgresql://u@h:5432/db", "transaction")
    assert not uses_transaction_pooler("postgresql://u@h:6543/db", "none")
    with pytest.raises(ConfigurationError, match="database_pooler"):
        Settings(database_pooler="session")
