"""Named search recipes: what a retrieval round can run, by name (the rewrite step switches between them).

``kv_exact``    the current value of one key (and, for history questions, every older version)
``kv_prefix``   the facts of one project or category
``semantic``    dense similarity (pgvector, through PGVectorStore)
``keyword``     BM25 over Postgres full text (English stemming and segmented Chinese, any term may match)
``hybrid``      reciprocal-rank fusion of keyword and semantic at equal weights. It feeds the loop, which re-scores
                the fused candidates by the question's terms, so the dense half's job is recall (paraphrases BM25
                cannot match), not order. Alone, equal weights rank below BM25 on LoCoMo (recall@10 0.645 vs
                0.699); in the loop they beat dense at weight 0.3 (0.800 vs 0.780) on both halves of the split

Besides the recipes, :func:`expand_neighbors` adds the turn that follows a retrieved question in the same
conversation session (metadata ``session`` / ``turn``); the loop applies it to every round.
The dense and BM25 searches are plain SQL rather than ``PGVectorStore`` calls: the same rows, but a round costs
a few milliseconds instead of tens, which matters when the loop runs several rounds per question.

Each returns :class:`~z0_memory.schemas.Hit` lists, best first. KV hits carry the id of the fact version's semantic
mirror row, so the same version found by two recipes is one piece of evidence.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import (
    CONVERSATION_GROUP_KEY,
    CONVERSATION_ORDER_KEY,
    FactVersion,
    Hit,
    conversation_position,
)
from z0_memory.stores.database import statement
from z0_memory.stores.facts import mirror_id, mirror_text
from z0_memory.stores.schema import CONTEXT_TERM_WEIGHT, SEMANTIC_TABLE, STATS_TABLE
from z0_memory.stores.semantic import _COLUMNS, _record, hit_from_record, rrf_ranking
from z0_memory.stores.vectors import VectorParam
from z0_memory.text import or_tsquery, query_terms, tsquery_lexeme

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory

SUPERSEDED_WEIGHT = 0.35
RECENCY_HALF_LIFE_DAYS = 180.0
RECENCY_WEIGHT = 0.1
BM25_K1 = 1.2
BM25_B = 0.3
BM25_POOL = 250  # candidates scored in a large scope: 5x a hybrid round's depth (500 scored no better, 4 ms slower)
BM25_EXACT_DOCS = 2000  # scopes up to this size score every OR match that can rank, with exact frequencies
BM25_SAMPLE_ROWS = 1000  # scope rows in the page sample that estimates common lexemes' frequencies
BM25_SAMPLE_SCAN = 20_000  # at most this many table rows read by the sample (other scopes share the pages)
BM25_SAMPLE_MIN = 200  # fewer sampled scope rows than this: no estimate, common lexemes get the cap
BM25_SAMPLE_SEED = 0  # REPEATABLE seed: the same table gives the same sample, so rankings are reproducible
BM25_COMMON_TERMS = 4  # common lexemes combined into candidate branches (2^4 - 1 combinations at most)
# In exact BM25, a lexeme found in more than this share of the scope (IDF < 0.11: a speaker's name, which every
# imported turn's context carries) does not select candidates: a memory that matches nothing else scores next to
# nothing and is scored only when it could still rank among the best k (``Bm25Plan.rest_bound``). Scoring every
# such memory was most of a search: on LoCoMo the whole conversation, for any question that names a speaker.
BM25_SELECTIVE_SHARE = 0.9
HYBRID_DEPTH = 50
HYBRID_RRF_K = 20
KEYWORD_WEIGHT = 1.0
DENSE_WEIGHT = 1.0
NEIGHBOR_ANCHORS = 5
NEIGHBOR_DECAY = 0.95
_SCOPE_SQL = "project = %(project)s AND user_id = %(user_id)s AND (%(all)s OR superseded_at IS NULL)"
# A search limited to a period (the question named one): candidates created in [since, until); either may be open.
_PERIOD_SQL = ("(%(since)s::timestamptz IS NULL OR created_at >= %(since)s::timestamptz) "
               "AND (%(until)s::timestamptz IS NULL OR created_at < %(until)s::timestamptz)")


@dataclass(frozen=True)
class SearchRequest:
    query: str
    k: int = 10
    include_history: bool = False
    key: str | None = None
    prefix: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def fact_hit(pm: ProjectMemory, fact: FactVersion, score: float, strategy: str) -> Hit:
    return Hit(
        id=mirror_id(pm.scope, fact.key, fact.version), source="kv",
        content=mirror_text(fact.key, fact.value, fact.provenance.rationale, fact.statement), score=score, kind="fact",
        category=fact.key.category, key=str(fact.key), confidence=fact.provenance.confidence,
        created_at=fact.valid_from, superseded=not fact.is_current, rationale=fact.provenance.rationale,
        strategy=strategy, metadata={"value": fact.value, "version": fact.version,
                                     "thread_id": fact.provenance.thread_id},
    )


async def kv_exact(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    if not req.key:
        return []
    try:
        key = pm.scope.key(req.key)
    except InvalidKeyError:
        return []
    if req.include_history:
        versions = await pm.facts.history(key)
        return [fact_hit(pm, v, 1.0 if v.is_current else 0.9, "kv_exact") for v in reversed(versions)]
    fact = await pm.facts.get(key)
    return [fact_hit(pm, fact, 1.0, "kv_exact")] if fact else []


async def kv_prefix(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    if not req.prefix:
        return []
    parts = req.prefix.split(":")
    if parts[0] != pm.scope.project or len(parts) > 2:
        return []
    facts = await pm.facts.list(parts[1] if len(parts) == 2 else None, include_superseded=req.include_history)
    return [fact_hit(pm, f, 0.8 if f.is_current else 0.7, "kv_prefix") for f in facts][: req.k]


# The distance is computed once and ordered by its name (still the HNSW index's ``embedding <=> vector`` order): a
# score of ``1 - distance`` in the select list beside ``ORDER BY embedding <=> vector`` made Postgres compute every
# distance twice, de-TOASTing each 512-dim vector twice (6.4 instead of 8.4 ms for 50 of 419 turns). HNSW scans run
# iteratively in relaxed order (``database.SESSION_SETTINGS``): the rows are sorted again, by ``distance + 0`` since
# the planner takes the index scan's order as given for ``distance`` itself.
_DENSE_RANKED = f"""embedding <=> %(v)s::vector AS distance FROM {SEMANTIC_TABLE}
WHERE {_SCOPE_SQL} AND {_PERIOD_SQL} ORDER BY distance LIMIT %(k)s"""
_DENSE_SQL = statement(f"SELECT * FROM (SELECT {_COLUMNS}, {_DENSE_RANKED}) d ORDER BY distance + 0")
_DENSE_IDS_SQL = statement(f"SELECT * FROM (SELECT id, {_DENSE_RANKED}) d ORDER BY distance + 0")
_ROWS_SQL = statement(f"SELECT {_COLUMNS} FROM {SEMANTIC_TABLE} WHERE id = ANY(%(ids)s::uuid[]) AND {_SCOPE_SQL}")


async def dense_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False,
                       query_vector: Sequence[float] | None = None, since: datetime | None = None,
                       until: datetime | None = None) -> list[Hit]:
    """Cosine similarity over the semantic table (pgvector; HNSW or an exact scan, as the planner prefers).

    Same rows and scores as ``SemanticStore.search`` (PGVectorStore), in one plain statement: about 2 ms instead of
    7 on a conversation of 700 turns, which matters when a loop runs several rounds per question. ``since`` /
    ``until`` keep memories created in that period only.
    """
    rows = await _dense_rows(pm, _DENSE_SQL, query, k, include_history, query_vector, since, until)
    return [hit_from_record(_record(row), 1.0 - float(row["distance"]), "semantic") for row in rows]


async def _dense_rows(pm: ProjectMemory, sql: str, query: str, k: int, include_history: bool,
                      query_vector: Sequence[float] | None, since: datetime | None,
                      until: datetime | None) -> list[dict]:
    if query_vector is None:
        query_vector = await pm.semantic.embeddings.aembed_query(query)
    params = {**pm.semantic.scope.params, "v": VectorParam(query_vector), "all": include_history, "k": k,
              "since": since, "until": until}
    async with pm.semantic.db.connection(pm.semantic.scope) as conn:
        return await (await conn.execute(sql, params)).fetchall()


async def hybrid_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False,
                        since: datetime | None = None, until: datetime | None = None) -> list[Hit]:
    """BM25 and dense search, fused by weighted reciprocal rank (:func:`~z0_memory.stores.semantic.rrf_ranking`).

    Each half ranks its best ``HYBRID_DEPTH`` by id only, and the k fused memories are read afterwards: parsing
    both halves' full rows (100 to keep 20) was a sixth of a round. The dense half (query embedding in a worker
    thread, then pgvector on its own pooled connection) runs while BM25 runs.
    """
    depth = max(k, HYBRID_DEPTH)
    period = {"since": since, "until": until}
    dense = asyncio.ensure_future(_dense_rows(pm, _DENSE_IDS_SQL, query, depth, include_history, None, **period))
    try:
        # BM25's connection goes back before the dense half is awaited: a search holding one connection while it
        # waits for another would deadlock a pool that every concurrent search has emptied that way
        async with pm.semantic.db.connection(pm.semantic.scope) as conn:
            sparse = await _bm25_rows(conn, pm, _BM25_IDS_SQL, query, depth, include_history, **period)
        ranked = rrf_ranking([[str(row["id"]) for row in sparse], [str(row["id"]) for row in await dense]], k,
                             weights=[KEYWORD_WEIGHT, DENSE_WEIGHT], rrf_k=HYBRID_RRF_K)
    finally:
        settle(dense)
    if not ranked:
        return []
    async with pm.semantic.db.connection(pm.semantic.scope) as conn:
        rows = await (await conn.execute(_ROWS_SQL, {**pm.semantic.scope.params, "all": include_history,
                                                     "ids": [i for i, _ in ranked]})).fetchall()
    by_id = {str(row["id"]): row for row in rows}
    # a memory deleted between the ranking and the read is left out
    return [hit_from_record(_record(by_id[i]), score, "hybrid") for i, score in ranked if i in by_id]


def settle(task: asyncio.Future) -> None:
    """Leave no background work behind a search that failed: cancel the task, or consume its error."""
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


async def semantic(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await dense_search(pm, req.query, req.k, include_history=req.include_history, since=req.since,
                              until=req.until)


_CAND_COLUMNS = ", ".join(f"m.{column}" for column in _COLUMNS.split(", "))
_BM25_PLAN_SQL = statement(f"""
WITH s AS (
    SELECT CASE WHEN %(all)s THEN docs ELSE current_docs END AS n,
           CASE WHEN %(all)s THEN doc_len ELSE current_len END AS len
    FROM {STATS_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s
), lex AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(text)s))
), sample AS MATERIALIZED (
    SELECT content_tsv FROM {SEMANTIC_TABLE} TABLESAMPLE SYSTEM ((
        SELECT CASE WHEN s.n > %(exact_docs)s THEN least(100, 100.0 * %(sample_rows)s / s.n,
                    100.0 * %(sample_scan)s / greatest(c.reltuples, s.n)) ELSE 0 END
        FROM s, pg_class c WHERE c.oid = '{SEMANTIC_TABLE}'::regclass
    )) REPEATABLE (%(seed)s) WHERE {_SCOPE_SQL}
), est AS MATERIALIZED (  -- inlined, each use of hits / sample_n below re-ran its count over the sample
    SELECT l.lexeme, (SELECT count(*) FROM sample) AS sample_n,
           (SELECT count(*) FROM sample WHERE content_tsv @@ quote_literal(l.lexeme)::tsquery) AS hits
    FROM lex l
)
SELECT e.lexeme, s.n, s.len, e.sample_n, e.hits,
       CASE WHEN s.n <= %(exact_docs)s OR e.sample_n < %(sample_min)s OR e.hits * s.n <= %(pool)s * e.sample_n THEN (
           SELECT count(*) FROM {SEMANTIC_TABLE}  -- no LIMIT: a LIMIT makes the planner gamble on a seq scan
           WHERE {_SCOPE_SQL} AND content_tsv @@ quote_literal(e.lexeme)::tsquery
       ) END AS df
