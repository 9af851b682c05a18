"""Restatements: a message that says again what the project already holds changes nothing, and says so ("still Go,
still Temporal, nothing changed", "recap for the doc: OCaml, Bazel, odoc", "状态管理还是 Zustand，别又引入 Redux",
"stack check：Rust、Axum、sqlite，对吧？", "Lina 还是 tech lead 哈").

Such a message often states nothing the clause rules read (a bare list of names, "X 还是 X"), so each current fact whose
value it names is said again, and the caller links it to the stored fact as a repeat (``same_as``: a duplicate, never a
new version). Only where the message marks a restatement (still, again, as before, recap, reminder, 还是, 没变, 照旧, ...)
in the name's own clause, or anywhere in a sentence that names held values only, or at the message's opening ("recap:");
and the name is not turned down, judged badly, asked about, hedged or switched; never for a key the message states
anything else about (a change outranks a repeat), nor for people (a name is said in passing, not as a role again).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from z0_memory.offline.extraction.binding import is_rejected, open_values
from z0_memory.offline.extraction.clauses import is_question, split_clauses, split_sentences, strip_noise
from z0_memory.offline.extraction.cues import ABANDONED, DECISION, HEDGE, NEGATIVE_EVAL, SWITCH, UNDECIDED, WH_QUESTION
from z0_memory.offline.extraction.model import CONF_FACT, ExistingMemory, Statement
from z0_memory.offline.extraction.vocabulary import SLOT_BY_KEY, Found, find_values, norm_value, term_pattern
from z0_memory.redaction import redact_secrets
from z0_memory.text import contains_cjk

# Words that mark what follows (or precedes) as said before
RESTATING = re.compile(
    r"\b(?:still|again|as before|as (?:i|we) said|as mentioned|like i said|recap|reminder|remind(?:ing)? you|"
    r"just so (?:we'?re|you)|nothing(?: else)? (?:has )?changed|unchanged|no change|same as before|stays?|staying|"
    r"to confirm|for the record|sanity check|stack check|as always)\b"
    r"|还是(?!换|改|切|迁|用别)|没变|不变|不动|照旧|依旧|依然|仍然|继续用|回顾|提醒|再确认|确认一下|说过|没换|不换|维持",
    re.I)
# People are named in passing ("Ana again — she said ...", "recap for Kofi: ..."): a name is no restatement of a role
_NAMED_IN_PASSING = ("people",)
# "Shopify" inside "Shopify Payments": part of a longer name, not the held one
_LONGER_NAME = re.compile(r"\s+[A-Z][\w.+#-]*")
# "..., right?", "对吧？": a check of what the user believes is held, which restates it (other questions ask)
_CHECK = re.compile(r"(?:\bright|\bcorrect|对吧|对吗|是吧|没错吧)\s*[?？]+\s*$", re.I)


def _restating(sentence: str, said: re.Match[str], held: set[str]) -> bool:
    """The name ``said`` is restated: a restating word in its own clause ("still Go", "状态管理还是 Zustand"), or in the
    sentence when every name the sentence gives is held ("Flutter、Quarkus、Keycloak，都没变")."""
    clause = next((c for c in split_clauses(sentence) if said.group(0) in c), sentence)
    if RESTATING.search(clause) or _CHECK.search(sentence):
        return True
    names = {norm_value(v.value) for v in [*find_values(sentence), *open_values(sentence)]}
    return bool(RESTATING.search(sentence)) and names <= held


def _own_words(sentence: str) -> str:
    """The sentence minus the clauses that report what someone else proposed or asked ("有人问要不要换 django"): their
    switch or question is no change of the user's."""
    clauses = split_clauses(sentence)
    kept = [c for c in clauses if not ABANDONED.search(c)]
    return sentence if len(kept) == len(clauses) else ("，" if contains_cjk(sentence) else ", ").join(kept)


def restated(text: str, existing: Sequence[ExistingMemory], stated_keys: Iterable[str | None]) -> list[Statement]:
    """The current facts a message restates, as statements of their own key and value (see the module's docstring).
    ``stated_keys``: the keys the rules read in the message (full keys), left to those statements."""
    stated = set(stated_keys)
    sentences = split_sentences(strip_noise(redact_secrets(text)))
    recap = any(RESTATING.search(s) for s in sentences[:1])  # "recap for the doc: A, B, C. anything missing?"
    current = [m for m in existing if not m.pending and m.value and len((m.key or "").split(":")) == 3]
    held = {norm_value(m.value) for m in current}
    out: list[Statement] = []
    for m in current:
        parts = (m.key or "").split(":")
        if m.key in stated or parts[1] in _NAMED_IN_PASSING:
            continue
        for sentence in sentences:
            sentence = _own_words(sentence)
            said = re.search(term_pattern(m.value), sentence, re.I)
            asks = WH_QUESTION.search(sentence) or (is_question(sentence) and not _CHECK.search(sentence))
            if said is None or _LONGER_NAME.match(sentence[said.end():]) or asks \
                    or not (recap or _restating(sentence, said, held)) \
                    or HEDGE.search(sentence) or UNDECIDED.search(sentence) or any(p.search(sentence) for p in SWITCH) \
                    or is_rejected(sentence, Found(said.start(), said.end(), m.value, None)) \
                    or NEGATIVE_EVAL.search(sentence[said.end():][:20]):
                continue
            slot = SLOT_BY_KEY.get((parts[1], parts[2]))
            out.append(Statement(kind="fact", slot=slot, value=m.value, confidence=CONF_FACT, text=sentence.strip(),
                                 category_override=parts[1], entity_override=parts[2]))
            stated.add(m.key)
            break
    return out


def recap_of(text: str) -> bool:
    """A message that says back what the project holds: it opens by restating ("quick recap: ...", "回顾一下：...") or
    closes by checking ("..., right?", "对吧？")."""
    sentences = split_sentences(strip_noise(redact_secrets(text)))
    return bool(sentences) and (any(RESTATING.search(s) for s in sentences[:1]) or bool(_CHECK.search(sentences[-1])))


def _adds_detail(value: str, held: str) -> bool:
    """"GKE Autopilot" of a held "GKE", "NATS JetStream KV" of a held "NATS": the held name in whole words, then more;
    a recap says the held value in more words. Fewer words are another thing ("Prisma" of a held "Prisma Migrate")."""
    words, held_words = ([norm_value(w) for w in v.split()] for v in (value, held))
    return len(words) > len(held_words) and words[:len(held_words)] == held_words


def recap_items(statements: list[Statement], text: str, existing: Sequence[ExistingMemory],
                key_of: Callable[[Statement], str | None]) -> list[Statement]:
    """In a recap, a listed value with no verb of its own ("Axum, GKE Autopilot, squash merges") whose key holds another
    value: the held one in more words, the held value again (a repeat); otherwise a change only when the recap states it,
    never when it asks back ("..., right?": what the user believes is held, not a change)."""
    if not recap_of(text):
        return statements
    held = {m.key: m.value for m in existing if m.key and m.value and not m.pending}
    asks = bool(_CHECK.search(text.strip()))
    out = []
    for s in statements:
        key = key_of(s)
        said = held.get(key) if key else None
        if said is None or s.value is None or norm_value(s.value) == norm_value(said) or _own_verb(s.text):
            out.append(s)
        elif _adds_detail(s.value, said):
            s.value = said
            out.append(s)
        elif not asks:
            out.append(s)
    return out


def _own_verb(clause: str) -> bool:
    return bool(DECISION.search(clause)) or any(p.search(clause) for p in SWITCH)
