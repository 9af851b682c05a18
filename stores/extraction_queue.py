"""The extraction retry queue of one scope: turns whose extraction failed (a model error), kept with their messages
(redacted by the caller) until ``z0-memory extraction retry`` extracts them. A claimed turn is held under a row lock
(``FOR UPDATE SKIP LOCKED``) while it is retried, so two retry runs at once never process the same turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg

from z0_memory.stores.database import Database
from z0_memory.stores.scope import Scope

ERROR_CHARS = 2000  # an error message is kept to this length

_INSERT_SQL = ("INSERT INTO z0_extraction_queue (project, user_id, thread_id, messages, error) "
               "VALUES (%(project)s, %(user_id)s, %(thread)s, %(messages)s::jsonb, %(error)s) RETURNING id")
_IDS_SQL = "SELECT id FROM z0_extraction_queue WHERE project = %(project)s AND user_id = %(user_id)s ORDER BY id"
_CLAIM_SQL = ("SELECT id, thread_id, messages FROM z0_extraction_queue WHERE id = %(id)s AND project = %(project)s "
              "AND user_id = %(user_id)s FOR UPDATE SKIP LOCKED")
_FAILED_AGAIN_SQL = ("UPDATE z0_extraction_queue SET attempts = attempts + 1, last_attempt_at = now(), "
                     "error = %(error)s WHERE id = %(id)s")
_DONE_SQL = "DELETE FROM z0_extraction_queue WHERE id = %(id)s"


@dataclass
class QueuedTurn:
    """A claimed turn: its messages (``[{"role", "text", "id"}]``) and thread; report how its retry went."""

    id: int
    thread_id: str | None
    messages: list[dict[str, Any]]
    _conn: psycopg.AsyncConnection

    async def done(self) -> None:
        await self._conn.execute(_DONE_SQL, {"id": self.id})

    async def failed_again(self, error: str) -> None:
        await self._conn.execute(_FAILED_AGAIN_SQL, {"id": self.id, "error": error[:ERROR_CHARS]})


class ExtractionQueue:
    """The retry queue of one scope."""

    def __init__(self, db: Database, scope: Scope) -> None:
        self.db = db
        self.scope = scope

    async def add(self, messages: list[dict[str, Any]], thread_id: str | None, error: str) -> int:
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(_INSERT_SQL, {
                **self.scope.params, "thread": thread_id, "messages": json.dumps(messages),
                "error": error[:ERROR_CHARS]})).fetchone()
        return int(row["id"])

    async def ids(self) -> list[int]:
        async with self.db.connection(self.scope) as conn:
            return [r["id"] for r in await (await conn.execute(_IDS_SQL, self.scope.params)).fetchall()]

    @asynccontextmanager
    async def claim(self, queue_id: int) -> AsyncIterator[QueuedTurn | None]:
        """The queued turn, locked for this transaction; None when another run holds it or finished it."""
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(_CLAIM_SQL, {**self.scope.params, "id": queue_id})).fetchone()
            yield QueuedTurn(row["id"], row["thread_id"], row["messages"], conn) if row else None
