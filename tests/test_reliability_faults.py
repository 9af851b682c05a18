"""Faults: the database restarted in the middle of a thread, and model calls that time out, fail or talk nonsense.

* Database: a chat thread runs a turn on an embedded server of its own (its own temp data dir), the server is
  force-stopped, a turn attempted while it is down fails within the pool's bounded wait with a ``DatabaseError``
  (or the checkpointer's own pool timeout) instead of hanging, the server is started again, and the next turn on
  the same ``Z0Memory`` reconnects (the pool checks connections before use) and sees every earlier checkpoint and
  every memory written before the stop.
* Models: the chat responder, the retrieval judge and the extractor each time out, raise an HTTP 503, or return
  malformed JSON. ``z0_memory.llm`` retries each call ``model_retries`` times with exponential backoff (attempt
  start times are recorded), then the documented degraded path runs: the offline judge decides the round (the
  trace says so), the offline responder answers (and says the model failed), and the turn is put on the extraction
  retry queue, from which ``retry_failed_extractions`` later writes it once a model answers. Every turn completes.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import httpx
from psycopg_pool import PoolTimeout
import pytest
from langchain_core.messages import HumanMessage
from fakes import ScriptedChatModel, Sleep
from reliability_support import fast_run, fast_setup, fast_database, fast_memory, fast_owner, record  # noqa: F401

from z0_memory import llm
from z0_memory.config import Context
from z0_memory.settings import Settings
from z0_memory.errors import DatabaseError
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.memory import Z0Memory
from z0_memory.nodes.extraction import ExtractionResult, retry_failed_extractions
from z0_memory.prompts import OFFLINE_NOTE
from z0_memory.schemas import Candidate
from z0_memory.stores.embedded import temporary_data_dir

pytestmark = pytest.mark.asyncio(loop_scope="session")


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"{name}-{os.urandom(6).hex()}"}}


async def test_database_restart_mid_thread_reconnects_and_loses_no_checkpoint(tmp_path):
    settings = Settings(data_dir=temporary_data_dir("z0-fault-"), embedding_model="hash", rules_root=str(tmp_path))
    ctx = Context(project="acme", mode="chat")
    memory = Z0Memory(settings)
    memory.db.connection_timeout = 3.0  # a turn while the server is down must fail fast, not hang
    async with memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        cfg = thread("restart")
        await graph.ainvoke({"messages": [HumanMessage("We decided to use Hono for the backend.")]}, cfg,
                            context=ctx)
        before = await graph.aget_state(cfg)
        facts_before = [(str(f.key), f.value) for f in await memory.scope("acme").facts.list()]
        assert facts_before, "the first turn settled a fact"

        server = memory.db.embedded._server
        memory.db.embedded.force_stop()  # the database goes away mid-thread
        t0 = time.monotonic()
        with pytest.raises((DatabaseError, PoolTimeout)) as down:
            await asyncio.wait_for(graph.ainvoke({"messages": [HumanMessage("is it still there?")]}, cfg,
                                                 context=ctx), 30)
        assert time.monotonic() - t0 < 25
        assert "connection" in str(down.value).lower()

        with server._lock:  # start it again (what a new pgserver handle does for a stopped data dir)
            server.ensure_postgres_running()
        out = await asyncio.wait_for(graph.ainvoke({"messages": [HumanMessage("which backend do we use?")]}, cfg,
                                                   context=ctx), 60)
        humans = [m.content for m in out["messages"] if isinstance(m, HumanMessage)]
        assert humans[0] == "We decided to use Hono for the backend." and humans[-1] == "which backend do we use?"
        assert "Hono" in out["messages"][-1].content  # the answer came from memory written before the stop
        history = [s async for s in graph.aget_state_history(cfg)]
        assert any(s.config["configurable"]["checkpoint_id"] == before.config["configurable"]["checkpoint_id"]
                   for s in history)  # the checkpoint taken before the stop is still there
        assert [(str(f.key), f.value) for f in await memory.scope("acme").facts.list()] == facts_before
    record("faults.db_restart", operations=3, faults=2, lost=0)


def flaky(fault: str) -> ScriptedChatModel:
    """A chat model that fails every call the way providers do: it hangs, answers HTTP 503, or cuts its JSON."""
    request = httpx.Request("POST", "https://api.example.invalid/v1/chat/completions")
    failure = {
        "timeout": Sleep(30),
        "http": httpx.HTTPStatusError("503 Service Unavailable", request=request,
                                      response=httpx.Response(503, request=request)),
        "malformed": '{"candidates": [{"kind": "decis',
    }[fault]
    return ScriptedChatModel([failure], name=f"flaky-{fault}")


def starts(model: ScriptedChatModel) -> list[float]:
    return [call.started for call in model.calls]


def assert_backoff(starts: list[float], attempts: int, timeout: float) -> None:
    assert len(starts) == attempts
    for i, (a, b) in enumerate(zip(starts, starts[1:], strict=False)):
        assert b - a >= llm.BACKOFF_S * 2**i * 0.9  # exponential backoff between attempts
        assert b - a <= timeout + llm.BACKOFF_S * 2**i + 1.0  # and bounded


@pytest.mark.parametrize("fault", ["timeout", "http", "malformed"])
async def test_model_faults_retry_with_backoff_then_degrade_and_the_turn_completes(fast_memory, fast_database,
                                                                                   tmp_path, fault):
    models = {role: flaky(fault) for role in ("agent", "judge", "extractor")}
    settings, ctx = fast_setup(fast_database, mode="chat", max_rounds=1, model_retries=2, model_timeout_s=0.3,
                               rules_root=str(tmp_path))
    async with Z0Memory(settings, chat_models=models) as memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        out = await asyncio.wait_for(graph.ainvoke(
            {"messages": [HumanMessage("We decided to use Valkey as the cache because it is open source.")]},
            thread("faults"), context=ctx), 60)
    attempts = settings.model_retries + 1
    assert_backoff(starts(models["judge"]), attempts, settings.model_timeout_s)
    assert_backoff(starts(models["extractor"]), attempts, settings.model_timeout_s)
    [round_] = out["trace"]
    assert "offline judge decided" in round_.error
    reply = out["messages"][-1].content
    if fault == "malformed":  # plain text is a valid chat answer: the responder's call succeeds at once
        assert len(models["agent"].calls) == 1
    else:
        assert_backoff(starts(models["agent"]), attempts, settings.model_timeout_s)
        assert reply.startswith(OFFLINE_NOTE) and "The model failed" in reply
    [queued] = out["extraction"]
    assert queued.action == "queued_for_retry" and "after 3 attempt(s)" in queued.error

    pm = fast_memory.scope("acme")
    async with fast_memory.db.connection() as conn:
        [row] = await (await conn.execute("SELECT messages FROM z0_extraction_queue")).fetchall()
    assert "Valkey" in json.dumps(row["messages"])  # the turn is kept, not lost
    assert await pm.facts.list() == [] and await pm.semantic.count() == 0

    answer = ExtractionResult(candidates=[Candidate(kind="decision", key="acme:database:cache", value="Valkey",
                                                    content="The cache is Valkey.", confidence=0.9,
                                                    rationale="it is open source")])
    async with Z0Memory(settings, chat_models={"extractor": ScriptedChatModel([answer])}) as memory:
        assert await retry_failed_extractions(memory, ctx) == {"retried": 1, "still_failing": 0}
    assert (await pm.facts.get("acme:database:cache")).value == "Valkey"
    async with fast_memory.db.connection() as conn:
        assert (await (await conn.execute("SELECT count(*) AS n FROM z0_extraction_queue")).fetchone())["n"] == 0
    calls = sum(len(m.calls) for m in models.values())
    record(f"faults.model_{fault}", operations=1 + calls, faults=calls, lost=0)
