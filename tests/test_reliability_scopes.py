"""Isolation breaks an outside probe found, each reproduced here, and the database's own enforcement of scopes.

* two processes setting up a fresh database at once (they deadlocked: a blocking advisory lock against LangGraph's
  ``CREATE INDEX CONCURRENTLY``);
* a scope inserting the row id of another project's next fact version (every later write of that key failed);
* one thread id under two projects (the second project read the first one's turns);
* the store adapter asked for another project (it read, wrote and searched it, and ignored ``filter``);
* and row-level security: the Python layer deliberately asking for another scope's rows, which Postgres refuses.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import GetOp, PutOp, SearchOp

from fakes import configured
from reliability_support import record

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.schemas import MemoryKey, Provenance
from z0_memory.stores.facts import mirror_id
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.scope import Scope
from z0_memory.stores.semantic import NewMemory

pytestmark = pytest.mark.asyncio(loop_scope="session")

OPEN_AND_WRITE = textwrap.dedent("""
    import asyncio, sys
    from z0_memory.memory import Z0Memory
    from z0_memory.settings import Settings

    async def main():
        async with Z0Memory(Settings(database_url=sys.argv[1], embedding_model="hash")) as m:
            await m.scope(sys.argv[2]).facts.put(f"{sys.argv[2]}:stack:db", "Postgres")
        print("ok")

    asyncio.run(main())
