"""Statements over a whole scope, the whole semantic table or the whole database: forgetting a scope, re-embedding
every memory (the embedding-model change: new vectors first, then the column swap and the index rebuild in one
transaction), and refreshing the planner's statistics after a bulk load."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from z0_memory.schemas import WriteOutcome
from z0_memory.stores.database import Database
from z0_memory.stores.extraction_log import outcomes_json
from z0_memory.stores.schema import EXTRACTION_LOG_TABLE, SEMANTIC_TABLE, EmbeddingSpec, write_embedding_meta
from z0_memory.stores.scope import Scope
from z0_memory.stores.vectors import VectorParam

# What forgetting a scope deletes: every fact version, pending candidate, queued or logged turn and semantic memory.
FORGOTTEN_TABLES = ("z0_facts", "z0_pending", "z0_extraction_queue", EXTRACTION_LOG_TABLE, SEMANTIC_TABLE)
FORGET_SQL = {table: f"DELETE FROM {table} WHERE project = %(project)s AND user_id = %(user_id)s"
              for table in FORGOTTEN_TABLES}
# The ids of every message the scope has read (logged, or queued for a retry), per thread: what forgetting keeps, so
# that a thread continued afterwards, whose ``messages`` still hold the old turns, does not extract them again and
# bring back what was forgotten (``stores.provenance`` skips a logged id).
READ_MESSAGES_SQL = f"""
SELECT thread_id, array_agg(DISTINCT id ORDER BY id) AS ids FROM (
    SELECT l.thread_id, unnest(l.message_ids) AS id FROM {EXTRACTION_LOG_TABLE} l
     WHERE l.project = %(project)s AND l.user_id = %(user_id)s
    UNION ALL
    SELECT q.thread_id, message ->> 'id' FROM z0_extraction_queue q, jsonb_array_elements(q.messages) AS message
     WHERE q.project = %(project)s AND q.user_id = %(user_id)s
) AS read WHERE id IS NOT NULL GROUP BY thread_id
"""
FORGOTTEN_MARK_SQL = (f"INSERT INTO {EXTRACTION_LOG_TABLE} (project, user_id, thread_id, message_ids, outcomes) "
                      "VALUES (%(project)s, %(user_id)s, %(thread)s, %(ids)s, %(outcomes)s::jsonb)")
FORGOTTEN_OUTCOMES = outcomes_json([WriteOutcome(
    action="forgotten", reason="what these messages gave was forgotten (forget_everything); they are not read again")])

EMBEDDED_TEXT_SQL = f"SELECT id, content, context FROM {SEMANTIC_TABLE} ORDER BY id"
ADD_NEW_COLUMN_SQL = f"ALTER TABLE {SEMANTIC_TABLE} ADD COLUMN embedding_new vector(%d)"
SET_NEW_VECTOR_SQL = f"UPDATE {SEMANTIC_TABLE} SET embedding_new = %s::vector WHERE id = %s"
# Store items put with ``index=False`` (``stores.store_items``) keep a zero vector in the new dimensions: not embedded.
ZERO_UNINDEXED_SQL = (f"UPDATE {SEMANTIC_TABLE} SET embedding_new = array_fill(0, ARRAY[%d])::vector "
                      "WHERE metadata -> 'z0_store' ->> 'indexed' = 'false'")
SWAP_COLUMN_SQL = (
    f"ALTER TABLE {SEMANTIC_TABLE} DROP COLUMN embedding",
    f"ALTER TABLE {SEMANTIC_TABLE} RENAME COLUMN embedding_new TO embedding",
    f"ALTER TABLE {SEMANTIC_TABLE} ALTER COLUMN embedding SET NOT NULL",
    f"CREATE INDEX z0_memories_hnsw ON {SEMANTIC_TABLE} USING hnsw (embedding vector_cosine_ops)",
)
# Every table of the database the connecting role may analyze (a bench's bulk load, before it measures).
ANALYZE_ALL_SQL = "ANALYZE"


async def forget_scope(db: Database, scope: Scope, *, keep_read_marks: bool = True) -> int:
    """Delete everything :data:`FORGOTTEN_TABLES` hold for ``scope`` (only), in one transaction; rows deleted.

    With ``keep_read_marks`` the extraction log keeps, per thread, one ``forgotten`` row holding the ids of the
    messages read before (no excerpt, no outcome of theirs): those messages are not extracted again when a thread
    that holds them goes on. Without it the scope starts afresh, and the same messages given again are read again.
    """
    total = 0
    async with db.connection(scope) as conn:
        read = (await (await conn.execute(READ_MESSAGES_SQL, scope.params)).fetchall()) if keep_read_marks else []
        for sql in FORGET_SQL.values():
            total += (await conn.execute(sql, scope.params)).rowcount
        for row in read:
            await conn.execute(FORGOTTEN_MARK_SQL, {**scope.params, "thread": row["thread_id"], "ids": row["ids"],
                                                    "outcomes": FORGOTTEN_OUTCOMES})
    return total


async def embedded_texts(db: Database) -> list[dict[str, Any]]:
    """Every semantic memory's id, content and context (what its vector embeds), in id order."""
    async with db.connection() as conn:
        return await (await conn.execute(EMBEDDED_TEXT_SQL)).fetchall()


async def swap_embeddings(db: Database, spec: EmbeddingSpec, ids: Sequence[Any],
                          vectors: Sequence[Sequence[float]]) -> None:
    """Replace the embedding column by ``vectors`` (one per id) of ``spec``'s dimensions, rebuild the HNSW index and
    record the model, in one transaction: a failure leaves the old vectors and model in place."""
    async with db.connection() as conn, conn.transaction():
        await conn.execute(ADD_NEW_COLUMN_SQL % int(spec.dims))
        for memory_id, vector in zip(ids, vectors, strict=True):
            await conn.execute(SET_NEW_VECTOR_SQL, [VectorParam(vector), memory_id])
        await conn.execute(ZERO_UNINDEXED_SQL % int(spec.dims))
        for sql in SWAP_COLUMN_SQL:
            await conn.execute(sql)
        await write_embedding_meta(conn, spec)


async def analyze_database(db: Database) -> None:
    """Refresh the planner's statistics of every table (:data:`ANALYZE_ALL_SQL`), at once rather than at
    autovacuum's next wake-up: what a benchmark runs after loading many rows and before measuring."""
    async with db.connection() as conn:
        await conn.execute(ANALYZE_ALL_SQL)
