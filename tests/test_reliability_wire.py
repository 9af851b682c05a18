"""Wire faults: the model path failing the way OpenAI-compatible servers fail, over real HTTP (tests/openai_wire_server.py).

Each fault is served to the judge and the extractor (and, for transport faults, to the responder) of a chat turn
through langchain-openai: malformed JSON, a refusal (``message.refusal``), an empty tool call, HTTP 429 with
Retry-After, HTTP 500, a timeout (the server answers after the client's timeout) and a truncated response (a cut
body, or an SSE stream without its end when the turn is streamed). Every turn completes with the documented
fallback (``z0_memory.llm``): the offline judge decides the round (the trace says why), the offline responder answers
(and says the model failed), and the turn's extraction is queued; the next turn on the same thread works against a
healthy server and sees the failed turn in its history; ``retry_failed_extractions`` and ``z0-memory extraction
retry`` later write the queued turn. Retries follow the policy: a refusal and a 4xx other than 429 are not retried,
a 429 waits for its Retry-After (within ``llm.RETRY_WAIT_MAX_S``; a longer one makes the call fail at once).

A failing embeddings endpoint loses no write either: an API write raises ``ModelCallError`` before anything is
stored, a chat turn searches by keywords (the trace says so) and queues its extraction, and once the endpoint is
back the retry stores the turn and the same write succeeds.

Figures: ``record("wire.<fault>", ...)`` (``bench/reliability.py`` prints them as the ``wire`` area).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from openai_wire_server import Fault, WireServer, wire  # noqa: F401 - fixture
from reliability_support import fast_run, fast_setup, fast_database, fast_memory, fast_owner, record, scratch_database  # noqa: F401

from z0_memory import llm
from z0_memory.config import Context
from z0_memory.settings import Settings
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.llm import ModelCallError
from z0_memory.memory import Z0Memory
from z0_memory.nodes.extraction import ExtractionResult, retry_failed_extractions
from z0_memory.prompts import OFFLINE_NOTE
from z0_memory.schemas import Candidate

pytestmark = pytest.mark.asyncio(loop_scope="session")
ROOT = Path(__file__).resolve().parent.parent

FAULTS = {
    "malformed": Fault("malformed"),
    "refusal": Fault("refusal"),
    "empty_tool_call": Fault("empty_tool_call"),
    "http_429": Fault("http_429", retry_after=1),
    "http_500": Fault("http_500"),
    "timeout": Fault("timeout", delay=5.0),
    "truncated": Fault("truncated"),
}
TRANSPORT = {"http_429", "http_500", "timeout", "truncated"}  # what a plain chat completion can meet too
NOT_RETRIED = {"refusal"}
RETRIES = 2
TIMEOUT_S = 4.0  # generous: a busy CI machine must not turn a healthy first request into a timeout
FAULT_TIMEOUT_S = 1.5  # the timeout fault's client timeout (the server answers after 5 s)
USER_TURN = "We decided to use Valkey as the cache because it is open source."
GOOD_REPLY = "Noted: Valkey is the cache."
EXTRACTED = ExtractionResult(candidates=[Candidate(
    kind="decision", key="acme:cache:engine", value="Valkey", content="The cache engine is Valkey.", confidence=0.92,
    rationale="it is open source")])
VERDICT_OK = {"sufficient": True, "missing": "", "reason": "enough", "next_query": None, "next_strategy": None}


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"wire-{uuid.uuid4().hex}"}}


def wire_context(server: WireServer, spec: str, method: str, database_url: str, tmp_path: Path,
                 **kw: Any) -> tuple[Settings, Context]:
    """The process's Settings (every model on ``spec`` at the wire server) and the run's Context."""
    key = {"openai_api_key": "sk-wire-test"} if spec.startswith("openai/") else {}
    return fast_setup(database_url, agent_model=spec, judge_model=spec, extractor_model=spec,
                        openai_base_url=server.base_url, structured_output_method=method, mode="chat", max_rounds=1,
                        model_retries=RETRIES, rules_root=str(tmp_path), **{"model_timeout_s": TIMEOUT_S, **key, **kw})


async def run_turn(graph: Any, text: str, cfg: dict, ctx: Context, *, streamed: bool) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        if not streamed:
            return await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg, context=ctx)
        async for _ in graph.astream({"messages": [HumanMessage(text)]}, cfg, context=ctx, stream_mode="messages"):
            pass
        return (await graph.aget_state(cfg)).values

    return await asyncio.wait_for(go(), 90)  # a fault never hangs a turn


async def queued_rows(memory: Z0Memory) -> list[dict]:
    async with memory.db.connection() as conn:
        return await (await conn.execute("SELECT messages, error FROM z0_extraction_queue")).fetchall()


def attempts_of(server: WireServer, kind: str) -> list[float]:
    return [r.at for r in server.of(kind)]


CASES = [(fault, spec, method, False) for fault in FAULTS
         for spec, method in (("openai/gpt-4o-mini", "json_schema"), ("compatible/qwen2.5-7b", "function_calling"))]
CASES += [(fault, "openai/gpt-4o-mini", "json_schema", True) for fault in ("truncated", "malformed", "refusal")]
CASES += [(fault, "compatible/qwen2.5-7b", "function_calling", True) for fault in ("truncated", "empty_tool_call")]


@pytest.mark.parametrize("fault,spec,method,streamed", CASES,
                         ids=[f"{f}-{s.split('/')[0]}-{m}{'-stream' if st else ''}" for f, s, m, st in CASES])
async def test_a_wire_fault_degrades_the_turn_then_the_next_turn_and_the_retry_work(
        wire, fast_memory, fast_database, tmp_path, fault, spec, method, streamed):
    wire.script("Verdict", FAULTS[fault])
    wire.script("ExtractionResult", FAULTS[fault])
    wire.script("chat", FAULTS[fault] if fault in TRANSPORT else GOOD_REPLY)
    timeout = FAULT_TIMEOUT_S if fault == "timeout" else TIMEOUT_S
    settings, ctx = wire_context(wire, spec, method, fast_database, tmp_path, model_timeout_s=timeout)
    async with Z0Memory(settings) as memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        cfg = thread()
        out = await run_turn(graph, USER_TURN, cfg, ctx, streamed=streamed)

        # the documented fallback, each visible
        [round_] = out["trace"]
        assert "retrieval judge" in round_.error and "offline judge decided" in round_.error
        reply = out["messages"][-1].content
        if fault in TRANSPORT:
            assert reply.startswith(OFFLINE_NOTE) and "The model failed" in reply
        else:
            assert reply == GOOD_REPLY
        [queued] = out["extraction"]
        assert queued.action == "queued_for_retry" and "memory extractor" in queued.error
        [row] = await queued_rows(memory)
        assert USER_TURN in json.dumps(row["messages"])  # the turn is kept, not lost
        assert await memory.scope("acme").facts.list() == []

        # the retry policy, seen from the server
        expected = 1 if fault in NOT_RETRIED else RETRIES + 1
        for kind in ("Verdict", "ExtractionResult"):
            starts = attempts_of(wire, kind)
            if fault == "timeout":  # under load an attempt can time out before its request reaches the server
                assert 1 <= len(starts) <= expected and "timed out after 3 attempt(s)" in (
                    round_.error if kind == "Verdict" else queued.error)
            else:
                assert len(starts) == expected, (kind, len(starts))
            if fault == "http_429":  # Retry-After: 1 was honoured, not the 0.2 s / 0.4 s backoff
                assert all(b - a >= 0.95 for a, b in zip(starts, starts[1:], strict=False))
        if fault == "refusal":
            assert "refused" in round_.error and "not retried" in round_.error
        faulted = len(wire.requests)

        # the next turn on the same thread, against a healthy server
        wire.reset()
        wire.script("chat", "We use Valkey.")
        wire.script("Verdict", VERDICT_OK)
        wire.script("ExtractionResult", {"candidates": []})
        out2 = await run_turn(graph, "Which cache do we use?", cfg, ctx, streamed=streamed)
        assert out2["messages"][-1].content == "We use Valkey."
        assert out2["trace"][-1].error is None
        assert all(o.action != "queued_for_retry" for o in out2["extraction"])
        [chat] = wire.of("chat")
        history = [m["content"] for m in chat.body["messages"] if m["role"] == "user"]
        assert history == [USER_TURN, "Which cache do we use?"]  # the failed turn stayed in the thread

        # the queued extraction, retried against a healthy extractor
        wire.reset()
        wire.script("ExtractionResult", EXTRACTED.model_dump(mode="json"))
        assert await retry_failed_extractions(memory, ctx) == {"retried": 1, "still_failing": 0}
        [retry] = wire.of("ExtractionResult")
        assert USER_TURN in json.dumps(retry.body["messages"])
        fact = await memory.scope("acme").facts.get("acme:cache:engine")
        assert fact is not None and fact.value == "Valkey"
        assert await queued_rows(memory) == []
    record(f"wire.{fault}", operations=faulted + 3 + 1, faults=faulted - (0 if fault in TRANSPORT else 1), lost=0)


@pytest.mark.parametrize("fault", [Fault("http_400"), Fault("http_429", retry_after=3600)],
                         ids=["http_400", "http_429-beyond-budget"])
async def test_what_retrying_cannot_fix_fails_at_once(wire, fast_memory, fast_database, tmp_path, fault):
    """A 4xx other than 429 (a bad request, a wrong key) and a 429 asking for longer than the call may wait are not
    retried: one request, then the fallback, fast."""
    for kind in ("Verdict", "ExtractionResult", "chat"):
        wire.script(kind, fault)
    settings, ctx = wire_context(wire, "openai/gpt-4o-mini", "json_schema", fast_database, tmp_path)
    async with Z0Memory(settings) as memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        t0 = time.monotonic()
        out = await run_turn(graph, USER_TURN, thread(), ctx, streamed=False)
        elapsed = time.monotonic() - t0
    assert [r.kind for r in wire.requests].count("Verdict") == 1
    assert len(wire.of("ExtractionResult")) == 1 and len(wire.of("chat")) == 1
    assert elapsed < 10
    assert "not retried" in out["trace"][0].error and f"HTTP {fault.kind[5:]}" in out["trace"][0].error
    if fault.retry_after:
        assert "asked to wait 3600 s" in out["trace"][0].error
    assert out["messages"][-1].content.startswith(OFFLINE_NOTE)
    assert out["extraction"][0].action == "queued_for_retry"
    record(f"wire.{fault.kind}_not_retried", operations=4, faults=3, lost=0)


async def test_retry_after_is_honoured_within_the_budget(wire, monkeypatch):
    """Unit view of the policy: a 429's Retry-After is waited for while the call's total wait stays in budget."""
    ctx = Settings(judge_model="compatible/m", openai_base_url=wire.base_url, model_retries=3,
                   model_timeout_s=5.0, embedding_model="hash")
    wire.script("Verdict", Fault("http_429", retry_after=1), Fault("http_429", retry_after=2), VERDICT_OK)
    from z0_memory.providers import Providers
    from z0_memory.schemas import Verdict

    model = Providers(ctx).chat("judge")
    t0 = time.monotonic()
    out = await llm.invoke_structured(model, Verdict, [HumanMessage("q")], ctx, what="judge")
    assert out.sufficient and time.monotonic() - t0 >= 2.9
    gaps = [b - a for a, b in zip(attempts_of(wire, "Verdict"), attempts_of(wire, "Verdict")[1:], strict=False)]
    assert gaps[0] >= 0.95 and gaps[1] >= 1.95

    wire.reset()
    monkeypatch.setattr(llm, "RETRY_WAIT_MAX_S", 1.5)  # 1 s then 2 s more would exceed it: give up after the first
    wire.script("Verdict", Fault("http_429", retry_after=1), Fault("http_429", retry_after=2), VERDICT_OK)
    with pytest.raises(ModelCallError, match="after 2 attempt"):
        await llm.invoke_structured(model, Verdict, [HumanMessage("q")], ctx, what="judge")
    assert len(wire.of("Verdict")) == 2


async def test_the_cli_retries_a_turn_queued_by_a_wire_fault(wire, fast_memory, fast_database, tmp_path):
    """The user's path: a turn whose extraction failed at the wire, then ``z0-memory extraction retry``."""
    wire.script("Verdict", Fault("http_500"))
    wire.script("ExtractionResult", Fault("http_500"))
    wire.script("chat", GOOD_REPLY)
    settings, ctx = wire_context(wire, "compatible/qwen2.5-7b", "json_schema", fast_database, tmp_path)
    async with Z0Memory(settings) as memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        out = await run_turn(graph, USER_TURN, thread(), ctx, streamed=False)
        assert out["extraction"][0].action == "queued_for_retry"
    wire.reset()
    wire.script("ExtractionResult", EXTRACTED.model_dump(mode="json"))
    env = {**os.environ, "DATABASE_URL": fast_database, "OPENAI_BASE_URL": wire.base_url,
           "Z0_EXTRACTOR_MODEL": "compatible/qwen2.5-7b", "Z0_EMBEDDING_MODEL": "hash", "Z0_MODEL_RETRIES": "0"}
    env.pop("OPENAI_API_KEY", None)
    proc = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", "from z0_memory.cli import main; main()",
                                                    "--project", "acme", "extraction", "retry"],
                                   cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "retried 1 turn(s); 0 still failing" in proc.stdout
    assert len(wire.of("ExtractionResult")) == 1
    assert (await fast_memory.scope("acme").facts.get("acme:cache:engine")).value == "Valkey"
    record("wire.cli_retry", operations=3, faults=2, lost=0)


