"""BM25 keyword search on the real database: exact scores on small scopes (the same ranking as the previous
one-statement BM25), the rarest-first candidates of large scopes, and the plan that chooses between them."""

from __future__ import annotations

import pytest
from test_memory_stats import sentences
from z0_memory.stores import bm25, search
from z0_memory.stores.bm25 import BM25_B, BM25_K1, bm25_plan, rarest_first_branches
from z0_memory.stores.memory_rows import COLUMNS as _COLUMNS
from z0_memory.stores.memory_rows import SCOPE_SQL
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.semantic import INSERT_SQL, NewMemory, row_params

pytestmark = pytest.mark.asyncio(loop_scope="session")

# The statement bm25_search ran before per-scope statistics (commit 6a36b40), with a pool larger than any test
# scope: exact BM25 over every OR match, the reference the new search must reproduce on small scopes (equal scores
# ordered as bm25_search orders them: newer first, then by id).
PREVIOUS_BM25_SQL = f"""
WITH lex AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(text)s))
), stats AS (
    SELECT count(*)::float8 AS n, greatest(avg(length(content_tsv)), 1)::float8 AS avgdl FROM {SEMANTIC_TABLE}
    WHERE {SCOPE_SQL}
), idf AS (
    SELECT l.lexeme, ln(1.0 + (s.n - d.df + 0.5) / (d.df + 0.5)) AS w
    FROM lex l CROSS JOIN stats s CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM {SEMANTIC_TABLE}
        WHERE {SCOPE_SQL} AND content_tsv @@ quote_literal(l.lexeme)::tsquery) d
), cand AS (
    SELECT id, created_at, content_tsv FROM {SEMANTIC_TABLE}, to_tsquery('english', %(q)s) AS q
    WHERE content_tsv @@ q AND {SCOPE_SQL} ORDER BY ts_rank_cd(content_tsv, q, 1) DESC LIMIT 100000
), scored AS (
    SELECT c.id, sum(i.w * t.tf * (%(k1)s::float8 + 1) / (t.tf + %(k1)s::float8 * (1 - %(b)s::float8
           + %(b)s::float8 * length(c.content_tsv) / s.avgdl))) AS score
    FROM cand c CROSS JOIN stats s
    CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
                        FROM unnest(c.content_tsv) u) t
    JOIN idf i ON i.lexeme = t.lexeme
    GROUP BY c.id, c.created_at ORDER BY score DESC, c.created_at DESC, c.id LIMIT %(k)s
)
SELECT {_COLUMNS}, scored.score FROM scored JOIN {SEMANTIC_TABLE} m USING (id)
ORDER BY scored.score DESC, m.created_at DESC, m.id
"""

async def previous_bm25(pm, query: str, k: int, *, include_history: bool = False) -> list[tuple[str, float]]:
    from z0_memory.text import or_tsquery, query_terms

    terms = query_terms(query)
    params = {**pm.semantic.scope.params, "q": or_tsquery(terms), "text": " ".join(terms), "all": include_history,
              "category": None, "k": k, "k1": BM25_K1, "b": BM25_B}
    async with pm.semantic.db.connection() as conn:
        rows = await (await conn.execute(PREVIOUS_BM25_SQL, params, prepare=False)).fetchall()
    return [(str(r["id"]), round(float(r["score"]), 9)) for r in rows]


async def test_small_scope_ranking_equals_the_previous_exact_bm25(memory):
    pm = memory.scope("acme")
    ids = await pm.semantic.add_many([NewMemory(t) for t in sentences(80)])
    await pm.semantic.supersede(ids[5])
    for query in ("Which cache does Alice use for billing?", "kafka queue latency alert", "Who restores the backup?",
                  "Carol tenant quota migration schema", "rollback release review", "login token session Erin"):
        for history in (False, True):
            expected = await previous_bm25(pm, query, 15, include_history=history)
            got = await pm.semantic.search_engine.bm25(query, 15, include_history=history)
            assert [(h.id, round(h.score, 9)) for h in got] == expected, (query, history)
            assert expected  # every query matches something


