"""KV facts on the real database: exact get, prefix listing, supersession with history, confirmation, forget."""

from __future__ import annotations

import asyncio

import pytest

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import Provenance

pytestmark = pytest.mark.asyncio(loop_scope="session")
KEY = "acme:stack:backend_framework"


def prov(rationale: str | None = None, confidence: float = 0.9, thread: str = "t1", message: str = "m1") -> Provenance:
    return Provenance(thread_id=thread, message_ids=[message], extractor="test", confidence=confidence,
                      rationale=rationale)


async def test_exact_get_and_prefix_listing(memory):
    acme = memory.scope("acme")
    await acme.facts.put(KEY, "Hono", prov())
    await acme.facts.put("acme:stack:database", "Supabase Postgres", prov())
    await acme.facts.put("acme:convention:timestamps", "UTC everywhere", prov())

    fact = await acme.facts.get(KEY)
    assert fact is not None and fact.value == "Hono" and fact.version == 1 and fact.is_current
    assert await acme.facts.get("acme:stack:cache") is None
    assert {f.key.entity for f in await acme.facts.list()} == {"backend_framework", "database", "timestamps"}
    assert {f.key.entity for f in await acme.facts.list("stack")} == {"backend_framework", "database"}


async def test_put_supersedes_and_keeps_history_with_provenance(memory):
    acme = memory.scope("acme")
    first = await acme.facts.put(KEY, "Express", prov("the team knows it", 0.8, "t1"))
    second = await acme.facts.put(KEY, "Hono", prov("edge runtime and smaller cold starts", 0.95, "t2"))
    assert (first.action, second.action) == ("created", "superseded")
    assert second.previous.value == "Express"

    history = await acme.facts.history(KEY)
    assert [(v.value, v.version) for v in history] == [("Express", 1), ("Hono", 2)]
    old, new = history
    assert old.valid_to is not None and old.valid_to == new.valid_from and new.valid_to is None
    assert old.provenance.rationale == "the team knows it" and old.provenance.thread_id == "t1"
    assert new.provenance.confidence == pytest.approx(0.95) and new.provenance.extractor == "test"
    assert (await acme.facts.get(KEY)).value == "Hono"
    assert [f.value for f in await acme.facts.list(include_superseded=True)] == ["Express", "Hono"]


async def test_same_value_is_a_confirmation_not_a_new_version(memory):
    acme = memory.scope("acme")
    await acme.facts.put(KEY, "Hono", prov())
    again = await acme.facts.put(KEY, "hono", prov(message="m2"))
    assert again.action == "confirmed" and again.fact.confirmations == 2
    assert len(await acme.facts.history(KEY)) == 1
    assert await acme.semantic.count() == 1
    retried = await acme.facts.put(KEY, "Hono", prov())  # m1's statement again (a retried turn): counted once
    assert retried.action == "confirmed" and retried.fact.confirmations == 2


async def test_fact_versions_are_searchable_and_superseded_ones_only_on_request(memory):
    acme = memory.scope("acme")
    await acme.facts.put(KEY, "Express", prov("the team knows it"))
    await acme.facts.put(KEY, "Hono", prov("edge runtime support"))
    current = await acme.semantic.keyword_search("backend framework")
    assert [h.content for h in current] == ["stack / backend framework: Hono (because edge runtime support)"]
    assert current[0].key == KEY and not current[0].superseded
    history = await acme.semantic.keyword_search("why did we switch from Express", include_superseded=True)
    assert any(h.superseded and "Express" in h.content and "team knows it" in h.content for h in history)


async def test_forget_current_then_everything(memory):
    acme = memory.scope("acme")
    await acme.facts.put(KEY, "Express", prov())
    await acme.facts.put(KEY, "Hono", prov())
    assert await acme.facts.forget(KEY) == 1
    assert await acme.facts.get(KEY) is None
    assert [v.value for v in await acme.facts.history(KEY)] == ["Express"]
    assert await acme.facts.forget(KEY, include_history=True) == 1
    assert await acme.facts.history(KEY) == []
    assert await acme.semantic.keyword_search("backend framework Hono Express", include_superseded=True) == []


async def test_concurrent_writers_to_one_key_lose_nothing(memory):
    acme = memory.scope("acme")
    values = [f"framework-{i}" for i in range(12)]
    await asyncio.gather(*(acme.facts.put(KEY, v, prov()) for v in values))
    history = await acme.facts.history(KEY)
    assert sorted(v.value for v in history) == sorted(values)
    assert [v.version for v in history] == list(range(1, 13))
    assert sum(v.is_current for v in history) == 1
    for older, newer in zip(history, history[1:]):
        assert older.valid_to == newer.valid_from


@pytest.mark.parametrize("bad", ["acme:stack", "acme:stack:", "acme:st ack:x", "acme:stack:x'; DROP TABLE z0_facts;--",
                                 "other:stack:backend_framework", "acme:stack:a:b"])
async def test_bad_keys_are_refused_clearly(memory, bad):
    acme = memory.scope("acme")
    with pytest.raises(InvalidKeyError):
        await acme.facts.put(bad, "x", prov())
    assert await acme.facts.list(include_superseded=True) == []


async def test_empty_value_is_refused(memory):
    with pytest.raises(ValueError, match="non-empty"):
        await memory.scope("acme").facts.put(KEY, "   ", prov())
