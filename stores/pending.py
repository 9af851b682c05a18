"""Pending candidates: what a turn said with too little confidence to keep, waiting for a later confirmation.

A candidate that matches a waiting one (the same key with the same value, or nearly the same words) confirms it instead of adding a
second row: the confirmation count goes up, ``last_seen`` moves, the expiry is pushed back and the higher
confidence is kept. Matching and confirming run under a per-scope advisory lock, so two turns confirming the same
item at once count twice, never create two rows. Items past ``expires_at`` are invisible and purged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from z0_memory.stores.database import Database
from z0_memory.stores.scope import Scope
from z0_memory.errors import InvalidInputError
from z0_memory.schemas import Candidate, PendingItem, Provenance, reject_nul
from z0_memory.text import term_overlap

SIMILAR_CONTENT = 0.6
_COLUMNS = (
    "id, project, match_key, content, candidate, confirmations, first_seen, last_seen, expires_at, thread_id, "
    "message_ids, extractor, confidence"
)

# Every pending row of a scope, expired ones included, as stored: what ``bench/extraction.py`` compares before and
# after a turn.
RAW_ROWS_SQL = ("SELECT id, match_key, candidate, confirmations FROM z0_pending "
                "WHERE project = %(project)s AND user_id = %(user_id)s")


@dataclass(frozen=True)
class PendingWrite:
    action: Literal["created", "confirmed"]
    item: PendingItem


def _item(row: dict[str, Any]) -> PendingItem:
    candidate = row["candidate"] if isinstance(row["candidate"], dict) else json.loads(row["candidate"])
    return PendingItem(
        id=row["id"], project=row["project"], candidate=Candidate.model_validate(candidate),
        confirmations=row["confirmations"], first_seen=row["first_seen"], last_seen=row["last_seen"],
        expires_at=row["expires_at"],
        provenance=Provenance(thread_id=row["thread_id"], message_ids=list(row["message_ids"] or []),
                              extractor=row["extractor"], confidence=row["confidence"],
                              recorded_at=row["first_seen"]),
    )


def _same_value(a: str | None, b: str | None) -> bool:
    """Values agree when either is unknown or both read the same ignoring case and spacing."""
    if not a or not b:
        return True
    return "".join(a.casefold().split()) == "".join(b.casefold().split())


def pending_id(value: object) -> int:
    """A pending item's id as an int, or a clear error (ids come from CLIs and APIs as text)."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise InvalidInputError(f"a pending item id is a whole number, got {value!r}") from None