FROM est e CROSS JOIN s
""")


def _bm25_scored(rows: str) -> str:
    """BM25 scores of ``rows`` (a CTE of id, created_at, content_tsv): id, created_at, score; a row no query lexeme
    matches has none. tf: the query lexemes' content positions (weight A) count 1, their context positions (D)
    count less; ts_filter/setweight keep the query lexemes of each part (unnesting every lexeme cost 4 ms a LoCoMo
    round). The unnest is in the select list and the sum a grouping: a lateral subquery per row (a function scan
    and an aggregate each) cost a fifth more."""
    return f"""SELECT id, created_at, sum((%(weights)s::float8[])[array_position(%(lexemes)s::text[], lexeme)] * tf
        * (%(k1)s::float8 + 1) / (tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * len / %(avgdl)s::float8)))
        AS score
    FROM (
        SELECT id, created_at, len, (t).lexeme, cardinality((t).weights) - (1 - %(context_weight)s::float8)
               * cardinality(array_positions((t).weights, 'D')) AS tf
        FROM (
            SELECT id, created_at, length(content_tsv) AS len,
                   unnest(setweight(ts_filter(setweight(ts_filter(content_tsv, '{{a}}'), 'B', %(lexemes)s::text[]), '{{b}}'), 'A')
                          || setweight(ts_filter(setweight(ts_filter(content_tsv, '{{d}}'), 'B', %(lexemes)s::text[]), '{{b}}'), 'D')) AS t
            FROM {rows}
        ) u
    ) v GROUP BY id, created_at"""


# Both the best k and the final list, by their output columns. Equal scores: the newer memory first, then the id.
_BM25_ORDER = "score DESC, created_at DESC, id"
# The candidates (``cand``: id, created_at and content_tsv only; the k kept rows are read at the end), the best k of
# them (``best``), the memories only universal lexemes match (``rest``), and every scored memory (``ranked``).
_BM25_CTES = f"""
cand AS MATERIALIZED (  -- the candidates' rows are read once, here
    SELECT DISTINCT ON (c.id) c.* FROM (
        SELECT m.* FROM unnest(%(branches)s::tsquery[]) AS b(q)
        CROSS JOIN LATERAL (
            SELECT id, created_at, content_tsv FROM {SEMANTIC_TABLE}
            WHERE {_SCOPE_SQL} AND {_PERIOD_SQL} AND content_tsv @@ b.q OFFSET 0
        ) m  -- OFFSET 0 keeps it a per-branch (GIN) scan: branches fill the pool in order; a LIMIT here would let
             -- the planner pick a seq scan betting on finding the rows early, ruinous for a rare branch
        LIMIT %(pool)s
    ) c
), best AS MATERIALIZED (
    SELECT * FROM ({_bm25_scored("cand")}) s ORDER BY {_BM25_ORDER} LIMIT %(k)s
), rest AS MATERIALIZED (  -- the memories only universal lexemes match, read only when one of them could still
    SELECT id, created_at, content_tsv FROM {SEMANTIC_TABLE} r  -- rank among the best k (a one-time filter)
    WHERE (SELECT count(*) < %(k)s OR min(score) <= %(rest_bound)s FROM best)
      AND {_SCOPE_SQL} AND {_PERIOD_SQL} AND content_tsv @@ %(rest)s::tsquery
      AND NOT EXISTS (SELECT 1 FROM cand c WHERE c.id = r.id)
), ranked AS (
    SELECT * FROM best UNION ALL {_bm25_scored("rest")}
)"""
_BM25_SQL = statement(f"""
WITH {_BM25_CTES}
SELECT {_CAND_COLUMNS}, r.score FROM (SELECT * FROM ranked ORDER BY {_BM25_ORDER} LIMIT %(k)s) r
JOIN {SEMANTIC_TABLE} m ON m.id = r.id
ORDER BY {_BM25_ORDER}
""")
_BM25_IDS_SQL = statement(f"WITH {_BM25_CTES} SELECT id FROM ranked ORDER BY {_BM25_ORDER} LIMIT %(k)s")


@dataclass(frozen=True)
class Bm25Plan:
    """What the scoring statement needs: the scope's mean length, each query lexeme's IDF, the candidate branches
    (tsqueries, in the order their matches fill the pool), the pool size (``None``: every match is scored), and in
    exact BM25 the lexemes that select no candidates (:data:`BM25_SELECTIVE_SHARE`) as one tsquery: their other
    matches are scored only when one could reach the top k, that is when the k-th best score is at most
    ``rest_bound``, the most such a memory can score (each lexeme's weight times ``k1 + 1``, BM25's limit)."""

    avgdl: float
    weights: dict[str, float]
    branches: list[str]
    pool: int | None
    rest: str | None = None
    rest_bound: float = 0.0


def bm25_idf(n: float, df: float) -> float:
    """Okapi BM25's inverse document frequency (the "+1" variant: never negative, even for a word in every memory)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def document_frequency(row: dict, pool: int) -> float:
    """A lexeme's document frequency from the plan statement's row: exact when it was counted, else estimated.

    In a scope larger than :data:`BM25_EXACT_DOCS`, counting a common lexeme through GIN costs time in proportion to
    its posting list (and a heap visit per match: 15-25 ms for a word in 15% of 100k memories), so the plan
    statement first reads a ``TABLESAMPLE SYSTEM ... REPEATABLE`` page sample of about :data:`BM25_SAMPLE_ROWS`
    scope rows (under a millisecond) and counts only the lexemes it says are rare (at most ``pool`` matches
    expected). A common lexeme gets the sample's estimate, never less than the pool: its IDF is low and the error
    small (a 25% error on a df of 1,500 in 100k moves the IDF by 0.2 of 4.2), and it only rescores candidates.
    """
    if row["df"] is not None:
        return float(row["df"])
    return float(min(row["n"], max(pool + 1, row["hits"] * row["n"] / row["sample_n"])))


