"""Session (layer 3): LangGraph's Postgres checkpointer on the same database as the long-term memory.

A thread is a session. The async saver shares the memory's psycopg pool; the sync factory opens a small pool of
its own (for sync graphs and scripts) and closes it on exit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from psycopg_pool import ConnectionPool

from z0_memory.stores.database import POOL_KWARGS, Database

# The state channels hold these pydantic models; the checkpointer may restore exactly these.
STATE_TYPES = [("z0_memory.schemas", name) for name in ("Hit", "Verdict", "RoundTrace", "RouteDecision")]
SERDE = JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def async_checkpointer(db: Database) -> AsyncPostgresSaver:
    """An async checkpointer on the database's pool (tables are made by ``setup()``)."""
    if db.pool is None:
        from z0_memory.errors import DatabaseError

        raise DatabaseError("open the database before asking for a checkpointer")
    return AsyncPostgresSaver(db.pool, serde=SERDE)


@contextmanager
def sync_checkpointer(url: str, *, max_size: int = 4) -> Iterator[PostgresSaver]:
    """A sync checkpointer with its own pool on ``url``; the pool closes when the block ends."""
    with ConnectionPool(url, min_size=1, max_size=max_size, kwargs=dict(POOL_KWARGS)) as pool:
        saver = PostgresSaver(pool, serde=SERDE)
        saver.setup()
        yield saver
