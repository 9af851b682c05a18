"""Named search recipes: what a retrieval round can run, by name (the rewrite step switches between them).

``kv_exact``    the current value of one key (and, for history questions, every older version)
``kv_prefix``   the facts of one project or category
``semantic``    dense similarity (pgvector, through PGVectorStore)
``keyword``     Postgres full text, English stemming and segmented Chinese, any term may match
``hybrid``      reciprocal-rank fusion of semantic and keyword

Each returns :class:`~z0_memory.schemas.Hit` lists, best first. KV hits carry the id of the fact version's semantic
mirror row, so the same version found by two recipes is one piece of evidence.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import FactVersion, Hit
from z0_memory.stores.facts import mirror_id, mirror_text
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.semantic import _COLUMNS, _record, hit_from_record
from z0_memory.text import or_tsquery, query_terms

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory

SUPERSEDED_WEIGHT = 0.35
RECENCY_HALF_LIFE_DAYS = 180.0
RECENCY_WEIGHT = 0.1
BM25_K1 = 1.2
BM25_B = 0.75
BM25_POOL = 500


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


async def semantic(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await pm.semantic.search(req.query, req.k, include_superseded=req.include_history)


_TSV_ENTRY = re.compile(r"'((?:[^']|'')+)'(?::([0-9A-D,]+))?")


def _term_frequencies(tsv: str) -> dict[str, int]:
    """``"'support':5,9 'group':6"`` -> ``{"support": 2, "group": 1}`` (a lexeme without positions counts once)."""
    return {m.group(1).replace("''", "'"): len(m.group(2).split(",")) if m.group(2) else 1
            for m in _TSV_ENTRY.finditer(tsv)}


async def bm25_search(pm: ProjectMemory, query: str, k: int, *, include_history: bool = False,
                      pool: int = BM25_POOL) -> list[Hit]:
    """Okapi BM25 over the full-text index: OR-match candidates, IDF and length normalisation from the scope.

    Postgres' ``ts_rank_cd`` has no inverse document frequency, so a name that is in half the memories weighs as
    much as the one rare word that matters. Here one statement returns the scope's size and mean length, each query
    lexeme's document frequency (via the GIN index) and up to ``pool`` matching rows with their tsvectors; BM25
    (k1 = :data:`BM25_K1`, b = :data:`BM25_B`, lengths in distinct lexemes) then ranks them in Python.
    """
    terms = query_terms(query)
    if not terms:
        return []
    scope = "project = %(project)s AND user_id = %(user_id)s AND (%(all)s OR superseded_at IS NULL)"
    params = {**pm.semantic.scope.params, "q": or_tsquery(terms), "text": " ".join(terms), "all": include_history,
              "pool": pool}
    async with pm.semantic.db.connection() as conn:
        stats = await (await conn.execute(
            f"WITH lex AS (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme) "
            f"SELECT (SELECT count(*) FROM {SEMANTIC_TABLE} WHERE {scope}) AS n, "
            f"(SELECT avg(length(content_tsv)) FROM {SEMANTIC_TABLE} WHERE {scope}) AS avgdl, "
            f"(SELECT coalesce(json_object_agg(lexeme, (SELECT count(*) FROM {SEMANTIC_TABLE} WHERE {scope} "
            "AND content_tsv @@ quote_literal(lexeme)::tsquery)), '{}'::json) FROM lex) AS df",
            params,
        )).fetchone()
        rows = await (await conn.execute(
            f"SELECT {_COLUMNS}, content_tsv::text AS tsv FROM {SEMANTIC_TABLE}, to_tsquery('english', %(q)s) AS q "
            f"WHERE content_tsv @@ q AND {scope} ORDER BY ts_rank_cd(content_tsv, q, 1) DESC, created_at DESC "
            "LIMIT %(pool)s",
            params,
        )).fetchall()
    n = max(1, int(stats["n"] or 0))
    avgdl = float(stats["avgdl"] or 1.0) or 1.0
    df = stats["df"] if isinstance(stats["df"], dict) else json.loads(stats["df"] or "{}")
    idf = {lex: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for lex, d in df.items()}
    scored = []
    for row in rows:
        tf = _term_frequencies(row["tsv"])
        dl = max(1, len(tf))
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * dl / avgdl)
        score = sum(w * tf[lex] * (BM25_K1 + 1.0) / (tf[lex] + norm) for lex, w in idf.items() if lex in tf)
        scored.append((score, row))
    scored.sort(key=lambda sr: sr[0], reverse=True)
    return [hit_from_record(_record(row), score, "keyword") for score, row in scored[:k]]


async def keyword(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await bm25_search(pm, req.query, req.k, include_history=req.include_history)


async def hybrid(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await pm.semantic.hybrid_search(req.query, req.k, include_superseded=req.include_history)


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

