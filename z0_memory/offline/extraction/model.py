"""The extractor's data types: the messages it reads, the memories it links to, what a clause states."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from z0_memory.offline.extraction.vocabulary import Slot

CONF_DECISION = 0.9
CONF_SWITCH = 0.92
CONF_CONFIRM = 0.92
CONF_RESOLVED_CONFIRM = 0.88
CONF_FACT = 0.85
CONF_KEYLESS = 0.8
CONF_PREFERENCE = 0.85
CONF_OTHER_PREFERENCE = 0.8
CONF_ANSWER = 0.85
CONF_HEDGE = 0.35
CONF_UNSURE = 0.3

@dataclass(frozen=True)
class TurnMessage:
    """One message of the turn being extracted (system and tool messages are filtered by the caller)."""

    role: Literal["user", "assistant"]
    text: str
    id: str | None = None


@dataclass(frozen=True)
class ExistingMemory:
    """A memory the store already holds for the project, with a local id the candidates can refer to."""

    local_id: int
    content: str
    key: str | None = None
    value: str | None = None
    pending: bool = False



Mode = Literal["decision", "fact", "preference", "hedge", "skip"]

@dataclass
class Statement:
    """One thing a clause says, before it is turned into a Candidate."""

    kind: str
    slot: Slot | None
    value: str | None
    confidence: float
    text: str
    hedged: bool = False
    confirms: bool = False
    person: str | None = None
    old_value: str | None = None
    rejected: str | None = None
    rationale: str | None = None
    negative: bool = False
    entity_override: str | None = None
    category_override: str | None = None
    label_override: str | None = None
    weak: bool = False  # its clause had no marker of its own (mode carried over from the clause before)
    said_by: str = "user"  # "assistant": a proposal or claim the user accepted; its content is a summary
    inferred: bool = False  # stated by the learned speech-act reading, not by a rule (``speech_acts``)


@dataclass
class ClauseContext:
    mode: Mode | None = None
    person: str | None = None
    negative: bool = False



__all__ = ["CONF_DECISION", "ClauseContext", "ExistingMemory", "Mode", "Statement", "TurnMessage"]
