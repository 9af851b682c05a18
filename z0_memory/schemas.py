"""Pydantic models shared by stores, nodes and graphs.

Keys: ``{project}:{category}:{entity}``. Each segment is 1..128 characters of letters or digits (any script, so
``缓存`` is a valid entity), ``_``, ``-`` or ``.``, starting with a letter or digit. Nothing else is accepted:
no separators, quotes, whitespace or control characters, so a key can never smuggle anything into SQL or a prompt.
``normalize_segment`` turns free text ("Backend Framework") into a valid segment ("backend_framework").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from z0_memory.errors import InvalidKeyError
from z0_memory.validation import check_value

SEGMENT_MAX = 128
_SEGMENT_RE = re.compile(r"^[^\W_][\w.\-]*\Z", re.UNICODE)  # \Z: "$" would let a trailing "\n" through

MemoryKind = Literal["fact", "decision", "preference", "context"]
SearchSource = Literal["kv", "semantic"]
# Metadata of memories imported from a conversation: the session (or thread) they belong to and their position in
# it. Retrieval uses them for conversational context (the neighbours of a hit); memories without them are left alone.
CONVERSATION_GROUP_KEY = "session"
CONVERSATION_ORDER_KEY = "turn"


def validate_segment(value: object, what: str = "segment") -> str:
    """Return ``value`` if it is a valid key segment, else raise :class:`InvalidKeyError` saying why."""
    if not isinstance(value, str):
        raise InvalidKeyError(f"{what} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidKeyError(f"{what} must not be empty")
    if len(value) > SEGMENT_MAX:
        raise InvalidKeyError(f"{what} is {len(value)} characters long; the limit is {SEGMENT_MAX}")
    if not _SEGMENT_RE.match(value):
        bad = sorted({c for c in value if not (c.isalnum() or c in "_-.")})
        shown = ", ".join(repr(c) for c in bad[:5]) or "a leading '_', '-' or '.'"
        raise InvalidKeyError(
            f"{what} {value[:40]!r} is not allowed ({shown}): use letters, digits, '_', '-' or '.', "
            "starting with a letter or digit"
        )
    return value


def reject_nul(what: str, *values: object) -> None:
    """Raise :class:`InvalidInputError` naming ``what`` when any text in ``values`` (nested too) cannot be stored.

    PostgreSQL text and jsonb cannot hold U+0000, and no text can hold a lone surrogate; values nest at most
    ``validation.MAX_DEPTH`` levels. Refusing here gives a clear error instead of a driver DataError, a
    UnicodeEncodeError or a RecursionError, before anything is written (see ``z0_memory.validation``).
    (Conversation text is cleaned earlier: ``tokens.message_text`` drops NUL bytes.)
    """
    check_value(what, *values)


def normalize_segment(text: str) -> str:
    """Turn free text into a valid key segment: lower case, runs of other characters -> '_'."""
    text = unicodedata.normalize("NFKC", text).strip().lower()
    text = re.sub(r"[^\w.\-]+", "_", text, flags=re.UNICODE).strip("_.-")
    text = text[:SEGMENT_MAX].rstrip("_.-")
    if not text:
        raise InvalidKeyError("cannot build a key segment from text with no letters or digits")
    return text


class MemoryKey(BaseModel):
    """A structured-fact key: ``{project}:{category}:{entity}``."""

    model_config = ConfigDict(frozen=True)

    project: str
    category: str
    entity: str

    @field_validator("project", "category", "entity")
    @classmethod
    def _valid(cls, v: object, info: Any) -> str:
        return validate_segment(v, info.field_name)

    @classmethod
    def parse(cls, key: str) -> MemoryKey:
        if not isinstance(key, str):
            raise InvalidKeyError(f"key must be a string like 'project:category:entity', got {type(key).__name__}")
        return _parse_key(key) if cls is MemoryKey else cls._parse(key)

    @classmethod
    def _parse(cls, key: str) -> MemoryKey:
        parts = key.split(":")
        if len(parts) != 3:
            raise InvalidKeyError(
                f"key {key[:60]!r} must have exactly three ':'-separated parts: project:category:entity"
            )
        for name, part in zip(("project", "category", "entity"), parts, strict=True):
            validate_segment(part, name)
        return cls(project=parts[0], category=parts[1], entity=parts[2])

    def __str__(self) -> str:
        return f"{self.project}:{self.category}:{self.entity}"


@functools.lru_cache(maxsize=4096)
def _parse_key(key: str) -> MemoryKey:
    """``MemoryKey.parse``, cached: keys are frozen values of their text, and the router parses every known key of
    the project for each question (two regex passes per segment). Invalid keys raise every time (not cached)."""
    return MemoryKey._parse(key)


class Provenance(BaseModel):
    """Why a memory exists: who said it, where, and how it was judged worth keeping."""

    thread_id: str | None = None
    message_ids: list[str] = Field(default_factory=list)
    extractor: str = "manual"
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    rationale: str | None = None
    recorded_at: datetime | None = None


class FactVersion(BaseModel):
    """One version of a KV fact. ``valid_to`` is None for the current version."""

    id: int
    key: MemoryKey
    value: str
    statement: str | None = None
    version: int
    valid_from: datetime
    valid_to: datetime | None = None
    provenance: Provenance
    confirmations: int = 1

    @property
    def is_current(self) -> bool:
        return self.valid_to is None


class MemoryRecord(BaseModel):
    """A semantic memory row (inference, preference, context, or the searchable mirror of a fact)."""

    id: str
    project: str
    category: str
    kind: MemoryKind
    content: str
    confidence: float
    created_at: datetime
    superseded_at: datetime | None = None
    fact_key: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Hit(BaseModel):
    """One retrieval result, whatever strategy found it."""

    id: str
    source: SearchSource
    content: str
    score: float
    kind: MemoryKind = "context"
    category: str | None = None
    key: str | None = None
    confidence: float = 1.0
    created_at: datetime | None = None
    superseded: bool = False
    rationale: str | None = None
    strategy: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)



def conversation_position(hit: Hit) -> tuple[str, int] | None:
    """(session, turn) of a memory imported from a conversation (see ``CONVERSATION_GROUP_KEY``), else None."""
    group, order = hit.metadata.get(CONVERSATION_GROUP_KEY), hit.metadata.get(CONVERSATION_ORDER_KEY)
    if group is None or not isinstance(order, int) or isinstance(order, bool):
        return None
    return str(group), order


class Candidate(BaseModel):
    """Something a turn said that may be worth remembering, before the confidence gate."""

    kind: MemoryKind
    content: str = Field(description="The memory as one self-contained sentence.")
    key: str | None = Field(
        default=None, description="'{project}:{category}:{entity}' for a structured fact or decision, else null."
    )
    value: str | None = Field(default=None, description="The fact's value when key is set (e.g. 'Hono').")
    rationale: str | None = Field(default=None, description="Why it was decided or said, when the turn gives it.")
    confidence: float = Field(ge=0.0, le=1.0, description="0..1: how settled and explicit the statement is.")
    hedged: bool = Field(default=False, description="True for tentative statements ('maybe', 'what about').")
    confirms: bool = Field(default=False, description="True when the turn explicitly confirms an earlier proposal.")
    supersedes: list[int] = Field(
        default_factory=list, description="Local ids of existing memories this one replaces or contradicts."
    )
    same_as: int | None = Field(default=None, description="Local id of an existing memory this merely repeats.")
    source_message_ids: list[str] = Field(default_factory=list)


class PendingItem(BaseModel):
    """A candidate below the confidence threshold, waiting for confirmation or expiry."""

    id: int
    project: str
    candidate: Candidate
    confirmations: int
    first_seen: datetime
    last_seen: datetime
    expires_at: datetime
    provenance: Provenance


# --- writes ---------------------------------------------------------------------------------------------------

WriteAction = Literal[
    "fact_created", "fact_superseded", "fact_confirmed", "fact_revised", "memory_added", "memory_confirmed",
    "pending_created", "pending_confirmed", "promoted", "dropped", "ignored", "queued_for_retry", "nothing",
    "forgotten",
]


class WriteOutcome(BaseModel):
    """What the write path did with one candidate: the ``extraction`` channel and the extraction log hold these.

    ``action`` is the write (``fact_*``, ``memory_*``, ``pending_*``, ``promoted``: ``target`` is the fact key, the
    memory id or the pending id, ``content`` what was stored, ``previous`` the value a fact had before), or why
    nothing was written: ``dropped`` (empty, secret-valued, or refused by a store: ``reason``), ``ignored`` (an
    instruction to the assistant: ``reason="instruction"``, ``content`` the sentence), ``queued_for_retry`` (the
    extractor failed: ``error``, and ``target`` the queue entry), ``nothing`` (the log's entry for a turn with nothing
    to remember), ``forgotten`` (the log's mark of messages whose memories were forgotten: they are not read
    again). ``confirmations``: how often a confirmed memory has now been said.
    """

    model_config = ConfigDict(frozen=True)

    action: WriteAction
    target: str = ""
    content: str = ""
    confidence: float | None = None
    previous: str | None = None
    reason: str | None = None
    error: str | None = None
    confirmations: int | None = None
    note: str | None = None  # what the review of an LLM extractor's answer changed (``nodes/extraction_review``)


# --- retrieval loop ------------------------------------------------------------------------------------------

StrategyName = Literal["kv_exact", "kv_prefix", "semantic", "keyword", "hybrid"]
STRATEGIES: tuple[str, ...] = ("kv_exact", "kv_prefix", "semantic", "keyword", "hybrid")


class RouteDecision(BaseModel):
    """The gateway's choice of strategies for a query, with the reason shown in the trace."""

    strategies: list[StrategyName]
    key: str | None = Field(default=None, description="Exact key to look up when kv_exact is chosen.")
    prefix: str | None = Field(default=None, description="'project' or 'project:category' for kv_prefix.")
    include_history: bool = Field(default=False, description="Also search superseded versions (history questions).")
    time_window: dict[str, str] | None = Field(
        default=None, description="The period the query names ({start, end, phrase}, ISO dates), if any."
    )
    reason: str


class Verdict(BaseModel):
    """The judge's word on one round's accumulated evidence."""

    sufficient: bool = Field(description="True only if the evidence fully answers the question.")
    missing: str = Field(default="", description="What the evidence does not yet cover.")
    reason: str = Field(default="", description="Why the evidence is or is not enough.")
    next_query: str | None = Field(default=None, description="A better search query for the next round.")
    next_strategy: StrategyName | None = Field(default=None, description="The strategy the next round should use.")


class RoundTrace(BaseModel):
    """One round of the loop, kept in state so a run can be debugged in Studio."""

    round: int
    query: str
    strategies: list[str]
    hits: list[dict[str, Any]] = Field(default_factory=list, description="[{id, score, strategy}] of this round.")
    verdict: bool | None = None
    reason: str = ""
    missing: str = ""
    next_action: str = ""
    started_at: datetime
    duration_ms: float = 0.0
    error: str | None = None
