"""What can be stored, checked at the entry points: refused with :class:`InvalidInputError` before anything is written.

* **Text** holds no NUL (U+0000: PostgreSQL ``text`` and ``jsonb`` refuse it) and no lone surrogate (U+D800..U+DFFF:
  not Unicode text, UTF-8 cannot encode it). Lone surrogates are what invalid bytes become when Python reads them
  with ``surrogateescape`` (command-line arguments, stdin in the C locale, file names) or what a JSON ``"\\ud800"``
  escape decodes to. Conversation text is the exception for NUL only: ``tokens.message_text`` drops NUL bytes, so
  a message holding one still gets its turn; a lone surrogate cannot be dropped without changing what was said, so
  the turn is refused (:func:`check_messages`).
* **Nested values** (metadata, candidates, provenance) are at most :data:`MAX_DEPTH` levels deep (JSON encoding
  recursed once per level: 2,000 levels raised ``RecursionError``), and a memory's **metadata** is a mapping of at
  most :data:`METADATA_MAX_BYTES` bytes of JSON.
* **Thread ids** are 1..:data:`THREAD_ID_MAX` characters without control characters (NUL, line breaks, tabs,
  escapes), line or paragraph separators, bidirectional overrides, or lone surrogates: a thread id is stored,
  logged and shown to the user.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from z0_memory.errors import InvalidInputError

MAX_DEPTH = 32
METADATA_MAX_BYTES = 64 * 1024
THREAD_ID_MAX = 512
# characters that reorder the text around them when it is displayed (a thread id that reads as another one)
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def surrogate_at(text: str) -> int | None:
    """Index of the first lone surrogate in ``text``, or None (the common case costs one UTF-8 encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _surrogate_error(what: str, text: str, at: int) -> InvalidInputError:
    return InvalidInputError(
        f"{what} contains a lone surrogate (U+{ord(text[at]):04X} at character {at}), which is not valid Unicode "
        "and cannot be stored: it comes from bytes that are not UTF-8; send the text as UTF-8")


def check_text(what: str, text: str, *, nul: bool = True) -> None:
    """Refuse a text PostgreSQL cannot store: a NUL byte (unless ``nul=False``) or a lone surrogate."""
    if nul and "\x00" in text:
        raise InvalidInputError(f"{what} contains a NUL byte (\\x00), which cannot be stored; remove it")
    at = surrogate_at(text)
    if at is not None:
        raise _surrogate_error(what, text, at)


def check_value(what: str, *values: object, nul: bool = True, max_depth: int = MAX_DEPTH) -> None:
    """:func:`check_text` on every text inside ``values`` (dict keys too), which may nest ``max_depth`` levels.

    Walks iteratively: a value nested deeper than the limit (or one that contains itself) is refused here instead
    of exhausting the stack later.
    """
    stack: list[tuple[object, int]] = [(v, 0) for v in values]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            check_text(what, value, nul=nul)
            continue
        if isinstance(value, BaseModel):
            value = value.model_dump()
        if isinstance(value, Mapping):
            children: Iterable[object] = [*value.keys(), *value.values()]
        elif isinstance(value, list | tuple | set | frozenset):
            children = value
        else:
            continue
        if depth >= max_depth:
            raise InvalidInputError(f"{what} is nested more than {max_depth} levels deep; flatten it")
        stack += [(child, depth + 1) for child in children]


def check_metadata(what: str, metadata: object) -> None:
    """A memory's metadata: a mapping, storable (:func:`check_value`), at most ``METADATA_MAX_BYTES`` of JSON."""
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"{what} must be a mapping (a dict), got {type(metadata).__name__}")
    check_value(what, metadata)
    try:
        size = len(json.dumps(metadata, default=str).encode("utf-8"))
    except (TypeError, ValueError) as exc:  # e.g. keys that are not str, int, float, bool or None
        raise InvalidInputError(f"{what} cannot be stored as JSON ({exc})") from None
    if size > METADATA_MAX_BYTES:
        raise InvalidInputError(
            f"{what} is {size} bytes of JSON; the limit is {METADATA_MAX_BYTES}: keep large text in the content")


