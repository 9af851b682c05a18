"""A message's one choice explained by the rest of the message.

The rules link a reason to a choice by its cue ("because", "因为", "The reason: ...") or by adjacency
(``reasons``); a choice some other reading found (the learned speech acts read "框架选 Hono" and "gin over fiber")
gets none that way, and neither does a choice whose explanation sits two sentences on, after a rival's mention
("Decision: Rails. We considered Hanami. Hiring Rails devs is far easier here."). When a message settles exactly one
choice, what else it says that states nothing of its own (``reasons.explanation``: no question, hedge, request or
other statement) or only talks about that choice and its rivals (``reasons.comments_on``) is said in explanation of
it, in the user's words. With two choices in a message, nothing says which one a sentence explains, so none is
given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from z0_memory.offline.extraction.clauses import split_clauses, split_sentences, strip_noise
from z0_memory.offline.extraction.cues import REMEMBER
from z0_memory.offline.extraction.model import Statement
from z0_memory.offline.extraction.reasons import (
    comments_on,
    explainable_choice,
    explanation,
    has_cue,
    names_one_of,
)
from z0_memory.offline.extraction.statements import analyse_sentence
from z0_memory.redaction import redact_secrets

SEPARATOR = "; "


def _states_it(sentence: str, choice: Statement) -> bool:
    """The sentence (or clause) the choice was read from."""
    said = choice.text.strip(" .。!！")
    return bool(said) and (said in sentence or sentence.strip(" .。!！") in said)


def _parts(text: str, choice: Statement) -> list[str]:
    """The message's sentences after the choice, the one stating it cut into its clauses, the choice's own clause
    left out ("框架选 Rails，不用 Django，Rails 的脚手架最快" gives "不用 Django", "Rails 的脚手架最快"). What is said
    before the choice explains it only with a cue ("因为团队都写 Python。后端选 Sanic。"); without one it is context
    ("Starting a new project. We'll use Quart.")."""
    out: list[str] = []
    seen = False
    for sentence in split_sentences(strip_noise(redact_secrets(text))):
        sentence = REMEMBER.sub("", sentence.strip())
        if not sentence:
            continue
        if not _states_it(sentence, choice):
            if seen or has_cue(sentence):
                out.append(sentence)
            continue
        for clause in split_clauses(sentence):
            if _states_it(clause, choice):
                seen = True
            elif seen or has_cue(clause):
                out.append(clause)
        seen = True
    return out


def explain_the_choice(text: str, statements: Sequence[Statement]) -> None:
    """Give the message's only firm choice (among ``statements``, all from ``text``) the explanation the rest of the
    message holds, after the reason it already has."""
    choices = [s for s in statements if explainable_choice(s)]
    if len(choices) != 1 or len({(s.slot, s.category_override, s.entity_override) for s in choices}) != 1:
        return
    choice = choices[0]
    as_decision = replace(choice, kind="decision")  # what another sentence may only comment on
    found_reasons = [choice.rationale] if choice.rationale else []
    for sentence in _parts(text, choice):
        found, _ = analyse_sentence(sentence)
        if found and not comments_on(found, [as_decision], sentence):
            continue  # it states something of its own ("Might try Prisma as the ORM")
        why = explanation(sentence, cued=names_one_of(sentence, [choice]))
        if why and not any(why in r or r in why for r in found_reasons):
            found_reasons.append(why)
    if found_reasons:
        choice.rationale = SEPARATOR.join(found_reasons)
