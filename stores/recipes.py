"""Named search recipes, as data: what a retrieval round can run, by name (the rewrite step switches between them).

A :class:`Recipe` names the search methods it combines and how their lists are fused; :data:`RECIPES` is the table
the router and the rewriter choose from (like Graphiti's named search configs):

``kv_exact``    the current value of one key (and, for history questions, every older version)
``kv_prefix``   the facts of one project or category
``semantic``    dense similarity (pgvector)
``keyword``     BM25 over Postgres full text (English stemming and segmented Chinese, any term may match)
``hybrid``      BM25 and dense, fused by reciprocal rank at equal weights. It feeds the loop, which re-scores the
                fused candidates by the question's terms, so the dense half's job is recall (paraphrases BM25 cannot
                match), not order

The semantic methods run on the one search engine (``stores.search``); ranking policy (confidence, supersession,
recency) lives with the loop's fusion (``z0_memory.offline.fusion``). Each returns
:class:`~z0_memory.schemas.Hit` lists, best first. KV hits carry the id of the fact version's semantic mirror row,
so the same version found by two recipes is one piece of evidence.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import FactVersion, Hit
from z0_memory.stores.facts import mirror_id, mirror_text
from z0_memory.stores.search import HYBRID_DEPTH, rrf_fuse

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory


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


async def _dense(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await pm.semantic.search_engine.dense(req.query, req.k, include_history=req.include_history,
                                                 since=req.since, until=req.until)


async def _bm25(pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
    return await pm.semantic.search_engine.bm25(req.query, req.k, include_history=req.include_history,
                                                since=req.since, until=req.until)


Method = Callable[["ProjectMemory", SearchRequest], Awaitable[list[Hit]]]
METHODS: dict[str, Method] = {"kv_exact": kv_exact, "kv_prefix": kv_prefix, "dense": _dense, "bm25": _bm25}


@dataclass(frozen=True)
class Recipe:
    """A named search: the methods it runs (``dense`` and ``bm25`` on the search engine, ``kv_*`` on the fact
    store) and how several are fused. BM25 with dense under ``rrf`` is the engine's hybrid search (each half ranks
    ``depth`` by id, then the fused k are read); any other combination fuses the methods' lists by reciprocal rank.
    The loop fuses the recipes of a round the same way."""

    name: str
    methods: tuple[str, ...]
    fusion: Literal["none", "rrf"] = "none"
    depth: int = HYBRID_DEPTH  # candidates each fused method ranks

    async def run(self, pm: ProjectMemory, req: SearchRequest) -> list[Hit]:
        if len(self.methods) == 1:
            return await METHODS[self.methods[0]](pm, req)
        if set(self.methods) == {"bm25", "dense"} and self.fusion == "rrf":
            return await pm.semantic.search_engine.hybrid(req.query, req.k, include_history=req.include_history,
                                                          since=req.since, until=req.until, depth=self.depth)
        deep = replace(req, k=max(req.k, self.depth))
        return rrf_fuse([await METHODS[method](pm, deep) for method in self.methods], req.k, self.name)


RECIPES: dict[str, Recipe] = {recipe.name: recipe for recipe in (
    Recipe("kv_exact", ("kv_exact",)),
    Recipe("kv_prefix", ("kv_prefix",)),
    Recipe("semantic", ("dense",)),
    Recipe("keyword", ("bm25",)),
    Recipe("hybrid", ("bm25", "dense"), fusion="rrf"),
)}


async def run_recipe(pm: ProjectMemory, name: str, req: SearchRequest) -> list[Hit]:
    """Run the recipe called ``name`` (a key of :data:`RECIPES`)."""
    return await RECIPES[name].run(pm, req)
