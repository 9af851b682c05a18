"""KV facts (layer 2): settled, overwritable facts keyed ``{project}:{category}:{entity}``, with full history.

``put`` never overwrites: the same value again records a confirmation on the current version; a new value closes
the current version (``valid_to``) and opens the next one, keeping each version's provenance and rationale. Both
happen in one transaction under a per-key advisory lock, so concurrent writers to one key serialise instead of
losing a write, and every version gets a searchable mirror row in the semantic table in the same transaction.
``forget`` deletes for real: the current version, or (``include_history=True``) every version and mirror.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.embeddings import Embeddings

from z0_memory.stores.database import Database
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.scope import Scope
from z0_memory.stores.semantic import NewMemory, insert_row
from z0_memory.schemas import FactVersion, MemoryKey, MemoryKind, Provenance, reject_nul, validate_segment

_FACT_COLUMNS = (
    "id, project, category, entity, value, statement, version, valid_from, valid_to, thread_id, message_ids, extractor, "
    "confidence, rationale, confirmations, recorded_at"
)

# Every version of a scope's facts, as raw rows, each with its mirror row's kind and content (LEFT JOIN: a version
# whose mirror was deleted still shows): what ``bench/extraction.py`` compares before and after a turn.
VERSION_ROWS_SQL = (
    "SELECT f.id, f.category, f.entity, f.value, f.version, f.valid_to, f.confirmations, f.rationale, "
    f"m.kind, m.content FROM z0_facts f LEFT JOIN {SEMANTIC_TABLE} m "
    "ON m.project = f.project AND m.user_id = f.user_id "
    "AND m.fact_key = f.project || ':' || f.category || ':' || f.entity AND m.fact_version = f.version "
    "WHERE f.project = %(project)s AND f.user_id = %(user_id)s"
)


@dataclass(frozen=True)
class FactWrite:
    """What a ``put`` did: ``created`` a first version, ``superseded`` an older one, ``confirmed`` it, or ``revised``
    it (the same value again with a new reason: a new version)."""

    action: Literal["created", "superseded", "confirmed", "revised"]
    fact: FactVersion
    previous: FactVersion | None = None


def _version(row: dict[str, Any]) -> FactVersion:
    return FactVersion(
        id=row["id"],
        key=MemoryKey(project=row["project"], category=row["category"], entity=row["entity"]),
        value=row["value"], statement=row["statement"], version=row["version"], valid_from=row["valid_from"], valid_to=row["valid_to"],
        confirmations=row["confirmations"],
        provenance=Provenance(
            thread_id=row["thread_id"], message_ids=list(row["message_ids"] or []), extractor=row["extractor"],
            confidence=row["confidence"], rationale=row["rationale"], recorded_at=row["recorded_at"],
        ),
    )


def mirror_id(scope: Scope, key: MemoryKey, version: int) -> str:
    """The semantic row id of a fact version: stable, so KV and semantic hits of one version deduplicate."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"z0:{scope.project}:{scope.user_id}:{key}:v{version}"))


def mirror_text(key: MemoryKey, value: str, rationale: str | None, statement: str | None = None) -> str:
    """The sentence a fact version is searchable by: key, value, the statement it came from, and the reason."""
    text = f"{key.category.replace('_', ' ')} / {key.entity.replace('_', ' ')}: {value}"
    if statement and statement.strip().casefold() not in {value.casefold(), text.casefold()}:
        text = f"{text} — {statement.strip()}"
    if rationale and rationale.casefold() not in text.casefold():
        text = f"{text} (because {rationale})"
    return text


