"""Importing conversations into memory.

* LoCoMo-style JSON (``session_N`` lists of ``{speaker, dia_id, text}`` with ``session_N_date_time``): every turn
  becomes a semantic memory ("Speaker: text", plus the image caption when there is one) with its speaker, session,
  date and dia_id as metadata, ``created_at`` the session's date; embedded in batches.
* A transcript (``.jsonl`` of ``{"role": "user"|"assistant", "text": ...}`` or a text file of ``user: ...`` /
  ``assistant: ...`` lines): replayed turn by turn through the extraction graph, so only what the extraction
  keeps is written, exactly as if the conversation had happened live.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from z0_memory.config import Context
from z0_memory.errors import Z0Error
from z0_memory.stores.semantic import NewMemory

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_LINE = re.compile(r"^\s*(user|assistant|human|ai)\s*:\s*(.+)$", re.I)
Progress = Callable[[int, int], None]


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


def parse_locomo_date(text: str) -> datetime | None:
    """'1:56 pm on 8 May, 2023' -> an aware datetime; None when it does not parse."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%d %B %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def locomo_turns(conversation: dict[str, Any]) -> Iterator[LocomoTurn]:
    """Every turn of one LoCoMo conversation (the dict under ``conversation``, or the file's top level)."""
    conv = conversation.get("conversation", conversation)
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    for n in sessions:
        date_text = str(conv.get(f"session_{n}_date_time", ""))
        date = parse_locomo_date(date_text)
        for turn in conv.get(f"session_{n}") or []:
            text = str(turn.get("text", "")).strip()
            if turn.get("blip_caption"):
                text = f"{text} [shared an image: {turn['blip_caption']}]"
            if text:
                yield LocomoTurn(n, date, date_text, str(turn.get("speaker", "")), str(turn.get("dia_id", "")), text)


def locomo_memory(turn: LocomoTurn) -> NewMemory:
    return NewMemory(
        content=f"{turn.speaker}: {turn.text}", category="conversation", kind="context", confidence=1.0,
        source_ids=[turn.dia_id], created_at=turn.date,
        metadata={"speaker": turn.speaker, "session": turn.session, "session_date": turn.date_text,
                  "dia_id": turn.dia_id},
    )


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


async def ingest_locomo(memory: Any, ctx: Context, path: Path, progress: Progress | None = None,
                        batch_size: int = 1024) -> int:
    data = load_json(path)
    conversations = data if isinstance(data, list) else [data]
    turns = [t for conv in conversations for t in locomo_turns(conv)]
    if not turns:
        raise IngestError(f"{path} holds no LoCoMo-style sessions (session_N lists of turns)")
    semantic = memory.scope(ctx.project, ctx.user_id).semantic
    for start in range(0, len(turns), batch_size):
        await semantic.add_many([locomo_memory(t) for t in turns[start:start + batch_size]])
        if progress:
            progress(min(start + batch_size, len(turns)), len(turns))
    return len(turns)


async def ingest_transcript(memory: Any, ctx: Context, path: Path, progress: Progress | None = None) -> int:
    from z0_memory.graphs.extraction import builder

    turns = transcript_turns(path)
    graph = builder.compile(store=memory.store())
    written = 0
    for i, turn in enumerate(turns, 1):
        out = await graph.ainvoke({"messages": [(role, text) for role, text in turn]},
                                  {"configurable": {"thread_id": f"ingest:{path.name}"}}, context=ctx)
        written += sum(1 for o in out.get("extraction", []) if o.get("action") not in {"dropped"})
        if progress:
            progress(i, len(turns))
    return written


def is_locomo(path: Path) -> bool:
    return path.suffix == ".json"
