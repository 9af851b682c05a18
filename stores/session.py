"""Session (layer 3): LangGraph's Postgres checkpointer on the same database as the long-term memory.

A thread is a session, and a thread belongs to one scope: :class:`ScopedCheckpointer` stores a thread under a
project-qualified id (``"{project}:{user_id}:{thread_id}"``) and runs every statement in a scoped transaction, so
the same thread id under two projects is two threads, and the database's row-level security refuses another
scope's checkpoints whatever id is asked for. Callers see their own thread ids only. The unscoped saver
(:func:`async_checkpointer`) is the operator's: ``langgraph dev`` gets it through ``langgraph.json``, where the
server owns thread ids and has no caller identity. The sync factory opens a small pool of its own (for sync graphs
and scripts) and closes it on exit.

Secrets: with ``Settings.redact_checkpoints`` (the default) every checkpointer here serializes through
:class:`RedactingSerializer`, so the channel blobs and pending writes hold message text, tool-call arguments and
state strings with secrets replaced by ``[REDACTED]``; the primitive channel values LangGraph inlines into the
checkpoint's JSON (the chat graph's ``question``, ``rules``) and the checkpoint metadata are redacted in ``aput``.
Reading is unchanged: a thread restored from its checkpoints continues with ``[REDACTED]`` where a key was said.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from z0_memory.errors import DatabaseError
from z0_memory.redaction import redact_value
from z0_memory.stores.database import POOL_KWARGS, Database
from z0_memory.state import STATE_TYPES
from z0_memory.stores.scope import Scope
from z0_memory.validation import check_checkpoint, check_thread_id, check_writes

SERDE = JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


class RedactingSerializer(JsonPlusSerializer):
    """LangGraph's serializer, writing every value with its secrets redacted (``redaction.redact_value``).

    A subclass rather than a wrapper object, so LangGraph's per-graph msgpack allowlist (``with_msgpack_allowlist``,
    a shallow copy) keeps both the redaction and the strict deserialization. Loading is the parent's.
    """

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return super().dumps_typed(redact_value(obj))


REDACTING_SERDE = RedactingSerializer(allowed_msgpack_modules=STATE_TYPES)


def serde_for(redact: bool) -> JsonPlusSerializer:
    return REDACTING_SERDE if redact else SERDE


def _redact_checkpoint(checkpoint: Checkpoint,
                       metadata: CheckpointMetadata) -> tuple[Checkpoint, CheckpointMetadata]:
    """The inline (primitive) channel values and the metadata of a checkpoint, redacted; blobs go through the serde."""
    values = checkpoint.get("channel_values") or {}
    redacted = {k: redact_value(v) if isinstance(v, str) else v for k, v in values.items()}
    if any(redacted[k] is not values[k] for k in values):
        checkpoint = checkpoint.copy()
        checkpoint["channel_values"] = redacted
    return checkpoint, redact_value(metadata)


def _redacting(db: Database) -> bool:
    return bool(db.settings.redact_checkpoints)


class OperatorCheckpointer(AsyncPostgresSaver):
    """The unscoped async checkpointer: it refuses what it cannot store as :class:`ScopedCheckpointer` does (a bad
    thread id, a psycopg DataError for NUL before; a checkpoint or write holding text PostgreSQL cannot store), and
    redacts like it when asked to."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[DictRow]], *, redact: bool) -> None:
        super().__init__(pool, serde=serde_for(redact))
        self.redact = redact

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        check_thread_id(config["configurable"]["thread_id"])
        return await super().aget_tuple(config)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        check_thread_id(config["configurable"]["thread_id"])
        check_checkpoint(checkpoint, metadata, new_versions)
        if self.redact:
            checkpoint, metadata = _redact_checkpoint(checkpoint, metadata)
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        check_writes(writes)
        await super().aput_writes(config, writes, task_id, task_path)


def async_checkpointer(db: Database) -> AsyncPostgresSaver:
    """The unscoped async checkpointer on the database's pool: every thread of every project (the operator's)."""
    if db.pool is None:
        raise DatabaseError("open the database before asking for a checkpointer")
    return OperatorCheckpointer(db.pool, redact=_redacting(db))


