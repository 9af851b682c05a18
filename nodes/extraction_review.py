"""The LLM extractor's candidates held to the rules of issue 16 that can be checked without a model.

The prompt (``z0_memory.prompts.EXTRACTOR_SYSTEM``) asks the model for all of them; what the text itself can
decide is enforced here, on what the model returned, before the write gate sees it:

* instructions to the assistant are never memories: the user's sentences that order the assistant about are
  reported as ``ignored: instruction`` (the offline extractor's rule and wording, ``split_instructions``), and a
  candidate drawn from them (its content is an instruction, or its value is said only there, or the user said
  nothing else) is dropped;
* the user's words: a value the turn says is stored as spelled there (the user's spelling first, the vocabulary's
  aliases counting as the same value: "PostgreSQL" for "postgres" is stored "postgres"); a value nobody in the turn
  said, and no memory it repeats or replaces holds, is the model's inference, so it waits as pending (confidence
  capped below the gate) until someone says it; a rationale the turn does not give is dropped;
* clause-level hedges: a value the offline clause rules read as hedged in this turn, and nowhere as firm, whose every
  clause carries a hedge cue ("not sure yet whether we'll use Kafka", "可能用 Kafka") stays pending, whatever
  confidence the model gave it (both conditions: a rule's false alarm alone never demotes a firm decision);
* a rejection confirms nothing: after "no" / "不对", a candidate whose value only the assistant said, or that
  confirms something whose value the user did not say, is dropped;
* the assistant's word is not the user's: a value only the assistant said, which the user did not accept (the
  model's ``confirms``, or the offline rules' reading of a bare acceptance), is dropped when it was the previous
  reply (context only) or a restatement of memory, and held pending when it is the assistant's own statement in
  this turn;
* precedence within the turn, one candidate per key: the user's statement over one only the assistant made, a firm
  one over a hedge, a decision over a description, else the later one; a hedge on another value of the key is kept
  next to a firm one ("SQLite for now, maybe Postgres later": both, the later one pending).

Secrets were redacted from the turn before the model saw it; ``nodes.extraction._clean`` and the write gate scrub
and drop what is left. A repeat with a new reason is the write gate's (``fact_revised``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from z0_memory.offline.extraction.clauses import split_clauses, split_sentences
from z0_memory.offline.extraction.cues import HEDGE, INSTRUCTION, REJECTION, UNDECIDED
from z0_memory.offline.extractor import ExistingMemory, TurnMessage, extract_candidates, split_instructions
from z0_memory.offline.extraction.vocabulary import find_values, norm_value, term_pattern
from z0_memory.schemas import Candidate, WriteOutcome
from z0_memory.text import content_terms, stem

UNSAID_CONFIDENCE = 0.4  # a value nobody said, or a clause that hedges: the prompt's ceiling for a hedge
RATIONALE_SAID = 0.5  # share of a rationale's content terms the turn must contain for it to be the turn's reason


@dataclass
class Review:
    """What the review kept (in order, each with the note saying what it changed, or None) and what it set aside."""

    candidates: list[Candidate] = field(default_factory=list)
    notes: list[str | None] = field(default_factory=list)
    ignored: list[WriteOutcome] = field(default_factory=list)


@dataclass(frozen=True)
class _Turn:
    """The turn's texts as the checks read them."""

    user: str  # the user's messages, instructions removed
    instructions: str
    context: str  # the assistant's previous reply
    replies: str  # the assistant's replies in the turn
    rejection: bool  # the user's first message refuses what the assistant said


def _read(turn: Sequence[TurnMessage]) -> tuple[_Turn, list[str]]:
    first = next((i for i, m in enumerate(turn) if m.role == "user"), len(turn))
    kept: list[str] = []
    instructions: list[str] = []
    for m in turn[first:]:
        if m.role == "user":
            text, found = split_instructions(m.text)
            kept.append(text)
            instructions += found
    users = [m.text for m in turn[first:] if m.role == "user"]
    return _Turn(
        user="\n".join(kept), instructions="\n".join(instructions),
        context="\n".join(m.text for m in turn[:first] if m.role == "assistant"),
        replies="\n".join(m.text for m in turn[first:] if m.role == "assistant"),
        rejection=bool(users) and bool(REJECTION.match(users[0].strip())),
    ), instructions