# --- embeddings ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fault", [Fault("http_500"), Fault("truncated"), Fault("timeout", delay=6.0)],
                         ids=["http_500", "truncated", "timeout"])
async def test_a_failing_embeddings_endpoint_loses_no_write(wire, database_url, tmp_path, fault):
    with scratch_database(database_url, "z0_wire") as url:
        wire.embedding_dims = 48
        settings = Settings(database_url=url, embedding_model="compatible/e5",
                            openai_base_url=wire.base_url, agent_model="offline", judge_model="offline",
                            extractor_model="offline", model_retries=1, model_timeout_s=2.5, rules_root=str(tmp_path))
        ctx = Context(project="acme", mode="chat", max_rounds=1)
        wire.script("embeddings", "vectors", fault)  # the dimension probe at open works, then every call fails
        async with Z0Memory(settings) as memory:
            pm = memory.scope("acme")
            # an API write: refused with a typed error before anything is stored
            with pytest.raises(ModelCallError, match=r"embeddings \(compatible/e5\)"):
                await pm.facts.put("acme:cache:engine", "Valkey")
            assert await pm.facts.list() == [] and await pm.semantic.count() == 0

            # a chat turn: keyword search for the round, the extraction queued, a reply all the same
            graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
            out = await run_turn(graph, USER_TURN, thread(), ctx, streamed=False)
            assert "ran as a keyword search" in out["trace"][0].error
            assert out["messages"][-1].content.startswith(OFFLINE_NOTE)
            assert out["extraction"][0].action == "queued_for_retry"
            assert "embeddings" in out["extraction"][0].error
            failed_calls = len(wire.of("embeddings")) - 1

            # the endpoint is back: the retry stores the turn, the write succeeds
            wire.reset()
            assert await retry_failed_extractions(memory, ctx) == {"retried": 1, "still_failing": 0}
            assert await pm.semantic.count() > 0
            assert any("Valkey" in f.value for f in await pm.facts.list())
            await pm.facts.put("acme:cache:engine", "Valkey")
            assert (await pm.facts.get("acme:cache:engine")).value == "Valkey"
    record(f"wire.embeddings_{fault.kind}", operations=failed_calls + 3, faults=failed_calls, lost=0)


