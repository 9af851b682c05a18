"""The one search engine over a scope's semantic memory: dense (pgvector), BM25 (``stores.bm25``) and hybrid
(reciprocal-rank fusion of the two: :func:`rrf_ranking`, :data:`RRF_K`), plus the conversation-neighbour expansion.

Every search of the project goes through it: the retrieval loop's recipes (``stores.recipes``), ``SemanticStore``'s
``search`` / ``keyword_search`` / ``hybrid_search`` (and so ``Z0Store`` and the extraction node's related
memories), the CLI and the inspector. Statements are plain SQL on the memory's pool, each in a transaction bound to
the engine's scope (``Database.fetch``: one round trip each). ``PGVectorStore`` keeps the table's schema and serves users who want a LangChain ``VectorStore``
(``SemanticStore.as_vectorstore()``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import psycopg

from langchain_core.embeddings import Embeddings

from z0_memory.redaction import redact_secrets
from z0_memory.schemas import CONVERSATION_GROUP_KEY, CONVERSATION_ORDER_KEY, Hit, conversation_position
from z0_memory.stores.bm25 import (
    BM25_IDS_SQL,
    BM25_IDS_TEMPLATE,
    BM25_POOL,
    BM25_SQL,
    RANKED_ID,
    Bm25Plan,
    bm25_params,
    bm25_rows,
    bm25_scoring,
    on_connection,
    plan_with,
)
from z0_memory.stores.database import Database, statement
from z0_memory.stores.memory_rows import (
    COLUMNS,
    PERIOD_SQL,
    ROW_FILTER,
    SCOPE_SQL,
    HIT_COLUMNS,
    filtered,
    hit_from_row,
)
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.scope import Scope
from z0_memory.stores.vectors import VectorParam

# Reciprocal-rank fusion, ``sum w / (RRF_K + rank)`` (:func:`rrf_ranking`, the one implementation): the k of the
# hybrid search's BM25 + dense fusion and of every ``rrf_fuse`` (a round's recipes). The retrieval loop's fusion of
# its rounds calls the same function with its own, smaller k (``offline.fusion.RRF_K`` = 5): one k for both lost
# 0.006-0.02 of LoCoMo recall@10 with every weight re-chosen (bench/README.md, "One RRF constant?").
RRF_K = 20
Id = TypeVar("Id", bound=Hashable)
HYBRID_DEPTH = 50  # each half of a hybrid search ranks this many before fusion
KEYWORD_WEIGHT = 1.0
DENSE_WEIGHT = 1.0
NEIGHBOR_ANCHORS = 5
NEIGHBOR_DECAY = 0.95

# The distance is computed once and ordered by its name (still the HNSW index's ``embedding <=> vector`` order): a
# score of ``1 - distance`` in the select list beside ``ORDER BY embedding <=> vector`` made Postgres compute every
# distance twice, de-TOASTing each vector twice. HNSW scans run
# iteratively in relaxed order (``database.SESSION_SETTINGS``): the rows are sorted again, by ``distance + 0`` since
# the planner takes the index scan's order as given for ``distance`` itself.
DENSE_RANKED = f"""embedding <=> %(v)s::vector AS distance FROM {SEMANTIC_TABLE}
WHERE {SCOPE_SQL} AND {PERIOD_SQL} ORDER BY distance LIMIT %(k)s"""
# A row without a direction (a zero vector: a store item put with ``index=False``, see ``stores.store_items``) is
# at distance NaN from everything, which sorts last: it is no similarity, so it is left out.
DENSE_SQL = statement(f"SELECT * FROM (SELECT {COLUMNS}, {DENSE_RANKED}) d WHERE distance <> 'NaN' "
                      "ORDER BY distance + 0")
DENSE_IDS_SQL = statement(f"SELECT id::text AS {RANKED_ID} FROM (SELECT id, {DENSE_RANKED}) d WHERE distance <> 'NaN' "
                          "ORDER BY distance + 0")
# The dense half of a filtered search (:class:`RowFilter`), exact: the rows passing the filter are read first (the
# subquery has no order the HNSW index could serve), so no approximate scan can stop before a filter's few rows.
DENSE_EXACT_IDS_TEMPLATE = f"""SELECT id::text AS {RANKED_ID} FROM (SELECT id, embedding <=> %(v)s::vector AS distance FROM (
SELECT id, embedding FROM {SEMANTIC_TABLE} WHERE {SCOPE_SQL} AND {PERIOD_SQL}{ROW_FILTER} OFFSET 0) c) d
WHERE distance <> 'NaN' ORDER BY distance, id LIMIT %(k)s"""
ROWS_SQL = statement(f"SELECT {HIT_COLUMNS} FROM {SEMANTIC_TABLE} WHERE id = ANY(%(ids)s::uuid[]) AND {SCOPE_SQL}")
# The fused rows' read is a primary-key lookup whatever the scope's size, so it needs no plan of its own per search
# (the pool's sessions force custom plans: ``database.SESSION_SETTINGS``): the hybrid search's transaction switches to
# the cached generic plan just before it, which spares planning the statement and its row-level security policy.
GENERIC_PLAN_SQL = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"
NEIGHBOR_SQL = statement(f"""
SELECT {COLUMNS}, a.anchor FROM {SEMANTIC_TABLE} m
JOIN unnest(%(groups)s::text[], %(orders)s::text[], %(anchors)s::int[]) AS a(grp, pos, anchor)
  ON m.metadata ->> '{CONVERSATION_GROUP_KEY}' = a.grp AND m.metadata ->> '{CONVERSATION_ORDER_KEY}' = a.pos
