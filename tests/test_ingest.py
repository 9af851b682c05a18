"""Importing LoCoMo-style conversations: turns, dates, neighbour context, and what the loop finds through it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from z0_memory.config import Context
from z0_memory.graphs.retrieval import builder
from z0_memory.ingest import ingest_locomo, locomo_memories, parse_locomo_date

CONVERSATION = {"conversation": {
    "speaker_a": "Ann", "speaker_b": "Jo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "How did your kids react at the war memorial?"},
        {"speaker": "Jo", "dia_id": "D1:2", "text": "They were awestruck and humbled."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": ""},
        {"speaker": "Ann", "dia_id": "D1:4", "text": "", "blip_caption": "a photo of a wreath"},
    ],
    "session_2_date_time": "10:00 am on 3 Sept, 2023",
    "session_2": [{"speaker": "Jo", "dia_id": "D2:1", "text": "We moved to Leiden."}],
}}


@pytest.mark.parametrize("text,expected", [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:05 am on 1 January, 2024", datetime(2024, 1, 1, 0, 5, tzinfo=UTC)),
    ("3 Sept, 2023", datetime(2023, 9, 3, tzinfo=UTC)),
    ("31 June, 2023", None), ("sometime in spring", None), (None, None),
])
def test_parse_locomo_date(text, expected):
    assert parse_locomo_date(text) == expected


def test_locomo_memories_carry_position_date_and_neighbour_context():
    rows = locomo_memories(CONVERSATION)
    assert [r.content for r in rows] == [
        "Ann: How did your kids react at the war memorial?", "Jo: They were awestruck and humbled.",
        "Ann: [shared an image: a photo of a wreath]", "Jo: We moved to Leiden."]
    question, reply, photo, moved = rows
    assert reply.context == "Ann: How did your kids react at the war memorial?\n" + photo.content
    assert question.context == reply.content
    assert moved.context == ""  # the only turn of its session: no context across sessions
    assert [(r.metadata["session"], r.metadata["turn"]) for r in rows] == [(1, 0), (1, 1), (1, 3), (2, 0)]
    assert reply.metadata["session_date"] == "2023-05-08" and reply.source_ids == ["D1:2"]
    assert moved.created_at == datetime(2023, 9, 3, 10, 0, tzinfo=UTC)
    assert len(locomo_memories(CONVERSATION, context_turns=0)[1].context) == 0


@pytest.mark.asyncio(loop_scope="session")
async def test_ingest_stores_turns_findable_by_their_neighbours_words(memory, tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    assert await ingest_locomo(memory, Context(project="acme"), path) == 4
    pm = memory.scope("acme")
    hits = await pm.semantic.search_engine.bm25("war memorial", 5)
    assert [h.content for h in hits[:2]] == ["Ann: How did your kids react at the war memorial?",
                                             "Jo: They were awestruck and humbled."]
    assert hits[1].metadata["turn"] == 1 and hits[1].metadata["session"] == 1
    out = await builder.compile(store=memory.store("acme")).ainvoke(
        {"question": "How did Jo's kids react at the war memorial?"},
        context=Context(project="acme", judge_model="offline", max_rounds=1))
    assert "Jo: They were awestruck and humbled." in [h.content for h in out["memories"][:2]]


@pytest.mark.asyncio(loop_scope="session")
async def test_ingesting_the_same_conversation_twice_changes_nothing(memory, tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    pm = memory.scope("acme")
    assert await ingest_locomo(memory, Context(project="acme"), path) == 4
    rows = sorted((r.id, r.content) for r in await pm.semantic.list())
    assert await ingest_locomo(memory, Context(project="acme"), path) == 0  # before: 4 more, every turn twice
    assert sorted((r.id, r.content) for r in await pm.semantic.list()) == rows
    # another project imports its own copy
    assert await ingest_locomo(memory, Context(project="other"), path) == 4


@pytest.mark.asyncio(loop_scope="session")
async def test_reimporting_a_transcript_changes_nothing(memory, tmp_path):
    from z0_memory.ingest import ingest_transcript

    path = tmp_path / "chat.txt"
    path.write_text("user: For the backend we'll use Hono, not Express\nassistant: Noted.\n"
                    "assistant: Should we cache sessions in Redis?\nuser: yes, let's do that\n"
                    "user: maybe we could try Postgres for the queue\n", encoding="utf-8")
    pm = memory.scope("acme")
    ctx = Context(project="acme")
    assert await ingest_transcript(memory, ctx, path) == 3

    async def snapshot():
        return ([(str(f.key), f.version, f.confirmations) for f in await pm.facts.list(include_superseded=True)],
                sorted(r.id for r in await pm.semantic.list(include_superseded=True)),
                [(p.id, p.confirmations) for p in await pm.pending.list()])

    before = await snapshot()
    assert await ingest_transcript(memory, ctx, path) == 0
    assert await snapshot() == before
    assert (await pm.facts.get("acme:database:cache")).value == "Redis"  # the accepted proposal, across turns