def spelled(value: str, text: str) -> str | None:
    """``value`` as ``text`` spells it: the same words (any case), else a vocabulary alias of it; None if absent."""
    if not value.strip() or not text:
        return None
    m = re.search(term_pattern(value.strip()), text, re.I)
    if m:
        return m.group(0)
    wanted = norm_value(value)
    return next((f.value for f in find_values(text) if norm_value(f.value) == wanted), None)


_VALUE_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words_said(value: str, text: str) -> bool:
    """Every word of ``value`` occurs in ``text`` ("Node 22" in "Node.js 22"): said, if not spelled that way."""
    words = _VALUE_WORD.findall(value.casefold())
    return bool(words) and all(w in text.casefold() for w in words)


def _terms(text: str) -> set[str]:
    return {stem(t) for t in content_terms(text)}


def _rationale_said(rationale: str, turn: _Turn) -> bool:
    wanted = _terms(rationale)
    said = _terms(f"{turn.user}\n{turn.context}\n{turn.replies}")
    return not wanted or len(wanted & said) / len(wanted) >= RATIONALE_SAID


def _held(candidate: Candidate, related: Sequence[ExistingMemory]) -> bool:
    """The value is one a memory the candidate names (same_as, supersedes) or a memory of its key holds."""
    named = {candidate.same_as, *candidate.supersedes}
    wanted = norm_value(candidate.value)
    return any(r.value and norm_value(r.value) == wanted and (r.local_id in named or r.key == candidate.key)
               for r in related)


@dataclass(frozen=True)
class _RulesReading:
    """What the offline clause rules read in the turn: values hedged (and never firm), values the user accepted."""

    hedged: frozenset[str]
    accepted: frozenset[str]


def _rules_reading(turn: Sequence[TurnMessage], project: str, related: Sequence[ExistingMemory]) -> _RulesReading:
    offline = extract_candidates(turn, project=project, existing=related)
    firm = {norm_value(c.value) for c in offline if c.value and not c.hedged}
    return _RulesReading(
        hedged=frozenset({norm_value(c.value) for c in offline if c.value and c.hedged} - firm),
        accepted=frozenset(norm_value(c.value) for c in offline if c.value and c.confirms and not c.hedged))


def hedged_in_its_clauses(value: str, text: str) -> bool:
    """Every clause of ``text`` naming ``value`` carries a hedge cue ("I'm not sure yet whether we'll use Kafka",
    "可能用 Kafka"); a firm clause naming it ("Let's go with Postgres, it makes the most sense") is not hedged."""
    clauses = [c for sentence in split_sentences(text) for c in split_clauses(sentence) if spelled(value, c)]
    return bool(clauses) and all(HEDGE.search(c) or UNDECIDED.search(c) for c in clauses)


@dataclass
class _Checked:
    candidate: Candidate
    note: list[str]
    said_by_user: bool


def _rank(c: _Checked) -> tuple[int, int, int]:
    return (int(c.said_by_user), int(not c.candidate.hedged), int(c.candidate.kind != "fact"))


def _one_per_key(checked: list[_Checked]) -> tuple[list[_Checked], list[_Checked]]:
    """(kept, outranked): the best candidate of each key, and the hedges on other values of the key."""
    best: dict[str, _Checked] = {}
    for c in checked:
        key = c.candidate.key
        if key and (key not in best or _rank(c) >= _rank(best[key])):
            best[key] = c
    kept: list[_Checked] = []
    outranked: list[_Checked] = []
    for c in checked:
        winner = best.get(c.candidate.key or "")
        if winner is None or winner is c or (c.candidate.hedged and not winner.candidate.hedged
                                             and norm_value(c.candidate.value) != norm_value(winner.candidate.value)
                                             and not any(norm_value(k.candidate.value) == norm_value(c.candidate.value)
                                                         for k in kept if k.candidate.key == c.candidate.key)):
            kept.append(c)
        else:
            outranked.append(c)
    return kept, outranked