async def test_retry_after_headers_are_read_as_servers_send_them():
    import email.utils

    import httpx

    def error(status: int, **headers: str) -> Exception:
        request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
        return httpx.HTTPStatusError("x", request=request, response=httpx.Response(status, headers=headers,
                                                                                   request=request))

    assert llm.retry_after(error(429, **{"Retry-After": "7"})) == 7.0
    assert llm.retry_after(error(429, **{"retry-after-ms": "250", "Retry-After": "7"})) == 0.25
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < llm.retry_after(error(429, **{"Retry-After": later})) <= 30
    assert llm.retry_after(error(429, **{"Retry-After": "soon"})) is None
    assert llm.retry_after(error(429)) is None and llm.retry_after(ValueError("no response")) is None
    assert [llm.retryable(error(s)) for s in (400, 401, 404, 408, 409, 422, 429, 500, 503)] == [
        False, False, False, True, True, False, True, True, True]
    from langchain_openai.chat_models.base import OpenAIRefusalError

    assert not llm.retryable(OpenAIRefusalError("no")) and llm.retryable(TimeoutError())


async def test_the_sync_embeddings_api_raises_the_same_typed_error(wire):
    from z0_memory.providers import build_embeddings

    settings = Settings(embedding_model="compatible/e5", openai_base_url=wire.base_url)
    embeddings, _ = build_embeddings("compatible/e5", settings)
    assert len(await asyncio.to_thread(embeddings.embed_query, "works")) == wire.embedding_dims
    wire.script("embeddings", "vectors", Fault("http_500"))
    with pytest.raises(ModelCallError, match="HTTP|InternalServerError|500"):
        await asyncio.to_thread(embeddings.embed_documents, ["fails"])


