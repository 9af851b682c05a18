"""The stores' raw-row readers that benches inspect the tables through (no SQL outside stores/): each reads only its
own scope, and exactly the rows it documents."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from z0_memory.schemas import Candidate, Provenance
from z0_memory.stores.maintenance import analyze_database
from z0_memory.stores.schema import add_meta, meta_value

pytestmark = pytest.mark.asyncio(loop_scope="session")
PROV = Provenance(thread_id="t1", message_ids=["m1"], extractor="test", confidence=0.9)


async def test_version_rows_are_every_version_of_the_scope_with_its_mirror(memory):
    acme, bob = memory.scope("acme"), memory.scope("acme", "bob")
    await acme.facts.put("acme:stack:database", "MySQL", PROV)
    await acme.facts.put("acme:stack:database", "Postgres", PROV, kind="decision")
    await bob.facts.put("acme:stack:cache", "Redis", PROV)

    rows = sorted(await acme.facts.version_rows(), key=lambda r: r["version"])
    assert [(r["entity"], r["value"], r["version"]) for r in rows] == [("database", "MySQL", 1),
                                                                       ("database", "Postgres", 2)]
    assert rows[0]["valid_to"] is not None and rows[1]["valid_to"] is None
    assert [r["kind"] for r in rows] == ["fact", "decision"]  # the mirror row's kind, per version
    assert "MySQL" in rows[0]["content"] and "Postgres" in rows[1]["content"]
    assert [r["entity"] for r in await bob.facts.version_rows()] == ["cache"]


async def test_keyless_rows_leave_out_fact_mirrors_and_count_confirmations(memory):
    acme = memory.scope("acme")
    await acme.facts.put("acme:stack:database", "Postgres", PROV)
    kept = await acme.semantic.add("Deploys go out on Tuesdays", kind="context")
    old = await acme.semantic.add("The staging box is called kiwi", kind="context")
    await acme.semantic.confirm(kept.id)
    await acme.semantic.supersede(old.id)
    await memory.scope("other").semantic.add("Deploys go out on Fridays", kind="context")

    rows = {r["id"]: r for r in await acme.semantic.keyless_rows()}
    assert set(rows) == {kept.id, old.id}  # not the fact's mirror, not the other project's memory
    assert rows[kept.id]["confirmations"] == 2 and rows[kept.id]["superseded_at"] is None
    assert rows[old.id]["confirmations"] == 1 and rows[old.id]["superseded_at"] is not None


async def test_raw_pending_rows_include_expired_ones_of_the_scope_only(memory):
    acme = memory.scope("acme")
    hedge = Candidate(kind="decision", key="acme:stack:cache", value="Redis", content="Maybe Redis for the cache",
                      confidence=0.35, hedged=True)
    await acme.pending.add(hedge, PROV, now=datetime.now(UTC) - timedelta(days=30))
    await memory.scope("acme", "bob").pending.add(hedge, PROV)

    assert await acme.pending.list() == []
    rows = await acme.pending.raw_rows()
    assert [(r["match_key"], r["confirmations"]) for r in rows] == [("acme:stack:cache", 1)]
    candidate = rows[0]["candidate"]
    assert (candidate if isinstance(candidate, dict) else json.loads(candidate))["value"] == "Redis"


async def test_meta_values_are_added_once_and_read_back(memory):
    key = "test_inspection_rows:mark"
    try:
        assert await meta_value(memory.db, key) is None
        await add_meta(memory.db, key, {"n": 10})
        await add_meta(memory.db, key, {"n": 20})  # the key holds a value already: kept
        assert await meta_value(memory.db, key) == {"n": 10}
    finally:
        async with memory.db.connection() as conn:
            await conn.execute("DELETE FROM z0_meta WHERE key = %s", [key])


async def test_analyze_database_refreshes_the_statistics(memory):
    await memory.scope("acme").facts.put("acme:stack:database", "Postgres", PROV)
    async with memory.db.connection() as conn:
        before = (await (await conn.execute(
            "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'z0_facts'")).fetchone())["analyze_count"]
    await analyze_database(memory.db)
    async with memory.db.connection() as conn:
        after = (await (await conn.execute(
            "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'z0_facts'")).fetchone())["analyze_count"]
    assert after == before + 1