class FactStore:
    """KV facts of one scope."""

    def __init__(self, db: Database, scope: Scope, embeddings: Embeddings) -> None:
        self.db = db
        self.scope = scope
        self.embeddings = embeddings

    def _params(self, key: MemoryKey) -> dict[str, Any]:
        return {**self.scope.params, "category": key.category, "entity": key.entity}

    async def get(self, key: str | MemoryKey) -> FactVersion | None:
        """The current version of ``key``, or None."""
        k = self.scope.key(key)
        async with self.db.connection(self.scope) as conn:
            row = await (await conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND category = %(category)s AND entity = %(entity)s AND valid_to IS NULL", self._params(k),
            )).fetchone()
        return _version(row) if row else None

    async def list(self, category: str | None = None, *, include_superseded: bool = False) -> list[FactVersion]:
        """Facts of the project (or of one category), current versions unless history is asked for."""
        if category is not None:
            validate_segment(category, "category")
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND (%(category)s::text IS NULL OR category = %(category)s) "
                "AND (%(all)s OR valid_to IS NULL) ORDER BY category, entity, version",
                {**self.scope.params, "category": category, "all": include_superseded},
            )).fetchall()
        return [_version(r) for r in rows]

    async def categories(self) -> list[str]:
        """The categories that hold a current fact in this scope."""
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(
                "SELECT DISTINCT category FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND valid_to IS NULL ORDER BY 1", self.scope.params)).fetchall()
        return [r["category"] for r in rows]

    async def history(self, key: str | MemoryKey) -> list[FactVersion]:
        """Every version of ``key``, oldest first."""
        k = self.scope.key(key)
        async with self.db.connection(self.scope) as conn:
            rows = await (await conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND category = %(category)s AND entity = %(entity)s ORDER BY version", self._params(k),
            )).fetchall()
        return [_version(r) for r in rows]

    async def version_rows(self) -> list[dict[str, Any]]:
        """Every version of every fact of the scope as a raw row (:data:`VERSION_ROWS_SQL`), in no particular order:
        for inspection (the extraction bench's before/after snapshots), not for the application."""
        async with self.db.connection(self.scope) as conn:
            return await (await conn.execute(VERSION_ROWS_SQL, self.scope.params)).fetchall()

    async def put(self, key: str | MemoryKey, value: str, provenance: Provenance | None = None, *,
                  kind: MemoryKind = "fact", statement: str | None = None, revise: bool = False) -> FactWrite:
        """Set ``key`` to ``value``: confirm, create, or supersede (keeping the old version in history).

        ``statement`` is the sentence the value was stated in ("Hono, not Express"); it is kept with the version.
        ``revise``: the same value said again with something new (a reason) opens a new version instead of counting a
        confirmation, so the earlier version and its rationale stay in history (action ``revised``).
        A confirmation counts each statement once: the value again from messages the current version already cites
        (a turn extracted again after its writes failed half way) confirms it without counting.
        """
        k = self.scope.key(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"the value of {k} must be non-empty text")
        value = value.strip()
        prov = provenance or Provenance()
        reject_nul(f"the value of {k}", value)
        reject_nul(f"the statement or provenance of {k}", statement, prov)
        text = mirror_text(k, value, prov.rationale, statement)
        vector = await self.embeddings.aembed_query(text)
        params = self._params(k)
        async with self.db.connection(self.scope) as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"z0fact|{self.scope.user_id}|{k}"])
            row = await (await conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s "
                "AND category = %(category)s AND entity = %(entity)s AND valid_to IS NULL FOR UPDATE", params,
            )).fetchone()
            current = _version(row) if row else None
            if current is not None and current.value.casefold() == value.casefold() and not revise:
                if prov.message_ids and set(prov.message_ids) <= set(current.provenance.message_ids):
                    return FactWrite("confirmed", current, None)  # the same messages again (a retried turn): once
                confirmed = await (await conn.execute(
                    f"UPDATE z0_facts SET confirmations = confirmations + 1 WHERE id = %s RETURNING {_FACT_COLUMNS}",
                    [current.id],
                )).fetchone()
                return FactWrite("confirmed", _version(confirmed), None)
            now = datetime.now(UTC)
            last = await (await conn.execute(
                "SELECT coalesce(max(version), 0) AS v FROM z0_facts WHERE project = %(project)s "
                "AND user_id = %(user_id)s AND category = %(category)s AND entity = %(entity)s", params,
            )).fetchone()
            version = last["v"] + 1
            if current is not None:
                await conn.execute("UPDATE z0_facts SET valid_to = %s WHERE id = %s", [now, current.id])
                await conn.execute(
                    f"UPDATE {SEMANTIC_TABLE} SET superseded_at = %(now)s WHERE project = %(project)s "
                    "AND user_id = %(user_id)s AND fact_key = %(key)s AND superseded_at IS NULL",
                    {**self.scope.params, "now": now, "key": str(k)},
                )
            new = await (await conn.execute(
                "INSERT INTO z0_facts (project, user_id, category, entity, value, version, valid_from, thread_id, "
                "message_ids, extractor, confidence, rationale, statement) VALUES (%(project)s, %(user_id)s, "
                "%(category)s, %(entity)s, %(value)s, %(version)s, %(now)s, %(thread_id)s, %(message_ids)s, %(extractor)s, "
                f"%(confidence)s, %(rationale)s, %(statement)s) RETURNING {_FACT_COLUMNS}",
                {**params, "value": value, "version": version, "now": now, "thread_id": prov.thread_id,
                 "message_ids": list(prov.message_ids), "extractor": prov.extractor,
                 "confidence": prov.confidence, "rationale": prov.rationale, "statement": statement},
            )).fetchone()
            fact = _version(new)
            mirror = NewMemory(
                id=mirror_id(self.scope, k, version), content=text, category=k.category, kind=kind,
                confidence=prov.confidence, source_ids=list(prov.message_ids), created_at=now,
                metadata={"rationale": prov.rationale, "value": value, "version": version,
                          "thread_id": prov.thread_id, "extractor": prov.extractor},
            )
            await insert_row(conn, self.scope, mirror, vector, fact_key=str(k), fact_version=version)
        if current is not None and current.value.casefold() == value.casefold():
            return FactWrite("revised", fact, current)
        return FactWrite("superseded" if current else "created", fact, current)

    async def forget(self, key: str | MemoryKey, *, include_history: bool = False) -> int:
        """Delete the current version (or every version) of ``key`` and its search mirror; returns rows deleted."""
        k = self.scope.key(key)
        params = {**self._params(k), "key": str(k), "all": include_history}
        async with self.db.connection(self.scope) as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"z0fact|{self.scope.user_id}|{k}"])
            cur = await conn.execute(
                "DELETE FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s AND category = "
                "%(category)s AND entity = %(entity)s AND (%(all)s OR valid_to IS NULL) RETURNING version", params,
            )
            versions = [r["version"] for r in await cur.fetchall()]
            if versions:
                await conn.execute(
                    f"DELETE FROM {SEMANTIC_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s "
                    "AND fact_key = %(key)s AND fact_version = ANY(%(versions)s)", {**params, "versions": versions},
                )
        return len(versions)

