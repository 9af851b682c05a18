"""The post-turn extraction node: what did this turn settle, and where does it belong?

It reads the latest turn from ``messages`` (the last human message and the assistant replies after it; system
messages, tool messages and injected memory blocks are never read, so recalled memory is not re-extracted), shows
the extractor the related existing memories under small local ids, and sends every candidate through the write gate
(``z0_memory.writes``). The extractor is the configured model (structured output), else the offline bilingual rules.

A model failure never breaks or loses the turn: after its retries the turn is stored in ``z0_extraction_queue``
and the node returns normally; ``retry_failed_extractions`` (CLI: ``z0-memory extraction retry``) runs it again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from z0_memory.config import Context
from z0_memory.errors import InvalidKeyError
from z0_memory.llm import ModelCallError, invoke_structured
from z0_memory.nodes.common import scope_of
from z0_memory.offline.extractor import OFFLINE_EXTRACTOR_NAME, ExistingMemory, TurnMessage, extract_candidates
from z0_memory.prompts import EXTRACTOR_SYSTEM, EXTRACTOR_USER
from z0_memory.redaction import redact_secrets
from z0_memory.rendering import strip_memory_blocks
from z0_memory.schemas import Candidate, Provenance
from z0_memory.tokens import message_text
from z0_memory.writes import gate_and_write

RELATED_LIMIT = 12


class ExtractionResult(BaseModel):
    """What the LLM extractor returns."""

    candidates: list[Candidate] = Field(default_factory=list)


@dataclass(frozen=True)
class Related:
    """An existing memory shown to the extractor, and what its local id stands for."""

    local_id: int
    content: str
    key: str | None
    value: str | None
    pending: bool
    memory_id: str | None


def latest_turn(messages: Sequence[AnyMessage]) -> list[TurnMessage]:
    """The last human message and the assistant text after it; nothing else."""
    start = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None)
    if start is None:
        return []
    turn = []
    for message in messages[start:]:
        if isinstance(message, HumanMessage | AIMessage) and not isinstance(message, SystemMessage):
            text = strip_memory_blocks(message_text(message))
            if text:
                turn.append(TurnMessage("user" if isinstance(message, HumanMessage) else "assistant", text,
                                        message.id))
    return turn


async def related_memories(pm: Any, turn: Sequence[TurnMessage]) -> list[Related]:
    """Current facts, waiting pending items and semantic memories close to the turn, numbered from 1."""
    text = " ".join(m.text for m in turn)
    items: list[Related] = []
    for fact in await pm.facts.list():
        items.append(Related(0, f"{fact.key}: {fact.value}", str(fact.key), fact.value, False, None))
    for pending in await pm.pending.list():
        c = pending.candidate
        items.append(Related(0, c.content, c.key, c.value, True, None))
    for hit in await pm.semantic.hybrid_search(text, RELATED_LIMIT) if text else []:
        if hit.key is None:
            items.append(Related(0, hit.content, None, None, False, hit.id))
    return [Related(i, r.content, r.key, r.value, r.pending, r.memory_id) for i, r in enumerate(items, 1)]


async def _llm_candidates(model: Any, turn: Sequence[TurnMessage], related: Sequence[Related], ctx: Context,
                          project: str) -> list[Candidate]:
    existing = "\n".join(f"{r.local_id}: {'(pending) ' if r.pending else ''}{r.content}" for r in related) or "(none)"
    rendered = "\n".join(f"{m.role.upper()}: {m.text}" for m in turn)
    prompt = EXTRACTOR_USER.format(project=project, existing=existing, turn=rendered)
    result = await invoke_structured(model, ExtractionResult, [SystemMessage(EXTRACTOR_SYSTEM), HumanMessage(prompt)],
                                     ctx, what="memory extractor")
    return result.candidates


def _clean(candidate: Candidate, project: str, message_ids: list[str]) -> Candidate | None:
    """Redact secrets, check the key belongs to the project (else keep it as a keyless memory)."""
    update: dict[str, Any] = {
        "content": redact_secrets(candidate.content).strip(),
        "value": redact_secrets(candidate.value).strip() if candidate.value else None,
        "rationale": redact_secrets(candidate.rationale) if candidate.rationale else None,
        "source_message_ids": candidate.source_message_ids or message_ids,
    }
    if not update["content"] or update["content"] == "[REDACTED]" or update["value"] == "[REDACTED]":
        return None
    if candidate.key:
        try:
            from z0_memory.schemas import MemoryKey

            if MemoryKey.parse(candidate.key).project != project:
                raise InvalidKeyError("foreign project")
        except InvalidKeyError:
            update["key"] = None
    if not (update.get("key", candidate.key) and update["value"]):
        update["key"] = None
    return candidate.model_copy(update=update)


async def write_candidates(pm: Any, candidates: Sequence[Candidate], related: Sequence[Related], ctx: Context,
                           provenance: Provenance) -> list[dict[str, Any]]:
    by_id = {r.local_id: r for r in related}
    outcomes: list[dict[str, Any]] = []
    message_ids = list(provenance.message_ids)
    for raw in candidates:
        candidate = _clean(raw, pm.scope.project, message_ids)
        if candidate is None:
            outcomes.append({"action": "dropped", "reason": "empty or secret-only candidate"})
            continue
        repeat = by_id.get(candidate.same_as) if candidate.same_as else None
        if repeat is not None and repeat.memory_id and not candidate.key:
            await pm.semantic.confirm(repeat.memory_id)
            outcomes.append({"action": "memory_confirmed", "target": repeat.memory_id, "content": repeat.content})
            continue
        supersede = [by_id[i].memory_id for i in candidate.supersedes if i in by_id and by_id[i].memory_id]
        outcome = await gate_and_write(pm, candidate, provenance, threshold=float(ctx.confidence_threshold),
                                       supersede_ids=supersede)
        outcomes.append({"action": outcome.action, "target": outcome.target, "content": outcome.content,
                         "confidence": round(outcome.confidence, 3), "previous": outcome.previous})
    return outcomes


async def extract_turn(pm: Any, memory: Any, turn: Sequence[TurnMessage], ctx: Context,
                       thread_id: str | None) -> list[dict[str, Any]]:
    """Extract and write one turn; raises ModelCallError when the model fails (the caller queues the turn)."""
    related = await related_memories(pm, turn)
    model = memory.providers.chat("extractor", ctx)
    message_ids = [m.id for m in turn if m.id]
    if model is None:
        existing = [ExistingMemory(r.local_id, r.content, r.key, r.value, r.pending) for r in related]
        candidates = extract_candidates(turn, project=pm.scope.project, existing=existing)
        extractor = OFFLINE_EXTRACTOR_NAME
    else:
        candidates = await _llm_candidates(model, turn, related, ctx, pm.scope.project)
        extractor = f"llm/{getattr(model, 'model_name', None) or type(model).__name__}"
    provenance = Provenance(thread_id=thread_id, message_ids=message_ids, extractor=extractor)
    return await write_candidates(pm, candidates, related, ctx, provenance)


async def extract(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """Post-turn node: extract memories from the latest turn of ``messages``."""
    ctx, memory, pm = scope_of(runtime)
    turn = latest_turn(state.get("messages", []))
    if not turn:
        return {"extraction": []}
    try:
        thread_id = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:
        thread_id = None
    try:
        return {"extraction": await extract_turn(pm, memory, turn, ctx, thread_id)}
    except ModelCallError as exc:
        queued = await queue_failed_turn(pm, turn, thread_id, str(exc))
        return {"extraction": [{"action": "queued_for_retry", "target": str(queued), "error": str(exc)}]}


async def queue_failed_turn(pm: Any, turn: Sequence[TurnMessage], thread_id: str | None, error: str) -> int:
    payload = json.dumps([{"role": m.role, "text": redact_secrets(m.text), "id": m.id} for m in turn])
    async with pm.semantic.db.connection() as conn:
        row = await (await conn.execute(
            "INSERT INTO z0_extraction_queue (project, user_id, thread_id, messages, error) "
            "VALUES (%(project)s, %(user_id)s, %(thread)s, %(messages)s::jsonb, %(error)s) RETURNING id",
            {**pm.scope.params, "thread": thread_id, "messages": payload, "error": error[:2000]},
        )).fetchone()
    return int(row["id"])


async def retry_failed_extractions(memory: Any, ctx: Context) -> dict[str, int]:
    """Run the queued turns of the context's scope again; a success removes the entry, a failure counts it."""
    pm = memory.scope(ctx.project, ctx.user_id)
    async with memory.db.connection() as conn:
        rows = await (await conn.execute(
            "SELECT id, thread_id, messages FROM z0_extraction_queue WHERE project = %(project)s "
            "AND user_id = %(user_id)s ORDER BY id", pm.scope.params,
        )).fetchall()
    done = failed = 0
    for row in rows:
        turn = [TurnMessage(m["role"], m["text"], m.get("id")) for m in row["messages"]]
        try:
            await extract_turn(pm, memory, turn, ctx, row["thread_id"])
        except ModelCallError as exc:
            async with memory.db.connection() as conn:
                await conn.execute("UPDATE z0_extraction_queue SET attempts = attempts + 1, last_attempt_at = now(), "
                                   "error = %s WHERE id = %s", [str(exc)[:2000], row["id"]])
            failed += 1
            continue
        async with memory.db.connection() as conn:
            await conn.execute("DELETE FROM z0_extraction_queue WHERE id = %s", [row["id"]])
        done += 1
    return {"retried": done, "still_failing": failed}