def rarest_first_branches(lexemes: Sequence[str], df: dict[str, float], weights: dict[str, float],
                          pool: int) -> list[str]:
    """Candidate tsqueries for a large scope, best first: a WAND-like cut of the OR query.

    The rarest lexemes, as long as all their matches fit in the pool together, form the first branch: every memory
    they match is scored, so their (high) weights are never missed. The next :data:`BM25_COMMON_TERMS` lexemes are
    too common for that; memories matching them fill the rest of the pool by combination, heaviest sum of weights
    first (all of them, then every combination without the lightest, ...), each a GIN AND query that costs little
    even when each lexeme alone matches thousands of rows (AND NOT, to make the combinations disjoint, cost 4 ms a
    branch: the excluded lexemes' postings are read). A memory is taken by the best combination it matches; later
    ones repeat it and the duplicates are dropped. So the pool holds the top of the ranking while visiting ``pool``
    rows rather than every OR match. Commoner lexemes still add their weight to the candidates' scores.
    """
    rare: list[str] = []
    total = 0.0
    for lex in lexemes:
        if total + df[lex] > pool:
            break
        rare.append(lex)
        total += df[lex]
    common = [lex for lex in lexemes if lex not in rare][:BM25_COMMON_TERMS]
    combos = [c for size in range(len(common), 0, -1) for c in itertools.combinations(common, size)]
    combos.sort(key=lambda combo: -sum(weights[lex] for lex in combo))  # stable: bigger combinations win ties
    branches = [or_tsquery(rare)] if rare else []
    branches += [" & ".join(tsquery_lexeme(lex) for lex in combo) for combo in combos]
    return branches


