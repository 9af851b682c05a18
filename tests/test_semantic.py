"""Semantic memory on the real database: add, dense / keyword (English + Chinese) / hybrid search, filters,
supersede and delete."""

from __future__ import annotations

import pytest

from z0_memory.stores.semantic import NewMemory

pytestmark = pytest.mark.asyncio(loop_scope="session")

MEMORIES = [
    NewMemory("Alice prefers pnpm over npm for every package", category="tooling", kind="preference"),
    NewMemory("The API is deployed on Fly.io in the Frankfurt region", category="deploy", kind="fact"),
    NewMemory("我们决定使用 Supabase 作为主数据库", category="database", kind="decision"),
    NewMemory("Bob likes to review pull requests in the morning", category="people", kind="preference"),
    NewMemory("缓存层暂时不用 Redis，先用内存缓存", category="cache", kind="context"),
]


async def seeded(memory):
    acme = memory.scope("acme")
    ids = await acme.semantic.add_many(MEMORIES)
    return acme, ids


async def test_add_and_get_keep_metadata(memory):
    acme = memory.scope("acme")
    rec = await acme.semantic.add("Carol writes commit messages in English", category="people", kind="preference",
                                  confidence=0.8, source_ids=["m7"], metadata={"speaker": "Carol"})
    got = await acme.semantic.get(rec.id)
    assert got == rec
    assert (got.category, got.kind, got.confidence, got.source_ids, got.metadata["speaker"]) == (
        "people", "preference", pytest.approx(0.8), ["m7"], "Carol")
    assert got.superseded_at is None and got.created_at is not None


async def test_dense_search_finds_paraphrases(memory):
    acme, _ = await seeded(memory)
    hits = await acme.semantic.search("where is the service hosted?", 2)
    assert "Fly.io" in hits[0].content
    assert hits[0].score > hits[1].score and hits[0].strategy == "semantic"


async def test_keyword_search_english_and_chinese(memory):
    acme, _ = await seeded(memory)
    assert "Fly.io" in (await acme.semantic.keyword_search("deployed Frankfurt"))[0].content
    zh = await acme.semantic.keyword_search("数据库用的是什么")
    assert zh and "Supabase" in zh[0].content
    assert "Redis" in (await acme.semantic.keyword_search("Redis 缓存"))[0].content
    assert await acme.semantic.keyword_search("the of and") == []


async def test_chinese_query_reaches_english_memory_through_dense_or_hybrid(memory):
    acme, _ = await seeded(memory)
    hits = await acme.semantic.hybrid_search("谁喜欢用 pnpm", 3)
    assert any("pnpm" in h.content for h in hits)
    assert all(h.strategy == "hybrid" for h in hits)


async def test_category_filter_and_listing(memory):
    acme, _ = await seeded(memory)
    hits = await acme.semantic.search("preferences", 10, category="people")
    assert [h.category for h in hits] == ["people"]
    assert {r.kind for r in await acme.semantic.list(kind="preference")} == {"preference"}
    assert len(await acme.semantic.list()) == len(MEMORIES)


async def test_supersede_hides_unless_asked(memory):
    acme, ids = await seeded(memory)
    assert await acme.semantic.supersede(ids[4])
    assert not await acme.semantic.supersede(ids[4])
    assert all("Redis" not in h.content for h in await acme.semantic.hybrid_search("Redis cache", 10))
    old = await acme.semantic.keyword_search("Redis", include_superseded=True)
    assert old and old[0].superseded


async def test_delete_is_for_real(memory):
    acme, ids = await seeded(memory)
    assert await acme.semantic.delete([ids[0], "not-a-uuid"]) == 1
    assert await acme.semantic.get(ids[0]) is None
    for search in (acme.semantic.search, acme.semantic.keyword_search, acme.semantic.hybrid_search):
        assert all(h.id != ids[0] for h in await search("pnpm npm package", 10))
    assert await acme.semantic.count() == len(MEMORIES) - 1


@pytest.mark.parametrize("bad", [dict(content=""), dict(content="x", category="a b"),
                                 dict(content="x", kind="rumour"), dict(content="x", confidence=1.5)])
