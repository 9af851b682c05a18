"""Where a choice's reason comes from when it is not in the choice's own clause (``clauses.split_rationale`` reads
"X because Y", "为了 Y，X" and "X，主要是 Y"): the sentence after it, with a cue ("The reason: ...", "理由是 ...") or
without one ("cold starts on Lambda were killing us", "we looked at Sinatra but it's too barebones"), and the user's
next message ("Startup time and memory footprint matter a lot since we run on scale-to-zero containers.").

A sentence explains the choice before it only when it states nothing of its own (the caller's rules found no
statement in it) and says something: not a question, hedge, instruction, request, greeting or acceptance, and more
than a bare rejection ("Flask is out.", "没选 Gin。"). A cued reason outranks a plain one, and a reason never replaces
one the choice already has. From another message the link must show: a reason cue, or a name the choice holds
(its value or the alternative it turned down); and only a choice the store already holds is given it (the write gate
keeps it as a new version of the fact, ``writes._new_reason``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from z0_memory.offline.extraction.clauses import content_terms, is_chitchat, is_question, split_sentences
from z0_memory.offline.extraction.cues import (
    ACCEPT_ONLY,
    CLAUSE_REASON,
    CONFIRM_PREFIX,
    CORRECTION,
    HEDGE,
    INSTRUCTION,
    NEGATION,
    RATIONALE,
    REASON_SENTENCE,
    REMEMBER,
    TASK_REQUEST,
    UNDECIDED,
)
from z0_memory.offline.extraction.model import CONF_DECISION, ExistingMemory, Statement
from z0_memory.offline.extraction.vocabulary import SLOT_BY_KEY, find_values, norm_value, term_pattern
from z0_memory.redaction import REDACTED

# Words that only turn an alternative down ("Flask is out", "Rocket 出局了"): a rejection, not a reason
_TURNED_DOWN = re.compile(r"\b(?:out|gone|dropped|rejected|ruled out|off the table|no more|not chosen|runner-up|"
                          r"(?:the )?other (?:candidate|option|contender)|(?:was|were) on the table|"
                          r"alternatives?(?: considered)?|considered)\b|备选|否决|落选|出局|出局了|放弃了?|不考虑了?|"
                          r"不用了?|没选|也不要了?|淘汰了?", re.I)
_COMPARED = re.compile(r"(?:也|都|还|会)?(?:更好|更合适|比较好)")
# A request to the assistant ("Please wire it into the API routes", "let's do the routing first", "帮我加个重试")
_REQUEST = re.compile(r"(?:please|pls|can you|could you|would you|let'?s|let us|go ahead|请|帮我|麻烦|给我|先帮)\b", re.I)
_PUNCT = " .。!！;；,，:：—–-"
_MEANT = re.compile(r"\b(?:i|we) meant\b|我是说|我的意思是|我说的是", re.I)  # a correction of what was said
# Keys whose facts are no choice a reason could explain
_NOT_CHOICES = ("people", "preference")


def cued_reason(sentence: str) -> str | None:
    """The reason a sentence opening with a reason cue gives ("The reason: our ops folks ...", "理由是 ..."), cue
    stripped."""
    m = REASON_SENTENCE.match(sentence.strip())
    if m is None:
        return None
    return sentence.strip()[m.end():].strip(_PUNCT) or None


def explanation(sentence: str, *, cued: bool = False) -> str | None:
    """What a sentence that states nothing says in explanation of the choice next to it, in the user's words, or None
    when it is no explanation (see the module's docstring). ``cued``: a "so" ties it to the choice already, so one
    content word besides the names it turns down is enough ("Flask is too barebones, so FastAPI")."""
    text = REMEMBER.sub("", sentence.strip()).strip(_PUNCT)
    if not text or REDACTED in text or is_question(text) or is_chitchat(text) or INSTRUCTION.search(text) \
            or TASK_REQUEST.search(text) or _REQUEST.match(text):
        return None
    while (opening := ACCEPT_ONLY.match(text) or CONFIRM_PREFIX.match(text)) and opening.end() > 0:
        text = text[opening.end():].strip(_PUNCT)  # "就这么定了，简单粗暴性能好": the agreement is no part of it
    # "性能也更好" compares and "Gin 不考虑了" turns a rival down; neither hedges
    plain = _TURNED_DOWN.sub(" ", _COMPARED.sub(" ", text))
    if HEDGE.search(plain) or UNDECIDED.search(plain):
        return None  # "maybe later", "为了减少运维，缓存先不定": a hedge of its own, not a reason
    rest = text
    for v in find_values(text):
        rest = rest.replace(v.value, " ")
    rest = _TURNED_DOWN.sub(" ", NEGATION.sub(" ", rest))
    if len(content_terms(rest)) < (1 if cued else 2):
        return None  # "Flask is out.", "Express 就不用了。"
    return cued_reason(text) or text


def has_cue(sentence: str) -> bool:
    return bool(REASON_SENTENCE.match(sentence.strip()) or RATIONALE.search(sentence) or CLAUSE_REASON.search(sentence))


def names_one_of(sentence: str, statements: Sequence[Statement]) -> bool:
    """The sentence names what one of the statements chose or turned down."""
    names = {n for s in statements for n in (s.value, s.rejected, s.old_value) if n}
    return any(re.search(term_pattern(n), sentence, re.I) for n in names)


def rival_slots(sentence: str, statements: Sequence[Statement]) -> set:
    """The slots the statements chose of which the sentence names another value ("Quarkus was tempting but ..."
    after a choice of backend framework): it talks about those choices, unless it corrects one ("I meant Postgres
    16")."""
    if CORRECTION.search(sentence) or _MEANT.search(sentence):
        return set()
    slots = {s.slot for s in statements if s.slot is not None}
    return {v.slot for v in find_values(sentence) if v.slot in slots}


def restates(found: Sequence[Statement], chosen: Sequence[Statement]) -> bool:
    """Every statement of ``found`` names a choice of ``chosen`` again (same slot and value)."""
    said = {(s.slot, norm_value(s.value)) for s in chosen if s.value}
    return all(s.value and (s.slot, norm_value(s.value)) in said and not s.hedged for s in found)


def _choice(s: Statement) -> bool:
    return bool((s.slot is not None or s.entity_override) and s.value and not s.hedged and s.kind != "preference"
                and s.category_override not in _NOT_CHOICES)


def explainable_choice(s: Statement) -> bool:
    """A firm choice of the user's a reason may explain: keyed, not hedged or turned down, no person or
    preference."""
    return _choice(s) and not s.negative and s.said_by == "user"


def explainable(statements: Sequence[Statement]) -> list[Statement]:
    """The firm choices a reason may be given to: keyed, not hedged, no reason yet."""
    return [s for s in statements if _choice(s) and not s.rationale]


def comments_on(found: Sequence[Statement], chosen: Sequence[Statement], text: str, *,
                descriptions: bool = True) -> bool:
    """What ``text`` states only talks about a slot a firm choice of ``chosen`` (said just before, in the same
    message) settled, without making another choice of it: the chosen value again, or another value only described
    ("We considered Hanami but hiring Rails devs is far easier"), hedged ("Rails was the other candidate") or turned
    down, and no correction ("actually, FastAPI"), no switch. Such a sentence explains the choice; a description
    never outranks a decision of the same key made in the same message. ``descriptions=False`` (the choice was made
    in an earlier message): another value described may be a correction ("I meant Postgres 16"), so it does not
    count as a comment."""
    firm = {s.slot: s for s in chosen if s.slot is not None and s.value and not s.hedged and not s.negative
            and not s.weak and s.kind == "decision"}
    if not found or not firm or CORRECTION.search(text):
        return False
    for s in found:
        choice = firm.get(s.slot)
        if choice is None or s.old_value or not s.value:
            return False
        same = norm_value(s.value) == norm_value(choice.value or "")
        rival = choice.rejected is not None and norm_value(s.value) == norm_value(choice.rejected)
        if not (same or rival or (descriptions and s.kind == "fact") or s.hedged or s.negative):
            return False
    return True


def give(statements: Sequence[Statement], why: str) -> bool:
    targets = explainable(statements)
    for s in targets:
        s.rationale = why
    return bool(targets)


def held(statements: Sequence[Statement], existing: Sequence[ExistingMemory], key_of) -> list[Statement]:
    """The statements the store already holds as current facts (same key and value): what a later message may
    explain."""
    current = {(m.key, norm_value(m.value)) for m in existing if m.key and m.value and not m.pending}
    return [s for s in statements if (key_of(s), norm_value(s.value)) in current]


def named_held(text: str, existing: Sequence[ExistingMemory]) -> list[Statement]:
    """The current choices the store holds whose value a message names in a sentence that is no question: what a
    next message may explain when the rules read no choice in that message (it was stored by another reading, e.g.
    the learned speech acts, or in words the rules do not know)."""
    out: list[Statement] = []
    for m in existing:
        parts = (m.key or "").split(":")
        if m.pending or not m.value or len(parts) != 3 or parts[1] in _NOT_CHOICES:
            continue
        said = next((s for s in split_sentences(text) if re.search(term_pattern(m.value), s, re.I)
                     and not is_question(s)), None)
        if said is None:
            continue
        slot = SLOT_BY_KEY.get((parts[1], parts[2]))
        out.append(Statement(kind="decision", slot=slot, value=m.value, confidence=CONF_DECISION, text=said.strip(),
                             category_override=None if slot else parts[1], entity_override=None if slot else parts[2]))
    return out


def describes_only(before: list[Statement], decided: list[Statement]) -> bool:
    """What was stated before a "so" only describes the slots the clause after it decides, with other values: it is
    that decision's reason ("Memcached keeps evicting our sessions, so Redis"), not a choice of its own."""
    slots = {s.slot for s in decided if s.kind in ("decision", "fact") and s.value and not s.negative}
    return bool(slots) and all(s.kind == "fact" and s.slot in slots and norm_value(s.value or "") not in
                               {norm_value(d.value or "") for d in decided} for s in before)
