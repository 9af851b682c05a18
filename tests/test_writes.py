"""The write gate on the real database: threshold, pending -> promotion, expiry, dedup, supersession, secrets,
provenance. Candidates are built by hand here; tests/test_extraction_node.py drives the same rules through the node.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from z0_memory.schemas import Candidate, Provenance
from z0_memory.writes import combined_confidence, gate_and_write, promote

pytestmark = pytest.mark.asyncio(loop_scope="session")

PROV = Provenance(thread_id="t-writes", message_ids=["m1"], extractor="test-extractor")
SECRET = "sk-proj-Zq81bWx0aQ7nVt5LpR2cYh"


def cache(value: str = "Redis", conf: float = 0.9, *, hedged: bool = False, confirms: bool = False,
          ids: tuple[str, ...] = ("m1",), rationale: str | None = None) -> Candidate:
    return Candidate(kind="decision", key="acme:database:cache", value=value, confidence=conf, hedged=hedged,
                     confirms=confirms, content=f"The acme project uses {value} as its cache.",
                     source_message_ids=list(ids), rationale=rationale)


def note(content: str, conf: float = 0.85, *, ids: tuple[str, ...] = ("m1",)) -> Candidate:
    return Candidate(kind="preference", content=content, confidence=conf, source_message_ids=list(ids))


async def gate(pm, candidate: Candidate, threshold: float = 0.7, **kw):
    return await gate_and_write(pm, candidate, PROV, threshold=threshold, **kw)


async def rows(memory, table: str) -> list[dict]:
    async with memory.db.connection() as conn:
        return await (await conn.execute(f"SELECT * FROM {table} ORDER BY 1")).fetchall()


async def test_threshold_is_inclusive_and_configurable(memory):
    pm = memory.scope("acme")
    below = await gate(pm, cache(conf=0.69))
    assert below.action == "pending_created" and await pm.facts.get("acme:database:cache") is None
    at = await gate(pm, cache("Memcached", conf=0.7))
    assert at.action == "fact_created" and (await pm.facts.get("acme:database:cache")).value == "Memcached"
    strict = await gate(pm, note("Alice prefers tabs for indentation", conf=0.85), threshold=0.9)
    assert strict.action == "pending_created"
    assert [r.fact_key for r in await pm.semantic.list()] == ["acme:database:cache"]  # only the fact's mirror


async def test_pending_is_promoted_by_enough_later_evidence(memory):
    pm = memory.scope("acme")
    assert (await gate(pm, cache(conf=0.35, hedged=True, ids=("m1",)))).action == "pending_created"
    weak = await gate(pm, cache(conf=0.4, ids=("m2",)))  # 1 - 0.65 * 0.6 = 0.61 < 0.7
    assert weak.action == "pending_confirmed" and (await pm.pending.list())[0].confirmations == 2
    assert await pm.facts.get("acme:database:cache") is None
    strong = await gate(pm, cache(conf=0.6, ids=("m3",)))  # 1 - 0.65 * 0.4 = 0.74
    assert strong.action == "promoted" and strong.confidence == pytest.approx(combined_confidence(0.4, 0.6))
    fact = await pm.facts.get("acme:database:cache")
    assert fact.value == "Redis" and await pm.pending.list() == []
    assert set(fact.provenance.message_ids) >= {"m1", "m3"}


async def test_explicit_confirmation_promotes_even_at_low_confidence(memory):
    pm = memory.scope("acme")
    await gate(pm, cache(conf=0.35, hedged=True))
    out = await gate(pm, cache(conf=0.3, confirms=True, ids=("m9",)))
    assert out.action == "promoted"
    assert (await pm.facts.get("acme:database:cache")).value == "Redis" and await pm.pending.list() == []


async def test_hedged_repeats_stay_pending(memory):
    pm = memory.scope("acme")
    for i in range(3):  # noisy-or of three 0.35 hedges would be 0.725: hedges must not add up to a decision
        out = await gate(pm, cache(conf=0.35, hedged=True, ids=(f"m{i + 1}",)))
    assert out.action == "pending_confirmed"
    # even a confident-sounding hedge (0.6: noisy-or with the waiting 0.35 gives 0.74) only counts as a repeat
    assert (await gate(pm, cache(conf=0.6, hedged=True, ids=("m7",)))).action == "pending_confirmed"
    [item] = await pm.pending.list()
    assert item.confirmations == 4 and await pm.facts.get("acme:database:cache") is None


async def test_other_value_for_the_same_key_is_another_pending_option(memory):
    pm = memory.scope("acme")
    await gate(pm, cache("Redis", 0.35, hedged=True))
    out = await gate(pm, cache("Memcached", 0.35, hedged=True))
    assert out.action == "pending_created"
    assert sorted(i.candidate.value for i in await pm.pending.list()) == ["Memcached", "Redis"]


async def test_pending_expires(memory):
    pm = memory.scope("acme")
    long_ago = datetime.now(UTC) - timedelta(days=30)
    await gate(pm, cache(conf=0.35, hedged=True), now=long_ago)
    assert await pm.pending.list() == []
    late = await gate(pm, cache(conf=0.5))  # nothing left to combine with: waits on its own
    assert late.action == "pending_created"
    assert await pm.facts.get("acme:database:cache") is None
    assert await pm.pending.purge_expired() == 1 and len(await pm.pending.list(include_expired=True)) == 1


async def test_same_fact_twice_is_one_fact_confirmed(memory):
    pm = memory.scope("acme")
    assert (await gate(pm, cache())).action == "fact_created"
    assert (await gate(pm, cache(ids=("m2",)))).action == "fact_confirmed"
    facts = await rows(memory, "z0_facts")
    assert len(facts) == 1 and facts[0]["confirmations"] == 2


async def test_same_memory_twice_is_one_row_confirmed(memory):
    pm = memory.scope("acme")
    first = await gate(pm, note("Alice prefers small pull requests with one reviewer"))
    again = await gate(pm, note("Alice prefers small pull requests with one reviewer.", ids=("m2",)))
    assert (first.action, again.action) == ("memory_added", "memory_confirmed") and again.target == first.target
    [row] = await pm.semantic.list()
    assert row.metadata["confirmations"] == 2 and row.source_ids == ["m1", "m2"]
    retried = await gate(pm, note("Alice prefers small pull requests with one reviewer.", ids=("m2",)))
    assert (retried.action, retried.target) == ("memory_confirmed", first.target)  # the same turn again: once
    assert (await pm.semantic.list())[0].metadata["confirmations"] == 2


async def test_contradiction_supersedes_and_keeps_history_and_rationale(memory):
    pm = memory.scope("acme")
    await gate(pm, cache("Memcached", rationale="it was already on the servers"))
    out = await gate(pm, cache("Redis", rationale="we need sorted sets"))
    assert (out.action, out.previous) == ("fact_superseded", "Memcached")
    old, new = await pm.facts.history("acme:database:cache")
    assert (old.value, old.provenance.rationale, old.valid_to is not None) == (
        "Memcached", "it was already on the servers", True)
    assert (new.value, new.provenance.rationale, new.valid_to) == ("Redis", "we need sorted sets", None)
    mirrors = await pm.semantic.list(include_superseded=True)
    assert sorted((m.fact_key, m.superseded_at is None) for m in mirrors) == [
        ("acme:database:cache", False), ("acme:database:cache", True)]


async def test_semantic_supersession_keeps_the_old_memory(memory):
    pm = memory.scope("acme")
    old = await gate(pm, note("The team meets on Mondays for planning"))
    new = await gate(pm, note("The team now meets on Thursdays for planning, after the reorg"),
                     supersede_ids=[old.target])
    assert new.action == "memory_added"
    records = {r.id: r for r in await pm.semantic.list(include_superseded=True)}
    assert records[old.target].superseded_at is not None and records[new.target].superseded_at is None


async def test_secrets_are_never_stored_in_clear(memory):
    pm = memory.scope("acme")
    leaky = Candidate(kind="fact", content=f"The OpenAI key for CI is {SECRET}", confidence=0.9,
                      rationale=f"password: hunter2secret and {SECRET}")
    await gate(pm, leaky)
    await gate(pm, leaky.model_copy(update={"content": f"Maybe rotate {SECRET} monthly", "confidence": 0.3}))
    dropped = await gate(pm, Candidate(kind="fact", key="acme:tooling:ci_token", value=SECRET,
                                       content="The CI token", confidence=0.95))
    assert dropped.action == "dropped" and await pm.facts.list() == []
    dumped = json.dumps([await rows(memory, t) for t in ("z0_facts", "z0_pending", "z0_memories")], default=str)
    assert SECRET not in dumped and "hunter2secret" not in dumped
    assert dumped.count("[REDACTED]") >= 3  # the memory, its rationale, the pending row


async def test_every_write_records_provenance(memory):
    pm = memory.scope("acme")
    prov = Provenance(thread_id="thread-7", message_ids=["h1", "a1"], extractor="llm/test")
    await gate_and_write(pm, cache(ids=()), prov, threshold=0.7)
    await gate_and_write(pm, note("Bob prefers Vim keybindings in every editor", 0.8, ids=()), prov, threshold=0.7)
    await gate_and_write(pm, cache("Valkey", 0.3, hedged=True, ids=()), prov, threshold=0.7)
    fact = await pm.facts.get("acme:database:cache")
    assert (fact.provenance.thread_id, fact.provenance.message_ids, fact.provenance.extractor,
            fact.provenance.confidence) == ("thread-7", ["h1", "a1"], "llm/test", 0.9)
    assert fact.provenance.recorded_at is not None
    [memo] = [m for m in await pm.semantic.list() if m.fact_key is None]
    assert (memo.metadata["thread_id"], memo.metadata["extractor"], memo.source_ids, memo.confidence) == (
        "thread-7", "llm/test", ["h1", "a1"], 0.8)
    assert memo.created_at is not None
    [item] = await pm.pending.list()
    assert (item.provenance.thread_id, item.provenance.message_ids, item.provenance.extractor,
            item.provenance.confidence) == ("thread-7", ["h1", "a1"], "llm/test", 0.3)
    assert item.first_seen is not None


async def test_human_promotion_of_a_pending_item(memory):
    pm = memory.scope("acme")
    item = (await pm.pending.add(cache(conf=0.35, hedged=True), PROV)).item
    out = await promote(pm, item.id, Provenance(extractor="human"))
    assert out is not None and out.action == "promoted"
    assert (await pm.facts.get("acme:database:cache")).value == "Redis"
    assert await promote(pm, item.id, Provenance(extractor="human")) is None


async def test_a_failed_promotion_puts_the_pending_item_back(memory, monkeypatch):
    """Promotion takes the item, then persists; when persisting fails the item waits again (nothing is lost)."""
    from z0_memory import writes
    from z0_memory.schemas import Candidate, Provenance

    pm = memory.scope("acme")
    hedge = Candidate(kind="decision", key="acme:database:cache", value="Redis", content="maybe Redis for caching",
                      confidence=0.35, hedged=True)
    item = (await pm.pending.add(hedge, Provenance(extractor="test", confidence=0.35))).item

    async def broken_persist(*args, **kwargs):
        raise RuntimeError("database went away mid-write")

    monkeypatch.setattr(writes, "persist", broken_persist)
    with pytest.raises(RuntimeError, match="went away"):
        await writes.promote(pm, item.id, Provenance(extractor="human", confidence=1.0))
    [back] = await pm.pending.list()
    assert back.candidate.value == "Redis" and back.candidate.hedged
    assert await pm.facts.get("acme:database:cache") is None
