"""Shared by the reliability tests: a scratch database with fast embeddings, and the figures they report.

``fast_memory`` is a :class:`Z0Memory` on a database of its own (created on the test server, dropped afterwards)
with the deterministic ``hash`` embeddings: the reliability tests run thousands of writes where what a text means
does not matter, and the multilingual model would spend minutes embedding them. Its tables are emptied before each
test. ``record(...)`` counts operations run, faults injected, bad inputs tried, items lost, rows of one project
returned to another, and secrets redacted (found) or left in clear (missed) by ``redaction``: when
``Z0_RELIABILITY_FIGURES`` names a file, each call appends one JSON line to it (``bench/reliability.py`` sums them).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import fields
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest_asyncio

from z0_memory.config import Context
from z0_memory.memory import Z0Memory
from z0_memory.settings import Settings

FIGURES_ENV = "Z0_RELIABILITY_FIGURES"
KINDS = ("operations", "faults", "bad_inputs", "lost", "cross_project", "secrets_found", "secrets_missed")
TABLES = "z0_facts, z0_pending, z0_memories, z0_extraction_queue, z0_extraction_log"


def record(test: str, **counts: int) -> None:
    unknown = set(counts) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown figure(s) {sorted(unknown)}; use {KINDS}")
    path = os.environ.get(FIGURES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"test": test, **counts}) + "\n")


def scratch_url(base_url: str, name: str) -> str:
    return urlunsplit(urlsplit(base_url)._replace(path="/" + name))


@contextlib.contextmanager
def scratch_database(base_url: str, prefix: str) -> Iterator[str]:
    """A new empty database on the test server (its URL), dropped afterwards whatever happened."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield scratch_url(base_url, name)
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


RUN_FIELDS = frozenset(f.name for f in fields(Context)) - {"agent_model", "judge_model", "extractor_model"}


def fast_settings(url: str, **kw) -> Settings:
    """The process settings of a hash-embedding memory on ``url`` (model names here are the process's defaults)."""
    return Settings(database_url=url, embedding_model="hash", **kw)


def fast_setup(url: str, **kw) -> tuple[Settings, Context]:
    """``kw`` split into the process's Settings (on ``url``) and the run's Context (project acme)."""
    run = {k: v for k, v in kw.items() if k in RUN_FIELDS}
    return fast_settings(url, **{k: v for k, v in kw.items() if k not in RUN_FIELDS}), Context(project="acme", **run)


def fast_run(memory: Z0Memory, **kw) -> tuple[Z0Memory, Context]:
    """``kw`` split: the process settings (rules, timeouts...) on a view of ``memory`` (``fakes.configured``), the run
    settings into the Context (project acme)."""
    from fakes import configured

    run = {k: v for k, v in kw.items() if k in RUN_FIELDS}
    process = {k: v for k, v in kw.items() if k not in RUN_FIELDS}
    return (configured(memory, **process) if process else memory), Context(project="acme", **run)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def fast_database(database_url: str) -> AsyncIterator[str]:
    """A new empty database on the test server for this module, dropped afterwards."""
    with scratch_database(database_url, "z0_rel") as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def fast_owner(fast_database: str) -> AsyncIterator[Z0Memory]:
    async with Z0Memory(fast_settings(fast_database)) as memory:
        yield memory


@pytest_asyncio.fixture(loop_scope="session")
async def fast_memory(fast_owner: Z0Memory) -> AsyncIterator[Z0Memory]:
    """The module's hash-embedding memory, every z0 table emptied first."""
    await truncate(fast_owner)
    yield fast_owner


async def truncate(memory: Z0Memory) -> None:
    async with memory.db.connection() as conn:
        await conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY")
