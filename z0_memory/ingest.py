"""Importing conversations into memory.

* LoCoMo-style JSON (``session_N`` lists of ``{speaker, dia_id, text}`` with ``session_N_date_time``): every turn
  becomes a semantic memory ("Speaker: text", plus the image caption when there is one) with its speaker, session,
  turn, date and dia_id as metadata, ``created_at`` the session's date, and the turns just before and after it as
  its search context (:func:`locomo_memories`); embedded in batches.
* A transcript (``.jsonl`` of ``{"role": "user"|"assistant", "text": ...}`` or a text file of ``user: ...`` /
  ``assistant: ...`` lines): replayed turn by turn through the extraction graph, so only what the extraction
  keeps is written, exactly as if the conversation had happened live.

Both are idempotent: importing the same file again changes nothing. A LoCoMo turn's row id derives from the turn
itself (speaker, session, position, date, text), and a row with that id is kept as it is; a transcript's messages get
stable ids and ``ProjectMemory.add`` skips the user turns some memory already cites.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from z0_memory.config import Context
from z0_memory.errors import Z0Error
from z0_memory.schemas import CONVERSATION_GROUP_KEY, CONVERSATION_ORDER_KEY
from z0_memory.stores.semantic import NewMemory

if TYPE_CHECKING:
    from z0_memory.memory import Z0Memory

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_LINE = re.compile(r"^\s*(user|assistant|human|ai)\s*:\s*(.+)$", re.I)
Progress = Callable[[int, int], None]
_LOCOMO_DATE = re.compile(
    r"(?:(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap]\.?m\.?)\s*on\s*)?(?P<d>\d{1,2})\s+(?P<mon>[A-Za-z]+)\.?,?\s+"
    r"(?P<y>\d{4})", re.IGNORECASE)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
CONTEXT_TURNS = 1  # turns on each side of a conversation turn searched with it (its ``NewMemory.context``)


class IngestError(Z0Error, ValueError):
    """The file cannot be read as a conversation."""


@dataclass(frozen=True)
class LocomoTurn:
    session: int
    date: datetime | None
    date_text: str
    speaker: str
    dia_id: str
    text: str
    turn: int = 0  # position in the session

    @property
    def line(self) -> str:
        """The turn as one line of a transcript, "Speaker: text": the content of its memory."""
        return f"{self.speaker}: {self.text}"


def parse_locomo_date(text: str | None) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` (or "8 May 2023", "8 Sept, 2023") -> an aware datetime (UTC); None when the
    text holds no such date."""
    match = _LOCOMO_DATE.search(text or "")
    if not match:
        return None
    prefix = match["mon"].lower()[:3]
    month = next((n for n, name in enumerate(_MONTHS, 1) if name.startswith(prefix)), None)
    if month is None:
        return None
    hour, minute = int(match["h"] or 0), int(match["m"] or 0)
    if match["ampm"]:
        hour = hour % 12 + (12 if match["ampm"].lower().startswith("p") else 0)
    try:
        return datetime(int(match["y"]), month, int(match["d"]), hour, minute, tzinfo=UTC)
    except ValueError:  # "31 June"
        return None


def locomo_turns(conversation: dict[str, Any]) -> Iterator[LocomoTurn]:
    """Every turn of one LoCoMo conversation (the dict under ``conversation``, or the file's top level)."""
    conv = conversation.get("conversation", conversation)
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    for n in sessions:
        date_text = str(conv.get(f"session_{n}_date_time", ""))
        date = parse_locomo_date(date_text)
        for position, turn in enumerate(conv.get(f"session_{n}") or []):
            text = str(turn.get("text") or "").strip()
            caption = str(turn.get("blip_caption") or "").strip()
            if caption:
                text = f"{text} [shared an image: {caption}]".lstrip()
            if text:
                yield LocomoTurn(n, date, date_text, str(turn.get("speaker", "")), str(turn.get("dia_id", "")), text,
                                 position)


def locomo_memory(turn: LocomoTurn, context: str = "") -> NewMemory:
    """One turn as a memory: "Speaker: text", dated by its session, placed by session and turn in the metadata."""
    return NewMemory(
        content=turn.line, category="conversation", kind="context", confidence=1.0,
        source_ids=[turn.dia_id] if turn.dia_id else [], created_at=turn.date, context=context,
        metadata={"speaker": turn.speaker, CONVERSATION_GROUP_KEY: turn.session,
                  CONVERSATION_ORDER_KEY: turn.turn, "session_date": turn.date.date().isoformat() if turn.date
                  else turn.date_text, "dia_id": turn.dia_id},
    )


