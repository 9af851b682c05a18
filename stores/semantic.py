"""Semantic memory (layer 2): inferences, preferences, context, and the searchable mirror of every fact version.

The table is a langchain-postgres ``PGVectorStore`` table (created by ``stores.schema``) with typed metadata
columns, an HNSW index, and a ``content_tsv`` column that a trigger fills from ``search_text`` (the category and
content, weight A) and ``search_context`` (the context, weight D), both with their Chinese words segmented by jieba,
indexed with GIN. Dense search goes through ``PGVectorStore`` itself (also
exposed as :attr:`SemanticStore.vectorstore` for users who want a LangChain retriever); rows are written with our
own parameterised SQL so that a fact version and its mirror row commit in one transaction.

Keyword search uses an OR ``to_tsquery`` rather than PGVectorStore's built-in hybrid mode, whose
``plainto_tsquery`` ANDs every word of a question and so misses most answers; hybrid search fuses the two lists
by reciprocal rank. Every statement carries the store's scope (project, user): nothing crosses projects.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import psycopg
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStoreRetriever

from z0_memory.stores.database import Database
from z0_memory.stores.memory_rows import COLUMNS, record
from z0_memory.stores.search import SearchEngine
from z0_memory.stores.store_items import META as ITEM_META
from z0_memory.stores.schema import SEMANTIC_TABLE, search_columns
from z0_memory.stores.scope import Scope
from z0_memory.stores.vectors import VectorParam
from z0_memory.errors import DatabaseError, InvalidKeyError
from z0_memory.schemas import Hit, MemoryKind, MemoryRecord, reject_nul, validate_segment
from z0_memory.validation import check_metadata

if TYPE_CHECKING:
    from langchain_postgres import PGVectorStore

log = logging.getLogger(__name__)

# A bulk add of more than ANALYZE_MIN_ROWS + ANALYZE_SHARE x the rows the table had at its last ANALYZE refreshes the
# planner's statistics at once (PostgreSQL's autovacuum_analyze_threshold / _scale_factor defaults, which autovacuum
# applies only at its next wake-up, a minute or more later).
ANALYZE_MIN_ROWS = 50
ANALYZE_SHARE = 0.1
_KINDS = {"fact", "decision", "preference", "context"}
# A scope's keyless memories (not a fact's mirror), superseded ones included, with their confirmation count: what
# ``bench/extraction.py`` compares before and after a turn.
KEYLESS_ROWS_SQL = (
    "SELECT id::text AS id, kind, content, superseded_at, "
    "coalesce((metadata::jsonb ->> 'confirmations')::int, 1) AS confirmations "
    f"FROM {SEMANTIC_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s AND fact_key IS NULL"
)


@dataclass
class NewMemory:
    """A semantic memory to add.

    ``context`` is text that situates the memory without being part of it, such as the turns just before and after
    a conversation turn. It is searched with the content (full text and embedding: "They were awestruck." is found
    by a question about the memorial the turn before it names), stored for re-embedding, and never returned.
    """

    content: str
    category: str = "general"
    kind: MemoryKind = "context"
    confidence: float = 1.0
    source_ids: Sequence[str] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    id: str | None = None
    context: str = ""


def indexed_text(content: str, context: str | None = None) -> str:
    """What a memory is found by: its content, then its context when it has one (embedded and full-text indexed)."""
    return f"{content}\n{context}" if context else content


def _check(memory: NewMemory) -> None:
    if not isinstance(memory.content, str) or not memory.content.strip():
        raise ValueError("a memory's content must be non-empty text")
    reject_nul("a memory's content", memory.content)
    if not isinstance(memory.context, str):
        raise TypeError(f"a memory's context must be text, got {type(memory.context).__name__}")
    reject_nul("a memory's context", memory.context)
    reject_nul("a memory's metadata or source ids", memory.metadata, list(memory.source_ids))
    check_metadata("a memory's metadata", memory.metadata)
    validate_segment(memory.category, "category")
    if memory.kind not in _KINDS:
        raise InvalidKeyError(f"kind must be one of {sorted(_KINDS)}, got {memory.kind!r}")
    if not 0.0 <= memory.confidence <= 1.0:
        raise ValueError(f"confidence must be in [0, 1], got {memory.confidence}")


INSERT_SQL = (
    f"INSERT INTO {SEMANTIC_TABLE} (id, content, embedding, content_tsv, project, user_id, category, kind, "
    "confidence, created_at, superseded_at, fact_key, fact_version, source_ids, search_text, search_context, context, "
    "metadata) "
    "VALUES (%(id)s, %(content)s, %(embedding)s::vector, ''::tsvector, %(project)s, %(user_id)s, %(category)s, "
    "%(kind)s, %(confidence)s, %(created_at)s, %(superseded_at)s, %(fact_key)s, %(fact_version)s, "
    "%(source_ids)s, %(search_text)s, %(search_context)s, %(context)s, %(metadata)s::json)"
)


# Ids a caller gives (``NewMemory.id``: an import's turn ids, say) are namespaced by the scope before they become
# row ids, so no scope can take an id another scope will use (a squatted id made every later write of the victim
# fail), and adding a known id tells nothing about other scopes. The same given id in the same scope is the same row:
# adding it again keeps the stored one (``ADD_SQL``), which makes re-imports idempotent.
SCOPED_ID_NAMESPACE = uuid.UUID("0b7e8f0a-5c4d-4e1f-9a2b-6d3c8e7f1a20")
ADD_SQL = INSERT_SQL + " ON CONFLICT (id) DO NOTHING"


def scoped_id(scope: Scope, given: str) -> str:
    """The row id of a caller-given id in ``scope``."""
    return str(uuid.uuid5(SCOPED_ID_NAMESPACE, f"{scope.project}\x1f{scope.user_id}\x1f{given}"))


def _scoped(scope: Scope, memory: NewMemory) -> NewMemory:
    return replace(memory, id=scoped_id(scope, str(memory.id))) if memory.id else memory


def row_params(
    scope: Scope, memory: NewMemory, embedding: Sequence[float], *,
    fact_key: str | None = None, fact_version: int | None = None, superseded_at: datetime | None = None,
) -> dict[str, Any]:
    """The parameters of one row for ``INSERT_SQL`` (the id is ``memory.id`` or a new uuid)."""
    return {
        **scope.params,
        "id": memory.id or str(uuid.uuid4()),
        "content": memory.content,
        "embedding": VectorParam(embedding),
        "category": memory.category,
        "kind": memory.kind,
        "confidence": memory.confidence,
        "created_at": memory.created_at or datetime.now(UTC),
        "superseded_at": superseded_at,
        "fact_key": fact_key,
        "fact_version": fact_version,
        "source_ids": json.dumps(list(memory.source_ids)),
        **search_columns(memory.category, memory.content, memory.context),
        "context": memory.context or None,
        "metadata": json.dumps(memory.metadata, default=str),
    }


async def insert_row(
    conn: psycopg.AsyncConnection, scope: Scope, memory: NewMemory, embedding: Sequence[float], *,
    fact_key: str | None = None, fact_version: int | None = None, superseded_at: datetime | None = None,
) -> str:
    """Insert one row (inside the caller's transaction when it has one); return its id."""
    params = row_params(scope, memory, embedding, fact_key=fact_key, fact_version=fact_version,
                        superseded_at=superseded_at)
    await conn.execute(INSERT_SQL, params)
    return params["id"]


class ScopedVectorStore:
    """A ``PGVectorStore`` limited to one scope: every search gets the scope's filter (current memories only, and
    no store item put with ``index=False``: its zero vector has no cosine distance, so it would come back scored NaN
    instead of being left out as z0-memory's own searches leave it)."""

    def __init__(self, store: PGVectorStore, scope: Scope) -> None:
        self._store = store
        indexed = {"$or": [{ITEM_META: {"$exists": False}}, {f"{ITEM_META}.indexed": {"$eq": True}}]}
        self._scope_filter = {"$and": [{"project": {"$eq": scope.project}}, {"user_id": {"$eq": scope.user_id}},
                                       {"superseded_at": {"$exists": False}}, indexed]}

    def _scoped(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        given = kwargs.pop("filter", None)
        kwargs["filter"] = {"$and": [self._scope_filter, given]} if given else self._scope_filter
        return kwargs

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return await self._store.asimilarity_search(query, k=k, **self._scoped(kwargs))

    async def asimilarity_search_with_score(self, query: str, k: int = 4,
                                            **kwargs: Any) -> list[tuple[Document, float]]:
        return await self._store.asimilarity_search_with_score(query, k=k, **self._scoped(kwargs))

    def as_retriever(self, **kwargs: Any) -> VectorStoreRetriever:
        search_kwargs = self._scoped(dict(kwargs.pop("search_kwargs", {}) or {}))
        return self._store.as_retriever(search_kwargs=search_kwargs, **kwargs)


# A confirmation: the count goes up and the confirming messages are cited, unless the memory cites them all already
# (then the count is returned unchanged). ``ids``: a JSON array of message ids, possibly empty (always counts).
CONFIRM_SQL = f"""
UPDATE {SEMANTIC_TABLE} SET
    metadata = CASE WHEN %(ids)s::jsonb <> '[]'::jsonb AND coalesce(source_ids, '[]')::jsonb @> %(ids)s::jsonb
                    THEN metadata
                    ELSE (coalesce(metadata::jsonb, '{{}}'::jsonb) || jsonb_build_object('confirmations',
                          coalesce((metadata::jsonb ->> 'confirmations')::int, 1) + 1))::json END,
    source_ids = (coalesce(source_ids, '[]')::jsonb || (SELECT coalesce(jsonb_agg(i), '[]'::jsonb)
                  FROM jsonb_array_elements(%(ids)s::jsonb) AS i
                  WHERE NOT coalesce(source_ids, '[]')::jsonb @> jsonb_build_array(i)))::text
WHERE id = %(id)s AND project = %(project)s AND user_id = %(user_id)s
RETURNING coalesce((metadata::jsonb ->> 'confirmations')::int, 1) AS n
"""


class SemanticStore:
    """Semantic memory of one scope."""

    def __init__(self, db: Database, scope: Scope, embeddings: Embeddings, vectorstore: PGVectorStore) -> None:
        self.db = db
        self.scope = scope
        self.embeddings = embeddings
        self.vectorstore = vectorstore
        self.search_engine = SearchEngine(db, scope, embeddings)

    def as_vectorstore(self) -> ScopedVectorStore:
        """This scope's memories as a LangChain ``VectorStore`` (langchain-postgres' ``PGVectorStore`` over the same
        table, filtered to the scope): ``similarity_search``, ``as_retriever()``. z0-memory's own searches run on
        :attr:`search_engine`."""
        return ScopedVectorStore(self.vectorstore, self.scope)

    async def add(self, content: str, **fields: Any) -> MemoryRecord:
        """Embed and store one memory."""
        ids = await self.add_many([NewMemory(content=content, **fields)])
        record = await self.get(ids[0])
        assert record is not None
        return record

    async def add_many(self, memories: Sequence[NewMemory], *, batch_size: int = 256) -> list[str]:
        """Embed in batches and store; each batch commits atomically. Returns the new ids."""
        for m in memories:
            _check(m)
        ids: list[str] = []
        batches = [memories[i:i + batch_size] for i in range(0, len(memories), batch_size)]
        next_vectors = asyncio.ensure_future(self._embed(batches[0])) if batches else None
        for n, batch in enumerate(batches):
            vectors = await next_vectors
            # embed the next batch while this one is written (embedding runs in a worker thread)
            next_vectors = asyncio.ensure_future(self._embed(batches[n + 1])) if n + 1 < len(batches) else None
            rows = [row_params(self.scope, _scoped(self.scope, m), v) for m, v in zip(batch, vectors, strict=True)]
            try:
                async with self.db.connection(self.scope) as conn, conn.cursor() as cur:
                    await cur.executemany(ADD_SQL, rows)  # pipelined: one round trip per batch, not per row
            except BaseException:
                if next_vectors is not None:
                    next_vectors.cancel()
                raise
            ids.extend(r["id"] for r in rows)
        if len(ids) > ANALYZE_MIN_ROWS:  # below it no table qualifies: single adds pay no statistics query
            await self._refresh_statistics(len(ids))
        return ids

    async def _refresh_statistics(self, added: int) -> None:
        """``ANALYZE`` the table after a bulk add that outgrew its planner statistics.

        Without statistics (a table never analyzed, or one that just grew several-fold: an imported conversation
        queried right away) the planner estimates one row per scope and picks plans for that: full-text counts that
        filter the scope row by row instead of using GIN, nested-loop joins over materialized candidates.
        ``SKIP_LOCKED``: while a VACUUM or ANALYZE of the table runs, this one is skipped rather than waited for. The
        rows are already committed: a failed ``ANALYZE`` (a role that does not own the table, a server that went away)
        is logged and leaves the statistics to autovacuum.
        """
        try:
            async with self.db.connection() as conn:  # ANALYZE needs the owner: not scoped
                row = await (await conn.execute(
                    "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [SEMANTIC_TABLE])).fetchone()
                analyzed = max(0.0, float(row["reltuples"])) if row else 0.0
                if added > ANALYZE_MIN_ROWS + ANALYZE_SHARE * analyzed:
                    await conn.execute(f"ANALYZE (SKIP_LOCKED) {SEMANTIC_TABLE}")
        except (psycopg.Error, DatabaseError) as exc:
            log.warning("could not refresh the statistics of %s after adding %d rows (%s); autovacuum will",
                        SEMANTIC_TABLE, added, exc)

    async def _embed(self, batch: Sequence[NewMemory]) -> list[list[float]]:
        return await self.embeddings.aembed_documents([indexed_text(m.content, m.context) for m in batch])

    async def add_or_confirm(self, memory: NewMemory, same: Callable[[Hit], bool], *,
                             candidates: int = 5) -> tuple[Literal["added", "confirmed"], str, str]:
        """Add ``memory``, unless a close keyword hit for which ``same(hit)`` holds exists: then confirm that one.

        Search and insert run in one transaction under a per-scope advisory lock, so concurrent writers of the same
        memory confirm one row instead of each adding a duplicate. Returns (action, row id, stored content).
        """
        _check(memory)
        memory = _scoped(self.scope, memory)
        vector = (await self.embeddings.aembed_documents([indexed_text(memory.content, memory.context)]))[0]
        async with self.db.connection(self.scope) as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                               [f"z0memory|{self.scope.project}|{self.scope.user_id}"])
            for hit in await self.search_engine.bm25(memory.content, candidates, conn=conn):
                if same(hit):
                    await self._confirm(conn, hit.id, memory.source_ids)
                    return "confirmed", hit.id, hit.content
            row_id = await insert_row(conn, self.scope, memory, vector)
        return "added", row_id, memory.content

    async def get(self, memory_id: str) -> MemoryRecord | None:
        try:
            uuid.UUID(str(memory_id))
        except ValueError:
            return None
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(
                f"SELECT {COLUMNS} FROM {SEMANTIC_TABLE} WHERE id = %(id)s AND project = %(project)s "
                "AND user_id = %(user_id)s", {**self.scope.params, "id": str(memory_id)},
            )).fetchone()
        return record(row) if row else None

    async def list(self, *, category: str | None = None, kind: str | None = None,
                   include_superseded: bool = False, limit: int = 100) -> list[MemoryRecord]:
        if category is not None:
            validate_segment(category, "category")
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(
                f"SELECT {COLUMNS} FROM {SEMANTIC_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND (%(category)s::text IS NULL OR category = %(category)s) "
                "AND (%(kind)s::text IS NULL OR kind = %(kind)s) "
                "AND (%(all)s OR superseded_at IS NULL) ORDER BY created_at DESC LIMIT %(limit)s",
                {**self.scope.params, "category": category, "kind": kind, "all": include_superseded,
                 "limit": limit},
            )).fetchall()
        return [record(r) for r in rows]

    async def search(self, query: str, k: int = 10, *, include_superseded: bool = False,
                     category: str | None = None, query_vector: Sequence[float] | None = None) -> list[Hit]:
        """Dense similarity search (the search engine's); score = cosine similarity."""
        if category is not None:
            validate_segment(category, "category")
        return await self.search_engine.dense(query, k, include_history=include_superseded, category=category,
                                              query_vector=query_vector)

    async def keyword_search(self, query: str, k: int = 10, *, include_superseded: bool = False,
                             category: str | None = None) -> list[Hit]:
        """BM25 full-text search (English stemming + segmented Chinese; any query term may match)."""
        if category is not None:
            validate_segment(category, "category")
        return await self.search_engine.bm25(query, k, include_history=include_superseded, category=category)

    async def hybrid_search(self, query: str, k: int = 10, *, include_superseded: bool = False,
                            category: str | None = None, query_vector: Sequence[float] | None = None) -> list[Hit]:
        """BM25 and dense, fused by reciprocal rank: the search the retrieval loop's ``hybrid`` recipe runs."""
        if category is not None:
            validate_segment(category, "category")
        return await self.search_engine.hybrid(query, k, include_history=include_superseded, category=category,
                                               query_vector=query_vector)

    async def supersede(self, memory_id: str, *, at: datetime | None = None) -> bool:
        """Mark a memory superseded (it stays, ranked low, reachable by history queries)."""
        async with self.db.connection(self.scope) as conn:
            cur = await conn.execute(
                f"UPDATE {SEMANTIC_TABLE} SET superseded_at = %(at)s WHERE id = %(id)s AND project = %(project)s "
                "AND user_id = %(user_id)s AND superseded_at IS NULL",
                {**self.scope.params, "id": str(memory_id), "at": at or datetime.now(UTC)},
            )
            return cur.rowcount > 0

    async def confirm(self, memory_id: str, message_ids: Sequence[str] = ()) -> int:
        """Record that a memory was said again, by ``message_ids`` (cited from now on); returns its confirmation
        count (0 if it is not in this scope). Each statement counts once: messages the memory already cites (a turn
        extracted again after its writes failed half way) confirm it without counting."""
        async with self.db.connection(self.scope) as conn:
            return await self._confirm(conn, memory_id, message_ids)

    async def _confirm(self, conn: psycopg.AsyncConnection, memory_id: str, message_ids: Sequence[str] = ()) -> int:
        row = await (await conn.execute(CONFIRM_SQL, {**self.scope.params, "id": str(memory_id),
                                                      "ids": json.dumps(list(message_ids))})).fetchone()
        return int(row["n"]) if row else 0

    async def delete(self, memory_ids: Sequence[str]) -> int:
        """Delete memories for real; returns how many were deleted in this scope."""
        ids = []
        for memory_id in memory_ids:
            try:
                ids.append(str(uuid.UUID(str(memory_id))))
            except ValueError:
                continue
        if not ids:
            return 0
        async with self.db.connection(self.scope) as conn:
            cur = await conn.execute(
                f"DELETE FROM {SEMANTIC_TABLE} WHERE id = ANY(%(ids)s::uuid[]) AND project = %(project)s "
                "AND user_id = %(user_id)s", {**self.scope.params, "ids": ids},
            )
            return cur.rowcount

    async def keyless_rows(self) -> list[dict[str, Any]]:
        """Every keyless memory of the scope (superseded ones too) as a raw row (:data:`KEYLESS_ROWS_SQL`), in no
        particular order: for inspection (the extraction bench's before/after snapshots), not for the application."""
        async with self.db.connection(self.scope) as conn:
            return await (await conn.execute(KEYLESS_ROWS_SQL, self.scope.params)).fetchall()

    async def source_ids(self) -> dict[str, frozenset[str]]:
        """Every row's id -> the source ids it cites (fact mirror rows included): what an evaluation scores by."""
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(
                f"SELECT id, source_ids FROM {SEMANTIC_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s",
                self.scope.params)).fetchall()
        return {str(r["id"]): frozenset(json.loads(r["source_ids"] or "[]")) for r in rows}

    async def count(self) -> int:
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(
                f"SELECT count(*) AS n FROM {SEMANTIC_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s",
                self.scope.params,
            )).fetchone()
        return int(row["n"])
