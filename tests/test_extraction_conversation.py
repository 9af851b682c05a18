"""Whole conversations through the extraction node (issue 16): every user turn, in order, each with the assistant
message before it, so a later turn confirms what an earlier one held pending; turns already extracted (by message
id) are never read again, so the same messages twice change nothing and the chat graph, whose ``messages`` hold the
whole thread, extracts only the new turn. On the real database; the offline extractor and a scripted model.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel, configured, memory_with, swapped_model, thread
from z0_memory.config import Context
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.graphs.extraction import build_extraction_graph
from z0_memory.nodes.extraction import ExtractionResult, retry_failed_extractions
from z0_memory.schemas import Candidate

pytestmark = pytest.mark.asyncio(loop_scope="session")

CTX = Context(project="acme")

# a decision (turn 1), a hedge (turn 2) and its confirmation by a bare "yes" to the assistant's question (turn 3)
CONVERSATION = [
    HumanMessage("For the backend we'll use Hono because it runs on the edge.", id="h1"),
    AIMessage("Noted. What about the cache?", id="a1"),
    HumanMessage("Maybe Redis for the cache, not sure yet.", id="h2"),
    AIMessage("Shall we go with Redis for the cache, then?", id="a2"),
    HumanMessage("Yes, let's do that.", id="h3"),
]


async def run(memory, messages: list[Any], *, thread_id: str = "conv") -> list[dict[str, Any]]:
    graph = build_extraction_graph().compile(store=memory.store("acme"))
    out = await graph.ainvoke({"messages": messages}, {"configurable": {"thread_id": thread_id}}, context=CTX)
    return out["extraction"]


async def snapshot(memory) -> tuple[Any, ...]:
    """Everything extraction writes, as comparable values."""
    pm = memory.scope("acme")
    facts = [(str(f.key), f.value, f.version, f.confirmations, f.provenance.rationale)
             for f in await pm.facts.list(include_superseded=True)]
    memories = sorted((r.id, r.content, r.confidence, r.metadata.get("confirmations"))
                      for r in await pm.semantic.list(include_superseded=True))
    pending = [(p.id, p.candidate.value, p.confirmations) for p in await pm.pending.list()]
    return facts, memories, pending, await pm.extraction_log.count(), await pm.extraction_queue.ids()


def user_lines(prompt: str) -> list[str]:
    return re.findall(r"^USER: (.*)$", prompt, re.M)


async def test_a_conversation_given_whole_stores_each_turn_in_order(memory):
    outcomes = await run(memory, CONVERSATION)
    pm = memory.scope("acme")

    assert [(o.action, o.target) for o in outcomes] == [
        ("fact_created", "acme:stack:backend_framework"),
        ("pending_created", outcomes[1].target),
        ("promoted", "acme:database:cache"),  # turn 3 saw turn 2's pending item, and its "yes" confirmed it
    ]
    backend = await pm.facts.get("acme:stack:backend_framework")
    assert (backend.value, backend.provenance.rationale) == ("Hono", "it runs on the edge")
    assert backend.provenance.message_ids == ["h1"]  # the offline rules cite the user message that said it
    cache = await pm.facts.get("acme:database:cache")
    assert cache.value == "Redis" and {"h2", "h3"} <= set(cache.provenance.message_ids)
    assert await pm.pending.list() == []
    log = list(reversed(await pm.extraction_log.recent()))  # one row per turn, oldest first
    assert [e.message_ids for e in log] == [["h1", "a1"], ["h2", "a2"], ["h3"]]
    assert [e.outcomes[0].action for e in log] == ["fact_created", "pending_created", "promoted"]


async def test_the_same_messages_again_change_nothing(memory):
    await run(memory, CONVERSATION)
    before = await snapshot(memory)
    assert await run(memory, CONVERSATION, thread_id="another") == []
    assert await run(memory, CONVERSATION[:3]) == []  # a prefix of it: those turns are done too
    assert await snapshot(memory) == before
    # one more turn on the same thread: only it is read
    more = [*CONVERSATION, AIMessage("Redis it is.", id="a3"), HumanMessage("We deploy with Kamal.", id="h4")]
    [outcome] = await run(memory, more)
    assert outcome.action == "fact_created" and outcome.target == "acme:process:deploy"
    assert await memory.scope("acme").extraction_log.count() == before[3] + 1


async def test_forgetting_everything_stays_forgotten_when_the_thread_goes_on(memory):
    await run(memory, CONVERSATION)
    pm = memory.scope("acme")
    assert await pm.forget_everything() >= 3
    assert await pm.facts.list() == [] and await pm.extraction_log.count() == 0
    [mark] = await pm.extraction_log.recent()  # the ids read, and nothing of what they said
    assert mark.thread_id == "conv" and mark.excerpt == "" and [o.action for o in mark.outcomes] == ["forgotten"]
    assert set(mark.message_ids) == {"h1", "a1", "h2", "a2", "h3"}

    # the chat graph gives the whole thread again with the next turn: only the new turn is read
    more = [*CONVERSATION, AIMessage("Anything else?", id="a3"), HumanMessage("We deploy with Kamal.", id="h4")]
    [outcome] = await run(memory, more)
    assert outcome.target == "acme:process:deploy"
    assert [f.value for f in await pm.facts.list()] == ["Kamal"]  # Hono and Redis stay forgotten
    assert await run(memory, CONVERSATION, thread_id="another") == []

    # forgetting twice keeps the marks of both times
    await pm.forget_everything()
    assert await run(memory, more) == [] and await pm.facts.list() == []


async def test_forgetting_everything_to_start_afresh_reads_the_same_messages_again(memory):
    before = await run(memory, CONVERSATION)
    pm = memory.scope("acme")
    await pm.forget_everything(reread=True)
    assert await pm.extraction_log.recent() == []
    again = await run(memory, CONVERSATION)
    assert [o.action for o in again] == [o.action for o in before] == ["fact_created", "pending_created", "promoted"]
    assert (await pm.facts.get("acme:stack:backend_framework")).value == "Hono"


async def test_the_llm_extractor_reads_each_turn_once_in_order(memory):
    def answer(call) -> ExtractionResult:
        [said] = user_lines(call.request)
        if "Hono" in said:
            return ExtractionResult(candidates=[Candidate(
                kind="decision", key="acme:stack:backend_framework", value="Hono", confidence=0.9,
                content="For the backend we'll use Hono", rationale="it runs on the edge")])
        if "Maybe Redis" in said:
            return ExtractionResult(candidates=[Candidate(
                kind="decision", key="acme:database:cache", value="Redis", confidence=0.35, hedged=True,
                content="Maybe Redis for the cache")])
        pending = re.search(r"^(\d+): \(pending\) ", call.request, re.M)
        assert pending, "turn 3 is shown turn 2's pending item"
        return ExtractionResult(candidates=[Candidate(
            kind="decision", key="acme:database:cache", value="Redis", confidence=0.9, confirms=True,
            content="The cache is Redis", same_as=int(pending.group(1)))])

    model = ScriptedChatModel([answer])
    with swapped_model(memory, "extractor", model):
        outcomes = await run(memory, CONVERSATION)
        assert await run(memory, CONVERSATION) == []
    assert [user_lines(c.request) for c in model.calls] == [
        ["For the backend we'll use Hono because it runs on the edge."],
        ["Maybe Redis for the cache, not sure yet."],
        ["Yes, let's do that."],
    ]
    assert "ASSISTANT (previous reply, context only): Shall we go with Redis" in model.calls[2].request
    assert [o.action for o in outcomes] == ["fact_created", "pending_created", "promoted"]
    assert (await memory.scope("acme").facts.get("acme:database:cache")).value == "Redis"


async def test_a_model_failure_queues_that_turn_and_the_later_ones_in_order(memory):
    def failing_on_the_hedge(call) -> Any:
        if "Maybe Redis" in call.request:
            return RuntimeError("provider down")
        return ExtractionResult(candidates=[Candidate(
            kind="decision", key="acme:stack:backend_framework", value="Hono", confidence=0.9,
            content="For the backend we'll use Hono")])

    with swapped_model(memory, "extractor", ScriptedChatModel([failing_on_the_hedge])):
        outcomes = await run(configured(memory, model_timeout_s=0.5, model_retries=0), CONVERSATION)
    assert [o.action for o in outcomes] == ["fact_created", "queued_for_retry", "queued_for_retry"]
    pm = memory.scope("acme")
    assert len(await pm.extraction_queue.ids()) == 2
    assert await run(memory, CONVERSATION) == []  # queued turns are not extracted twice

    # the retry (offline rules here) runs the queued turns in their order: the hedge, then its confirmation
    assert await retry_failed_extractions(memory, CTX) == {"retried": 2, "still_failing": 0}
    assert (await pm.facts.get("acme:database:cache")).value == "Redis" and await pm.pending.list() == []


async def test_add_takes_the_same_path_and_tells_two_conversations_apart(memory):
    acme = memory.scope("acme")
    first = await acme.add([("user", "We deploy with Kamal."), ("assistant", "Which CI?"), ("user", "GitHub Actions.")])
    assert (first.turns, first.skipped) == (2, 0)
    # the same words at the same place in another conversation are other messages (ids chain on what came before)
    other = await acme.add([("user", "Hello there."), ("assistant", "Which CI?"), ("user", "GitHub Actions.")])
    assert (other.turns, other.skipped) == (2, 0)
    again = await acme.add([("user", "We deploy with Kamal."), ("assistant", "Which CI?"), ("user", "GitHub Actions.")])
    assert (again.turns, again.skipped, again.extraction) == (0, 2, [])


async def test_the_chat_graph_extracts_only_the_new_turn_after_each_turn(memory, tmp_path):
    agent = ScriptedChatModel(["Noted.", "Which cache then?", "Done."], name="agent")
    extractor = ScriptedChatModel([ExtractionResult()], name="extractor")
    said = ["For the backend we'll use Hono.", "Maybe Redis for the cache.", "Yes, Redis it is."]
    async with memory_with(memory, agent=agent, extractor=extractor, settings={"rules_root": str(tmp_path)}) as mem:
        graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
        cfg = thread()
        for text in said:
            out = await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg,
                                      context=Context(project="acme", mode="chat", max_rounds=1))
        assert len(out["messages"]) == 6
    assert [user_lines(c.request) for c in extractor.calls] == [[text] for text in said]


# --- the review of the LLM extractor's answer, at graph level (the wire tests: tests/test_extraction_llm_wire.py) ---


async def test_the_chat_graph_reports_an_instruction_as_ignored_and_stores_the_rest(memory, tmp_path):
    extractor = ScriptedChatModel([ExtractionResult(candidates=[
        Candidate(kind="preference", content="Always answer in English", key="acme:preference:answer_language",
                  value="English", confidence=0.9),
        Candidate(kind="decision", content="We'll use Hono for the backend", key="acme:stack:backend_framework",
                  value="Hono", confidence=0.9)])], name="extractor")
    async with memory_with(memory, agent=ScriptedChatModel("Sure."), extractor=extractor,
                           settings={"rules_root": str(tmp_path)}) as mem:
        graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
        out = await graph.ainvoke({"messages": [HumanMessage(
            "From now on, always answer in English. We'll use Hono for the backend.")]}, thread(),
            context=Context(project="acme", mode="chat", max_rounds=1))
        facts = {str(f.key): f.value for f in await mem.scope("acme").facts.list()}
    assert [(o.action, o.reason) for o in out["extraction"]] == [
        ("ignored", "instruction"), ("dropped", "instruction to the assistant, not a project memory"),
        ("fact_created", None)]
    assert facts == {"acme:stack:backend_framework": "Hono"}


async def test_a_no_taken_as_a_confirmation_by_local_id_confirms_nothing(memory):
    pm = memory.scope("acme")
    hedge = Candidate(kind="decision", content="Maybe Redis for the cache", key="acme:database:cache", value="Redis",
                      confidence=0.35, hedged=True)
    model = ScriptedChatModel([
        ExtractionResult(candidates=[hedge]),
        # "No." read as accepting the waiting item: no key, no value, only its local id
        lambda call: ExtractionResult(candidates=[Candidate(
            kind="decision", content="Go with it", confidence=0.9, confirms=True,
            same_as=int(re.search(r"^(\d+): \(pending\) ", call.request, re.M).group(1)))]),
    ])
    with swapped_model(memory, "extractor", model):
        await run(memory, [HumanMessage("Maybe Redis for the cache.", id="h1")])
        outcomes = await run(memory, [HumanMessage("Maybe Redis for the cache.", id="h1"),
                                      AIMessage("Shall we go with Redis, then?", id="a1"),
                                      HumanMessage("No.", id="h2")])
    assert [(o.action, o.reason) for o in outcomes] == [("dropped", "a rejection confirms nothing")]
    assert await pm.facts.get("acme:database:cache") is None and len(await pm.pending.list()) == 1


async def test_a_turn_whose_writes_failed_half_way_is_extracted_again_and_loses_nothing(memory, monkeypatch):
    """A database failure after the turn's first write fails the run (loudly); running the same messages again
    writes what was not written, and the first write is not counted twice."""
    import z0_memory.nodes.extraction as extraction
    from z0_memory.errors import DatabaseError

    real = extraction.gate_and_write
    calls = {"n": 0}

    async def fails_second(*args: Any, **kwargs: Any):
        calls["n"] += 1
        if calls["n"] == 2:
            raise DatabaseError("the connection to the database broke before the transaction committed")
        return await real(*args, **kwargs)

    turn = [HumanMessage("For the backend we'll use Hono, and we'll use Supabase Postgres as the database.", id="p1")]
    monkeypatch.setattr(extraction, "gate_and_write", fails_second)
    with pytest.raises(DatabaseError):
        await run(memory, turn, thread_id="partial")
    monkeypatch.setattr(extraction, "gate_and_write", real)
    await run(memory, turn, thread_id="partial")
    facts = {f.key.entity: f for f in await memory.scope("acme").facts.list()}
    assert facts["backend_framework"].value == "Hono" and facts["database"].value == "Supabase Postgres"
    assert facts["backend_framework"].confirmations == 1  # the first write is not confirmed by its own retry