async def test_an_answer_without_its_end_is_a_failed_call():
    """The openai SDK returns a stream cut before its last chunk as if it were whole; z0 refuses it (and retries)."""
    from langchain_core.messages import AIMessage

    cut = AIMessage("We use Val", response_metadata={"model_provider": "openai", "model_name": "gpt-4o-mini"})
    with pytest.raises(ValueError, match="truncated stream"):
        llm.check_complete(cut)
    llm.check_complete(AIMessage("We use Valkey.", response_metadata={"model_provider": "openai",
                                                                       "finish_reason": "stop"}))
    llm.check_complete(AIMessage("We use Valkey.", response_metadata={"model_provider": "openai",
                                                                       "status": "completed"}))  # Responses API
    llm.check_complete(AIMessage("We use Valkey."))  # other providers' messages are not judged by OpenAI's fields


async def test_a_dead_embeddings_endpoint_at_open_is_one_clear_error(wire, database_url):
    """The remote model's dimension is probed when a memory opens: a dead endpoint is a typed error naming it, after
    the bounded retries, not a raw SDK exception."""
    with scratch_database(database_url, "z0_wire") as url:
        wire.script("embeddings", Fault("http_500"))
        settings = Settings(database_url=url, embedding_model="compatible/e5",
                            openai_base_url=wire.base_url, agent_model="offline", judge_model="offline",
                            extractor_model="offline", model_retries=1, model_timeout_s=2.0)
        with pytest.raises(ModelCallError, match=r"embeddings \(compatible/e5\) failed: HTTP 500 .* after 2 attempt"):
            async with Z0Memory(settings):
                pass
        assert len(wire.of("embeddings")) == 2
