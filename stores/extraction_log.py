"""The extraction log of one scope: per extracted turn, what the extraction node did with each candidate.

One row per turn, written by the extraction node after its writes: the thread, the ids of the turn's messages, a
short (already redacted) excerpt of what was said, and the outcomes (``WriteOutcome``s, stored as JSON without
their empty fields: a fact written or superseded, a memory confirmed, a candidate held pending, one dropped and why,
or the turn queued for retry). The memory inspector reads it to say, per turn, what was written, confirmed,
held pending or ignored. Rows are deleted with the scope (``ProjectMemory.forget_everything``), which leaves one
``forgotten`` row per thread with the ids of the messages read (and nothing of what they said), so they are not read
again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from z0_memory.schemas import WriteOutcome
from z0_memory.stores.database import Database
from z0_memory.stores.scope import Scope

LOG_TABLE = "z0_extraction_log"
EXCERPT_CHARS = 500  # what was said, kept to this length
RECENT_LIMIT = 50

CREATE_SQL = f"""
CREATE TABLE IF NOT EXISTS {LOG_TABLE} (
    id          bigserial PRIMARY KEY,
    project     text NOT NULL,
    user_id     text NOT NULL DEFAULT '',
    thread_id   text,
    message_ids text[] NOT NULL DEFAULT '{{}}',
    excerpt     text NOT NULL DEFAULT '',
    outcomes    jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS z0_extraction_log_scope ON {LOG_TABLE} (project, user_id, created_at DESC);
"""
INSERT_SQL = (f"INSERT INTO {LOG_TABLE} (project, user_id, thread_id, message_ids, excerpt, outcomes) "
              "VALUES (%(project)s, %(user_id)s, %(thread)s, %(message_ids)s, %(excerpt)s, %(outcomes)s::jsonb) "
              "RETURNING id")
RECENT_SQL = (f"SELECT id, thread_id, message_ids, excerpt, outcomes, created_at FROM {LOG_TABLE} "
              "WHERE project = %(project)s AND user_id = %(user_id)s "
              "AND (%(since)s::timestamptz IS NULL OR created_at >= %(since)s::timestamptz) "
              "ORDER BY created_at DESC, id DESC LIMIT %(limit)s")
# turns extracted: not the marks forgetting leaves (``stores.maintenance.forget_scope``), which are no turn
COUNT_SQL = (f"SELECT count(*) AS n FROM {LOG_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s "
             """AND NOT outcomes @> '[{"action": "forgotten"}]'""")

# How an outcome's action reads in the log: written, confirmed, pending or ignored.
ACTION_GROUPS = {
    "fact_created": "written", "fact_superseded": "written", "fact_revised": "written", "memory_added": "written",
    "promoted": "written",
    "fact_confirmed": "confirmed", "memory_confirmed": "confirmed",
    "pending_created": "pending", "pending_confirmed": "pending",
    "dropped": "ignored", "queued_for_retry": "ignored", "nothing": "ignored", "forgotten": "ignored",
}


def outcomes_json(outcomes: Sequence[WriteOutcome]) -> str:
    """The ``outcomes`` column's value: the outcomes as JSON, without their empty fields."""
    return json.dumps([o.model_dump(mode="json", exclude_none=True) for o in outcomes])


def outcome_group(action: str) -> str:
    return ACTION_GROUPS.get(action, "ignored")


@dataclass(frozen=True)
class LogEntry:
    """One extracted turn."""

    id: int
    thread_id: str | None
    message_ids: list[str]
    excerpt: str
    outcomes: list[WriteOutcome]
    created_at: datetime

    def counts(self) -> dict[str, int]:
        """Outcomes per group (written, confirmed, pending, ignored)."""
        out = {"written": 0, "confirmed": 0, "pending": 0, "ignored": 0}
        for outcome in self.outcomes:
            out[outcome_group(outcome.action)] += 1
        return out


def _entry(row: dict[str, Any]) -> LogEntry:
    outcomes = row["outcomes"] if isinstance(row["outcomes"], list) else json.loads(row["outcomes"])
    return LogEntry(row["id"], row["thread_id"], list(row["message_ids"] or []), row["excerpt"],
                    [WriteOutcome.model_validate(o) for o in outcomes], row["created_at"])


class ExtractionLog:
    """The extraction log of one scope."""

    def __init__(self, db: Database, scope: Scope) -> None:
        self.db = db
        self.scope = scope

    async def add(self, outcomes: Sequence[WriteOutcome], *, thread_id: str | None = None,
                  message_ids: Sequence[str] = (), excerpt: str = "") -> int:
        """Record one turn's outcomes (an empty list: the turn gave nothing to remember)."""
        rows = list(outcomes) or [WriteOutcome(action="nothing",
                                               reason="the extractor found nothing worth remembering")]
        stored = outcomes_json(rows)
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(INSERT_SQL, {
                **self.scope.params, "thread": thread_id, "message_ids": list(message_ids),
                "excerpt": excerpt[:EXCERPT_CHARS], "outcomes": stored})).fetchone()
        return int(row["id"])

    async def recent(self, limit: int = RECENT_LIMIT, *, since: datetime | None = None) -> list[LogEntry]:
        """The latest turns, newest first (optionally only those logged since ``since``)."""
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(RECENT_SQL, {**self.scope.params, "limit": int(limit),
                                                          "since": since})).fetchall()
        return [_entry(r) for r in rows]

    async def count(self) -> int:
        async with self.db.connection(self.scope) as conn:
            return int((await (await conn.execute(COUNT_SQL, self.scope.params)).fetchone())["n"])