def thread_prefix(scope: Scope) -> str:
    """How a scope's thread ids begin in the checkpoint tables (segments never contain ':')."""
    return f"{scope.project}:{scope.user_id}:"


class ScopedCheckpointer(AsyncPostgresSaver):
    """LangGraph's async Postgres checkpointer bound to one scope (tables are made by ``setup()``)."""

    def __init__(self, db: Database, scope: Scope) -> None:
        if db.pool is None:
            raise DatabaseError("open the database before asking for a checkpointer")
        self.redact = _redacting(db)
        super().__init__(db.pool, serde=serde_for(self.redact))
        self.db = db
        self.scope = scope
        self.prefix = thread_prefix(scope)

    # thread ids in and out -------------------------------------------------------------------------------------
    def _stored_id(self, thread_id: Any) -> str:
        # 1-512 characters; no NUL or other control characters, line separators, bidi overrides, lone surrogates
        return self.prefix + check_thread_id(thread_id)

    def _inner(self, config: RunnableConfig) -> RunnableConfig:
        configurable = dict(config.get("configurable") or {})
        if "thread_id" in configurable:
            configurable["thread_id"] = self._stored_id(configurable["thread_id"])
        return {**config, "configurable": configurable}

    def _outer(self, config: RunnableConfig | None) -> RunnableConfig | None:
        if config is None:
            return None
        configurable = dict(config.get("configurable") or {})
        thread_id = configurable.get("thread_id")
        if isinstance(thread_id, str) and thread_id.startswith(self.prefix):
            configurable["thread_id"] = thread_id[len(self.prefix):]
        return {**config, "configurable": configurable}

    def _outer_tuple(self, found: CheckpointTuple) -> CheckpointTuple:
        return found._replace(config=self._outer(found.config), parent_config=self._outer(found.parent_config))

    # every statement in a transaction bound to the scope -------------------------------------------------------
    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        async with self.lock, self.db.connection(self.scope) as conn:
            if pipeline and self.supports_pipeline:
                async with conn.pipeline(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            else:
                async with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur

    # the BaseCheckpointSaver interface -------------------------------------------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        found = await super().aget_tuple(self._inner(config))
        return self._outer_tuple(found) if found else None

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        async for found in super().alist(self._inner(config) if config else None, filter=filter,
                                         before=self._inner(before) if before else None, limit=limit):
            yield self._outer_tuple(found)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        check_checkpoint(checkpoint, metadata, new_versions)  # InvalidInputError before anything is written
        if self.redact:
            checkpoint, metadata = _redact_checkpoint(checkpoint, metadata)
        return self._outer(await super().aput(self._inner(config), checkpoint, metadata, new_versions))

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        check_writes(writes)
        await super().aput_writes(self._inner(config), writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await super().adelete_thread(self._stored_id(thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
        await super().aprune([self._stored_id(t) for t in thread_ids], strategy=strategy)

    async def aget_delta_channel_history(self, *, config: RunnableConfig,
                                         channels: Sequence[str]) -> Mapping[str, DeltaChannelHistory]:
        return await super().aget_delta_channel_history(config=self._inner(config), channels=channels)


class _SyncRedactingSaver(PostgresSaver):
    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        checkpoint, metadata = _redact_checkpoint(checkpoint, metadata)
        return super().put(config, checkpoint, metadata, new_versions)


@contextmanager
def sync_checkpointer(url: str, *, max_size: int = 4, redact: bool = True) -> Iterator[PostgresSaver]:
    """A sync checkpointer with its own pool on ``url``; the pool closes when the block ends.

    ``redact``: redacted like the async checkpointers (default true)."""
    with ConnectionPool(url, min_size=1, max_size=max_size, kwargs=dict(POOL_KWARGS)) as pool:
        saver = (_SyncRedactingSaver if redact else PostgresSaver)(pool, serde=serde_for(redact))
        saver.setup()
        yield saver