async def test_bad_memories_are_refused_and_nothing_is_written(memory, bad):
    acme = memory.scope("acme")
    with pytest.raises(ValueError):
        await acme.semantic.add_many([NewMemory("fine memory"), NewMemory(**bad)])
    assert await acme.semantic.count() == 0


async def test_context_is_searched_but_never_returned(memory):

    reply = "Jo: They were awestruck and humbled."
    question = "Ann: How did your kids react at the war memorial?"
    acme, bare = memory.scope("acme"), memory.scope("bare")
    [with_context, _] = await acme.semantic.add_many([NewMemory(reply, context=question),
                                                     NewMemory("Jo: The kids loved the science museum.")])
    [without] = await bare.semantic.add_many([NewMemory(reply)])
    # full text: the question's words find the reply they situate, and only there
    for search in (acme.semantic.keyword_search, lambda q, k: acme.semantic.search_engine.bm25(q, k)):
        hits = await search("kids react war memorial", 5)
        assert hits[0].id == with_context and hits[0].content == reply
    assert await bare.semantic.search_engine.bm25("war memorial", 5) == []
    # the embedding is of the content with its context: closer to the question than the bare reply's
    near = {h.id: h.score for h in await acme.semantic.search("how did the kids react at the war memorial", 2)}
    far = {h.id: h.score for h in await bare.semantic.search("how did the kids react at the war memorial", 1)}
    assert near[with_context] > far[without]
    # never returned: the record holds the content alone
    assert (await acme.semantic.get(with_context)).content == reply


@pytest.mark.parametrize("context,error", [("bad\x00byte", ValueError), (["not", "text"], TypeError)])
async def test_bad_context_is_refused(memory, context, error):
    acme = memory.scope("acme")
    with pytest.raises(error, match="context"):
        await acme.semantic.add_many([NewMemory("fine memory", context=context)])
    assert await acme.semantic.count() == 0


async def test_dense_search_has_the_rows_and_scores_of_pgvectorstore(memory):
    """The engine's dense search and langchain-postgres' PGVectorStore over the same table (``as_vectorstore``, the
    scope's LangChain view) find the same rows with the same scores."""
    acme, _ = await seeded(memory)
    await acme.semantic.add_many([NewMemory(f"Note {i}: the team met on day {i} to plan sprint {i % 4}")
                                  for i in range(40)])
    await memory.scope("other").semantic.add_many([NewMemory("Note 3: the team met to plan sprint 3 elsewhere")])
    view = acme.semantic.as_vectorstore()
    for query in ("where is the service hosted?", "sprint planning meeting", "谁喜欢用 pnpm"):
        ours = await acme.semantic.search_engine.dense(query, 10)
        theirs = await view.asimilarity_search_with_score(query, k=10)
        assert [h.id for h in ours] == [doc.id for doc, _ in theirs]
        assert [h.score for h in ours] == pytest.approx([1.0 - d for _, d in theirs], abs=1e-6)
        assert await acme.semantic.search(query, 10) == ours
        assert all(a.score >= b.score for a, b in zip(ours, ours[1:]))