def bm25_plan(rows: Sequence[dict], pool: int) -> Bm25Plan | None:
    """Turn the plan statement's rows (one per query lexeme) into weights and candidate branches.

    Exact BM25 (every OR match scored when it can reach the top k; exact document frequencies) when the scope has
    at most :data:`BM25_EXACT_DOCS` memories or all matches fit in the pool; :func:`rarest_first_branches`
    otherwise.
    """
    if not rows or not rows[0]["n"]:
        return None
    n = rows[0]["n"]
    df = {row["lexeme"]: document_frequency(row, pool) for row in rows}
    matched = sorted((lex for lex in df if df[lex] > 0), key=lambda lex: (df[lex], lex))
    if not matched:
        return None
    weights = {lex: bm25_idf(n, df[lex]) for lex in matched}
    avgdl = max(rows[0]["len"] / n, 1.0)
    if n <= BM25_EXACT_DOCS or sum(df[lex] for lex in matched) <= pool:
        selective = [lex for lex in matched if df[lex] <= BM25_SELECTIVE_SHARE * n] or matched
        universal = [lex for lex in matched if lex not in selective]
        return Bm25Plan(avgdl, weights, [or_tsquery(selective)], None, or_tsquery(universal) if universal else None,
                        (BM25_K1 + 1) * sum(weights[lex] for lex in universal))
    return Bm25Plan(avgdl, weights, rarest_first_branches(matched, df, weights, pool), pool)


