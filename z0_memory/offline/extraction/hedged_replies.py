"""Hedged replies to what the assistant offered: "hmm maybe sqlx. lemme think abt it" to "Want me to use sqlx for the
queries?", "hmm, maybe. what are the limits on D1?" to "Would you like D1 as the database?", "leaning towards connect-go
but not sure yet" to "...net/http, Gin, grpc-go, or something like connect-go?", "resvg 这个方向可以，先试试" to "可以用
Pillow 直接绘制，或者用 resvg 渲染 SVG 模板".

A bare "yes" accepts the assistant's offer (``acceptance``); a reply that hedges takes it up tentatively: the offered
value is pending, never settled. The value is the one offered value the reply names, or, when the reply names none
("hmm, maybe.", a sentence that only hedges, no figures), the one value the assistant offered when it asked about
one thing (a proposal or a yes/no question without alternatives; a value the project already holds is no offer). A reply that refuses ("no", "不用") or names two offered values
takes nothing up; the slot is the value's own, else the one the caller finds for an unfiled value (the assistant's
topic, the question's subject).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from z0_memory.offline.extraction.binding import is_rejected, open_values
from z0_memory.offline.extraction.clauses import is_question, split_sentences, strip_noise
from z0_memory.offline.extraction.cues import (
    ALTERNATIVE,
    HEDGE,
    NEGATION,
    PROPOSAL_MARK,
    REJECTION,
    UNDECIDED,
    WH_QUESTION,
)
from z0_memory.offline.extraction.hedges import bare_hedge
from z0_memory.offline.extraction.model import CONF_HEDGE, ExistingMemory, Statement, TurnMessage
from z0_memory.offline.extraction.vocabulary import Found, find_values, norm_value, term_pattern
from z0_memory.redaction import redact_secrets


def _offered(text: str, held: set[str]) -> tuple[dict[str, Found], bool]:
    """The values an assistant message names, by normalised value (the first naming kept; values the project already
    holds are no offer), and whether it asks about one thing: its last sentence is a proposal or a yes/no question
    that names no alternatives ("Want me to use sqlx?", not "Socket.IO or Ably?" nor "数据量多大？")."""
    out: dict[str, Found] = {}
    sentences = split_sentences(strip_noise(redact_secrets(text)))
    for sentence in sentences:
        for v in [*find_values(sentence), *open_values(sentence)]:
            if not is_rejected(sentence, v) and norm_value(v.value) not in held:
                out.setdefault(norm_value(v.value), v)
    last = sentences[-1] if sentences else ""
    asks_one = bool(PROPOSAL_MARK.search(last) or (is_question(last) and not WH_QUESTION.search(last))) \
        and not ALTERNATIVE.search(last)
    return out, asks_one


def hedged_reply(text: str, assistant: TurnMessage | None, existing: Sequence[ExistingMemory] = ()) -> list[Statement]:
    """The offered value a reply takes up tentatively, as one pending statement; none when it does not hedge.
    ``existing``: the project's memories (a value it already holds is no offer)."""
    if assistant is None:
        return []
    clean = strip_noise(redact_secrets(text)).strip()
    if not (HEDGE.search(clean) or UNDECIDED.search(clean)) or REJECTION.match(clean):
        return []
    offered, asks_one = _offered(assistant.text, {norm_value(m.value) for m in existing if m.value and not m.pending})
    named = [v for v in offered.values() if (m := re.search(term_pattern(v.value), clean, re.I))
             and not is_rejected(clean, Found(m.start(), m.end(), m.group(0), v.slot))]
    if not named and asks_one and len(offered) == 1 and not NEGATION.search(UNDECIDED.sub(" ", clean)) \
            and not re.search(r"\d", clean) and any(bare_hedge(s) for s in split_sentences(clean)):
        named = list(offered.values())  # "hmm, maybe." to the one thing offered (not "I think we should test first")
    if len(named) != 1:
        return []
    value = named[0]
    return [Statement(kind="decision", slot=value.slot, value=value.value, confidence=CONF_HEDGE, text=clean,
                      hedged=True)]