def _dropped(candidate: Candidate, reason: str) -> WriteOutcome:
    return WriteOutcome(action="dropped", reason=reason, content=candidate.content)


def review_candidates(candidates: Sequence[Candidate], turn: Sequence[TurnMessage],
                      related: Sequence[ExistingMemory], project: str) -> Review:
    """The model's candidates for ``turn`` with the rules above applied (see the module docstring)."""
    texts, instructions = _read(turn)
    review = Review(ignored=[WriteOutcome(action="ignored", reason="instruction", content=s) for s in instructions])
    rules = _rules_reading(turn, project, related)
    checked: list[_Checked] = []
    for candidate in candidates:
        if INSTRUCTION.search(candidate.content) or (instructions and not texts.user.strip()):
            review.ignored.append(_dropped(candidate, "instruction to the assistant, not a project memory"))
            continue
        note: list[str] = []
        update: dict[str, Any] = {}
        by_user = False
        if candidate.value:
            user = spelled(candidate.value, texts.user)
            assistant = spelled(candidate.value, f"{texts.replies}\n{texts.context}")
            by_user = user is not None
            if user is None and assistant is None and spelled(candidate.value, texts.instructions):
                review.ignored.append(_dropped(candidate, "instruction to the assistant, not a project memory"))
                continue
            if user is None and texts.rejection and (assistant is not None or candidate.confirms):
                review.ignored.append(_dropped(candidate, "a rejection confirms nothing"))
                continue
            accepted = candidate.confirms or norm_value(candidate.value) in rules.accepted
            if user is None and assistant is not None and not accepted:
                if _held(candidate, related):  # the assistant restating memory ("we use Redis [1]"): no evidence
                    review.ignored.append(_dropped(candidate, "said only by the assistant, repeating memory"))
                    continue
                if spelled(candidate.value, texts.replies) is None:  # its previous reply, which the user did not accept
                    review.ignored.append(_dropped(candidate, "said only in the assistant's previous reply"))
                    continue
                update["confidence"] = min(candidate.confidence, UNSAID_CONFIDENCE)
                note.append("said only by the assistant: pending until the user confirms it")
            loosely = words_said(candidate.value, f"{texts.user}\n{texts.replies}\n{texts.context}")
            if user is None and assistant is None and not loosely and not _held(candidate, related):
                update["confidence"] = min(candidate.confidence, UNSAID_CONFIDENCE)
                note.append("value not said in the turn: pending until someone says it")
            elif (user or assistant) and (user or assistant) != candidate.value:
                update["value"] = user or assistant
                note.append(f"value as spelled in the turn ({candidate.value!r} -> {user or assistant!r})")
            if (not candidate.hedged and norm_value(candidate.value) in rules.hedged
                    and hedged_in_its_clauses(candidate.value, texts.user)):
                update.update(hedged=True, confirms=False,
                              confidence=min(update.get("confidence", candidate.confidence), UNSAID_CONFIDENCE))
                note.append("its clause hedges: pending")
        elif texts.rejection and candidate.confirms:  # "no" said to the assistant, taken as "yes" to an item
            review.ignored.append(_dropped(candidate, "a rejection confirms nothing"))
            continue
        else:
            by_user = bool(_terms(candidate.content) & _terms(texts.user))
        if candidate.rationale and not _rationale_said(candidate.rationale, texts):
            update["rationale"] = None
            note.append("rationale not given in the turn: dropped")
        checked.append(_Checked(candidate.model_copy(update=update), note, by_user))
    kept, outranked = _one_per_key(checked)
    for c in outranked:
        review.ignored.append(_dropped(c.candidate, "outranked by another statement of its key in the turn"))
    for c in kept:
        review.candidates.append(c.candidate)
        review.notes.append("; ".join(c.note) or None)
    return review