""")


@pytest.mark.parametrize("stagger", [0.0, 0.15, 0.3, 0.45])
async def test_two_processes_set_up_a_fresh_database_together(database_url, stagger):
    """Both finish. Before the fix the second process, started while the first was building LangGraph's indexes,
    hung forever (here: the 0.3 s stagger hung on the old code; the outside probe hung 4 of 4 tries)."""
    name = f"z0_race_{int(stagger * 100)}_{os.getpid()}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    url = urlunsplit(urlsplit(database_url)._replace(path="/" + name))
    procs = []
    try:
        for project in ("pa", "pb"):
            procs.append(await asyncio.create_subprocess_exec(
                sys.executable, "-c", OPEN_AND_WRITE, url, project,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
            await asyncio.sleep(stagger)
        try:
            results = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), timeout=120)
        except TimeoutError:
            pytest.fail(f"two processes setting up one database (started {stagger} s apart) hung")
        for p, (out, err) in zip(procs, results, strict=True):
            assert p.returncode == 0 and out.strip() == b"ok", err.decode()[-2000:]
        record("scopes.setup_race", operations=4, faults=1, lost=0)
    finally:
        for p in procs:
            if p.returncode is None:
                p.kill()
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_a_scope_cannot_squat_another_scopes_row_ids(memory):
    acme, beta = memory.scope("acme"), memory.scope("beta")
    key = MemoryKey.parse("acme:stack:backend_framework")
    await acme.facts.put(key, "Express")
    victim_next = mirror_id(acme.scope, key, 2)
    # beta inserts, with an explicit id, the id of acme's next version: it gets an id of its own scope
    [taken] = await beta.semantic.add_many([NewMemory("squatting", id=victim_next)])
    assert taken != victim_next
    write = await acme.facts.put(key, "Hono")  # failed with UniqueViolation before the fix
    assert write.action == "superseded" and write.fact.version == 2
    # an id acme uses is invisible to beta: adding it says nothing about whether it exists there
    assert await beta.semantic.get(victim_next) is None
    # the same given id in one scope is one row: adding it again keeps the stored one (idempotent imports)
    again = await beta.semantic.add_many([NewMemory("squatting, again", id=victim_next)])
    assert again == [taken] and (await beta.semantic.get(taken)).content == "squatting"
    assert await beta.semantic.count() == 1
    record("scopes.id_squat", operations=6, bad_inputs=2, lost=0, cross_project=0)


async def test_one_thread_id_under_two_projects_is_two_threads(memory, tmp_path):
    cfg = {"configurable": {"thread_id": "shared-1"}}
    view = configured(memory, rules_root=str(tmp_path))  # the rules are the process's settings
    for project, text in (("beta", "Beta's secret plan is to use Elixir"), ("acme", "hello")):
        graph = chat_builder.compile(store=view.store(project), checkpointer=view.checkpointer(project))
        out = await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg, context=Context(project=project))
    assert [m.content for m in out["messages"] if isinstance(m, HumanMessage)] == ["hello"]
    acme_state = await memory.checkpointer("acme").aget_tuple(cfg)
    beta_state = await memory.checkpointer("beta").aget_tuple(cfg)
    assert acme_state.config["configurable"]["thread_id"] == "shared-1"  # callers see their own ids
    assert "Elixir" in str(beta_state.checkpoint["channel_values"]["messages"])
    assert "Elixir" not in str(acme_state.checkpoint["channel_values"]["messages"])
    listed = [t async for t in memory.checkpointer("acme").alist(None)]
    assert listed and all("Elixir" not in str(t.checkpoint["channel_values"]) for t in listed)
    # a user partition is a scope of its own too
    assert await memory.checkpointer("acme", "alice").aget_tuple(cfg) is None
    await memory.checkpointer("acme").adelete_thread("shared-1")
    assert await memory.checkpointer("beta").aget_tuple(cfg) is not None
    record("scopes.threads", operations=8, bad_inputs=1, lost=0, cross_project=0)


async def test_the_store_is_bound_to_its_project(memory):
    await memory.scope("beta").facts.put("beta:stack:db", "MySQL")
    await memory.scope("beta").semantic.add("beta keeps its notes about MySQL here")
    store = memory.store("acme")
    # a namespace naming another project is one more namespace of the store's own scope (a general BaseStore takes
    # any namespace, ("memories", user) as langmem writes it): it never reaches beta's rows
    got, put, found, listed = await store.abatch([
        GetOp(("beta", "stack"), "db"), PutOp(("beta", "stack"), "db", {"value": "Oracle"}),
        SearchOp(("beta", "stack"), query="MySQL"), SearchOp(("beta", "stack"))])
    assert got is None and put is None  # acme's ("beta", "stack") held nothing; the put wrote acme's item
    for items in (found, listed):  # the batch's searches see acme's item only
        assert [(tuple(i.namespace), i.key, i.value) for i in items] == [(("beta", "stack"), "db", {"value": "Oracle"})]
    assert "MySQL" not in str([i.value for i in await store.asearch(("beta", "stack"), query="MySQL notes")])
    assert (await memory.scope("beta").facts.get("beta:stack:db")).value == "MySQL"  # beta's fact is untouched
    assert await memory.operator_store().aget(("beta", "stack"), "db") is not None  # beta's own, through the operator
    assert (await memory.operator_store().aget(("beta", "stack"), "db")).value["value"] == "MySQL"
    assert await store.alist_namespaces() == [("beta", "stack")]
    await store.adelete(("beta", "stack"), "db")
    # one element is a category of the store's own project: ("beta",) is acme's category "beta", which is empty
    assert await store.asearch(("beta",), query="MySQL notes") == []
    assert await store.asearch(("beta",)) == []
    assert (await memory.scope("beta").facts.get("beta:stack:db")).value == "MySQL"
    assert await store.alist_namespaces() == []
    await store.aput(("stack",), "db", {"value": "Postgres", "rationale": "JSONB"})
    assert (await store.aget(("acme", "stack"), "db")).value["value"] == "Postgres"
    assert [i.key for i in await store.asearch(("acme",))] == ["db"]
    assert all("MySQL" not in str(i.value) for i in await store.asearch((), query="MySQL notes database"))
    # graphs on a bound store serve only runs in its scope
    graph = chat_builder.compile(store=store)
    with pytest.raises(ConfigurationError, match="bound to project 'acme'"):
        await graph.ainvoke({"messages": [HumanMessage("hi")]}, context=Context(project="beta"))
    record("scopes.store", operations=7, bad_inputs=5, lost=0, cross_project=0)


async def test_store_search_honours_filter_before_limit(memory):
    store = memory.store("acme")
    for entity, value in (("db", "Postgres"), ("cache", "Redis"), ("queue", "Postgres")):
        await store.aput(("stack",), entity, {"value": value})
    found = await store.asearch(("acme",), filter={"value": "Postgres"}, limit=1)
    assert [i.key for i in found] == ["db"]
    assert [i.key for i in await store.asearch(("acme",), filter={"value": "Postgres"}, offset=1)] == ["queue"]
    assert await store.asearch(("acme",), filter={"value": "Oracle"}) == []
    hits = await store.asearch(("acme",), query="Postgres Redis", filter={"kind": "no-such-kind"})
    assert hits == []


async def test_postgres_refuses_a_wrong_scope_in_the_python_layer(memory, monkeypatch):
    """The stores' SQL deliberately names another project while the transaction is bound to acme: the database's
    row-level security returns none of beta's rows and refuses to write them."""
    beta = memory.scope("beta")
    await beta.facts.put("beta:stack:db", "MySQL")
    [beta_row] = await beta.semantic.add_many([NewMemory("beta's private note about pricing")])
    acme = memory.scope("acme")
    monkeypatch.setattr(Scope, "params", property(lambda self: {"project": "beta", "user_id": ""}))
    assert await acme.semantic.get(beta_row) is None
    assert await acme.semantic.keyword_search("pricing", 10) == []
    assert await acme.facts.list() == []
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        await acme.semantic.add_many([NewMemory("written into beta from acme's transaction")])
    monkeypatch.undo()
    # the same, in plain SQL on a transaction bound to acme, for every table of a scope's data
    async with memory.db.connection(Scope("acme")) as conn:
        for table in ("z0_facts", "z0_pending", "z0_extraction_queue", SEMANTIC_TABLE, "z0_memory_stats"):
            rows = await (await conn.execute(f"SELECT count(*) AS n FROM {table} WHERE project = 'beta'")).fetchone()
            assert rows["n"] == 0, table
        assert (await conn.execute(f"DELETE FROM {SEMANTIC_TABLE} WHERE project = 'beta'")).rowcount == 0
        assert (await conn.execute("UPDATE z0_facts SET value = 'Oracle' WHERE project = 'beta'")).rowcount == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        async with memory.db.connection(Scope("acme")) as conn:
            await conn.execute("INSERT INTO z0_extraction_queue (project, user_id, thread_id, messages, error) "
                               "VALUES ('beta', '', 't', '[]'::jsonb, 'x')")
    assert (await memory.scope("beta").facts.get("beta:stack:db")).value == "MySQL"
    assert (await memory.scope("beta").semantic.get(beta_row)) is not None
    record("scopes.wrong_scope", operations=4, bad_inputs=10, lost=0, cross_project=0)


