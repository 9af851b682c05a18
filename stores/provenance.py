"""Which messages has this scope's memory already extracted? (what makes the extraction node, ``add`` and
``ingest`` idempotent, and keeps the node from re-reading a thread's earlier turns after every turn)

Every extracted turn is recorded in the extraction log with its message ids, whatever it gave (a write, a pending
item, an ignored instruction, or nothing); every write also cites the ids of the messages it came from: fact
versions and pending candidates in ``message_ids``, semantic rows in ``source_ids`` (fact mirrors included), queued
failed turns in their ``messages``. A user message logged or cited anywhere in the scope has been extracted (or is
queued for retry) and is not extracted again.
"""

from __future__ import annotations

from collections.abc import Sequence

from z0_memory.stores.database import Database
from z0_memory.stores.extraction_log import LOG_TABLE
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.scope import Scope

EXTRACTED_IDS_SQL = f"""
SELECT given.id FROM unnest(%(ids)s::text[]) AS given(id)
WHERE EXISTS (SELECT 1 FROM {LOG_TABLE} l WHERE l.project = %(project)s AND l.user_id = %(user_id)s
              AND given.id = ANY(l.message_ids))
   OR EXISTS (SELECT 1 FROM z0_facts f WHERE f.project = %(project)s AND f.user_id = %(user_id)s
              AND given.id = ANY(f.message_ids))
   OR EXISTS (SELECT 1 FROM z0_pending p WHERE p.project = %(project)s AND p.user_id = %(user_id)s
              AND given.id = ANY(p.message_ids))
   OR EXISTS (SELECT 1 FROM {SEMANTIC_TABLE} m WHERE m.project = %(project)s AND m.user_id = %(user_id)s
              AND m.source_ids IS NOT NULL AND m.source_ids::jsonb ? given.id)
   OR EXISTS (SELECT 1 FROM z0_extraction_queue q WHERE q.project = %(project)s AND q.user_id = %(user_id)s
              AND q.messages @> jsonb_build_array(jsonb_build_object('id', given.id)))
"""


async def extracted_message_ids(db: Database, scope: Scope, ids: Sequence[str]) -> set[str]:
    """The subset of ``ids`` that ``scope``'s extraction log records, or some memory, pending item or queued turn
    of ``scope`` cites."""
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
