"""Named search recipes: what a retrieval round can run, by name (the rewrite step switches between them).

``kv_exact``    the current value of one key (and, for history questions, every older version)
``kv_prefix``   the facts of one project or category
``semantic``    dense similarity (pgvector, through PGVectorStore)
``keyword``     BM25 over Postgres full text (English stemming and segmented Chinese, any term may match)
``hybrid``      weighted reciprocal-rank fusion of keyword (weight 1) and semantic (weight 0.3): with the offline
                embedder, dense search alone finds far less than BM25 (LoCoMo recall@10 0.32 vs 0.64), so it
                breaks ties and adds paraphrases rather than voting as an equal

Besides the recipes, :func:`expand_neighbors` adds the turn that follows a retrieved question in the same
conversation session (metadata ``session`` / ``turn``); the loop applies it to every round.
The dense and BM25 searches are plain SQL rather than ``PGVectorStore`` calls: the same rows, but a round costs
a few milliseconds instead of tens, which matters when the loop runs several rounds per question.

Each returns :class:`~z0_memory.schemas.Hit` lists, best first. KV hits carry the id of the fact version's semantic
mirror row, so the same version found by two recipes is one piece of evidence.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import FactVersion, Hit
from z0_memory.stores.facts import mirror_id, mirror_text
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.semantic import _COLUMNS, _record, hit_from_record, rrf_fuse, vector_literal
from z0_memory.text import or_tsquery, query_terms

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory

SUPERSEDED_WEIGHT = 0.35
RECENCY_HALF_LIFE_DAYS = 180.0
RECENCY_WEIGHT = 0.1
BM25_K1 = 1.2
BM25_B = 0.3
BM25_POOL = 500
HYBRID_DEPTH = 50
HYBRID_RRF_K = 20
KEYWORD_WEIGHT = 1.0
DENSE_WEIGHT = 0.3
NEIGHBOR_GROUP = "session"
NEIGHBOR_ORDER = "turn"
NEIGHBOR_ANCHORS = 5
NEIGHBOR_DECAY = 0.95
_SCOPE_SQL = "project = %(project)s AND user_id = %(user_id)s AND (%(all)s OR superseded_at IS NULL)"


@dataclass(frozen=True)
class SearchRequest:
    query: str
    k: int = 10
    include_history: bool = False
    key: str | None = None
    prefix: str | None = None


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


_DENSE_SQL = f"""
SELECT {_COLUMNS}, 1 - (embedding <=> %(v)s::vector) AS score FROM {SEMANTIC_TABLE}
WHERE {_SCOPE_SQL} ORDER BY embedding <=> %(v)s::vector LIMIT %(k)s
"""


async def dense_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False,
                       query_vector: Sequence[float] | None = None) -> list[Hit]:
    """Cosine similarity over the semantic table (pgvector; HNSW or an exact scan, as the planner prefers).

    Same rows and scores as ``SemanticStore.search`` (PGVectorStore), in one plain statement: about 2 ms instead of
    7 on a conversation of 700 turns, which matters when a loop runs several rounds per question.
    """
    if query_vector is None:
        query_vector = await pm.semantic.embeddings.aembed_query(query)
    params = {**pm.semantic.scope.params, "v": vector_literal(query_vector), "all": include_history, "k": k}
    async with pm.semantic.db.connection() as conn:
        rows = await (await conn.execute(_DENSE_SQL, params, prepare=False)).fetchall()
    return [hit_from_record(_record(row), float(row["score"]), "semantic") for row in rows]


async def hybrid_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False) -> list[Hit]:
    """BM25 and dense search (the query is embedded while BM25 runs), fused by weighted reciprocal rank."""
    depth = max(k, HYBRID_DEPTH)
    vector_task = asyncio.ensure_future(pm.semantic.embeddings.aembed_query(query))
    try:
        sparse = await bm25_search(pm, query, depth, include_history=include_history)
    finally:
        vector = await vector_task
    dense = await dense_search(pm, query, depth, include_history=include_history, query_vector=vector)
    return rrf_fuse([sparse, dense], k, "hybrid", weights=[KEYWORD_WEIGHT, DENSE_WEIGHT], rrf_k=HYBRID_RRF_K)


async def semantic(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await dense_search(pm, req.query, req.k, include_history=req.include_history)


_BM25_SQL = f"""
WITH lex AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(text)s))
), stats AS (
    SELECT count(*)::float8 AS n, greatest(avg(length(content_tsv)), 1)::float8 AS avgdl FROM {SEMANTIC_TABLE} WHERE {_SCOPE_SQL}
), idf AS (
    SELECT l.lexeme, ln(1.0 + (s.n - d.df + 0.5) / (d.df + 0.5)) AS w
    FROM lex l CROSS JOIN stats s CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM {SEMANTIC_TABLE}
        WHERE {_SCOPE_SQL} AND content_tsv @@ quote_literal(l.lexeme)::tsquery) d
), cand AS (
    SELECT id, content_tsv FROM {SEMANTIC_TABLE}, to_tsquery('english', %(q)s) AS q
    WHERE content_tsv @@ q AND {_SCOPE_SQL} ORDER BY ts_rank_cd(content_tsv, q, 1) DESC LIMIT %(pool)s
), scored AS (
    SELECT c.id, sum(i.w * t.tf * (%(k1)s::float8 + 1) / (t.tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * length(c.content_tsv) / s.avgdl)))
           AS score
    FROM cand c CROSS JOIN stats s
    CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf FROM unnest(c.content_tsv) u) t
    JOIN idf i ON i.lexeme = t.lexeme
    GROUP BY c.id ORDER BY score DESC LIMIT %(k)s
)
SELECT {_COLUMNS}, scored.score FROM scored JOIN {SEMANTIC_TABLE} m USING (id) ORDER BY scored.score DESC, m.created_at DESC
"""


async def bm25_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False,
                      pool: int = BM25_POOL) -> list[Hit]:
    """Okapi BM25 over the full-text index, in one statement.

    Postgres' ``ts_rank_cd`` has no inverse document frequency, so a name found in half the memories weighs as much
    as the one rare word that matters. Here the scope's size and mean length, each query lexeme's document
    frequency (through the GIN index) and the term frequencies of up to ``pool`` OR-matching rows (their tsvector
    positions) give BM25 scores (k1 = :data:`BM25_K1`, b = :data:`BM25_B`, lengths in distinct lexemes).
    """
    terms = query_terms(query)
    if not terms:
        return []
    params = {**pm.semantic.scope.params, "q": or_tsquery(terms), "text": " ".join(terms), "all": include_history,
              "pool": pool, "k": k, "k1": BM25_K1, "b": BM25_B}
    async with pm.semantic.db.connection() as conn:
        rows = await (await conn.execute(_BM25_SQL, params, prepare=False)).fetchall()
    return [hit_from_record(_record(row), float(row["score"]), "keyword") for row in rows]


async def keyword(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await bm25_search(pm, req.query, req.k, include_history=req.include_history)


async def hybrid(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await hybrid_search(pm, req.query, req.k, include_history=req.include_history)


_NEIGHBOR_SQL = f"""
SELECT {_COLUMNS}, a.anchor FROM {SEMANTIC_TABLE} m
JOIN unnest(%(groups)s::text[], %(orders)s::text[], %(anchors)s::int[]) AS a(grp, pos, anchor)
  ON m.metadata ->> '{NEIGHBOR_GROUP}' = a.grp AND m.metadata ->> '{NEIGHBOR_ORDER}' = a.pos