async def test_large_scope_finds_a_memory_that_only_a_rare_term_matches(memory):
    pm = memory.scope("acme")
    n = bm25.BM25_EXACT_DOCS + 400  # larger than the exact limit and the pool: the rarest-first path
    vector = await pm.semantic.embeddings.aembed_query("a note")  # one vector for all: only full text matters here
    rows = [row_params(pm.scope, NewMemory(t), vector) for t in sentences(n, seed=11)]
    needle = row_params(pm.scope, NewMemory("the zeppelin hangar lease"), vector)
    async with memory.db.connection() as conn, conn.transaction(), conn.cursor() as cur:
        await cur.executemany(INSERT_SQL, [*rows[: n // 2], needle, *rows[n // 2:]])
    query = "Which cache did Alice review for the zeppelin?"
    plan = await pm.semantic.search_engine.bm25_plan(query)
    assert plan.pool == bm25.BM25_POOL and plan.branches[0].startswith("'zeppelin'")
    hits = await pm.semantic.search_engine.bm25(query, 10)
    assert hits[0].id == needle["id"] == (await previous_bm25(pm, query, 1))[0][0]
    # without the rare word the pool fills from combinations of common words, heaviest first: as good as exact
    query = "cache queue review release Alice"
    assert (await pm.semantic.search_engine.bm25_plan(query)).pool == bm25.BM25_POOL
    exact = dict(await previous_bm25(pm, query, 100_000))
    got = await pm.semantic.search_engine.bm25(query, 10)
    assert sum(exact[h.id] for h in got) >= 0.99 * sum(sorted(exact.values(), reverse=True)[:10])


def _plan_row(lexeme: str, df: int | None, *, n: int, hits: int = 0, sample_n: int = 0) -> dict:
    return {"lexeme": lexeme, "n": n, "len": 10 * n, "df": df, "hits": hits, "sample_n": sample_n}


async def test_plan_is_exact_on_small_scopes_and_rarest_first_on_large_ones():
    small = bm25_plan([_plan_row("alic", 600, n=700), _plan_row("pottery", 2, n=700)], pool=500)
    assert small.pool is None and small.branches == ["'pottery' | 'alic'"]
    fits = bm25_plan([_plan_row("zeppelin", 3, n=100_000), _plan_row("hangar", 40, n=100_000)], pool=500)
    assert fits.pool is None  # every match fits in the pool: exact even at 100k
    large = bm25_plan([
        _plan_row("zeppelin", 3, n=100_000),
        _plan_row("cach", None, n=100_000, hits=50, sample_n=1000),  # ~5,000: common by the sample, not counted
        _plan_row("shop", None, n=100_000, hits=9, sample_n=1000),  # ~900 by the sample
        _plan_row("own", 600, n=100_000, hits=2, sample_n=1000),  # rare by the sample, so counted: exact
    ], pool=500)
    assert large.pool == 500 and large.branches[0] == "'zeppelin'"
    assert large.weights["zeppelin"] > large.weights["own"] > large.weights["shop"] > large.weights["cach"]
    assert large.branches[1:4] == ["'own' & 'shop' & 'cach'", "'own' & 'shop'", "'own' & 'cach'"]
    assert large.branches[-1] == "'cach'"
    assert bm25_plan([_plan_row("x", 0, n=10)], pool=500) is None


async def test_branches_stop_at_the_common_term_limit_and_escape_quotes():
    df = {"o'neil": 10.0, **{f"w{i}": 1000.0 + i for i in range(6)}}
    weights = {lex: 10.0 - i for i, lex in enumerate(df)}
    branches = rarest_first_branches(list(df), df, weights, pool=500)
    assert branches[0] == "'o''neil'"
    assert len(branches) == 1 + 2 ** bm25.BM25_COMMON_TERMS - 1
    assert all("w4" not in b and "w5" not in b for b in branches)  # the commonest only rescore


async def test_or_tsquery_keeps_quotes_and_backslashes_inside_their_operand(memory):
    from z0_memory.text import or_tsquery

    query = or_tsquery(["o'neil", "back\\slash"])
    assert query == "'o''neil' | 'back\\\\slash'"
    async with memory.db.connection() as conn:
        row = await (await conn.execute(
            "SELECT to_tsvector('english', %s) @@ to_tsquery('english', %s) AS hit, "
            "to_tsvector('english', 'nothing here') @@ to_tsquery('english', %s) AS miss",
            ["Ask O'Neil about it", query, query])).fetchone()
    assert row["hit"] and not row["miss"]


async def test_lexemes_in_nearly_every_memory_score_but_select_no_candidates():
    plan = bm25_plan([_plan_row("carolin", 690, n=700), _plan_row("research", 4, n=700)], pool=500)
    assert plan.branches == ["'research'"] and set(plan.weights) == {"carolin", "research"}
    assert plan.rest == "'carolin'" and plan.rest_bound == pytest.approx((bm25.BM25_K1 + 1) * plan.weights["carolin"])
    alone = bm25_plan([_plan_row("carolin", 690, n=700)], pool=500)
    assert alone.branches == ["'carolin'"] and alone.rest is None  # nothing else to select by
    assert bm25_plan([_plan_row("research", 4, n=700)], pool=500).rest is None


async def _scoring_plan(pm, query: str, k: int) -> str:
    params = bm25.bm25_params(pm.scope, query, False, bm25.BM25_POOL)
    async with pm.semantic.db.connection(pm.scope) as conn:
        scoring = await bm25.bm25_scoring(bm25.on_connection(conn), params, k)  # what the search itself runs with
        rows = await (await conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + bm25.BM25_SQL, scoring,
                                         prepare=False)).fetchall()
    return "\n".join(r["QUERY PLAN"] for r in rows)


async def test_memories_matching_only_a_universal_word_are_scored_only_when_they_can_rank(memory):
    pm = memory.scope("acme")
    await pm.semantic.add_many([NewMemory(f"Caroline: {t}") for t in sentences(40)]
                               + [NewMemory("Caroline: I researched adoption agencies last week"),
                                  NewMemory("Melanie: my research on pottery glazes is done")])
    query = "what did Caroline research"
    exact = await previous_bm25(pm, query, 100)
    assert len(exact) == 42
    for k in (1, 2, 5, 42, 100):  # the same ranking as exact BM25 at every depth
        assert [(h.id, h.score) for h in await pm.semantic.search_engine.bm25(query, k)] == [
            (i, pytest.approx(s)) for i, s in exact[:k]]
    # two memories say "research": the best two need no look at the 40 that only name Caroline, the best five do
    rest_scan = [line for line in (await _scoring_plan(pm, query, 2)).splitlines() if " on z0_memories r" in line]
    assert rest_scan and all("never executed" in line for line in rest_scan)
    rest_scan = [line for line in (await _scoring_plan(pm, query, 5)).splitlines() if " on z0_memories r" in line]
    assert rest_scan and not any("never executed" in line for line in rest_scan)


async def test_search_statements_stay_within_psycopgs_parse_cache():
    """psycopg re-parses a longer statement's placeholders on every execution (0.8 ms a hybrid search)."""
    from psycopg import _queries

    from z0_memory.stores.database import CACHED_STATEMENT_BYTES

    assert CACHED_STATEMENT_BYTES == getattr(_queries, "MAX_CACHED_STATEMENT_LENGTH", CACHED_STATEMENT_BYTES)
    for module, name in ((bm25, "BM25_PLAN_SQL"), (bm25, "BM25_SQL"), (bm25, "BM25_IDS_SQL"), (search, "DENSE_SQL"),
                         (search, "DENSE_IDS_SQL"), (search, "ROWS_SQL"), (search, "NEIGHBOR_SQL")):
        text = getattr(module, name)
        assert len(text.encode()) <= CACHED_STATEMENT_BYTES, name
        assert "--" not in text and "\n" not in text, name
