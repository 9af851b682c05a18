"""Statements with no slot, or about a liking: keyless decisions and conventions ("we never use default exports"), a
value no slot names bound by a decision verb (open vocabulary), preferences; and the test that a clause says enough to
stand alone as a keyless memory."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.binding import is_rejected, open_values
from z0_memory.offline.extraction.clauses import content_terms, is_question
from z0_memory.offline.extraction.cues import CONVENTION, DECISION, PREFERENCE, STRONG_DECISION
from z0_memory.offline.extraction.model import (
    CONF_DECISION,
    CONF_HEDGE,
    CONF_KEYLESS,
    CONF_OTHER_PREFERENCE,
    CONF_PREFERENCE,
    Mode,
    Statement,
)
from z0_memory.offline.extraction.key_words import key_entity
from z0_memory.offline.extraction.vocabulary import Found


def preference_statements(
    clause: str, pairs: list[Found], person: str | None, negative: bool, *, keyless_ok: bool = True
) -> list[Statement]:
    conf = CONF_PREFERENCE if person in (None, "team") else CONF_OTHER_PREFERENCE
    if pairs and not negative:
        verb = PREFERENCE.search(clause)  # "我自己写 Python 习惯用 tabs": the liking is what follows the verb
        p = next((q for q in pairs if verb is None or q.start >= verb.end()), pairs[0])
        return [Statement(kind="preference", slot=p.slot, value=p.value, confidence=conf, text=clause, person=person)]
    named = _named_slot_preference(clause, person) if not negative else None
    if named is not None:
        return [named]
    if keyless_ok and substantive(clause):
        return [Statement(kind="preference", slot=None, value=None, confidence=conf, text=clause, person=person,
                           negative=negative)]
    return []


# "Sam prefers Makefiles over Taskfile for build scripts": the liked value, its rival, and the slot said after "for"
_OVER_FOR = re.compile(
    r"\b(?:prefers?|likes?|'d rather use|would rather use)\s+(?:using\s+)?(?P<value>[\w.+#-]+(?:\s+[\w.+#-]+){0,2}?)\s+"
    r"(?:over|to|rather than|instead of)\s+[\w.+#-]+(?:\s+[\w.+#-]+){0,2}?\s+for\s+(?:the\s+|our\s+)?"
    r"(?P<slot>[a-z][a-z -]{2,30}?)\s*(?:[,.;!]|$)", re.I)


def _named_slot_preference(clause: str, person: str | None) -> Statement | None:
    """A liking of a value no slot knows, for the slot the clause names after "for"; keyed by that slot's words."""
    m = _OVER_FOR.search(clause)
    entity = key_entity(m.group("slot").strip()) if m else None
    if m is None or entity is None:
        return None
    who = None if person in (None, "team") else person
    conf = CONF_PREFERENCE if who is None else CONF_OTHER_PREFERENCE
    return Statement(kind="preference", slot=None, value=m.group("value"), confidence=conf, text=clause, person=who,
                     category_override="preference", entity_override=f"{who}_{entity}" if who else entity)


def substantive(clause: str) -> bool:
    """Enough content to stand alone as a keyless memory: not "I like this idea"."""
    terms = content_terms(clause) - {"idea", "prefer", "like", "rather", "think", "喜欢", "觉得"}
    return len(terms) >= 2 and not re.search(r"\b(?:this|that|it|these|those)\b\s*[.!]?$", clause, re.I)


_DECIDED_IT = re.compile(r"\bdecided (?:that|this|it|on (?:that|this|it))(?=\s*(?:[,.;!]|$|last|yesterday|earlier|already|"
                         r"a while|together|before|after|back)\b|\s*[,.;!]|\s*$)|(?:这个|这事|这件事)(?:是)?(?:上周|之前|早就|已经)?"
                         r"(?:就)?决定(?:好)?了", re.I)


def sentence_convention(s: Statement, sentence: str) -> bool:
    """A keyless convention read from a clause of the sentence (its text is the whole sentence, ``keyless``)."""
    return (s.kind == "fact" and s.value is None and s.slot is None and s.category_override is None
            and s.text == sentence and s.confidence == CONF_KEYLESS)


def keyless(clause: str, mode: Mode, sentence: str) -> list[Statement]:
    """A statement with no slot: strong decisions ("we decided ..."), a value no slot names bound by a decision verb
    ("we'll use Zod for validation"; open vocabulary) and conventions ("we never ...")."""
    if mode == "decision" and _DECIDED_IT.search(clause):
        return []  # "Backend is FastAPI, we decided that last week": the clause before is the decision
    if mode == "decision" and STRONG_DECISION.search(clause) and substantive(clause):
        return [Statement(kind="decision", slot=None, value=None, confidence=CONF_DECISION, text=sentence)]
    named = [v for v in open_values(clause) if not is_rejected(clause, v)]
    if named and mode in ("decision", "fact", "hedge") and (substantive(clause) or mode == "decision"):
        kind = "decision" if mode != "fact" or DECISION.search(clause) else "fact"
        conf = {"hedge": CONF_HEDGE, "decision": CONF_DECISION}.get(mode, CONF_KEYLESS)
        return [Statement(kind=kind, slot=None, value=named[0].value, confidence=conf, text=clause,
                          hedged=mode == "hedge")]  # no slot yet: the conversation may name one
    if mode == "fact" and CONVENTION.search(clause) and substantive(clause) and not is_question(clause):
        return [Statement(kind="fact", slot=None, value=None, confidence=CONF_KEYLESS, text=sentence)]
    return []