WHERE {_SCOPE_SQL}
"""


def is_question(text: str) -> bool:
    """Whether a memory's text asks something (a '?' or a Chinese question particle)."""
    return "?" in text or "？" in text or text.rstrip().endswith(("吗", "呢"))


async def expand_neighbors(pm: ProjectMemory, hits: Sequence[Hit], *, anchors: int = NEIGHBOR_ANCHORS,
                           include_history: bool = False) -> list[Hit]:
    """Context expansion over conversation metadata: the turns next to the best hits, placed right after them.

    Memories imported from a conversation carry ``metadata[NEIGHBOR_GROUP]`` (the session or thread) and
    ``metadata[NEIGHBOR_ORDER]`` (the turn's position in it). When one of the first ``anchors`` hits asks a question,
    the next turn of its session is most likely the answer, even though it shares no words with the query; it is
    inserted right after its anchor with a score just below it (``NEIGHBOR_DECAY`` times the anchor's). Hits
    without that metadata (facts, extracted memories) are left alone, so the expansion is a no-op elsewhere.
    """
    wanted: list[tuple[str, str, int]] = []
    present = {h.id for h in hits}
    for i, hit in enumerate(hits[:anchors]):
        group, order = hit.metadata.get(NEIGHBOR_GROUP), hit.metadata.get(NEIGHBOR_ORDER)
        if group is None or not isinstance(order, int) or not is_question(hit.content):
            continue
        wanted.append((str(group), str(order + 1), i))
    if not wanted:
        return list(hits)
    params = {**pm.semantic.scope.params, "all": include_history, "groups": [w[0] for w in wanted],
              "orders": [w[1] for w in wanted], "anchors": [w[2] for w in wanted]}
    async with pm.semantic.db.connection() as conn:
        rows = await (await conn.execute(_NEIGHBOR_SQL, params, prepare=False)).fetchall()
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


def rerank(hits: Sequence[Hit], *, include_history: bool) -> list[Hit]:
    """Apply :func:`memory_weight` to fused scores and sort, best first (stable)."""
    weighted = [h.model_copy(update={"score": h.score * memory_weight(h, include_history=include_history)})
                for h in hits]
    return sorted(weighted, key=lambda h: h.score, reverse=True)