class PendingStore:
    """Pending candidates of one scope."""

    def __init__(self, db: Database, scope: Scope, ttl: timedelta = timedelta(days=14)) -> None:
        self.db = db
        self.scope = scope
        self.ttl = ttl

    def _lock_sql(self) -> tuple[str, list[str]]:
        return "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"z0pending|{self.scope.project}|{self.scope.user_id}"]

    async def list(self, *, include_expired: bool = False) -> list[PendingItem]:
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(
                f"SELECT {_COLUMNS} FROM z0_pending WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND (%(all)s OR expires_at > now()) ORDER BY last_seen DESC",
                {**self.scope.params, "all": include_expired},
            )).fetchall()
        return [_item(r) for r in rows]

    async def raw_rows(self) -> list[dict[str, Any]]:
        """Every pending row of the scope (expired ones too) as stored (:data:`RAW_ROWS_SQL`), in no particular
        order: for inspection (the extraction bench's before/after snapshots), not for the application."""
        async with self.db.connection(self.scope) as conn:
            return await (await conn.execute(RAW_ROWS_SQL, self.scope.params)).fetchall()

    async def get(self, item_id: int) -> PendingItem | None:
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(
                f"SELECT {_COLUMNS} FROM z0_pending WHERE id = %(id)s AND project = %(project)s "
                "AND user_id = %(user_id)s AND expires_at > now()", {**self.scope.params, "id": pending_id(item_id)},
            )).fetchone()
        return _item(row) if row else None

    def _matches(self, item: PendingItem, candidate: Candidate) -> bool:
        if candidate.key and item.candidate.key:
            # "maybe Redis" and "maybe Memcached" for the cache are two options, not one repeated
            return candidate.key == item.candidate.key and _same_value(candidate.value, item.candidate.value)
        return term_overlap(candidate.content, item.candidate.content) >= SIMILAR_CONTENT

    async def find(self, candidate: Candidate) -> PendingItem | None:
        """The waiting item a candidate matches (same key, else similar content), if any."""
        for item in await self.list():
            if self._matches(item, candidate):
                return item
        return None

    async def add(self, candidate: Candidate, provenance: Provenance, *, now: datetime | None = None) -> PendingWrite:
        """Hold a candidate, or count it as a confirmation of the matching waiting item (which then cites the
        confirming messages too); the same messages again (a turn extracted again after a failure) count once."""
        reject_nul("a pending candidate or its provenance", candidate, provenance)
        now = now or datetime.now(UTC)
        async with self.db.connection(self.scope) as conn:
            await conn.execute(*self._lock_sql())
            rows = await (await conn.execute(
                f"SELECT {_COLUMNS} FROM z0_pending WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND expires_at > %(now)s ORDER BY last_seen DESC", {**self.scope.params, "now": now},
            )).fetchall()
            match = next((it for it in map(_item, rows) if self._matches(it, candidate)), None)
            if match is not None and provenance.message_ids \
                    and set(provenance.message_ids) <= set(match.provenance.message_ids):
                return PendingWrite("confirmed", match)  # the same messages again (a retried turn): counted once
            if match is not None:
                merged = match.candidate.model_copy(
                    update={"confidence": max(match.candidate.confidence, candidate.confidence)}
                )
                row = await (await conn.execute(
                    "UPDATE z0_pending SET confirmations = confirmations + 1, last_seen = %(now)s, "
                    "expires_at = %(expires)s, confidence = %(conf)s, candidate = %(cand)s::jsonb, "
                    "message_ids = message_ids || %(mids)s::text[] "
                    f"WHERE id = %(id)s RETURNING {_COLUMNS}",
                    {"now": now, "expires": now + self.ttl, "conf": merged.confidence,
                     "cand": merged.model_dump_json(), "id": match.id,
                     "mids": [m for m in provenance.message_ids if m not in match.provenance.message_ids]},
                )).fetchone()
                return PendingWrite("confirmed", _item(row))
            row = await (await conn.execute(
                "INSERT INTO z0_pending (project, user_id, match_key, content, candidate, first_seen, last_seen, "
                "expires_at, thread_id, message_ids, extractor, confidence) VALUES (%(project)s, %(user_id)s, "
                "%(key)s, %(content)s, %(cand)s::jsonb, %(now)s, %(now)s, %(expires)s, %(thread)s, %(mids)s, "
                f"%(extractor)s, %(conf)s) RETURNING {_COLUMNS}",
                {**self.scope.params, "key": candidate.key, "content": candidate.content,
                 "cand": candidate.model_dump_json(), "now": now, "expires": now + self.ttl,
                 "thread": provenance.thread_id, "mids": list(provenance.message_ids),
                 "extractor": provenance.extractor, "conf": candidate.confidence},
            )).fetchone()
        return PendingWrite("created", _item(row))

    async def take(self, item_id: int) -> PendingItem | None:
        """Remove a waiting item and return it (for promotion or rejection); None if it is gone already.

        Two callers taking the same item: exactly one gets it, so a promotion happens once.
        """
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(
                f"DELETE FROM z0_pending WHERE id = %(id)s AND project = %(project)s AND user_id = %(user_id)s "
                f"AND expires_at > now() RETURNING {_COLUMNS}", {**self.scope.params, "id": pending_id(item_id)},
            )).fetchone()
        return _item(row) if row else None

    async def purge_expired(self, *, now: datetime | None = None) -> int:
        async with self.db.connection(self.scope) as conn:
            cur = await conn.execute(
                "DELETE FROM z0_pending WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND expires_at <= %(now)s", {**self.scope.params, "now": now or datetime.now(UTC)},
            )
            return cur.rowcount
