"""Which messages has this scope's memory already extracted? (what makes the extraction node, ``add`` and
``ingest`` idempotent, and keeps the node from re-reading a thread's earlier turns after every turn)

Every extracted turn is recorded in the extraction log with its message ids, whatever it gave (a write, a pending
item, an ignored instruction, or nothing), after all its writes; a turn whose extractor failed is queued with its
messages. A user message logged or queued in the scope has been extracted (or waits for a retry) and is not read
again. A memory citing a message is not enough: a turn whose writes failed half way (the database went away after
its first write) cites its message in what was written, and must be read again, or the rest would be lost.
"""

from __future__ import annotations

from collections.abc import Sequence

from z0_memory.stores.database import Database
from z0_memory.stores.extraction_log import LOG_TABLE
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.scope import Scope

# one pass over the log and the queue of the scope (rows naming any of the ids), not one per id: a long thread asks about every
# user message it holds after each turn
EXTRACTED_IDS_SQL = f"""
SELECT DISTINCT found.id FROM unnest(%(ids)s::text[]) AS given(id) JOIN (
    SELECT unnest(l.message_ids) AS id FROM {LOG_TABLE} l
     WHERE l.project = %(project)s AND l.user_id = %(user_id)s AND l.message_ids && %(ids)s::text[]
    UNION ALL
    SELECT message ->> 'id' FROM z0_extraction_queue q, jsonb_array_elements(q.messages) AS message
     WHERE q.project = %(project)s AND q.user_id = %(user_id)s
) AS found ON found.id = given.id
"""


async def extracted_message_ids(db: Database, scope: Scope, ids: Sequence[str]) -> set[str]:
    """The subset of ``ids`` that ``scope``'s extraction log records or its extraction queue holds."""
    if not ids:
        return set()
    async with db.connection(scope) as conn:
        rows = await (await conn.execute(EXTRACTED_IDS_SQL, {**scope.params, "ids": list(ids)})).fetchall()
    return {r["id"] for r in rows}


MEMORY_ID_PREFIX_SQL = f"""
SELECT id::text AS id FROM {SEMANTIC_TABLE}
WHERE project = %(project)s AND user_id = %(user_id)s AND id::text LIKE %(prefix)s || '%%'
LIMIT 2
"""


async def memory_ids_with_prefix(db: Database, scope: Scope, prefix: str) -> list[str]:
    """At most two ids of ``scope``'s semantic memories starting with ``prefix`` (two: the prefix is ambiguous)."""
    async with db.connection(scope) as conn:
        rows = await (await conn.execute(MEMORY_ID_PREFIX_SQL, {**scope.params, "prefix": prefix})).fetchall()
    return [r["id"] for r in rows]
