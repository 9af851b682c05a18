"""Binding values to slots in a clause: "cache: Redis", "Redis for caching", "we deploy with Kamal"; values the
vocabulary does not know are still values when a decision verb or a slot phrase binds them (open vocabulary), and
a known value is extended over the name-like words that follow it ("cargo nextest", "NATS JetStream").
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cues import NOT_A_NAME, REJECTED_BEFORE
from z0_memory.offline.extraction.vocabulary import Found, Slot, find_phrases, find_values
from z0_memory.redaction import REDACTED
from z0_memory.text import ENGLISH_STOPWORDS

_CONNECTORS = (
    r"(?:[:：=]|->|→|will be|should be|is going to be|is|are|uses?|using|runs? on|is (?:deployed|hosted|running)"
    r" (?:on|to|at)|(?:deployed|hosted|built|written) (?:on|to|in|with)|will be built in|goes? to|follows?|"
    r"(?:are|is) (?:run|written|done|managed|handled|built|tracked) (?:with|in|by|on)|"
    r"用的是|统一用|一律用|都用|就用|还是用|还是|使用|采用|选用|定为|定成|改为|改用|是|用|部署在|跑在|托管在|放在)"
)
_CONNECT_AFTER_SLOT = re.compile(rf"^\s*(?:{_CONNECTORS}|on|with|via|through|at)\s*(?:the\s+|our\s+)?$", re.I)
_GENERIC_AFTER_SLOT = re.compile(
    rf"^\s*{_CONNECTORS}\s*(?:the\s+|our\s+)?"
    r"(?P<v>[A-Za-z0-9][\w.+#/-]*(?:[ \t]+(?:[A-Z0-9][\w.+#/-]*|characters|chars|columns|spaces))?)",
    re.I,
)
_CONNECT_BEFORE_SLOT = re.compile(
    r"^\s*(?:(?:for|as|in|on)\s+(?:the\s+|our\s+|all\s+|a\s+|an\s+)?(?:[\w-]+\s+)?|做|作为|当|来做|来|管理|写|存)\s*$",
    re.I,
)


# Slots whose known values can stand in for each other ("Redis for the job queue"): a slot phrase bound to a
# known value re-files it only within its group; elsewhere the value's own slot wins ("用 Kotlin 写后端").
_INTERCHANGEABLE = (
    frozenset({"cache", "queue", "database", "search", "vector_store", "warehouse", "object_storage"}),
    frozenset({"backend_framework", "frontend_framework", "runtime"}),
    frozenset({"testing", "e2e_testing"}),
    frozenset({"linter", "formatter", "type_checker"}),
    frozenset({"monitoring", "bi"}),
)


def rebind(value: Found, phrase_slot: Slot | None) -> Slot | None:
    if value.slot is None or phrase_slot is None or value.slot == phrase_slot:
        return phrase_slot or value.slot
    same_group = any({value.slot.entity, phrase_slot.entity} <= group for group in _INTERCHANGEABLE)
    return phrase_slot if same_group else value.slot


def bound_pairs(text: str, values: list[Found], phrases: list[Found]) -> list[Found]:
    """(value, slot) pairs where a slot phrase is attached to a value: "cache: Redis", "Redis for caching"."""
    pairs: list[Found] = []
    for phrase in phrases:
        for value in values:
            after = value.start >= phrase.end and _CONNECT_AFTER_SLOT.match(text[phrase.end : value.start])
            before = value.end <= phrase.start and _CONNECT_BEFORE_SLOT.match(text[value.end : phrase.start])
            if after or before:
                pairs.append(Found(value.start, value.end, value.value, rebind(value, phrase.slot)))
        if not any(p.slot == phrase.slot for p in pairs):
            generic = _generic_after(text, phrase)
            if generic is not None:
                pairs.append(generic)
    return pairs


def _generic_after(text: str, phrase: Found) -> Found | None:
    """An out-of-vocabulary value right after a slot phrase and its connector ("testing: testify")."""
    m = _GENERIC_AFTER_SLOT.match(text[phrase.end :])
    if m is None or not looks_like_a_name(m.group("v")):
        return None
    start = phrase.end + m.start("v")
    value = m.group("v").rstrip(".,")
    return Found(start, start + len(value), value, phrase.slot)


_NOT_NAME_WORD = re.compile(
    r"^(?:\w+(?:ed|ing)|run|built|written|done|set|made|up|out|also|still|now|currently|just|always|never|very|"
    r"really|pretty|quite|too|so|being|going|fine|good|great|bad|slow|fast|ok|okay|important|ready|broken)$",
    re.I,
)


def looks_like_a_name(value: str) -> bool:
    """An out-of-vocabulary value must look like a thing's name, not a verb or filler ("written in", "so slow")."""
    first = value.split()[0].lower()
    return not (first in NOT_A_NAME or first in ENGLISH_STOPWORDS or _NOT_NAME_WORD.match(first))


def is_rejected(text: str, found: Found) -> bool:
    return bool(REJECTED_BEFORE.search(text[: found.start]))


def pairs_in(text: str) -> list[Found]:
    """The (value, slot) pairs a clause states, bound pairs first, rejected alternatives removed."""
    values = [v for v in find_values(text) if REDACTED not in v.value]
    phrases = find_phrases(text)
    bound = bound_pairs(text, values, phrases)
    out: list[Found] = []
    seen_slots: set[tuple[str, str]] = set()
    for pair in [*bound, *values]:
        if pair.slot is None or is_rejected(text, pair) or REDACTED in pair.value:
            continue
        slot_id = (pair.slot.category, pair.slot.entity)
        if slot_id in seen_slots or any(o.start == pair.start for o in out):
            continue
        seen_slots.add(slot_id)
        out.append(pair)
    return sorted(out, key=lambda p: p.start)