def _bm25_params(pm: ProjectMemory, query: str, include_history: bool, pool: int) -> dict | None:
    terms = query_terms(query)
    if not terms:
        return None
    return {**pm.semantic.scope.params, "text": " ".join(terms), "all": include_history, "pool": pool,
            "exact_docs": BM25_EXACT_DOCS, "sample_rows": BM25_SAMPLE_ROWS, "sample_scan": BM25_SAMPLE_SCAN,
            "sample_min": BM25_SAMPLE_MIN, "seed": BM25_SAMPLE_SEED}


async def _bm25_plan(conn: Any, params: dict) -> Bm25Plan | None:
    rows = await (await conn.execute(_BM25_PLAN_SQL, params)).fetchall()
    return bm25_plan(rows, params["pool"])


async def bm25_plan_for(pm: ProjectMemory, query: str, *, include_history: bool = False,
                        pool: int = BM25_POOL) -> Bm25Plan | None:
    """The plan :func:`bm25_search` would use for ``query`` (to check which path a search takes)."""
    params = _bm25_params(pm, query, include_history, pool)
    if params is None:
        return None
    async with pm.semantic.db.connection(pm.semantic.scope) as conn:
        return await _bm25_plan(conn, params)


async def bm25_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False,
                      pool: int = BM25_POOL, since: datetime | None = None, until: datetime | None = None) -> list[Hit]:
    """Okapi BM25 over the full-text index, in two statements (plan, then candidates and scores).

    Postgres' ``ts_rank_cd`` has no inverse document frequency, so a name found in half the memories weighs as much
    as the one rare word that matters. Here BM25 scores (k1 = :data:`BM25_K1`, b = :data:`BM25_B`, lengths in
    distinct lexemes) come from the scope's size and total length (``z0_memory_stats``, kept by triggers: no scan),
    each query lexeme's document frequency (:func:`document_frequency`) and the term frequencies of the candidates
    (their tsvector positions; a position in the memory's search context counts :data:`CONTEXT_TERM_WEIGHT`).
    Candidates are every OR match in a small scope (exact BM25; a memory matched only by lexemes nearly every memory
    has is scored only when it could reach the top k: :data:`BM25_SELECTIVE_SHARE`), and at most ``pool``
    rows chosen rarest lexeme first in a large one (:func:`rarest_first_branches`), so a search at 100k memories
    visits hundreds of rows instead of tens of thousands. ``since`` / ``until`` keep candidates created in that
    period only (the statistics stay the scope's).
    """
    async with pm.semantic.db.connection(pm.semantic.scope) as conn:
        rows = await _bm25_rows(conn, pm, _BM25_SQL, query, k, include_history, pool=pool, since=since, until=until)
    return [hit_from_record(_record(row), float(row["score"]), "keyword") for row in rows]


