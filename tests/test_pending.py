"""Pending candidates: hold, confirm by key or by similar content, expire, take once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from z0_memory.schemas import Candidate, Provenance

pytestmark = pytest.mark.asyncio(loop_scope="session")
PROV = Provenance(thread_id="t1", message_ids=["m1"], extractor="test", confidence=0.35)


def redis(conf: float = 0.35, content: str = "Maybe use Redis for caching") -> Candidate:
    return Candidate(kind="decision", key="acme:stack:cache", value="Redis", content=content, confidence=conf,
                     hedged=True)


async def test_hold_then_confirm_by_key(memory):
    pending = memory.scope("acme").pending
    first = await pending.add(redis(), PROV)
    assert first.action == "created" and first.item.confirmations == 1
    again = await pending.add(redis(0.5, "What about Redis as the cache?"), PROV.model_copy(update={"message_ids": ["m2"]}))
    assert again.action == "confirmed" and again.item.id == first.item.id
    assert again.item.confirmations == 2 and again.item.candidate.confidence == pytest.approx(0.5)
    assert again.item.last_seen >= first.item.first_seen
    assert again.item.provenance.message_ids == ["m1", "m2"]  # it cites the confirming message too
    for retried in ("m1", "m2"):  # the same messages again (a turn extracted again after a failure): counted once
        same = await pending.add(redis(0.5), PROV.model_copy(update={"message_ids": [retried]}))
        assert same.action == "confirmed" and same.item.confirmations == 2
    assert len(await pending.list()) == 1


async def test_confirm_by_similar_content_without_key(memory):
    pending = memory.scope("acme").pending
    c1 = Candidate(kind="preference", content="Alice might prefer tabs for indentation", confidence=0.4)
    c2 = Candidate(kind="preference", content="Alice prefers tabs for indentation", confidence=0.45)
    c3 = Candidate(kind="context", content="The office is closed on Friday", confidence=0.3)
    await pending.add(c1, PROV)
    assert (await pending.add(c2, PROV.model_copy(update={"message_ids": ["m2"]}))).action == "confirmed"
    assert (await pending.add(c3, PROV)).action == "created"
    assert sorted(i.confirmations for i in await pending.list()) == [1, 2]


async def test_expiry_hides_and_purges(memory):
    pending = memory.scope("acme").pending
    long_ago = datetime.now(UTC) - timedelta(days=30)
    old = await pending.add(redis(), PROV, now=long_ago)
    assert await pending.list() == [] and await pending.get(old.item.id) is None
    assert len(await pending.list(include_expired=True)) == 1
    fresh = await pending.add(redis(), PROV)
    assert fresh.action == "created"
    assert await pending.purge_expired() == 1
    assert [i.id for i in await pending.list(include_expired=True)] == [fresh.item.id]


async def test_take_happens_once_under_concurrency(memory):
    pending = memory.scope("acme").pending
    item = (await pending.add(redis(), PROV)).item
    results = await asyncio.gather(*(pending.take(item.id) for _ in range(8)))
    assert sum(r is not None for r in results) == 1
    assert await pending.list() == []


async def test_concurrent_confirmations_count_once_each(memory):
    pending = memory.scope("acme").pending
    await asyncio.gather(*(pending.add(redis(), PROV.model_copy(update={"message_ids": [f"m{i}"]})) for i in range(10)))
    items = await pending.list()
    assert len(items) == 1 and items[0].confirmations == 10


@pytest.mark.parametrize("bad", ["abc", "1.5", "", None, True])
async def test_bad_pending_ids_get_a_clear_error(memory, bad):
    from z0_memory.errors import InvalidInputError

    pending = memory.scope("acme").pending
    with pytest.raises(InvalidInputError, match="whole number"):
        await pending.take(bad)
    with pytest.raises(InvalidInputError, match="whole number"):
        await pending.get(bad)