async def _planner_rows(memory) -> float:
    async with memory.db.connection() as conn:
        row = await (await conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'z0_memories'::regclass")).fetchone()
    return row["reltuples"]


def _batch(n: int, start: int = 0) -> list[NewMemory]:
    return [NewMemory(f"Imported turn {i}: we talked about topic {i % 9}") for i in range(start, start + n)]


async def test_a_bulk_add_refreshes_the_planner_statistics_at_once(memory):
    """Imported and queried at once: the planner must not plan the queries for an empty table."""
    from z0_memory.stores.semantic import ANALYZE_MIN_ROWS

    acme = memory.scope("acme")
    assert await _planner_rows(memory) < 0  # a new (truncated) table was never analyzed
    await acme.semantic.add_many(_batch(ANALYZE_MIN_ROWS + 1))
    assert await _planner_rows(memory) == ANALYZE_MIN_ROWS + 1
    await acme.semantic.add_many(_batch(3, start=100))  # small next to what the statistics know: autovacuum's job
    assert await _planner_rows(memory) == ANALYZE_MIN_ROWS + 1
    assert await acme.semantic.count() == ANALYZE_MIN_ROWS + 4


async def test_a_bulk_add_does_not_wait_for_a_table_another_session_is_analyzing(memory):
    import asyncio

    acme = memory.scope("acme")
    async with memory.db.connection() as other, other.transaction():
        # what a running VACUUM or ANALYZE holds; inserts go on, a second ANALYZE would wait for it
        await other.execute("LOCK TABLE z0_memories IN SHARE UPDATE EXCLUSIVE MODE")
        ids = await asyncio.wait_for(acme.semantic.add_many(_batch(80)), timeout=60)
    assert len(ids) == 80 and await acme.semantic.count() == 80
    assert await _planner_rows(memory) < 0  # skipped, not waited for


async def test_loop_hybrid_search_is_the_fusion_of_its_two_halves(memory):
    """hybrid_search ranks each half by id and reads only the fused rows: the same hits, scores and tie order as
    fusing the full-row keyword and dense searches."""
    from datetime import UTC, datetime, timedelta

    from z0_memory.stores.search import DENSE_WEIGHT, HYBRID_DEPTH, KEYWORD_WEIGHT, RRF_K, rrf_fuse

    acme, ids = await seeded(memory)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    await acme.semantic.add_many([
        NewMemory(f"Note {i}: the team met on day {i} to plan sprint {i % 4} and the {('Redis', 'pnpm')[i % 2]} work",
                  created_at=start + timedelta(days=i)) for i in range(70)])
    await acme.semantic.supersede(ids[1])
    cases = [
        ("sprint planning with Redis", False, None, None),
        ("where is the API deployed?", True, None, None),  # history: the superseded memory may come back
        ("sprint 2 meeting", False, start + timedelta(days=10), start + timedelta(days=30)),
        ("谁喜欢用 pnpm", False, None, None),
        ("the of and", False, None, None),  # no searchable term: dense only
    ]
    for query, history, since, until in cases:
        ours = await acme.semantic.search_engine.hybrid(query, 12, include_history=history, since=since, until=until)
        engine = acme.semantic.search_engine
        halves = [await search(query, HYBRID_DEPTH, include_history=history, since=since, until=until)
                  for search in (engine.bm25, engine.dense)]
        expected = rrf_fuse(halves, 12, "hybrid", weights=[KEYWORD_WEIGHT, DENSE_WEIGHT], rrf_k=RRF_K)
        assert ours, query
        assert [(h.id, h.score, h.content, h.metadata, h.created_at, h.superseded, h.strategy) for h in ours] == [
            (h.id, h.score, h.content, h.metadata, h.created_at, h.superseded, h.strategy) for h in expected], query
        if since is not None:
            assert all(since <= h.created_at < until for h in ours)


async def test_filtered_hnsw_scans_return_every_row_asked_for(memory):
    """Pooled connections scan HNSW iteratively: with the index chosen, a search for more rows than ef_search
    in a scope that holds a third of the table still gets all of them."""
    from z0_memory.stores.database import HNSW_EF_SEARCH
    from z0_memory.stores.search import DENSE_SQL as _DENSE_SQL
    from z0_memory.stores.search import HYBRID_DEPTH
    from z0_memory.stores.vectors import VectorParam

    assert HNSW_EF_SEARCH >= HYBRID_DEPTH  # a round's searches fit in one pass of the index

    acme = memory.scope("acme")
    await acme.semantic.add_many([NewMemory(f"Acme note {i} about topic {i % 7}") for i in range(70)])
    await memory.scope("other").semantic.add_many([NewMemory(f"Other note {i} about {i % 5}") for i in range(140)])
    vector = await acme.semantic.embeddings.aembed_query("a note about a topic")
    params = {**acme.semantic.scope.params, "v": VectorParam(vector), "all": False, "k": 65, "since": None,
              "until": None, "category": None}
    async with memory.db.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_seqscan = off")
        await conn.execute("SET LOCAL enable_bitmapscan = off")
        await conn.execute("SET LOCAL enable_sort = off")
        plan = "\n".join(r["QUERY PLAN"] for r in await (await conn.execute("EXPLAIN " + _DENSE_SQL, params)).fetchall())
        assert "z0_memories_hnsw" in plan
        rows = await (await conn.execute(_DENSE_SQL, params)).fetchall()
    assert len(rows) == 65 and all(r["project"] == "acme" for r in rows)
    distances = [r["distance"] for r in rows]
    assert distances == sorted(distances)


async def test_search_statements_are_prepared_and_planned_for_each_search(memory):
    """Searches skip parsing (prepared statements) but never rank with a generic plan: a scope's size decides between
    an index and a scan, and one plan for every project would be wrong for most of them. The hybrid search's read of
    its fused rows by primary key is the one statement with a generic plan (the same lookup at any scope size)."""
    from z0_memory.stores.search import ROWS_SQL

    rows_read = ROWS_SQL.split(" WHERE ")[0]  # as Postgres keeps it, with $n placeholders further on
    acme, _ = await seeded(memory)
    for i in range(8):
        await acme.semantic.search_engine.hybrid(f"where is the API deployed {i}?", 3)
    async with memory.db.connection() as conn:
        assert (await (await conn.execute("SHOW plan_cache_mode")).fetchone())["plan_cache_mode"] == "force_custom_plan"
    seen = []
    for _ in range(memory.db.pool_max_size):  # the pooled connections the searches used
        async with memory.db.connection() as conn:
            seen += await (await conn.execute(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements "
                "WHERE statement ~ '^(SELECT|WITH) ' AND statement LIKE %s AND cardinality(parameter_types) > 0",
                ["%z0_memories%"], prepare=False)).fetchall()
    assert sum(r["custom_plans"] for r in seen) >= 8
    assert [r["statement"][:80] for r in seen if r["generic_plans"] and not r["statement"].startswith(rows_read)] == []
    assert sum(r["generic_plans"] for r in seen if r["statement"].startswith(rows_read)) >= 8


async def test_the_scopes_langchain_vectorstore_and_retriever(memory):
    acme, _ = await seeded(memory)
    await memory.scope("other").semantic.add("Other's service is hosted on Render in Oregon")
    view = acme.semantic.as_vectorstore()
    docs = await view.asimilarity_search("where is the service hosted?", k=10)
    assert docs and all(d.metadata["project"] == "acme" for d in docs)
    retrieved = await view.as_retriever(search_kwargs={"k": 2}).ainvoke("where is the service hosted?")
    assert len(retrieved) == 2 and all(d.metadata["project"] == "acme" for d in retrieved)
    assert "Fly.io" in retrieved[0].page_content


async def test_a_confirmation_counts_each_statement_once_and_cites_it(memory):
    """Said again by new messages: counted, and those messages cited; by messages it already cites (a turn
    extracted again after its writes failed half way): not counted twice."""
    acme = memory.scope("acme")
    rec = await acme.semantic.add("Deploys happen on Tuesdays after the standup", source_ids=["m1"])
    assert await acme.semantic.confirm(rec.id, ["m1"]) == 1  # the statement it came from
    assert await acme.semantic.confirm(rec.id, ["m4"]) == 2
    assert await acme.semantic.confirm(rec.id, ["m4"]) == 2  # the same turn again
    assert await acme.semantic.confirm(rec.id, ["m1", "m9"]) == 3  # one new message is a new statement
    assert (await acme.semantic.get(rec.id)).source_ids == ["m1", "m4", "m9"]
    assert await acme.semantic.confirm(rec.id) == 4  # no messages named: counted
    assert await memory.scope("other").semantic.confirm(rec.id, ["m5"]) == 0  # another scope's memory


async def test_add_or_confirm_of_the_same_statement_twice_adds_once_and_counts_once(memory):
    acme = memory.scope("acme")
    said = NewMemory("Feature flags live in LaunchDarkly, not in env vars", source_ids=["m2"])
    first = await acme.semantic.add_or_confirm(said, lambda hit: True)
    again = await acme.semantic.add_or_confirm(said, lambda hit: True)
    assert first[0] == "added" and again[:2] == ("confirmed", first[1])
    got = await acme.semantic.get(first[1])
    assert got.metadata.get("confirmations", 1) == 1 and got.source_ids == ["m2"]