async def _bm25_rows(conn: Any, pm: ProjectMemory, sql: str, query: str, k: int, include_history: bool, *,
                     pool: int = BM25_POOL, since: datetime | None = None, until: datetime | None = None) -> list[dict]:
    """Plan, then run one of the scoring statements (full rows, or ids only) on ``conn``."""
    params = _bm25_params(pm, query, include_history, pool)
    if params is None:
        return []
    plan = await _bm25_plan(conn, params)
    if plan is None:
        return []
    return await (await conn.execute(sql, bm25_statement_params(params, plan, k, since, until))).fetchall()


def bm25_statement_params(params: dict, plan: Bm25Plan, k: int, since: datetime | None = None,
                          until: datetime | None = None) -> dict:
    """The scoring statement's parameters: the scope's (``_bm25_params``) and the plan's."""
    return {**params, "lexemes": list(plan.weights), "weights": list(plan.weights.values()),
            "branches": plan.branches, "pool": plan.pool, "avgdl": plan.avgdl, "k": k, "k1": BM25_K1, "b": BM25_B,
            "context_weight": CONTEXT_TERM_WEIGHT, "since": since, "until": until, "rest": plan.rest,
            "rest_bound": plan.rest_bound}


async def keyword(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await bm25_search(pm, req.query, req.k, include_history=req.include_history, since=req.since,
                             until=req.until)


async def hybrid(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await hybrid_search(pm, req.query, req.k, include_history=req.include_history, since=req.since,
                               until=req.until)


_NEIGHBOR_SQL = statement(f"""
SELECT {_COLUMNS}, a.anchor FROM {SEMANTIC_TABLE} m
JOIN unnest(%(groups)s::text[], %(orders)s::text[], %(anchors)s::int[]) AS a(grp, pos, anchor)
  ON m.metadata ->> '{CONVERSATION_GROUP_KEY}' = a.grp AND m.metadata ->> '{CONVERSATION_ORDER_KEY}' = a.pos
WHERE {_SCOPE_SQL}
""")


def is_question(text: str) -> bool:
    """Whether a memory's text asks something (a '?' or a Chinese question particle)."""
    return "?" in text or "？" in text or text.rstrip().endswith(("吗", "呢"))


async def expand_neighbors(pm: ProjectMemory, hits: Sequence[Hit], *, anchors: int = NEIGHBOR_ANCHORS,
                           include_history: bool = False) -> list[Hit]:
    """Context expansion over conversation metadata: the turns next to the best hits, placed right after them.

    Memories imported from a conversation carry ``metadata[CONVERSATION_GROUP_KEY]`` (the session or thread)
    and ``metadata[CONVERSATION_ORDER_KEY]`` (the turn's position in it; ``schemas.conversation_position``). When
    one of the first ``anchors`` hits asks a question, the next turn of its session is most likely the answer, even
    though it shares no words with the query; it is
    inserted right after its anchor with a score just below it (``NEIGHBOR_DECAY`` times the anchor's). Hits
    without that metadata (facts, extracted memories) are left alone, so the expansion is a no-op elsewhere.
    """
    wanted: list[tuple[str, str, int]] = []
    present = {h.id for h in hits}
    for i, hit in enumerate(hits[:anchors]):
        position = conversation_position(hit)
        if position is None or not is_question(hit.content):
            continue
        wanted.append((position[0], str(position[1] + 1), i))
    if not wanted:
        return list(hits)
    params = {**pm.semantic.scope.params, "all": include_history, "groups": [w[0] for w in wanted],
              "orders": [w[1] for w in wanted], "anchors": [w[2] for w in wanted]}
    async with pm.semantic.db.connection(pm.semantic.scope) as conn:
        rows = await (await conn.execute(_NEIGHBOR_SQL, params)).fetchall()
    after: dict[int, list[Hit]] = {}
    for row in rows:
        if str(row["id"]) in present:
            continue
        anchor = hits[row["anchor"]]
        hit = hit_from_record(_record(row), anchor.score * NEIGHBOR_DECAY, "neighbors")
        hit.metadata["neighbor_of"] = anchor.id
        after.setdefault(row["anchor"], []).append(hit)
        present.add(hit.id)
    out: list[Hit] = []
    for i, hit in enumerate(hits):
        out.append(hit)
        out.extend(after.get(i, []))
    return out


Recipe = Callable[["ProjectMemory", SearchRequest], Awaitable[list[Hit]]]
RECIPES: dict[str, Recipe] = {
    "kv_exact": kv_exact, "kv_prefix": kv_prefix, "semantic": semantic, "keyword": keyword, "hybrid": hybrid,
}


def memory_weight(hit: Hit, *, include_history: bool, now: datetime | None = None) -> float:
    """Multiplier from what the memory itself says: confidence, supersession (decay), recency."""
    weight = 0.5 + 0.5 * hit.confidence
    if hit.superseded and not include_history:
        weight *= SUPERSEDED_WEIGHT
    if hit.created_at is not None:
        age_days = max(0.0, ((now or datetime.now(UTC)) - hit.created_at).total_seconds() / 86400)
        weight *= 1.0 + RECENCY_WEIGHT * math.exp(-age_days * math.log(2) / RECENCY_HALF_LIFE_DAYS)
    return weight

