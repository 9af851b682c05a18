"""Rows of the semantic table as Python objects: the columns a search reads, a row as a ``MemoryRecord`` or a
``Hit``, and the WHERE clauses every search of a scope shares."""

from __future__ import annotations

import json
from typing import Any

from z0_memory.schemas import Hit, MemoryRecord
from z0_memory.stores.database import statement

COLUMN_NAMES = (
    "id", "content", "project", "user_id", "category", "kind", "confidence", "created_at", "superseded_at",
    "fact_key", "fact_version", "source_ids", "metadata",
)
COLUMNS = ", ".join(COLUMN_NAMES)
# The columns a hit shows (:func:`hit_from_row`): a hybrid search reads only these for its fused rows.
HIT_COLUMNS = ", ".join(name for name in COLUMN_NAMES if name not in ("project", "user_id", "fact_version", "source_ids"))

# A scope's memories (current ones unless ``all``), optionally of one category.
SCOPE_SQL = ("project = %(project)s AND user_id = %(user_id)s AND (%(all)s OR superseded_at IS NULL) "
             "AND (%(category)s::text IS NULL OR category = %(category)s)")
# A search limited to a period (the question named one): memories created in [since, until); either may be open.
PERIOD_SQL = ("(%(since)s::timestamptz IS NULL OR created_at >= %(since)s::timestamptz) "
              "AND (%(until)s::timestamptz IS NULL OR created_at < %(until)s::timestamptz)")

# Where a search statement's template takes a further condition on the row (:func:`filtered`).
ROW_FILTER = "/*row filter*/"


def filtered(template: str, condition: str | None) -> str:
    """A search statement from its template: :data:`ROW_FILTER` replaced by ``AND (condition)`` (a further
    condition on the semantic table's columns, e.g. a LangGraph store namespace; ``None``: no condition)."""
    return statement(template.replace(ROW_FILTER, f" AND ({condition})" if condition else ""))


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    metadata = row.get("metadata") or {}
    return json.loads(metadata) if isinstance(metadata, str) else metadata


def record(row: dict[str, Any]) -> MemoryRecord:
    metadata = _metadata(row)
    return MemoryRecord(
        id=str(row["id"]), project=row["project"], category=row["category"], kind=row["kind"],
        content=row["content"], confidence=row["confidence"], created_at=row["created_at"],
        superseded_at=row["superseded_at"], fact_key=row["fact_key"],
        source_ids=json.loads(row["source_ids"] or "[]"), metadata=metadata,
    )


def hit_from_row(row: dict[str, Any], score: float, strategy: str) -> Hit:
    """The hit of a row of :data:`HIT_COLUMNS` (or :data:`COLUMNS`), built from the row directly: a search builds one
    for every row it returns, and a ``MemoryRecord`` on the way cost a second model's validation per row."""
    metadata = _metadata(row)
    return Hit(
        id=str(row["id"]), source="semantic", content=row["content"], score=score, kind=row["kind"],
        category=row["category"], key=row["fact_key"], confidence=row["confidence"], created_at=row["created_at"],
        superseded=row["superseded_at"] is not None, rationale=metadata.get("rationale"), strategy=strategy,
        metadata=metadata,
    )
