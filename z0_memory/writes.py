"""The write rule of long-term memory: the confidence gate, persistence, and pending promotion.

``gate_and_write`` is the one place a candidate becomes memory:

* confidence >= threshold, or an explicit confirmation (``confirms``) of a waiting pending item -> persisted;
* otherwise it is held as pending; a later candidate matching that pending item promotes it when the match is not
  itself hedged and the combined evidence (noisy-or of the confidences) reaches the threshold. Hedged repeats
  ("maybe Redis" twice) only count confirmations: tentative talk never becomes a decision on its own.

The default threshold is 0.7 (``Context.confidence_threshold``). Both extractors put firm statements at 0.8-0.95
(the offline rules: decisions 0.9, facts and preferences 0.8-0.85, confirmations 0.88-0.92; the LLM prompt asks for
0.85-0.95) and hedges at 0.3-0.4, so 0.7 sits in the gap with room on both sides: one firm statement persists, a
hedge never does, and for the LLM a "fairly sure" 0.7-0.8 still persists while a 0.5-0.6 "probably" waits. Under
noisy-or two unhedged mentions at 0.46 or more (1 - 0.54^2 >= 0.7) promote a pending item, one hedge plus one
0.55 mention does (1 - 0.65 * 0.45 = 0.71), while a 0.35 hedge plus a 0.5 aside does not (0.675). Raise it to keep
less, lower it to keep more; the offline extractor's confidences do not change around it.

Persisting: a candidate with a key and a value goes to the KV facts (an overwrite supersedes and keeps history
with its rationale); anything else goes to semantic memory, where a near-identical existing memory is confirmed
instead of duplicated. Secrets: every text field of the candidate and of its provenance goes through
``redact_secrets`` here, whatever the extractor already did, so memories, fact versions, pending rows and
rationales never hold one in clear; a keyed candidate whose value is a secret is not stored at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from z0_memory.redaction import REDACTED, key_holds_secret, redact_secrets
from z0_memory.schemas import (
    Candidate,
    MemoryKey,
    PendingItem,
    Provenance,
    WriteAction,
    WriteOutcome,
    normalize_segment,
)
from z0_memory.stores.semantic import NewMemory
from z0_memory.text import term_overlap

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory

DUPLICATE_OVERLAP = 0.8
# what a fact store's or the pending store's write did, as the outcome's action
FACT_ACTIONS: dict[str, WriteAction] = {"created": "fact_created", "superseded": "fact_superseded",
                                        "confirmed": "fact_confirmed", "revised": "fact_revised"}
PENDING_ACTIONS: dict[str, WriteAction] = {"created": "pending_created", "confirmed": "pending_confirmed"}

def _provenance(candidate: Candidate, base: Provenance) -> Provenance:
    rationale = candidate.rationale or base.rationale
    return base.model_copy(update={
        "confidence": candidate.confidence,
        "rationale": redact_secrets(rationale) if rationale else None,
        "message_ids": list(candidate.source_message_ids or base.message_ids),
    })


def redact_candidate(candidate: Candidate) -> Candidate:
    """The candidate with secrets replaced in content, value and rationale, and no key when its key holds one."""
    return candidate.model_copy(update={
        "key": None if key_holds_secret(candidate.key) else candidate.key,
        "content": redact_secrets(candidate.content),
        "value": redact_secrets(candidate.value) if candidate.value else candidate.value,
        "rationale": redact_secrets(candidate.rationale) if candidate.rationale else candidate.rationale,
    })


def secret_valued(candidate: Candidate) -> bool:
    """A keyed fact whose value is (or holds) a secret, or a memory that is nothing but one: never worth storing."""
    return bool(candidate.value and REDACTED in candidate.value) or candidate.content.strip() == REDACTED


def combined_confidence(*confidences: float) -> float:
    """Noisy-or: independent pieces of evidence for the same memory."""
    miss = 1.0
    for c in confidences:
        miss *= 1.0 - max(0.0, min(1.0, c))
    return 1.0 - miss


async def persist(pm: ProjectMemory, candidate: Candidate, provenance: Provenance,
                  supersede_ids: Sequence[str] = ()) -> WriteOutcome:
    """Write a candidate that passed the gate: KV fact when keyed, else semantic memory (deduplicated).

    ``supersede_ids`` are semantic memories the candidate replaces; they are marked superseded, never deleted.
    """
    candidate = redact_candidate(candidate)
    prov = _provenance(candidate, provenance)
    if candidate.key and candidate.value:
        key = pm.scope.key(candidate.key)
        write = await pm.facts.put(key, candidate.value, prov, kind=candidate.kind, statement=candidate.content,
                                   revise=await _new_reason(pm, key, candidate))
        return WriteOutcome(action=FACT_ACTIONS[write.action], target=str(key), content=write.fact.value,
                            confidence=candidate.confidence,
                            previous=write.previous.value if write.previous else None)
    memory = NewMemory(
        candidate.content, category=_category(candidate), kind=candidate.kind, confidence=candidate.confidence,
        source_ids=prov.message_ids,
        metadata={"rationale": candidate.rationale, "thread_id": prov.thread_id, "extractor": prov.extractor},
    )
    # one transaction under a per-scope lock: concurrent writers of one memory confirm it, never duplicate it
    action, row_id, content = await pm.semantic.add_or_confirm(
        memory, lambda hit: hit.key is None and term_overlap(hit.content, candidate.content) >= DUPLICATE_OVERLAP)
    if action == "confirmed":
        return WriteOutcome(action="memory_confirmed", target=row_id, content=content, confidence=candidate.confidence)
    for old_id in supersede_ids:
        await pm.semantic.supersede(old_id)
    return WriteOutcome(action="memory_added", target=row_id, content=content, confidence=candidate.confidence)


async def _new_reason(pm: ProjectMemory, key: MemoryKey, candidate: Candidate) -> bool:
    """A repeat of the current value that brings a reason the stored version lacks: it is kept as a new version
    (the earlier one and its rationale stay in history), not dropped as a mere confirmation."""
    if not candidate.rationale or not candidate.rationale.strip():
        return False
    current = await pm.facts.get(key)
    if current is None or current.value.casefold() != candidate.value.strip().casefold():
        return False
    stored = (current.provenance.rationale or "").casefold()
    return candidate.rationale.strip().casefold() not in stored


def _category(candidate: Candidate) -> str:
    if candidate.key:
        try:
            return MemoryKey.parse(candidate.key).category
        except ValueError:
            pass
    return normalize_segment(candidate.kind)


async def gate_and_write(pm: ProjectMemory, candidate: Candidate, provenance: Provenance, *, threshold: float,
                         supersede_ids: Sequence[str] = (), now: datetime | None = None,
                         pending_id: int | None = None) -> WriteOutcome:
    """Apply the confidence gate to one candidate and write it where it belongs.

    ``pending_id`` names the waiting item the extractor said this candidate repeats or confirms (by local id);
    without it the waiting item is found by key (and value), else by similar content.
    """
    candidate = redact_candidate(candidate)
    if secret_valued(candidate):
        return WriteOutcome(action="dropped", content=candidate.content, confidence=candidate.confidence,
                            reason="secret-valued candidate")
    waiting = await pm.pending.get(pending_id) if pending_id is not None else None
    if waiting is None:
        waiting = await pm.pending.find(candidate)
    if waiting is not None and not candidate.hedged:
        evidence = combined_confidence(waiting.candidate.confidence, candidate.confidence)
        if candidate.confirms or evidence >= threshold or candidate.confidence >= threshold:
            taken = await pm.pending.take(waiting.id)
            if taken is not None:
                merged = _merge(waiting.candidate, candidate, evidence)
                outcome = await _persist_taken(pm, taken, merged, provenance, supersede_ids)
                return WriteOutcome(action="promoted", target=outcome.target, content=outcome.content,
                                    confidence=merged.confidence, previous=outcome.previous)
    if candidate.confidence >= threshold:
        return await persist(pm, candidate, provenance, supersede_ids)
    write = await pm.pending.add(candidate, _provenance(candidate, provenance), now=now)
    return WriteOutcome(action=PENDING_ACTIONS[write.action], target=str(write.item.id),
                        content=write.item.candidate.content, confidence=write.item.candidate.confidence)


def _merge(waiting: Candidate, confirming: Candidate, evidence: float) -> Candidate:
    """The promoted memory: the confirming turn's wording when it names the thing, else the waiting one's."""
    base = confirming if confirming.value else waiting
    return base.model_copy(update={
        "key": waiting.key or confirming.key,
        "value": confirming.value or waiting.value,
        "confidence": max(evidence, confirming.confidence),
        "hedged": False,
        "rationale": confirming.rationale or waiting.rationale,
        "source_message_ids": list(dict.fromkeys(waiting.source_message_ids + confirming.source_message_ids)),
    })


async def _persist_taken(pm: ProjectMemory, taken: PendingItem, candidate: Candidate, provenance: Provenance,
                         supersede_ids: Sequence[str]) -> WriteOutcome:
    """Persist a promoted pending item; if that fails, put the item back so nothing the user said is lost."""
    try:
        return await persist(pm, candidate, provenance, supersede_ids)
    except BaseException:
        await pm.pending.add(taken.candidate, taken.provenance)
        raise


async def promote(pm: ProjectMemory, pending_id: int, provenance: Provenance) -> WriteOutcome | None:
    """A human confirms a pending item (CLI / API): persist it as is. None when it no longer waits."""
    item = await pm.pending.take(pending_id)
    if item is None:
        return None
    candidate = redact_candidate(item.candidate)
    candidate = candidate.model_copy(update={"hedged": False, "confidence": max(item.candidate.confidence, 1.0)})
    outcome = await _persist_taken(pm, item, candidate, provenance, ())
    return WriteOutcome(action="promoted", target=outcome.target, content=outcome.content,
                        confidence=candidate.confidence, previous=outcome.previous)