def locomo_memories(conversation: dict[str, Any], context_turns: int = CONTEXT_TURNS) -> list[NewMemory]:
    """Every turn of a conversation as a memory, with the ``context_turns`` turns before and after it in the same
    session as its search context: a reply ("They were awestruck.") is found by the words of the question it
    answers, a question by the words of its answer."""
    turns = list(locomo_turns(conversation))
    out = []
    for i, turn in enumerate(turns):
        around = [other.line for other in turns[max(0, i - context_turns):i + context_turns + 1]
                  if other is not turn and other.session == turn.session]
        out.append(locomo_memory(turn, "\n".join(around)))
    return out


def load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestError(f"cannot read {path} as JSON: {exc}") from exc


def transcript_turns(path: Path) -> list[list[tuple[str, str]]]:
    """Turns of a transcript: each turn is a user message and the assistant replies after it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read {path}: {exc}") from exc
    messages: list[tuple[str, str]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if path.suffix == ".jsonl":
            try:
                obj = json.loads(line)
                role, text = str(obj["role"]).lower(), str(obj["text"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise IngestError(f"{path}:{number}: expected {{\"role\": ..., \"text\": ...}} ({exc})") from exc
        else:
            match = _LINE.match(line)
            if not match:
                raise IngestError(f"{path}:{number}: expected 'user: ...' or 'assistant: ...'")
            role, text = match.group(1).lower(), match.group(2)
        role = {"human": "user", "ai": "assistant"}.get(role, role)
        if role not in {"user", "assistant"}:
            raise IngestError(f"{path}:{number}: role must be user or assistant, got {role!r}")
        messages.append((role, text))
    turns: list[list[tuple[str, str]]] = []
    for role, text in messages:
        if role == "user" or not turns:
            turns.append([])
        turns[-1].append((role, text))
    return turns


def locomo_id(memory: NewMemory) -> str:
    """The id of an imported turn: the same turn imported again is the same row (and is not added twice)."""
    meta = memory.metadata
    parts = [meta.get("speaker"), meta.get(CONVERSATION_GROUP_KEY), meta.get(CONVERSATION_ORDER_KEY),
             meta.get("session_date"), meta.get("dia_id"), memory.content]
    return "locomo:" + hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


async def ingest_locomo(memory: Z0Memory, ctx: Context, path: Path, progress: Progress | None = None,
                        batch_size: int = 1024) -> int:
    data = load_json(path)
    conversations = data if isinstance(data, list) else [data]
    memories = [m for conv in conversations for m in locomo_memories(conv)]
    if not memories:
        raise IngestError(f"{path} holds no LoCoMo-style sessions (session_N lists of turns)")
    memories = [replace(m, id=locomo_id(m)) for m in memories]
    semantic = memory.scope(ctx.project, ctx.user_id).semantic
    before = await semantic.count()
    for start in range(0, len(memories), batch_size):
        await semantic.add_many(memories[start:start + batch_size])  # a known id keeps its stored row
        if progress:
            progress(min(start + batch_size, len(memories)), len(memories))
    return await semantic.count() - before


async def ingest_transcript(memory: Z0Memory, ctx: Context, path: Path, progress: Progress | None = None) -> int:
    from z0_memory.nodes.extraction import message_id

    turns = transcript_turns(path)
    pm = memory.scope(ctx.project, ctx.user_id, pending_ttl_days=ctx.pending_ttl_days)
    written = index = 0
    before: list[dict[str, str]] = []
    for i, turn in enumerate(turns, 1):
        messages = []
        for role, text in turn:  # ids from the position in the file: a re-import has the same ids, and is skipped
            kind = "human" if role == "user" else "ai"
            messages.append({"role": role, "content": text, "id": message_id(index, kind, text)})
            index += 1
        # with the assistant's last message before it: what a bare "yes, let's do that" accepts
        added = await pm.add([*before, *messages], thread_id=f"ingest:{path.name}")
        before = [m for m in messages if m["role"] == "assistant"][-1:]
        written += sum(1 for o in added.extraction if o.action != "dropped")
        if progress:
            progress(i, len(turns))
    return written


def is_locomo(path: Path) -> bool:
    return path.suffix == ".json"