WHERE {SCOPE_SQL}
""")


@dataclass(frozen=True)
class RowFilter:
    """A further condition on the rows a search ranks, in both halves of :meth:`SearchEngine.hybrid`: SQL on the
    semantic table's columns (no alias) and its named parameters (names that the search's own do not use). The
    LangGraph store's namespaces and value filters are one (``stores.store_items.item_filter``)."""

    condition: str
    params: dict[str, Any] = field(default_factory=dict)


def rrf_ranking(rankings: Sequence[Sequence[Id]], k: int, *, weights: Sequence[float] | None = None,
                rrf_k: int = RRF_K) -> list[tuple[Id, float]]:
    """Reciprocal-rank fusion of ranked id lists (each id once per list): ``sum w / (rrf_k + rank)`` per id, rank
    1-based; the best k (id, score), best first, equal scores in order of first appearance."""
    scores: dict[Id, float] = {}
    for weight, ids in zip(weights if weights is not None else [1.0] * len(rankings), rankings, strict=True):
        for rank, memory_id in enumerate(ids, 1):
            scores[memory_id] = scores.get(memory_id, 0.0) + weight / (rrf_k + rank)
    order = sorted(scores, key=scores.__getitem__, reverse=True)[:k]
    return [(memory_id, scores[memory_id]) for memory_id in order]


def rrf_fuse(lists: Sequence[Sequence[Hit]], k: int, strategy: str = "hybrid", *,
             weights: Sequence[float] | None = None, rrf_k: int = RRF_K) -> list[Hit]:
    """Reciprocal-rank fusion of ranked hit lists (:func:`rrf_ranking`), deduplicated by id, best first."""
    best: dict[str, Hit] = {}
    for hits in lists:
        for hit in hits:
            best.setdefault(hit.id, hit)
    ranked = rrf_ranking([[hit.id for hit in hits] for hits in lists], k, weights=weights, rrf_k=rrf_k)
    return [best[i].model_copy(update={"score": score, "strategy": strategy}) for i, score in ranked]



def is_question(text: str) -> bool:
    """Whether a memory's text asks something (a '?' or a Chinese question particle)."""
    return "?" in text or "？" in text or text.rstrip().endswith(("吗", "呢"))


