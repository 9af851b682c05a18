"""Concurrency on the real database: 8 sessions x 200 writes over one pool (max 10 connections).

Embeddings are the deterministic ``hash`` model on a scratch database (``reliability_support``): what the texts
mean does not matter here, and the multilingual model would spend minutes embedding 1,600 fact versions.

Proves: no lost write (every put is a version or a confirmation, counted exactly), history complete and ordered
(versions 1..N contiguous, each valid_to equal to the next valid_from, one current version and one live mirror per
key), no duplicate rows, no deadlock (every gather is bounded by a timeout); pending confirmations under concurrency
count once each, and concurrent promotions of one pending item happen once.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict

import pytest
from reliability_support import fast_database, fast_memory, fast_owner, record  # noqa: F401

from z0_memory.schemas import Candidate, Provenance
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.writes import gate_and_write, promote

pytestmark = pytest.mark.asyncio(loop_scope="session")

SESSIONS = 8
WRITES = 200
KEYS = [f"acme:stack:shared_{i}" for i in range(4)]  # every session writes all four keys
DEADLINE_S = 240


def planned_value(session: int, write: int) -> str:
    # about a third of the writes repeat the current value of another session (confirmations), the rest are new
    return f"v{(session * 7 + write) % 3}" if write % 3 == 0 else f"s{session}-w{write}"


async def test_8_sessions_x_200_writes_lose_nothing_and_keep_ordered_history(fast_memory):
    assert fast_memory.db.pool_max_size == 10
    pm = fast_memory.scope("acme")
    done: dict[int, list[tuple[str, str, str]]] = defaultdict(list)  # session -> (key, value, action)

    async def session(i: int) -> None:
        for j in range(WRITES):
            key = KEYS[(i + j) % len(KEYS)]
            value = planned_value(i, j)
            write = await pm.facts.put(key, value, Provenance(thread_id=f"session-{i}", extractor="test",
                                                              rationale=f"write {j} of session {i}"))
            done[i].append((key, value, write.action))

    await asyncio.wait_for(asyncio.gather(*(session(i) for i in range(SESSIONS))), DEADLINE_S)
    puts = Counter(key for writes in done.values() for key, _, _ in writes)
    assert sum(puts.values()) == SESSIONS * WRITES

    lost = 0
    for key in KEYS:
        history = await pm.facts.history(key)
        # complete and ordered: versions 1..N, contiguous validity, exactly one current version at the end
        assert [v.version for v in history] == list(range(1, len(history) + 1))
        for older, newer in zip(history, history[1:], strict=False):
            assert older.valid_to == newer.valid_from and older.valid_from <= newer.valid_from
        assert [v.is_current for v in history] == [False] * (len(history) - 1) + [True]
        # no lost write: every put is either a version or a confirmation of one
        assert sum(v.confirmations for v in history) == puts[key]
        stored = {v.value for v in history}
        written = {value for writes in done.values() for k, value, _ in writes if k == key}
        lost += len(written - stored)
        # each session's own writes to this key appear in the order it made them
        for i, writes in done.items():
            own = [v.version for v in history if v.provenance.thread_id == f"session-{i}"]
            assert own == sorted(own)
    assert lost == 0

    async with fast_memory.db.connection() as conn:
        dup = await (await conn.execute(
            "SELECT count(*) AS n FROM (SELECT 1 FROM z0_facts GROUP BY project, user_id, category, entity, version "
            "HAVING count(*) > 1) d")).fetchone()
        mirrors = await (await conn.execute(
            f"SELECT fact_key, count(*) AS n, count(*) FILTER (WHERE superseded_at IS NULL) AS live "
            f"FROM {SEMANTIC_TABLE} WHERE project = 'acme' GROUP BY fact_key")).fetchall()
        versions = await (await conn.execute(
            "SELECT category || ':' || entity AS k, count(*) AS n FROM z0_facts GROUP BY 1")).fetchall()
    assert dup["n"] == 0
    per_key = {f"acme:{r['k']}": r["n"] for r in versions}
    assert {r["fact_key"]: (r["n"], r["live"]) for r in mirrors} == {k: (per_key[k], 1) for k in KEYS}
    record("concurrency.facts", operations=SESSIONS * WRITES, lost=lost)


async def test_same_memory_written_concurrently_is_one_row(fast_memory):
    pm = fast_memory.scope("acme")
    said = Candidate(kind="preference", content="Alice prefers tabs over spaces in every repository",
                     confidence=0.9)
    outs = await asyncio.wait_for(asyncio.gather(*(
        gate_and_write(pm, said, Provenance(thread_id=f"t{i}"), threshold=0.7) for i in range(SESSIONS * 4))), 60)
    actions = Counter(o.action for o in outs)
    assert actions == {"memory_added": 1, "memory_confirmed": SESSIONS * 4 - 1}
    [row] = await pm.semantic.list()
    assert row.metadata["confirmations"] == SESSIONS * 4
    record("concurrency.semantic_dedup", operations=SESSIONS * 4)


async def test_pending_confirmations_under_concurrency_count_once_each(fast_memory):
    pm = fast_memory.scope("acme")
    hedge = Candidate(kind="decision", key="acme:database:cache", value="Redis", content="maybe Redis for the cache",
                      confidence=0.3, hedged=True)

    async def session(i: int) -> list[str]:
        return [(await gate_and_write(pm, hedge, Provenance(thread_id=f"s{i}"), threshold=0.7)).action
                for _ in range(25)]

    results = await asyncio.wait_for(asyncio.gather(*(session(i) for i in range(SESSIONS))), 120)
    actions = Counter(a for r in results for a in r)
    assert actions == {"pending_created": 1, "pending_confirmed": SESSIONS * 25 - 1}
    [item] = await pm.pending.list(include_expired=True)
    assert item.confirmations == SESSIONS * 25
    assert await pm.facts.list() == []  # hedges alone never became a decision
    record("concurrency.pending_confirmations", operations=SESSIONS * 25)


async def test_concurrent_promotions_of_one_pending_item_happen_once(fast_memory):
    pm = fast_memory.scope("acme")
    hedge = Candidate(kind="decision", key="acme:database:cache", value="Redis", content="maybe Redis for the cache",
                      confidence=0.3, hedged=True)
    item = (await pm.pending.add(hedge, Provenance())).item
    # humans promoting the same item from several places at once
    outs = await asyncio.wait_for(asyncio.gather(*(
        promote(pm, item.id, Provenance(extractor="human")) for _ in range(SESSIONS))), 60)
    assert sum(o is not None for o in outs) == 1
    [fact] = await pm.facts.history("acme:database:cache")
    assert (fact.value, fact.confirmations) == ("Redis", 1)
    assert await pm.pending.list(include_expired=True) == []

    # turns confirming a waiting item at once: one promotion, the rest confirm the promoted fact
    await pm.facts.forget("acme:database:cache", include_history=True)
    item = (await pm.pending.add(hedge, Provenance())).item
    confirm = Candidate(kind="decision", key="acme:database:cache", value="Redis", confidence=0.9, confirms=True,
                        content="yes, go with Redis for the cache")
    outs = await asyncio.wait_for(asyncio.gather(*(
        gate_and_write(pm, confirm, Provenance(thread_id=f"t{i}"), threshold=0.7, pending_id=item.id)
        for i in range(SESSIONS))), 60)
    assert Counter(o.action == "promoted" for o in outs)[True] == 1
    [fact] = await pm.facts.history("acme:database:cache")
    assert fact.confirmations == SESSIONS and await pm.pending.list(include_expired=True) == []
    record("concurrency.promotions", operations=2 * SESSIONS + 2)


async def test_concurrent_hybrid_searches_never_starve_a_small_pool(fast_memory):
    """Each hybrid search runs BM25 and dense search on two connections at once; many more searches than the pool
    has connections must all finish (none may hold one connection while it waits for another)."""
    from z0_memory.memory import Z0Memory
    from z0_memory.stores.semantic import NewMemory

    memory = Z0Memory(fast_memory.settings.replace(database_url=fast_memory.db.url))
    memory.db.pool_max_size = 2
    memory.db.connection_timeout = 10.0
    async with memory:
        pm = memory.scope("acme")
        await pm.semantic.add_many([NewMemory(f"Note {i}: the team chose tool {i % 5} for job {i}") for i in range(30)])
        queries = [f"which tool for job {i}?" for i in range(12)]
        results = await asyncio.wait_for(asyncio.gather(*(pm.semantic.search_engine.hybrid(q, 5) for q in queries)), 60)
    assert all(len(hits) == 5 for hits in results)