async def test_postgres_refuses_another_scopes_checkpoints(memory):
    saver = memory.checkpointer("beta")
    cfg = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    await saver.aput(cfg, empty_checkpoint(), {"source": "input", "step": -1}, {})
    wrong = memory.checkpointer("acme")
    wrong.prefix = saver.prefix  # the Python layer asks for beta's thread from acme's transaction
    assert await wrong.aget_tuple(cfg) is None
    assert await saver.aget_tuple(cfg) is not None
    async with memory.db.connection(Scope("acme")) as conn:
        rows = await (await conn.execute("SELECT count(*) AS n FROM checkpoints WHERE thread_id LIKE 'beta:%'")).fetchone()
    assert rows["n"] == 0


async def test_every_scoped_transaction_runs_as_the_application_role(memory):
    assert memory.db.app_role == "z0_app"
    async with memory.db.connection(Scope("acme", "alice")) as conn:
        row = await (await conn.execute(
            "SELECT current_user AS u, current_setting('z0.project') AS p, current_setting('z0.user_id') AS w, "
            "current_setting('hnsw.ef_search') AS ef")).fetchone()
    assert (row["u"], row["p"], row["w"], row["ef"]) == ("z0_app", "acme", "alice", "64")
    async with memory.db.connection() as conn:  # unscoped: the login role again, nothing left behind
        row = await (await conn.execute("SELECT current_user AS u, "
                                        "coalesce(current_setting('z0.project', true), '') AS p")).fetchone()
    assert row["u"] != "z0_app" and row["p"] == ""


async def test_a_failed_statement_rolls_back_the_scoped_transaction(memory):
    acme = memory.scope("acme")
    with pytest.raises(psycopg.errors.DivisionByZero):
        async with memory.db.connection(acme.scope) as conn:
            await conn.execute("INSERT INTO z0_extraction_queue (project, user_id, thread_id, messages, error) "
                               "VALUES ('acme', '', 't', '[]'::jsonb, 'x')")
            await conn.execute("SELECT 1 / 0")
    async with memory.db.connection(acme.scope) as conn:
        row = await (await conn.execute("SELECT count(*) AS n FROM z0_extraction_queue")).fetchone()
    assert row["n"] == 0
    write = await acme.facts.put("acme:stack:db", "Postgres", Provenance(extractor="test"))  # the pool still serves
    assert write.action == "created"
