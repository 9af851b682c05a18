"""Resources for ``langgraph dev`` / LangGraph Platform: the store and checkpointer ``langgraph.json`` names.

The server asks for the store and the checkpointer through two separate async context managers; both must share
one database owner (one pool, one handle on the embedded server). :class:`ServerResources` is that owner: the
first context to enter opens the :class:`~z0_memory.memory.Z0Memory` (configured from the environment: ``Z0_*``,
``DATABASE_URL``), the last to leave closes it.

Both are operator surfaces: the server owns its thread ids and has no caller identity, so its checkpointer sees every
project's threads and its store takes the project from the namespace (``(project, category)``). Each graph run
still reads and writes long-term memory only in the project of its run context. Put the server behind LangGraph's
auth handlers before exposing it beyond this machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from z0_memory.memory import Z0Memory
from z0_memory.settings import Settings

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from z0_memory.stores.langgraph_store import Z0Store


class ServerResources:
    """A reference-counted owner of one Z0Memory for the server process."""

    def __init__(self) -> None:
        self._memory: Z0Memory | None = None
        self._users = 0
        self._lock = asyncio.Lock()

    async def acquire(self) -> Z0Memory:
        async with self._lock:
            if self._memory is None:
                memory = Z0Memory(Settings.from_env())
                await memory.open()
                self._memory = memory
            self._users += 1
            return self._memory

    async def release(self) -> None:
        async with self._lock:
            self._users -= 1
            if self._users == 0 and self._memory is not None:
                memory, self._memory = self._memory, None
                await memory.close()


resources = ServerResources()


@asynccontextmanager
async def store() -> AsyncIterator[Z0Store]:
    """``langgraph.json`` ``store.path``: z0-memory as the server's LangGraph store."""
    memory = await resources.acquire()
    try:
        yield memory.operator_store()
    finally:
        await resources.release()


@asynccontextmanager
async def checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """``langgraph.json`` ``checkpointer.path``: the Postgres checkpointer on the same database."""
    memory = await resources.acquire()
    try:
        yield memory.operator_checkpointer()
    finally:
        await resources.release()
