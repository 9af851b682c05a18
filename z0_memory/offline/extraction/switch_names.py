"""The names a switch moves between ("switched from Gin to Hertz", "to AppSignal, it bundles ..."): the new name
at the start of the switch's target and the slot that files it, also when no slot files either name."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cues import NOT_A_NAME
from z0_memory.offline.extraction.name_spans import looks_like_a_name
from z0_memory.offline.extraction.vocabulary import Found, find_phrases, find_values
from z0_memory.redaction import REDACTED


def leading_name(text: str, context: str) -> list[Found]:
    """"Better Stack because ...": the name a switch's target starts with, filed under the one slot ``context``
    names ("moved our logging from ..."); nothing when no single slot is named."""
    m = re.match(r"(?:the\s+|our\s+)?([A-Z][\w.+#/-]*(?:[ \t]+[A-Z][\w.+#/-]*){0,3})", text)
    slots = {p.slot for p in find_phrases(context) if p.slot is not None}
    if not m or len(slots) != 1 or REDACTED in m.group(1) or not looks_like_a_name(m.group(1)):
        return []
    return [Found(m.start(1), m.end(1), m.group(1).rstrip(".,"), slots.pop())]


_LEADING_NAME = re.compile(r"(?:the\s+|our\s+)?(?P<v>[A-Z][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2})")


def leading_new_name(new_text: str, before_new: str, old_text: str, *, earlier: bool = False) -> Found | None:
    """The name a switch's target starts with ("to AppSignal, it bundles ..."), filed under the old value's slot,
    else the slot phrase nearest before it, else (``earlier``: the switch names no old value of its own) the slot of
    the value named last before it; None when it is not a name or no slot files it."""
    m = _LEADING_NAME.match(new_text)
    if not m or REDACTED in m.group("v") or not looks_like_a_name(m.group("v")):
        return None
    known = find_values(m.group("v"))
    if (known and known[0].start == 0) or any(p.start == 0 for p in find_phrases(m.group("v"))):
        return None  # a known value (pairs_in found it) or a slot's name ("Payments might go ...")
    value = m.group("v").rstrip(".,")
    old = [v.slot for v in find_values(old_text) if v.slot is not None]
    before = [p.slot for p in find_phrases(before_new) if p.slot is not None]  # the slot phrase nearest the verb
    later = [v.slot for v in find_values(new_text[m.end("v"):]) if v.slot is not None]
    if not old and not before and earlier:
        before = [v.slot for v in find_values(before_new) if v.slot is not None]
    # the old value's slot, else the slot phrase nearest before, else the slot of a rival named after it
    slot = old[0] if old else (before[-1] if before else (later[0] if later else None))
    if slot is None:
        return None
    return Found(m.start("v"), m.start("v") + len(value), value, slot)


def unfiled_switch(old_text: str, new_text: str) -> tuple[Found, Found] | None:
    """"from gpt-4o-mini to Qwen": the old and the new name of a switch when no slot files either (both must read as
    names and neither be known to the vocabulary; the caller keys it by whichever memory holds the old name)."""
    names = []
    for text in (old_text, new_text):
        m = re.match(r"\s*(?:了\s*)?(?:the\s+|our\s+)?(?P<v>[A-Za-z0-9][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2})", text)
        if not m or REDACTED in m.group("v") or find_values(m.group("v")) or find_phrases(m.group("v")):
            return None
        value = m.group("v").rstrip(".,")
        if not looks_like_a_name(value) or value.lower() in NOT_A_NAME:
            return None
        names.append(Found(m.start("v"), m.start("v") + len(value), value, None))
    return names[0], names[1]