def check_thread_id(thread_id: object) -> str:
    """The thread id as text, or :class:`InvalidInputError` saying what is wrong with it."""
    if isinstance(thread_id, bytes | bytearray) or thread_id is None:
        raise InvalidInputError(f"a thread id must be text, got {type(thread_id).__name__}")
    text = str(thread_id)
    if not text or len(text) > THREAD_ID_MAX:
        raise InvalidInputError(f"a thread id must be 1-{THREAD_ID_MAX} characters, got {len(text)}")
    for i, c in enumerate(text):
        if c in _BIDI_CONTROLS or unicodedata.category(c) in {"Cc", "Cs", "Zl", "Zp"}:
            kind = "a lone surrogate" if unicodedata.category(c) == "Cs" else "a control character"
            raise InvalidInputError(
                f"a thread id must not contain {kind} (U+{ord(c):04X} at character {i}); use letters, digits and "
                "punctuation")
    return text


def _message_text(message: Any) -> tuple[str, str]:
    """(role, text) of a message as a graph receives it: a message object, a (role, text) pair or a dict."""
    if isinstance(message, str):
        return "user", message
    if isinstance(message, tuple | list) and len(message) == 2:
        return str(message[0]), message[1] if isinstance(message[1], str) else str(message[1])
    if isinstance(message, Mapping):
        content, role = message.get("content", ""), str(message.get("role") or message.get("type") or "message")
    else:
        content, role = getattr(message, "content", ""), str(getattr(message, "type", "message"))
    if isinstance(content, list):
        content = " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return role, content if isinstance(content, str) else str(content)


def check_messages(messages: Iterable[Any]) -> None:
    """Refuse a conversation holding a lone surrogate, naming the message (NUL bytes are dropped elsewhere)."""
    for n, message in enumerate(messages or (), 1):
        role, text = _message_text(message)
        at = surrogate_at(text)
        if at is not None:
            raise _surrogate_error(f"message {n} ({role})", text, at)


def _check_state(what: str, value: object) -> None:
    """A channel value about to be checkpointed: no lone surrogate anywhere (messages: their text)."""
    if isinstance(value, list | tuple) and value and all(hasattr(m, "content") and hasattr(m, "type") for m in value):
        check_messages(value)  # the messages channel: its text, not every field of every message
        return
    # blobs (msgpack) hold NUL; state nests stored values (a recalled memory's metadata sits three levels down in
    # the memories channel), so its bound is twice theirs
    check_value(what, value, nul=False, max_depth=2 * MAX_DEPTH)


def check_checkpoint(checkpoint: Mapping[str, Any], metadata: object, new_versions: Iterable[str]) -> None:
    """Refuse a checkpoint the saver cannot store, before any of it is written.

    Text channel values are stored inline in ``jsonb`` (no NUL, no lone surrogate); the channels this checkpoint
    updates (``new_versions``) are checked for lone surrogates, which msgpack would otherwise store as ``?``
    (the run's input arrives here first, in the ``__start__`` channel); the metadata is ``jsonb`` too.
    """
    values = checkpoint.get("channel_values") or {}
    for channel, value in values.items():
        if isinstance(value, str):
            check_text(f"the thread's {channel!r} value", value)
    for channel in new_versions:
        if channel in values and not isinstance(values[channel], str):
            _check_state(f"the thread's {channel!r} value", values[channel])
    check_value("the checkpoint's metadata", metadata)


def check_writes(writes: Iterable[tuple[str, Any]]) -> None:
    """Refuse pending writes holding a lone surrogate (stored as msgpack blobs), before any is written."""
    for channel, value in writes:
        _check_state(f"a write to the thread's {channel!r}", value)