def settle(task: asyncio.Future) -> None:
    """Leave no background work behind a search that failed: cancel the task, or consume its error."""
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


class SearchEngine:
    """Dense, BM25 and hybrid search of one scope's semantic memory."""

    def __init__(self, db: Database, scope: Scope, embeddings: Embeddings) -> None:
        self.db = db
        self.scope = scope
        self.embeddings = embeddings

    def _params(self, include_history: bool, category: str | None, **extra: Any) -> dict[str, Any]:
        return {**self.scope.params, "all": include_history, "category": category, "since": None, "until": None,
                **extra}

    async def dense(self, query: str, k: int, *, include_history: bool = False,
                    query_vector: Sequence[float] | None = None, since: datetime | None = None,
                    until: datetime | None = None, category: str | None = None) -> list[Hit]:
        """Cosine similarity (pgvector; HNSW or an exact scan, as the planner prefers); score = 1 - distance."""
        params = await self._dense_params(query, k, include_history, query_vector, since, until, category)
        rows = await self._fetch(DENSE_SQL, params)
        return [hit_from_row(row, 1.0 - float(row["distance"]), "semantic") for row in rows]

    async def _dense_params(self, query: str, k: int, include_history: bool, query_vector: Sequence[float] | None,
                            since: datetime | None, until: datetime | None, category: str | None,
                            **extra: Any) -> dict[str, Any]:
        """A dense statement's parameters, the query embedded unless its vector is given (``extra``: a filter's)."""
        if query_vector is None:
            query_vector = await self.embeddings.aembed_query(redact_secrets(query))  # no secret to the model
        return self._params(include_history, category, v=VectorParam(query_vector), k=k, since=since, until=until,
                            **extra)

    async def _fetch(self, sql: str, params: dict) -> list[dict]:
        return await self.db.fetch(self.scope, sql, params)

    async def bm25(self, query: str, k: int, *, include_history: bool = False, pool: int = BM25_POOL,
                   since: datetime | None = None, until: datetime | None = None, category: str | None = None,
                   conn: psycopg.AsyncConnection | None = None) -> list[Hit]:
        """BM25 over the full-text index (``stores.bm25``), in two statements: plan, then candidates and scores.
        ``conn``: run on a connection the caller holds (inside its transaction) instead of a pooled one."""
        rows = await bm25_rows(self._fetch if conn is None else on_connection(conn), self.scope, BM25_SQL, query, k,
                               include_history, pool=pool, since=since, until=until, category=category)
        return [hit_from_row(row, float(row["score"]), "keyword") for row in rows]

    async def bm25_plan(self, query: str, *, include_history: bool = False, pool: int = BM25_POOL) -> Bm25Plan | None:
        """The plan :meth:`bm25` would use for ``query`` (to check which path a search takes)."""
        params = bm25_params(self.scope, query, include_history, pool)
        if params is None:
            return None
        return await plan_with(self._fetch, params)

    async def hybrid(self, query: str, k: int, *, include_history: bool = False, since: datetime | None = None,
                     until: datetime | None = None, category: str | None = None, depth: int = HYBRID_DEPTH,
                     query_vector: Sequence[float] | None = None, where: RowFilter | None = None) -> list[Hit]:
        """BM25 and dense search, fused by weighted reciprocal rank (:func:`rrf_ranking`).

        Each half ranks its best ``depth`` (:data:`HYBRID_DEPTH`) by id only, and the k fused memories are read
        afterwards, in two scoped transactions on two pooled connections (``Database.reading``) that run at once:
        BM25's plan and ranking in one, and in the other the dense ranking (after the query embedding, computed in
        a worker thread meanwhile) and then the fused rows. ``where``: only rows passing that filter are ranked (the
        dense half is then exact).
        """
        depth = max(k, depth)
        dense_sql, bm25_sql, extra = DENSE_IDS_SQL, BM25_IDS_SQL, {}
        if where is not None:
            dense_sql = filtered(DENSE_EXACT_IDS_TEMPLATE, where.condition)
            bm25_sql, extra = filtered(BM25_IDS_TEMPLATE, where.condition), where.params
        # The dense transaction waits for BM25's ranking while it holds a connection, so it asks the pool for one
        # only once BM25 holds its own (or needs none): BM25 then never waits for a connection that searches
        # holding theirs could keep from it, and concurrent searches cannot deadlock an emptied pool.
        holding = asyncio.Event()
        sparse = asyncio.ensure_future(self._bm25_ranking(bm25_sql, query, depth, include_history, category, extra,
                                                          since, until, holding))
        try:
            params = await self._dense_params(query, depth, include_history, query_vector, since, until, category,
                                              **extra)
            await holding.wait()
            async with self.db.reading(self.scope) as conn:
                dense = await conn.execute(dense_sql, params)
                ranked = rrf_ranking([[row[RANKED_ID] for row in await sparse],
                                      [row[RANKED_ID] for row in await dense.fetchall()]], k,
                                     weights=[KEYWORD_WEIGHT, DENSE_WEIGHT])
                if not ranked:
                    return []
                await conn.execute(GENERIC_PLAN_SQL)
                rows = await conn.execute(ROWS_SQL, self._params(include_history, category,
                                                                 ids=[i for i, _ in ranked]))
        finally:
            settle(sparse)
        by_id = {str(row["id"]): row for row in await rows.fetchall()}
        # a memory deleted between the ranking and the read is left out
        return [hit_from_row(by_id[i], score, "hybrid") for i, score in ranked if i in by_id]

    async def _bm25_ranking(self, sql: str, query: str, depth: int, include_history: bool, category: str | None,
                            extra: dict, since: datetime | None, until: datetime | None,
                            holding: asyncio.Event) -> list[dict]:
        """BM25's plan, then its ranking (``sql``), in one scoped transaction; ``holding`` is set once it holds its
        connection or needs none."""
        try:
            params = bm25_params(self.scope, query, include_history, BM25_POOL, category)
            if params is None:
                return []
            async with self.db.reading(self.scope) as conn:
                holding.set()
                scoring = await bm25_scoring(on_connection(conn), params, depth, since, until)
                if scoring is None:
                    return []
                ranking = await conn.execute(sql, {**scoring, **extra})
            return await ranking.fetchall()
        finally:
            holding.set()

    async def neighbors(self, hits: Sequence[Hit], *, anchors: int = NEIGHBOR_ANCHORS,
                        include_history: bool = False) -> list[Hit]:
        """Context expansion over conversation metadata: the turns next to the best hits, placed right after them.

        Memories imported from a conversation carry ``metadata[CONVERSATION_GROUP_KEY]`` (the session or thread)
        and ``metadata[CONVERSATION_ORDER_KEY]`` (the turn's position in it; ``schemas.conversation_position``).
        When one of the first ``anchors`` hits asks a question, the next turn of its session is most likely the
        answer, even though it shares no words with the query; it is inserted right after its anchor with a score
        just below it (``NEIGHBOR_DECAY`` times the anchor's). Hits without that metadata (facts, extracted
        memories) are left alone, so the expansion is a no-op elsewhere.
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
        params = self._params(include_history, None, groups=[w[0] for w in wanted], orders=[w[1] for w in wanted],
                              anchors=[w[2] for w in wanted])
        rows = await self._fetch(NEIGHBOR_SQL, params)
        after: dict[int, list[Hit]] = {}
        for row in rows:
            if str(row["id"]) in present:
                continue
            anchor = hits[row["anchor"]]
            hit = hit_from_row(row, anchor.score * NEIGHBOR_DECAY, "neighbors")
            hit.metadata["neighbor_of"] = anchor.id
            after.setdefault(row["anchor"], []).append(hit)
            present.add(hit.id)
        out: list[Hit] = []
        for i, hit in enumerate(hits):
            out.append(hit)
            out.extend(after.get(i, []))
        return out
